"""Turning raters' answers into resolutions, and adjudicating the rest.

When all of an item's raters have submitted, each open question is settled by the project's
rule over the raters' latest answers (compared after `normalise.comparable`):
- `unanimous`: every rater gave the same answer;
- `majority`: more than half the raters gave the same answer.
An `unclear` answer never agrees with anything. A question the rule cannot settle goes to the
adjudication queue; an adjudicator's decision is a resolution too, recording who and why.
"""

from __future__ import annotations

from collections import Counter

from django.db import connection, transaction
from django.db.models import QuerySet

from evalsite import raw_rows
from reviews.access import roles_of
from reviews.models import (
    HOLDING_STATUSES,
    Answer,
    Assignment,
    AssignmentStatus,
    Decision,
    EventKind,
    Item,
    ItemStatus,
    Question,
    QuestionKind,
    QuestionStatus,
    Resolution,
    ResolutionRule,
    ResolutionSource,
    Role,
    decisions_for,
    label_problem,
)
from reviews.services.events import event_record
from reviews.services.projects.data import project_data_touch
from reviews.services.rating.normalise import comparable
from reviews.signals import project_data_changed


class ResolutionError(Exception):
    """A decision that cannot be applied (user-facing reason)."""


def answer_key(answer: Answer):
    """What two answers must share to agree (`unclear` agrees with nothing)."""
    if answer.decision == Decision.UNCLEAR:
        return ("unclear", answer.pk)  # unique: never agrees with another answer
    if answer.decision == Decision.SET:
        return ("set", comparable(answer.value))
    if answer.decision == Decision.LABEL:
        return ("label", answer.value)
    return (answer.decision,)


def latest_answers(question: Question, rater_ids) -> list[Answer]:
    """Each listed rater's latest answer to `question`; for a criterion or pairwise question,
    on its item's current revision (an answer given on earlier content does not settle a
    question asked again: `items.questions_ask_again`). `rater_ids`: ids, or a queryset of
    them (one statement: it becomes a subquery). Written by hand (`raw_rows`): every settling
    submit runs it."""
    if isinstance(rater_ids, QuerySet):
        raters, params = rater_ids.order_by().query.sql_with_params()
    else:
        params = list(rater_ids)
        if not params:  # the ORM runs no query for an empty `__in`
            return []
        raters = ", ".join(["%s"] * len(params))
    revision = ""
    if question.kind != QuestionKind.FIELD:
        revision = (
            " AND a.revision = (SELECT i.revision FROM reviews_question q"
            " JOIN reviews_item i ON i.id = q.item_id WHERE q.id = a.question_id)"
        )
    rows = raw_rows.fetch(
        f"SELECT {raw_rows.columns(Answer, 'a')} FROM reviews_answer a"  # noqa: S608
        f" WHERE a.question_id = %s AND a.rater_id IN ({raters}){revision} ORDER BY a.seq",
        [question.pk, *params],
        Answer,
    )
    latest: dict[int, Answer] = {}
    for (answer,) in rows:
        latest[answer.rater_id] = answer
    return list(latest.values())


def _agreeing(answers: list[Answer], rule: str) -> list[Answer] | None:
    groups: dict[object, list[Answer]] = {}
    for answer in answers:
        groups.setdefault(answer_key(answer), []).append(answer)
    key, members = max(groups.items(), key=lambda kv: len(kv[1]))
    if key[0] == "unclear":
        return None
    if rule == ResolutionRule.UNANIMOUS and len(members) == len(answers):
        return members
    if rule == ResolutionRule.MAJORITY and 2 * len(members) > len(answers):
        return members
    return None


def _resolution_value(members: list[Answer]):
    """The raw value most raters typed among equivalent ones (earliest answer breaks ties)."""
    counts = Counter(repr(a.value) for a in members)
    best = max(members, key=lambda a: (counts[repr(a.value)], -a.pk))
    return best.value


def question_try_resolve(
    *, question: Question, rater_ids: list[int], rule: str
) -> Resolution | None:
    # Submitting needs an answer to every open question, so every rater who submitted since the
    # question was asked answered it. Only one who submitted before it was added (an item given
    # back, `items.places_given_back`) and has left the project never will: the question
    # settles on the answers of those who were asked.
    answers = latest_answers(question, rater_ids)
    if not answers:
        return None
    members = _agreeing(answers, rule)
    if members is None:
        question.status = QuestionStatus.ADJUDICATION
        raw_rows.update(question, ["status"])
        event_record(
            item=question.item_id,
            kind=EventKind.NEEDS_ADJUDICATION,
            data={"question": question.key},
        )
        return None
    # Its writes by hand (`raw_rows`): every settling submit makes them.
    resolution = raw_rows.insert(
        Resolution(
            question=question,
            decision=members[0].decision,
            value=_resolution_value(members),
            method=rule,
            revision=members[0].revision,
        )
    )
    _link_sources(resolution, members)  # the answers it came from, not the outvoted ones
    question.status = QuestionStatus.RESOLVED
    raw_rows.update(question, ["status"])
    event_record(
        item=question.item_id,
        kind=EventKind.RESOLVED,
        data={"question": question.key, "method": rule, "decision": resolution.decision},
    )
    return resolution


def _link_sources(resolution: Resolution, answers) -> None:
    # Together, by hand: the resolution is new, so M2M .set()'s two look-ups find nothing.
    raw_rows.insert_all([ResolutionSource(resolution=resolution, answer=a) for a in answers])


