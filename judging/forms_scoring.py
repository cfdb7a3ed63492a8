"""Forms of the scores page: predictions upload and baseline judges (views parse with these,
then call one service)."""

from django import forms

from judging.models import Criterion, JudgeConfig
from judging.reports.scoring.claims import COMPARISONS
from judging.services.calibration.splits import SPLIT_CHOICES
from judging.services.runs.baseline import baseline_ready
from judging.services.runs.baselines import KINDS, ROUGE_TYPES, Baseline


class ScoreUploadForm(forms.Form):
    predictions = forms.FileField(
        label="Predictions (JSONL)",
        help_text="One record per line: case_id, prediction, and optionally producer, stage_id, "
        "operation, depends_on (docs/scoring.md).",
    )
    allow_generated = forms.BooleanField(
        required=False,
        label="Score cases without ground truth against the generated reference",
        help_text="Reported apart, as agreement with a provisional AI reference.",
    )
    comparison = forms.ChoiceField(
        choices=[(c, c) for c in COMPARISONS],
        initial="auto",
        required=False,
        help_text="auto: exact for values and JSON, by claims for free text, tables and notes; "
        "semantic: everything by claims; exact: what is not exact-compatible is skipped.",
    )
    claim_judge = forms.ChoiceField(
        required=False,
        help_text="A judge configuration without a criterion: it decides each claim.",
    )

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        names = (
            JudgeConfig.objects.filter(project=project, versions__criterion__isnull=True)
            .order_by("name")
            .values_list("name", flat=True)
            .distinct()
        )
        self.fields["claim_judge"].choices = [("", "none"), *((n, n) for n in names)]

    def clean_comparison(self):
        return self.cleaned_data["comparison"] or "auto"


class BaselineForm(forms.Form):
    criterion = forms.ChoiceField(help_text="A pass/fail criterion (two labels, one positive).")
    baseline = forms.ChoiceField(choices=[(k, k) for k in KINDS])
    threshold = forms.FloatField(
        min_value=0, max_value=1, initial=0.5, help_text="BLEU and ROUGE: the passing score."
    )
    rel_tol = forms.FloatField(
        min_value=0,
        max_value=0.99,
        initial=0,
        label="Relative tolerance",
        help_text="Numeric: how far apart two numbers may be, relative to the larger.",
    )
    rouge_type = forms.ChoiceField(choices=[(r, r) for r in ROUGE_TYPES], initial="rougeL")
    split = forms.ChoiceField(choices=[(s, s) for s in SPLIT_CHOICES], initial="all")

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        # The latest version of each criterion, and only those a baseline can label.
        criteria = Criterion.objects.filter(project=project).order_by("created_at")
        latest = {c.name: c for c in criteria}
        names = sorted(name for name, c in latest.items() if baseline_ready(c))
        field = self.fields["criterion"]
        field.choices = [(n, n) for n in names]
        if not names:
            field.help_text = (
                "No pass/fail criterion in this project yet (two labels, one positive)."
            )

    def baseline_settings(self) -> Baseline:
        data = self.cleaned_data
        return Baseline(
            data["baseline"],
            threshold=data["threshold"],
            rel_tol=data["rel_tol"],
            rouge_type=data["rouge_type"],
        )
