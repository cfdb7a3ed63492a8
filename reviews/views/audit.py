"""The project's audit log, for its admins."""

from django.shortcuts import render
from django.views.decorators.http import require_safe

from reviews.access import project_for_user
from reviews.forms import AuditFilterForm
from reviews.models import Role
from reviews.selectors_audit import project_audit_page


@require_safe
def project_audit(request, slug):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    form = AuditFilterForm(request.GET)
    filters = form.filters()
    page = project_audit_page(access.project, **filters)
    kept = request.GET.copy()  # the filters, for the next page's link
    kept.pop("before", None)
    return render(
        request,
        "reviews/audit.html",
        {
            "access": access,
            "project": access.project,
            "form": form,
            "page": page,
            "filtered": kept.urlencode(),
            "paged": bool(filters["before"]),
        },
    )
