"""Django admin for what authenticates: API tokens (revoke only) and the trusted signing keys
with their revocations (add only, never edit). Registered by importing this module from
reviews/admin.py."""

from django import forms
from django.contrib import admin

from evalsite.admin_scope import ActorForm, ProjectScoped, ReadOnlyAdmin, SuperuserOnly
from reviews import models as m
from reviews.services.projects.tokens import token_revoke


@admin.register(m.ApiToken)
class ApiTokenAdmin(SuperuserOnly, ReadOnlyAdmin):
    """Tokens are created by their owner, who is shown the secret once. Here they can only be
    revoked: editing would let a revoked token work again, or hand it to another user. A token
    belongs to a user, not a project: superusers only."""

    list_display = [
        "user",
        "name",
        "prefix",
        "created_at",
        "expires_at",
        "last_used_at",
        "revoked_at",
    ]
    actions = ["revoke"]

    @admin.action(description="Revoke the selected tokens", permissions=["revoke"])
    def revoke(self, request, queryset):
        revoked = sum(
            token_revoke(actor=request.user, token_pk=pk)
            for pk in queryset.values_list("pk", flat=True)
        )
        self.message_user(request, f"{revoked} token(s) revoked.")

    def has_revoke_permission(self, request):
        return request.user.is_superuser


class TrustedKeyForm(forms.ModelForm):
    """Adding a key goes through the service (project admins only; key id computed)."""

    class Meta:
        model = m.TrustedKey
        fields = ["project", "public_key_pem", "label"]

    def clean(self):
        data = super().clean()
        from reviews.services.imports.approved import KeyRefused, trusted_key_check

        if not self.errors:
            try:
                trusted_key_check(
                    actor=self.actor, project=data["project"], pem=data["public_key_pem"]
                )
            except KeyRefused as error:
                raise forms.ValidationError(str(error)) from None
        return data


@admin.register(m.TrustedKey)
class TrustedKeyAdmin(ProjectScoped, ActorForm, ReadOnlyAdmin):
    """Registered keys stay on record (append-only): add here, never edit or delete."""

    form = TrustedKeyForm
    list_display = ["project", "key_id", "label", "registered_by", "registered_at", "revocation"]

    def has_add_permission(self, request, obj=None):
        return request.user.is_staff

    def save_model(self, request, obj, form, change):
        from reviews.services.imports.approved import trusted_key_register

        data = form.cleaned_data
        obj.pk = trusted_key_register(
            actor=request.user,
            project=data["project"],
            pem=data["public_key_pem"],
            label=data.get("label", ""),
        ).pk


@admin.register(m.KeyRevocation)
class KeyRevocationAdmin(ProjectScoped, ReadOnlyAdmin):
    """Keys are revoked with `manage.py revoke_key` (a project admin, with a reason)."""

    project_path = "key__project"
    list_display = ["key", "reason", "revoked_by", "revoked_at"]
