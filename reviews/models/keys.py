"""Public keys a project trusts for approved files signed elsewhere (besides this site's key)."""

from django.conf import settings
from django.db import models

from reviews.models.append_only import AppendOnlyModel
from reviews.models.projects import Project


class TrustedKey(AppendOnlyModel):
    """An Ed25519 public key a project admin registered: who did it, and when, stays on record."""

    project = models.ForeignKey(
        Project, db_index=False, on_delete=models.CASCADE, related_name="trusted_keys"
    )
    key_id = models.CharField(max_length=64, help_text="First 16 hex of SHA-256(raw key).")
    public_key_pem = models.TextField()
    label = models.CharField(max_length=200, blank=True, help_text="Whose key this is.")
    registered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    registered_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "registered_at"]
        constraints = [
            models.UniqueConstraint(fields=["project", "key_id"], name="trustedkey_unique"),
        ]

    def __str__(self):
        return f"{self.key_id} ({self.label or 'no label'})"


class KeyRevocation(AppendOnlyModel):
    """A trusted key taken back (leaked, or its owner left): files it signs are refused from now
    on. Final: the key cannot be registered again for the project."""

    key = models.OneToOneField(TrustedKey, on_delete=models.PROTECT, related_name="revocation")
    reason = models.CharField(max_length=500)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    revoked_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"{self.key.key_id} revoked ({self.reason})"
