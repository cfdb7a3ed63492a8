"""Long operations run by the task worker (send to humans, split draws, bulk item actions over
many rows): one small record shared by every kind, with a page to watch it.

Imports keep their own `ImportJob` (it holds the uploaded file and its per-record report).
"""

from django.conf import settings
from django.db import models

from reviews.models.projects import Project
from reviews.models.workflow import ImportJob


class Job(models.Model):
    """One operation: `kind` names its registered runner (reviews/services/jobs/registry.py),
    `params` the form data it was started with (the worker validates it again), `result` what it
    did in a sentence. Progress and heartbeat live in the shared cache while it runs (its work is
    one transaction, invisible until it commits)."""

    Status = ImportJob.Status  # the same four states, the same badge

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="jobs")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    kind = models.CharField(max_length=64)
    params = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveSmallIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(null=True, blank=True)
    result = models.TextField(blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status"], name="reviews_job_status")]

    def __str__(self):
        return f"{self.kind} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.SUCCEEDED, self.Status.FAILED)
