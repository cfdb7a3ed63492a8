"""Django admin for every judging model; history (labels, tags, snapshots, access log) is
read-only. Staff see and change only their projects' rows (evalsite/admin_scope.py); model
prices belong to no project: superusers only."""

from django import forms
from django.contrib import admin

from evalsite.admin_scope import ProjectScoped, ReadOnlyAdmin, SuperuserOnly
from judging import models as m
from judging.services.audit import panel_configured
from judging.services.calibration.gate_settings import (
    THRESHOLDS,
    gate_setting_remove,
    gate_setting_save,
)
from judging.services.calibration.panels import member_ref
from judging.services.runs.budgets import budget_set
from judging.services.runs.prices import price_add


@admin.register(m.Criterion)
class CriterionAdmin(ProjectScoped, ReadOnlyAdmin):
    """A criterion version is what labels and verdicts mean: a change is a new version, imported."""

    list_display = ["name", "version", "project", "critical", "ordinal", "pairwise"]
    list_filter = ["project", "critical"]


@admin.register(m.Judge)
class JudgeAdmin(ProjectScoped, ReadOnlyAdmin):
    list_display = ["provider", "model", "temperature", "project"]
    list_filter = ["project", "provider"]


@admin.register(m.Verdict)
class VerdictAdmin(ProjectScoped, ReadOnlyAdmin):
    """What a judge said: the agreement figures and failure analysis are computed from these."""

    project_path = "item__project"
    list_display = ["item", "criterion", "judge", "sample", "label", "confidence"]
    list_filter = ["criterion__name", "judge__model"]
    search_fields = ["item__external_id"]


@admin.register(m.HumanLabel)
class HumanLabelAdmin(ProjectScoped, ReadOnlyAdmin):
    project_path = "item__project"
    list_display = ["item", "criterion", "rater", "label", "created_at"]


@admin.register(m.SplitDraw)
class SplitDrawAdmin(ProjectScoped, ReadOnlyAdmin):
    list_display = ["project", "seed", "held_out_fraction", "created_at"]


@admin.register(m.ItemSplit)
class ItemSplitAdmin(ProjectScoped, ReadOnlyAdmin):
    project_path = "item__project"
    list_display = ["item", "split", "draw"]
    list_filter = ["split"]


@admin.register(m.HeldOutAccess)
class HeldOutAccessAdmin(ProjectScoped, ReadOnlyAdmin):
    list_display = ["project", "user", "what", "created_at"]
    list_select_related = ["project", "user"]  # one query a page, however many users looked


@admin.register(m.GateSetting)
class GateSettingAdmin(ProjectScoped, admin.ModelAdmin):
    """Gates change through their service, which writes the project audit log's line."""

    list_display = ["project", "criterion", "min_lower", "min_n", "max_ci_width"]
    list_filter = ["project"]

    def save_model(self, request, obj, form, change):
        before = {name: form.initial.get(name) for name in THRESHOLDS} if change else {}
        gate_setting_save(actor=request.user, setting=obj, before=before)

    def delete_model(self, request, obj):
        gate_setting_remove(actor=request.user, setting=obj)

    def delete_queryset(self, request, queryset):
        for setting in queryset.select_related("project"):
            gate_setting_remove(actor=request.user, setting=setting)


@admin.register(m.DashboardSnapshot)
class DashboardSnapshotAdmin(ProjectScoped, ReadOnlyAdmin):
    list_display = ["project", "computed_at"]
    exclude = ["payload"]


@admin.register(m.FailureBucket)
class FailureBucketAdmin(ProjectScoped, admin.ModelAdmin):
    list_display = ["project", "name", "position"]
    list_filter = ["project"]


@admin.register(m.FailureTag)
class FailureTagAdmin(ProjectScoped, ReadOnlyAdmin):
    project_path = "item__project"
    list_display = ["item", "criterion", "judge", "bucket", "tagged_by", "created_at"]


@admin.register(m.ModelPrice)
class ModelPriceAdmin(SuperuserOnly, admin.ModelAdmin):
    """Prices in USD per million tokens (every project's, so superusers only), append-only:
    adding one writes the same row as `manage.py model_price` (in force from now on); a saved
    price is never changed or deleted, since the calls made under it keep it."""

    list_display = [
        "provider", "model", "input_per_million", "output_per_million", "effective_from",
        "created_by",
    ]  # fmt: skip
    list_filter = ["provider"]
    list_select_related = ["created_by"]
    fields = ["provider", "model", "input_per_million", "output_per_million"]

    def has_change_permission(self, request, obj=None):
        return obj is None and super().has_change_permission(request)

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        added = price_add(
            provider=obj.provider,
            model=obj.model,
            input_per_million=obj.input_per_million,
            output_per_million=obj.output_per_million,
            actor=request.user,
        )
        obj.pk, obj._state.adding = added.pk, False


