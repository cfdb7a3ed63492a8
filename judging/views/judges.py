"""Judges run from Evalsite: their page (versions side by side, edit, run) and live runs."""

from django.contrib import messages
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from judging.forms import JudgeForm, ResumeForm, RunForm
from judging.models import JudgeConfig
from judging.presenters import run_charts
from judging.reports.judge_page import compare_defaults, version_rows
from judging.selectors import judge_config, judge_rows, judge_runs, latest_version, project_runs
from judging.services.judges.configs import (
    JUDGED_SETTINGS,
    JudgeConfigError,
    JudgeSettings,
    judge_config_save,
)
from judging.services.runs.control import (
    RunError,
    run_cancel,
    run_create,
    run_progress,
    run_resume,
)
from judging.tasks import run_enqueue
from reviews.access import project_for_user
from reviews.models import Role


def _config(request, slug, name):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    config = judge_config(access.project, name)
    if config is None:
        raise Http404("no such judge")
    return access, config


def _initial(config: JudgeConfig) -> dict:
    latest = latest_version(config)
    initial = {"name": config.name}
    if latest:
        initial |= {name: getattr(latest, name) for name in JUDGED_SETTINGS} | {
            "criterion": latest.criterion.name if latest.criterion else "",
            "prompt": latest.prompt,
        }
    return initial


def _list(request, project, form, status=200):
    context = {"project": project, "judges": judge_rows(project), "form": form}
    return render(request, "judging/judges.html", context, status=status)


def _page(request, project, config, form, status=200):
    runs = judge_runs(config)
    context = {
        "project": project,
        "config": config,
        "rows": version_rows(config),
        "compare": compare_defaults(config),
        "form": form,
        "run_form": RunForm(),
        "resume_form": ResumeForm(),
        "runs": runs,
        "charts": run_charts(runs),
    }
    return render(request, "judging/judge.html", context, status=status)


@require_safe
def judge_list(request, slug):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    return _list(request, access.project, JudgeForm(project=access.project))


@require_safe
def judge_page(request, slug, name):
    access, config = _config(request, slug, name)
    form = JudgeForm(initial=_initial(config), project=access.project)
    return _page(request, access.project, config, form)


@require_POST
def judge_save(request, slug):
    """Save a judge (a new version when anything changed). A refused save shows the same
    page again with everything typed still in the form and the reason beside it."""
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    form = JudgeForm(request.POST, project=access.project)
    if form.is_valid():
        data = form.cleaned_data
        settings = JudgeSettings.of(
            data,
            prompt=data["prompt"].replace("\r\n", "\n"),
            criterion=data["criterion"] or None,
        )
        try:
            result = judge_config_save(
                project=access.project, name=data["name"], settings=settings, actor=request.user
            )
        except JudgeConfigError as exc:
            form.add_error(None, str(exc))
        else:
            version = result.version
            messages.success(
                request,
                f"Saved v{version.number} (prompt SHA-256 {version.prompt_sha256})"
                if result.created
                else f"Nothing changed: still v{version.number}.",
            )
            return redirect("judge_page", slug, result.config.name)
    messages.error(request, "Not saved: " + "; ".join(_errors(form)))
    name = form["name"].value() or ""
    config = judge_config(access.project, name)
    if config is not None:
        return _page(request, access.project, config, form, status=400)
    return _list(request, access.project, form, status=400)


def _errors(form) -> list[str]:
    return [
        f"{field}: {error}" if field != "__all__" else error
        for field, errors in form.errors.items()
        for error in errors
    ]


@require_POST
def run_start(request, slug, name):
    access, config = _config(request, slug, name)
    form = RunForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Not started: " + "; ".join(_errors(form)))
        return redirect("judge_page", slug, name)
    try:
        run = run_create(config=config, actor=request.user, from_site=True, **form.cleaned_data)
    except RunError as exc:
        messages.error(request, f"Not started: {exc}.")
        return redirect("judge_page", slug, name)
    run_enqueue(run)
    messages.success(request, f"Run {run.pk} of v{run.version.number} on {run.split} queued.")
    return redirect("judge_page", slug, name)


def _run(request, slug, pk):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    return get_object_or_404(project_runs(access.project), pk=pk)


@require_safe
def run_status(request, slug, pk):
    run = _run(request, slug, pk)
    if not request.htmx:  # opened as a page, not polled: the run's card on its judge's page
        page = reverse("judge_page", args=[slug, run.version.config.name])
        return redirect(f"{page}#run-{run.pk}")
    return render(
        request, "judging/judge.html#run-progress", {"p": run_progress(run), "project": run.project}
    )


@require_POST
def run_stop(request, slug, pk):
    run = _run(request, slug, pk)
    run_cancel(run, actor=request.user)
    run.refresh_from_db()
    return render(
        request, "judging/judge.html#run-progress", {"p": run_progress(run), "project": run.project}
    )


@require_POST
def run_continue(request, slug, pk):
    run = _run(request, slug, pk)
    form = ResumeForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Not resumed: " + "; ".join(_errors(form)))
        return redirect("judge_page", slug, run.version.config.name)
    try:
        run = run_resume(run, actor=request.user, budget_usd=form.cleaned_data["budget_usd"])
    except RunError as exc:
        messages.error(request, f"Not resumed: {exc}.")
    else:
        run_enqueue(run)
    return redirect("judge_page", slug, run.version.config.name)
