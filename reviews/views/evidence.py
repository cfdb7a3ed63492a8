"""Evidence pages for the viewer: rendered images, word boxes, quote locations.

A document is served only to members of a project that has an item citing it. Renders are
content-addressed (sha256, page, dpi), so browsers may cache them for good; only the viewer's
zoom levels are rendered (any other dpi is a 400).
"""

from django.http import FileResponse, Http404, HttpResponseBadRequest, JsonResponse
from django.views.decorators.http import require_GET

from reviews.access import project_for_user
from reviews.forms import PageImageForm
from reviews.forms_inputs import LocateForm
from reviews.models import Document
from reviews.selectors_admin import project_document
from reviews.services.files import renders


def _document(request, slug: str, sha256: str, page: int) -> Document:
    access = project_for_user(request.user, slug)
    document = project_document(access.project, sha256)
    if document is None or not 1 <= page <= document.page_count:
        raise Http404("No such evidence page.")
    return document


@require_GET
def page_image(request, slug, sha256, page):
    document = _document(request, slug, sha256, page)
    form = PageImageForm(request.GET)
    if not form.is_valid():
        return HttpResponseBadRequest(
            " ".join(e for errors in form.errors.values() for e in errors)
        )
    fmt = form.cleaned_data["format"] or "png"
    image = renders.page_image(document, page, dpi=form.cleaned_data["dpi"], fmt=fmt)
    response = FileResponse(image, content_type=f"image/{fmt}")
    response["Cache-Control"] = "private, max-age=31536000, immutable"
    return response


@require_GET
def page_words(request, slug, sha256, page):
    document = _document(request, slug, sha256, page)
    width, height = document.page_sizes[page - 1] if document.page_sizes else (0, 0)
    available = renders.words_available(document)
    words = renders.page_words(document, page)
    response = JsonResponse(
        {
            "page": page,
            "width": width,
            "height": height,
            "words_available": available,
            "words": [w.as_dict() for w in words],
        }
    )
    # Without OCR the answer changes once Tesseract is installed: let the browser ask again.
    cache = "private, max-age=31536000, immutable" if available else "private, no-cache"
    response["Cache-Control"] = cache
    return response


@require_GET
def page_locate(request, slug, sha256, page):
    document = _document(request, slug, sha256, page)
    quote = LocateForm(request.GET).quote()
    boxes = renders.locate_quote(document, page, quote)
    return JsonResponse({"page": page, "quote": quote, "boxes": [list(b) for b in boxes]})
