"""Project pages another app adds to reviews' pages, so reviews' templates name no other app's
URL: judging fills this in its AppConfig.ready (judging/apps.py) with its dashboard, scores and
questions pages, and the project home shows them beside reviews' own buttons.

A page is named by a key (`questions`): reviews' text links to it with
`{% project_page_url "questions" project %}` (reviews/templatetags/navigation.py), and to the
buttons of a group with `{% project_tabs access "overseer" as tabs %}`."""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import reverse

from reviews.access import OVERSEERS
from reviews.models import Role

# Where a tab stands on the project home: beside the overseers' Items, or the admins' Guidelines.
GROUPS = {"overseer": OVERSEERS, "admin": (Role.ADMIN,)}


@dataclass(frozen=True)
class ProjectTab:
    key: str  # how reviews' templates name the page
    label: str
    url_name: str  # takes the project's slug
    group: str  # a key of GROUPS: who sees the button, and where it stands


_TABS: dict[str, ProjectTab] = {}


def project_tab_add(tab: ProjectTab) -> None:
    """Add a project page; a key already taken is refused (two apps, one name)."""
    if tab.group not in GROUPS:
        raise ValueError(f"project tab {tab.key!r}: group must be one of {', '.join(GROUPS)}")
    if tab.key in _TABS and _TABS[tab.key] != tab:
        raise ValueError(f"project tab {tab.key!r} is already added ({_TABS[tab.key].url_name})")
    _TABS[tab.key] = tab


def project_tabs(access, group: str) -> list[tuple[str, str]]:
    """(label, url) of the group's tabs, in the order added, if the viewer holds its roles."""
    if not access.has(*GROUPS[group]):
        return []
    slug = access.project.slug
    return [(t.label, reverse(t.url_name, args=[slug])) for t in _TABS.values() if t.group == group]


def project_page_url(key: str, project) -> str:
    """The URL of the page added under `key` for `project` ("" when no app added it)."""
    tab = _TABS.get(key)
    return reverse(tab.url_name, args=[project.slug]) if tab else ""
