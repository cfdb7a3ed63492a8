"""The project's questions (criteria): each with its versions, and the builder that defines a
new one or a new version of one (`?edit=NAME` starts from its newest version)."""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from judging.forms_inputs import QuestionEditForm
from judging.selectors import criterion_rows
from reviews.access import project_for_user
from reviews.models import Role
from reviews.services.projects.questions import QuestionType, question_define
from reviews.views.questions import builder_context, template_chosen


@require_http_methods(["GET", "POST"])
def questions(request, slug):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    project = access.project
    rows = criterion_rows(project)
    data = request.POST if request.method == "POST" else None
    asked = QuestionEditForm(request.GET).name()
    editing = next((r for r in rows if asked and r.latest.name == asked), None)
    builder = builder_context(
        data,
        initial=_initial(editing) if data is None and editing else None,
        legend=f"New version of {editing.latest.name}" if editing else "New question",
    )
    qform = builder["qform"]
    if data is not None and not template_chosen(data) and qform.is_valid():
        defined = question_define(
            project=project, actor=request.user, definition=qform.definition()
        )
        if defined.created:
            messages.success(request, f"{defined.request}: version {defined.version} saved.")
        else:
            messages.info(
                request, f"{defined.request}: nothing changed (version {defined.version})."
            )
        return redirect("questions", slug)
    return render(
        request,
        "judging/questions.html",
        {"access": access, "project": project, "rows": rows, "editing": editing, **builder},
    )


def _initial(row) -> dict:
    criterion = row.latest
    return {
        "name": criterion.name,
        "kind": row.kind,
        "labels": "" if row.kind == QuestionType.PAIRWISE else "\n".join(criterion.labels),
        "positive": criterion.positive_label,
        "critical": criterion.critical,
        "text": criterion.text,
    }
