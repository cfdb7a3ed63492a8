"""Compare two systems on the same inputs (docs/estimates.md#comparing-two-systems): gathers one
judge's labels and the human labels as an estimate does (`report.estimate_data`, every item),
finds each system's items and pairs them by an input key, then `paired.py` computes the figures.

A system is a slice of that name if the project has one, else the items whose
`metadata.system` is that name. Items pair by `metadata[PAIR_BY]`: an item without the key, or
sharing its key with another item of the same system, is left out and counted.
"""

from __future__ import annotations

from dataclasses import replace

from judging.reports.estimates.build import EstimateRefused
from judging.reports.estimates.paired import paired_report
from judging.reports.estimates.report import DEFAULT_ALPHA, estimate_data
from judging.services.calibration.splits import held_out_access_log
from reviews.models import Item, ItemSlice, Project, Slice


def _members(project: Project, system: str, items: dict) -> set:
    """The judged items (pk -> (external id, metadata)) that belong to `system`."""
    chosen = Slice.objects.filter(project=project, name=system).first()
    if chosen is not None:
        linked = ItemSlice.objects.filter(slice=chosen, item_id__in=list(items))
        return set(linked.values_list("item_id", flat=True))
    return {pk for pk, (_, meta) in items.items() if (meta or {}).get("system") == system}


def _by_key(members: set, items: dict, pair_by: str, left_out: dict) -> dict:
    keys: dict = {}
    for pk in sorted(members):
        key = (items[pk][1] or {}).get(pair_by)
        if key is None:
            left_out["no_pair_key"] += 1
        else:
            keys.setdefault(str(key), []).append(pk)
    left_out["duplicate_pair_key"] += sum(len(v) for v in keys.values() if len(v) > 1)
    return {key: pks[0] for key, pks in keys.items() if len(pks) == 1}


def systems_compare(
    *,
    actor,
    project: Project,
    criterion: str,
    judge: str,
    a: str,
    b: str,
    pair_by: str,
    assume_random: bool = False,
    alpha: float = DEFAULT_ALPHA,
) -> dict:
    """Each system's true score on the paired inputs and the paired difference A − B."""
    if a == b:
        raise EstimateRefused("name two different systems")
    data = estimate_data(
        project=project, criterion=criterion, judge=judge, split="all", slice_name=None
    )
    rows = Item.objects.filter(pk__in=list(data.judge_labels)).values_list(
        "pk", "external_id", "metadata"
    )
    items = {pk: (external_id, meta) for pk, external_id, meta in rows}
    members = {name: _members(project, name, items) for name in (a, b)}
    for name, found in members.items():
        if not found:
            raise EstimateRefused(
                f"no judged item belongs to system {name!r} (a slice of that name, or "
                "metadata.system)"
            )
    left_out = {"no_pair_key": 0, "duplicate_pair_key": 0, "unmatched": 0}
    keyed = {name: _by_key(found, items, pair_by, left_out) for name, found in members.items()}
    shared = sorted(set(keyed[a]) & set(keyed[b]))
    left_out["unmatched"] = len(set(keyed[a]) ^ set(keyed[b]))
    pairs = [(key, keyed[a][key], keyed[b][key]) for key in shared]
    paired = {pk for _, x, y in pairs for pk in (x, y)}
    data = replace(
        data,
        judge_labels={pk: v for pk, v in data.judge_labels.items() if pk in paired},
        human_labels={pk: v for pk, v in data.human_labels.items() if pk in paired},
        selections={pk: v for pk, v in data.selections.items() if pk in paired},
    )
    report = paired_report(
        data,
        pairs,
        names={pk: items[pk][0] for pk in paired},
        systems=(a, b),
        alpha=alpha,
        assume_random=assume_random,
    )
    held_out_access_log(
        actor=actor, project=project, what=f"compare systems {a} and {b}, criterion {criterion}"
    )
    return {"project": project.slug, "pair_by": pair_by, "pairs_left_out": left_out, **report}