@admin.register(m.JudgeConfig)
class JudgeConfigAdmin(ProjectScoped, ReadOnlyAdmin):
    """Judges change through their page or `judge_config` (a new version), never here."""

    list_display = ["name", "project", "created_at"]


@admin.register(m.JudgeVersion)
class JudgeVersionAdmin(ProjectScoped, ReadOnlyAdmin):
    project_path = "config__project"
    list_display = [
        "config", "number", "provider", "model", "base_url", "evidence", "prompt_sha256",
        "created_at",
    ]  # fmt: skip


@admin.register(m.ProjectBudget)
class ProjectBudgetAdmin(ProjectScoped, admin.ModelAdmin):
    """A project's monthly cap on what its judge and generation runs spend (UTC calendar
    month, at each call's stored cost); written through `budget_set`, which audits it."""

    list_display = ["project", "monthly_usd", "updated_by", "updated_at"]
    fields = ["project", "monthly_usd"]

    def save_model(self, request, obj, form, change):
        saved = budget_set(project=obj.project, monthly_usd=obj.monthly_usd, actor=request.user)
        obj.pk, obj._state.adding = saved.pk, False


@admin.register(m.Run)
class RunAdmin(ProjectScoped, ReadOnlyAdmin):
    list_display = ["pk", "version", "split", "status", "done", "unparsed", "failed"]
    list_filter = ["status", "split"]


@admin.register(m.Call)
class CallAdmin(ProjectScoped, ReadOnlyAdmin):
    project_path = "run__project"
    list_display = ["run", "item", "sample", "display_order", "status", "attempts"]
    list_select_related = ["run__version__config", "item"]  # each row names its run's version
    list_filter = ["status"]


class PanelMemberForm(forms.ModelForm):
    """A member is a judge version (its judge follows) or, for imported verdicts, a judge."""

    class Meta:
        model = m.PanelMember
        fields = ["version", "judge"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judge"].required = False

    def clean(self):
        data = super().clean()
        if self.instance.pk:  # a pinned member, shown read-only: nothing of it is posted
            return data
        version, judge = data.get("version"), data.get("judge")
        if version is not None:
            if version.judge_id is None or version.criterion_id is None:
                raise forms.ValidationError(f"{version.ref} judges no criterion.")
            data["judge"] = self.instance.judge = version.judge
        elif judge is None:
            raise forms.ValidationError("Choose a judge version (or an imported judge).")
        return data


class PanelMemberFormSet(forms.BaseInlineFormSet):
    def clean(self):
        super().clean()
        project_id = self.instance.project_id
        foreign = [
            str(form.cleaned_data["judge"])
            for form in self.forms
            if not form.instance.pk  # pinned members were checked when the panel was made
            if form.cleaned_data.get("judge") and not form.cleaned_data.get("DELETE")
            if form.cleaned_data["judge"].project_id != project_id
        ]
        if foreign:
            raise forms.ValidationError(
                f"Judges of another project cannot sit on this panel: {', '.join(foreign)}."
            )


class PanelMemberInline(ProjectScoped, admin.TabularInline):
    """Members are named when the panel is made, then pinned: shown, never changed (a new
    membership is a new panel). Version and judge are given by id, and must be of the staff
    user's projects (`ProjectScoped`)."""

    project_path = "panel__project"
    model = m.PanelMember
    form = PanelMemberForm
    formset = PanelMemberFormSet
    raw_id_fields = ["version", "judge"]
    extra = 2
    can_delete = False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("judge", "version__config")

    def has_add_permission(self, request, obj=None):
        return obj is None and super().has_add_permission(request, obj)

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(m.Panel)
class PanelAdmin(ProjectScoped, admin.ModelAdmin):
    """Panels vote with `manage.py panel_vote`; ties (and dissent, if chosen) go to people.
    Members are pinned versions: a judge's new version joins only when added here."""

    list_display = ["name", "project", "rule", "send_dissent"]
    fields = ["project", "name", "rule", "send_dissent"]
    inlines = [PanelMemberInline]

    def save_related(self, request, form, formsets, change):
        """Made or changed here: a line in the project audit log, as `panel_config` leaves."""
        super().save_related(request, form, formsets, change)
        panel = form.instance
        members = sorted(member_ref(m) for m in panel.members.select_related("judge", "version"))
        before = {name: form.initial.get(name) for name in ("rule", "send_dissent")}
        panel_configured(panel, request.user, members=members, before=before if change else None)
