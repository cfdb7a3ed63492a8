"""Project admin: members and their roles."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from evalsite.posting import errors_text
from reviews.access import project_for_user
from reviews.forms import MemberAddForm
from reviews.forms_inputs import MemberRemoveForm
from reviews.models import Role
from reviews.selectors_admin import member_rows, project_members
from reviews.services.projects.lockouts import lockout_clear
from reviews.services.projects.members import membership_add, membership_remove


@require_http_methods(["GET", "POST"])
def members(request, slug):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    project = access.project
    form = MemberAddForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        user, role = form.cleaned_data["user"], form.cleaned_data["role"]
        membership_add(actor=request.user, project=project, user=user, role=role)
        messages.success(request, f"{user.username} is now {Role(role).label.lower()}.")
        return redirect("members", slug)
    return render(
        request,
        "reviews/members.html",
        {
            "access": access,
            "project": project,
            "rows": member_rows(project),
            "roles": Role.choices,
            "form": form,
        },
    )


@require_POST
def member_remove(request, slug, user_pk):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    user = _member(access, user_pk)
    form = MemberRemoveForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Nothing removed: {errors_text(form)}")
        return redirect("members", slug)
    role = form.role_or_none()
    try:
        membership_remove(actor=request.user, project=access.project, user=user, role=role)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        what = f"the {Role(role).label.lower()} role" if role else "all roles"
        messages.success(request, f"Removed {what} from {user.username}; their answers stay.")
    return redirect("members", slug)


@require_POST
def member_unlock(request, slug, user_pk):
    """Clear a member's password lockout at once (an approver locked out cannot sign)."""
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    user = _member(access, user_pk)
    lockout_clear(actor=request.user, project=access.project, user=user)
    messages.success(
        request, f"{user.username} may sign in again: their wrong passwords are forgotten."
    )
    return redirect("members", slug)


def _member(access, user_pk):
    return get_object_or_404(project_members(access.project), pk=user_pk)
