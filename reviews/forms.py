from django import forms
from django.utils.text import slugify

from reviews import evidence
from reviews.formats import limits
from reviews.models import (
    Decision,
    Project,
    ProjectAction,
    Question,
    QuestionKind,
    ResolutionRule,
    Role,
    decisions_for,
)
from reviews.selectors_workspace import question_candidate
from reviews.services.approval.approve import MAX_CORRECTION_REASON
from reviews.services.assignment.batches import SELECTIONS as BATCH_SELECTIONS
from reviews.services.imports.pipeline import import_formats, import_options
from reviews.services.imports.questions import split_requests
from reviews.services.projects.members import SETTINGS_FIELDS, user_by_username_or_email
from reviews.services.projects.tokens import DEFAULT_LIFETIME, LIFETIMES
from reviews.services.rating.answers import AnswerInput


def _instructions_field(rows: int = 6) -> forms.CharField:
    return forms.CharField(
        required=False,
        max_length=20_000,
        widget=forms.Textarea(attrs={"rows": rows}),
        help_text="Guidelines for raters, in Markdown; shown above the questions of every item.",
    )


class ProjectCreateForm(forms.Form):
    """Name first; the slug follows the name (static/js/project-new.js) unless edited."""

    name = forms.CharField(max_length=200)
    slug = forms.SlugField(
        max_length=64,
        required=False,
        help_text="Used in URLs and on the command line; made from the name if left empty.",
        widget=forms.TextInput(attrs={"data-slug-from": "id_name"}),
    )
    overlap = forms.IntegerField(min_value=1, max_value=20, initial=2)
    resolution_rule = forms.ChoiceField(
        choices=ResolutionRule.choices, initial=ResolutionRule.UNANIMOUS
    )
    instructions = _instructions_field()

    def clean_slug(self):
        slug = self.cleaned_data.get("slug") or slugify(self.data.get("name", ""))[:64].strip("-_")
        if not slug:
            raise forms.ValidationError("Give a slug: the name has no letters or digits to use.")
        return slug


class ProjectInstructionsForm(forms.Form):
    instructions = _instructions_field(rows=14)


class AnswerChoiceForm(forms.Form):
    """One question's answer, as the rater's card and the adjudicator's panel both post it.

    `choice` is what the radio buttons send: `claim:<pk>` (a candidate), `value` (the typed
    `value`), `label:<name>`, `omit`, `A` / `B` / `tie`, or `unclear` (raters only). Cleaned data
    gains `decision`, `chosen_claim` and `answer_value`; the services still check the rest.
    """

    choice = forms.CharField(
        max_length=400, strip=False, error_messages={"required": "Choose an answer first."}
    )
    value = forms.CharField(required=False, max_length=10_000)
    note = forms.CharField(required=False, max_length=10_000)
    reason = forms.CharField(required=False, max_length=10_000)
    expected_seq = forms.IntegerField(required=False, min_value=0)

    def __init__(self, data, *, question: Question, adjudicator: bool = False):
        super().__init__(data)
        self.question = question
        self.adjudicator = adjudicator

    def clean(self):
        cleaned = super().clean()
        choice = cleaned.get("choice")
        if choice is None:
            return cleaned
        decision, claim, value = self._parse(choice, cleaned.get("value", ""))
        if decision not in decisions_for(self.question.kind, adjudicator=self.adjudicator):
            raise forms.ValidationError("Choose an answer first.")
        cleaned.update(decision=decision, chosen_claim=claim, answer_value=value)
        return cleaned

    def _parse(self, choice: str, typed: str):
        prefix, _, rest = choice.partition(":")
        if prefix == "claim" and rest.isdigit():
            claim = question_candidate(self.question, int(rest))  # by hand: every autosave
            if claim is None:
                raise forms.ValidationError("That candidate does not belong to this question.")
            return Decision.SET, claim, claim.value
        if choice == "value":  # a criterion without labels is answered in free text
            free_text = self.question.kind == QuestionKind.CRITERION
            return Decision.LABEL if free_text else Decision.SET, None, typed
        if prefix == "label" and rest:
            return Decision.LABEL, None, rest
        return choice, None, None

    def answer_input(self) -> AnswerInput:
        """The rater's answer for `answer_record` (a chosen candidate is sent by id)."""
        data = self.cleaned_data
        claim = data["chosen_claim"]
        return AnswerInput(
            data["decision"],
            value=None if claim else data["answer_value"],
            chosen_claim_id=claim.pk if claim else None,
            claim=claim,  # read under this question already: the service need not read it again
            flagged=data["decision"] == Decision.UNCLEAR,
            note=data["note"],
        )

    def posted(self) -> dict:
        """What was posted, to offer it back when it lost to a newer save ("use mine"): the
        fields as the card posts them, and the answer as a rater reads it."""
        data = self.cleaned_data
        decision = data["decision"]
        shown = data["answer_value"] if decision in (Decision.SET, Decision.LABEL) else None
        return {
            "choice": data["choice"],
            "value": data["value"],
            "note": data["note"],
            "text": shown if shown is not None else Decision(decision).label,
        }

    def error_text(self) -> str:
        """The first error, for a one-line status or message."""
        errors = self.errors.get("__all__") or next(iter(self.errors.values()), [""])
        return str(errors[0])


