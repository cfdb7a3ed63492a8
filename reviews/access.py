"""Who may see and do what, per project. Every view (judging's too) goes through here.

Outsiders get 404, so a project's existence never leaks; members without the needed role get
403. Roles are explicit: staff and project admins are not implicitly raters.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.core.exceptions import PermissionDenied
from django.http import Http404

from evalsite import raw_rows
from reviews.models import (
    HOLDING_STATUSES,
    Assignment,
    Item,
    ItemStatus,
    Membership,
    Project,
    Question,
    Role,
)

# Who oversees a project's items and reads its figures (item pages, the item list, dashboards,
# scores, estimates, their API): every role but rater, whose work stays blind to others'.
OVERSEERS = (Role.ADMIN, Role.ADJUDICATOR, Role.APPROVER)
EXPORTERS = (Role.ADMIN, Role.APPROVER)  # who downloads approved ground truth


@dataclass(frozen=True)
class ProjectAccess:
    """A project together with the roles the current user holds in it."""

    project: Project
    roles: frozenset[str]

    def has(self, *roles: str) -> bool:
        return bool(self.roles.intersection(roles))

    @property
    def is_rater(self) -> bool:
        return Role.RATER in self.roles

    @property
    def is_adjudicator(self) -> bool:
        return Role.ADJUDICATOR in self.roles

    @property
    def is_approver(self) -> bool:
        return Role.APPROVER in self.roles

    @property
    def is_admin(self) -> bool:
        return Role.ADMIN in self.roles

    # Decisions pages show or hide by; computed here once, not combined again in templates.
    @property
    def is_overseer(self) -> bool:
        return self.has(*OVERSEERS)

    @property
    def rater_only(self) -> bool:
        """A rater and nothing more: sees counts, never the items behind them."""
        return self.is_rater and not self.is_overseer

    @property
    def can_export(self) -> bool:
        return self.has(*EXPORTERS)


def roles_of(user, project: Project) -> frozenset[str]:
    if not user.is_authenticated:
        return frozenset()
    return frozenset(
        Membership.objects.filter(project=project, user=user).values_list("role", flat=True)
    )


def project_for_user(user, slug: str, *, roles: Iterable[str] | None = None) -> ProjectAccess:
    """The project `slug` as seen by `user`: 404 unless a member, 403 without one of `roles`."""
    if not user.is_authenticated:
        raise Http404("No such project.")
    (memberships,) = raw_rows.fetch_together(_memberships(user, slug))
    return _access(memberships, roles)


def _memberships(user, slug: str) -> raw_rows.Read:
    """The project `slug` with the user's role in it, a row per role held. Every page asks this
    first: written by hand (raw_rows)."""
    return raw_rows.Read(
        f"SELECT {raw_rows.columns(Project, 'p')}, m.role FROM reviews_membership m"  # noqa: S608
        " JOIN reviews_project p ON p.id = m.project_id WHERE p.slug = %s AND m.user_id = %s",
        [slug, user.pk],
        (Project,),
        extra=1,
    )


def _access(memberships: list[tuple], roles: Iterable[str] | None) -> ProjectAccess:
    """The access `_memberships`' rows give: 404 without any, 403 without one of `roles`."""
    if not memberships:
        raise Http404("No such project.")
    access = ProjectAccess(
        project=memberships[0][0], roles=frozenset(role for _, role in memberships)
    )
    require_role(access, roles)
    return access


def require_role(access: ProjectAccess, roles: Iterable[str] | None) -> None:
    if roles is None:
        return
    wanted = set(roles)
    if not access.roles & wanted:
        names = sorted(Role(r).label.lower() for r in wanted)
        if len(names) == 1:
            needed = f"the {names[0]} role"
        else:  # "one of the adjudicator, approver or project admin roles"
            needed = f"one of the {', '.join(names[:-1])} or {names[-1]} roles"
        raise PermissionDenied(f"This needs {needed} in {access.project.name}.")


def item_for_user(
    user, slug: str, item_pk: int, *, roles: Iterable[str] | None = None
) -> tuple[ProjectAccess, Item]:
    """An item of project `slug`, with the same 404/403 rules as the project itself."""
    access, (item,) = _guarded(
        user,
        slug,
        roles,
        raw_rows.Read(
            f"SELECT {raw_rows.columns(Item, 'i')} FROM reviews_item i"  # noqa: S608
            " JOIN reviews_project p ON p.id = i.project_id WHERE i.id = %s AND p.slug = %s",
            [item_pk, slug],
            (Item,),
        ),
        missing="No such item.",
    )
    item.project = access.project
    return access, item


def _guarded(
    user, slug: str, roles: Iterable[str] | None, read: raw_rows.Read, *, missing: str
) -> tuple[ProjectAccess, tuple]:
    """The access check and `read` (a row of project `slug`) in one round trip; the row is
    given only once the check passed (404/403 as `project_for_user`), 404 `missing` if none."""
    if not user.is_authenticated:
        raise Http404("No such project.")
    memberships, found = raw_rows.fetch_together(_memberships(user, slug), read)
    access = _access(memberships, roles)
    if not found:
        raise Http404(missing)
    return access, found[0]


def item_for_overseer(
    user, slug: str, item_pk: int, *, roles: Iterable[str]
) -> tuple[ProjectAccess, Item]:
    """An item as admins, adjudicators and approvers see it: everyone's answers and history.

    Someone who also rates the item is refused while it is open for raters: they could read
    the other answers first and still write or revise their own (blind rating is per person,
    whatever other roles they hold)."""
    access, item = item_for_user(user, slug, item_pk, roles=roles)
    rating = Assignment.objects.filter(item=item, rater_id=user.pk, status__in=HOLDING_STATUSES)
    if item.status == ItemStatus.OPEN and rating.exists():
        raise PermissionDenied(
            "You are rating this item: the other answers stay hidden until raters are done."
        )
    return access, item


def question_for_user(
    user, slug: str, item_pk: int, question_pk: int, *, roles: Iterable[str] | None = None
) -> tuple[ProjectAccess, Question]:
    """A question of an item of project `slug`, its item read in the same query (the save path
    of every autosave), both with the access check as `item_for_user` reads them; the same
    404/403 rules as the project itself."""
    access, (question, item) = _guarded(
        user,
        slug,
        roles,
        raw_rows.Read(
            f"SELECT {raw_rows.columns(Question, 'q')}, {raw_rows.columns(Item, 'i')}"  # noqa: S608
            " FROM reviews_question q JOIN reviews_item i ON i.id = q.item_id"
            " JOIN reviews_project p ON p.id = i.project_id"
            " WHERE q.id = %s AND q.item_id = %s AND p.slug = %s",
            [question_pk, item_pk, slug],
            (Question, Item),
        ),
        missing="No such question.",
    )
    question.item, item.project = item, access.project
    return access, question


def projects_for_user(user):
    """Projects where `user` holds any role, for lists and navigation."""
    return Project.objects.filter(memberships__user_id=user.pk).distinct()
