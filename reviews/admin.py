"""Django admin for every model. History (answers, resolutions, approvals, references, events)
is read-only here: it changes only through the services, and never in place. Staff see and
change only the rows of the projects they administer (evalsite/admin_scope.py: `project_path`
is how a row reaches its project); rows of no project are superusers'."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError

from evalsite.admin_scope import ActorForm, ProjectScoped, ReadOnly, ReadOnlyAdmin
from reviews import models as m
from reviews.services.items import slices_critical_set
from reviews.services.projects.data import project_data_touch
from reviews.services.projects.members import (
    SETTINGS_FIELDS,
    may_manage_members,
    membership_add,
    membership_remove,
    user_by_username_or_email,
)
from reviews.services.rating.quality import GoldError, gold_mark

from . import admin_keys  # noqa: F401  (registers the signing keys' and tokens' admins)


class MembershipInline(ReadOnly, admin.TabularInline):
    """Shown, not edited: roles change on the Memberships page, through the service."""

    model = m.Membership
    extra = 0
    fields = ["user", "role", "created_at"]
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("user", "project")  # not a query a row


@admin.register(m.Project)
class ProjectAdmin(ProjectScoped, admin.ModelAdmin):
    """Read-only settings: projects are created at /projects/new/ (or `create_project`) and
    their settings change only on the project's own settings page, by its admins."""

    project_path = "pk"

    list_display = ["slug", "name", "overlap", "resolution_rule", "blind", "created_at"]
    search_fields = ["slug", "name"]
    readonly_fields = ["slug", *SETTINGS_FIELDS, "created_by"]
    inlines = [MembershipInline]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # its answers, approvals and events are append-only history


class MembershipForm(forms.ModelForm):
    # Typed, not chosen: a select (or autocomplete) would list every user of the site.
    user = forms.CharField(label="User", help_text="Their username or e-mail address.")

    class Meta:
        model = m.Membership
        fields = ["project", "user", "role"]

    def clean_user(self):
        user = user_by_username_or_email(self.cleaned_data["user"])
        if user is None:
            raise forms.ValidationError("No active user has that username or e-mail address.")
        return user

    def clean(self):
        data = super().clean()
        project = data.get("project")
        if project is not None and not may_manage_members(self.actor, project):
            raise forms.ValidationError(f"Only the admins of {project.slug!r} can add members.")
        return data


@admin.register(m.Membership)
class MembershipAdmin(ProjectScoped, ActorForm, admin.ModelAdmin):
    """Add or remove through the membership service: staff who are not superusers manage only
    the projects they are admins of, and a project never loses its last admin. A membership is
    never edited in place (that would move a role to another project or person)."""

    form = MembershipForm
    list_display = ["project", "user", "role", "created_at"]
    list_filter = ["role", "project"]
    search_fields = ["user__username", "user__email", "project__slug"]

    def has_change_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        obj.pk = membership_add(
            actor=request.user, project=data["project"], user=data["user"], role=data["role"]
        ).pk

    def delete_model(self, request, obj):
        try:
            membership_remove(actor=request.user, project=obj.project, user=obj.user, role=obj.role)
        except (ValidationError, PermissionDenied) as error:
            self.message_user(
                request, " ".join(getattr(error, "messages", [str(error)])), messages.ERROR
            )

    def delete_queryset(self, request, queryset):
        for membership in queryset.select_related("project", "user"):
            self.delete_model(request, membership)


@admin.register(m.Slice)
class SliceAdmin(ProjectScoped, admin.ModelAdmin):
    list_display = ["project", "name", "critical"]
    list_filter = ["project", "critical"]

    def save_model(self, request, obj, form, change):
        """Whether a slice is critical changes through its service (an audit line)."""
        critical = obj.critical
        obj.critical = form.initial.get("critical", False) if change else False
        super().save_model(request, obj, form, change)
        slices_critical_set(
            project=obj.project, names=[obj.name], critical=critical, actor=request.user
        )


@admin.register(m.Document)
class DocumentAdmin(ProjectScoped, ReadOnlyAdmin):
    """An evidence file, content-addressed and shared by every item citing it (in any project):
    its geometry (`page_sizes`) is what the viewer and word boxes use, so nothing edits it
    here. Staff see the documents their projects' items cite."""

    project_path = "sources__item__project"
    list_display = ["original_name", "kind", "page_count", "size_bytes", "sha256", "created_at"]
    list_filter = ["kind"]
    search_fields = ["sha256", "original_name"]


