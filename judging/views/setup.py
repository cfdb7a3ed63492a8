"""Project admins set up calibration from the dashboard: draw the split, send items to humans."""

from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from judging.services.criteria import latest_criterion
from judging.services.send_to_humans import SELECTIONS, SendError, send_to_humans
from judging.services.splits import SplitError, split_draw
from reviews.access import project_for_user
from reviews.models import Role


def _number(value, kind=int):
    try:
        return kind(value)
    except (TypeError, ValueError):
        return None


@require_POST
def draw_split(request, slug):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    seed = _number(request.POST.get("seed"))
    fraction = _number(request.POST.get("held_out_fraction", "0.5"), float)
    if seed is None or fraction is None:
        messages.error(request, "Give a whole-number seed and a held-out fraction between 0 and 1.")
        return redirect("project_dashboard", slug)
    try:
        draw = split_draw(
            actor=request.user, project=access.project, seed=seed, held_out_fraction=fraction
        )
    except SplitError as error:
        messages.error(request, f"Split not drawn: {error}.")
    else:
        held = draw.assignments.filter(split="held_out").count()
        messages.success(request, f"Split drawn with seed {seed}: {held} held-out items.")
    return redirect("project_dashboard", slug)


@require_POST
def send_items_to_humans(request, slug):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    criterion = latest_criterion(project=access.project, name=request.POST.get("criterion", ""))
    selection = request.POST.get("selection", "")
    if criterion is None or selection not in SELECTIONS:
        messages.error(request, "Choose a criterion and which items to send.")
        return redirect("project_dashboard", slug)
    try:
        result = send_to_humans(
            actor=request.user,
            project=access.project,
            criterion=criterion,
            selection=selection,
            n=_number(request.POST.get("n")),
            seed=_number(request.POST.get("seed")),
        )
    except SendError as error:
        messages.error(request, f"Nothing sent: {error}.")
    else:
        messages.success(
            request,
            f"{result.questions_created} new {criterion.name} question(s) in the review "
            f"queue ({result.questions_existing} were there already).",
        )
    return redirect("project_dashboard", slug)
