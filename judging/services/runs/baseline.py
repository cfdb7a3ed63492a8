"""Run a deterministic baseline judge over a project's items and write its verdicts.

Like any judge: a `Judge` row (`baseline/<settings>`, its settings' SHA-256 as the prompt
fingerprint) and one `Verdict` per item (sample 0), so the agreement report and the dashboard
put it beside the LLM judges. Items without an output or a reference are skipped and counted;
an item this judge already labelled keeps its verdict (running again changes nothing).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from judging.models import Criterion, Verdict
from judging.services.calibration.splits import items_in_split
from judging.services.imports.criteria import judge_ensure
from judging.services.runs.baselines import Baseline, BaselineError, judge
from reviews.models import Project
from reviews.services.projects.data import project_data_touch

PROVIDER = "baseline"


@dataclass(frozen=True)
class BaselineResult:
    judge: str
    written: int
    already: int
    skipped: int  # no output or no reference
    passed: int


def baseline_ready(criterion: Criterion) -> bool:
    """A baseline labels pass or fail: the criterion needs two labels, one of them positive."""
    return len(criterion.labels) == 2 and criterion.positive_label in criterion.labels


def _labels(criterion: Criterion) -> tuple[str, str]:
    labels = list(criterion.labels)
    positive = criterion.positive_label
    if not baseline_ready(criterion):
        raise BaselineError(
            f"criterion {criterion.name!r} needs two labels and a positive one for a baseline "
            f"(it has {', '.join(labels)}; positive {positive or 'none'})"
        )
    return positive, next(label for label in labels if label != positive)


def baseline_run(
    *, project: Project, criterion: str, baseline: Baseline, split: str = "all"
) -> BaselineResult:
    found = Criterion.objects.filter(project=project, name=criterion).order_by("-created_at")
    target = found.first()
    if target is None:
        raise BaselineError(f"no criterion {criterion!r} in project {project.slug!r}")
    positive, negative = _labels(target)
    items = items_in_split(project=project, split=split).order_by("pk")
    with transaction.atomic():
        row, _ = judge_ensure(
            project=project,
            provider=PROVIDER,
            model=baseline.model,
            temperature=0.0,
            prompt_sha256=baseline.fingerprint,
        )
        done = set(
            Verdict.objects.current()
            .filter(judge=row, criterion=target)
            .values_list("item_id", flat=True)
        )
        verdicts, skipped, passed = [], 0, 0
        for item in items.only("pk", "output", "expected", "revision"):
            if item.output is None or item.expected is None:
                skipped += 1
                continue
            if item.pk in done:
                continue
            outcome = judge(baseline, item.output, item.expected)
            passed += outcome.passed
            verdicts.append(
                Verdict(
                    item_id=item.pk,
                    revision=item.revision,
                    criterion=target,
                    judge=row,
                    sample=0,
                    label=positive if outcome.passed else negative,
                    explanation=outcome.explanation,
                    confidence=outcome.score,
                    source_name=f"baseline {baseline.model}",
                )
            )
        Verdict.objects.bulk_create(verdicts, batch_size=1000)
        project_data_touch(project)
    return BaselineResult(row.name, len(verdicts), len(done), skipped, passed)
