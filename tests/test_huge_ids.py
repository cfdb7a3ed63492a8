"""A number in a URL too large for the database's id columns is no page (404), never a crash.

Hand-written SQL (reviews/access.py, the claim queries) hands the id to the driver as is: SQLite
cannot bind an integer past 64 bits and raised OverflowError, a 500, where the ORM answers 404.
Every URL of the site with a number in it is walked, so a new one is checked too.
"""

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from reviews.models import Role
from tests.factories import ItemFactory, ProjectFactory, member

pytestmark = pytest.mark.django_db

HUGE = "9" * 25
NUMBER = re.compile(r"<(?:int|id):\w+>")
FILLERS = {  # every other parameter: a value that resolves
    r"<slug:slug>": None,  # the project's slug, below
    r"<slug>": None,  # the API's
    r"<str:sha256>": "a" * 64,
    r"<slug:name>": "judge",
    r"<path:name>": "faithful",
    r"<report_format:fmt>": "json",
    r"<chart_kind:kind>": "confusion",
    r"<chart_format:fmt>": "csv",
}


def _routes(patterns, prefix=""):
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, route)
        elif (
            isinstance(pattern, URLPattern)
            and NUMBER.search(route)
            and not route.startswith("admin/")  # the admin's: staff only, through the ORM
        ):
            yield route


ROUTES = sorted(set(_routes(get_resolver().url_patterns)))


def test_the_walk_finds_the_sites_numbered_urls():
    assert len(ROUTES) > 20
    assert "p/<slug:slug>/items/<id:item_pk>/" in ROUTES or any("item_pk" in r for r in ROUTES)


@pytest.mark.parametrize("route", ROUTES)
def test_a_huge_id_is_404(client, route):
    project = ProjectFactory()
    ItemFactory(project=project)
    client.force_login(member(project, *Role.values))
    path = "/" + NUMBER.sub(HUGE, route)
    for placeholder, value in FILLERS.items():
        path = path.replace(placeholder, value or project.slug)
    assert "<" not in path, f"no filler for a parameter of {route}"
    for method in (client.get, client.post):
        assert method(path).status_code in (404, 405), (method.__name__, path)
