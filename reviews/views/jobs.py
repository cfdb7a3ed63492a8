"""A background job's page (send to humans, split draws, dashboard recomputes, bulk actions over
many items, large row exports): the request that started it answers at once with this page,
which polls until the job ends and then offers an export's file."""

from django.core.files.storage import default_storage
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_safe

from reviews.access import project_for_user
from reviews.models import Role
from reviews.selectors_admin import project_jobs
from reviews.services.jobs.exports import export_file
from reviews.services.jobs.progress import job_progress, job_stalled
from reviews.services.jobs.registry import KINDS


@require_safe
def job_detail(request, slug, job_id):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    job = get_object_or_404(project_jobs(access.project), pk=job_id)
    done, total = job_progress(job)
    kind = KINDS.get(job.kind)
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
    """A finished export job's file, for the project's admins (whoever may export these rows):
    the stored file has no address of its own, only this view serves it."""
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    job = get_object_or_404(project_jobs(access.project), pk=job_id)
    name = export_file(job)
    if not name:
        raise Http404("This job has no file to download.")
    extra = job.params.get("data", {})
    download = f"{access.project.slug}-{extra['kind'][0]}.{extra['format'][0]}"
    return FileResponse(default_storage.open(name, "rb"), as_attachment=True, filename=download)
