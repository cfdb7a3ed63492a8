"""The question builder's own endpoint: a page's builder posts here (htmx) for its live preview
and to start from a template. Nothing is saved: the page's own form defines the question."""

from django.shortcuts import render
from django.views.decorators.http import require_POST

from reviews.forms_questions import TEMPLATES, QuestionDefinitionForm, with_template

PREFIX = "q"


def template_chosen(data) -> bool:
    """A template button pressed (without htmx it submits the page's form): the page shows the
    builder filled from it and saves nothing."""
    return data is not None and data.get(f"{PREFIX}-template") in TEMPLATES


def builder_context(data=None, *, initial=None, legend: str = "Question") -> dict:
    """The builder's template context: the form (bound to `data`; unbound with `initial`, or
    with a chosen template's values and nothing refused yet), the templates to start from, and
    the preview of what a rater would see."""
    if template_chosen(data):
        data = with_template(data, PREFIX, data[f"{PREFIX}-template"])
        initial = {
            name: data.get(f"{PREFIX}-{name}") for name in QuestionDefinitionForm.base_fields
        }
    if initial is not None:
        initial["critical"] = initial.get("critical") in (True, "on", "true", "1")
        qform = QuestionDefinitionForm(prefix=PREFIX, initial=initial)
        preview = QuestionDefinitionForm(
            {f"{PREFIX}-{k}": v for k, v in initial.items() if v not in (None, False)},
            prefix=PREFIX,
        ).preview()
    else:
        qform = QuestionDefinitionForm(data, prefix=PREFIX)
        preview = qform.preview() if data is not None else {"kind": "pass_fail", "name": "question"}
    return {"qform": qform, "preview": preview, "templates": TEMPLATES.items(), "legend": legend}


@require_POST
def question_builder(request):
    return render(request, "reviews/_question_builder.html", builder_context(request.POST))
