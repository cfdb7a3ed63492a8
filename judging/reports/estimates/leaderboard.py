"""A pairwise criterion's leaderboard: Bradley-Terry strengths of the systems its A/B items
compare, from people's final labels, a judge's verdicts or both, with each judge's
position-consistency beside them (docs/estimates.md, "Pairwise leaderboard").

Which systems an item compares: its `metadata.system_a` and `metadata.system_b` (answer A and
answer B). A human comparison is an item's final label (A, B or tie); a judge comparison is each
of its verdicts (every sample, in both display orders: a judge shown both orders contributes both,
so its position bias partly cancels and shows in its consistency figure).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from judging.metrics.bradley_terry import Comparisons, NoFiniteFit, fit_with_intervals
from judging.metrics.voting import position_swap_consistency
from judging.models import Criterion, Judge, Verdict
from judging.reports.estimates.build import EstimateRefused
from judging.reports.estimates.report import criterion_named
from judging.selectors_labels import final_labels
from judging.services.judges.refs import JudgeRefError, judge_ref_resolve
from reviews.models import Item, Project

SOURCES = ("human", "judge", "both")
SCORE = {"A": 1.0, "B": 0.0, "tie": 0.5}  # answer A's share of the win
N_RESAMPLES = 1000


def _systems(criterion: Criterion) -> tuple[dict[int, tuple[str, str]], int]:
    """item pk -> (system of answer A, system of answer B), and how many items name none."""
    pairs, missing = {}, 0
    for pk, meta in Item.objects.filter(project=criterion.project).values_list("pk", "metadata"):
        a, b = (meta or {}).get("system_a"), (meta or {}).get("system_b")
        if a and b and a != b:
            pairs[pk] = (str(a), str(b))
        else:
            missing += 1
    return pairs, missing


def _judge_verdicts(criterion: Criterion, judge: Judge, version=None):
    verdicts = Verdict.objects.current().filter(criterion=criterion, judge=judge)
    if version is not None:  # a version counts the samples it asks for
        verdicts = verdicts.filter(sample__lt=version.samples)
    return verdicts.order_by("item_id", "sample", "display_order")


def _position_consistency(verdicts) -> dict:
    """Share of items whose (majority) winner is the same in both display orders."""
    orders: dict[str, dict[int, Counter]] = {"AB": defaultdict(Counter), "BA": defaultdict(Counter)}
    for item_id, label, order in verdicts.values_list("item_id", "label", "display_order"):
        orders["BA" if order == "BA" else "AB"][item_id][label] += 1
    items = sorted(set(orders["AB"]) | set(orders["BA"]))

    def winner(order, item):
        votes = orders[order].get(item)
        return votes.most_common(1)[0][0] if votes else None

    return position_swap_consistency(
        [winner("AB", i) for i in items], [winner("BA", i) for i in items]
    ).as_dict()


def _judges(project: Project, criterion: Criterion, ref: str | None):
    """[(name, verdicts)] for the named judge, or every judge with verdicts on the criterion."""
    if ref:
        try:
            found = judge_ref_resolve(project=project, ref=ref, criterion=criterion)
        except JudgeRefError as error:
            raise EstimateRefused(str(error)) from None
        return [(found.ref, _judge_verdicts(criterion, found.judge, found.version))]
    judges = Judge.objects.filter(verdicts__criterion=criterion).distinct()
    return sorted(((j.name, _judge_verdicts(criterion, j)) for j in judges), key=lambda r: r[0])


def leaderboard_report(
    *,
    project: Project,
    criterion: str,
    judge: str | None = None,
    source: str = "both",
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
) -> dict:
    found = criterion_named(project, criterion)
    if not found.pairwise:
        raise EstimateRefused(f"criterion {criterion!r} is not pairwise (labels {found.labels})")
    if source not in SOURCES:
        raise EstimateRefused(f"source must be one of {', '.join(SOURCES)}, not {source!r}")
    if source != "human" and not judge:
        raise EstimateRefused(f"source {source!r} needs --judge")
    pairs, unnamed = _systems(found)
    judges = _judges(project, found, judge)
    rows: list[tuple[int, str]] = []  # (item pk, label): one comparison each
    if source in ("human", "both"):
        rows += sorted(final_labels(criterion=found).labels.items())
    if source in ("judge", "both"):
        rows += list(judges[0][1].values_list("item_id", "label"))
    out = {
        "criterion": found.name,
        "criterion_version": found.version,
        "source": source,
        "judge": judges[0][0] if judge else None,
        "items_without_systems": unnamed,
        "judges": [
            {"judge": name, "position_consistency": _position_consistency(v)} for name, v in judges
        ],
    }
    return out | _strengths(pairs, rows, seed=seed, n_resamples=n_resamples)


def _strengths(pairs, rows, *, seed: int, n_resamples: int) -> dict:
    names = sorted({s for pair in pairs.values() for s in pair})
    index = {name: n for n, name in enumerate(names)}
    records, tally = [], {name: Counter() for name in names}
    for item_id, label in rows:
        if item_id not in pairs or label not in SCORE:
            continue
        a, b = pairs[item_id]
        records.append((index[a], index[b], SCORE[label]))
        tally[a][{"A": "wins", "B": "losses", "tie": "ties"}[label]] += 1
        tally[b][{"A": "losses", "B": "wins", "tie": "ties"}[label]] += 1
    out = {"comparisons": len(records), "seed": seed, "n_resamples": n_resamples}
    try:
        fitted = fit_with_intervals(
            Comparisons.of(len(names), records), seed=seed, n_resamples=n_resamples
        )
    except NoFiniteFit as error:
        out["reason"] = str(error)
        fitted = None
    out["resamples_dropped"] = fitted.dropped if fitted else None
    systems = []
    for name, n in index.items():
        strength = {"value": None, "ci": None}
        if fitted is not None:
            ci = [float(fitted.low[n]), float(fitted.high[n])] if fitted.resamples else None
            strength = {"value": float(fitted.strengths[n]), "ci": ci}
        systems.append(
            {
                "system": name,
                "strength": strength,
                **{k: tally[name][k] for k in ("wins", "losses", "ties")},
            }
        )
    systems.sort(key=lambda s: -(s["strength"]["value"] or 0))
    return out | {"systems": systems}
