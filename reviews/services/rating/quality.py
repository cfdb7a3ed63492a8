"""Rater quality: accuracy on gold items over time, agreement with the final resolution, alerts.

Gold: an admin marks an item with a known answer (`gold_mark`): its approved ground truth for
field questions (a path absent from it was omitted), its resolutions for everything else. The
queue then serves gold items blind (`gold_queue.py`). A rater's gold answer is their latest
answer on a submitted gold assignment; it is correct when it says what the known answer says,
compared as the resolution rule compares answers (`resolution.answer_key`: normalised values,
`unclear` agrees with nothing). Answers the item's own raters gave before it was marked do not
count: the known answer was made from them.

Agreement with the final resolution: the same comparison against each resolved question's
current resolution, over the rater's ordinary (not gold) answers.

Drift: accuracy on gold per ISO week of the answer. Alert: a rater with at least
`min_answers` gold answers whose accuracy is below the project's `alert_below`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta

from django.db import transaction
from django.db.models import F

from reviews.models import (
    Answer,
    AssignmentStatus,
    Decision,
    GoldMark,
    Item,
    Project,
    QuestionKind,
    RaterQualitySetting,
    Resolution,
)
from reviews.services.approval.references import current_ground_truth
from reviews.services.projects.members import is_project_admin
from reviews.services.rating.normalise import comparable
from reviews.services.rating.resolution import answer_key, current_resolution


class GoldError(Exception):
    """An item that cannot be gold (a clear, user-facing reason)."""


def _known_key(known: dict):
    """The `answer_key` a correct answer has."""
    if known["decision"] == Decision.SET:
        return ("set", comparable(known["value"]))
    if known["decision"] == Decision.LABEL:
        return ("label", known["value"])
    return (known["decision"],)


def known_answers(item: Item) -> tuple[dict, str]:
    """`({question key: {"decision", "value"}}, source)`; GoldError when some are unknown."""
    reference = current_ground_truth(item)
    rows = {r["path"]: r["expected_value"] for r in reference.rows} if reference else {}
    answers, unknown = {}, []
    for question in item.questions.all():
        if reference is not None and question.kind == QuestionKind.FIELD:
            if question.key in rows:
                answers[question.key] = {"decision": Decision.SET, "value": rows[question.key]}
            else:
                answers[question.key] = {"decision": Decision.OMIT, "value": None}
            continue
        resolution = current_resolution(question)
        if resolution is None:
            unknown.append(question.key)
        else:
            answers[question.key] = {"decision": resolution.decision, "value": resolution.value}
    if unknown:
        raise GoldError(
            f"{item.external_id}: no known answer to {', '.join(unknown)} (approve the item or "
            "resolve its questions first)"
        )
    if not answers:
        raise GoldError(f"{item.external_id}: no question to check raters on")
    source = f"ground truth v{reference.version}" if reference else "resolutions"
    return answers, source


def _require_admin(actor, project: Project) -> None:
    """The project's admins, superusers, and the operator's console (`actor=None`)."""
    if actor is None or getattr(actor, "is_superuser", False):
        return
    if not is_project_admin(actor, project):
        raise GoldError(f"Only the admins of {project.name} can change its gold items.")


def gold_mark(*, actor, item: Item, gold: bool = True) -> GoldMark:
    """Mark `item` as gold (its known answers snapshotted now) or take the mark back."""
    _require_admin(actor, item.project)
    answers, source = known_answers(item) if gold else ({}, "")
    with transaction.atomic():
        return GoldMark.objects.create(
            item=item, gold=gold, answers=answers, source=source, created_by=actor
        )


def gold_items(project: Project) -> dict[int, dict]:
    """Item pk -> known answers, for the project's items whose latest mark is gold."""
    latest: dict[int, GoldMark] = {}
    marks = GoldMark.objects.filter(item__project=project).order_by("created_at", "pk")
    for mark in marks.only("item_id", "gold", "answers"):
        latest[mark.item_id] = mark
    return {pk: mark.answers for pk, mark in latest.items() if mark.gold}


