"""The review workflow: assignments, answers, resolutions, approvals, the timeline and imports."""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from reviews.models.append_only import AppendOnlyModel
from reviews.models.items import Item, Question, Reference
from reviews.models.projects import Project

User = settings.AUTH_USER_MODEL


class AssignmentBatch(models.Model):
    """Items pre-assigned to named raters (by slice, count or seeded sample), with an overlap."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="batches")
    name = models.CharField(max_length=200)
    overlap = models.PositiveSmallIntegerField(null=True, blank=True)
    selection = models.JSONField(default=dict, help_text="How the items were chosen (and seed).")
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(User, null=True, on_delete=models.SET_NULL, related_name="+")

    def __str__(self):
        return self.name


class AssignmentStatus(models.TextChoices):
    ASSIGNED = "assigned", "Assigned"  # pre-assigned, not opened yet
    ACTIVE = "active", "In progress"  # claimed, lease running
    SUBMITTED = "submitted", "Submitted"
    SKIPPED = "skipped", "Skipped"
    EXPIRED = "expired", "Lease expired"


# Statuses that hold one of the item's overlap places.
HOLDING_STATUSES = (AssignmentStatus.ASSIGNED, AssignmentStatus.ACTIVE, AssignmentStatus.SUBMITTED)


class Assignment(models.Model):
    item = models.ForeignKey(
        Item, db_index=False, on_delete=models.CASCADE, related_name="assignments"
    )
    rater = models.ForeignKey(
        User, db_index=False, on_delete=models.PROTECT, related_name="assignments"
    )
    batch = models.ForeignKey(
        AssignmentBatch,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="assignments",
    )
    status = models.CharField(
        max_length=16, choices=AssignmentStatus.choices, default=AssignmentStatus.ACTIVE
    )
    claimed_at = models.DateTimeField(auto_now_add=True)
    opened_at = models.DateTimeField(null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    skip_reason = models.TextField(blank=True)
    # Orders recorded by earlier versions; new ones are derived (services.assignment.pairwise_order).
    pairwise_orders = models.JSONField(
        default=dict,
        blank=True,
        help_text='Display order per pairwise question: {"12": ["B","A"]}.',
    )
    # A gold item served to check the rater (never shown to them): its answers are scored
    # against the item's known answer and never take part in its resolution.
    gold = models.BooleanField(default=False)

    class Meta:
        ordering = ["-claimed_at"]
        constraints = [
            # One live or finished assignment per rater and item: never twice the same rater.
            models.UniqueConstraint(
                fields=["item", "rater"],
                condition=Q(status__in=HOLDING_STATUSES),
                name="assignment_one_holding_per_rater",
            ),
            models.CheckConstraint(
                condition=Q(status__in=AssignmentStatus.values), name="assignment_status_valid"
            ),
        ]
        indexes = [
            models.Index(fields=["rater", "status"]),
            models.Index(fields=["item", "status"]),
            models.Index(fields=["status", "lease_expires_at"]),  # the lease sweep
        ]

    def __str__(self):
        return f"{self.rater} on {self.item} ({self.status})"


class Decision(models.TextChoices):
    """What an answer or resolution says: a field is set or omitted, a criterion gets a label,
    a pair gets A, B or tie; `unclear` is a rater's flag that the evidence does not decide."""

    SET = "set", "Set a value"
    OMIT = "omit", "Omit"
    LABEL = "label", "Label"
    A = "A", "A"
    B = "B", "B"
    TIE = "tie", "Tie"
    UNCLEAR = "unclear", "Unclear"


# The one list of what each kind of question can be answered with. `unclear` is a rater's flag
# that the evidence does not decide, never an adjudicator's decision.
_DECISIONS_BY_KIND = {
    "field": (Decision.SET, Decision.OMIT, Decision.UNCLEAR),
    "criterion": (Decision.LABEL, Decision.UNCLEAR),
    "pairwise": (Decision.A, Decision.B, Decision.TIE, Decision.UNCLEAR),
}


