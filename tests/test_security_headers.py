"""Security headers on every page, every view declaring its HTTP methods, no inline scripts.

The browser half (no CSP violation in the console on real pages) is in
tests/browser/test_csp.py.
"""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import URLPattern, URLResolver, get_resolver

from reviews.models import Assignment, Role
from tests.factories import member

pytestmark = pytest.mark.django_db

# Dummy values per path converter: the method check runs before the view looks anything up.
SAMPLE = {
    "slug": "x",
    "int": 1,
    "id": 1,
    "str": "a",
    "path": "a",
    "report_format": "md",
    "chart_format": "svg",
    "chart_kind": "confusion",
}
# Mounted apps that declare methods their own way (class-based auth views, admin, django-ninja).
FOREIGN = ("admin/", "api/", "accounts/")


def _site_urls(patterns=None, prefix=""):
    for entry in patterns if patterns is not None else get_resolver().url_patterns:
        route = prefix + str(entry.pattern)
        if route.startswith(FOREIGN):
            continue
        if isinstance(entry, URLResolver):
            yield from _site_urls(entry.url_patterns, route)
        elif isinstance(entry, URLPattern):
            yield entry, route


def _url(entry: URLPattern, route: str) -> str:
    """Fill each <converter:name> of the route with a sample value."""

    def fill(match):
        kind = match.group(1) or "str"
        return str(SAMPLE[kind])

    return "/" + re.sub(r"<(?:(\w+):)?\w+>", fill, route)


SITE_URLS = sorted(_site_urls(), key=lambda pair: pair[1])


def test_the_site_has_views_to_check():
    assert len(SITE_URLS) > 30


@pytest.mark.parametrize(("entry", "route"), SITE_URLS, ids=[r for _, r in SITE_URLS])
def test_every_view_declares_its_methods(client, entry, route):
    """An undeclared method (PUT) is refused with 405 before the view runs."""
    client.force_login(_staff())
    response = client.put(_url(entry, route))
    assert response.status_code == 405, f"{route} ({entry.name}) accepts PUT"


def _staff():
    from django.contrib.auth import get_user_model

    user, _ = get_user_model().objects.get_or_create(username="staff", is_staff=True)
    return user


def test_claiming_the_next_item_needs_a_post(client, project, review_item):
    review_item(project, {"$.total": ["1", "2"]})
    rater = member(project, Role.RATER, username="r")
    client.force_login(rater)
    url = f"/p/{project.slug}/review/next/"
    assert client.get(url).status_code == 405
    assert client.head(url).status_code == 405
    assert not Assignment.objects.exists()  # a link preview reserves nothing
    response = client.post(url)
    assert response.status_code == 302 and "/review/" in response.url
    assert Assignment.objects.filter(rater=rater).count() == 1


def test_judging_pages_refuse_a_post(client, project):
    """Dashboards only read: GET/HEAD, never POST."""
    client.force_login(member(project, Role.ADMIN))
    for url in (f"/p/{project.slug}/dashboard/", "/dashboards/"):
        assert client.post(url).status_code == 405, url


def _directives(header: str) -> dict[str, list[str]]:
    parts = (p.split() for p in header.split(";") if p.strip())
    return {p[0]: p[1:] for p in parts}


@pytest.mark.parametrize("url", ["/accounts/login/", "/queue/", "/projects/"])
def test_security_headers(client, project, url):
    client.force_login(member(project, Role.RATER))
    response = client.get(url)
    assert response.status_code == 200
    csp = _directives(response["Content-Security-Policy"])
    assert csp["script-src"] == ["'self'"]
    assert "'unsafe-inline'" not in csp["default-src"] + csp["script-src"]
    assert "'unsafe-eval'" not in " ".join(sum(csp.values(), []))
    assert csp["frame-ancestors"] == ["'none'"]
    assert csp["object-src"] == ["'none'"]
    assert csp["form-action"] == ["'self'"]
    policy = response["Permissions-Policy"]
    for feature in ("camera=()", "microphone=()", "geolocation=()", "payment=()"):
        assert feature in policy
    assert response["X-Frame-Options"] == "DENY"


TEMPLATES = sorted(Path(settings.BASE_DIR, "templates").rglob("*.html"))
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I)
HANDLER = re.compile(r"\son[a-z]+\s*=", re.I)


@pytest.mark.parametrize("path", TEMPLATES, ids=[p.name for p in TEMPLATES])
def test_templates_have_no_inline_script(path):
    text = path.read_text()
    assert not INLINE_SCRIPT.search(text), f"{path}: inline <script> (the CSP blocks it)"
    assert not HANDLER.search(text), f"{path}: on* handler attribute (the CSP blocks it)"
    assert "javascript:" not in text.lower(), f"{path}: javascript: URL"


def test_the_favicon_the_browser_asks_for_is_the_sites(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response.url.endswith("favicon.svg")
