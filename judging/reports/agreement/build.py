"""The agreement report as a pure function: plain labels in, the report dict out.

No Django here: `agreement.py` gathers the data, dashboards can call `agreement_report_build`
with their own. Keys are documented in docs/agreement-report.md and are stable.

Judge labels: a judge's samples on an item vote (the most common label; a tie gives no label,
`ties_excluded`); a sample whose label is outside the criterion's label set (TextFlow's
`unparsed`) abstains and is counted in `unparsed_samples`. Each version of a judge run from
Evalsite is its own row, never mixed with another. A configured panel (`panel:NAME`, its members
pinned versions) votes per model group first, then each group once (`agreement_panels`); there
is no implicit panel. Agreement statistics use the items that have both a judge label and a final human label; rows =
human, columns = judge.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from judging.metrics import (
    Stat,
    accuracy,
    classification_report,
    cohen_kappa_ci,
    confusion_matrix,
    expected_agreement,
    gwet_ac1,
    krippendorff_alpha,
    observed_agreement,
    position_swap_consistency,
)
from judging.reports.agreement.bias import first_position_entry, length_bias_entry
from judging.reports.agreement.cuts import collapse, label_counts, thresholds
from judging.reports.agreement.human import human_human_entries
from judging.reports.agreement.inputs import CriterionInput, JudgeSamples, PanelInput
from judging.reports.agreement.panels import Votes, panel_entry, panel_item_votes, panel_samples

N_RESAMPLES = 2000
CI_LEVEL = 0.95
CI_METHOD = "percentile"
NO_PAIRS = "no item has both a judge label and a final human label (n = 0)"
NOMINAL_WEIGHTS = "weighted kappa needs ordered labels: this criterion is nominal"
NOT_PAIRWISE = "position consistency applies to pairwise criteria only"
NO_POSITIVE = "the criterion has no positive label"
SPLIT_LABELS = {
    "held_out": "held-out figures: the ones that count",
    "calibration": "development figures (calibration split): for tuning, not for release decisions",
    "all": "development figures (all items, calibration and held-out mixed): not for release "
    "decisions",
}


def _top(labels: Sequence[str]) -> tuple[str | None, bool]:
    """(the most common label or None, tied?)."""
    ranked = Counter(labels).most_common(2)
    if not ranked:
        return None, False
    if len(ranked) == 2 and ranked[0][1] == ranked[1][1]:
        return None, True
    return ranked[0][0], False


@lru_cache(maxsize=4096)
def _vote(samples: tuple[str, ...], labels: tuple[str, ...]) -> tuple[str | None, bool, int]:
    """(label, tied?, unparsed samples) of one item's samples. Items repeat a few patterns (a
    judge's k samples over a few labels): each pattern is counted once, not once per item (the
    dashboard's recompute votes 1M verdicts several times: per split, slice, disagreement)."""
    allowed = set(labels)
    label, tied = _top([s for s in samples if s in allowed])
    return label, tied, sum(s not in allowed for s in samples)


def judge_label(samples: Sequence[str], labels: Sequence[str]) -> tuple[str | None, bool]:
    """A judge's label on one item: the most common of its samples that parse (one of the
    criterion's `labels`), with whether its samples tied; (None, False) when none parses."""
    label, tied, _ = _vote(tuple(samples), tuple(labels))
    return label, tied


def disagreeing_label(
    human: str | None, samples: Sequence[str], labels: Sequence[str]
) -> str | None:
    """The disagreement rule (the dashboard's disagreement list and the item page): the judge's
    label when it differs from the final human label; None when they agree, when there is no
    human label, or when the judge's samples tie or do not parse."""
    label, _ = judge_label(samples, labels)
    return label if human is not None and label is not None and label != human else None


def judge_votes(judge: JudgeSamples, labels: Sequence[str]) -> Votes:
    votes = Votes()
    labels = tuple(labels)
    for item, samples in judge.samples.items():
        label, tied, unparsed = _vote(tuple(samples), labels)
        votes.unparsed_samples += unparsed
        if label is not None:
            votes.labels[item] = label
        elif tied:
            votes.ties.add(item)
        else:
            votes.unparsed_only.add(item)
    return votes


def _ci(value: Stat, result) -> dict[str, Any]:
    return value.as_dict() if result is None else result.estimate.as_dict()


def _bootstrap_options(seed: int, n_resamples: int) -> dict[str, Any]:
    return {"n_resamples": n_resamples, "level": CI_LEVEL, "method": CI_METHOD, "rng": seed}