class ProjectSettingsForm(forms.ModelForm):
    class Meta:
        model = Project
        fields = SETTINGS_FIELDS


class MemberAddForm(forms.Form):
    """The Members page's *Add*: a user by username or e-mail, and a role."""

    user = forms.CharField(
        max_length=254, error_messages={"required": "Give a username or e-mail."}
    )
    role = forms.ChoiceField(
        choices=Role.choices, error_messages={"invalid_choice": "Choose a role."}
    )

    def clean_user(self):
        typed = self.cleaned_data["user"].strip()
        user = user_by_username_or_email(typed)
        if user is None:
            raise forms.ValidationError(
                f"No active user {typed!r}: check the spelling of the username or e-mail address."
            )
        return user


class BatchForm(forms.Form):
    """A pre-assigned batch as the Assignments page posts it; `batch_create` checks the rest."""

    name = forms.CharField(max_length=200, required=False)
    raters = forms.ModelMultipleChoiceField(
        queryset=None, error_messages={"required": "Choose at least one rater."}
    )
    selection = forms.ChoiceField(choices=[(s, s) for s in BATCH_SELECTIONS])
    slice = forms.CharField(max_length=200, required=False)
    count = forms.IntegerField(min_value=0, required=False, label="How many")
    seed = forms.IntegerField(required=False)
    overlap = forms.IntegerField(min_value=1, max_value=20, required=False)

    def __init__(self, data=None, *, raters):
        super().__init__(data, initial={"selection": "count", "count": 20})
        self.fields["raters"].queryset = raters

    def batch_arguments(self) -> dict:
        data = self.cleaned_data
        return {
            "name": data["name"],
            "raters": list(data["raters"]),
            "selection": data["selection"],
            "slice_name": data["slice"],
            "count": data["count"] or 0,
            "seed": data["seed"],
            "overlap": data["overlap"],
        }


class PageImageForm(forms.Form):
    """?dpi=&format= of an evidence page image: only the viewer's zoom levels are rendered."""

    dpi = forms.TypedChoiceField(
        choices=[(dpi, str(dpi)) for dpi in evidence.ZOOM_DPIS],
        coerce=int,
        required=False,
        empty_value=evidence.DEFAULT_DPI,
        error_messages={
            "invalid_choice": "dpi must be one of the zoom levels: "
            + ", ".join(map(str, evidence.ZOOM_DPIS))
            + "."
        },
    )
    format = forms.ChoiceField(
        choices=[("png", "png"), ("webp", "webp")],
        required=False,
        error_messages={"invalid_choice": "format must be png or webp."},
    )


class GoldMarkForm(forms.Form):
    """The item page's gold button: mark the item as gold, or take the mark back."""

    gold = forms.TypedChoiceField(
        choices=[("1", "mark"), ("0", "unmark")], coerce=lambda v: v == "1"
    )


class RaterQualitySettingForm(forms.Form):
    alert_below = forms.FloatField(min_value=0, max_value=1, label="Warn below accuracy on gold")
    min_answers = forms.IntegerField(
        min_value=1, max_value=10_000, label="Once a rater has this many gold answers"
    )


