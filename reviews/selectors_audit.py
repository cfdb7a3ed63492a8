"""The project audit log as its page shows it: newest first, filtered, a page at a time."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.db.models import Q
from django.utils import timezone

from reviews.models import Project, ProjectAction, ProjectEvent

PAGE_SIZE = 50
# Site-wide lines every project's log shows: a price changes what every project's runs cost.
# (Tokens are site-wide too but belong to one user: superusers read them in the admin.)
SHOWN_SITE_WIDE = (ProjectAction.PRICE_ADDED,)


@dataclass(frozen=True)
class AuditChange:
    name: str
    before: str | None
    after: str | None


@dataclass(frozen=True)
class AuditRow:
    id: int
    created_at: datetime
    actor: str
    action: str
    action_label: str
    target: str
    site_wide: bool
    changes: list[AuditChange]


@dataclass(frozen=True)
class AuditPage:
    rows: list[AuditRow]
    has_next: bool

    @property
    def last_id(self) -> int | None:
        return self.rows[-1].id if self.rows else None


def _shown(values: dict, name: str) -> str | None:
    """A value as text (None: not given on that side); lists read as lists, not as Python."""
    if name not in values:
        return None
    value = values[name]
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "none"
    return "none" if value is None else str(value)


def _changes(event: ProjectEvent) -> list[AuditChange]:
    names = dict.fromkeys([*event.before, *event.after])
    return [
        AuditChange(name, _shown(event.before, name), _shown(event.after, name)) for name in names
    ]


def _day_start(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def project_audit_page(
    project: Project,
    *,
    action: str | None = None,
    actor: str = "",
    since: date | None = None,
    until: date | None = None,
    before: int | None = None,
    size: int = PAGE_SIZE,
) -> AuditPage:
    """One query: the project's lines and the site-wide ones it shows, newest first, older than
    the line `before` (keyset on the id, which grows with time)."""
    events = ProjectEvent.objects.filter(
        Q(project=project) | Q(project__isnull=True, action__in=SHOWN_SITE_WIDE)
    )
    if action:
        events = events.filter(action=action)
    if actor:
        events = events.filter(actor_name=actor)
    if since:
        events = events.filter(created_at__gte=_day_start(since))
    if until:
        events = events.filter(created_at__lt=_day_start(until + timedelta(days=1)))
    if before:
        events = events.filter(id__lt=before)
    found = list(events.order_by("-id")[: size + 1])
    rows = [
        AuditRow(
            id=event.pk,
            created_at=event.created_at,
            actor=event.actor_name,
            action=event.action,
            action_label=ProjectAction(event.action).label,
            target=event.target,
            site_wide=event.project_id is None,
            changes=_changes(event),
        )
        for event in found[:size]
    ]
    return AuditPage(rows=rows, has_next=len(found) > size)
