"""Django admin for every model. History (answers, resolutions, approvals, references, events)
is read-only here: it changes only through the services, and never in place."""

from django import forms
from django.contrib import admin, messages

from reviews import models as m
from reviews.services.projects import SETTINGS_FIELDS
from reviews.services.rater_quality import GoldError, gold_mark


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class MembershipInline(admin.TabularInline):
    model = m.Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(m.Project)
class ProjectAdmin(admin.ModelAdmin):
    """Read-only settings: projects are created at /projects/new/ (or `create_project`) and
    their settings change only on the project's own settings page, by its admins."""

    list_display = ["slug", "name", "overlap", "resolution_rule", "blind", "created_at"]
    search_fields = ["slug", "name"]
    readonly_fields = ["slug", *SETTINGS_FIELDS, "created_by"]
    inlines = [MembershipInline]

    def has_add_permission(self, request):
        return False


@admin.register(m.Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["project", "user", "role", "created_at"]
    list_filter = ["role", "project"]
    search_fields = ["user__username", "user__email", "project__slug"]


@admin.register(m.Slice)
class SliceAdmin(admin.ModelAdmin):
    list_display = ["project", "name", "critical"]
    list_filter = ["project", "critical"]


@admin.register(m.ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["user", "name", "prefix", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["key_sha256", "prefix", "created_at", "last_used_at"]

    def has_add_permission(self, request):
        return False  # tokens are created by their owner, who is shown the secret once


@admin.register(m.Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["original_name", "kind", "page_count", "size_bytes", "sha256", "created_at"]
    list_filter = ["kind"]
    search_fields = ["sha256", "original_name"]
    readonly_fields = [
        "sha256",
        "kind",
        "mime",
        "file",
        "page_count",
        "size_bytes",
        "width",
        "height",
    ]


@admin.register(m.Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ["external_id", "project", "status", "created_at"]
    list_filter = ["project", "status"]
    search_fields = ["external_id", "title"]
    readonly_fields = ["status"]  # status follows the workflow, never set by hand
    actions = ["mark_gold", "unmark_gold"]

    def get_readonly_fields(self, request, obj=None):
        # Signed ground truth is bound to the project and case id: renaming or moving an item
        # would hand its approval to a case nobody reviewed.
        return [*self.readonly_fields, "project", "external_id"] if obj else self.readonly_fields

    @admin.action(description="Mark as gold (known answer from ground truth or resolutions)")
    def mark_gold(self, request, queryset):
        marked = 0
        for item in queryset:
            try:
                gold_mark(actor=request.user, item=item, gold=True)
                marked += 1
            except GoldError as error:
                self.message_user(request, str(error), messages.ERROR)
        self.message_user(request, f"{marked} item(s) marked as gold.")

    @admin.action(description="Take the gold mark back")
    def unmark_gold(self, request, queryset):
        for item in queryset:
            gold_mark(actor=request.user, item=item, gold=False)
        self.message_user(request, f"{queryset.count()} item(s) are no longer gold.")


@admin.register(m.GoldMark)
class GoldMarkAdmin(ReadOnlyAdmin):
    list_display = ["item", "gold", "source", "created_by", "created_at"]
    list_filter = ["gold"]


@admin.register(m.RaterQualitySetting)
class RaterQualitySettingAdmin(admin.ModelAdmin):
    list_display = ["project", "alert_below", "min_answers"]


@admin.register(m.ItemSource)
class ItemSourceAdmin(admin.ModelAdmin):
    list_display = ["item", "artifact_id", "document", "page"]
    search_fields = ["item__external_id", "artifact_id"]


@admin.register(m.Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ["item", "kind", "key", "status"]
    list_filter = ["kind", "status"]
    search_fields = ["item__external_id", "key"]
    readonly_fields = ["status"]


@admin.register(m.Claim)
class ClaimAdmin(admin.ModelAdmin):
    list_display = ["item", "path", "value", "confidence", "page"]
    search_fields = ["item__external_id", "path"]


@admin.register(m.AssignmentBatch)
class AssignmentBatchAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "overlap", "created_at"]


@admin.register(m.Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["item", "rater", "status", "claimed_at", "lease_expires_at", "submitted_at"]
    list_filter = ["status"]
    search_fields = ["item__external_id", "rater__username"]


@admin.register(m.ImportJob)
class ImportJobAdmin(ReadOnlyAdmin):
    list_display = ["original_name", "project", "status", "records_done", "created_at"]


@admin.register(m.Reference)
class ReferenceAdmin(ReadOnlyAdmin):
    list_display = ["item", "authority", "version", "sha256", "created_at"]
    list_filter = ["authority"]


@admin.register(m.Answer)
class AnswerAdmin(ReadOnlyAdmin):
    list_display = ["question", "rater", "seq", "decision", "value", "created_at"]


@admin.register(m.Resolution)
class ResolutionAdmin(ReadOnlyAdmin):
    list_display = ["question", "decision", "value", "method", "decided_by", "created_at"]


@admin.register(m.Approval)
class ApprovalAdmin(ReadOnlyAdmin):
    list_display = ["item", "sequence", "approver", "approved_at", "key_id"]


@admin.register(m.Event)
class EventAdmin(ReadOnlyAdmin):
    list_display = ["item", "kind", "actor", "created_at"]
    list_filter = ["kind"]


@admin.register(m.ResolutionSource)
class ResolutionSourceAdmin(ReadOnlyAdmin):
    list_display = ["resolution", "answer"]


class TrustedKeyForm(forms.ModelForm):
    """Adding a key goes through the service (project admins only; key id computed)."""

    class Meta:
        model = m.TrustedKey
        fields = ["project", "public_key_pem", "label"]

    def clean(self):
        data = super().clean()
        from reviews.services.approved_imports import KeyRefused, trusted_key_check

        if not self.errors:
            try:
                trusted_key_check(
                    actor=self.actor, project=data["project"], pem=data["public_key_pem"]
                )
            except KeyRefused as error:
                raise forms.ValidationError(str(error)) from None
        return data


@admin.register(m.TrustedKey)
class TrustedKeyAdmin(ReadOnlyAdmin):
    """Registered keys stay on record (append-only): add here, never edit or delete."""

    form = TrustedKeyForm
    list_display = ["project", "key_id", "label", "registered_by", "registered_at"]

    def has_add_permission(self, request, obj=None):
        return request.user.is_staff

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        form.actor = request.user
        return form

    def save_model(self, request, obj, form, change):
        from reviews.services.approved_imports import trusted_key_register

        data = form.cleaned_data
        obj.pk = trusted_key_register(
            actor=request.user,
            project=data["project"],
            pem=data["public_key_pem"],
            label=data.get("label", ""),
        ).pk
