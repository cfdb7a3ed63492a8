"""Reads for judging's pages: rows joined from a dashboard snapshot and the project's tables.

The views call one of these and render; none of them writes (`buckets_for` may create the
project's default buckets on first use, through `judging/services/calibration/failures.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import OuterRef, Subquery

from evalsite import raw_rows
from judging.models import (
    Criterion,
    DashboardSnapshot,
    ItemSplit,
    Judge,
    JudgeConfig,
    JudgeVersion,
    Run,
    ScoreRun,
    Verdict,
)
from judging.services.calibration.failures import buckets_for, current_tags, failure_summary
from judging.services.calibration.send_to_humans import SELECTIONS
from judging.services.calibration.splits import current_draw
from judging.services.imports.criteria import criterion_kind
from judging.services.judges.refs import judge_ref_choices
from judging.services.runs.control import Progress, runs_progress
from reviews.models import Event, EventKind, Item, Membership, Project, Role, Slice
from reviews.services.projects.questions import QuestionType


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


@dataclass(frozen=True)
class JudgeRow:
    config: JudgeConfig
    latest: JudgeVersion | None


def judge_rows(project) -> list[JudgeRow]:
    """The project's judges by name, each with its newest version: two queries in all."""
    newest = JudgeVersion.objects.filter(config=OuterRef("pk")).order_by("-number")
    configs = list(
        JudgeConfig.objects.filter(project=project)
        .annotate(latest_pk=Subquery(newest.values("pk")[:1]))
        .order_by("name")
    )
    versions = JudgeVersion.objects.in_bulk([c.latest_pk for c in configs if c.latest_pk])
    return [JudgeRow(c, versions.get(c.latest_pk)) for c in configs]


def judge_runs(config, *, limit: int = 10) -> list[Progress]:
    """The judge's latest runs with their progress (each card names its version)."""
    runs = Run.objects.filter(version__config=config).select_related("version__config")
    return runs_progress(runs[:limit])  # their costs in one query


def dashboard_cards(user) -> list[dict]:
    """Per project where `user` reads dashboards, by name: the latest snapshot's release
    decisions. Two queries, whatever the number of projects."""
    latest = DashboardSnapshot.objects.filter(project=OuterRef("pk")).order_by(
        "-computed_at", "-pk"
    )
    projects = list(
        Project.objects.filter(
            pk__in=Membership.objects.filter(
                user=user, role__in=[Role.ADMIN, Role.ADJUDICATOR, Role.APPROVER]
            ).values("project_id")
        )
        .annotate(snapshot_pk=Subquery(latest.values("pk")[:1]))
        .order_by("name")
    )
    snapshots = DashboardSnapshot.objects.in_bulk(
        [p.snapshot_pk for p in projects if p.snapshot_pk]
    )
    cards = []
    for project in projects:
        snapshot = snapshots.get(project.snapshot_pk)
        payload = snapshot.payload if snapshot else None
        cards.append(
            {
                "project": project,
                "computed_at": snapshot.computed_at if snapshot else None,
                "decisions": payload["decisions"] if payload else [],
                "criteria": len({c["name"] for c in payload["criteria"]}) if payload else 0,
            }
        )
    return cards


@dataclass(frozen=True)
class GeneratedItem:
    item: Item
    agreed: list[str]  # paths the readers agreed on: rows of the generated reference
    asked: list[str]  # paths left to people: questions on the item


@dataclass
class Generation:
    runs: tuple[int, ...]  # the readers' runs: one generation
    at: datetime
    items: list[GeneratedItem] = field(default_factory=list)

    @property
    def agreed(self) -> int:
        return sum(len(i.agreed) for i in self.items)

    @property
    def asked(self) -> int:
        return sum(len(i.asked) for i in self.items)


