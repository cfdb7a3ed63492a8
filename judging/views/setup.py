"""Project admins set up calibration from the dashboard: draw the split, send items to humans.
Both run as background jobs (reviews' Job): the post answers with the job's page."""

from django.urls import reverse
from django.views.decorators.http import require_POST

from evalsite.posting import post_then_job
from judging.forms import SendToHumansForm, SplitDrawForm
from reviews.access import project_for_user
from reviews.models import Role
from reviews.services.jobs.records import job_start


def _job_page(request, project, kind: str):
    back = reverse("project_dashboard", args=[project.slug])

    def start(form) -> str:
        job = job_start(kind=kind, actor=request.user, project=project, form=form, back=back)
        return reverse("job", args=[project.slug, job.pk])

    return start


@require_POST
def draw_split(request, slug):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    form = SplitDrawForm(request.POST, project=access.project)
    start = _job_page(request, access.project, "split_draw")
    return post_then_job(
        request, form, start, failed="Split not drawn", to=("project_dashboard", slug), keep="split"
    )


@require_POST
def send_items_to_humans(request, slug):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    form = SendToHumansForm(request.POST, project=access.project)
    start = _job_page(request, access.project, "send_to_humans")
    return post_then_job(
        request, form, start, failed="Nothing sent", to=("project_dashboard", slug), keep="send"
    )
