"""The rater's review screen: evidence beside the item's open questions, autosaved answers.

After submitting, the same page is read-only (Back lands there), and while other raters are
still working on the item the rater may revise their answers (`?revise=1`)."""

from __future__ import annotations

from functools import partial

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe
from django_htmx.http import reswap, retarget

from reviews.access import item_for_user, project_for_user, question_for_user
from reviews.forms import AnswerChoiceForm
from reviews.forms_inputs import ReviewModeForm, SkipForm
from reviews.models import AssignmentStatus, ItemStatus, Role
from reviews.selectors import rater_workspace
from reviews.selectors_trail import item_trail
from reviews.services.assignment.queue import (
    QueueError,
    active_assignment,
    assignment_claim_next,
    assignment_skip,
    pairwise_orders,
    submitted_assignment,
)
from reviews.services.rating.answers import (
    AnswerError,
    NotAssigned,
    StaleAnswer,
    answer_autosave,
    item_submit_by_rater,
)
from reviews.views.viewer_context import viewer_context


def _no_claim(request, slug):
    messages.warning(
        request, "This item is not assigned to you any more (its lease may have expired)."
    )
    return redirect("my_queue")


def _rater_assignment(rater, item):
    """The claim being worked on, else the rater's submitted one (read-only, or revised)."""
    return active_assignment(rater=rater, item=item) or submitted_assignment(rater=rater, item=item)


@require_safe
@never_cache  # Back after submitting must ask again, and get the read-only page
def review_item(request, slug, item_pk):
    access, item = item_for_user(request.user, slug, item_pk, roles=[Role.RATER])
    assignment = _rater_assignment(request.user, item)
    if assignment is None:
        return _no_claim(request, slug)
    # A gold item stays open to its rater, like an item others are still working on.
    open_to_rater = item.status == ItemStatus.OPEN or assignment.gold
    if assignment.status == AssignmentStatus.ACTIVE:
        mode = "answer"
    else:
        revising = ReviewModeForm(request.GET).revising() and open_to_rater
        mode = "revise" if revising else "read"
    views = rater_workspace(
        rater=request.user,
        item=item,
        blind=access.project.blind,
        pairwise_orders=partial(pairwise_orders, assignment),
        settled=mode != "answer",
        gold=assignment.gold,
    )
    return render(
        request,
        "reviews/review.html",
        {
            "access": access,
            "project": access.project,
            "item": item,
            "assignment": assignment,
            "questions": views,
            "blind": access.project.blind,
            "mode": mode,
            "readonly": mode == "read",
            "can_revise": mode == "read" and open_to_rater,
            "trail": item_trail(assignment),
            **viewer_context(item, [(v.question, v.candidates) for v in views]),
        },
    )


@require_POST
def answer_save(request, slug, item_pk, question_pk):
    """Autosave one question's answer. 200: saved; 409: stale (newer state returned); 422: bad."""
    access, question = question_for_user(
        request.user, slug, item_pk, question_pk, roles=[Role.RATER]
    )
    item = question.item
    context = {"project": access.project, "item": item, "blind": access.project.blind}
    form = AnswerChoiceForm(request.POST, question=question)
    if not form.is_valid():
        return _status(
            request, context, question, state="failed", message=form.error_text(), status=422
        )
    try:
        answer = answer_autosave(
            actor=request.user,
            question=question,
            given=form.answer_input(),
            expected_seq=form.cleaned_data["expected_seq"] or 0,
        )
    except NotAssigned as error:
        return _status(request, context, question, state="failed", message=str(error), status=409)
    except StaleAnswer:
        assignment = _rater_assignment(request.user, item)
        return _stale(request, context, question, assignment, mine=form.posted())
    except AnswerError as error:
        return _status(request, context, question, state="failed", message=str(error), status=422)
    return _status(request, context, question, state="saved", seq=answer.seq, status=200)


def _status(request, context, question, *, state, status, message="", seq=None):
    return render(
        request,
        "reviews/review.html#answer-status",
        {**context, "question": question, "state": state, "message": message, "seq": seq},
        status=status,
    )


def _stale(request, context, question, assignment, *, mine: dict):
    """The newer state of the whole question card, with a notice that stays on it and the
    answer that lost (`mine`) one click away."""
    views = rater_workspace(
        rater=request.user,
        item=context["item"],
        blind=context["blind"],
        pairwise_orders=partial(pairwise_orders, assignment),
        settled=True,
        gold=assignment.gold,
    )
    view = next((v for v in views if v.question.pk == question.pk), None)
    response = render(
        request,
        "reviews/review.html#question-card",
        {**context, "q": view, "state": "stale", "mine": mine},
        status=409,
    )
    return reswap(retarget(response, f"#q-{question.pk}"), "outerHTML")


@require_POST
def item_submit(request, slug, item_pk):
    access = project_for_user(request.user, slug, roles=[Role.RATER])
    try:
        assignment = item_submit_by_rater(
            actor=request.user, project=access.project, item_pk=item_pk
        )
    except NotAssigned:
        item_for_user(request.user, slug, item_pk, roles=[Role.RATER])  # 404: not this project's
        return _no_claim(request, slug)
    except AnswerError as error:
        messages.error(request, str(error))
        return redirect("review_item", slug, item_pk)
    messages.success(request, f"Submitted {assignment.item}.")
    return _next(request, access.project)


@require_POST
def item_skip(request, slug, item_pk):
    access, item = item_for_user(request.user, slug, item_pk, roles=[Role.RATER])
    assignment = active_assignment(rater=request.user, item=item)
    if assignment is None:
        return _no_claim(request, slug)
    form = SkipForm(request.POST)
    form.is_valid()  # one optional text field: the queue service says what a reason needs
    try:
        assignment_skip(
            rater=request.user, assignment=assignment, reason=form.cleaned_data["reason"]
        )
    except QueueError as error:
        messages.error(request, str(error))
        return redirect("review_item", slug, item.pk)
    messages.info(request, f"Skipped {item}.")
    return _next(request, access.project)


def _next(request, project) -> HttpResponse:
    assignment = assignment_claim_next(rater=request.user, project=project)
    if assignment is None:
        messages.info(request, f"Nothing else is waiting for you in {project.name}.")
        return redirect("my_queue")
    return redirect("review_item", project.slug, assignment.item_id)
