"""The project audit log: who changed a project's set-up (members, settings, keys, judges, runs),
when, and from what to what. Append-only, like every other history table."""

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models

from reviews.models.append_only import AppendOnlyModel
from reviews.models.projects import Project


class ProjectAction(models.TextChoices):
    PROJECT_CREATED = "project_created", "Project created"
    MEMBER_ADDED = "member_added", "Role given"
    MEMBER_REMOVED = "member_removed", "Role taken away"
    SETTINGS_CHANGED = "settings_changed", "Settings changed"
    TOKEN_CREATED = "token_created", "API token created"
    TOKEN_REVOKED = "token_revoked", "API token revoked"
    KEY_TRUSTED = "key_trusted", "Key trusted"
    KEY_REVOKED = "key_revoked", "Key revoked"
    SPLIT_DRAWN = "split_drawn", "Split drawn"
    JUDGE_CREATED = "judge_created", "Judge created"
    JUDGE_EDITED = "judge_edited", "Judge endpoint changed"
    JUDGE_VERSION_ADDED = "judge_version_added", "Judge version added"
    RUN_STARTED = "run_started", "Run started"
    RUN_RESUMED = "run_resumed", "Run resumed"
    RUN_CANCELLED = "run_cancelled", "Run cancelled"
    PRICE_ADDED = "price_added", "Model price added"
    CRITERION_DEFINED = "criterion_defined", "Question defined"
    WEBHOOK_ADDED = "webhook_added", "Webhook added"
    WEBHOOK_REMOVED = "webhook_removed", "Webhook disabled"
    PANEL_CONFIGURED = "panel_configured", "Ground-truth panel configured"
    GATE_CHANGED = "gate_changed", "Release gate changed"
    LOCKOUT_CLEARED = "lockout_cleared", "Login lockout cleared"
    SLICES_CRITICAL_SET = "slices_critical_set", "Critical slices set"


# Site-wide actions (project empty): a token belongs to a user, a price to a provider's model.
SITE_WIDE_ACTIONS = (
    ProjectAction.TOKEN_CREATED,
    ProjectAction.TOKEN_REVOKED,
    ProjectAction.PRICE_ADDED,
)


class ProjectEvent(AppendOnlyModel):
    """One administrative action. `before`/`after` hold only the values that changed, never a
    secret (token values, passwords, API keys stay out)."""

    # Empty for site-wide actions (SITE_WIDE_ACTIONS). PROTECT: history outlives nothing it names.
    project = models.ForeignKey(
        Project,
        db_index=False,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="audit_events",
    )
    # Empty for the operator's console (a command run without a user).
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        db_index=False,
    )
    # The actor's username as it was: the page reads it without a join, and filters on it.
    actor_name = models.CharField(max_length=150, blank=True)
    action = models.CharField(max_length=32, choices=ProjectAction.choices)
    target = models.CharField(max_length=200, blank=True, help_text="Who or what was acted on.")
    before = models.JSONField(default=dict, blank=True, encoder=DjangoJSONEncoder)
    after = models.JSONField(default=dict, blank=True, encoder=DjangoJSONEncoder)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["project", "-id"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(action__in=ProjectAction.values),
                name="projectevent_action_valid",
            ),
        ]

    def __str__(self):
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.action} {self.target}"
