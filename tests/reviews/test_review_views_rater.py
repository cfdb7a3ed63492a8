"""The rater's page after submitting (read-only, revisable while open), the stale card, and the
project instructions (Markdown, sanitised)."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from reviews.forms import ProjectCreateForm
from reviews.models import Answer, AssignmentStatus, Role
from reviews.services.assignment.queue import assignment_claim_next
from reviews.templatetags.markup import markdown_html
from tests.factories import member

pytestmark = pytest.mark.django_db


@pytest.fixture
def submitted(project, review_item, rate):
    """A rater who submitted an item that waits for a second rater (overlap 2)."""
    item = review_item(project, {"$.total": ["1,200.00", "1,290.00"]})
    rater = member(project, Role.RATER, username="r1")
    rate(rater, item, {"$.total": "1,200.00"})
    return item, rater


def test_the_submitted_item_is_read_only_with_a_revise_link(client, project, submitted):
    item, rater = submitted
    client.force_login(rater)
    response = client.get(reverse("review_item", args=[project.slug, item.pk]))
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]  # Back asks again
    html = response.content.decode()
    assert "You submitted this item" in html and "Revise my answers" in html
    assert 'class="question-body" disabled' in html and "hx-post" not in html
    assert "Submit &amp; next" not in html
    revising = client.get(reverse("review_item", args=[project.slug, item.pk]) + "?revise=1")
    assert "hx-post" in revising.content.decode()


def test_a_revision_saves_a_new_row_while_the_item_is_open(client, project, submitted):
    item, rater = submitted
    question = item.questions.get()
    client.force_login(rater)
    url = reverse("answer_save", args=[project.slug, item.pk, question.pk])
    response = client.post(url, {"choice": "value", "value": "1290", "expected_seq": "1"})
    assert response.status_code == 200
    assert list(Answer.objects.values_list("seq", "value")) == [(1, "1,200.00"), (2, "1290")]


def test_a_stale_save_replaces_the_whole_card_with_its_notice(client, project, review_item, rate):
    item = review_item(project, {"$.total": ["1,200.00", "1,290.00"]})
    rater = member(project, Role.RATER, username="r2")
    rate(rater, item, {"$.total": "1,200.00"}, submit=False)
    question = item.questions.get()
    client.force_login(rater)
    url = reverse("answer_save", args=[project.slug, item.pk, question.pk])
    response = client.post(url, {"choice": "omit", "expected_seq": "0"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 409
    assert response["HX-Retarget"] == f"#q-{question.pk}"
    assert response["HX-Reswap"] == "outerHTML"
    html = response.content.decode()
    assert "Changed elsewhere: showing the newer answer" in html
    assert f'id="q-{question.pk}"' in html and 'value="1"' in html  # the newer seq
    # The answer that lost is offered back, one click away.
    assert 'yours was <strong class="choice-value">Omit</strong>' in html
    assert 'data-action="use-mine" data-choice="omit"' in html


def test_instructions_are_sanitised_markdown():
    html = markdown_html(
        "**Read** it.\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1)) "
        '<a href="https://example.org" onclick="steal()">ok</a>'
    )
    assert "<strong>Read</strong>" in html
    assert "<script" not in html and "javascript:" not in html and "onclick" not in html
    assert 'href="https://example.org"' in html


def test_the_project_form_takes_instructions():
    form = ProjectCreateForm(
        {
            "slug": "p",
            "name": "P",
            "overlap": 2,
            "resolution_rule": "unanimous",
            "instructions": "# Rules",
        }
    )
    assert form.is_valid(), form.errors
    assert form.cleaned_data["instructions"] == "# Rules"


def test_a_project_admin_writes_the_guidelines(client, project):
    url = reverse("project_instructions", args=[project.slug])
    client.force_login(member(project, Role.RATER, username="rater"))
    assert client.post(url, {"instructions": "x"}).status_code == 403
    client.force_login(member(project, Role.ADMIN, username="boss"))
    response = client.post(url, {"instructions": "Read **twice**.\n\n<script>x</script>"})
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.instructions.startswith("Read **twice**.")
    page = client.get(url).content.decode()
    assert "<strong>twice</strong>" in page and "<script>x" not in page


def test_outside_batches_progress_counts_the_queue_and_next_claims_from_it(
    client, project, submitted, review_item
):
    item, rater = submitted
    review_item(project, {"$.total": ["5.00", "8.00"]})  # one more waiting for the rater
    client.force_login(rater)
    html = client.get(reverse("review_item", args=[project.slug, item.pk])).content.decode()
    assert "Item 1 of 2</span>" in html
    assert f'action="{reverse("review_next", args=[project.slug])}"' in html  # Next › claims


@pytest.mark.parametrize("lost", ["lapsed", "skipped"])
def test_an_autosave_on_a_claim_no_longer_held_is_refused_and_writes_nothing(
    client, project, review_item, lost
):
    item = review_item(project, {"$.total": ["1,200.00", "1,290.00"]})
    rater = member(project, Role.RATER, username="r3")
    claim = assignment_claim_next(rater=rater, project=project)
    if lost == "lapsed":
        claim.lease_expires_at = timezone.now() - timedelta(seconds=1)
    else:
        claim.status = AssignmentStatus.SKIPPED
    claim.save()
    question = item.questions.get()
    client.force_login(rater)
    url = reverse("answer_save", args=[project.slug, item.pk, question.pk])
    response = client.post(url, {"choice": "omit", "expected_seq": "0"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 409
    assert "This item is no longer assigned to you." in response.content.decode()
    assert not Answer.objects.exists()
