"""Batch approval: select resolved items (or all waiting), see the diff summary, re-enter the
password once; each item is still approved and signed on its own."""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from reviews.access import project_for_user
from reviews.forms_items import ApprovalBatchForm
from reviews.models import Role
from reviews.reauth import approval_reauth, password_checker
from reviews.services.approval.approve import STATEMENT, ApprovalRefused
from reviews.services.approval.batch import approval_batch_record, approval_waiting, batch_preview


@never_cache
@require_POST
def approval_batch(request, slug):
    access = project_for_user(request.user, slug, roles=[Role.APPROVER])
    form = ApprovalBatchForm(request.POST, waiting=approval_waiting(access.project))
    if not form.is_valid():
        messages.error(request, "Some selected items are no longer waiting for approval.")
        return redirect("approval_queue", slug)
    items = form.items()
    if not items:
        messages.error(request, "Select the items to approve.")
        return redirect("approval_queue", slug)
    context = {
        "access": access,
        "project": access.project,
        "statement": STATEMENT,
        "reauth": approval_reauth(request, reverse("approval_queue", args=[slug])),
    }
    if form.cleaned_data["sign"]:
        try:
            result = approval_batch_record(
                actor=request.user,
                items=items,
                password=form.cleaned_data["password"],
                confirmed=form.cleaned_data["confirm"],
                password_check=password_checker(request, request.user),
                shown=form.shown(items),
            )
        except ApprovalRefused as error:
            messages.error(request, str(error))
        else:
            return render(
                request, "reviews/approval_batch_done.html", {**context, "result": result}
            )
    lines = batch_preview(items, request.user)
    return render(
        request,
        "reviews/approval_batch.html",
        {**context, "lines": lines, "approvable": sum(not line.refused for line in lines)},
    )
