"""The one shape of a settings post: a form, one service call, a message, a redirect."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect

from reviews.forms import errors_text


def post_then_redirect(
    request,
    form,
    act: Callable[..., str],
    refusals: tuple[type[Exception], ...],
    *,
    failed: str,
    to: tuple,
) -> HttpResponse:
    """Call `act(**form.cleaned_data)` when the form is valid; what it returns is the success
    message. Invalid input, or a refusal the service raises, becomes an error message that
    starts with `failed` and changes nothing. Then redirect to `to` (a url name and args)."""
    if not form.is_valid():
        messages.error(request, f"{failed}: {errors_text(form)}")
    else:
        try:
            done = act(**form.cleaned_data)
        except refusals as error:
            messages.error(request, f"{failed}: {error}.")
        else:
            messages.success(request, done)
    return redirect(*to)
