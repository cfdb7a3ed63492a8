"""Reads for judging's pages: rows joined from a dashboard snapshot and the project's tables.

The views call one of these and render; none of them writes (`buckets_for` may create the
project's default buckets on first use, through `judging/services/failures.py`).
"""

from __future__ import annotations

from judging.models import Criterion
from judging.services.failures import buckets_for, current_tags, failure_summary
from judging.services.send_to_humans import SELECTIONS
from judging.services.splits import current_draw
from reviews.models import Item


def disagreement_rows(project, payload) -> tuple[list[dict], dict[int, list[str]]]:
    """Every disagreement of the latest criterion versions, with its item's pk and slices."""
    rows = [dict(r) for c in payload["criteria"] if c["latest"] for r in c["disagreements"]]
    items = Item.objects.filter(project=project, external_id__in={r["item"] for r in rows})
    by_id = {i.external_id: i for i in items.prefetch_related("slices")}
    slices_of = {}
    for row in rows:
        item = by_id.get(row["item"])
        row["item_pk"] = item.pk if item else None
        slices_of[row["item_pk"]] = sorted(s.name for s in item.slices.all()) if item else []
        row["slices"] = slices_of[row["item_pk"]]
    return [r for r in rows if r["item_pk"]], slices_of


def _pair(row: dict) -> str:
    return f"{row['human']} → {row['judged']}"


def _matches(row: dict, filters: dict[str, str]) -> bool:
    return (
        (not filters["criterion"] or row["criterion"] == filters["criterion"])
        and (not filters["judge"] or row["judge"] == filters["judge"])
        and (not filters["slice"] or filters["slice"] in row["slices"])
        and (not filters["pair"] or _pair(row) == filters["pair"])
    )


def disagreements_page(project, payload, *, filters: dict[str, str], lead: list[str]) -> dict:
    """The disagreement list: the rows that pass `filters`, `lead` criteria first, each with
    its current failure tag; the choices each filter offers; the buckets to tag with."""
    rows, _ = disagreement_rows(project, payload)
    options = {
        "criterion": sorted({r["criterion"] for r in rows}),
        "judge": sorted({r["judge"] for r in rows}),
        "slice": sorted({s for r in rows for s in r["slices"]}),
        "pair": sorted({_pair(r) for r in rows}),
    }
    shown = led_by([r for r in rows if _matches(r, filters)], lead)
    tags = current_tags(project)
    for row in shown:
        row["tag"] = tags.get((row["item_pk"], row["criterion"], row["judge"]))
    return {
        "rows": shown,
        "total": len(rows),
        "filters": filters,
        "lead": lead,
        "options": options,
        "buckets": buckets_for(project),
    }


def led_by(rows: list[dict], lead: list[str]) -> list[dict]:
    """From a HOLD decision: rows of the criteria that failed its gate first, in that order."""
    return sorted(
        rows, key=lambda r: lead.index(r["criterion"]) if r["criterion"] in lead else len(lead)
    )


def failure_counts(project, payload) -> tuple[dict, int]:
    """Disagreements per failure bucket and slice (`failure_summary`), and how many there are."""
    rows, slices_of = disagreement_rows(project, payload)
    return failure_summary(rows, current_tags(project), slices_of), len(rows)


def dashboard_setup(project) -> dict:
    """What an admin's setup panel offers: the current split draw, criteria, selections."""
    names = Criterion.objects.filter(project=project).values_list("name", flat=True)
    return {"draw": current_draw(project), "criteria": sorted(set(names)), "selections": SELECTIONS}
