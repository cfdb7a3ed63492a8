"""Recording a rater's answers, and submitting an item when they are done.

Every change is a new `Answer` row with the next `seq`. The client sends the `seq` it last saw;
if another tab (or a retry) saved in between, the write is refused as stale and the caller
shows the newer state: nothing is ever overwritten blindly.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from evalsite import raw_rows
from reviews.models import (
    Answer,
    Assignment,
    AssignmentStatus,
    Claim,
    Decision,
    EventKind,
    Item,
    Question,
    QuestionKind,
    QuestionStatus,
    decisions_for,
    label_problem,
)
from reviews.services.assignment.durability import rater_write_settings
from reviews.services.assignment.queue import lease_renew
from reviews.services.events import event_new, event_record
from reviews.services.rating.resolution import submitted_item_resolve


class AnswerError(Exception):
    """The answer cannot be recorded as given (a clear, user-facing reason)."""


class StaleAnswer(AnswerError):
    """Someone saved a newer answer first; `latest` is what is stored now."""

    def __init__(self, latest: Answer | None):
        super().__init__("This answer changed since the page loaded; showing the newer one.")
        self.latest = latest


@dataclass(frozen=True)
class AnswerInput:
    decision: str
    value: object = None
    chosen_claim_id: int | None = None
    flagged: bool = False
    note: str = ""
    claim: Claim | None = None  # the chosen candidate, if the caller read it already


def _chosen_claim(question: Question, given: AnswerInput) -> Claim | None:
    claim = given.claim
    if claim is None or claim.pk != given.chosen_claim_id:
        # order_by(): Claim's default ordering joins item and project twice for one row.
        claim = Claim.objects.filter(pk=given.chosen_claim_id).order_by().first()
    return claim if claim is not None and claim.question_id == question.pk else None


def latest_answer(*, question: Question, rater) -> Answer | None:
    """The rater's last answer to `question` (every autosave reads it: written by hand)."""
    (found,) = raw_rows.fetch_together(_latest_answer_read(question, rater))
    return found[0][0] if found else None


def _latest_answer_read(question: Question, rater) -> raw_rows.Read:
    return raw_rows.Read(
        f"SELECT {raw_rows.columns(Answer, 'a')} FROM reviews_answer a"  # noqa: S608
        " WHERE a.question_id = %s AND a.rater_id = %s ORDER BY a.seq DESC LIMIT 1",
        [question.pk, rater.pk],
        (Answer,),
    )


def _validated(question: Question, given: AnswerInput) -> AnswerInput:
    if given.decision not in decisions_for(question.kind):
        raise AnswerError(f"{given.decision!r} is not an answer to a {question.kind} question.")
    if given.decision in {Decision.OMIT, Decision.A, Decision.B, Decision.TIE, Decision.UNCLEAR}:
        return AnswerInput(given.decision, None, None, given.flagged, given.note.strip())
    if given.decision == Decision.LABEL:
        problem = label_problem(question.labels, given.value)
        if problem:
            raise AnswerError(problem)
        value = given.value if question.labels else given.value.strip()
        return AnswerInput(given.decision, value, None, given.flagged, given.note.strip())
    claim_id = given.chosen_claim_id
    value = given.value
    if claim_id is not None:
        claim = _chosen_claim(question, given)
        if claim is None:
            raise AnswerError("That candidate does not belong to this question.")
        value = claim.value
    if given.decision == Decision.SET and (value is None or value == ""):
        raise AnswerError("Type a value, choose a candidate, or omit the field.")
    return AnswerInput(given.decision, value, claim_id, given.flagged, given.note.strip())


class NotAssigned(AnswerError):
    """The rater holds no claim on the item (skipped, expired or never claimed)."""

    def __init__(self):
        super().__init__("This item is no longer assigned to you.")


def answer_autosave(*, actor, question: Question, given: AnswerInput, expected_seq: int) -> Answer:
    """The autosave: `answer_record` on the rater's own claim of the question's item, the live
    one, else the submitted one (a revision). The claim is found and locked in one statement,
    and its lease renewed once less than half of it is left."""
    given = _validated(question, given)
    now = timezone.now()
    try:
        # The answer and its timeline line are the transaction's last writes: on PostgreSQL
        # they go with its COMMIT, in one round trip.
        with raw_rows.atomic_with_last_writes() as last_writes:
            assignment, latest = _claim_locked(rater=actor, question=question)
            if assignment is None or (
                assignment.status == AssignmentStatus.ACTIVE
                and not (assignment.lease_expires_at and assignment.lease_expires_at >= now)
            ):
                raise NotAssigned()
            if assignment.status == AssignmentStatus.ACTIVE:
                lease_renew(assignment, question.item.project, now)
            answer = _answer_append(
                actor, assignment, question, given, expected_seq, latest, write=last_writes
            )
        return answer
    except IntegrityError:  # a concurrent save took this seq first
        raise StaleAnswer(latest_answer(question=question, rater=actor)) from None


