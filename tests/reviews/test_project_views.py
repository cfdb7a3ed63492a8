"""Project list, project home, members: owner / outsider (404) / wrong role (403)."""

import pytest
from django.urls import reverse

from reviews.models import Membership, Project, Role
from tests.factories import ProjectFactory, UserFactory, member

pytestmark = pytest.mark.django_db


def test_anonymous_is_sent_to_login(client):
    response = client.get(reverse("project_list"))
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


def test_project_list_shows_only_my_projects(client):
    mine, theirs = ProjectFactory(name="Mine"), ProjectFactory(name="Theirs")
    client.force_login(member(mine, Role.RATER))
    member(theirs, Role.RATER)
    page = client.get(reverse("project_list")).content.decode()
    assert "Mine" in page and "Theirs" not in page


def test_project_home_for_member(client, project, rater):
    client.force_login(rater)
    response = client.get(reverse("project_home", args=[project.slug]))
    assert response.status_code == 200
    assert project.name in response.content.decode()


def test_project_home_outsider_gets_404(client, project, outsider):
    client.force_login(outsider)
    assert client.get(reverse("project_home", args=[project.slug])).status_code == 404


def test_members_page_rater_gets_403(client, project, rater):
    client.force_login(rater)
    assert client.get(reverse("members", args=[project.slug])).status_code == 403


def test_members_page_outsider_gets_404(client, project, outsider):
    client.force_login(outsider)
    assert client.get(reverse("members", args=[project.slug])).status_code == 404


def test_admin_adds_member_by_email_and_removes_a_role(client, project):
    admin = member(project, Role.ADMIN)
    newcomer = UserFactory(username="nina", email="nina@example.com")
    client.force_login(admin)
    url = reverse("members", args=[project.slug])
    client.post(url, {"user": "NINA@example.com", "role": Role.RATER})
    client.post(url, {"user": "nina", "role": Role.APPROVER})
    assert set(newcomer.memberships.values_list("role", flat=True)) == {"rater", "approver"}
    client.post(reverse("member_remove", args=[project.slug, newcomer.pk]), {"role": "rater"})
    assert set(newcomer.memberships.values_list("role", flat=True)) == {"approver"}


def test_last_admin_cannot_be_removed(client, project):
    admin = member(project, Role.ADMIN)
    client.force_login(admin)
    client.post(reverse("member_remove", args=[project.slug, admin.pk]))
    assert Membership.objects.filter(project=project, user=admin, role=Role.ADMIN).exists()


def test_only_staff_create_projects_in_the_ui(client):
    user = UserFactory()
    client.force_login(user)
    assert client.get(reverse("project_new")).status_code == 403
    user.is_staff = True
    user.save()
    response = client.post(
        reverse("project_new"),
        {"slug": "fresh", "name": "Fresh", "overlap": 3, "resolution_rule": "majority"},
    )
    project = Project.objects.get(slug="fresh")
    assert response.status_code == 302 and project.overlap == 3
    assert Membership.objects.filter(project=project, user=user, role=Role.ADMIN).exists()
