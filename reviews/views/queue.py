"""My queue: what waits for me in each project, and "Start" to claim the next item.

Claiming is a POST: a crawler or a link preview following a URL must never reserve work.
"""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from reviews.access import project_for_user
from reviews.models import Role
from reviews.selectors_queues import my_work
from reviews.services.assignment.queue import assignment_claim_next


@require_safe
def my_queue(request):
    return render(request, "reviews/my_queue.html", {"work": my_work(user=request.user)})


@require_POST
def review_next(request, slug):
    access = project_for_user(request.user, slug, roles=[Role.RATER])
    assignment = assignment_claim_next(rater=request.user, project=access.project)
    if assignment is None:
        messages.info(request, f"Nothing is waiting for you in {access.project.name}.")
        return redirect("my_queue")
    return redirect("review_item", slug, assignment.item_id)
