"""pass@k over a project's items (`manage.py pass_at_k`, the *pass@k* page): items that share
`metadata[GROUP_BY]` are samples of one case; a sample passes when its label is the
criterion's positive label. The label is the final human label (`labels.final_labels`) or, with
`judge`, that judge version's label (its samples' vote, as in the agreement report). The
estimator and its caveats: `judging.metrics.pass_at_k`, docs/scoring.md.

Left out and counted: items without the metadata key (`items_without_key`), samples without a
label (`unlabelled_samples`: no final human label, tied human labels, not judged or tied
judge samples) and cases with fewer labelled samples than the largest k (`excluded_cases`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from judging.metrics.pass_at_k import pass_at_k_figures
from judging.models import Criterion, Verdict
from judging.reports.agreement.build import judge_votes
from judging.reports.agreement.inputs import JudgeSamples
from judging.reports.item_scope import scoped_items
from judging.reports.text_metrics import stat_text
from judging.selectors_labels import final_labels
from judging.services.judges.refs import JudgeRef, JudgeRefError, judge_ref_resolve
from reviews.models import Project

N_RESAMPLES = 2000
CI_LEVEL = 0.95


class PassAtKError(ValueError):
    """pass@k cannot be measured as asked (a clear, user-facing reason)."""


def _criterion(project: Project, name: str) -> Criterion:
    found = Criterion.objects.filter(project=project, name=name).order_by("-created_at").first()
    if found is None:
        raise PassAtKError(f"no criterion {name!r} in project {project.slug!r}")
    if not found.positive_label:
        raise PassAtKError(
            f"criterion {name!r} has no positive label: pass@k needs to know what passes"
        )
    return found


def _judge_labels(ref: JudgeRef, criterion: Criterion, items: QuerySet) -> dict[int, str]:
    """Item pk -> the judge version's label: its current samples (up to the version's number of
    samples) vote; a tie gives no label."""
    verdicts = Verdict.objects.current().filter(
        criterion=criterion, judge=ref.judge, item__in=items
    )
    if ref.version is not None:
        verdicts = verdicts.filter(sample__lt=ref.version.samples)
    samples: dict[int, list[str]] = defaultdict(list)
    for item_id, label in verdicts.order_by("item_id", "sample").values_list("item_id", "label"):
        samples[item_id].append(label)
    judge = JudgeSamples(name=ref.ref, model_group="", configuration="", samples=samples)
    return judge_votes(judge, list(criterion.labels)).labels


def _labels(project, criterion, items, judge: str | None) -> tuple[dict[int, str], str]:
    if not judge:
        return final_labels(criterion=criterion, items=items).labels, "final human label"
    try:
        ref = judge_ref_resolve(project=project, ref=judge, criterion=criterion)
    except JudgeRefError as error:
        raise PassAtKError(str(error)) from None
    if ref.version is not None and ref.version.criterion_id != criterion.pk:
        raise PassAtKError(f"{ref.ref} judges another criterion (or version) than {criterion}")
    return _judge_labels(ref, criterion, items), f"judge {ref.ref}"


def _case_key(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def pass_at_k_report(
    *,
    actor,
    project: Project,
    criterion: str,
    ks: list[int],
    group_by: str,
    judge: str | None = None,
    split: str = "all",
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
    record_look: bool = True,
) -> dict[str, Any]:
    """`{"cases", "excluded_cases", "pass_at_k": {"K": {"value", "ci", ...}}, ...}`: every key
    in docs/scoring.md."""
    if not ks or min(ks) < 1:
        raise PassAtKError("--k must be a whole number of at least 1")
    found = _criterion(project, criterion)
    items = scoped_items(
        actor=actor,
        project=project,
        split=split,
        slice_name=None,
        what=f"pass@k, criterion {criterion}",
        record_look=record_look,
    )
    labels, labels_from = _labels(project, found, items, judge)
    samples: dict[str, list[bool]] = defaultdict(list)
    n_items = without_key = unlabelled = 0
    for pk, metadata in items.values_list("pk", "metadata"):
        n_items += 1
        if not isinstance(metadata, dict) or group_by not in metadata:
            without_key += 1
        elif pk not in labels:
            unlabelled += 1
        else:
            samples[_case_key(metadata[group_by])].append(labels[pk] == found.positive_label)
    names = sorted(samples)
    counts = [(len(samples[name]), sum(samples[name])) for name in names]
    figures = pass_at_k_figures(counts, ks, seed=seed, n_resamples=n_resamples)
    used = [name for name, (n, _) in zip(names, counts, strict=True) if n >= max(ks)]
    return {
        "project": project.slug,
        "criterion": found.name,
        "criterion_version": found.version,
        "positive_label": found.positive_label,
        "split": split,
        "group_by": group_by,
        "labels_from": labels_from,
        "k": sorted(set(ks)),
        "computed_at": timezone.now().strftime("%Y-%m-%dT%H:%M:%SZ"),
        "items": n_items,
        "items_without_key": without_key,
        "unlabelled_samples": unlabelled,
        "cases": figures["cases"],
        "excluded_cases": figures["excluded_cases"],
        "pass_at_k": figures["pass_at_k"],
        "idealised": figures["idealised"],
        "bootstrap": {
            "method": "percentile",
            "level": CI_LEVEL,
            "n_resamples": n_resamples,
            "seed": seed,
            "over": "cases",
        },
        "per_case": [
            {"case": name, "n": len(samples[name]), "passed": sum(samples[name]), **row}
            for name, row in zip(used, figures["per_case"], strict=True)
        ],
    }


def render_markdown(report: dict[str, Any]) -> str:
    boot = report["bootstrap"]
    lines = [
        f"# pass@k: {report['project']}, criterion {report['criterion']} "
        f"(version {report['criterion_version']})",
        "",
        f"Split {report['split']}. Samples of one case share `metadata.{report['group_by']}`; "
        f"a sample passes when its {report['labels_from']} is `{report['positive_label']}`. "
        f"{report['cases']} cases, {report['excluded_cases']} left out (fewer than "
        f"{max(report['k'])} labelled samples); {report['items_without_key']} items without the "
        f"key, {report['unlabelled_samples']} samples without a label.",
        "",
        f"pass@k: Chen et al.'s unbiased estimator averaged over cases, {boot['level']:.0%} "
        f"percentile bootstrap CI over cases ({boot['n_resamples']} resamples, seed "
        f"{boot['seed']}). Idealised: 1 - (1 - p)^k with p = pass@1, as if every attempt were "
        "independent and every case equally hard.",
        "",
        "| k | pass@k [95% CI] | idealised 1-(1-p)^k |",
        "|---|---|---|",
    ]
    for k, stat in report["pass_at_k"].items():
        ideal = report["idealised"][k]["value"]
        lines.append(f"| {k} | {stat_text(stat)} | {'-' if ideal is None else f'{ideal:.3f}'} |")
    return "\n".join([*lines, ""])
