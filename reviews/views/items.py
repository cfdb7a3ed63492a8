"""Items seen from above: the list, one item with every rater's answers (adjudication),
its approval, and its timeline. Raters never come here: they see only their own work."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from evalsite.posting import errors_text, keep_refused, refused_input
from reviews.access import OVERSEERS, item_for_overseer, project_for_user
from reviews.forms import AnswerChoiceForm, ApprovalForm
from reviews.forms_inputs import CursorForm
from reviews.models import ItemStatus, Question, QuestionStatus, Role
from reviews.reauth import approval_reauth, password_checker
from reviews.selectors import (
    adjudication_panels,
    agreed_rows,
    first_question_to_decide,
    item_history,
    next_item_to_adjudicate,
)
from reviews.selectors_queues import adjudication_waiting, waiting_items_page
from reviews.services.approval.approve import (
    STATEMENT,
    ApprovalRefused,
    approval_blockers,
    approval_diff,
    approval_record,
    diff_fingerprint,
)
from reviews.services.approval.batch import approval_waiting
from reviews.services.approval.references import current_ground_truth
from reviews.services.rating.quality import is_gold
from reviews.services.rating.resolution import (
    ResolutionError,
    adjudication_blocker,
    adjudication_record,
)
from reviews.views.viewer_context import viewer_context


@require_safe
def item_detail(request, slug, item_pk):
    access, item = item_for_overseer(request.user, slug, item_pk, roles=OVERSEERS)
    page = _item_page(access, item)
    panels = page["panels"]
    focus = first_question_to_decide(panels)
    blocked = access.is_adjudicator and adjudication_blocker(
        project=access.project, item=item, user=request.user
    )
    return render(
        request,
        "reviews/item_detail.html",
        {
            **page,
            "can_adjudicate": access.is_adjudicator and not blocked,
            **_refused_decision(request),
            "adjudication_blocked": blocked,
            "can_approve": access.is_approver and not approval_blockers(item, request.user),
            "ground_truth": current_ground_truth(item),
            "agreed": agreed_rows(item),
            "is_gold": access.is_admin and is_gold(item),
            "focus_pk": focus.pk if focus else None,
            "to_decide": any(p.question.status == QuestionStatus.ADJUDICATION for p in panels),
            "next_item": (
                next_item_to_adjudicate(project=access.project, after=item, user=request.user)
                if access.is_adjudicator
                else None
            ),
        },
    )


def _refused_decision(request) -> dict:
    """A refused adjudication, to show again as typed beside its question: which question,
    the values and the reason it was refused (once)."""
    refused = refused_input(request, "adjudicate")
    if refused is None:
        return {}
    values = refused["values"]
    prefix, _, claim = values.get("choice", "").partition(":")
    return {
        "refused": refused,
        "refused_pk": int(values["question"]) if values.get("question", "").isdigit() else None,
        "refused_claim": int(claim) if prefix == "claim" and claim.isdigit() else None,
    }


def _item_page(access, item) -> dict:
    """What the adjudicate and approve pages both show: the questions' panels and evidence."""
    panels = adjudication_panels(item=item, show_names=access.project.show_rater_names)
    return {
        "access": access,
        "project": access.project,
        "item": item,
        "panels": panels,
        **viewer_context(item, [(p.question, p.candidates) for p in panels]),
    }


@require_POST
def question_adjudicate(request, slug, item_pk, question_pk):
    access, item = item_for_overseer(request.user, slug, item_pk, roles=[Role.ADJUDICATOR])
    question = get_object_or_404(Question, pk=question_pk, item=item)
    form = AnswerChoiceForm(request.POST, question=question, adjudicator=True)
    try:
        if not form.is_valid():
            raise ResolutionError(form.error_text())
        adjudication_record(
            actor=request.user,
            question=question,
            decision=form.cleaned_data["decision"],
            value=form.cleaned_data["answer_value"],
            reason=form.cleaned_data["reason"],
        )
    except ResolutionError as error:
        messages.error(request, f"{question.key}: {error}")
        keep_refused(request, "adjudicate", {"form": [str(error)]})  # shown again as typed
    else:
        messages.success(request, f"Decided {question.key}.")
    return redirect("item_detail", slug, item.pk)


@never_cache  # Back after approving must show the approved state, not a stale form
@require_http_methods(["GET", "POST"])
def item_approve(request, slug, item_pk):
    access, item = item_for_overseer(request.user, slug, item_pk, roles=[Role.APPROVER])
    form = ApprovalForm(request.POST if request.method == "POST" else None)
    if form.is_bound and not form.is_valid():
        messages.error(request, f"Not approved: {errors_text(form)}")
    elif form.is_bound:
        try:
            approval = approval_record(
                actor=request.user,
                item=item,
                password_check=password_checker(request, request.user),
                **form.approval_arguments(),
            )
        except ApprovalRefused as error:
            messages.error(request, str(error))
        else:
            messages.success(
                request,
                f"Approved {item}: ground truth v{approval.reference.version}, "
                f"signed with key {approval.key_id}.",
            )
            return redirect("item_detail", slug, item.pk)
    ground_truth = current_ground_truth(item)
    diff = approval_diff(item)
    return render(
        request,
        "reviews/item_approve.html",
        {
            **_item_page(access, item),
            "reauth": approval_reauth(request, request.path),
            "diff": diff,
            "shown": diff_fingerprint(diff),
            "blockers": approval_blockers(item, request.user),
            "statement": STATEMENT,
            "ground_truth": ground_truth,
            "approved": item.status == ItemStatus.APPROVED,
            "approval": getattr(ground_truth, "approval", None),
        },
    )


@require_safe
def item_timeline(request, slug, item_pk):
    access, item = item_for_overseer(request.user, slug, item_pk, roles=OVERSEERS)
    events, references = item_history(item)
    return render(
        request,
        "reviews/item_timeline.html",
        {
            "access": access,
            "project": access.project,
            "item": item,
            "events": events,
            "references": references,
        },
    )


@require_safe
def work_queue(request, slug, kind):
    """Items that need an adjudicator (kind=adjudication) or an approver (kind=approval)."""
    role, waiting = {
        "adjudication": (Role.ADJUDICATOR, adjudication_waiting),
        # Resolved items with a generated reference: nothing to approve without one.
        "approval": (Role.APPROVER, approval_waiting),
    }[kind]
    access = project_for_user(request.user, slug, roles=[role])
    items = waiting(access.project)
    page = waiting_items_page(items, cursor=CursorForm(request.GET).cursor())
    return render(
        request,
        "reviews/work_queue.html",
        {"access": access, "project": access.project, "kind": kind, "page": page},
    )