def generations_recent(project, *, lines: int = 100) -> list[Generation]:
    """The latest generations' items, newest first, from the `generated` lines their import
    left on each item's timeline (generation_record): what each read agreed and what it asked.
    One query (a partial index holds those lines), whatever the project's size."""
    events = (
        Event.objects.filter(kind=EventKind.GENERATED, item__project=project)
        .select_related("item")
        .order_by("-id")[:lines]
    )
    generations: dict[tuple[int, ...], Generation] = {}
    for event in events:
        runs = tuple(sorted(reader["run"] for reader in event.data.get("readers", [])))
        generation = generations.setdefault(runs, Generation(runs, event.created_at))
        outcome = event.data.get("reconciliation", {})
        agreed = sorted(p for p, status in outcome.items() if status.startswith("agreed"))
        asked = sorted(p for p, status in outcome.items() if not status.startswith("agreed"))
        generation.items.append(GeneratedItem(event.item, agreed, asked))
    return list(generations.values())


@dataclass(frozen=True)
class CriterionRow:
    latest: Criterion
    kind: str  # the builder's kind (criterion_kind)
    versions: list[Criterion]  # newest first

    @property
    def kind_label(self) -> str:
        return QuestionType(self.kind).label


def criterion_rows(project: Project) -> list[CriterionRow]:
    """Each criterion of the project with its versions, newest first (one query)."""
    by_name: dict[str, list[Criterion]] = {}
    for criterion in Criterion.objects.filter(project=project).order_by(
        "name", "-created_at", "-pk"
    ):
        by_name.setdefault(criterion.name, []).append(criterion)
    return [
        CriterionRow(latest=versions[0], kind=criterion_kind(versions[0]), versions=versions)
        for versions in by_name.values()
    ]


def estimate_choices(project, criterion_name: str) -> tuple[list[str], list[str]] | None:
    """The estimate page's choices: the judges that labelled the criterion (as `--judge` names
    them) and the project's slices; None when the project has no such criterion."""
    if not Criterion.objects.filter(project=project, name=criterion_name).exists():
        return None
    versions = JudgeVersion.objects.filter(
        config__project=project, criterion__name=criterion_name
    ).values_list("config__name", "number")
    judged = Verdict.objects.filter(
        criterion__project=project, criterion__name=criterion_name
    ).values("judge_id")
    imported = Judge.objects.filter(pk__in=judged).values_list("provider", "model")
    allowed = {f"{name}@{number}" for name, number in versions} | {
        f"{provider}/{model}" for provider, model in imported
    }
    refs = [ref for ref in judge_ref_choices(project) if ref in allowed]
    slices = list(Slice.objects.filter(project=project).values_list("name", flat=True))
    return refs, slices


def split_condition(split: str) -> tuple[str, list]:
    """The item list's split filter, as SQL on reviews' `reviews_item i` (reviews/item_hooks.py)."""
    sql, params = ItemSplit.objects.filter(split=split).values("item_id").query.sql_with_params()
    return f"i.id IN ({sql})", list(params)


def latest_version(config: JudgeConfig) -> JudgeVersion | None:
    return config.versions.order_by("-number").first()


def judge_configs(project):
    return JudgeConfig.objects.filter(project=project).order_by("name")


def judge_config(project, name: str) -> JudgeConfig | None:
    return JudgeConfig.objects.filter(project=project, name=name).first()


def criterion_names_statement(project) -> tuple[str, list]:
    """The statement `criterion_names` runs (the item list reads it ahead with its own)."""
    return (
        "SELECT DISTINCT name FROM judging_criterion WHERE project_id = %s ORDER BY name",
        [project.pk],
    )


def criterion_names(project) -> list[str]:
    """The project's criteria by name, each once (a criterion has a row per version).

    Read by hand (`evalsite/raw_rows.py`: the item list, which `make bench` times, offers them
    to *Send to humans*, and reads them ahead with its own statements); tests/judging/
    test_criterion_names.py holds it to the ORM's list."""
    return [name for (name,) in raw_rows.fetch_kept(project, *criterion_names_statement(project))]


def project_runs(project):
    """The project's judge runs, each with its version and judge (a run page's header)."""
    return Run.objects.filter(project=project).select_related("version__config")


def generation_runs(project, *, limit: int = 10):
    """The latest ground-truth generation runs (their versions judge no criterion)."""
    return Run.objects.filter(project=project, version__criterion__isnull=True)[:limit]


def score_runs(project):
    return ScoreRun.objects.filter(project=project).select_related("created_by")
