"""A project's release gates per criterion (GateSetting): set, changed or removed, each with a
line in the project audit log naming the thresholds that moved. The admin saves through here."""

from __future__ import annotations

from django.db import transaction

from judging.models import GateSetting
from judging.services.audit import gate_changed
from reviews.services.projects.audit import changed_values

THRESHOLDS = ("min_lower", "min_n", "max_ci_width")


def thresholds(setting: GateSetting | None) -> dict:
    return {name: getattr(setting, name) for name in THRESHOLDS} if setting else {}


@transaction.atomic
def gate_setting_save(*, actor, setting: GateSetting, before: dict) -> GateSetting:
    """Save `setting`; `before`: its thresholds as they were ({} for a new gate)."""
    setting.save()
    if not before:
        gate_changed(setting.project, actor, setting.criterion, {}, thresholds(setting))
        return setting
    old, new = changed_values(before, thresholds(setting))
    if new:
        gate_changed(setting.project, actor, setting.criterion, old, new)
    return setting


@transaction.atomic
def gate_setting_remove(*, actor, setting: GateSetting) -> None:
    """Remove a gate: the criterion's gate goes back to the defaults."""
    gate_changed(setting.project, actor, setting.criterion, thresholds(setting), {})
    setting.delete()
