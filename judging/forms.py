"""Forms of the judge and run pages (views parse with these, then call one service)."""

from django import forms
from django.conf import settings
from django.utils.html import format_html

from evalsite.form_renderer import QuickSelect
from judging.models import Criterion, EvidenceMode, Split
from judging.providers import PROVIDERS
from judging.selectors import criterion_names
from judging.services.calibration.send_to_humans import SELECTIONS as SEND_SELECTIONS
from judging.services.calibration.splits import SPLIT_CHOICES
from judging.services.imports.criteria import latest_criterion
from judging.services.judges.endpoints import allowed_endpoints


class JudgeForm(forms.Form):
    name = forms.SlugField(max_length=100, help_text="Letters, digits, - and _.")
    provider = forms.ChoiceField(choices=[(p, p) for p in PROVIDERS])
    model = forms.CharField(max_length=200)
    base_url = forms.URLField(
        assume_scheme="https",
        required=False,
        max_length=500,
        label="Base URL",
        help_text="Empty: the API's default.",
    )
    api_key_env = forms.CharField(
        required=False,
        max_length=100,
        label="API key variable",
        help_text="The NAME of the environment variable holding the key; the key is never stored.",
    )
    temperature = forms.FloatField(min_value=0, max_value=2, initial=0)
    samples = forms.IntegerField(min_value=1, max_value=20, initial=1)
    criterion = forms.ChoiceField(
        required=False, help_text="Empty: a ground-truth reader (reads evidence, returns claims)."
    )
    evidence = forms.ChoiceField(
        required=False,
        choices=EvidenceMode.choices,
        initial=EvidenceMode.NONE,
        label="The model sees",
        help_text="Besides the text: each evidence page as an image (PDF pages rendered), or "
        "only the pages the item's claims cite.",
    )
    max_pages = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=100,
        initial=8,
        label="Pages per call, at most",
        help_text="Pages past the cap are named to the model, not shown.",
    )
    timeout_seconds = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=600,
        initial=120,
        label="Timeout (seconds per attempt)",
    )
    max_retries = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=10,
        initial=4,
        label="Retries",
        help_text="After a timeout, a refused connection, HTTP 429 or 5xx; with backoff.",
    )
    concurrency = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=64,
        initial=4,
        label="Calls in flight at once, at most",
    )
    prompt = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 8}),
        help_text="Instructions only. The item's input, output and reference are always sent "
        "as delimited data. Placeholders: {{ criterion }}, {{ criterion_text }}, {{ labels }}.",
    )

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        names = sorted(
            set(Criterion.objects.filter(project=project).values_list("name", flat=True))
        )
        self.fields["criterion"].choices = [("", "— none (ground-truth reader) —")] + [
            (n, n) for n in names
        ]
        self.fields["base_url"].help_text = format_html(
            "Empty: the API's default. This server allows {}. An operator adds a local model "
            "server (vLLM, Ollama, llama.cpp) with a line like "
            "<code>JUDGE_ALLOWED_HOSTS=127.0.0.1:11434</code> in <code>.env</code>, then "
            "restarts the site and its worker.",
            ", ".join(allowed_endpoints()),
        )
        self.fields["api_key_env"].help_text = format_html(
            "The NAME of the environment variable holding the key; the key is never stored. "
            "Allowed here: {} (an operator adds one to <code>JUDGE_API_KEY_ENVS</code>).",
            ", ".join(settings.JUDGE_API_KEY_ENVS) or "none",
        )

    # Left empty (or not posted by an older page), a setting takes its default.
    DEFAULTED = ("evidence", "max_pages", "timeout_seconds", "max_retries", "concurrency")

    def clean(self):
        data = super().clean()
        for name in self.DEFAULTED:
            if data.get(name) in (None, ""):
                data[name] = self.fields[name].initial
        return data