def decisions_for(kind: str, *, adjudicator: bool = False) -> tuple[str, ...]:
    """The decisions a rater (or, without `unclear`, an adjudicator) may give a `kind` question."""
    allowed = _DECISIONS_BY_KIND[kind]
    return tuple(d for d in allowed if d != Decision.UNCLEAR) if adjudicator else allowed


def label_problem(labels: list[str], value) -> str | None:
    """Why `value` cannot be a criterion question's label (None: it can). A question with no
    labels is answered in free text: anything but nothing."""
    if not labels:
        return None if isinstance(value, str) and value.strip() else "Type an answer."
    if value not in labels:
        return f"{value!r} is not one of the labels: {', '.join(labels)}."
    return None


class Answer(AppendOnlyModel):
    """A rater's answer to a question; every change is a new row with the next `seq`."""

    question = models.ForeignKey(
        Question, db_index=False, on_delete=models.CASCADE, related_name="answers"
    )
    rater = models.ForeignKey(User, on_delete=models.PROTECT, related_name="answers")
    assignment = models.ForeignKey(
        Assignment, null=True, blank=True, on_delete=models.PROTECT, related_name="answers"
    )
    seq = models.PositiveIntegerField(help_text="1 for the first answer, then +1 per change.")
    decision = models.CharField(max_length=16, choices=Decision.choices)
    value = models.JSONField(null=True, blank=True)
    chosen_claim = models.ForeignKey(
        "reviews.Claim", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    flagged = models.BooleanField(default=False)
    note = models.TextField(blank=True)
    revision = models.PositiveIntegerField(
        default=1, db_default=1, help_text="The item's, when given."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["question", "rater", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["question", "rater", "seq"], name="answer_unique_seq"),
            models.CheckConstraint(
                condition=Q(decision__in=Decision.values),
                name="answer_decision_valid",
            ),
        ]

    def __str__(self):
        return f"{self.rater} #{self.seq}: {self.decision} {self.value!r}"


class Resolution(AppendOnlyModel):
    """The final human answer to a question, and the answers it came from."""

    class Method(models.TextChoices):
        UNANIMOUS = "unanimous", "Unanimous"
        MAJORITY = "majority", "Majority"
        ADJUDICATED = "adjudicated", "Adjudicated"
        IMPORTED = "imported", "Imported"
        SUPERSEDED = "superseded", "Superseded by a later file that settles the path"

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="resolutions")
    decision = models.CharField(max_length=16, choices=Decision.choices)
    value = models.JSONField(null=True, blank=True)
    method = models.CharField(max_length=16, choices=Method.choices)
    decided_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    reason = models.TextField(blank=True)
    source_answers = models.ManyToManyField(
        Answer, blank=True, related_name="+", through="ResolutionSource"
    )
    supersedes = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="superseded_by"
    )
    revision = models.PositiveIntegerField(
        default=1, db_default=1, help_text="The item's, when settled."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["question", "created_at"]

    def __str__(self):
        return f"{self.question}: {self.decision} {self.value!r} ({self.method})"


class ResolutionSource(AppendOnlyModel):
    """Which answers a resolution came from: history too, so the links cannot be edited."""

    resolution = models.ForeignKey(
        Resolution, db_index=False, on_delete=models.CASCADE, related_name="+"
    )
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["resolution", "answer"], name="resolutionsource_unique"
            ),
        ]


