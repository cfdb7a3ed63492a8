"""Criteria, judges, their verdicts, imported human labels, the frozen split, gates and reports."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from reviews.models import AppendOnlyModel, Item, Project
from reviews.models.append_only import AppendOnlyQuerySet
from reviews.models.constraints import fraction_check

User = settings.AUTH_USER_MODEL


class Criterion(models.Model):
    """A rubric criterion with its label set. A new text or label set is a new version."""

    project = models.ForeignKey(
        Project, db_index=False, on_delete=models.CASCADE, related_name="criteria"
    )
    name = models.CharField(max_length=100)
    version = models.CharField(max_length=32, default="1")
    labels = models.JSONField(help_text="The label set, in order (ordinal criteria: low to high).")
    positive_label = models.CharField(max_length=100, blank=True)
    ordinal = models.BooleanField(default=False)
    critical = models.BooleanField(default=False)
    pairwise = models.BooleanField(default=False, help_text="Labels are A / B / tie.")
    text = models.TextField(blank=True)
    sha256 = models.CharField(
        max_length=64, help_text="Fingerprint of name, version, labels, text."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "criteria"
        ordering = ["project", "name", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "name", "version"], name="criterion_unique_version"
            ),
        ]

    def __str__(self):
        return f"{self.name} v{self.version}"


class Judge(models.Model):
    """One judge configuration. Judges sharing provider and model form one model group."""

    project = models.ForeignKey(
        Project, db_index=False, on_delete=models.CASCADE, related_name="judges"
    )
    provider = models.CharField(max_length=100)
    model = models.CharField(max_length=200)
    temperature = models.FloatField(null=True, blank=True)
    prompt_sha256 = models.CharField(max_length=64, blank=True)
    # provider, model, temperature and prompt in one string: unique even when temperature is
    # unknown (NULLs never collide in a unique index).
    configuration = models.CharField(max_length=400)

    class Meta:
        ordering = ["project", "provider", "model"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "configuration"], name="judge_unique_configuration"
            ),
        ]

    def __str__(self):
        return self.name

    @staticmethod
    def configuration_key(provider, model, temperature, prompt_sha256) -> str:
        return f"{provider}/{model}|t={temperature}|p={prompt_sha256 or ''}"

    @property
    def name(self) -> str:
        return f"{self.provider}/{self.model}"

    @property
    def model_group(self) -> str:
        return self.name


class OnRevisionMixin:
    """Rows given on a revision of an item's content: figures count the `current()` ones; the
    `stale()` ones (given on earlier content) stay visible and are counted apart."""

    def current(self):
        return self.filter(revision=F("item__revision"))

    def stale(self):
        return self.filter(revision__lt=F("item__revision"))


class VerdictQuerySet(OnRevisionMixin, models.QuerySet):
    pass


class HumanLabelQuerySet(OnRevisionMixin, AppendOnlyQuerySet):
    pass


class Verdict(models.Model):
    """A judge's label on an item for a criterion (or a pairwise preference), one sample, on
    one revision of the item's content."""

    # No index of their own: the unique (item, ...) and the (criterion, judge) indexes start
    # with them, and an import keeps every index up to date (issue #33).
    item = models.ForeignKey(
        Item, on_delete=models.CASCADE, related_name="verdicts", db_index=False
    )
    criterion = models.ForeignKey(
        Criterion, on_delete=models.CASCADE, related_name="verdicts", db_index=False
    )
    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="verdicts")
    sample = models.PositiveSmallIntegerField(default=0)
    label = models.CharField(
        max_length=100, help_text="Normalised label; `unparsed` when the raw text gave none."
    )
    raw = models.TextField(blank=True)
    explanation = models.TextField(blank=True)
    confidence = models.FloatField(null=True, blank=True)
    display_order = models.CharField(
        max_length=2, blank=True, help_text="Pairwise: AB or BA, the order the judge saw."
    )
    extra = models.JSONField(default=dict, blank=True, help_text="Unknown keys, kept for export.")
    source_name = models.CharField(max_length=255, blank=True, help_text="The imported file.")
    revision = models.PositiveIntegerField(
        default=1, db_default=1, help_text="The item's, when given."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = VerdictQuerySet.as_manager()

    class Meta:
        ordering = ["item", "criterion", "judge", "sample"]
        constraints = [
            models.UniqueConstraint(
                fields=["item", "criterion", "judge", "sample", "display_order", "revision"],
                name="verdict_unique_sample_revision",
            ),
            fraction_check("confidence", "verdict_confidence_in_0_1", nullable=True),
            models.CheckConstraint(
                condition=Q(display_order__in=["", "AB", "BA"]), name="verdict_display_order_valid"
            ),
        ]
        indexes = [models.Index(fields=["criterion", "judge"])]

    def __str__(self):
        return f"{self.judge} on {self.item}: {self.label}"


class HumanLabel(AppendOnlyModel):
    """A human label imported with its rater's identity (labels given in Evalsite's own review
    workflow live there, as answers and resolutions)."""

    # No index of its own: the unique (item, criterion, rater, revision) starts with it.
    item = models.ForeignKey(
        Item, on_delete=models.CASCADE, related_name="human_labels", db_index=False
    )
    criterion = models.ForeignKey(Criterion, on_delete=models.CASCADE, related_name="human_labels")
    rater = models.CharField(max_length=150, help_text="The rater's name in the source file.")
    label = models.CharField(max_length=100)
    note = models.TextField(blank=True)
    extra = models.JSONField(default=dict, blank=True, help_text="Unknown keys, kept for export.")
    source_name = models.CharField(max_length=255, blank=True)
    revision = models.PositiveIntegerField(
        default=1, db_default=1, help_text="The item's, when given."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = HumanLabelQuerySet.as_manager()

    class Meta:
        ordering = ["item", "criterion", "rater"]
        constraints = [
            models.UniqueConstraint(
                fields=["item", "criterion", "rater", "revision"],
                name="humanlabel_unique_rater_revision",
            ),
        ]

    def __str__(self):
        return f"{self.rater} on {self.item}: {self.label}"


class LabelSelection(models.TextChoices):
    """How items came to be put before people for a criterion (send_to_humans)."""

    HELD_OUT = "held_out", "the held-out draw, sent in full"
    CALIBRATION_SAMPLE = "calibration_sample", "a seeded random sample of the calibration split"
    SPLIT_VOTES = "split_votes", "selected: a judge's samples disagree"
    INCONSISTENT_PAIRS = "inconsistent_pairs", "selected: a pairwise verdict changed with order"
    CHOSEN = "chosen", "selected: chosen by hand or by a panel's ties and dissent"


RANDOM_SELECTIONS = (LabelSelection.HELD_OUT, LabelSelection.CALIBRATION_SAMPLE)


class LabelRequest(AppendOnlyModel):
    """One item put before people for one criterion, and why: the record an estimate reads to
    know whether a label came from a random draw (prediction-powered inference is valid only on
    those, docs/estimates.md). One row per item and selection (a second send of the same
    selection adds nothing); an item sent by a selection and later drawn at random has both.
    Imported human labels have none: their selection is unknown."""

    criterion = models.ForeignKey(
        Criterion, db_index=False, on_delete=models.CASCADE, related_name="label_requests"
    )
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    selection = models.CharField(max_length=32, choices=LabelSelection.choices)
    seed = models.BigIntegerField(null=True, blank=True, help_text="A random sample's seed.")
    sample_size = models.PositiveIntegerField(
        null=True, blank=True, help_text="A random sample's n."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["criterion", "item", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["criterion", "item", "selection"], name="labelrequest_unique_selection"
            ),
            models.CheckConstraint(
                condition=Q(selection__in=LabelSelection.values),
                name="labelrequest_selection_valid",
            ),
        ]

    def __str__(self):
        return f"{self.item} for {self.criterion}: {self.selection}"


class Split(models.TextChoices):
    CALIBRATION = "calibration", "Calibration"
    HELD_OUT = "held_out", "Held-out"


class SplitDraw(models.Model):
    """One seeded, slice-stratified draw of a project's items into calibration and held-out."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="split_draws")
    seed = models.BigIntegerField()
    held_out_fraction = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(User, null=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["project", "-created_at"]
        constraints = [
            fraction_check("held_out_fraction", "splitdraw_fraction_in_0_1", open_ends=True)
        ]

    def __str__(self):
        return f"draw {self.pk} (seed {self.seed}, held-out {self.held_out_fraction:g})"


class ItemSplit(models.Model):
    item = models.OneToOneField(Item, on_delete=models.CASCADE, related_name="split")
    draw = models.ForeignKey(SplitDraw, on_delete=models.CASCADE, related_name="assignments")
    split = models.CharField(max_length=16, choices=Split.choices)
    late = models.BooleanField(
        default=False, help_text="Drawn after the first draw, by the late-item rule (see splits)."
    )

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(split__in=Split.values), name="itemsplit_valid"),
        ]
        indexes = [models.Index(fields=["split"])]

    def __str__(self):
        return f"{self.item_id}: {self.split}"


class HeldOutAccess(AppendOnlyModel):
    """Every view of held-out figures, so peeking while tuning rubrics leaves a trace."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(User, null=True, on_delete=models.SET_NULL, related_name="+")
    what = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "held-out access"
        ordering = ["-created_at"]


class GateSetting(models.Model):
    """A project's gate for one criterion (defaults: kappa lower bound >= 0.6 with n >= 50)."""

    project = models.ForeignKey(
        Project, db_index=False, on_delete=models.CASCADE, related_name="gate_settings"
    )
    criterion = models.CharField(max_length=100)
    min_lower = models.FloatField(default=0.6, help_text="Cohen's kappa: lower 95% CI bound.")
    min_n = models.PositiveIntegerField(default=50, help_text="Held-out items with both labels.")
    max_ci_width = models.FloatField(default=0.3, help_text="Wider: warn that n is too small.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "criterion"], name="gatesetting_unique"),
        ]

    def __str__(self):
        return f"{self.criterion}: kappa lower >= {self.min_lower}, n >= {self.min_n}"


class DashboardSnapshot(AppendOnlyModel):
    """Every figure of a project's dashboard at one moment, with a fingerprint of its inputs."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    computed_at = models.DateTimeField(auto_now_add=True, db_index=True)
    fingerprint = models.TextField()
    payload = models.JSONField()

    class Meta:
        ordering = ["project", "-computed_at"]


DEFAULT_FAILURE_BUCKETS = (
    "task ambiguity",
    "context omission",
    "model reasoning",
    "grader/judge error",
    "slice regression",
)


class FailureBucket(models.Model):
    """Why a judge and the people disagree; the list is editable per project."""

    project = models.ForeignKey(
        Project, db_index=False, on_delete=models.CASCADE, related_name="failure_buckets"
    )
    name = models.CharField(max_length=100)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["project", "position", "name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="failurebucket_unique"),
        ]

    def __str__(self):
        return self.name


class FailureTag(AppendOnlyModel):
    """An adjudicator's diagnosis of one disagreement; re-tagging adds a row (latest counts)."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="failure_tags")
    criterion = models.CharField(max_length=100)
    judge = models.CharField(max_length=300)
    bucket = models.ForeignKey(
        FailureBucket, null=True, blank=True, on_delete=models.PROTECT, related_name="tags"
    )
    note = models.TextField(blank=True)
    tagged_by = models.ForeignKey(User, null=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item", "criterion", "judge", "created_at"]


# Judge configurations, runs and calls: their own module (see its docstring).
from judging.models_runs import (  # noqa: E402, F401
    Call,
    CallStatus,
    EvidenceMode,
    JudgeConfig,
    JudgeVersion,
    ModelPrice,
    Panel,
    PanelMember,
    PanelRule,
    ProjectBudget,
    Run,
    RunClaim,
    RunStatus,
)

# Score runs (predictions scored against ground truth): their own module.
from judging.models_scoring import ScoreRun  # noqa: E402, F401
