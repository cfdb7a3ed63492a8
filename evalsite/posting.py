"""The one shape of a settings post: a form, one service call, a message, a redirect; and a
bound form's errors on one line (`errors_text`: pages, messages and commands say them alike).

A refused post keeps what was typed: the values and each field's reason are kept in the session
under the form's `keep` name, and the page it redirects to shows the form again from them
(`refused_input`), with the reason beside the field, once."""

from __future__ import annotations

from collections.abc import Callable

from django import forms
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect


def errors_text(form: forms.Form) -> str:
    """Every error of a bound form on one line, each named by its field's label."""
    parts = []
    for field, errors in form.errors.items():
        label = form.fields[field].label or field.replace("_", " ") if field in form.fields else ""
        parts += [f"{label}: {error}" if label else str(error) for error in errors]
    return " ".join(parts)


def post_then_redirect(
    request,
    form,
    act: Callable[..., str],
    refusals: tuple[type[Exception], ...],
    *,
    failed: str,
    to: tuple,
    keep: str = "",
) -> HttpResponse:
    """Call `act(**form.cleaned_data)` when the form is valid; what it returns is the success
    message. Invalid input, or a refusal the service raises, becomes an error message that
    starts with `failed` and changes nothing. Then redirect to `to` (a url name and args)."""
    if not form.is_valid():
        _refused_form(request, form, failed, keep)
    else:
        try:
            done = act(**form.cleaned_data)
        except refusals as error:
            messages.error(request, f"{failed}: {error}.")
            keep_refused(request, keep, {"form": [f"{failed}: {error}."]})
        else:
            messages.success(request, done)
    return redirect(*to)


def post_then_job(
    request, form, start: Callable[..., str], *, failed: str, to: tuple, keep: str = ""
) -> HttpResponse:
    """`post_then_redirect` for a long operation: a valid form starts a background job
    (`start(form)` returns the job page's URL, where the service's own refusals are told);
    an invalid one goes back to `to` as a refused post does."""
    if not form.is_valid():
        _refused_form(request, form, failed, keep)
        return redirect(*to)
    return redirect(start(form))


def _refused_form(request, form, failed: str, keep: str) -> None:
    messages.error(request, f"{failed}: {errors_text(form)}")
    errors = {
        f.replace("__all__", "form"): [str(e) for e in errs] for f, errs in form.errors.items()
    }
    keep_refused(request, keep, errors)


def keep_refused(request, keep: str, errors: dict[str, list[str]]) -> None:
    """Keep what a refused post sent and why, for the page it redirects to (`refused_input`)."""
    if keep:
        values = {k: v for k, v in request.POST.items() if k != "csrfmiddlewaretoken"}
        request.session[f"refused:{keep}"] = {"values": values, "errors": errors}


def refused_input(request, keep: str) -> dict | None:
    """What a refused post under `keep` sent (`values`) and why (`errors`, by field; `form`
    for the form's own or the service's refusal), once; None when nothing was refused."""
    return request.session.pop(f"refused:{keep}", None)
