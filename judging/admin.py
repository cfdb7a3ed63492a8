"""Django admin for every judging model; history (labels, tags, snapshots, access log) is
read-only."""

from django.contrib import admin

from judging import models as m
from reviews.admin import ReadOnlyAdmin


@admin.register(m.Criterion)
class CriterionAdmin(admin.ModelAdmin):
    list_display = ["name", "version", "project", "critical", "ordinal", "pairwise"]
    list_filter = ["project", "critical"]
    readonly_fields = ["sha256"]


@admin.register(m.Judge)
class JudgeAdmin(admin.ModelAdmin):
    list_display = ["provider", "model", "temperature", "project"]
    list_filter = ["project", "provider"]
    readonly_fields = ["configuration"]


@admin.register(m.Verdict)
class VerdictAdmin(admin.ModelAdmin):
    list_display = ["item", "criterion", "judge", "sample", "label", "confidence"]
    list_filter = ["criterion__name", "judge__model"]
    search_fields = ["item__external_id"]


@admin.register(m.HumanLabel)
class HumanLabelAdmin(ReadOnlyAdmin):
    list_display = ["item", "criterion", "rater", "label", "created_at"]


@admin.register(m.SplitDraw)
class SplitDrawAdmin(ReadOnlyAdmin):
    list_display = ["project", "seed", "held_out_fraction", "created_at"]


@admin.register(m.ItemSplit)
class ItemSplitAdmin(ReadOnlyAdmin):
    list_display = ["item", "split", "draw"]
    list_filter = ["split"]


@admin.register(m.HeldOutAccess)
class HeldOutAccessAdmin(ReadOnlyAdmin):
    list_display = ["project", "user", "what", "created_at"]


@admin.register(m.GateSetting)
class GateSettingAdmin(admin.ModelAdmin):
    list_display = ["project", "criterion", "min_lower", "min_n", "max_ci_width"]
    list_filter = ["project"]


@admin.register(m.DashboardSnapshot)
class DashboardSnapshotAdmin(ReadOnlyAdmin):
    list_display = ["project", "computed_at"]
    exclude = ["payload"]


@admin.register(m.FailureBucket)
class FailureBucketAdmin(admin.ModelAdmin):
    list_display = ["project", "name", "position"]
    list_filter = ["project"]


@admin.register(m.FailureTag)
class FailureTagAdmin(ReadOnlyAdmin):
    list_display = ["item", "criterion", "judge", "bucket", "tagged_by", "created_at"]