@admin.register(m.Item)
class ItemAdmin(ProjectScoped, admin.ModelAdmin):
    list_display = ["external_id", "project", "status", "created_at"]
    list_filter = ["project", "status"]
    search_fields = ["external_id", "title"]
    # Only the title and slices are edited here. Status follows the workflow; the project and
    # case id are what signed ground truth is bound to (renaming or moving an item would hand
    # its approval to a case nobody reviewed); input, output, expected and metadata are what
    # raters and judges saw. Items come in through imports, and stay (history hangs off them).
    readonly_fields = [
        "project",
        "external_id",
        "status",
        "input",
        "output",
        "expected",
        "metadata",
        "overlap",
        "revision",
    ]
    actions = ["mark_gold", "unmark_gold"]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def save_related(self, request, form, formsets, change):
        """An item's slices decide the per-slice figures: the project's data changed."""
        super().save_related(request, form, formsets, change)
        project_data_touch(form.instance.project_id)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        # The admin hides a many-to-many with its own `through` model; ItemSlice is only the
        # link table (no columns of its own), so slices stay editable here as before.
        if db_field.name == "slices":
            return db_field.formfield(**kwargs)
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        if obj is not None and "slices" in form.base_fields:
            # Another project's slice would put this item into that project's figures.
            form.base_fields["slices"].queryset = m.Slice.objects.filter(project=obj.project_id)
        return form

    @admin.action(description="Mark as gold (known answer from ground truth or resolutions)")
    def mark_gold(self, request, queryset):
        marked = self._gold_mark(request, queryset, gold=True)
        self.message_user(request, f"{marked} item(s) marked as gold.")

    @admin.action(description="Take the gold mark back")
    def unmark_gold(self, request, queryset):
        unmarked = self._gold_mark(request, queryset, gold=False)
        self.message_user(request, f"{unmarked} item(s) are no longer gold.")

    def _gold_mark(self, request, queryset, *, gold: bool) -> int:
        """Each item through `gold_mark` (the project's admins only); refusals are shown."""
        done = 0
        for item in queryset:
            try:
                gold_mark(actor=request.user, item=item, gold=gold)
                done += 1
            except GoldError as error:
                self.message_user(request, str(error), messages.ERROR)
        return done


@admin.register(m.GoldMark)
class GoldMarkAdmin(ProjectScoped, ReadOnlyAdmin):
    project_path = "item__project"
    list_display = ["item", "gold", "source", "created_by", "created_at"]
    list_filter = ["gold"]


@admin.register(m.RaterQualitySetting)
class RaterQualitySettingAdmin(ProjectScoped, admin.ModelAdmin):
    list_display = ["project", "alert_below", "min_answers"]


@admin.register(m.ItemSource)
class ItemSourceAdmin(ProjectScoped, ReadOnlyAdmin):
    """Which evidence an item cites: repointing it would show approved values beside other
    evidence (or another project's document)."""

    project_path = "item__project"
    list_display = ["item", "artifact_id", "document", "page"]
    search_fields = ["item__external_id", "artifact_id"]


@admin.register(m.Question)
class QuestionAdmin(ProjectScoped, ReadOnlyAdmin):
    """What raters answered: editing a key or kind after answers would change their meaning."""

    project_path = "item__project"
    list_display = ["item", "kind", "key", "status"]
    list_filter = ["kind", "status"]
    search_fields = ["item__external_id", "key"]


@admin.register(m.Claim)
class ClaimAdmin(ProjectScoped, ReadOnlyAdmin):
    """What a model claimed, as raters saw and chose it."""

    project_path = "item__project"
    list_display = ["item", "path", "value", "confidence", "page"]
    search_fields = ["item__external_id", "path"]


@admin.register(m.AssignmentBatch)
class AssignmentBatchAdmin(ProjectScoped, ReadOnlyAdmin):
    list_display = ["name", "project", "overlap", "created_at"]


@admin.register(m.Assignment)
class AssignmentAdmin(ProjectScoped, ReadOnlyAdmin):
    """Workflow state, moved only by the queue (a hand-made "submitted" would skip answers)."""

    project_path = "item__project"
    list_display = ["item", "rater", "status", "claimed_at", "lease_expires_at", "submitted_at"]
    list_filter = ["status"]
    search_fields = ["item__external_id", "rater__username"]


@admin.register(m.ImportJob)
class ImportJobAdmin(ProjectScoped, ReadOnlyAdmin):
    list_display = ["original_name", "project", "status", "records_done", "created_at"]


@admin.register(m.Reference)
class ReferenceAdmin(ProjectScoped, ReadOnlyAdmin):
    project_path = "item__project"
    list_display = ["item", "authority", "version", "sha256", "created_at"]
    list_filter = ["authority"]


@admin.register(m.Answer)
class AnswerAdmin(ProjectScoped, ReadOnlyAdmin):
    project_path = "question__item__project"
    list_display = ["question", "rater", "seq", "decision", "value", "created_at"]


@admin.register(m.Resolution)
class ResolutionAdmin(ProjectScoped, ReadOnlyAdmin):
    project_path = "question__item__project"
    list_display = ["question", "decision", "value", "method", "decided_by", "created_at"]


@admin.register(m.Approval)
class ApprovalAdmin(ProjectScoped, ReadOnlyAdmin):
    project_path = "item__project"
    list_display = ["item", "sequence", "approver", "approved_at", "key_id"]
    list_select_related = ["item", "approver"]


@admin.register(m.Event)
class EventAdmin(ProjectScoped, ReadOnlyAdmin):
    project_path = "item__project"
    list_display = ["item", "kind", "actor", "created_at"]
    list_select_related = ["item", "actor"]
    list_filter = ["kind"]


@admin.register(m.ResolutionSource)
class ResolutionSourceAdmin(ProjectScoped, ReadOnlyAdmin):
    project_path = "resolution__question__item__project"
    list_display = ["resolution", "answer"]


@admin.register(m.ProjectEvent)
class ProjectEventAdmin(ProjectScoped, ReadOnlyAdmin):
    """The audit log, read-only; its site-wide lines (tokens, prices) are superusers'."""

    list_display = ["created_at", "project", "actor_name", "action", "target", "before", "after"]
    list_filter = ["action", "project"]
    list_select_related = ["project"]
