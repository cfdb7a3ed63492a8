"""The score-predictions upload form (the view parses with it, then calls one service)."""

from django import forms


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
