"""The Django admin goes through the same rules as the site: what raters saw, judges said and
evidence an item cites cannot be edited there, and staff cannot make themselves project admins."""

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from judging.models import Criterion, Judge, Verdict
from reviews.models import (
    ApiToken,
    Assignment,
    AssignmentBatch,
    Claim,
    Item,
    ItemSource,
    Membership,
    Question,
    Role,
)
from reviews.services.projects.members import membership_add, membership_remove
from reviews.services.projects.tokens import token_create, token_revoke, token_user
from tests.factories import ProjectFactory, UserFactory, member

pytestmark = pytest.mark.django_db

READ_ONLY = [Question, Claim, ItemSource, Assignment, AssignmentBatch, Criterion, Judge, Verdict]


def _superuser(client):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))


@pytest.mark.parametrize("model", READ_ONLY, ids=lambda m: m.__name__)
def test_content_and_workflow_rows_cannot_be_changed_in_admin(client, model, approved_item):
    from django.contrib import admin

    _superuser(client)
    model_admin = admin.site._registry[model]
    request = client.get("/admin/").wsgi_request
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request)
    assert not model_admin.has_delete_permission(request)


def test_a_claim_posted_to_its_admin_page_stays_as_the_model_said(client, approved_item):
    claim = Claim.objects.first()
    _superuser(client)
    url = reverse("admin:reviews_claim_change", args=[claim.pk])
    response = client.post(url, {"item": claim.item_id, "path": claim.path, "value": '"999"'})
    assert response.status_code == 403
    assert Claim.objects.get(pk=claim.pk).value == claim.value


def test_item_admin_edits_only_title_and_slices(client, approved_item):
    _superuser(client)
    url = reverse("admin:reviews_item_change", args=[approved_item.pk])
    page = client.get(url).content.decode()
    for field in ("output", "expected", "input", "metadata", "overlap"):
        assert f'name="{field}"' not in page
    client.post(url, {"title": "renamed", "output": '"forged"', "expected": '"forged"'})
    approved_item.refresh_from_db()
    assert approved_item.title == "renamed" and approved_item.output != "forged"
    assert (
        client.post(
            reverse("admin:reviews_item_delete", args=[approved_item.pk]), {"post": "yes"}
        ).status_code
        == 403
    )
    assert Item.objects.filter(pk=approved_item.pk).exists()
    project_delete = reverse("admin:reviews_project_delete", args=[approved_item.project_id])
    assert client.post(project_delete, {"post": "yes"}).status_code == 403


def test_item_admin_offers_only_its_own_projects_slices(client, approved_item):
    from reviews.models import Slice

    theirs = Slice.objects.create(project=ProjectFactory(), name="theirs")
    _superuser(client)
    url = reverse("admin:reviews_item_change", args=[approved_item.pk])
    response = client.post(url, {"title": approved_item.title, "slices": [theirs.pk]})
    assert response.status_code == 200  # the form again, with its error
    assert not approved_item.slices.exists()
    ours = Slice.objects.create(project=approved_item.project, name="ours")
    assert client.post(url, {"title": approved_item.title, "slices": [ours.pk]}).status_code == 302
    assert list(approved_item.slices.all()) == [ours]


@pytest.fixture
def staff_with_membership_rights():
    """A staff user an operator gave every membership permission, admin of no project."""
    user = UserFactory(is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__endswith="_membership"))
    return user


def test_staff_cannot_make_themselves_admin_of_a_project(client, staff_with_membership_rights):
    victim = ProjectFactory()
    client.force_login(staff_with_membership_rights)
    response = client.post(
        reverse("admin:reviews_membership_add"),
        {
            "project": victim.pk,
            "user": staff_with_membership_rights.username,
            "role": Role.ADMIN,
        },
    )
    assert response.status_code == 200  # the form again, with its error
    assert not Membership.objects.filter(user=staff_with_membership_rights).exists()


def test_staff_admin_of_one_project_manages_only_that_one(client, staff_with_membership_rights):
    own, other = ProjectFactory(), ProjectFactory()
    Membership.objects.create(project=own, user=staff_with_membership_rights, role=Role.ADMIN)
    other_admin = member(other, Role.ADMIN)
    client.force_login(staff_with_membership_rights)
    rater = UserFactory()
    client.post(
        reverse("admin:reviews_membership_add"),
        {"project": own.pk, "user": rater.username, "role": Role.RATER},
    )
    assert Membership.objects.filter(project=own, user=rater, role=Role.RATER).exists()
    listed = client.get(reverse("admin:reviews_membership_changelist")).content.decode()
    assert other_admin.username not in listed
    theirs = Membership.objects.get(project=other, user=other_admin)
    url = reverse("admin:reviews_membership_delete", args=[theirs.pk])
    client.post(url, {"post": "yes"})
    assert Membership.objects.filter(pk=theirs.pk).exists()


def test_membership_services_check_the_caller(project):
    stranger, admin = UserFactory(), member(project, Role.ADMIN)
    with pytest.raises(PermissionDenied):
        membership_add(actor=stranger, project=project, user=stranger, role=Role.ADMIN)
    with pytest.raises(PermissionDenied):
        membership_remove(actor=member(project, Role.APPROVER), project=project, user=admin)
    membership_add(actor=admin, project=project, user=stranger, role=Role.RATER)
    membership_add(actor=None, project=project, user=stranger, role=Role.APPROVER)  # the CLI
    assert Membership.objects.filter(project=project, user=stranger).count() == 2


def test_a_revoked_token_cannot_be_revived_in_admin(client):
    owner = UserFactory()
    token, secret = token_create(actor=owner, name="ci")
    token_revoke(actor=owner, token_pk=token.pk)
    _superuser(client)
    url = reverse("admin:reviews_apitoken_change", args=[token.pk])
    response = client.post(
        url, {"user": owner.pk, "name": "ci", "revoked_at_0": "", "revoked_at_1": ""}
    )
    assert response.status_code == 403
    assert token_user(secret) is None
    assert ApiToken.objects.get(pk=token.pk).revoked_at is not None


def test_superuser_revokes_a_token_from_admin(client):
    token, secret = token_create(actor=UserFactory(), name="leaked")
    _superuser(client)
    client.post(
        reverse("admin:reviews_apitoken_changelist"),
        {"action": "revoke", "_selected_action": [token.pk]},
    )
    assert token_user(secret) is None


def test_a_panel_takes_only_its_own_projects_judge_versions(client, project):
    from judging.models import Criterion, Panel
    from judging.services.judges.configs import JudgeSettings, judge_config_save

    def version(owner, name):
        Criterion.objects.get_or_create(
            project=owner, name="c", defaults={"labels": ["pass", "fail"], "sha256": "c"}
        )
        settings = JudgeSettings(provider="openai", model="m", prompt="{{ labels }}", criterion="c")
        return judge_config_save(project=owner, name=name, settings=settings).version

    theirs = version(ProjectFactory(), "theirs")
    _superuser(client)
    data = {
        "project": project.pk,
        "name": "p",
        "rule": "majority",
        "members-TOTAL_FORMS": 1,
        "members-INITIAL_FORMS": 0,
        "members-0-version": theirs.pk,
    }
    response = client.post(reverse("admin:judging_panel_add"), data)
    assert "Judges of another project cannot sit on this panel: openai/m." in (
        response.content.decode()
    )
    assert not Panel.objects.exists()
    mine = version(project, "mine")
    client.post(reverse("admin:judging_panel_add"), {**data, "members-0-version": mine.pk})
    (member,) = Panel.objects.get().members.all()
    assert (member.version, member.judge) == (mine, mine.judge)
