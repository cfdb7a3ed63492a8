"""Evidence documents, items, their references, candidate claims and the questions people answer."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from reviews.models.append_only import AppendOnlyModel
from reviews.models.constraints import fraction_check
from reviews.models.projects import Project, Slice


class DocumentKind(models.TextChoices):
    PDF = "pdf", "PDF"
    IMAGE = "image", "Image"


class Document(models.Model):
    """An evidence file, stored once by content (SHA-256) whatever its name or project."""

    sha256 = models.CharField(max_length=64, unique=True)
    kind = models.CharField(max_length=8, choices=DocumentKind.choices)
    mime = models.CharField(max_length=64)
    file = models.FileField(upload_to="documents/", max_length=255)
    original_name = models.CharField(max_length=255, blank=True)
    page_count = models.PositiveIntegerField()
    page_sizes = models.JSONField(
        default=list, help_text="Per page [width, height]: points (PDF) or pixels (image)."
    )
    size_bytes = models.PositiveBigIntegerField()
    width = models.PositiveIntegerField(null=True, blank=True, help_text="Images only, pixels.")
    height = models.PositiveIntegerField(null=True, blank=True, help_text="Images only, pixels.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(page_count__gte=1), name="document_has_pages"),
            models.CheckConstraint(
                condition=Q(kind__in=DocumentKind.values), name="document_kind_valid"
            ),
        ]

    def __str__(self):
        return self.original_name or self.sha256[:12]


class ItemStatus(models.TextChoices):
    OPEN = "open", "Open"  # questions wait for raters
    ADJUDICATION = "adjudication", "Needs adjudication"
    RESOLVED = "resolved", "Resolved"  # every question settled; ready for approval
    APPROVED = "approved", "Approved"


class Item(models.Model):
    """One thing to review: a statement with its extraction, a TextFlow sample, a pair of answers."""

    # Indexed with the id (Meta.indexes): the item list's order, and the project's look-ups.
    # Checked by a trigger once a statement on PostgreSQL (evalsite/reference_triggers.py).
    project = models.ForeignKey(
        Project,
        on_delete=models.CASCADE,
        related_name="items",
        db_index=False,
        db_constraint=False,
    )
    external_id = models.CharField(max_length=200)
    title = models.CharField(max_length=300, blank=True)
    input = models.JSONField(null=True, blank=True)
    output = models.JSONField(null=True, blank=True)
    expected = models.JSONField(null=True, blank=True, help_text="A reference answer, if any.")
    metadata = models.JSONField(default=dict, blank=True)
    slices = models.ManyToManyField(Slice, blank=True, related_name="items", through="ItemSlice")
    status = models.CharField(max_length=16, choices=ItemStatus.choices, default=ItemStatus.OPEN)
    overlap = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="Overrides the project's overlap (e.g. a calibration batch).",
    )
    revision = models.PositiveIntegerField(
        default=1,
        db_default=1,  # also for rows written by raw SQL
        help_text="The current revision of its content (input, output, reference, evidence).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["project", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="item_unique_external_id"
            ),
            models.CheckConstraint(
                condition=Q(status__in=ItemStatus.values), name="item_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(overlap__isnull=True) | Q(overlap__gte=1), name="item_overlap_gte_1"
            ),
            models.CheckConstraint(condition=Q(revision__gte=1), name="item_revision_gte_1"),
        ]
        indexes = [
            models.Index(fields=["project", "id"], name="item_project_id"),
            models.Index(fields=["project", "status", "id"]),
            # The adjudication and approval queues: longest waiting first, keyset pages.
            models.Index(fields=["project", "status", "updated_at", "id"]),
        ]

    def __str__(self):
        return self.title or self.external_id

    @property
    def effective_overlap(self) -> int:
        return self.overlap or self.project.overlap


class ItemRevision(AppendOnlyModel):
    """The content an item had at revision `number`, kept when an import replaced it.

    The current revision's content is the item's own fields (`Item.revision` numbers it), so
    a new item writes no row here; a re-import that changes the content writes the replaced
    one. Verdicts, judge calls, human labels and answers record the revision they were given
    on; figures count only those on the current one (reviews.services.revisions)."""

    item = models.ForeignKey(
        Item, db_index=False, on_delete=models.CASCADE, related_name="revisions"
    )
    number = models.PositiveIntegerField()
    input = models.JSONField(null=True, blank=True)
    output = models.JSONField(null=True, blank=True)
    expected = models.JSONField(null=True, blank=True)
    evidence = models.JSONField(default=list, blank=True, help_text="Artifact ids, sorted.")
    sha256 = models.CharField(max_length=64, help_text="The content fingerprint.")
    replaced_by_file = models.CharField(max_length=255, blank=True)
    replaced_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item", "number"]
        constraints = [
            models.UniqueConstraint(fields=["item", "number"], name="itemrevision_unique"),
            models.CheckConstraint(condition=Q(number__gte=1), name="itemrevision_number_gte_1"),
        ]

    def __str__(self):
        return f"{self.item_id} r{self.number}"


class ItemSlice(models.Model):
    """An item's membership of a slice: `Item.slices`' link table (2-3 rows an item).

    Its two references are checked by the database once per statement, not once per row: the
    triggers of migration 0018 refuse a link to a missing item or slice, and deleting or
    renumbering an item or slice that links still name, as foreign keys would. Foreign keys
    check row by row: 40% of a 100k-item PostgreSQL import's server time (bench/README.md).
    Only a TRUNCATE of the item or slice table alone escapes the triggers.
    """

    item = models.ForeignKey(Item, on_delete=models.CASCADE, db_constraint=False, db_index=False)
    slice = models.ForeignKey(Slice, on_delete=models.CASCADE, db_constraint=False)

    class Meta:
        db_table = "reviews_item_slices"
        unique_together = [("item", "slice")]  # also the index by item

    def __str__(self):
        return f"{self.item_id} in {self.slice_id}"


class ItemSource(models.Model):
    """One cited artifact of an item: a document, optionally narrowed to a page."""

    item = models.ForeignKey(Item, db_index=False, on_delete=models.CASCADE, related_name="sources")
    artifact_id = models.CharField(max_length=200)
    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="sources")
    path = models.CharField(max_length=500, help_text="The path the import file gave.")
    page = models.PositiveIntegerField(null=True, blank=True, help_text="1-based.")
    authority = models.CharField(max_length=32, default="evidence")
    metadata = models.JSONField(default=dict, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["item", "position"]
        constraints = [
            models.UniqueConstraint(fields=["item", "artifact_id"], name="itemsource_unique"),
            models.CheckConstraint(
                condition=Q(page__isnull=True) | Q(page__gte=1), name="itemsource_page_gte_1"
            ),
        ]

    def __str__(self):
        return self.artifact_id


class Authority(models.TextChoices):
    EVIDENCE = "evidence", "Evidence"
    GENERATED = "generated", "Generated"
    GROUND_TRUTH = "ground_truth", "Ground truth"


class Reference(AppendOnlyModel):
    """A versioned, immutable body of `path -> value` rows about an item.

    `version` counts across all of an item's references; `supersedes` points at the previous
    reference of the same authority, so a correction never hides the version it replaced.
    """

    item = models.ForeignKey(
        Item, db_index=False, on_delete=models.CASCADE, related_name="references"
    )
    authority = models.CharField(max_length=16, choices=Authority.choices)
    version = models.PositiveIntegerField()
    supersedes = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="superseded_by"
    )
    derived_from = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="derivatives",
        help_text="For ground truth: the generated reference it was resolved from.",
    )
    rows = models.JSONField(help_text='[{"path": ..., "expected_value": ...}] sorted by path.')
    sha256 = models.CharField(max_length=64, help_text="SHA-256 of the canonical rows.")
    reason = models.TextField(blank=True)
    source_name = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        ordering = ["item", "version"]
        constraints = [
            models.UniqueConstraint(fields=["item", "version"], name="reference_unique_version"),
            models.CheckConstraint(
                condition=Q(authority__in=Authority.values), name="reference_authority_valid"
            ),
            models.CheckConstraint(condition=Q(version__gte=1), name="reference_version_gte_1"),
        ]

    def __str__(self):
        return f"{self.item} v{self.version} ({self.authority})"


class QuestionKind(models.TextChoices):
    FIELD = "field", "Field"
    CRITERION = "criterion", "Criterion"
    PAIRWISE = "pairwise", "Pairwise"


class QuestionReason(models.TextChoices):
    """Why a field question was raised (the review file's `reason`), in words for people."""

    DISAGREEMENT = "disagreement", "Models disagree"
    OMITTED_BY_SOME = "omitted_by_some", "Omitted by some models"
    OMITTED_BY_ALL = "omitted_by_all", "Omitted by every model"
    LOW_CONFIDENCE = "low_confidence", "Low confidence"
    CONTENT_CHANGED = "content_changed", "Asked again: the output changed"
    REOPENED = "reopened", "Asked again by the project's admin"


class QuestionStatus(models.TextChoices):
    OPEN = "open", "Open"
    ADJUDICATION = "adjudication", "Needs adjudication"
    RESOLVED = "resolved", "Resolved"


class Question(models.Model):
    """What a person must answer on an item.

    `key` identifies the question within its item: the JSON path of a field question, the
    criterion name of a criterion or pairwise question. Criterion questions carry a snapshot of
    the criterion (labels, text, version) so the review workflow never depends on judging.
    """

    # No index of its own: (item, kind, key) and (item, status) below both start with it, and an
    # import wrote a third index entry per question for nothing.
    # Checked by a trigger once a statement on PostgreSQL (evalsite/reference_triggers.py).
    item = models.ForeignKey(
        Item,
        on_delete=models.CASCADE,
        related_name="questions",
        db_index=False,
        db_constraint=False,
    )
    kind = models.CharField(max_length=16, choices=QuestionKind.choices)
    key = models.CharField(max_length=300)
    reason = models.CharField(
        max_length=32, blank=True, choices=QuestionReason.choices, help_text="Why it is disputed."
    )
    labels = models.JSONField(default=list, blank=True, help_text="Criterion label set.")
    criterion_version = models.CharField(max_length=32, blank=True)
    prompt = models.TextField(blank=True, help_text="The criterion text shown to raters.")
    options = models.JSONField(
        default=dict, blank=True, help_text='Pairwise answers: {"A": ..., "B": ...}.'
    )
    status = models.CharField(
        max_length=16, choices=QuestionStatus.choices, default=QuestionStatus.OPEN
    )
    position = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item", "position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["item", "kind", "key"], name="question_unique_key"),
            models.CheckConstraint(
                condition=Q(kind__in=QuestionKind.values), name="question_kind_valid"
            ),
            models.CheckConstraint(
                condition=Q(status__in=QuestionStatus.values), name="question_status_valid"
            ),
        ]
        indexes = [models.Index(fields=["item", "status"])]

    def __str__(self):
        return f"{self.get_kind_display()} {self.key}"


class Claim(models.Model):
    """One candidate value for one path, from one or more providers, with cited evidence.

    Consensus claims (no question) are the rows of the generated reference; candidate claims
    belong to the field question they dispute.
    """

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="claims")
    question = models.ForeignKey(
        Question, null=True, blank=True, on_delete=models.CASCADE, related_name="candidates"
    )
    path = models.CharField(max_length=300)
    value = models.JSONField(null=True, blank=True)
    providers = models.JSONField(default=list)
    source = models.ForeignKey(
        ItemSource, null=True, blank=True, on_delete=models.SET_NULL, related_name="claims"
    )
    page = models.PositiveIntegerField(null=True, blank=True, help_text="1-based, if known.")
    quote = models.TextField(blank=True)
    bbox = models.JSONField(null=True, blank=True, help_text="[x0, y0, x1, y1] in PDF points.")
    confidence = models.FloatField(null=True, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["item", "question", "position"]
        constraints = [fraction_check("confidence", "claim_confidence_in_0_1", nullable=True)]

    def __str__(self):
        return f"{self.path} = {self.value!r}"

    @property
    def provider_label(self) -> str:
        return ", ".join(self.providers)
