"""Charts for the dashboard pages, built from a snapshot's figures (no database here).

The views pick the snapshot and render; what each chart shows, and in which order, is here.
"""

from __future__ import annotations

from django.utils.safestring import SafeString

from judging import charts
from judging.charts import trusted_svg
from judging.metrics.planning import kappa_labels_needed

KAPPA_FLOOR = -0.2  # the kappa axis starts here: values below mean worse than chance anyway


class NoSuchCriterion(LookupError):
    pass


def find_criterion(payload: dict, name: str, version: str | None) -> dict:
    """The latest version of `name` in the snapshot (or the `version` asked for)."""
    matches = [c for c in payload["criteria"] if c["name"] == name]
    if version:
        matches = [c for c in matches if c["version"] == version]
    latest = [c for c in matches if c["latest"]] or matches
    if not latest:
        raise NoSuchCriterion(name)
    return latest[-1]


def _kappa_svg(row: dict, threshold, title: str):
    kappa = row.get("cohen_kappa") or {}
    return trusted_svg(
        charts.interval_svg(
            kappa.get("value"), kappa.get("ci"), threshold=threshold, lo=KAPPA_FLOOR, title=title
        )
    )


def _labels_needed(row: dict, gate: dict) -> dict | None:
    kappa = row.get("cohen_kappa") or {}
    if kappa.get("value") is None:
        return None
    low = kappa["ci"][0] if kappa.get("ci") else float("-inf")
    return kappa_labels_needed(
        kappa=kappa["value"],
        ci_low=low,
        n=row.get("n") or 0,
        gate=gate["min_lower"],
        min_n=gate.get("min_n", 0),
    ).as_dict()


def _same_judge(row: dict) -> tuple:
    return (row.get("judge_ref"), tuple(row.get("judge_configurations") or ()))


def labels_to_decide(row: dict, criterion: dict) -> list[dict]:
    """A held row's "label N more to decide", for the whole held-out set and for each critical
    slice that fails: the labelled items kappa's lower bound needs to reach the gate if
    agreement stays as measured (`kappa_labels_needed`, its method named), or `total` None when
    kappa itself is under the gate; `judged` is how many items the judge labelled there (a plan
    can need more than there are). Empty when the row is not held, or its gate is not on
    Cohen's kappa."""
    gate = criterion.get("gate") or {}
    decision = row.get("gate") or {}
    if decision.get("decision") != "HOLD" or gate.get("statistic") != "cohen_kappa":
        return []
    parts = [("", row)] + [
        (f"slice {name}", slice_row)
        for name in decision.get("failing_slices", [])
        for slice_row in criterion.get("slices", {}).get(name, [])
        if _same_judge(slice_row) == _same_judge(row)
    ]
    needed = [(where, part, _labels_needed(part, gate)) for where, part in parts]
    return [
        {"where": where, "judged": part.get("n_judged"), **plan}
        for where, part, plan in needed
        if plan is not None and (plan["more"] != 0 or where)
    ]


def with_kappa_charts(criterion: dict) -> dict:
    """Each judge's row of `criterion` gets its Cohen's kappa interval chart (`kappa_svg`) and,
    when held, how many labels would decide it (`labels_to_decide`)."""
    gate = criterion.get("gate") or {}
    for row in criterion["rows"]:
        title = f"{criterion['name']}, {row.get('label', row['judge'])}: Cohen's kappa"
        row["kappa_svg"] = _kappa_svg(row, gate.get("min_lower"), title)
        row["labels_to_decide"] = labels_to_decide(row, criterion)
    return criterion


def dashboard_charts(payload: dict | None) -> dict | None:
    for criterion in (payload or {}).get("criteria", []):
        with_kappa_charts(criterion)
    return payload


def _lower_bound(row: dict) -> tuple[bool, float]:
    """Worst first: undefined or missing intervals before any number; slices with no items
    (n = 0: nothing to judge) last."""
    ci = (row.get("cohen_kappa") or {}).get("ci")
    return (not row.get("n"), ci[0] if ci else float("-inf"))


def criterion_figures(payload: dict, name: str, version: str | None) -> dict:
    """The criterion page: kappa per judge, confusion heatmaps, slices worst first, the
    reliability diagrams and the other versions. Raises NoSuchCriterion."""
    criterion = with_kappa_charts(find_criterion(payload, name, version))
    threshold = criterion.get("gate", {}).get("min_lower")
    heatmaps = [
        (
            row["judge_ref"],
            trusted_svg(
                charts.heatmap_svg(
                    row["confusion_matrix"]["labels"],
                    row["confusion_matrix"]["counts"],
                    title=f"{name}: human vs {row.get('label', row['judge'])}",
                )
            ),
        )
        for row in criterion["rows"]
        if row.get("confusion_matrix")
    ]
    slices = [
        (
            slice_name,
            row,
            _kappa_svg(
                row, threshold, f"{slice_name}, {row.get('label', row['judge'])}: Cohen's kappa"
            ),
        )
        for slice_name, rows in criterion["slices"].items()
        for row in rows
    ]
    slices.sort(key=lambda entry: _lower_bound(entry[1]))
    reliability = [
        (
            judge,
            trusted_svg(charts.reliability_svg(r["bins"], title=f"{name}: {judge} reliability")),
            r,
        )
        for judge, r in sorted(criterion["reliability"].items())
    ]
    return {
        "criterion": criterion,
        "bias": bias_figures(criterion),
        "heatmaps": heatmaps,
        "slice_rows": slices,
        "versions": [c for c in payload["criteria"] if c["name"] == name],
        "reliability": reliability,
    }