class RunForm(forms.Form):
    split = forms.ChoiceField(
        choices=[(Split.CALIBRATION, "Calibration"), (Split.HELD_OUT, "Held-out"), ("all", "All")]
    )
    version = forms.IntegerField(required=False, min_value=1)
    limit = forms.IntegerField(required=False, min_value=1)
    concurrency = forms.IntegerField(
        required=False, min_value=1, max_value=64, help_text="Empty: the version's setting."
    )
    budget_usd = forms.DecimalField(
        required=False,
        min_value=0,
        max_digits=12,
        decimal_places=4,
        label="Budget (USD)",
        help_text="Stops before the call that would pass it; empty: no budget of its own.",
    )
    confirm_held_out = forms.BooleanField(
        required=False,
        label="I understand: this is a look at the held-out items, and it is recorded",
    )


class ResumeForm(forms.Form):
    budget_usd = forms.DecimalField(
        required=False,
        min_value=0,
        max_digits=12,
        decimal_places=4,
        label="New budget (USD)",
        help_text="Empty: keep the run's budget.",
    )


class _MultipleFiles(forms.ClearableFileInput):
    allow_multiple_selected = True


class _FilesField(forms.FileField):
    def clean(self, data, initial=None):
        if isinstance(data, list | tuple):
            return [super(_FilesField, self).clean(d, initial) for d in data]
        return [super().clean(data, initial)]


class GenerateForm(forms.Form):
    """Ground truth from evidence: files, expected fields, instruction and blind readers."""

    files = _FilesField(
        widget=_MultipleFiles(attrs={"accept": ".pdf,.png,.jpg,.jpeg,.webp,.tif,.tiff"}),
        help_text="PDFs or images; each becomes an item.",
    )
    fields = forms.CharField(
        label="Expected fields", help_text="JSON paths, comma-separated: $.currency, $.total"
    )
    instruction = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}))
    readers = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple,
        help_text="Judge configurations without a criterion; each reads the evidence blind.",
    )
    min_agreement = forms.FloatField(min_value=0.01, max_value=1, initial=1.0)
    second_read = forms.BooleanField(
        required=False, label="Second blind read of the disputed fields"
    )

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        from judging.models import JudgeConfig

        names = JudgeConfig.objects.filter(
            project=project, versions__criterion__isnull=True
        ).values_list("name", flat=True)
        self.fields["readers"].choices = [(n, n) for n in sorted(set(names))]
        if not names:
            self.fields["readers"].help_text = (
                "No reader yet: on the Judges page, create a judge whose criterion is "
                "“— none (ground-truth reader) —”."
            )

    def clean_files(self):
        """Checked by content (type, size, pages, pixels) before anything is queued; an
        upload over the size limit is refused on its size, before a byte is read."""
        from reviews.evidence import EvidenceError, inspect_evidence

        for upload in self.cleaned_data["files"]:
            try:
                inspect_evidence(upload, name=upload.name)  # restores the upload's position
            except EvidenceError as exc:
                raise forms.ValidationError(f"{upload.name}: {exc.reason}") from None
        return self.cleaned_data["files"]

    def clean_fields(self):
        paths = [p.strip() for p in self.cleaned_data["fields"].split(",") if p.strip()]
        bad = [p for p in paths if not p.startswith("$.")]
        if not paths or bad:
            raise forms.ValidationError("give JSON paths like $.total, separated by commas")
        return paths


class DashboardRecomputeForm(forms.Form):
    """The dashboard's *Recompute* asks nothing: a job kind's form, taking `project=`."""

    def __init__(self, data=None, *, project=None):
        super().__init__(data)


class SplitDrawForm(forms.Form):
    seed = forms.IntegerField(error_messages={"required": "give a whole-number seed."})
    held_out_fraction = forms.FloatField(
        min_value=0, max_value=1, required=False, label="held-out fraction"
    )

    def __init__(self, data=None, *, project=None):  # `project`: as every job kind's form
        super().__init__(data)

    def clean_held_out_fraction(self):
        fraction = self.cleaned_data.get("held_out_fraction")
        return 0.5 if fraction is None else fraction


