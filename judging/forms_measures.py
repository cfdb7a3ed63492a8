"""Forms of the text-metrics and pass@k pages (GET forms: views parse with these, then call one
service). Their choices are the commands' choices."""

from django import forms

from judging.metrics.text import METRICS
from judging.models import Criterion
from judging.services.calibration.splits import SPLIT_CHOICES
from judging.services.judges.refs import judge_ref_choices
from reviews.models import Slice

SPLITS = [(s, s) for s in SPLIT_CHOICES]


class TextMetricsForm(forms.Form):
    metrics = forms.MultipleChoiceField(
        choices=[(m, m) for m in METRICS], widget=forms.CheckboxSelectMultiple
    )
    split = forms.ChoiceField(choices=SPLITS, initial="all")
    slice = forms.ChoiceField(required=False, help_text="Only the items of this slice.")

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        names = Slice.objects.filter(project=project).values_list("name", flat=True)
        self.fields["slice"].choices = [("", "every item"), *((n, n) for n in names)]


def _whole_numbers(text: str) -> list[int]:
    try:
        ks = sorted({int(part) for part in text.replace(",", " ").split()})
    except ValueError:
        raise forms.ValidationError("whole numbers separated by commas, e.g. 1, 5, 10") from None
    if not ks or ks[0] < 1:
        raise forms.ValidationError("each k is a whole number of at least 1")
    return ks


class PassAtKForm(forms.Form):
    criterion = forms.ChoiceField(help_text="A criterion with a positive label.")
    ks = forms.CharField(label="k", initial="1, 5", help_text="One or more, e.g. 1, 5, 10.")
    group_by = forms.CharField(
        label="Group by metadata key",
        initial="case_id",
        max_length=200,
        help_text="Items with the same value of this metadata key are samples of one case.",
    )
    judge = forms.ChoiceField(
        required=False, help_text="Passes from this judge's labels instead of people's."
    )
    split = forms.ChoiceField(choices=SPLITS, initial="all")

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        criteria = Criterion.objects.filter(project=project).exclude(positive_label="")
        names = sorted(set(criteria.values_list("name", flat=True)))
        self.fields["criterion"].choices = [(n, n) for n in names]
        refs = judge_ref_choices(project)
        self.fields["judge"].choices = [("", "final human label"), *((r, r) for r in refs)]

    def clean_ks(self):
        return _whole_numbers(self.cleaned_data["ks"])
