"""Score runs: upload predictions, read per-field accuracy, pipeline graphs and failure contexts."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from judging.forms_inputs import ScoreCaseForm, ScoreRunFilterForm
from judging.forms_scoring import BaselineForm, ScoreUploadForm
from judging.models import ScoreRun
from judging.reports.attribution import CONTEXTS
from judging.reports.pipeline_graph import layout
from judging.reports.scoring.build import NO_CONTEXT
from judging.selectors import score_runs
from judging.services.runs.baseline import baseline_run
from judging.services.runs.baselines import BaselineError
from judging.services.scoring.claim_judge import ClaimJudgeError
from judging.services.scoring.claims_to_people import ClaimsToPeopleError, claims_to_people
from judging.services.scoring.score import predictions_score
from reviews.access import OVERSEERS, project_for_user
from reviews.formats.errors import FormatError
from reviews.models import Role
from reviews.services.imports.pipeline import ImportFailed

MAX_GRAPHS = 100  # pipeline graphs drawn per section; the tables list every record


def _list(request, access, form=None, baseline_form=None):
    runs = score_runs(access.project)
    if access.is_admin:
        form = form or ScoreUploadForm(project=access.project)
        baseline_form = baseline_form or BaselineForm(project=access.project)
    return render(
        request,
        "judging/scores.html",
        {
            "project": access.project,
            "access": access,
            "runs": runs[:50],
            "form": form,
            "baseline_form": baseline_form,
        },
    )


@require_safe
def score_list(request, slug):
    return _list(request, project_for_user(request.user, slug, roles=OVERSEERS))


@require_POST
def baseline_start(request, slug):
    """Label a criterion with a deterministic baseline judge; its verdicts join the dashboard."""
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    form = BaselineForm(request.POST, project=access.project)
    if form.is_valid():
        try:
            result = baseline_run(
                project=access.project,
                criterion=form.cleaned_data["criterion"],
                baseline=form.baseline_settings(),
                split=form.cleaned_data["split"],
            )
        except BaselineError as error:
            form.add_error(None, str(error))
        else:
            messages.success(
                request,
                f"{result.judge}: {result.written} verdicts written ({result.passed} passed), "
                f"{result.already} already labelled, {result.skipped} items without output or "
                "reference. Recompute the dashboard to see it beside the other judges.",
            )
            return redirect(reverse("score_list", args=[access.project.slug]) + "#baselines")
    return _list(request, access, baseline_form=form)


@require_POST
def score_upload(request, slug):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    form = ScoreUploadForm(request.POST, request.FILES, project=access.project)
    if form.is_valid():
        upload = form.cleaned_data["predictions"]
        try:
            run = predictions_score(
                actor=request.user,
                project=access.project,
                stream=upload,
                source_name=upload.name,
                allow_generated=form.cleaned_data["allow_generated"],
                comparison=form.cleaned_data["comparison"],
                claim_judge=form.cleaned_data["claim_judge"] or None,
            )
        except (FormatError, ClaimJudgeError) as error:
            form.add_error(None, str(error))
        else:
            return redirect("score_run", slug=access.project.slug, pk=run.pk)
    return _list(request, access, form=form)


def _section_view(section: dict, stage: str | None, context: str | None) -> dict:
    pipelines = [p for p in section["pipelines"] if any(s["stage_id"] for s in p["stages"])]
    cases = section["cases"]
    if stage is not None:
        cases = [c for c in cases if c["stage_id"] == stage]
    if context is not None:
        cases = [c for c in cases if (c["failure_context"] or NO_CONTEXT) == context]
    shown = {(c["case_id"], c["producer"]) for c in cases}
    pipelines = [p for p in pipelines if (p["case_id"], p["producer"]) in shown]
    measure = section["measure"]  # "accuracy" or, for a provisional reference, "agreement"
    return {
        **section,
        # Reports from before the headline have no "producers".
        "producer_rows": [{**p, "figure": p[measure]} for p in section.get("producers", [])],
        # No stage anywhere (one record a case): no stage column, no failure context.
        "has_stages": any(c["stage_id"] for c in section["cases"]),
        "field_rows": [{**f, "figure": f[measure]} for f in section["fields"]],
        "shown_cases": [{**c, "figure": c[f"field_{measure}"]} for c in cases],
        "graphs": [  # (pipeline, layout, a key for the SVG's element ids)
            (p, layout(p), f"{section['reference']}-{n}")
            for n, p in enumerate(pipelines[:MAX_GRAPHS])
        ],
        "graphs_left_out": max(0, len(pipelines) - MAX_GRAPHS),
    }


@require_safe
def score_run(request, slug, pk):
    access = project_for_user(request.user, slug, roles=OVERSEERS)
    run = get_object_or_404(ScoreRun, project=access.project, pk=pk)
    stage, context = ScoreRunFilterForm(request.GET).filters()
    sections = [_section_view(s, stage, context) for s in run.report["sections"]]
    return render(
        request,
        "judging/score_run.html",
        {
            "project": access.project,
            "access": access,
            "run": run,
            "report": run.report,
            "sections": sections,
            "contexts": [*CONTEXTS, NO_CONTEXT],
            "stage": stage,
            "context": context,
        },
    )


@require_safe
def score_case(request, slug, pk):
    """One case's records in a score run: field outcomes and the claim judge's decisions."""
    access = project_for_user(request.user, slug, roles=OVERSEERS)
    run = get_object_or_404(ScoreRun, project=access.project, pk=pk)
    case_id = ScoreCaseForm(request.GET).case_id()
    records = [
        {**case, "section_label": section["label"]}
        for section in run.report["sections"]
        for case in section["cases"]
        if case["case_id"] == case_id
    ]
    context = {"project": access.project, "run": run, "case_id": case_id, "records": records}
    return render(request, "judging/score_case.html", context)


@require_POST
def score_claims_send(request, slug, pk):
    """Send the run's claim decisions to people (items, the judge's verdicts, questions)."""
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    run = get_object_or_404(ScoreRun, project=access.project, pk=pk)
    try:
        reports = claims_to_people(actor=request.user, project=access.project, run=run)
    except (ClaimsToPeopleError, ImportFailed) as error:
        messages.error(request, str(error))
    else:
        summary = "; ".join(report.summary() for report in reports[1:])
        messages.success(request, f"Claim decisions sent to people: {summary}.")
    return redirect("score_run", slug=access.project.slug, pk=run.pk)
