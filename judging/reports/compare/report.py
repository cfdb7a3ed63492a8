"""Compare two judges or two versions of one, item by item (`manage.py compare_judges` and the
judge page's *Compare*): which items flipped, each side's agreement with people, and the
difference with a paired bootstrap interval; beside them, what changed between the two
configurations (settings, and the unified diff of the prompt templates).

The labels are gathered exactly as the agreement report gathers them (`criterion_input`), so
a version's row in the report and its side here count the same verdicts. Split: `all` by
default (every item both judged); reading `held_out` or `all` is a recorded look at held-out
items. With `record_look=False` (the page, whose *Show held-out figures* recorded the look)
nothing is written.
"""

from __future__ import annotations

import difflib
from typing import Any

from django.utils import timezone

from judging.models import Criterion, EvidenceMode
from judging.reports.agreement.build import N_RESAMPLES, SPLIT_LABELS
from judging.reports.agreement.inputs import CriterionInput, JudgeSamples
from judging.reports.agreement.report import criterion_input
from judging.reports.compare.build import judges_compare_build
from judging.services.calibration.splits import (
    SPLIT_CHOICES,
    current_draw,
    held_out_access_log,
    items_in_split,
    split_extend,
)
from judging.services.judges.refs import JudgeRef, JudgeRefError, judge_ref_resolve
from reviews.models import Project


class CompareError(ValueError):
    """The comparison cannot be made as asked; the message says which option and why."""


def _criterion(project: Project, name: str, refs: list[JudgeRef]) -> Criterion:
    versioned = {r.version.criterion for r in refs if r.version}
    for ref in refs:
        if ref.version and ref.version.criterion.name != name:
            raise CompareError(
                f"{ref.ref} judges criterion {ref.version.criterion.name!r}, not {name!r}"
            )
    if len(versioned) > 1:
        shown = " and ".join(f"{c.name} v{c.version}" for c in versioned)
        raise CompareError(f"the two judge different versions of the criterion ({shown})")
    if versioned:
        return versioned.pop()
    found = Criterion.objects.filter(project=project, name=name).order_by("-created_at").first()
    if found is None:
        raise CompareError(f"no criterion {name!r} in project {project.slug!r}")
    return found


def _resolve(project: Project, criterion: str, a: str, b: str) -> tuple[JudgeRef, JudgeRef]:
    named = Criterion.objects.filter(project=project, name=criterion).order_by("-created_at")
    latest = named.first()
    if latest is None:
        raise CompareError(f"--criterion: no criterion {criterion!r} in project {project.slug!r}")
    refs = []
    for option, ref in (("--a", a), ("--b", b)):
        try:
            refs.append(judge_ref_resolve(project=project, ref=ref, criterion=latest))
        except JudgeRefError as exc:
            raise CompareError(f"{option}: {exc}") from None
    if refs[0].ref == refs[1].ref and refs[0].judge.pk == refs[1].judge.pk:
        raise CompareError(f"--a and --b both name {refs[0].ref}: compare two different ones")
    return refs[0], refs[1]


def _side(data: CriterionInput, ref: JudgeRef) -> JudgeSamples:
    name = ref.version.config.name if ref.version else None
    number = ref.version.number if ref.version else None
    for judge in data.judges:
        same = (judge.judge_name, judge.judge_version) == (name, number)
        if same and judge.configuration == ref.judge.configuration:
            return judge
    return JudgeSamples(  # no verdict on this criterion at all: nothing judged
        name=ref.judge.name,
        model_group=ref.judge.model_group,
        configuration=ref.judge.configuration,
        samples={},
        judge_name=name,
        judge_version=number,
    )


def _settings(ref: JudgeRef, criterion: Criterion) -> dict[str, Any]:
    source = ref.version or ref.judge
    values = {
        "provider": source.provider,
        "model": source.model,
        "temperature": source.temperature,
        "samples": ref.version.samples if ref.version else None,
        "criterion": f"{criterion.name} v{criterion.version}",
        "prompt_sha256": source.prompt_sha256 or None,
        "evidence": sees(ref),
        "base_url": (ref.version.base_url or "default") if ref.version else None,
    }
    return values


def sees(ref: JudgeRef) -> str | None:
    """What the judge looked at: `text only`, `pages (at most N a call)`, `cited (...)`;
    None for imported verdicts (their files do not say)."""
    if ref.version is None:
        return None
    version = ref.version
    if version.evidence == EvidenceMode.NONE:
        return "text only"
    return f"{version.evidence} (at most {version.max_pages} a call)"


def configuration_diff(a: JudgeRef, b: JudgeRef, criterion: Criterion) -> dict[str, Any]:
    """What differs between the two: each setting side by side, and the prompt templates'
    unified diff (imported verdicts carry no template: only its fingerprint, if any)."""
    settings_a, settings_b = _settings(a, criterion), _settings(b, criterion)
    prompts = [ref.version.prompt if ref.version else None for ref in (a, b)]
    if None in prompts:
        diff, note = [], "imported verdicts carry no prompt template (only its SHA-256, if any)"
    else:
        diff = list(
            difflib.unified_diff(
                prompts[0].splitlines(),
                prompts[1].splitlines(),
                fromfile=a.ref,
                tofile=b.ref,
                lineterm="",
            )
        )
        note = None if diff else "the two prompt templates are identical"
    return {
        "settings": [
            {
                "setting": key,
                "a": settings_a[key],
                "b": settings_b[key],
                "changed": settings_a[key] != settings_b[key],
            }
            for key in settings_a
        ],
        "prompt_diff": diff,
        "prompt_note": note,
    }


def judges_compare(
    *,
    actor,
    project: Project,
    criterion: str,
    a: str,
    b: str,
    split: str = "all",
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
    record_look: bool = True,
) -> dict[str, Any]:
    """The comparison of `a` and `b` (each `NAME@VERSION` or an imported `provider/model`) on
    `criterion`, as documented in docs/agreement-report.md ("Comparing two judges")."""
    if split not in SPLIT_CHOICES:
        raise CompareError(f"--split: {split!r} is not one of {', '.join(SPLIT_CHOICES)}")
    ref_a, ref_b = _resolve(project, criterion, a, b)
    found = _criterion(project, criterion, [ref_a, ref_b])
    if split != "all" and current_draw(project) is None:
        raise CompareError(
            f"--split {split}: no split has been drawn for project {project.slug!r} "
            "(manage.py split_draw), so only --split all can be read"
        )
    if record_look:  # a page only reads: the dashboard's recompute draws late items in
        split_extend(project=project)
    items = items_in_split(project=project, split=split)
    names = dict(items.values_list("pk", "external_id"))
    data = criterion_input(found, items, names)
    if record_look and split in ("held_out", "all") and current_draw(project) is not None:
        what = f"compare {ref_a.ref} and {ref_b.ref}, criterion {criterion}, split {split}"
        held_out_access_log(actor=actor, project=project, what=what)
    result = judges_compare_build(
        data, _side(data, ref_a), _side(data, ref_b), seed=seed, n_resamples=n_resamples
    )
    result["a"]["evidence"], result["b"]["evidence"] = sees(ref_a), sees(ref_b)
    return {
        "project": project.slug,
        "split": split,
        "split_label": SPLIT_LABELS[split],
        "development_figures": split != "held_out",
        "computed_at": timezone.now().strftime("%Y-%m-%dT%H:%M:%SZ"),
        **result,
        **configuration_diff(ref_a, ref_b, found),
    }