class TokenForm(forms.Form):
    """A new API token: a name to recognise it by, and how long it works."""

    name = forms.CharField(max_length=100, required=False, strip=True)
    lifetime = forms.TypedChoiceField(
        choices=[("" if days is None else str(days), label) for days, label in LIFETIMES.items()],
        coerce=int,
        empty_value=None,
        initial=str(DEFAULT_LIFETIME),
        required=False,
    )


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one field (Django's documented recipe): a list of uploads."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput(attrs={"multiple": True}))
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        uploads = data if isinstance(data, list | tuple) else [data] if data else []
        return [super(MultipleFileField, self).clean(one, initial) for one in uploads]


LABEL_CONFIG_BYTES = 1024 * 1024


class ImportUploadForm(forms.Form):
    """The upload page: a file (or several images and PDFs, or a folder of them), its format
    (detected from the file when blank) and the options an import takes (record kind, judge,
    as generated, questions asked of every item, a Label Studio label config)."""

    file = MultipleFileField(required=False)
    folder = MultipleFileField(required=False)
    format = forms.CharField(required=False)
    kind = forms.CharField(required=False)
    judge = forms.CharField(required=False)
    as_generated = forms.BooleanField(required=False)
    questions = forms.CharField(required=False)
    label_config = forms.FileField(required=False)  # a Label Studio export's label config

    def clean(self):
        cleaned = super().clean()
        uploads = [*cleaned.get("file", []), *cleaned.get("folder", [])]
        if not uploads and not self.has_error("file"):
            self.add_error("file", "Choose a file to import.")
        for upload in uploads:
            if upload.size > limits.current().file_bytes:  # refused before a byte is stored
                self.add_error(
                    "file",
                    f"{upload.name}: {limits.message('file_bytes', 'its size', upload.size)}.",
                )
        if len(uploads) > 1:
            for upload in uploads:
                if _not_evidence(upload):
                    self.add_error(
                        "file",
                        f"{upload.name}: not an image or PDF. Several files at once are "
                        "images (PNG, JPEG, WebP, TIFF) and PDFs, an item each; import "
                        "records, review files and TextFlow results one file at a time.",
                    )
        cleaned["uploads"] = uploads
        return cleaned

    def clean_format(self) -> str:
        chosen = self.cleaned_data["format"]
        if chosen and chosen not in import_formats():
            raise forms.ValidationError(f"Unknown format {chosen!r}.")
        return chosen

    def clean_label_config(self) -> dict:
        """{"label_config": XML text, "label_config_name": its file's name}, or {}."""
        upload = self.cleaned_data["label_config"]
        if not upload:
            return {}
        if upload.size > LABEL_CONFIG_BYTES:
            raise forms.ValidationError(f"{upload.name}: a label config is at most 1 MB.")
        try:
            return {"label_config": upload.read().decode("utf-8"), "label_config_name": upload.name}
        except UnicodeDecodeError:
            raise forms.ValidationError(f"{upload.name}: not UTF-8 text.") from None

    def options(self) -> dict:
        data = self.cleaned_data
        return import_options(
            kind=data["kind"],
            judge=data["judge"],
            as_generated=data["as_generated"],
            questions=split_requests(data["questions"]),
            **data["label_config"],
        )


def _not_evidence(upload) -> bool:
    head = upload.read(1024)
    upload.seek(0)
    return evidence.sniff(head) is None


class ApprovalForm(forms.Form):
    """The approve page's POST. The form checks the post's shape (the page's diff fingerprint,
    the statement's box, the reason's length); the service checks what needs the item or the
    approver (the password, whether the diff shown is still the item's, a correction's reason)."""

    password = forms.CharField(required=False, strip=False, max_length=4096)
    confirm = forms.ChoiceField(choices=[("yes", "I confirm the statement")], required=False)
    reason = forms.CharField(
        required=False,
        max_length=MAX_CORRECTION_REASON,
        error_messages={
            "max_length": f"A correction's reason takes at most {MAX_CORRECTION_REASON:,} "
            "characters (%(show_value)d given)."
        },
    )
    shown = forms.RegexField(
        regex=r"^[0-9a-f]{64}$",
        label="Diff shown",
        error_messages={
            "required": "the page did not say which diff it showed: reload it and sign again.",
            "invalid": "the page's diff fingerprint is not one it made: reload it and sign again.",
        },
    )

    def approval_arguments(self) -> dict:
        """`approval_record`'s arguments from a valid form."""
        data = self.cleaned_data
        return {
            "password": data["password"],
            "confirmed": data["confirm"] == "yes",
            "correction_reason": data["reason"],
            "shown": data["shown"],
        }


class AuditFilterForm(forms.Form):
    """The audit page's filters and page (a GET: a value that does not parse is ignored, never
    an error page, like the item list's)."""

    action = forms.ChoiceField(choices=[("", "Any action"), *ProjectAction.choices], required=False)
    actor = forms.CharField(required=False, max_length=150)
    since = forms.DateField(required=False, label="From", widget=forms.DateInput({"type": "date"}))
    until = forms.DateField(required=False, label="To", widget=forms.DateInput({"type": "date"}))
    before = forms.IntegerField(min_value=1, max_value=2**63 - 1, required=False)

    def filters(self) -> dict:
        """`project_audit_page`'s arguments: each valid field, the others as not given."""
        self.is_valid()
        data = self.cleaned_data
        return {
            "action": data.get("action") or None,
            "actor": (data.get("actor") or "").strip(),
            "since": data.get("since"),
            "until": data.get("until"),
            "before": data.get("before"),
        }
