"""Project admins set up calibration from the dashboard: draw the split, send items to humans."""

from django.views.decorators.http import require_POST

from evalsite.posting import post_then_redirect
from judging.forms import SendToHumansForm, SplitDrawForm
from judging.services.calibration.send_to_humans import SendError, items_send_to_humans
from judging.services.calibration.splits import SplitError, split_draw
from reviews.access import project_for_user
from reviews.models import Role


@require_POST
def draw_split(request, slug):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])

    def draw(**data) -> str:
        drawn = split_draw(actor=request.user, project=access.project, **data)
        held = drawn.assignments.filter(split="held_out").count()
        return f"Split drawn with seed {data['seed']}: {held} held-out items."

    form = SplitDrawForm(request.POST)
    to = ("project_dashboard", slug)
    return post_then_redirect(
        request, form, draw, (SplitError,), failed="Split not drawn", to=to, keep="split"
    )


@require_POST
def send_items_to_humans(request, slug):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])

    def send(**data) -> str:
        result = items_send_to_humans(actor=request.user, project=access.project, **data)
        noun = "question" if result.questions_created == 1 else "questions"
        return (
            f"{result.questions_created} new {data['criterion'].name} {noun} in the review "
            f"queue ({result.questions_existing} were there already)."
        )

    form = SendToHumansForm(request.POST, project=access.project)
    to = ("project_dashboard", slug)
    return post_then_redirect(
        request, form, send, (SendError,), failed="Nothing sent", to=to, keep="send"
    )