def item_status_refresh(item: Item) -> str:
    """Derive the item's status from its questions (an approved item stays approved)."""
    if (
        item.status == ItemStatus.APPROVED
        and not item.questions.exclude(status=QuestionStatus.RESOLVED).exists()
    ):
        return item.status
    # By hand: every submit that settles an item reads it.
    with connection.prepared_cursor() as cursor:
        cursor.execute("SELECT status FROM reviews_question WHERE item_id = %s", [item.pk])
        statuses = {status for (status,) in cursor.fetchall()}
    if QuestionStatus.ADJUDICATION in statuses:
        status = ItemStatus.ADJUDICATION
    elif QuestionStatus.OPEN in statuses:
        status = ItemStatus.OPEN
    else:
        status = ItemStatus.RESOLVED
    if status != item.status:
        item.status = status
        raw_rows.update(item, ["status", "updated_at"])
    return status


def submitted_item_resolve(*, item: Item, open_questions: list[Question]) -> list[Resolution]:
    """Settle the item's open questions once as many raters submitted as its overlap asks.

    The caller holds the item's row lock (with its project loaded) and read `open_questions`
    under it, in the same transaction (`answers.assignment_submit`)."""
    # One read for both: who submitted, and whether anyone else still holds a place. Gold
    # assignments are only scored: they neither count nor wait.
    # By hand: every submit reads it (the ORM's statement cost more CPU than the database's work).
    with connection.prepared_cursor() as cursor:
        cursor.execute(
            "SELECT rater_id, status FROM reviews_assignment WHERE item_id = %s AND NOT gold"
            " AND status IN (%s, %s, %s)",  # HOLDING_STATUSES
            [item.pk, *HOLDING_STATUSES],
        )
        held = cursor.fetchall()
    submitted = [rater for rater, status in held if status == AssignmentStatus.SUBMITTED]
    if len(submitted) < item.effective_overlap or len(submitted) < len(held):
        return []
    resolutions = [
        resolution
        for question in open_questions
        if (
            resolution := question_try_resolve(
                question=question, rater_ids=submitted, rule=item.project.resolution_rule
            )
        )
    ]
    item_status_refresh(item)
    if resolutions:
        _announce(item)
    return resolutions


def adjudication_blocker(*, project, item: Item, user) -> str | None:
    """Why `user` may not decide `item`'s disputes, or None: with separation of duties, whoever
    rated the item (a submitted answer, gold checks aside) leaves them to another adjudicator."""
    if not project.separation_of_duties:
        return None
    rated = Assignment.objects.filter(
        item=item, rater=user, status=AssignmentStatus.SUBMITTED, gold=False
    )
    if rated.exists():
        return "You rated this item: another adjudicator decides it (separation of duties)."
    return None


@transaction.atomic
def adjudication_record(
    *, actor, question: Question, decision: str, value=None, reason: str
) -> Resolution:
    """An adjudicator's decision on a question raters did not agree on (or a correction)."""
    question = Question.objects.select_for_update().select_related("item").get(pk=question.pk)
    if Role.ADJUDICATOR not in roles_of(actor, question.item.project):
        raise ResolutionError("You are not an adjudicator of this project.")
    item = question.item
    blocked = adjudication_blocker(project=item.project, item=item, user=actor)
    if blocked:
        raise ResolutionError(blocked)
    reason = reason.strip()
    if not reason:
        raise ResolutionError("Give a reason for the decision.")
    if question.status == QuestionStatus.OPEN:
        raise ResolutionError("Raters have not finished this question yet.")
    if decision not in decisions_for(question.kind, adjudicator=True):
        raise ResolutionError("Choose a decision for this question.")
    if decision == Decision.SET and (value is None or value == ""):
        raise ResolutionError("Give the value, or decide to omit the field.")
    if decision == Decision.LABEL and (problem := label_problem(question.labels, value)):
        raise ResolutionError(problem)
    previous = question.resolutions.order_by("-created_at", "-pk").first()
    resolution = Resolution.objects.create(
        question=question,
        decision=decision,
        value=value if decision in (Decision.SET, Decision.LABEL) else None,
        method=Resolution.Method.ADJUDICATED,
        decided_by=actor,
        reason=reason,
        supersedes=previous,
        revision=item.revision,
    )
    raters = Assignment.objects.filter(
        item=question.item, status=AssignmentStatus.SUBMITTED, gold=False
    ).values_list("rater_id", flat=True)
    _link_sources(resolution, latest_answers(question, raters))
    question.status = QuestionStatus.RESOLVED
    question.save(update_fields=["status"])
    event_record(
        item=question.item,
        actor=actor,
        kind=EventKind.ADJUDICATED if previous is None else EventKind.CORRECTED,
        data={"question": question.key, "decision": decision, "reason": reason},
    )
    if question.item.status == ItemStatus.APPROVED:
        # A correction of approved ground truth needs a new approval.
        question.item.status = ItemStatus.RESOLVED
        question.item.save(update_fields=["status", "updated_at"])
    item_status_refresh(question.item)
    _announce(question.item)
    return resolution


def _announce(item: Item) -> None:
    """New resolutions of `item` (called after they are written, in their transaction)."""
    project = item.project
    project_data_touch(project)
    transaction.on_commit(lambda: project_data_changed.send(Item, project=project))


def current_resolution(question: Question) -> Resolution | None:
    return question.resolutions.order_by("-created_at", "-pk").first()
