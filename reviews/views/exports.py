"""Export approved ground truth from the browser (admins and approvers): one .zip per format,
which `manage.py verify_approval` reads as it is downloaded; and every row of one kind (admins),
as CSV, JSONL or Parquet: streamed, or past EXPORT_INLINE_MAX rows a background job's file.
The .zip of more than GROUND_TRUTH_INLINE_MAX approved items is a background job's file too."""

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from reviews.access import EXPORTERS, project_for_user
from reviews.forms_inputs import GroundTruthExportForm, RowExportForm
from reviews.models import Role
from reviews.reports.exports import EXPORT_FORMATS, NothingToExport
from reviews.selectors import approved_more_than
from reviews.selectors_rows import RowExportError, rows_export, rows_more_than
from reviews.services.jobs.exports import (
    EXPORT_INLINE_MAX,
    GROUND_TRUTH_INLINE_MAX,
    ground_truth_export_start,
    ground_truth_zip,
    rows_export_start,
)


@require_POST  # it writes an `exported` event per item
def project_export(request, slug):
    """The .zip from the request up to GROUND_TRUTH_INLINE_MAX approved items; past it a
    background job writes the file, and its page offers it (`job_download`)."""
    access = project_for_user(request.user, slug, roles=EXPORTERS)
    form = GroundTruthExportForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Choose a format: {', '.join(EXPORT_FORMATS)}.")
        return redirect("project_home", slug)
    if approved_more_than(access.project, GROUND_TRUTH_INLINE_MAX):
        back = reverse("project_home", args=[slug])
        job = ground_truth_export_start(
            actor=request.user, project=access.project, form=form, back=back
        )
        return redirect("job", slug, job.pk)
    format = form.cleaned_data["format"]
    try:
        content = ground_truth_zip(actor=request.user, project=access.project, format=format)
    except NothingToExport as nothing:
        messages.error(request, f"{str(nothing).capitalize()}.")
        return redirect("project_home", slug)
    response = HttpResponse(content, content_type="application/zip")
    name = f"{access.project.slug}-ground-truth-{format}.zip"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@require_safe
def row_export(request, slug):
    """Streamed from the request up to EXPORT_INLINE_MAX rows; past it a background job writes
    the file, and its page offers it (`reviews/views/jobs.py: job_download`)."""
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    form = RowExportForm(request.GET)
    if not form.is_valid():
        messages.error(request, "Row export: choose a kind and a format.")
        return redirect("project_home", slug)
    if rows_more_than(
        project=access.project, kind=form.cleaned_data["kind"], limit=EXPORT_INLINE_MAX
    ):
        back = reverse("project_home", args=[slug])
        job = rows_export_start(actor=request.user, project=access.project, form=form, back=back)
        return redirect("job", slug, job.pk)
    try:
        export = rows_export(actor=request.user, project=access.project, **form.cleaned_data)
    except RowExportError as error:
        messages.error(request, f"Row export: {error}.")
        return redirect("project_home", slug)
    return export.response(access.project.slug)
