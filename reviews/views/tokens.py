"""The user's own API tokens: create (secret shown once), list, revoke."""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from reviews.models import ApiToken
from reviews.services.tokens import token_create, token_revoke


@require_http_methods(["GET", "POST"])
def api_tokens(request):
    new_secret = None
    if request.method == "POST":
        _, new_secret = token_create(actor=request.user, name=request.POST.get("name", ""))
    tokens = ApiToken.objects.filter(user=request.user)
    return render(request, "reviews/api_tokens.html", {"tokens": tokens, "new_secret": new_secret})


@require_POST
def api_token_revoke(request, pk):
    if token_revoke(actor=request.user, token_pk=pk):
        messages.success(request, "Token revoked.")
    else:
        messages.error(request, "No such active token.")
    return redirect("api_tokens")
