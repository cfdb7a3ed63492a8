"""Project admin: webhooks (add, list, disable) and each hook's delivery log."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from reviews.access import project_for_user
from reviews.forms_webhooks import WebhookForm
from reviews.models import Role, Webhook
from reviews.selectors_webhooks import project_webhooks, webhook_deliveries
from reviews.services.webhooks.deliver import REPLAY_WINDOW_SECONDS, SIGNATURE_HEADER
from reviews.services.webhooks.hooks import (
    SETTING,
    webhook_create,
    webhook_disable,
    webhook_hosts_allowed,
)


@never_cache  # the answer to adding a hook shows its secret: kept in no cache, nor by Back
@require_http_methods(["GET", "POST"])
def webhooks(request, slug):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    project = access.project
    form = WebhookForm(request.POST if request.method == "POST" else None)
    created = None
    if form.is_valid():
        hook, secret = webhook_create(
            actor=request.user,
            project=project,
            url=form.cleaned_data["url"],
            events=form.cleaned_data["events"],
        )
        created = {"hook": hook, "secret": secret}
        form = WebhookForm()
    return render(
        request,
        "reviews/webhooks.html",
        {
            "access": access,
            "project": project,
            "form": form,
            "created": created,
            "hooks": project_webhooks(project),
            "allowed": webhook_hosts_allowed(),
            "setting": SETTING,
            "header": SIGNATURE_HEADER,
            "window": REPLAY_WINDOW_SECONDS,
        },
    )


@require_GET
def webhook_detail(request, slug, hook_pk):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    hook = get_object_or_404(Webhook, project=access.project, pk=hook_pk)
    return render(
        request,
        "reviews/webhook_detail.html",
        {
            "access": access,
            "project": access.project,
            "hook": hook,
            "deliveries": webhook_deliveries(hook),
        },
    )


@require_POST
def webhook_disable_view(request, slug, hook_pk):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    if webhook_disable(actor=request.user, project=access.project, hook_pk=hook_pk):
        messages.success(request, "Webhook disabled: nothing more is sent to it.")
    else:
        messages.error(request, "No such active webhook.")
    return redirect("webhooks", slug)
