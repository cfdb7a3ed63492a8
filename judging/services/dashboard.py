"""The calibration dashboard's figures: computed in the background, stored as a snapshot.

A snapshot holds everything the dashboard pages show (held-out and calibration rows, per-slice
rows, gates, release decisions, disagreements, rater quality, reliability), so a page view is
one row read, whatever the number of verdicts. Each snapshot records a fingerprint of its
inputs; when labels change the fingerprint no longer matches, the pages say the figures are
stale and a recompute is queued — they are never stale without saying so.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from django.db.models import Count, Max, QuerySet
from django.utils import timezone

from judging.gates import GateOutcome, GateRule, evaluate, release_decision
from judging.models import (
    Criterion,
    DashboardSnapshot,
    GateSetting,
    JudgeVersion,
    PanelMember,
    Verdict,
)
from judging.reports.agreement.build import SPLIT_LABELS, criterion_rows
from judging.reports.agreement.human import human_human_entries
from judging.reports.agreement.inputs import CriterionInput
from judging.reports.agreement.report import criterion_input
from judging.reports.dashboard.parts import disagreements, rater_agreement, reliability, restrict
from judging.reports.dashboard.rows import (
    decision_key,
    decision_label,
    mark_gating,
    row_key,
    row_label,
    shown_rows,
)
from judging.selectors_labels import criterion_questions
from judging.services.calibration.splits import current_draw, items_in_split, split_extend
from reviews.models import Slice, WebhookEvent
from reviews.services.projects.data import project_data_version
from reviews.services.webhooks.emit import webhook_events_emit

SEED = 0
RESAMPLES = 2000
SLICE_RESAMPLES = 1000


def _quiet(done: int, total: int) -> None:
    """No one watches this computation's progress."""


def inputs_fingerprint(project) -> str:
    """Changes whenever anything the figures depend on changes, at the same cost whatever the
    number of verdicts (issue #33: counting them was 416 ms of a 524 ms page at 1M).

    Runs on every dashboard page view. The rows that grow with the data (verdicts, human labels,
    resolutions, items' revisions, the split, slice members) are stood for by the project's
    data version, which every service writing them moves in the same transaction
    (reviews.services.projects.data); the rest are a project's few settings, read whole:
    criterion rows carry their `critical` flag (editable in the admin), gate settings every
    threshold; lists are ordered, so equal inputs give equal strings.
    """
    criteria = list(
        Criterion.objects.filter(project=project).order_by("pk").values_list("pk", "critical")
    )
    stats = {"n": Count("pk"), "m": Max("pk")}
    parts = [
        project_data_version(project),
        criteria,
        # Versions decide which rows a Judge's verdicts fill; panels add rows of their own.
        JudgeVersion.objects.filter(config__project=project).aggregate(**stats),
        list(
            PanelMember.objects.filter(panel__project=project)
            .order_by("pk")
            .values_list("pk", "panel__rule", "panel__name")
        ),
        list(
            Slice.objects.filter(project=project, critical=True)
            .order_by("name")
            .values_list("name", flat=True)
        ),
        list(
            GateSetting.objects.filter(project=project)
            .order_by("criterion")
            .values_list("criterion", "min_lower", "min_n", "max_ci_width")
        ),
    ]
    return repr(parts)


def gate_rule(project, criterion: str) -> GateRule:
    setting = GateSetting.objects.filter(project=project, criterion=criterion).first()
    if setting is None:
        return GateRule()
    return GateRule(
        min_lower=setting.min_lower, min_n=setting.min_n, max_ci_width=setting.max_ci_width
    )


def _inputs(project, split: str | None) -> tuple[list, QuerySet, dict[int, str]]:
    items = items_in_split(project=project, split=split or "all")
    names = dict(items.values_list("pk", "external_id"))
    criteria = Criterion.objects.filter(project=project).order_by("name", "version")
    return [(c, criterion_input(c, items, names, lengths=True)) for c in criteria], items, names


