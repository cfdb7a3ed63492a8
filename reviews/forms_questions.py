"""The question builder's form: what the new-project form, the Questions page and
`manage.py criterion` all check, so each refuses the same input with the same words.

Labels are typed in order, one per line or comma-separated. Each kind fixes what its labels may
be: pass/fail has two and a passing one; choice and ordinal ratings need at least two; free text
has none; pairwise is always A, B and tie.
"""

from __future__ import annotations

import re

from django import forms

from reviews.services.projects.questions import (
    PAIRWISE_LABELS,
    QuestionDefinition,
    QuestionType,
)

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
MAX_LABELS = 50
LABEL_CHARS = 100  # the Verdict/Answer label columns

# The builder's starting points: choosing one fills the fields (a name typed already stays).
TEMPLATES = {
    "pass-fail": {
        "title": "Pass / fail",
        "kind": QuestionType.PASS_FAIL,
        "labels": "pass\nfail",
        "positive": "pass",
        "text": "Does it meet the requirement? Pass only if it does in full.",
    },
    "yes-no": {
        "title": "Yes / no",
        "kind": QuestionType.PASS_FAIL,
        "labels": "yes\nno",
        "positive": "yes",
        "text": "Answer yes or no.",
    },
    "rating-1-5": {
        "title": "Rating 1–5",
        "kind": QuestionType.ORDINAL,
        "labels": "1\n2\n3\n4\n5",
        "positive": "",
        "text": "Rate from 1 (poor) to 5 (excellent).",
    },
    "document-type": {
        "title": "Document type",
        "kind": QuestionType.CHOICE,
        "labels": "invoice\nreceipt\nstatement\nother",
        "positive": "",
        "text": "What kind of document is this?",
    },
    "transcribe": {
        "title": "Free text",
        "kind": QuestionType.FREE_TEXT,
        "labels": "",
        "positive": "",
        "text": "Type what the document says, as written.",
    },
    "preference": {
        "title": "A or B",
        "kind": QuestionType.PAIRWISE,
        "labels": "A\nB\ntie",
        "positive": "",
        "text": "Which answer is better? A, B, or a tie.",
    },
}


def split_labels(text: str) -> list[str]:
    """Labels in the order typed: one per line, or comma-separated on one line."""
    parts = text.splitlines() if "\n" in text.strip() else text.split(",")
    return [part.strip() for part in parts if part.strip()]


class QuestionDefinitionForm(forms.Form):
    # Optional on the new-project form: no `required` in the page, the server says what is missing.
    use_required_attribute = False

    name = forms.CharField(
        label="Question name",
        max_length=100,
        help_text="Short, no spaces: imports ask for it as <code>criterion:NAME</code>.",
    )
    kind = forms.ChoiceField(choices=QuestionType.choices, initial=QuestionType.PASS_FAIL)
    labels = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="In order, one per line (ordinal ratings: lowest first).",
    )
    positive = forms.CharField(
        label="Passing label",
        required=False,
        max_length=LABEL_CHARS,
        help_text="Pass/fail: the label that passes. Optional otherwise.",
    )
    critical = forms.BooleanField(
        required=False, help_text="A failure here holds a release whatever else passes."
    )
    text = forms.CharField(
        label="Guidance",
        required=False,
        max_length=20_000,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="What the rater reads above the labels.",
    )

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if not NAME.match(name):
            raise forms.ValidationError(
                "Use letters, digits, '-', '_' or '.', starting with a letter or digit "
                "(no spaces, commas or colons)."
            )
        return name

    def clean(self):
        cleaned = super().clean()
        kind = cleaned.get("kind")
        if kind is None:
            return cleaned
        labels = self._labels(kind, split_labels(cleaned.get("labels", "")))
        positive = (cleaned.get("positive") or "").strip()
        if kind == QuestionType.PASS_FAIL and not positive and labels:
            positive = labels[0]  # the first label passes unless another is named
        if positive and labels and positive not in labels:
            self.add_error(
                "positive", f"{positive!r} is not one of the labels ({', '.join(labels)})."
            )
        if kind in (QuestionType.FREE_TEXT, QuestionType.PAIRWISE) and positive:
            self.add_error("positive", "Only a question with labels of its own has a passing one.")
        cleaned["label_list"] = labels
        cleaned["positive"] = positive
        return cleaned

    def _labels(self, kind: str, labels: list[str]) -> list[str]:
        """The labels `kind` allows, or an error beside the labels field."""
        problem = None
        duplicates = sorted({label for label in labels if labels.count(label) > 1})
        too_long = [label for label in labels if len(label) > LABEL_CHARS]
        if kind == QuestionType.PAIRWISE:
            if labels and labels != list(PAIRWISE_LABELS):
                problem = "A pairwise question's labels are always A, B, tie: leave them empty."
            labels = list(PAIRWISE_LABELS)
        elif kind == QuestionType.FREE_TEXT:
            if labels:
                problem = "A free-text question has no labels: the rater types the answer."
        elif duplicates:
            problem = f"Each label once: {', '.join(duplicates)} is repeated."
        elif too_long:
            problem = (
                f"A label has at most {LABEL_CHARS} characters: {too_long[0][:40]!r}… is longer."
            )
        elif len(labels) > MAX_LABELS:
            problem = f"At most {MAX_LABELS} labels ({len(labels)} given)."
        elif kind == QuestionType.PASS_FAIL and len(labels) != 2:
            problem = f"Pass/fail has exactly two labels ({len(labels)} given), e.g. pass and fail."
        elif len(labels) < 2:
            problem = "Give at least two labels."
        if problem:
            self.add_error("labels", problem)
        return labels

    def definition(self) -> QuestionDefinition:
        data = self.cleaned_data
        return QuestionDefinition(
            name=data["name"],
            kind=data["kind"],
            labels=data["label_list"],
            positive=data["positive"],
            critical=data["critical"],
            text=data["text"].strip(),
        )

    def preview(self) -> dict:
        """What a rater would see, from whatever was typed so far (errors and all)."""
        self.is_valid()
        data = self.cleaned_data
        kind = data.get("kind") or self.data.get(self.add_prefix("kind"), "")
        return {
            "name": data.get("name") or self.data.get(self.add_prefix("name"), "") or "question",
            "kind": kind,
            "labels": data.get("label_list", []),
            "positive": data.get("positive", ""),
            "critical": data.get("critical", False),
            "text": data.get("text", ""),
        }


def with_template(data, prefix: str, template: str) -> dict:
    """A copy of the posted builder fields with `template`'s values filled in (the name kept)."""
    values = TEMPLATES[template]
    filled = {key: data.get(key) for key in data}
    for name in ("kind", "labels", "positive", "text"):
        filled[f"{prefix}-{name}" if prefix else name] = values[name]
    return filled
