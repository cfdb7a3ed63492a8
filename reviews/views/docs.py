"""The docs a page links to (docs/*.md), rendered for the browser with an id on each heading,
so a link can name a section (`/docs/formats/#7-files-images-and-pdfs`)."""

from pathlib import Path

import markdown
from django.conf import settings
from django.http import Http404
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_safe

PAGES = ("formats", "api", "scoring", "agreement-report", "webhooks")  # the docs pages link to


@require_safe
def docs_page(request, name):
    if name not in PAGES:
        raise Http404("No such document.")
    text = (Path(settings.BASE_DIR) / "docs" / f"{name}.md").read_text(encoding="utf-8")
    # Our own file from the repository, not user input: rendered as written.
    html = markdown.markdown(text, extensions=["extra", "toc", "sane_lists"])
    return render(request, "docs_page.html", {"name": name, "html": mark_safe(html)})  # noqa: S308
