"""Judges and their runs over the API, with the judge page's rules: project admins only; a
save goes through the page's form and makes a new version only when something changed; a run
on held-out items needs `confirm_held_out`, and is queued for the task worker."""

from __future__ import annotations

from django.http import Http404, HttpRequest
from django.shortcuts import get_object_or_404
from evalsite_client.models import Judge as JudgeOut
from evalsite_client.models import JudgeIn, RunIn
from evalsite_client.models import Run as RunOut
from ninja import Router, Status
from ninja.errors import HttpError

from evalsite.api_errors import ErrorOut
from judging.forms import JudgeForm, RunForm
from judging.models import Run
from judging.reports.api_rows import (
    judge_document,
    judge_versions,
    run_document,
    runs_documents,
)
from judging.selectors import judge_config, judge_configs, project_runs
from judging.services.judges.configs import JudgeConfigError, JudgeSettings, judge_config_save
from judging.services.runs.control import RunError, run_cancel, run_create, run_resume
from judging.tasks import run_enqueue
from reviews.access import project_for_user
from reviews.models import Role

router = Router(tags=["judges and runs"])
_ERRORS = {401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}


def _admin(request, slug):
    return project_for_user(request.auth, slug, roles=[Role.ADMIN]).project


def _form_errors(form) -> str:
    return "; ".join(
        f"{field}: {error}" if field != "__all__" else error
        for field, errors in form.errors.items()
        for error in errors
    )


@router.get("/{slug}/judges", response={200: list[JudgeOut], **_ERRORS}, summary="The judges")
def judge_list(request: HttpRequest, slug: str):
    """Each judge with every version (provider, model, prompt and its SHA-256, criterion)."""
    project = _admin(request, slug)
    configs = judge_configs(project)
    versions = judge_versions(project)
    return [judge_document(c, versions) for c in configs]


@router.post(
    "/{slug}/judges",
    response={200: JudgeOut, 201: JudgeOut, **_ERRORS},
    summary="Save a judge (a new version when anything changed)",
)
def judge_save(request: HttpRequest, slug: str, payload: JudgeIn):
    """201 when a version was created, 200 when nothing changed. The endpoint's host is
    checked as on the page (no private addresses)."""
    project = _admin(request, slug)
    data = payload.model_dump()
    form = JudgeForm({**data, "criterion": data["criterion"] or ""}, project=project)
    if not form.is_valid():
        raise HttpError(422, _form_errors(form))
    settings = JudgeSettings.of(form.cleaned_data, criterion=form.cleaned_data["criterion"] or None)
    try:
        result = judge_config_save(
            project=project, name=form.cleaned_data["name"], settings=settings, actor=request.auth
        )
    except JudgeConfigError as exc:
        raise HttpError(422, str(exc)) from None
    versions = judge_versions(project, config=result.config)
    return Status(201 if result.created else 200, judge_document(result.config, versions))


@router.get("/{slug}/judges/{name}", response={200: JudgeOut, **_ERRORS}, summary="One judge")
def judge_detail(request: HttpRequest, slug: str, name: str):
    project = _admin(request, slug)
    config = judge_config(project, name)
    if config is None:
        raise Http404("No such judge.")
    return judge_document(config, judge_versions(project, config=config))


@router.post(
    "/{slug}/judges/{name}/runs",
    response={201: RunOut, **_ERRORS},
    summary="Start a run (queued for the task worker)",
)
def run_start(request: HttpRequest, slug: str, name: str, payload: RunIn):
    project = _admin(request, slug)
    config = judge_config(project, name)
    if config is None:
        raise Http404("No such judge.")
    form = RunForm({k: v for k, v in payload.model_dump().items() if v is not None})
    if not form.is_valid():
        raise HttpError(422, _form_errors(form))
    try:
        run = run_create(config=config, actor=request.auth, from_site=True, **form.cleaned_data)
    except RunError as exc:
        raise HttpError(422, str(exc)) from None
    run_enqueue(run)
    return Status(201, run_document(_run(project, run.pk)))


def _run(project, pk: int) -> Run:
    return get_object_or_404(project_runs(project), pk=pk)


@router.get("/{slug}/runs", response={200: list[RunOut], **_ERRORS}, summary="Every run")
def run_list(request: HttpRequest, slug: str):
    """Oldest first, with progress and cost (each call at the price in force when made)."""
    return runs_documents(_admin(request, slug))


@router.get("/{slug}/runs/{int:pk}", response={200: RunOut, **_ERRORS}, summary="One run")
def run_status(request: HttpRequest, slug: str, pk: int):
    return run_document(_run(_admin(request, slug), pk))


@router.post("/{slug}/runs/{int:pk}/cancel", response={200: RunOut, **_ERRORS},
             summary="Cancel a run (the calls in flight finish)")  # fmt: skip
def run_stop(request: HttpRequest, slug: str, pk: int):
    run = _run(_admin(request, slug), pk)
    run_cancel(run, actor=request.auth)
    return run_document(_run(run.project, pk))


@router.post("/{slug}/runs/{int:pk}/resume", response={200: RunOut, **_ERRORS},
             summary="Resume a stopped run (only the missing calls are made)")  # fmt: skip
def run_continue(request: HttpRequest, slug: str, pk: int):
    run = _run(_admin(request, slug), pk)
    try:
        run = run_resume(run, actor=request.auth)
    except RunError as exc:
        raise HttpError(422, str(exc)) from None
    run_enqueue(run)
    return run_document(_run(run.project, pk))