def _length_chart(name: str, judge: str, bias: dict) -> SafeString:
    rows = [
        (f"{q['min_chars']:,}–{q['max_chars']:,} chars", q["difference"],
         f"{q['difference']:+.2f} (n {q['n']})")
        for q in bias["quintiles"]
    ]  # fmt: skip
    title = f"{name}, {judge}: judge minus human pass rate by output length quintile"
    return trusted_svg(charts.diverging_bars_svg(rows, title=title))


def bias_figures(criterion: dict) -> list[dict]:
    """The judge bias checks per row: length bias (pass/fail criteria) with its quintile chart,
    or the first-position win rate on a 0–1 axis (pairwise). Snapshots computed before these
    checks existed have neither key: nothing is shown for them."""
    found = []
    for row in criterion["rows"]:
        judge = row.get("label", row["judge"])
        bias, first = row.get("length_bias"), row.get("first_position_win_rate")
        if criterion.get("pairwise") and first:
            svg = charts.interval_svg(
                first["value"], first["ci"], lo=0.0, hi=1.0, width=260, axis="",
                title=f"{criterion['name']}, {judge}: first-position win rate with 95% CI",
            )  # fmt: skip
            found.append({"judge": judge, "first_position": first, "svg": trusted_svg(svg)})
        elif bias and "n" in bias:
            spread = (
                bias["quintiles"]
                and bias["quintiles"][-1]["max_chars"] > bias["quintiles"][0]["min_chars"]
            )
            svg = _length_chart(criterion["name"], judge, bias) if spread else None
            p = bias["p_value"]
            p_text = None if p is None else "< 0.0001" if p < 1e-4 else f"= {p:.4f}"
            found.append({"judge": judge, "length": bias, "p_text": p_text, "svg": svg})
    return found


def failure_figures(summary: dict) -> dict:
    """The failure-analysis page: the bucket bar chart and the slices seen in any bucket."""
    return {
        "summary": summary,
        "chart": trusted_svg(
            charts.bars_svg(summary["per_bucket"], title="Disagreements per failure bucket")
        ),
        "slice_names": sorted({s for counts in summary["per_slice"].values() for s in counts}),
    }


ESTIMATE_FIGURES = (
    ("ppi", "PPI++", "the judge on every item, corrected by its errors on the labelled ones"),
    ("human_only", "Human only", "the labelled items alone: unbiased, wide"),
    ("judge_only", "Judge only", "the judge's own rate: narrow, biased by its errors"),
)


def estimate_figures(entry: dict) -> dict:
    """The estimate page's three figures (`rows`), each with its interval drawn on one 0–1
    axis (wider for an ordinal criterion's mean), and the intervals' `level`."""
    bounds = [b for key, _, _ in ESTIMATE_FIGURES for b in entry[key]["ci"]]
    lo, hi = (0.0, 1.0) if min(bounds) >= 0 and max(bounds) <= 1 else (min(bounds), max(bounds))
    level = f"{100 * (1 - entry['alpha']):g}%"
    rows = [
        {
            "key": key,
            "name": name,
            "what": what,
            "figure": entry[key],
            "svg": trusted_svg(
                charts.interval_svg(
                    entry[key]["value"],
                    entry[key]["ci"],
                    lo=lo,
                    hi=hi,
                    width=260,
                    title=f"{entry['criterion']}, {name}: estimate with {level} CI",
                    axis="",
                )
            ),
        }
        for key, name, what in ESTIMATE_FIGURES
    ]
    return {"rows": rows, "level": level}


def run_charts(progress: list) -> dict:
    """The judge page's two charts over its latest runs, oldest at the top: the median call
    latency (with the 95th percentile printed) and the cost. Runs without a figure are left
    out of that chart; empty charts are None."""
    runs = list(reversed(progress))
    latency = [
        (f"run {p.run.pk} v{p.run.version.number}", p.cost.latency_p50,
         f"p50 {p.cost.latency_p50} ms · p95 {p.cost.latency_p95} ms")
        for p in runs
        if p.cost.latency_p50 is not None
    ]  # fmt: skip
    cost = [
        (f"run {p.run.pk} v{p.run.version.number}", float(p.cost.usd),
         f"{'≥ ' * p.cost.at_least}${p.cost.usd:.4f}")
        for p in runs
        if p.cost.usd is not None and p.cost.calls
    ]  # fmt: skip
    return {
        "latency": trusted_svg(
            charts.value_bars_svg(latency, title="Median call latency per run (ms)")
        )
        if latency
        else None,
        "cost": trusted_svg(charts.value_bars_svg(cost, title="Cost per run (USD)"))
        if cost
        else None,
    }