def _claim_locked(*, rater, question: Question) -> tuple[Assignment | None, Answer | None]:
    """The rater's live or submitted claim on the question's item, locked (one row at most: a
    rater holds an item once, the partial unique constraint), and the rater's latest answer
    to the question. Written by hand: every autosave runs them, in one round trip with the
    transaction's start on PostgreSQL. The answer is read by its own statement after the
    lock is held, so it is the latest: every save of the rater's takes that lock first."""
    lock = (
        f" {connection.ops.for_update_sql()}" if connection.features.has_select_for_update else ""
    )
    claims, answers = raw_rows.fetch_together(
        raw_rows.Read(
            f"SELECT {raw_rows.columns(Assignment, 'a')} FROM reviews_assignment a"  # noqa: S608
            f" WHERE a.rater_id = %s AND a.item_id = %s AND a.status IN (%s, %s){lock}",
            [rater.pk, question.item_id, AssignmentStatus.ACTIVE, AssignmentStatus.SUBMITTED],
            (Assignment,),
        ),
        _latest_answer_read(question, rater),
        first=rater_write_settings(),  # the autosave's transaction starts here
    )
    return (claims[0][0] if claims else None), (answers[0][0] if answers else None)


def answer_record(
    *, actor, assignment: Assignment, question: Question, given: AnswerInput, expected_seq: int
) -> Answer:
    """Append the rater's new answer; `expected_seq` is the seq the client last saw (0: none).

    While the item is in progress, or after the rater submitted it until the question is
    settled (a revision: still a new row, and the resolution reads the latest one). A gold
    assignment's questions are settled already; its answers are taken (and revised) as if
    they were open, so that nothing tells the rater it is a gold item."""
    if assignment.rater_id != actor.pk or question.item_id != assignment.item_id:
        raise AnswerError("This question is not part of your assignment.")
    given = _validated(question, given)
    try:
        with transaction.atomic():
            # Lock the assignment row: one writer per rater and item at a time.
            assignment = Assignment.objects.select_for_update().get(pk=assignment.pk)
            return _answer_append(actor, assignment, question, given, expected_seq)
    except IntegrityError:  # a concurrent save took this seq first
        raise StaleAnswer(latest_answer(question=question, rater=actor)) from None


_UNREAD = object()  # `_answer_append` reads the latest answer itself


def _answer_append(
    actor, assignment, question, given, expected_seq, latest=_UNREAD, write=raw_rows.insert_all
) -> Answer:
    """Under the assignment's lock: the new Answer row and its timeline line. No savepoint
    around the insert: the lock orders the rater's saves, and the unique seq, the last line,
    rolls the whole transaction back (the callers turn that into StaleAnswer). `latest`: the
    rater's latest answer, if the caller read it under the lock; `write`: what inserts the two
    rows (at once, or as the transaction's last writes)."""
    revision = assignment.status == AssignmentStatus.SUBMITTED
    if revision:
        # A revision after submitting counts until the question is settled: read its
        # status under the item's lock, which the resolution holds while it settles.
        Item.objects.select_for_update().filter(pk=question.item_id).first()
        question.refresh_from_db(fields=["status"])
    elif assignment.status != AssignmentStatus.ACTIVE:
        raise AnswerError("This item is no longer assigned to you (skipped or expired).")
    if question.status != QuestionStatus.OPEN and not assignment.gold:
        raise AnswerError("This question is already settled.")
    if latest is _UNREAD:
        latest = latest_answer(question=question, rater=actor)
    current = latest.seq if latest is not None else 0
    if current != expected_seq:
        raise StaleAnswer(latest)
    content = question.item.revision  # what the rater saw: the answer is given on it
    if latest is not None and latest.revision == content and _same(latest, given):
        return latest  # a repeated save (blur after typing, a retry) is not a change
    answer = Answer(
        question=question,
        rater=actor,
        assignment=assignment,
        seq=current + 1,
        revision=content,
        decision=given.decision,
        value=given.value,
        chosen_claim_id=given.chosen_claim_id,
        flagged=given.flagged,
        note=given.note,
    )
    line = event_new(
        item=question.item_id,
        actor=actor,
        kind=EventKind.ANSWERED,
        data={
            "question": question.key,
            "seq": answer.seq,
            "decision": answer.decision,
            **({"revision": True} if revision else {}),
        },
    )
    write([answer, line])  # together: neither needs the other's key
    return answer