def is_gold(item: Item) -> bool:
    latest = item.gold_marks.order_by("-created_at", "-pk").values_list("gold", flat=True).first()
    return bool(latest)


def rater_quality_setting(project: Project) -> RaterQualitySetting:
    """The project's alert threshold (the defaults until an admin saves one)."""
    return RaterQualitySetting.objects.filter(project=project).first() or RaterQualitySetting(
        project=project
    )


def rater_quality_setting_update(
    *, actor, project: Project, alert_below: float, min_answers: int
) -> RaterQualitySetting:
    _require_admin(actor, project)
    setting = rater_quality_setting(project)
    setting.alert_below, setting.min_answers = alert_below, min_answers
    setting.full_clean()
    setting.save()
    return setting


@dataclass
class RaterQuality:
    rater: str
    gold_n: int = 0
    gold_correct: int = 0
    resolved_n: int = 0
    resolved_agree: int = 0
    weeks: dict[date, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))

    @property
    def gold_accuracy(self) -> float | None:
        return self.gold_correct / self.gold_n if self.gold_n else None

    @property
    def resolution_agreement(self) -> float | None:
        return self.resolved_agree / self.resolved_n if self.resolved_n else None

    @property
    def drift(self) -> list[tuple[date, int, float]]:
        """(Monday of the week, gold answers, accuracy), oldest first."""
        return [(week, n, correct / n) for week, (correct, n) in sorted(self.weeks.items())]


def _latest_answers(project: Project, *, gold_only: bool):
    rows = Answer.objects.filter(
        question__item__project=project, assignment__status=AssignmentStatus.SUBMITTED
    )
    if gold_only:
        rows = rows.filter(assignment__gold=True)
    rows = (
        rows.select_related("rater", "question")
        .annotate(served_gold=F("assignment__gold"))
        .order_by("question_id", "rater_id", "seq")
    )
    latest: dict[tuple[int, int], Answer] = {}
    for answer in rows:
        latest[(answer.question_id, answer.rater_id)] = answer
    return latest.values()


def _current_resolutions(project: Project) -> dict[int, dict]:
    """Question pk -> its current resolution (as `current_resolution` picks it), in one query."""
    current = {}
    rows = Resolution.objects.filter(question__item__project=project).order_by("created_at", "pk")
    for question_id, decision, value in rows.values_list("question_id", "decision", "value"):
        current[question_id] = {"decision": decision, "value": value}
    return current


def rater_accuracy(project: Project, *, gold_only: bool = False) -> list[RaterQuality]:
    """Every rater of the project with their accuracy on gold checks and their agreement with
    the current resolutions, by username. `gold_only`: the gold figures alone (what the alert
    needs), without reading every ordinary answer."""
    gold = gold_items(project)
    resolutions = {} if gold_only else _current_resolutions(project)
    out: dict[str, RaterQuality] = {}
    for answer in _latest_answers(project, gold_only=gold_only):
        question = answer.question
        quality = out.setdefault(answer.rater.username, RaterQuality(answer.rater.username))
        if not answer.served_gold:
            resolved = resolutions.get(question.pk)
            if resolved is not None:
                quality.resolved_n += 1
                quality.resolved_agree += answer_key(answer) == _known_key(resolved)
            continue
        known = gold.get(question.item_id, {}).get(question.key)
        if known is None:  # the mark was taken back, or the question is newer than the mark
            continue
        correct = answer_key(answer) == _known_key(known)
        quality.gold_n += 1
        quality.gold_correct += correct
        day = answer.created_at.date()
        week = quality.weeks[day - timedelta(days=day.weekday())]
        week[0] += correct
        week[1] += 1
    return [out[name] for name in sorted(out)]


def rater_alerts(project: Project, qualities: list[RaterQuality] | None = None) -> list:
    """Raters whose accuracy on gold is below the project's threshold (with enough answers)."""
    setting = rater_quality_setting(project)
    return [
        q
        for q in (rater_accuracy(project, gold_only=True) if qualities is None else qualities)
        if q.gold_n >= setting.min_answers and q.gold_accuracy < setting.alert_below
    ]
