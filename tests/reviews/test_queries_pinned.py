"""The pages raters and overseers live on run the same SQL whatever the project's size.

Each page is rendered for a project of 10 items and one of 1,000; the query counts must be equal
and equal to the pinned number (a change to a page that adds a query shows up here first).
"""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from reviews.models import (
    Assignment,
    AssignmentStatus,
    Item,
    ItemStatus,
    Membership,
    Role,
    Slice,
)
from reviews.services.imports.bulk_insert import insert_rows
from tests.factories import ProjectFactory, member

pytestmark = pytest.mark.django_db

# Every page starts with the session, its user's row read with it (the client has been here
# before: evalsite/sessions.py), and the membership check (2 queries; my_queue has no
# membership check but lists the rater's projects). Then:
# - review_item: the item, the rater's live assignment (its lease is renewed only once half of
#   it is gone: no UPDATE here), open questions (the pairwise ones' display orders are derived
#   from them), candidates with sources and documents, the rater's own answers, the evidence
#   documents, item N of M, and outside batches the bounded count of items still waiting for
#   the rater (8) = 10; the design allows 12;
# - item_list (first or a later page, filtered or not): the filters' slices and raters in one
#   statement (1), and one page of items with their question counts and the bounded total of
#   all that match (1) = 4; a page without rows reads its total on its own (+1: every filter at
#   once matches nothing here)
#   (a project admin also gets the bulk actions' criteria and recent jobs; their raters and
#   batches come with the filters' statement);
# - adjudication / approval queue: a bounded total and one keyset page (2) = 4;
# - project_home: a bounded count per item status (4), the rater's assignment counts and the
#   export jobs its roles may open (five at most) = 8;
# - my_queue: its list of projects carries each one's bounded pool count; then the rater's
#   assignments counted per project (1), and the adjudication and approval queues with their
#   bounded counts (1), whatever the number of projects = 4.
PINNED = {
    "review_item": 10,
    "item_list": 4,
    "item_list_next": 4,
    "item_list_filtered": 5,
    "adjudication_queue": 4,
    "approval_queue": 4,
    "project_home": 8,  # + the recent export jobs it may open
    "my_queue": 4,
}
SIZES = (1_000, 100_000)


def _bulk_items(project, n: int) -> list[int]:
    """n more items in one executemany (bulk_create's model objects cost seconds at 100k):
    every 7th waits for adjudication, every 5th for approval, the rest are open."""
    now = timezone.now()
    status = {0: ItemStatus.ADJUDICATION}
    insert_rows(
        Item,
        ("external_id", "title", "status"),
        (
            (
                f"bulk-{k:06d}",
                f"Bulk {k}",
                status.get(k % 7, ItemStatus.RESOLVED if k % 5 == 0 else ItemStatus.OPEN),
            )
            for k in range(n)
        ),
        project_id=project.pk,
        metadata={},
        created_at=now,
        updated_at=now,
    )
    return list(
        Item.objects.filter(project=project, external_id__startswith="bulk-")
        .order_by("id")
        .values_list("pk", flat=True)
    )


@pytest.fixture
def sized(review_item, rate, attach_evidence):
    """sized(n) → (project, reviewed item, rater, adjudicator) for a project of `n` items."""

    def build(n):
        project = ProjectFactory(slug=f"size-{n}")
        item = review_item(
            project,
            {"$.total": ["1,200.00", "1,290.00"], "$.date": ["2024-03-14"]},
            criteria={"tone": ["good", "bad"]},
        )
        attach_evidence(item)
        rater = member(project, Role.RATER, Role.ADJUDICATOR, Role.APPROVER, username=f"r-{n}")
        others = [member(project, Role.RATER, username=f"other-{n}-{k}") for k in range(2)]
        bulk = _bulk_items(project, n - 1)
        # Every tenth item is being worked on by someone else; the rater has finished a few.
        lease = timezone.now() + timedelta(minutes=30)
        Assignment.objects.bulk_create(
            [
                Assignment(
                    item_id=pk,
                    rater=others[k % 2],
                    status=AssignmentStatus.ACTIVE,
                    lease_expires_at=lease,
                )
                for k, pk in enumerate(bulk[::10])
            ]
            + [
                Assignment(item_id=pk, rater=rater, status=AssignmentStatus.SUBMITTED)
                for pk in bulk[:3]
            ],
            batch_size=2000,
        )
        rate(rater, item, {"$.total": "1,200.00"}, submit=False)
        rate(others[0], item, {"$.total": "1,290.00"}, submit=False)
        assert Item.objects.filter(project=project).count() == n
        return project, item, rater, bulk

    return build


def _count(client, user, url):
    client.force_login(user)
    client.get(url)  # warm: the first visit writes the session
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, url
    return len(queries), [q["sql"] for q in queries.captured_queries]


def _slice(project) -> Slice:
    return Slice.objects.get_or_create(project=project, name="urgent")[0]


def rater_of(project):
    return Membership.objects.filter(project=project, role=Role.RATER).first().user


