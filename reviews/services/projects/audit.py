"""The project audit log: the one place that writes ProjectEvent rows (append-only).

Every service that changes a project's set-up calls `project_event_record` inside its own
transaction, so the page, the command, the API and the admin all leave the same row, and a change
that rolls back leaves none.
"""

from __future__ import annotations

from typing import Any

from reviews.models import SITE_WIDE_ACTIONS, Project, ProjectAction, ProjectEvent

# Names that must never reach the log, whoever passes them (its rows are shown to project admins).
SECRET_NAMES = frozenset({"password", "secret", "token", "key_sha256", "api_key", "private_key"})


class SecretInAuditLog(ValueError):
    pass


def _checked(values: dict[str, Any] | None) -> dict[str, Any]:
    values = dict(values or {})
    secret = SECRET_NAMES.intersection(name.lower() for name in values)
    if secret:
        raise SecretInAuditLog(f"the audit log never stores {', '.join(sorted(secret))}.")
    return values


def project_event_record(
    project: Project | None,
    actor,
    action: ProjectAction,
    *,
    target: str = "",
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
) -> ProjectEvent:
    """Append one line to `project`'s audit log (None: a site-wide action, SITE_WIDE_ACTIONS).
    `actor` None (or anonymous) is the operator's console; their username is kept as text."""
    action = ProjectAction(action)
    if (project is None) != (action in SITE_WIDE_ACTIONS):
        raise ValueError(f"{action}: a site-wide action has no project, any other has one.")
    actor = actor if getattr(actor, "pk", None) else None
    return ProjectEvent.objects.create(
        project=project,
        actor=actor,
        actor_name=actor.get_username() if actor else "",
        action=action,
        target=str(target)[:200],
        before=_checked(before),
        after=_checked(after),
    )


def changed_values(old: dict[str, Any], new: dict[str, Any]) -> tuple[dict, dict]:
    """(before, after) of the keys whose value differs: a settings line names only what moved."""
    changed = [name for name in new if old.get(name) != new[name]]
    return {name: old.get(name) for name in changed}, {name: new[name] for name in changed}
