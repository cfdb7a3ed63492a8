"""The small forms of pages and actions that read one or two values: a query-string switch, a
cursor, a search quote, a reason. Every view reads request data through a form (the
architecture test holds it), so a value that does not parse is a clear error or ignored as the
page documents, never a 500."""

from django import forms

from reviews.formats.rows import ROW_FORMATS
from reviews.models import Role
from reviews.reports.exports import EXPORT_FORMATS
from reviews.selectors_rows import row_kinds


class MemberRemoveForm(forms.Form):
    """*Remove*: one role of a member, or (no role) every role they hold."""

    role = forms.ChoiceField(
        choices=Role.choices,
        required=False,
        error_messages={"invalid_choice": "Choose a role. “%(value)s” is not one."},
    )

    def role_or_none(self) -> str | None:
        return self.cleaned_data["role"] or None


class SkipForm(forms.Form):
    """*Skip*: the rater's reason (the queue service says what a reason needs)."""

    reason = forms.CharField(required=False)


class ReviewModeForm(forms.Form):
    """The review screen's `?revise=1`: reopen a submitted item's answers for revising."""

    revise = forms.ChoiceField(choices=[("1", "Revise")], required=False)

    def revising(self) -> bool:
        return self.is_valid() and self.cleaned_data["revise"] == "1"


class LocateForm(forms.Form):
    """The evidence viewer's quote search (`?q=`); a longer quote is searched by its start."""

    MAX_QUOTE = 500

    q = forms.CharField(required=False, strip=False)

    def quote(self) -> str:
        self.is_valid()  # one optional text field: always valid
        return self.cleaned_data["q"][: self.MAX_QUOTE]


class CursorForm(forms.Form):
    """A keyset page's `?after=` cursor (one that does not parse starts from the beginning)."""

    after = forms.CharField(required=False, max_length=80)

    def cursor(self) -> str:
        return self.cleaned_data["after"] if self.is_valid() else ""


class GroundTruthExportForm(forms.Form):
    """The project page's ground-truth export: which format (also a job kind's form)."""

    format = forms.ChoiceField(choices=[(f, f) for f in EXPORT_FORMATS])

    def __init__(self, data=None, *, project=None):
        super().__init__(data)


class RowExportForm(forms.Form):
    """The project page's row export: which rows, which format (also a job kind's form)."""

    kind = forms.ChoiceField(choices=lambda: [(k, k) for k in row_kinds()])
    format = forms.ChoiceField(choices=[(f, f) for f in ROW_FORMATS])

    def __init__(self, data=None, *, project=None):
        super().__init__(data)
