"""Projects, memberships and the things a project owns that are not items (slices, API tokens)."""

from django.conf import settings
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models
from django.urls import reverse


class ResolutionRule(models.TextChoices):
    UNANIMOUS = "unanimous", "Unanimous"
    MAJORITY = "majority", "Majority"


class Project(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    instructions = models.TextField(
        blank=True,
        help_text="Guidelines for raters (Markdown), shown beside every question.",
    )
    overlap = models.PositiveSmallIntegerField(
        default=2,
        validators=[MinValueValidator(1)],
        help_text="How many independent raters answer each item.",
    )
    blind = models.BooleanField(
        default=True, help_text="Hide providers' names and confidences from raters."
    )
    resolution_rule = models.CharField(
        max_length=16, choices=ResolutionRule.choices, default=ResolutionRule.UNANIMOUS
    )
    separation_of_duties = models.BooleanField(
        default=True,
        help_text="An approver may not approve an item where they were the only rater.",
    )
    show_rater_names = models.BooleanField(
        default=False, help_text="Show raters' names to adjudicators."
    )
    lease_minutes = models.PositiveSmallIntegerField(
        default=30,
        validators=[MinValueValidator(1)],
        help_text="How long a claimed item stays with a rater before returning to the pool.",
    )
    import_questions = models.JSONField(
        default=list,
        blank=True,
        help_text='Questions every imported item gets, e.g. ["criterion:faithful"].',
    )
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(overlap__gte=1), name="project_overlap_gte_1"
            ),
            models.CheckConstraint(
                condition=models.Q(lease_minutes__gte=1), name="project_lease_minutes_gte_1"
            ),
            models.CheckConstraint(
                condition=models.Q(resolution_rule__in=ResolutionRule.values),
                name="project_resolution_rule_valid",
            ),
        ]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("project_home", args=[self.slug])


class Role(models.TextChoices):
    RATER = "rater", "Rater"
    ADJUDICATOR = "adjudicator", "Adjudicator"
    APPROVER = "approver", "Approver"
    ADMIN = "admin", "Project admin"


class Membership(models.Model):
    """One role of one user in one project; a member holding several roles has several rows."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "user", "role"]
        constraints = [
            models.UniqueConstraint(fields=["project", "user", "role"], name="membership_unique"),
            models.CheckConstraint(
                condition=models.Q(role__in=Role.values), name="membership_role_valid"
            ),
        ]
        indexes = [models.Index(fields=["user", "project"])]

    def __str__(self):
        return f"{self.user} · {self.get_role_display()} · {self.project}"


class Slice(models.Model):
    """A tag on items (e.g. `safety-sensitive`) for per-slice figures; critical slices gate."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="slices")
    name = models.CharField(
        max_length=100,
        validators=[RegexValidator(r"^[^\s,|]+$", "Slice names have no spaces, commas or bars.")],
    )
    critical = models.BooleanField(default=False)

    class Meta:
        ordering = ["project", "name"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="slice_unique")]

    def __str__(self):
        return self.name


class ApiToken(models.Model):
    """A per-user API token; only its SHA-256 is stored, the secret is shown once."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=12, help_text="First characters, to recognise a token.")
    key_sha256 = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.name} ({self.prefix}…)"
