"""Rows that are written once and never changed or deleted by the application.

Answers, resolutions, approvals, references and timeline events are history: a correction is a
new row. The guard lives in the model and its queryset, so views, the admin, the API and services
all hit the same wall. (Deleting a whole project still cascades: that is removing the project,
not editing its history.)
"""

from django.db import models


class AppendOnlyError(Exception):
    """Raised on any attempt to change or delete an append-only row."""


class AppendOnlyQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise AppendOnlyError(f"{self.model.__name__} rows are append-only: update refused.")

    def delete(self):
        raise AppendOnlyError(f"{self.model.__name__} rows are append-only: delete refused.")


class AppendOnlyModel(models.Model):
    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise AppendOnlyError(f"{type(self).__name__} rows are append-only: edit refused.")
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnlyError(f"{type(self).__name__} rows are append-only: delete refused.")