class Approval(AppendOnlyModel):
    """A signed record promoting an item's generated reference to a new ground-truth version.

    `sequence` numbers an item's approvals (1, then 2 for the first correction, …): the unique
    constraint is what lets exactly one of two simultaneous approvers win.
    """

    item = models.ForeignKey(
        Item, db_index=False, on_delete=models.CASCADE, related_name="approvals"
    )
    sequence = models.PositiveIntegerField()
    reference = models.OneToOneField(Reference, on_delete=models.PROTECT, related_name="approval")
    approver = models.ForeignKey(
        User,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="approvals",
        help_text="Empty for an approval imported from a signed file.",
    )
    approver_name = models.CharField(max_length=254, help_text="As exported: e-mail or username.")
    imported_from = models.CharField(max_length=255, blank=True)
    approved_at = models.DateTimeField()
    sha256 = models.CharField(max_length=64)
    signature = models.TextField(help_text="Base64 Ed25519 signature.")
    algorithm = models.CharField(max_length=16, default="ed25519")
    key_id = models.CharField(max_length=64)
    statement = models.TextField()
    correction_reason = models.TextField(blank=True)
    signed = models.JSONField(
        default=dict,
        blank=True,
        help_text="The signed payload's fields except rows (reviews/formats/signed.py); "
        "empty for a format-1 approval, which signed the rows alone.",
    )

    class Meta:
        ordering = ["item", "sequence"]
        constraints = [
            models.UniqueConstraint(fields=["item", "sequence"], name="approval_unique_sequence"),
        ]

    def __str__(self):
        return f"Approval {self.sequence} of {self.item} by {self.approver}"


class EventKind(models.TextChoices):
    """What a timeline line records; written only through `reviews.services.events`."""

    IMPORTED = "imported", "Imported"
    GENERATED = "generated", "Generated by a panel of models"
    UPDATED = "updated", "Updated by an import"
    QUESTION_ADDED = "question_added", "Question added"
    REOPENED = "reopened", "Re-opened: settled questions asked again"
    ASSIGNED = "assigned", "Assigned"
    SKIPPED = "skipped", "Skipped"
    ANSWERED = "answered", "Answered"
    SUBMITTED = "submitted", "Submitted"
    NEEDS_ADJUDICATION = "needs_adjudication", "Needs adjudication"
    RESOLVED = "resolved", "Resolved"
    ADJUDICATED = "adjudicated", "Adjudicated"
    CORRECTED = "corrected", "Adjudication corrected"
    APPROVED = "approved", "Approved"
    APPROVAL_IMPORTED = "approval_imported", "Approval imported"
    EXPORTED = "exported", "Exported"


class Event(AppendOnlyModel):
    """One line of an item's timeline: who did what, when. Never changed, never deleted."""

    # Both checked by a trigger once a statement on PostgreSQL (evalsite/reference_triggers.py).
    item = models.ForeignKey(
        Item, on_delete=models.CASCADE, related_name="events", db_constraint=False
    )
    # Read by item only (the timeline, oldest first): no index on the actor or the time, which
    # every imported item's line paid for and no query used.
    actor = models.ForeignKey(
        User,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )
    kind = models.CharField(max_length=32, choices=EventKind.choices)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item", "created_at", "id"]
        indexes = [
            # The generation page lists a project's latest `generated` lines: a few among
            # millions of lines, so a partial index of those only (imports pay nothing for it).
            models.Index(
                fields=["-id"], condition=Q(kind="generated"), name="event_generated_latest"
            ),
        ]

    def __str__(self):
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.kind}"


def import_upload_path(job: "ImportJob", filename: str) -> str:
    """Each upload in a folder of its own, per project: a review file resolves the evidence it
    cites next to itself, so it can reach only what came with it (a .zip bundle's members)."""
    return f"imports/{job.project.slug}/{uuid.uuid4().hex}/{filename}"


class ImportJob(models.Model):
    """A file import running in the background; polled by the upload page for progress."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="import_jobs")
    created_by = models.ForeignKey(User, null=True, on_delete=models.SET_NULL, related_name="+")
    file = models.FileField(upload_to=import_upload_path, max_length=255)
    original_name = models.CharField(max_length=255)
    format = models.CharField(max_length=16, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    records_done = models.PositiveIntegerField(default=0)
    records_total = models.PositiveIntegerField(null=True, blank=True)
    report = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.original_name} ({self.status})"

    @property
    def percent(self) -> int | None:
        if not self.records_total:
            return None
        return min(100, round(100 * self.records_done / self.records_total))