def _slice_members(project, items: QuerySet, names: dict[int, str]) -> dict[str, set[str]]:
    """slice name -> its members among `items` (a subquery: a list of 100k ids cost the client
    more than the rows)."""
    through = Slice.items.through.objects.filter(slice__project=project, item__in=items)
    members: dict[str, set[str]] = defaultdict(set)
    for slice_name, item_id in through.values_list("slice__name", "item_id"):
        members[slice_name].add(names[item_id])
    return members


def _sent_to_humans(criterion: Criterion) -> dict[str, Any]:
    """How many of the items a judge labelled on this criterion were also asked of people."""
    judged = (
        Verdict.objects.current().filter(criterion=criterion).values("item_id").distinct().count()
    )
    asked = criterion_questions(criterion=criterion).values("item_id").distinct().count()
    return {
        "items_judged": judged,
        "items_asked": asked,
        "share": asked / judged if judged else None,
    }


def dashboard_compute(project, progress: Callable[[int, int], None] = _quiet) -> dict[str, Any]:
    """Every figure the dashboard shows, for the latest version of each criterion and all
    versions side by side; JSON-ready. `progress(done, total)` after each criterion version
    (total: their number, plus one for the snapshot's write)."""
    draw = current_draw(project)
    held_split = "held_out" if draw else "all"
    held, held_items, held_names = _inputs(project, held_split)
    calibration = {c.pk: data for c, data in _inputs(project, "calibration")[0]} if draw else {}
    members = _slice_members(project, held_items, held_names)
    critical_slices = set(
        Slice.objects.filter(project=project, critical=True).values_list("name", flat=True)
    )
    latest = {c.name: c for c, _ in held}  # ordered by version: the last one wins
    criteria = []
    progress(0, len(held) + 1)
    for criterion, data in held:
        criteria.append(
            _criterion_entry(
                criterion,
                data,
                latest=latest[criterion.name].pk == criterion.pk,
                calibration=calibration.get(criterion.pk),
                members=members,
            )
        )
        progress(len(criteria), len(held) + 1)
    _apply_gates(project, criteria, critical_slices)
    return {
        "project": project.slug,
        "computed_at": timezone.now().strftime("%Y-%m-%dT%H:%M:%SZ"),
        "split": held_split,
        "split_label": SPLIT_LABELS[held_split],
        "critical_slices": sorted(critical_slices),
        "criteria": criteria,
        "decisions": _decisions(criteria),
    }


def _criterion_entry(
    criterion: Criterion,
    data: CriterionInput,
    *,
    latest: bool,
    calibration: CriterionInput | None,
    members: dict[str, set[str]],
) -> dict[str, Any]:
    """One criterion version's figures: held-out `data` overall and per slice of `members`,
    its `calibration` data's (None without a split), and what the pages show beside them."""
    calibration_rows = (
        criterion_rows(calibration, seed=SEED, n_resamples=SLICE_RESAMPLES) if calibration else []
    )
    rows = shown_rows(criterion_rows(data, seed=SEED, n_resamples=RESAMPLES), calibration_rows)
    slices = {
        name: criterion_rows(restrict(data, items), seed=SEED, n_resamples=SLICE_RESAMPLES)
        for name, items in sorted(members.items())
    }
    for row in [*rows, *calibration_rows, *(r for cut in slices.values() for r in cut)]:
        row["label"] = row_label(row)
    beside = {row_key(r): r for r in calibration_rows}
    for row in rows:  # the development figures shown beside the row, if that version has any
        cal = beside.get(row_key(row))
        row["calibration"] = {"n": cal["n"], "cohen_kappa": cal["cohen_kappa"]} if cal else None
    return {
        "name": criterion.name,
        "version": criterion.version,
        "latest": latest,
        "labels": list(criterion.labels),
        "critical": criterion.critical,
        "ordinal": criterion.ordinal,
        "pairwise": criterion.pairwise,
        "text": criterion.text,
        "rows": rows,
        "slices": slices,
        "calibration_rows": calibration_rows,
        "disagreements": disagreements(data),
        "sent_to_humans": _sent_to_humans(criterion),
        "rater_quality": rater_agreement(data),
        "human_human": human_human_entries(data, seed=SEED, n_resamples=SLICE_RESAMPLES),
        "reliability": {j.ref: r for j in data.judges if (r := reliability(data, j)) is not None},
    }


