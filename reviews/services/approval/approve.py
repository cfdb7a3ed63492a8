"""Signed approval: promoting an item's generated reference to a new ground-truth version.

Never silent (the approver re-enters their password and confirms a statement), never while a
question is open, never by editing the generated reference (a new `ground_truth` Reference is
written beside it), and exactly once per approval round even when two approvers click at the
same moment (the item row is locked; `(item, sequence)` is unique as the last word).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from django.db import IntegrityError, transaction

from reviews.access import roles_of
from reviews.formats.canonical import canonical_json, canonical_rows
from reviews.models import (
    Approval,
    Authority,
    Decision,
    Item,
    ItemStatus,
    QuestionKind,
    QuestionStatus,
    Role,
)
from reviews.selectors import current_resolutions
from reviews.services.approval.duties import approval_conflicts
from reviews.services.approval.ground_truth import STATEMENT, approval_sign  # noqa: F401 (the page shows it)
from reviews.services.approval.references import current_ground_truth, latest_reference

# Who settled a generated row no question asked about: the models (readers) that agreed on it,
# not people ("consensus" read like a human decision).
MODELS_AGREED = "models agreed"


class ApprovalRefused(Exception):
    """Why this approval cannot happen (user-facing); nothing was written."""


@dataclass(frozen=True)
class DiffRow:
    path: str
    generated: object
    resolved: object
    change: str  # kept / changed / omitted / added
    decided_by: str  # "models agreed", "unanimous", "majority", "adjudicated by ada", ...
    in_generated: bool
    in_resolved: bool


def _decider(resolution) -> str:
    if resolution.method == "adjudicated" and resolution.decided_by is not None:
        return f"adjudicated by {resolution.decided_by.get_username()}"
    return str(resolution.method)


def label_path(criterion: str) -> str:
    """Where a criterion's decided label sits in the ground truth: `$.labels['legible']` (a
    labelled file's ground truth is its labels, signed like any row)."""
    quoted = criterion.replace("\\", "\\\\").replace("'", "\\'")
    return f"$.labels['{quoted}']"


def approval_diff(item: Item) -> list[DiffRow]:
    """Path by path: the generated reference beside what the people decided, the labels
    decided on criterion questions included (`label_path`)."""
    generated = latest_reference(item, Authority.GENERATED)
    gen_rows = {r["path"]: r["expected_value"] for r in (generated.rows if generated else [])}
    resolved = dict(gen_rows)
    deciders = dict.fromkeys(gen_rows, MODELS_AGREED)
    resolutions = current_resolutions(item)
    asked = item.questions.filter(kind__in=(QuestionKind.FIELD, QuestionKind.CRITERION))
    for question_pk, kind, key in asked.values_list("pk", "kind", "key"):
        resolution = resolutions.get(question_pk)
        if resolution is None:
            continue
        path = key if kind == QuestionKind.FIELD else label_path(key)
        deciders[path] = _decider(resolution)
        if resolution.decision in (Decision.SET, Decision.LABEL):
            resolved[path] = resolution.value
        else:
            resolved.pop(path, None)
    rows = []
    for path in sorted(set(gen_rows) | set(resolved) | set(deciders)):
        in_gen, in_res = path in gen_rows, path in resolved
        if in_gen and in_res:
            change = "kept" if gen_rows[path] == resolved[path] else "changed"
        elif in_res:
            change = "added"
        elif in_gen:
            change = "omitted"
        else:
            change = "omitted"  # disputed, and the people decided to leave it out
        rows.append(
            DiffRow(
                path,
                gen_rows.get(path),
                resolved.get(path),
                change,
                deciders.get(path, MODELS_AGREED),
                in_gen,
                in_res,
            )
        )
    return rows


def diff_fingerprint(diff: list[DiffRow]) -> str:
    """SHA-256 of a diff as the approve page shows it (each path, both values, the change).
    The page's form carries it; signing refuses once the item's diff no longer matches."""
    shown = [[row.path, row.generated, row.resolved, row.change] for row in diff]
    return hashlib.sha256(canonical_json(shown)).hexdigest()


def resolved_rows(item: Item) -> list[dict]:
    return canonical_rows(
        {"path": row.path, "expected_value": row.resolved}
        for row in approval_diff(item)
        if row.in_resolved
    )


def approval_blockers(item: Item, approver) -> list[str]:
    """Every reason `approver` cannot approve `item` now (empty: they can)."""
    reasons = []
    if Role.APPROVER not in roles_of(approver, item.project):
        reasons.append("You are not an approver of this project.")
    open_questions = item.questions.exclude(status=QuestionStatus.RESOLVED).count()
    if open_questions:
        are = "question is" if open_questions == 1 else "questions are"
        reasons.append(f"{open_questions} {are} still open or waiting for adjudication.")
    if item.status == ItemStatus.APPROVED:
        reasons.append("This item is approved already; a correction starts with a new decision.")
    generated = latest_reference(item, Authority.GENERATED)
    if generated is None:
        reasons.append("This item has no generated reference to approve.")
    if item.project.separation_of_duties:
        reasons.extend(approval_conflicts(item, approver, generated))
    return reasons


def approval_record(
    *,
    actor,
    item: Item,
    password: str,
    confirmed: bool,
    correction_reason: str = "",
    password_check: Callable[[str], None] | None = None,
    shown: str | None = None,
) -> Approval:
    """Everything else is checked before the password; `password_check` (the web pages pass a
    throttled one, reviews/reauth.py) raises ApprovalRefused on a wrong or locked password.
    `shown`: the `diff_fingerprint` of the diff the approver saw (the pages pass it)."""
    if not confirmed:
        raise ApprovalRefused("Confirm the statement to approve.")
    reason = correction_reason.strip()
    _check_rules(item, actor, reason, shown)
    (password_check or plain_password_check(actor))(password)
    try:
        with transaction.atomic():
            return approval_record_locked(actor=actor, item=item, reason=reason, shown=shown)
    except IntegrityError:
        raise ApprovalRefused("Someone else approved this item at the same moment.") from None


def plain_password_check(actor) -> Callable[[str], None]:
    def check(password: str) -> None:
        if not actor.check_password(password):
            raise ApprovalRefused("That password is not correct.")

    return check


MAX_CORRECTION_REASON = 10_000  # characters, as an answer's note: it is signed and kept


def _check_rules(item: Item, actor, reason: str, shown: str | None) -> None:
    """Every rule but the password (checked again under the item's row lock)."""
    blockers = approval_blockers(item, actor)
    if blockers:
        raise ApprovalRefused(" ".join(blockers))
    if current_ground_truth(item) is not None and not reason:
        raise ApprovalRefused("This corrects approved ground truth: give a reason.")
    if len(reason) > MAX_CORRECTION_REASON:
        raise ApprovalRefused(
            f"A correction's reason takes at most {MAX_CORRECTION_REASON:,} characters "
            f"({len(reason):,} given)."
        )
    if shown is not None and shown != diff_fingerprint(approval_diff(item)):
        raise ApprovalRefused(
            "The rows changed since this page showed them (another decision or import): "
            "check them again before signing."
        )


def approval_record_locked(*, actor, item: Item, reason: str, shown: str | None) -> Approval:
    item = Item.objects.select_for_update().select_related("project").get(pk=item.pk)
    _check_rules(item, actor, reason, shown)
    return approval_sign(actor=actor, item=item, rows=resolved_rows(item), reason=reason)
