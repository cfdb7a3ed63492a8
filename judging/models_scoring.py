"""Score runs: predictions scored against a project's references (docs/scoring.md)."""

from django.conf import settings
from django.db import models

from reviews.models import AppendOnlyModel, Project

User = settings.AUTH_USER_MODEL


class ScoreRun(AppendOnlyModel):
    """One scoring of a predictions file against the project's references (docs/scoring.md).

    The report is computed once and kept whole, so a page shows what was measured then even
    after references are corrected; scoring again adds a run.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="score_runs")
    source_name = models.CharField(max_length=255, help_text="The predictions file (or API).")
    allow_generated = models.BooleanField(default=False)
    n_records = models.PositiveIntegerField()
    report = models.JSONField()
    created_by = models.ForeignKey(User, null=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "-created_at", "-id"]

    def __str__(self):
        return f"score run {self.pk} ({self.source_name})"