class SendToHumansForm(forms.Form):
    """Which items of which criterion go to the review queue (`items_send_to_humans` checks the rest)."""

    criterion = forms.CharField(max_length=100)
    selection = forms.ChoiceField(choices=[(s, s) for s in SEND_SELECTIONS])
    n = forms.IntegerField(min_value=1, required=False, label="how many")
    seed = forms.IntegerField(required=False)

    def __init__(self, data, *, project):
        super().__init__(data)
        self.project = project

    def clean_criterion(self):
        name = self.cleaned_data["criterion"]
        criterion = latest_criterion(project=self.project, name=name)
        if criterion is None:
            raise forms.ValidationError(f"this project has no criterion {name!r}.")
        return criterion


class DisagreementFilterForm(forms.Form):
    """The disagreement list's filters (each optional) and the HOLD's failing criteria first."""

    criterion = forms.CharField(required=False)
    judge = forms.CharField(required=False)
    slice = forms.CharField(required=False)
    pair = forms.CharField(required=False)
    lead = forms.CharField(required=False, help_text="comma-separated criterion names")

    def filters(self) -> dict:
        data = getattr(self, "cleaned_data", {})
        filters = {k: data.get(k, "") for k in ("criterion", "judge", "slice", "pair")}
        lead = [name for name in data.get("lead", "").split(",") if name]
        return {"filters": filters, "lead": lead}


class FailureTagForm(forms.Form):
    """Why a judge and people differ on an item: a bucket (or none) and a note."""

    criterion = forms.CharField(max_length=100)
    judge = forms.CharField(max_length=300)
    bucket = forms.IntegerField(required=False, min_value=1)  # empty: untagged
    note = forms.CharField(required=False, max_length=10_000)  # tags are history: bounded

    def tag_fields(self) -> dict:
        """The cleaned input as `failure_tag` takes it."""
        data = dict(self.cleaned_data)
        data["bucket_pk"] = data.pop("bucket")
        return data


class HeldOutShowForm(forms.Form):
    """*Show held-out figures*: which page asked (for the access log) and where to go back."""

    what = forms.CharField(max_length=200, required=False)
    next = forms.CharField(max_length=2000, required=False)


class CompareForm(forms.Form):
    """Two judge versions (or imported judges) to compare on a criterion, and the split."""

    criterion = forms.ChoiceField()
    a = forms.ChoiceField(label="A")
    b = forms.ChoiceField(label="B")
    split = forms.ChoiceField(choices=[(s, s) for s in SPLIT_CHOICES])

    def __init__(self, *args, criteria, refs, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["criterion"].choices = [(c, c) for c in criteria]
        for name in ("a", "b"):
            self.fields[name].choices = [(r, r) for r in refs]

    def clean(self):
        data = super().clean()
        if data.get("a") and data.get("a") == data.get("b"):
            raise forms.ValidationError("Choose two different judges or versions.")
        return data


class EstimateForm(forms.Form):
    """The estimate page's choices (`manage.py estimate`'s options): a judge of the criterion,
    the split and slice, the assumption about labels of unknown selection, the level, and the
    half-width the "label N more" plan aims at."""

    judge = forms.ChoiceField()
    split = forms.ChoiceField(choices=[(s, s) for s in SPLIT_CHOICES], initial="all")
    slice = forms.ChoiceField(required=False)
    assume_random_labels = forms.BooleanField(
        required=False, label="Treat imported labels as a random sample"
    )
    alpha = forms.FloatField(min_value=0.001, max_value=0.2, initial=0.05, label="α (1 − level)")
    half_width = forms.FloatField(
        min_value=0.005, max_value=0.5, initial=0.05, label="Aim for ± (half-width)"
    )

    def __init__(self, *args, refs, slices, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judge"].choices = [(r, r) for r in refs]
        self.fields["slice"].choices = [("", "every item")] + [(s, s) for s in slices]


class SendChosenForm(forms.Form):
    """The item list's *Send to humans*: which criterion to ask about the chosen items."""

    use_required_attribute = False  # one form holds every action: each checks its own

    criterion = forms.ChoiceField(label="Criterion", widget=QuickSelect)

    def __init__(self, data=None, *, project):
        super().__init__(data)
        self.project = project
        self.fields["criterion"].choices = [("", "Choose a criterion")] + [
            (name, name) for name in criterion_names(project)
        ]

    def clean_criterion(self):
        return latest_criterion(project=self.project, name=self.cleaned_data["criterion"])