def _same(answer: Answer, given: AnswerInput) -> bool:
    return (answer.decision, answer.value, answer.chosen_claim_id, answer.flagged, answer.note) == (
        given.decision,
        given.value,
        given.chosen_claim_id,
        given.flagged,
        given.note,
    )


def _questions_to_answer(assignment: Assignment) -> tuple[list[Question], list[Question]]:
    """The questions the rater answers (a gold item: all; else the open ones), and those of
    them still unanswered (a criterion or pairwise question: on the item's current revision),
    in one query. Written by hand (`raw_rows`): every submit runs it, and building its EXISTS
    through the ORM cost a third of the submit's service CPU (bench/README.md, issue #33). The
    item is locked and loaded by the caller, so its revision is a parameter, not a join."""
    status = "" if assignment.gold else " AND q.status = %s"
    rows = raw_rows.fetch(
        f"SELECT {raw_rows.columns(Question, 'q')}, EXISTS("  # noqa: S608 (names from the model)
        "SELECT 1 FROM reviews_answer a WHERE a.question_id = q.id AND a.rater_id = %s"
        " AND (a.revision = %s OR q.kind = %s))"
        f" FROM reviews_question q WHERE q.item_id = %s{status} ORDER BY q.position, q.id",
        [
            assignment.rater_id,
            assignment.item.revision,
            QuestionKind.FIELD,
            assignment.item_id,
            *([] if assignment.gold else [QuestionStatus.OPEN]),
        ],
        Question,
        extra=1,
    )
    questions = [question for question, _ in rows]
    return questions, [question for question, answered in rows if not answered]


def assignment_submit(*, actor, assignment: Assignment) -> Assignment:
    """Complete the rater's item; when every rater is in, settle what can be settled."""
    with transaction.atomic():
        # Locks the assignment and its item (what the resolution needs), not the project.
        assignment = _with_item_locked(Assignment.objects).get(pk=assignment.pk)
        if assignment.rater_id != actor.pk or assignment.status != AssignmentStatus.ACTIVE:
            raise AnswerError("This item is no longer assigned to you.")
        return _submit_locked(actor, assignment)


def item_submit_by_rater(*, actor, project, item_pk: int) -> Assignment:
    """The submit button: `assignment_submit` on the rater's live claim of item `item_pk` of
    `project`, found and locked in one statement; NotAssigned if they hold none."""
    with transaction.atomic():
        assignment = _live_claim_locked(rater=actor, project=project, item_pk=item_pk)
        if assignment is None:
            raise NotAssigned()
        return _submit_locked(actor, assignment)


def _live_claim_locked(*, rater, project, item_pk: int) -> Assignment | None:
    """The rater's live claim on item `item_pk` of `project`, it and its item locked (what
    `_with_item_locked` gives), its item's project the caller's. Written by hand (`raw_rows`):
    every submit runs it, and through the ORM it cost more CPU than the rest of the lookup."""
    features = connection.features
    lock = (
        f" {connection.ops.for_update_sql(of=('a', 'i'))}"
        if features.has_select_for_update and features.has_select_for_update_of
        else ""
    )
    found = raw_rows.fetch(
        f"SELECT {raw_rows.columns(Assignment, 'a')}, {raw_rows.columns(Item, 'i')}"  # noqa: S608
        " FROM reviews_assignment a JOIN reviews_item i ON i.id = a.item_id"
        " WHERE a.rater_id = %s AND a.item_id = %s AND i.project_id = %s AND a.status = %s"
        f" AND a.lease_expires_at >= %s{lock}",
        [
            rater.pk,
            item_pk,
            project.pk,
            AssignmentStatus.ACTIVE,
            connection.ops.adapt_datetimefield_value(timezone.now()),
        ],
        Assignment,
        Item,
    )
    if not found:
        return None
    assignment, item = found[0]
    item.project = project
    assignment.item = item
    return assignment


def _with_item_locked(assignments):
    return assignments.select_for_update(of=("self", "item")).select_related("item__project")


def _submit_locked(actor, assignment: Assignment) -> Assignment:
    questions, missing = _questions_to_answer(assignment)
    if missing:
        keys = ", ".join(q.key for q in missing[:5])
        raise AnswerError(f"Answer every question before submitting (missing: {keys}).")
    assignment.status = AssignmentStatus.SUBMITTED
    assignment.submitted_at = timezone.now()
    raw_rows.update(assignment, ["status", "submitted_at"])  # by hand: every submit
    if assignment.gold:  # scored against the known answer, never resolved
        event_record(
            item=assignment.item, actor=actor, kind=EventKind.SUBMITTED, data={"gold": True}
        )
    else:
        event_record(item=assignment.item, actor=actor, kind=EventKind.SUBMITTED)
        submitted_item_resolve(item=assignment.item, open_questions=questions)
    return assignment
