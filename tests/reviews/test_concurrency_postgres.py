"""Claiming, answering and approving under real concurrency (PostgreSQL: row locks, SKIP LOCKED).

Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/evalsite \
     .venv/bin/python -m pytest -q tests/reviews/test_concurrency_postgres.py
SQLite serialises writers (IMMEDIATE transactions), so these tests only run on PostgreSQL.
"""

import threading
import time
from collections import Counter

import pytest
from django.db import connection
from django.db.models import Count, Q

from reviews.models import (
    HOLDING_STATUSES,
    Answer,
    Approval,
    Assignment,
    AssignmentStatus,
    Decision,
    Item,
    ItemStatus,
    Role,
)
from reviews.services.approval.approve import ApprovalRefused, approval_record
from reviews.services.assignment.batches import batch_create
from reviews.services.assignment.queue import assignment_claim_next, available_items
from reviews.services.rating.answers import AnswerInput, answer_record, assignment_submit
from tests.factories import PASSWORD, member

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]

THREADS = 16


@pytest.fixture(autouse=True)
def _postgres_only():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL=postgres://…)")


def _run_in_threads(target, count):
    """Start `count` threads on `target(n, barrier)`; re-raise the first error any of them hit."""
    barrier = threading.Barrier(count, timeout=60)
    errors: list[BaseException] = []

    def run(n):
        try:
            target(n, barrier)
        except BaseException as error:  # noqa: BLE001 - handed to the test thread
            errors.append(error)
        finally:
            connection.close()  # each thread has its own connection: give it back

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)
    assert not any(t.is_alive() for t in threads), "a worker thread hung (deadlock?)"
    if errors:
        raise errors[0]


def test_parallel_raters_never_over_assign_and_lose_no_answer(project, review_item):
    project.overlap = 3
    project.save()
    items = [
        review_item(project, {"$.total": ["1,200.00", "1,290.00"], "$.date": ["2024-03-14"]})
        for _ in range(20)
    ]
    places = sum(item.effective_overlap for item in items)  # 60 places for 16 raters
    raters = [member(project, Role.RATER, username=f"parallel-{n:02d}") for n in range(THREADS)]
    answers_made = Counter()
    claims = Counter()

    def work(n, barrier):
        rater = raters[n]
        barrier.wait()
        while True:
            assignment = assignment_claim_next(rater=rater, project=project)
            if assignment is None:
                # "Nothing waiting" must be true, not an artefact of others' row locks.
                assert not available_items(rater=rater, project=project).exists()
                return
            claims[n] += 1
            for question in assignment.item.questions.order_by("position"):
                value = "1200" if n % 4 else "1,200.00"
                answer_record(
                    actor=rater,
                    assignment=assignment,
                    question=question,
                    given=AnswerInput(Decision.SET, value),
                    expected_seq=0,
                )
                answers_made[n] += 1
            assignment_submit(actor=rater, assignment=assignment)

    _run_in_threads(work, THREADS)

    holding = Item.objects.filter(project=project).annotate(
        n=Count("assignments", filter=Q(assignments__status__in=HOLDING_STATUSES))
    )
    over = {i.external_id: i.n for i in holding if i.n > i.effective_overlap}
    assert over == {}, f"over-assigned items: {over}"
    assert sum(claims.values()) == places  # every place taken exactly once, none twice
    assert Assignment.objects.filter(status=AssignmentStatus.SUBMITTED).count() == places
    assert Answer.objects.count() == sum(answers_made.values()) == places * 2
    per_rater_item = Counter(Assignment.objects.values_list("item_id", "rater_id"))
    assert max(per_rater_item.values()) == 1  # no rater holds an item twice
    assert set(Item.objects.values_list("status", flat=True)) == {ItemStatus.RESOLVED}


def test_two_approvers_at_the_same_moment_make_exactly_one_approval(project, review_item, rate):
    item = review_item(project)
    for n in (1, 2):
        rate(member(project, Role.RATER, username=f"r{n}"), item, {"$.total": "1200"})
    approvers = [member(project, Role.APPROVER, username=f"approver-{n}") for n in (1, 2)]
    outcomes: dict[int, object] = {}

    def work(n, barrier):
        barrier.wait()
        try:
            outcomes[n] = approval_record(
                actor=approvers[n], item=item, password=PASSWORD, confirmed=True
            )
        except ApprovalRefused as refused:
            outcomes[n] = refused

    _run_in_threads(work, 2)

    approvals = [o for o in outcomes.values() if isinstance(o, Approval)]
    refusals = [o for o in outcomes.values() if isinstance(o, ApprovalRefused)]
    assert (len(approvals), len(refusals)) == (1, 1)
    assert Approval.objects.filter(item=item).count() == 1
    assert item.references.filter(authority="ground_truth").count() == 1
    assert "approved" in str(refusals[0])


def test_a_batch_created_while_raters_claim_never_over_assigns(project, review_item):
    project.overlap = 2
    project.save()
    items = [review_item(project) for _ in range(12)]
    pinned = [member(project, Role.RATER, username=f"pinned-{n}") for n in (1, 2)]
    claimers = [member(project, Role.RATER, username=f"claimer-{n}") for n in range(12)]

    def work(n, barrier):
        barrier.wait()
        if n == 0:
            batch_create(
                actor=None,
                project=project,
                name="all",
                raters=pinned,
                selection="count",
                count=len(items),
            )
        else:
            time.sleep(0.002 * n)  # spread the claims over the time the batch takes
            assignment_claim_next(rater=claimers[n - 1], project=project)

    _run_in_threads(work, 1 + len(claimers))

    holding = Item.objects.filter(project=project).annotate(
        n=Count("assignments", filter=Q(assignments__status__in=HOLDING_STATUSES))
    )
    assert {i.external_id: i.n for i in holding if i.n > 2} == {}
    assert sum(i.n for i in holding) == 2 * len(items)  # and every place is taken
