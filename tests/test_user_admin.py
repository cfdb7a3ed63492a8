"""Only superusers manage users in the site admin: a staff user granted every user permission
still cannot set an approver's password or make themselves superuser."""

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from reviews.models import Membership, Role
from tests.factories import PASSWORD, ProjectFactory, UserFactory, member

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(db):
    user = UserFactory(username="staff", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__model="user"))
    return user


def test_staff_with_user_permissions_cannot_change_a_password_or_themselves(client, staff):
    project = ProjectFactory()
    approver = member(project, Role.APPROVER, username="april")
    Membership.objects.create(project=project, user=staff, role=Role.ADMIN)  # sees its members
    client.force_login(staff)
    password_url = reverse("admin:auth_user_password_change", args=[approver.pk])
    new = {"password1": "taken-over-2026", "password2": "taken-over-2026"}
    assert client.get(password_url).status_code == 403
    assert client.post(password_url, new).status_code == 403
    approver.refresh_from_db()
    assert approver.check_password(PASSWORD)
    change = reverse("admin:auth_user_change", args=[staff.pk])
    page = client.get(change)
    assert page.status_code == 200 and 'name="is_superuser"' not in page.content.decode()
    client.post(change, {"username": "staff", "is_superuser": "on", "is_staff": "on"})
    staff.refresh_from_db()
    assert not staff.is_superuser
    assert client.get(reverse("admin:auth_user_add")).status_code == 403
    assert client.get(reverse("admin:auth_user_changelist")).status_code == 200  # may look


def test_a_superuser_still_manages_users(client):
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    approver = member(ProjectFactory(), Role.APPROVER, username="april")
    client.force_login(root)
    password_url = reverse("admin:auth_user_password_change", args=[approver.pk])
    new = {"password1": "reset-by-root-2026", "password2": "reset-by-root-2026"}
    assert client.post(password_url, new).status_code == 302
    approver.refresh_from_db()
    assert approver.check_password("reset-by-root-2026")