def _apply_gates(project, criteria: list[dict], critical_slices: set[str]) -> None:
    """Every gating row gets its gate; the other versions of a judge get `gate` None."""
    for entry in criteria:
        rule = gate_rule(project, entry["name"])
        entry["gate"] = {
            "statistic": rule.statistic,
            "min_lower": rule.min_lower,
            "min_n": rule.min_n,
            "max_ci_width": rule.max_ci_width,
        }
        mark_gating(entry["rows"])
        for row in entry["rows"]:
            if not row["gating"]:
                row["gate"] = None
                continue
            slice_rows = {
                name: next((r for r in rows if row_key(r) == row_key(row)), {})
                for name, rows in entry["slices"].items()
                if name in critical_slices
            }
            outcome = evaluate(
                rule, row, critical=entry["critical"], critical_slice_rows=slice_rows
            )
            row["gate"] = {
                "decision": outcome.decision,
                "reasons": list(outcome.reasons),
                "failing_slices": list(outcome.failing_slices),
                "warnings": list(outcome.warnings),
            }


def _decisions(criteria: list[dict]) -> list[dict]:
    """Per gating judge (a configured judge's gating version, an imported judge, a panel): GO
    only if the latest version of every criterion passes; each failing criterion once, with
    its reasons."""
    by_judge: dict[tuple, list] = defaultdict(list)
    for entry in criteria:
        if not entry["latest"]:
            continue
        for row in entry["rows"]:
            if row["gating"]:
                by_judge[decision_key(row)].append(row)
    decisions = []
    for _, rows in sorted(by_judge.items()):
        outcomes = [_outcome(row) for row in rows]
        decision = release_decision(rows[0]["judge"], outcomes)
        decisions.append(
            {
                "judge": rows[0]["judge"],
                "judge_name": rows[0]["judge_name"],
                "judge_refs": sorted({row["judge_ref"] for row in rows}),
                "label": decision_label(rows[0]),
                "decision": decision.decision,
                "failing_criteria": list(decision.failing_criteria),
                "failing": [
                    {"criterion": o.criterion, "reasons": list(o.reasons)}
                    for o in outcomes
                    if not o.passed
                ],
                "failing_slices": list(decision.failing_slices),
            }
        )
    return decisions


def _outcome(row) -> GateOutcome:
    gate = row["gate"]
    return GateOutcome(
        criterion=row["criterion"],
        judge=row["judge"],
        decision=gate["decision"],
        reasons=tuple(gate["reasons"]),
        failing_slices=tuple(gate["failing_slices"]),
    )


def dashboard_refresh(
    *, project, progress: Callable[[int, int], None] = _quiet
) -> DashboardSnapshot:
    """Compute and store a new snapshot (the previous ones stay, as history).

    Items imported since the draw are drawn into it first (the late-item rule, as the agreement
    report does): otherwise they would sit in neither split and silently drop out of the figures.
    """
    split_extend(project=project)
    fingerprint = inputs_fingerprint(project)
    payload = dashboard_compute(project, progress)
    previous = latest_snapshot(project)
    snapshot = DashboardSnapshot.objects.create(
        project=project, fingerprint=fingerprint, payload=payload
    )
    before = previous.payload.get("decisions", []) if previous else []
    changed = gate_changes(before, payload["decisions"])
    if changed:
        webhook_events_emit(project, WebhookEvent.GATE_CHANGED, changed)
    steps = len(payload["criteria"]) + 1
    progress(steps, steps)
    return snapshot


def gate_changes(before: list[dict], after: list[dict]) -> list[dict]:
    """The judges whose release decision (GO / HOLD) differs between two snapshots' decisions
    (a judge gated for the first time: from None)."""
    was = {d["label"]: d["decision"] for d in before}
    return [
        {
            "judge": d["label"],
            "from": was.get(d["label"]),
            "to": d["decision"],
            "failing_criteria": d["failing_criteria"],
        }
        for d in after
        if was.get(d["label"]) != d["decision"]
    ]


def latest_snapshot(project) -> DashboardSnapshot | None:
    return DashboardSnapshot.objects.filter(project=project).order_by("-computed_at", "-pk").first()
