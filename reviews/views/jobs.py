"""A background job's page (send to humans, split draws, bulk actions over many items): the
request that started it answers at once with this page, which polls until the job ends."""

from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_safe

from reviews.access import project_for_user
from reviews.models import Role
from reviews.selectors_admin import project_jobs
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
        },
    )
