"""The small forms of judging pages that read one or two values from the query string or a
post: which version of a criterion, which judge's chart, which question to edit, a score run's
filters. Every view reads request data through a form (the architecture test holds it); a
value that does not parse is ignored, as each page says, never a 500."""

from django import forms

from judging.reports.attribution import CONTEXTS
from judging.reports.scoring.build import NO_CONTEXT


class FigureChoiceForm(forms.Form):
    """Which version of a criterion (none: the latest) and, for a chart, whose judge's."""

    version = forms.CharField(required=False, max_length=50)
    judge = forms.CharField(required=False, max_length=300)

    def version_or_none(self) -> str | None:
        return (self.cleaned_data.get("version") if self.is_valid() else None) or None

    def judge_ref(self) -> str:
        return self.cleaned_data.get("judge", "") if self.is_valid() else ""


class QuestionEditForm(forms.Form):
    """The criteria page's `?edit=NAME`: start the builder from that question's newest version."""

    edit = forms.CharField(required=False, max_length=100)

    def name(self) -> str:
        return self.cleaned_data["edit"] if self.is_valid() else ""


class ScoreRunFilterForm(forms.Form):
    """A score run's case filters: a stage (`?stage=` with nothing: the records without a stage)
    and a failure context (one the report does not know is ignored)."""

    stage = forms.CharField(required=False, strip=False, max_length=300)
    context = forms.ChoiceField(choices=[(c, c) for c in (*CONTEXTS, NO_CONTEXT)], required=False)

    def filters(self) -> tuple[str | None, str | None]:
        """(stage, context); None where the filter is not given or does not parse."""
        self.is_valid()
        data = self.cleaned_data  # holds the fields that parsed
        stage = data.get("stage") if "stage" in self.data else None
        return stage, data.get("context") or None


class ScoreCaseForm(forms.Form):
    """Which case's records a score run's case page shows."""

    case = forms.CharField(required=False, strip=False, max_length=500)

    def case_id(self) -> str:
        return self.cleaned_data["case"] if self.is_valid() else ""
