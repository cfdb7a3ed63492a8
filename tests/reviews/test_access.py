"""The access helper: outsiders get 404, members without the role 403, for every role."""

import pytest
from django.core.exceptions import PermissionDenied
from django.http import Http404

from reviews.access import item_for_user, project_for_user
from reviews.models import Role
from tests.factories import ItemFactory, ProjectFactory, UserFactory, member

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("held", Role.values)
@pytest.mark.parametrize("needed", Role.values)
def test_role_matrix(held, needed):
    project = ProjectFactory()
    user = member(project, held)
    if held == needed:
        assert project_for_user(user, project.slug, roles=[needed]).project == project
    else:
        with pytest.raises(PermissionDenied):
            project_for_user(user, project.slug, roles=[needed])


def test_any_of_several_roles_is_enough():
    project = ProjectFactory()
    user = member(project, Role.RATER, Role.APPROVER)
    access = project_for_user(user, project.slug, roles=[Role.ADMIN, Role.APPROVER])
    assert access.roles == {Role.RATER, Role.APPROVER}
    assert access.is_rater and access.is_approver and not access.is_admin


def test_outsider_gets_404_whatever_the_role_asked():
    project = ProjectFactory()
    stranger = member(ProjectFactory(), Role.ADMIN)
    for roles in (None, [Role.RATER]):
        with pytest.raises(Http404):
            project_for_user(stranger, project.slug, roles=roles)


def test_staff_are_not_implicitly_members():
    project = ProjectFactory()
    staff = UserFactory(is_staff=True, is_superuser=True)
    with pytest.raises(Http404):
        project_for_user(staff, project.slug)


def test_unknown_project_is_404_like_a_foreign_one():
    with pytest.raises(Http404):
        project_for_user(UserFactory(), "no-such-project")


def test_item_of_another_project_is_404_even_for_a_member():
    project, other = ProjectFactory(), ProjectFactory()
    user = member(project, Role.RATER)
    member(other, Role.RATER, username=user.username)  # same user, both projects
    foreign_item = ItemFactory(project=other)
    with pytest.raises(Http404):
        item_for_user(user, project.slug, foreign_item.pk)
    access, item = item_for_user(user, other.slug, foreign_item.pk)
    assert item == foreign_item and access.project == other
