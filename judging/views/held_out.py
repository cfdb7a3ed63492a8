"""Showing held-out figures is an explicit, logged act (a POST), never a side effect of a GET.

Pages with held-out figures (the dashboard and its criterion, disagreement, failure and item
pages, the report and chart downloads) hide them until the reader presses *Show held-out
figures*; that POST leaves the `HeldOutAccess` row and remembers the choice for the project in
the reader's session, so the pages themselves only read.
"""

from __future__ import annotations

from django.http import HttpResponseRedirect
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from judging.forms import HeldOutShowForm
from judging.services.calibration.splits import held_out_access_log
from reviews.access import OVERSEERS, project_for_user

SESSION_KEY = "held_out_shown"  # project pks whose held-out figures this session asked to see


def held_out_shown(request, project) -> bool:
    return project.pk in request.session.get(SESSION_KEY, [])


@require_POST
def held_out_show(request, slug):
    access = project_for_user(request.user, slug, roles=OVERSEERS)
    form = HeldOutShowForm(request.POST)
    form.is_valid()  # both fields optional: the log says "held-out figures" without a page
    data = form.cleaned_data
    what = data.get("what") or "held-out figures"
    held_out_access_log(actor=request.user, project=access.project, what=what)
    shown = request.session.get(SESSION_KEY, [])
    if access.project.pk not in shown:
        request.session[SESSION_KEY] = [*shown, access.project.pk]
    target = data.get("next") or ""  # a path of this site; anything else: the dashboard
    here = {request.get_host()}
    if not target.startswith("/") or not url_has_allowed_host_and_scheme(target, here):
        return redirect("project_dashboard", slug)
    return HttpResponseRedirect(target)  # never `redirect()`: it reverses a bare word as a URL name
