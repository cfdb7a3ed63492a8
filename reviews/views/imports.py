"""Project admins upload files; large imports run in the background with live progress."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from reviews.access import project_for_user
from reviews.forms import ImportUploadForm
from reviews.models import ImportJob, Role
from reviews.selectors_admin import import_job_items, recent_import_jobs
from reviews.services.imports.job_progress import job_stalled, records_done
from reviews.services.imports.jobs import RetryRefused, import_job_retry, import_job_start
from reviews.services.imports.pipeline import count_rows, import_formats
from reviews.tasks import run_import_job

RECORD_KINDS = ("item", "criterion", "verdict", "human_label", "pairwise_verdict")


@require_http_methods(["GET", "POST"])
def import_upload(request, slug):
    """A refused upload shows the page again with what was chosen and the reason beside the
    file field (a browser never refills a file input: the reason names the file)."""
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    posted = request.method == "POST"
    form = ImportUploadForm(request.POST if posted else None, request.FILES if posted else None)
    if posted and form.is_valid():
        try:
            job = import_job_start(
                actor=request.user,
                project=access.project,
                upload=form.cleaned_data["uploads"],
                format=form.cleaned_data["format"],
                options=form.options(),
            )
        except ValidationError as error:
            form.add_error(None, error)
        else:
            transaction.on_commit(lambda: run_import_job.enqueue(job.pk))
            return redirect("import_job", slug, job.pk)
    jobs = recent_import_jobs(access.project)
    return render(
        request,
        "reviews/import_upload.html",
        {
            "access": access,
            "project": access.project,
            "jobs": jobs,
            "formats": import_formats(),
            "form": form,
            "kinds": RECORD_KINDS,
        },
    )


@require_safe
def import_job(request, slug, job_pk):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    job = get_object_or_404(ImportJob, pk=job_pk, project=access.project)
    template = (
        "reviews/import_job.html#import-progress" if request.htmx else "reviews/import_job.html"
    )
    items = import_job_items(access.project, job)
    return render(
        request,
        template,
        {
            "access": access,
            "project": access.project,
            "job": job,
            "done": records_done(job),
            "stalled": job_stalled(job),
            "counts": count_rows((job.report or {}).get("counts", {})),
            "items": items.only("pk", "external_id", "project_id"),
        },
    )


@require_POST
def import_job_retry_view(request, slug, job_pk):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    job = get_object_or_404(ImportJob, pk=job_pk, project=access.project)
    try:
        retry = import_job_retry(actor=request.user, job=job)
    except RetryRefused as refused:
        messages.error(request, str(refused))
        return redirect("import_job", slug, job.pk)
    transaction.on_commit(lambda: run_import_job.enqueue(retry.pk))
    return redirect("import_job", slug, retry.pk)
