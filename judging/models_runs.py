"""Judges run from Evalsite: named configurations, their immutable versions, runs and calls.

Imported at the end of judging/models.py (Django finds models there); kept apart so neither file
grows past a page.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from reviews.models import AppendOnlyModel, Item, Project

User = settings.AUTH_USER_MODEL


class NamedInProject(models.Model):
    """A row a project names with a slug, unique in that project (a judge, a panel)."""

    name = models.SlugField(max_length=100)

    class Meta:
        abstract = True
        ordering = ["project", "name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="%(class)s_unique_name"),
        ]

    def __str__(self):
        return self.name


class JudgeConfig(NamedInProject):
    """A named judge of a project. Everything it judges with and where it reaches its model
    (provider, model, endpoint, evidence, prompt, limits) lives in its versions."""

    project = models.ForeignKey(
        Project, db_index=False, on_delete=models.CASCADE, related_name="judge_configs"
    )
    created_at = models.DateTimeField(auto_now_add=True)


class EvidenceMode(models.TextChoices):
    """What a judge sees of an item's evidence besides its text."""

    NONE = "none", "Text only"
    PAGES = "pages", "Every evidence page, as images"
    CITED = "cited", "Only the pages the item's claims cite"


class JudgeVersion(AppendOnlyModel):
    """One version of a judge: never edited; any change is a new version with its own SHA-256.
    `judge` is the Judge row its verdicts are written under (as an import would write them)."""

    config = models.ForeignKey(
        JudgeConfig, db_index=False, on_delete=models.CASCADE, related_name="versions"
    )
    number = models.PositiveIntegerField()
    provider = models.CharField(max_length=32)
    model = models.CharField(max_length=200)
    temperature = models.FloatField(null=True, blank=True)
    samples = models.PositiveSmallIntegerField(default=1)
    criterion = models.ForeignKey(
        "judging.Criterion",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Empty: a ground-truth reader (reads evidence, returns claims).",
    )
    prompt = models.TextField()
    prompt_sha256 = models.CharField(max_length=64)
    base_url = models.URLField(max_length=500, blank=True, help_text="Empty: the API's default.")
    api_key_env = models.CharField(
        max_length=100,
        blank=True,
        help_text="The environment variable holding the key (the key itself is never stored).",
    )
    evidence = models.CharField(
        max_length=8, choices=EvidenceMode.choices, default=EvidenceMode.NONE
    )
    max_pages = models.PositiveSmallIntegerField(
        default=8, help_text="Evidence pages sent per call at most; the others are named."
    )
    timeout_seconds = models.PositiveSmallIntegerField(default=120)
    max_retries = models.PositiveSmallIntegerField(default=4)
    concurrency = models.PositiveSmallIntegerField(
        default=4, help_text="Calls in flight at once, at most."
    )
    judge = models.ForeignKey(
        "judging.Judge", null=True, on_delete=models.PROTECT, related_name="versions"
    )
    created_by = models.ForeignKey(User, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["config", "number"]
        constraints = [
            models.UniqueConstraint(fields=["config", "number"], name="judgeversion_unique"),
            models.CheckConstraint(condition=Q(samples__gte=1), name="judgeversion_samples"),
            models.CheckConstraint(
                condition=Q(max_pages__gte=1) & Q(concurrency__gte=1) & Q(timeout_seconds__gte=1),
                name="judgeversion_limits",
            ),
        ]

    def __str__(self):
        return f"{self.config.name} v{self.number}"

    @property
    def ref(self) -> str:
        """How commands and reports name this version: `NAME@VERSION`."""
        return f"{self.config.name}@{self.number}"


class ModelPrice(AppendOnlyModel):
    """What a model costs from `effective_from` on, in USD per million tokens. Append-only: a new
    price is a new row (`manage.py model_price` or the admin); every call stores the row in
    force when it was made, so a past run's cost never moves."""

    provider = models.CharField(max_length=32)
    model = models.CharField(max_length=200)
    input_per_million = models.DecimalField(max_digits=10, decimal_places=4, default=0)
    output_per_million = models.DecimalField(max_digits=10, decimal_places=4, default=0)
    effective_from = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(User, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["provider", "model", "-effective_from"]
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "model", "effective_from"], name="modelprice_unique_from"
            ),
        ]

    def __str__(self):
        return f"{self.provider}/{self.model} from {self.effective_from:%Y-%m-%d %H:%M}"


class RunStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    CANCELLING = "cancelling"
    CANCELLED = "cancelled"
    DONE = "done"
    FAILED = "failed"
    INTERRUPTED = "interrupted"  # its worker died (no heartbeat): resumable
    BUDGET_REACHED = "budget_reached"  # the next call would pass a budget: resumable


