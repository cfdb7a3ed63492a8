"""The user's own API tokens: create (secret shown once, with a lifetime), list, revoke."""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from reviews.forms import TokenForm
from reviews.selectors_admin import user_tokens
from reviews.services.projects.tokens import token_create, token_revoke


@never_cache  # the answer to making a token shows it: kept in no cache, nor by Back
@require_http_methods(["GET", "POST"])
def api_tokens(request):
    new_secret = None
    form = TokenForm(request.POST if request.method == "POST" else None)
    if form.is_valid():
        _, new_secret = token_create(
            actor=request.user,
            name=form.cleaned_data["name"],
            days=form.cleaned_data["lifetime"],
        )
        form = TokenForm()
    tokens = user_tokens(request.user)
    return render(
        request,
        "reviews/api_tokens.html",
        {"tokens": tokens, "new_secret": new_secret, "form": form, "now": timezone.now()},
    )


@require_POST
def api_token_revoke(request, pk):
    if token_revoke(actor=request.user, token_pk=pk):
        messages.success(request, "Token revoked.")
    else:
        messages.error(request, "No such active token.")
    return redirect("api_tokens")