def _kappas(table, criterion: CriterionInput, seed: int, n_resamples: int) -> dict[str, Any]:
    options = _bootstrap_options(seed, n_resamples)
    kappa = cohen_kappa_ci(table, **options)
    out = {"cohen_kappa": kappa.estimate.as_dict()}
    for weights in ("linear", "quadratic"):
        key = f"weighted_kappa_{weights}"
        if criterion.ordinal:
            out[key] = cohen_kappa_ci(table, weights=weights, **options).estimate.as_dict()
        else:
            out[key] = Stat.undefined(NOMINAL_WEIGHTS).as_dict()
    out["bootstrap"] = {
        "method": CI_METHOD,
        "level": CI_LEVEL,
        "n_resamples": n_resamples,
        "seed": seed,
        "resamples_undefined": kappa.resamples_undefined,
        "ci_undefined_reason": kappa.ci_undefined_reason,
    }
    return out


def _averages(report) -> dict[str, Stat]:
    """`precision_macro` … `f1_weighted`: macro and support-weighted means over the labels where
    each is defined (scikit-learn's `zero_division=nan`); micro = accuracy (single-label)."""
    return {
        f"{measure}_{average}": getattr(getattr(report, average), measure)
        for average in ("macro", "micro", "weighted")
        for measure in ("precision", "recall", "f1")
    }


def _per_label(report, *, paired: bool) -> dict[str, dict[str, Any]]:
    """{label: {precision, recall, f1, support}}, the human label as the reference."""
    out = {}
    for scores in report.per_class:
        stats = {"precision": scores.precision, "recall": scores.recall, "f1": scores.f1}
        if not paired:
            stats = dict.fromkeys(stats, Stat.undefined(NO_PAIRS))
        out[scores.label] = {key: value.as_dict() for key, value in stats.items()}
        out[scores.label]["support"] = scores.support
    return out


def _agreement_stats(humans, judged, criterion: CriterionInput, seed: int, n_resamples: int):
    labels = list(criterion.labels)
    table = confusion_matrix(humans, judged, labels)
    level = "ordinal" if criterion.ordinal else "nominal"
    report = classification_report(table, labels)
    stats = {
        "observed_agreement": observed_agreement(table),
        "expected_agreement": expected_agreement(table),
        "krippendorff_alpha": krippendorff_alpha([humans, judged], level=level, values=labels),
        "gwet_ac1": gwet_ac1(table),
        "accuracy": accuracy(table),
        **_averages(report),
    }
    if not humans:
        stats = dict.fromkeys(stats, Stat.undefined(NO_PAIRS))
    out = {key: value.as_dict() for key, value in stats.items()}
    out |= _kappas(table, criterion, seed, n_resamples)
    if not humans:
        for key in ("cohen_kappa", "weighted_kappa_linear", "weighted_kappa_quadratic"):
            if out[key]["value"] is None:
                out[key] = Stat.undefined(NO_PAIRS).as_dict()
    out["per_label"] = _per_label(report, paired=bool(humans))
    out["krippendorff_level"] = level
    out["confusion_matrix"] = {"labels": labels, "counts": table.tolist()}
    out["label_counts"] = {
        "judge": label_counts(judged, labels),
        "human": label_counts(humans, labels),
    }
    out["thresholds"] = (
        thresholds(humans, judged, labels, bootstrap=_bootstrap_options(seed, n_resamples))
        if criterion.ordinal
        else []
    )
    return out


def _share(hits: int, total: int, positive: str, what: str) -> Stat:
    if not positive:
        return Stat.undefined(NO_POSITIVE)
    if total == 0:
        return Stat.undefined(f"no item has {what}")
    return Stat(hits / total)


def _position_consistency(criterion: CriterionInput, judges: Sequence[JudgeSamples]) -> Stat:
    if not criterion.pairwise:
        return Stat.undefined(NOT_PAIRWISE)
    first: dict[str, list[str]] = {}
    swapped: dict[str, list[str]] = {}
    for judge in judges:
        for item, samples in judge.samples.items():
            for label, order in zip(samples, judge.orders.get(item, ()), strict=False):
                (swapped if order == "BA" else first).setdefault(item, []).append(label)
    items = sorted(set(first) | set(swapped))
    return position_swap_consistency(
        [_top(first.get(i, []))[0] for i in items], [_top(swapped.get(i, []))[0] for i in items]
    )


def _identity(judge: JudgeSamples | None, panel: PanelInput | None) -> dict[str, Any]:
    """Which judge version (or configured panel) a row measures."""
    if panel is not None:
        return {
            "judge": panel.ref,
            "judge_name": None,
            "judge_version": None,
            "judge_ref": panel.ref,
            "panel": panel_entry(panel),
        }
    return {
        "judge": judge.name,
        "judge_name": judge.judge_name,
        "judge_version": judge.judge_version,
        "judge_ref": judge.ref,
        "panel": None,
    }