def _urls(project, item, bulk) -> dict[str, str]:
    slug = project.slug
    items = reverse("item_list", args=[slug])
    return {
        "review_item": reverse("review_item", args=[slug, item.pk]),
        "item_list": items,
        "item_list_next": f"{items}?after={bulk[len(bulk) // 2]}",
        # Every filter at once: text, status, slice, label, assignee and judging's split.
        "item_list_filtered": f"{items}?q=bulk-0&status=open&slice={_slice(project).pk}"
        f"&label=good&assignee={rater_of(project).pk}&split=held_out",
        "adjudication_queue": reverse("adjudication_queue", args=[slug]),
        "approval_queue": reverse("approval_queue", args=[slug]),
        "project_home": reverse("project_home", args=[slug]),
        "my_queue": reverse("my_queue"),
    }


@pytest.mark.scale
def test_query_counts_are_the_same_at_1k_and_100k_items(client, sized):
    counts = {}
    for n in SIZES:
        project, item, rater, bulk = sized(n)
        for page, url in _urls(project, item, bulk).items():
            counts[page, n] = _count(client, rater, url)
    for page, pinned in PINNED.items():
        (small, _), (large, sql) = counts[page, SIZES[0]], counts[page, SIZES[1]]
        assert (page, small, large) == (page, pinned, pinned), "\n".join(sql)
    assert PINNED["review_item"] <= 12  # the design's budget for the review page


def test_lists_page_through_every_item_once(client, sized):
    """Keyset pages: following Next from the first page lists each item once, in id order."""
    project, item, rater, bulk = sized(120)
    client.force_login(rater)
    seen, url = [], reverse("item_list", args=[project.slug])
    while url:
        page = client.get(url).context["page"]
        seen += [row.pk for row in page.rows]
        url = f"?after={page.last_id}" if page.has_next else None
        url = url and reverse("item_list", args=[project.slug]) + url
    assert seen == sorted([item.pk, *bulk])
    back = client.get(reverse("item_list", args=[project.slug]) + f"?before={bulk[60]}")
    assert [r.pk for r in back.context["page"].rows] == sorted([item.pk, *bulk])[11:61]
    queue, url = [], reverse("adjudication_queue", args=[project.slug])
    while url:
        page = client.get(url).context["page"]
        queue += [row.pk for row in page.rows]
        url = page.next_cursor and reverse("adjudication_queue", args=[project.slug]) + (
            "?after=" + page.next_cursor
        )
    waiting = Item.objects.filter(project=project, status=ItemStatus.ADJUDICATION)
    assert queue == list(waiting.order_by("updated_at", "id").values_list("pk", flat=True))
    assert len(queue) == len(bulk[::7])


# The rater's hot paths, statements as the query log shows them (SAVEPOINTs aside: the test's
# own transaction turns each atomic block into savepoints; in production they run none; and on
# PostgreSQL the claim's and the autosave's `SET LOCAL synchronous_commit`, tested below):
# - next: session with its user, membership; the rater's live assignment, the first free item
#   (locked), its places held and lapsed (one count), insert the assignment and its event = 7;
# - save: session with its user, membership, the question with its item, the form's candidate
#   (the service trusts it: same question), the rater's claim found and locked, the latest
#   answer, insert the answer and its event = 8;
# - submit & next: 14 to submit and resolve one question (session with its user, membership; the
#   rater's live claim and its item found and locked, open questions with "answered", update,
#   event; raters holding the item, the latest answers, the resolution, its source link,
#   question, event, question statuses, item status, the project's data version moved for
#   the dashboard's freshness check: issue #33) plus next's 5 = 20.
HOT_PATHS = {"next": 7, "save": 8, "submit_and_next": 20}


def _statements(queries) -> list[str]:
    return [
        q["sql"]
        for q in queries.captured_queries
        if not q["sql"].startswith(("SAVEPOINT", "RELEASE", "SET LOCAL synchronous_commit"))
    ]


@pytest.mark.scale
@pytest.mark.parametrize("n", SIZES)
def test_hot_path_statements_are_pinned(client, review_item, n):
    project = ProjectFactory(overlap=1)
    for _ in range(3):
        review_item(project, {"$.total": ["1,200.00", "1,290.00"]})
    _bulk_items(project, n - 3)
    rater = member(project, Role.RATER)
    client.force_login(rater)
    client.get(reverse("my_queue"))
    counted = {}
    with CaptureQueriesContext(connection) as queries:
        response = client.post(reverse("review_next", args=[project.slug]))
    counted["next"] = _statements(queries)
    item = Item.objects.get(pk=response.url.rstrip("/").split("/")[-2])
    question = item.questions.get()
    save = reverse("answer_save", args=[project.slug, item.pk, question.pk])
    choice = {"choice": f"claim:{question.candidates.first().pk}"}
    with CaptureQueriesContext(connection) as queries:
        saved = client.post(save, choice, headers={"HX-Request": "true"})
    assert saved.status_code == 200
    counted["save"] = _statements(queries)
    with CaptureQueriesContext(connection) as queries:
        submitted = client.post(reverse("review_submit", args=[project.slug, item.pk]))
    assert submitted.status_code == 302 and submitted.url != response.url
    assert item.questions.get().status == "resolved"
    counted["submit_and_next"] = _statements(queries)
    for path, pinned in HOT_PATHS.items():
        assert (path, len(counted[path])) == (path, pinned), "\n".join(counted[path])
