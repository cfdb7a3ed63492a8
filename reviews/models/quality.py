"""Gold items (a known answer to check raters against) and the project's rater-quality alert."""

from django.conf import settings
from django.db import models

from reviews.models.append_only import AppendOnlyModel
from reviews.models.constraints import fraction_check
from reviews.models.items import Item
from reviews.models.projects import Project


class GoldMark(AppendOnlyModel):
    """An admin marks an item as gold (or takes it back): the latest row counts.

    `answers` is the known answer of each question at the time of marking, taken from the
    item's approved ground truth (field questions) or its resolutions (criterion and pairwise
    questions, or fields without ground truth): `{question key: {"decision", "value"}}`.
    """

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="gold_marks")
    gold = models.BooleanField()
    answers = models.JSONField(default=dict, blank=True)
    source = models.CharField(max_length=100, blank=True, help_text="Where the answers came from.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item", "-created_at", "-id"]

    def __str__(self):
        return f"{self.item}: {'gold' if self.gold else 'not gold'}"


class RaterQualitySetting(models.Model):
    """When the project page warns about a rater (set by project admins in the admin)."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="rater_quality")
    alert_below = models.FloatField(
        default=0.8, help_text="Warn when a rater's accuracy on gold items falls below this."
    )
    min_answers = models.PositiveIntegerField(
        default=10, help_text="Gold answers a rater needs before the warning applies."
    )

    class Meta:
        constraints = [fraction_check("alert_below", "raterquality_alert_in_0_1")]

    def __str__(self):
        return f"{self.project}: warn below {self.alert_below:.0%}"
