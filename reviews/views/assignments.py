"""Project admin: pre-assigned batches and each rater's progress."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from reviews.access import project_for_user
from reviews.forms import BatchForm
from reviews.models import Role
from reviews.selectors_admin import has_raters, project_raters, project_slices, recent_batches
from reviews.services.assignment.batches import batch_create, rater_progress


@require_http_methods(["GET", "POST"])
def assignments(request, slug):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    project = access.project
    raters = project_raters(project)
    form = BatchForm(request.POST if request.method == "POST" else None, raters=raters)
    if request.method == "POST" and form.is_valid():
        try:
            batch = batch_create(actor=request.user, project=project, **form.batch_arguments())
        except ValidationError as error:
            form.add_error(None, error)  # shown above the form, which keeps what was chosen
        else:
            messages.success(request, _created_message(batch))
            return redirect("assignments", slug)
    return render(
        request,
        "reviews/assignments.html",
        {
            "access": access,
            "project": project,
            "raters": raters,
            "form": form,
            "chosen_raters": [str(pk) for pk in (form["raters"].value() or [])],
            "slices": project_slices(project),
            "progress": rater_progress(project),
            "batches": recent_batches(project),
            "has_raters": has_raters(project),
        },
    )


def _created_message(batch) -> str:
    n = batch.assignments.count()
    kept = batch.selection.get("kept_overlap", [])
    gold = batch.selection.get("gold", 0)
    message = f"Batch {batch.name}: {n} assignment{'s' * (n != 1)} created"
    if gold:
        message += f", {gold} of them gold check{'s' * (gold != 1)} mixed in blind"
    message += "."
    if kept:
        message += (
            f" {len(kept)} item{'s' * (len(kept) != 1)} already in progress kept the overlap"
            " their raters were assigned under."
        )
    return message
