"""Evidence pages for the viewer: rendered images, word boxes, quote locations.

A document is served only to members of a project that has an item citing it. Renders are
content-addressed (sha256, page, dpi), so browsers may cache them for good.
"""

from django.http import FileResponse, Http404, JsonResponse
from django.views.decorators.http import require_GET

from reviews import evidence
from reviews.access import project_for_user
from reviews.models import Document


def _document(request, slug: str, sha256: str, page: int) -> Document:
    access = project_for_user(request.user, slug)
    document = Document.objects.filter(sha256=sha256, sources__item__project=access.project).first()
    if document is None or not 1 <= page <= document.page_count:
        raise Http404("No such evidence page.")
    return document


@require_GET
def page_image(request, slug, sha256, page):
    document = _document(request, slug, sha256, page)
    fmt = "webp" if request.GET.get("format") == "webp" else "png"
    try:
        dpi = evidence.clamp_dpi(request.GET.get("dpi", 110))
    except ValueError:
        raise Http404("Bad dpi.") from None
    path = evidence.render_page(
        document.file.path, document.sha256, page, dpi=dpi, fmt=fmt, name=document.original_name
    )
    response = FileResponse(path.open("rb"), content_type=f"image/{fmt}")
    response["Cache-Control"] = "private, max-age=31536000, immutable"
    return response


@require_GET
def page_words(request, slug, sha256, page):
    document = _document(request, slug, sha256, page)
    width, height = document.page_sizes[page - 1] if document.page_sizes else (0, 0)
    words = evidence.page_words(document.file.path, page, name=document.original_name)
    response = JsonResponse(
        {"page": page, "width": width, "height": height, "words": [w.as_dict() for w in words]}
    )
    response["Cache-Control"] = "private, max-age=31536000, immutable"
    return response


@require_GET
def page_locate(request, slug, sha256, page):
    document = _document(request, slug, sha256, page)
    quote = request.GET.get("q", "")[:500]
    boxes = evidence.locate_quote(document.file.path, page, quote, name=document.original_name)
    return JsonResponse({"page": page, "quote": quote, "boxes": [list(b) for b in boxes]})