class Run(models.Model):
    """One run of a judge version over a split. Counters move as calls finish."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="runs")
    version = models.ForeignKey(JudgeVersion, on_delete=models.PROTECT, related_name="runs")
    split = models.CharField(max_length=16, default="calibration")
    limit = models.PositiveIntegerField(null=True, blank=True)
    concurrency = models.PositiveSmallIntegerField(default=4)
    workers = models.PositiveSmallIntegerField(
        default=1,
        help_text="Task workers sharing the run (RUN_WORKERS): each keeps its share of "
        "`concurrency` calls in flight, on items it claimed (RunClaim).",
    )
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED)
    planned = models.PositiveIntegerField(default=0, help_text="Calls this run needs in all.")
    reused = models.PositiveIntegerField(default=0, help_text="Finished earlier: not repeated.")
    done = models.PositiveIntegerField(default=0)
    unparsed = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(
        default=0, help_text="Items the judge cannot judge (a pair without answers A and B)."
    )
    budget_usd = models.DecimalField(
        max_digits=12,
        decimal_places=4,
        null=True,
        blank=True,
        help_text="The most this run may cost, at its calls' stored costs (empty: no limit).",
    )
    input_tokens = models.PositiveBigIntegerField(default=0)
    output_tokens = models.PositiveBigIntegerField(default=0)
    error = models.TextField(blank=True)
    confirmed_held_out = models.BooleanField(default=False)
    from_site = models.BooleanField(
        default=False,
        help_text="Started from the site: a starting worker resumes it if interrupted.",
    )
    created_by = models.ForeignKey(User, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="Last progress write.")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"run {self.pk} of {self.version} on {self.split}"


class CallStatus(models.TextChoices):
    DONE = "done"
    UNPARSED = "unparsed"
    FAILED = "failed"


class RunClaim(models.Model):
    """An item still to judge in a run shared by several workers: empty `worker` while nobody
    has it; a worker takes a few at a time (skip-locked on PostgreSQL) and deletes each once its
    calls are recorded. A claim not refreshed for RUN_STALE_SECONDS (its worker died) is taken
    again; the calls its worker recorded are not made twice (Call fingerprints)."""

    run = models.ForeignKey(Run, db_index=False, on_delete=models.CASCADE, related_name="claims")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    worker = models.CharField(max_length=64, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "item"], name="run_claim_once"),
        ]
        indexes = [models.Index(fields=["run", "worker"], name="run_claim_worker")]

    def __str__(self):
        return f"run {self.run_id}, item {self.item_id}: {self.worker or 'free'}"


class Call(models.Model):
    """One model call. A finished call (done or unparsed) is unique by fingerprint: a rerun
    reuses it and never pays for it twice; a failed one is kept for the record and retried."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="calls")
    item = models.ForeignKey(
        Item,
        null=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="Empty: a blind "
        "read of evidence made before its item existed (ground-truth generation).",
    )
    fingerprint = models.CharField(max_length=64)
    revision = models.PositiveIntegerField(
        default=1, db_default=1, help_text="The item's, when asked."
    )
    sample = models.PositiveSmallIntegerField(default=0)
    display_order = models.CharField(max_length=2, blank=True)
    status = models.CharField(max_length=16, choices=CallStatus.choices)
    request = models.JSONField(help_text="What was sent (images by SHA-256 and page).")
    reply = models.TextField(blank=True, help_text="The model's raw text.")
    error = models.TextField(blank=True)
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=1)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    price = models.ForeignKey(
        ModelPrice,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The price in force when the call was made (empty: none was).",
    )
    cost_usd = models.DecimalField(
        max_digits=20,
        decimal_places=10,
        null=True,
        blank=True,
        help_text="Fixed at call time from `price`; a reply without usage counts its tokens as 0.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "item", "sample"]
        constraints = [
            models.UniqueConstraint(
                fields=["fingerprint"],
                condition=~Q(status="failed"),
                name="call_finished_once",
            ),
        ]
        indexes = [models.Index(fields=["fingerprint"])]

    def __str__(self):
        return f"call {self.fingerprint[:12]} ({self.status})"


class ProjectBudget(models.Model):
    """A project's monthly spending cap on model calls, set by an admin: a judge or generation
    run stops before the call that would pass it (calls of the calendar month, UTC)."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="budget")
    monthly_usd = models.DecimalField(max_digits=12, decimal_places=4)
    updated_by = models.ForeignKey(User, null=True, on_delete=models.SET_NULL, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(monthly_usd__gte=0), name="projectbudget_gte_0"),
        ]

    def __str__(self):
        return f"{self.project} ${self.monthly_usd}/month"


class PanelRule(models.TextChoices):
    MAJORITY = "majority"
    UNANIMOUS = "unanimous"


class Panel(NamedInProject):
    """Pinned members and a vote rule: samples vote inside their model group, each group once
    (judging.metrics.voting). Ties, and dissent when chosen, go to human review."""

    project = models.ForeignKey(
        Project, db_index=False, on_delete=models.CASCADE, related_name="panels"
    )
    rule = models.CharField(max_length=16, choices=PanelRule.choices, default=PanelRule.MAJORITY)
    send_dissent = models.BooleanField(
        default=False, help_text="Also send items the panel decided with a dissenting model."
    )


class PanelMember(models.Model):
    """One member of a panel, pinned: a judge version (`NAME@VERSION`), or an imported judge
    (no configuration, so no version). A new version of a member's judge is not a member."""

    panel = models.ForeignKey(Panel, on_delete=models.CASCADE, related_name="members")
    judge = models.ForeignKey(
        "judging.Judge",
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The judge whose verdicts the member votes with.",
    )
    version = models.ForeignKey(
        JudgeVersion,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Empty: an imported judge.",
    )

    class Meta:
        ordering = ["panel", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["panel", "version"],
                condition=Q(version__isnull=False),
                name="panelmember_unique_version",
            ),
            models.UniqueConstraint(
                fields=["panel", "judge"],
                condition=Q(version__isnull=True),
                name="panelmember_unique_imported",
            ),
        ]

    def __str__(self):
        return self.version.ref if self.version_id else self.judge.name
