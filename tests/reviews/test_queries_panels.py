"""The adjudication and approval pages run the same SQL for 2 questions as for 20.

Both pages were N+1 (8 queries for 2 questions, 44 for 20): each question fetched its own
current resolution. The counts are pinned; a change that adds a query per question fails here.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from reviews.models import ItemStatus, Project, Role
from tests.factories import member

pytestmark = pytest.mark.django_db

# Both start with session, user, membership and the item (4). Then:
# - item_detail (adjudicator): submitted assignments, answers, current resolutions, questions,
#   candidates, their sources and documents (7); whether the adjudicator rated it (separation
#   of duties), ground truth, the next item in the queue, the evidence documents (4); the
#   agreed rows nobody was asked about: the generated reference and the asked field paths (2)
#   = 17;
# - item_approve (approver): the generated reference, current resolutions, field questions (3);
#   the approver-role check, open questions, generated reference, separation of duties (whether
#   they answered, adjudicated, set up a generation: 3), ground truth (7); and the evidence beside
#   the diff: the same panel reads as item_detail (7) and the documents (1) = 22.
PINNED = {"item_detail": 16, "item_approve": 21}


@pytest.fixture
def with_questions(review_item, rate, attach_evidence):
    """with_questions(n) → (project, item) with n disputed fields, half decided by majority."""

    def build(n):
        project = Project.objects.create(slug=f"q{n}", name=f"{n} questions", overlap=2)
        fields = {f"$.field_{k:02d}": ["left", "right"] for k in range(n)}
        item = review_item(project, fields)
        attach_evidence(item)
        raters = [member(project, Role.RATER, username=f"r{n}-{k}") for k in (1, 2)]
        rate(raters[0], item, {key: "left" for key in fields})
        rate(raters[1], item, {key: ("left" if k % 2 else "right") for k, key in enumerate(fields)})
        item.refresh_from_db()
        assert item.status == ItemStatus.ADJUDICATION
        return project, item

    return build


def _queries(client, user, url) -> list[str]:
    client.force_login(user)
    client.get(url)
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    return [q["sql"] for q in captured.captured_queries]


@pytest.mark.parametrize(
    "page, role", [("item_detail", Role.ADJUDICATOR), ("item_approve", Role.APPROVER)]
)
def test_panels_run_the_same_queries_for_2_and_20_questions(client, with_questions, page, role):
    counts = {}
    for n in (2, 20):
        project, item = with_questions(n)
        user = member(project, role, username=f"{page}-{n}")
        counts[n] = _queries(client, user, reverse(page, args=[project.slug, item.pk]))
    assert len(counts[2]) == len(counts[20]), "\n".join(counts[20])
    assert len(counts[20]) == PINNED[page], "\n".join(counts[20])
