"""The main navigation marks the section a page belongs to, and none for the user menu's pages;
the page frame's links, worked out once per script prefix, are what `{% url %}` gives."""

import pytest
from django.test import RequestFactory
from django.urls import resolve, reverse, set_script_prefix

from evalsite.context_processors import navigation
from tests.factories import UserFactory


@pytest.mark.parametrize(
    ("path", "section"),
    [
        ("/projects/", "projects"),
        ("/p/demo/items/", "projects"),
        ("/queue/", "queue"),
        ("/p/demo/items/1/review/", "queue"),
        ("/dashboards/", "dashboards"),
        ("/p/demo/dashboard/", "dashboards"),
        ("/p/demo/dashboard/criteria/faithful/", "dashboards"),
        ("/p/demo/dashboard/disagreements/", "dashboards"),
        ("/p/demo/dashboard/failures/", "dashboards"),
        ("/account/tokens/", ""),
        ("/accounts/password/", ""),
    ],
)
def test_each_page_marks_its_section(path, section):
    request = RequestFactory().get(path)
    request.resolver_match = resolve(path)
    assert navigation(request)["nav"] == section


def test_templates_compare_against_the_choices():
    """reviews.context_processors.choices: `Decision.SET` in a template is the member itself."""
    from django.template import engines

    template = engines["django"].from_string(
        "{% if value == Decision.SET and state != QuestionStatus.OPEN %}"
        "{{ JobStatus.SUCCEEDED }}{% endif %}"
    )
    request = RequestFactory().get("/")
    assert template.render({"value": "set", "state": "resolved"}, request) == "succeeded"
    assert template.render({"value": "label", "state": "resolved"}, request) == ""


def test_judging_templates_compare_against_its_choices():
    """judging.context_processors.choices and the claim badge filter."""
    from django.template import engines

    template = engines["django"].from_string(
        "{% load claim_badges %}{% if p == RunStatus.BUDGET_REACHED %}budget{% endif %}"
        "{% if split == Split.HELD_OUT %} held{% endif %}{% if gate == Gate.HOLD %} hold{% endif %}"
        " {{ 'supported'|claim_badge }} {{ 'missed'|claim_badge }} {{ 'undecidable'|claim_badge }}"
    )
    context = {"p": "budget_reached", "split": "held_out", "gate": "HOLD"}
    assert template.render(context, RequestFactory().get("/")) == (
        "budget held hold badge-ok badge-bad badge-warn"
    )


NAMES = ("home", "project_list", "my_queue", "dashboards", "api_tokens", "password_change",
         "admin:index", "logout")  # fmt: skip


@pytest.mark.django_db
def test_every_page_shows_the_frames_links(client):
    client.force_login(UserFactory(is_staff=True))
    page = client.get(reverse("api_tokens")).content.decode()
    for name in NAMES:
        assert f'href="{reverse(name)}"' in page or f'action="{reverse(name)}"' in page, name


@pytest.mark.parametrize("prefix", ["/", "/evalsite/", "/"])
def test_the_frames_links_are_under_the_sites_prefix(prefix):
    request = RequestFactory().get("/projects/")
    request.resolver_match = resolve("/projects/")
    set_script_prefix(prefix)
    try:
        links = navigation(request)["links"]
        assert links == {name.replace(":", "_"): reverse(name) for name in NAMES}
        assert links["home"] == prefix
    finally:
        set_script_prefix("/")
