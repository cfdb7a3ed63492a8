"""A background job's page (send to humans, split draws, dashboard recomputes, bulk actions over
many items, large row and ground-truth exports): the request that started it answers at once
with this page, which polls until the job ends and then offers an export's file. Who sees a
job is who may start its kind (its `roles`: project admins, and approvers too for the
ground-truth export)."""

from django.core.files.storage import default_storage
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_safe

from reviews.access import project_for_user, require_role
from reviews.models import Role
from reviews.selectors_admin import project_jobs
from reviews.services.jobs.exports import export_file, export_filename
from reviews.services.jobs.progress import job_progress, job_stalled
from reviews.services.jobs.registry import KINDS


def _job_for_user(user, slug: str, job_id: int):
    """(access, job, its kind): 404 for someone outside the project or a job not in it, 403
    without one of the kind's roles (an unknown kind's: project admins)."""
    access = project_for_user(user, slug)
    job = get_object_or_404(project_jobs(access.project), pk=job_id)
    kind = KINDS.get(job.kind)
    require_role(access, kind.roles if kind else [Role.ADMIN])
    return access, job, kind


@require_safe
def job_detail(request, slug, job_id):
    access, job, kind = _job_for_user(request.user, slug, job_id)
    done, total = job_progress(job)
    template = "reviews/job.html#job-progress" if request.htmx else "reviews/job.html"
    return render(
        request,
        template,
        {
            "access": access,
            "project": access.project,
            "job": job,
            "label": kind.label if kind else job.kind,
            "done": done,
            "total": total,
            "stalled": job_stalled(job),
            "back": job.params.get("back", ""),
            "download": bool(export_file(job)),
        },
    )


@require_safe
def job_download(request, slug, job_id):
    """A finished export job's file, for whoever may make that export (the kind's roles): the
    stored file has no address of its own, only this view serves it."""
    access, job, _ = _job_for_user(request.user, slug, job_id)
    name = export_file(job)
    if not name:
        raise Http404("This job has no file to download.")
    return FileResponse(
        default_storage.open(name, "rb"),
        as_attachment=True,
        filename=export_filename(job, access.project.slug),
    )
