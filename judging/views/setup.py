"""Project admins set up calibration from the dashboard: draw the split, send items to humans."""

from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from judging.forms import SendToHumansForm, SplitDrawForm
from judging.services.send_to_humans import SendError, items_send_to_humans
from judging.services.splits import SplitError, split_draw
from reviews.access import project_for_user
from reviews.forms import errors_text
from reviews.models import Role


@require_POST
def draw_split(request, slug):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    form = SplitDrawForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Split not drawn: {errors_text(form)}")
        return redirect("project_dashboard", slug)
    seed = form.cleaned_data["seed"]
    try:
        draw = split_draw(actor=request.user, project=access.project, **form.cleaned_data)
    except SplitError as error:
        messages.error(request, f"Split not drawn: {error}.")
    else:
        held = draw.assignments.filter(split="held_out").count()
        messages.success(request, f"Split drawn with seed {seed}: {held} held-out items.")
    return redirect("project_dashboard", slug)


@require_POST
def send_items_to_humans(request, slug):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    form = SendToHumansForm(request.POST, project=access.project)
    if not form.is_valid():
        messages.error(request, f"Nothing sent: {errors_text(form)}")
        return redirect("project_dashboard", slug)
    criterion = form.cleaned_data["criterion"]
    try:
        result = items_send_to_humans(
            actor=request.user, project=access.project, **form.cleaned_data
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
