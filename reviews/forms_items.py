"""The item list's forms: its filters (a GET), the rows chosen for a bulk action, and reviews'
own bulk actions' fields (re-open has none; assign names a rater; add to a batch names one);
and batch approval's choice of the waiting items."""

from __future__ import annotations

from urllib.parse import urlencode

from django import forms
from django.contrib.auth import get_user_model

from evalsite.form_renderer import PlainChoices, QuickSelect
from reviews import item_hooks
from reviews.models import AssignmentBatch, ItemStatus, Role
from reviews.selectors_options import list_options
from reviews.selectors_pages import ItemFilters

BIGINT = 2**63 - 1
MAX_TICKED = 1000


class ItemListForm(forms.Form):
    """The item list's filters and page (a GET: a value that does not parse is ignored, never an
    error page). The search is cut to 100 characters, the ids bounded to a bigint's range; a
    slice, rater or registered filter's value must be one the project offers."""

    q = forms.CharField(required=False, label="Id or title")
    status = forms.ChoiceField(
        choices=[("", "Any status"), *ItemStatus.choices], required=False, widget=QuickSelect
    )
    slice = forms.TypedChoiceField(coerce=int, required=False, empty_value=None, widget=QuickSelect)
    label = forms.CharField(required=False, max_length=200)
    assignee = forms.TypedChoiceField(
        coerce=int, required=False, empty_value=None, widget=QuickSelect
    )
    after = forms.IntegerField(min_value=1, max_value=BIGINT, required=False)
    before = forms.IntegerField(min_value=1, max_value=BIGINT, required=False)

    def __init__(self, data, *, project):
        super().__init__(data)
        self.project = project
        options = list_options(project)
        self.fields["slice"].choices = PlainChoices([("", "Any slice"), *options.slices])
        self.fields["assignee"].choices = PlainChoices([("", "Anyone or no one"), *options.raters])
        for hook in item_hooks.FILTERS.values():
            self.fields[hook.name] = forms.ChoiceField(
                choices=[("", f"Any {hook.label.lower()}"), *hook.choices(project)],
                required=False,
                label=hook.label,
                widget=QuickSelect,
            )

    def clean_q(self) -> str:
        return self.cleaned_data["q"][:100]

    def filters(self) -> ItemFilters:
        """Each valid filter; the others as not given."""
        self.is_valid()
        data = self.cleaned_data
        return ItemFilters(
            status=data.get("status") or None,
            query=data.get("q", ""),
            slice_id=data.get("slice"),
            label=(data.get("label") or "").strip(),
            assignee_id=data.get("assignee"),
            extra=tuple((name, data[name]) for name in item_hooks.FILTERS if data.get(name)),
        )

    def page(self) -> dict:
        self.is_valid()
        return {"after": self.cleaned_data.get("after"), "before": self.cleaned_data.get("before")}

    def query_string(self) -> str:
        """The valid filters as the URL keeps them (no page), for the pages' links and the bulk
        form's action (which acts on what the list shows)."""
        self.is_valid()
        kept = {
            name: self.data[name]
            for name in self.fields
            if name not in ("after", "before") and self.cleaned_data.get(name)
        }
        return urlencode(kept)


class ItemIdsField(forms.Field):
    """The ticked rows: item ids (the view keeps those of the project only)."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value):
        try:
            ids = sorted({int(v) for v in value or []})
        except (TypeError, ValueError):
            raise forms.ValidationError("The chosen items are not item ids.") from None
        if len(ids) > MAX_TICKED:  # a page holds 50; more: "all matching" is the way
            raise forms.ValidationError(f"At most {MAX_TICKED} ticked items at once.")
        return ids


class BulkForm(forms.Form):
    """Which action, on which items: the ticked rows, or every item the filters match."""

    action = forms.ChoiceField(choices=())
    item = ItemIdsField(required=False)
    all = forms.BooleanField(required=False)

    def __init__(self, data):
        super().__init__(data)
        self.fields["action"].choices = [(a.name, a.label) for a in item_hooks.ACTIONS.values()]
        self.fields["action"].error_messages["invalid_choice"] = "Choose an action."

    def clean(self):
        cleaned = super().clean()
        if not cleaned.get("all") and not cleaned.get("item"):
            raise forms.ValidationError("Tick the items to act on, or all that match.")
        return cleaned


class ReopenForm(forms.Form):
    """Re-open has no fields of its own."""

    use_required_attribute = False  # one form holds every action: each checks its own

    def __init__(self, data=None, *, project):
        super().__init__(data)


class AssignForm(forms.Form):
    use_required_attribute = False  # one form holds every action: each checks its own
    rater = forms.ModelChoiceField(
        queryset=None, empty_label="Choose a rater", label="Rater", widget=QuickSelect
    )

    def __init__(self, data=None, *, project):
        super().__init__(data)
        if self.is_bound:  # a post is checked by the ORM (building a queryset costs, unused)
            self.fields["rater"].queryset = get_user_model().objects.filter(
                memberships__project=project, memberships__role=Role.RATER
            )
        # What the page shows: the same raters, from the list's one read.
        self.fields["rater"].choices = lambda: PlainChoices(
            [("", "Choose a rater"), *list_options(project).raters]
        )


class AddToBatchForm(forms.Form):
    use_required_attribute = False  # one form holds every action: each checks its own
    batch = forms.ModelChoiceField(
        queryset=None, empty_label="Choose a batch", label="Batch", widget=QuickSelect
    )

    def __init__(self, data=None, *, project):
        super().__init__(data)
        if self.is_bound:  # as AssignForm's raters
            self.fields["batch"].queryset = AssignmentBatch.objects.filter(project=project)
        self.fields["batch"].choices = lambda: PlainChoices(
            [("", "Choose a batch"), *list_options(project).batches]
        )


class ApprovalBatchForm(forms.Form):
    """Batch approval's post: the ticked waiting items (or all), the statement's box, the
    password, whether to sign now, and what the preview showed of each item."""

    item = forms.TypedMultipleChoiceField(coerce=int, required=False, choices=())
    all = forms.BooleanField(required=False)
    confirm = forms.BooleanField(required=False)
    password = forms.CharField(required=False, strip=False)
    sign = forms.BooleanField(required=False)

    def __init__(self, *args, waiting, **kwargs):
        super().__init__(*args, **kwargs)
        self.waiting = waiting
        waiting_pks = list(waiting.values_list("pk", flat=True))
        self.fields["item"].choices = [(pk, pk) for pk in waiting_pks]
        # What the preview showed of each item (its diff's fingerprint), checked by the service.
        for pk in waiting_pks:
            self.fields[f"shown-{pk}"] = forms.CharField(required=False)

    def shown(self, items) -> dict[int, str]:
        return {item.pk: self.cleaned_data.get(f"shown-{item.pk}", "") for item in items}

    def items(self):
        if self.cleaned_data["all"]:
            return list(self.waiting)
        return list(self.waiting.filter(pk__in=self.cleaned_data["item"]))