def result_row(
    criterion, judges, votes: Votes, *, seed, n_resamples, panel: PanelInput | None = None
) -> dict:
    """One criterion × judge version (or panel) row; see docs/agreement-report.md for every
    key. `judges`: the row's one judge version, or the panel's members."""
    final = criterion.final_labels
    paired = sorted(item for item in votes.labels if item in final)
    positive = criterion.positive_label
    row = {
        "criterion": criterion.name,
        "criterion_version": criterion.version,
        "labels": list(criterion.labels),
        "positive_label": positive or None,
        "ordinal": criterion.ordinal,
        "critical": criterion.critical,
        "collapsed_at": criterion.collapsed_at,
        **_identity(judges[0] if panel is None else None, panel),
        "judge_configurations": sorted({j.configuration for j in judges}),
        "model_groups": sorted({j.model_group for j in judges}),
        "n": len(paired),
        "n_judged": votes.judged,
        "n_human": len(final),
        "ties_excluded": len(votes.ties & final.keys()),
        "unparsed_excluded": len(votes.unparsed_only & final.keys()),
        "unparsed_samples": votes.unparsed_samples,
        "human_ties_excluded": len(set(criterion.human_ties) & set(votes.labels)),
        # Given on an earlier revision of the item's content: not counted above.
        "stale_verdicts": len(frozenset().union(*(j.stale_items for j in judges))),
        "stale_labels": len(criterion.stale_label_items),
    }
    humans = [final[item] for item in paired]
    judged = [votes.labels[item] for item in paired]
    row |= _agreement_stats(humans, judged, criterion, seed, n_resamples)
    passed = sum(label == positive for label in votes.labels.values())
    row["pass_rate_judged"] = _share(passed, votes.judged, positive, "a judge verdict").as_dict()
    passed_human = sum(label == positive for label in final.values())
    row["pass_rate_human"] = _share(
        passed_human, len(final), positive, "a final human label"
    ).as_dict()
    row["position_consistency"] = _position_consistency(criterion, judges).as_dict()
    row["first_position_win_rate"] = first_position_entry(criterion, judges)
    row["length_bias"] = length_bias_entry(criterion, paired, votes.labels)
    return row


def criterion_rows(criterion: CriterionInput, *, seed: int, n_resamples: int) -> list[dict]:
    """A row per judge version, then one per configured panel."""
    rows = []
    judges = sorted(criterion.judges, key=judge_order)
    for judge in judges:
        votes = judge_votes(judge, criterion.labels)
        rows.append(result_row(criterion, [judge], votes, seed=seed, n_resamples=n_resamples))
    for panel in sorted(criterion.panels, key=lambda p: p.name):
        votes = panel_item_votes(panel_samples(panel), criterion.labels, panel.rule)
        rows.append(
            result_row(
                criterion, panel.members, votes, seed=seed, n_resamples=n_resamples, panel=panel
            )
        )
    return rows


def judge_order(judge: JudgeSamples) -> tuple:
    """provider/model, then configuration name and version (imported verdicts first)."""
    return (judge.name, judge.judge_name or "", judge.judge_version or 0, judge.configuration)


def agreement_report_build(
    *,
    project: str,
    split: str,
    computed_at: str,
    criteria: Sequence[CriterionInput],
    notes: Sequence[str] = (),
    split_draw: dict[str, Any] | None = None,
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
    collapse_at: str | None = None,
) -> dict[str, Any]:
    """The whole report (JSON-ready) from plain data. Deterministic for a given seed.

    `collapse_at`: every criterion is reported collapsed at that cut point (raises
    `agreement_cuts.CollapseError` when it does not split one of them)."""
    ordered = sorted(criteria, key=lambda c: (c.name, c.version))
    if collapse_at is not None:
        ordered = [collapse(c, collapse_at) for c in ordered]
    notes = list(notes)
    for criterion in ordered:
        if criterion.human_ties:
            shown = ", ".join(sorted(criterion.human_ties)[:10])
            more = "…" if len(criterion.human_ties) > 10 else ""
            notes.append(
                f"{criterion.name}: {len(criterion.human_ties)} items have tied human labels and "
                f"no final label (left out): {shown}{more}"
            )
    return {
        "project": project,
        "split": split,
        "split_label": SPLIT_LABELS[split],
        "development_figures": split != "held_out",
        "computed_at": computed_at,
        "split_draw": split_draw,
        "collapse_at": collapse_at,
        "notes": notes,
        "results": [
            row for c in ordered for row in criterion_rows(c, seed=seed, n_resamples=n_resamples)
        ],
        "human_human": [
            entry
            for c in ordered
            for entry in human_human_entries(c, seed=seed, n_resamples=n_resamples)
        ],
    }
