"""The project audit log: one append-only line per administrative action, whoever sends it
(service, page, command), never a secret; the Audit page for the project's admins."""

import json
from datetime import timedelta
from io import StringIO

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.urls import reverse
from django.utils import timezone

from reviews.models import AppendOnlyError, ProjectAction, ProjectEvent, Role
from reviews.services.projects.audit import SecretInAuditLog, project_event_record
from reviews.services.projects.members import (
    membership_add,
    membership_remove,
    project_create,
    project_settings_update,
)
from reviews.services.projects.tokens import token_create, token_revoke
from tests.factories import ProjectFactory, UserFactory, member

pytestmark = pytest.mark.django_db


def _lines(project=None, **filters):
    return list(ProjectEvent.objects.filter(project=project, **filters).order_by("id"))


def _only(project=None, **filters) -> ProjectEvent:
    (line,) = _lines(project, **filters)
    return line


def _pem() -> str:
    return (
        Ed25519PrivateKey.generate()
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def test_creating_a_project_records_who_and_with_what():
    alice = UserFactory(username="alice")
    call_command(
        "create_project", "audited", "--admin", "alice", "--overlap", "3", stdout=StringIO()
    )
    line = ProjectEvent.objects.get(action=ProjectAction.PROJECT_CREATED, project__slug="audited")
    assert (line.actor, line.actor_name, line.target) == (alice, "alice", "audited")
    assert line.after == {"name": "audited", "overlap": 3, "admin": "alice"}
    project_create(actor=alice, slug="audited")  # re-run by its admin: nothing changes
    assert len(_lines(line.project)) == 1


def test_roles_given_and_taken_away_are_lines():
    project = ProjectFactory()
    admin = member(project, Role.ADMIN, username="boss")
    bob = UserFactory(username="bob")
    membership_add(actor=admin, project=project, user=bob, role=Role.RATER)
    membership_add(actor=admin, project=project, user=bob, role=Role.RATER)  # held: no line
    membership_add(actor=admin, project=project, user=bob, role=Role.APPROVER)
    membership_remove(actor=admin, project=project, user=bob)
    lines = _lines(project)
    assert [(x.action, x.actor_name, x.target, x.before, x.after) for x in lines] == [
        (ProjectAction.MEMBER_ADDED, "boss", "bob", {}, {"role": "rater"}),
        (ProjectAction.MEMBER_ADDED, "boss", "bob", {}, {"role": "approver"}),
        (ProjectAction.MEMBER_REMOVED, "boss", "bob", {"roles": ["approver", "rater"]}, {}),
    ]


def test_a_refused_change_leaves_no_line():
    project = ProjectFactory()
    admin = member(project, Role.ADMIN)
    with pytest.raises(ValidationError):
        membership_remove(actor=admin, project=project, user=admin)  # the last admin
    with pytest.raises(ValidationError):
        project_settings_update(actor=admin, project=project, changes={"overlap": 0})
    assert not _lines(project)


def test_the_add_member_command_is_the_console():
    project = ProjectFactory(slug="console")
    UserFactory(username="carol")
    call_command(
        "add_member", "carol", "--project", "console", "--role", "rater", stdout=StringIO()
    )
    line = _only(project)
    assert (line.actor, line.actor_name, line.target) == (None, "", "carol")


def test_the_members_page_records_a_removal(client):
    project = ProjectFactory()
    admin = member(project, Role.ADMIN, username="boss")
    dave = member(project, Role.RATER, Role.ADJUDICATOR, username="dave")
    client.force_login(admin)
    url = reverse("member_remove", args=[project.slug, dave.pk])
    client.post(url, {"role": Role.ADJUDICATOR})
    line = _only(project)
    assert (line.action, line.actor, line.before) == (
        ProjectAction.MEMBER_REMOVED,
        admin,
        {"roles": ["adjudicator"]},
    )


def test_the_settings_page_records_only_what_changed(client):
    project = ProjectFactory(blind=True, separation_of_duties=True, overlap=2)
    client.force_login(member(project, Role.ADMIN, username="boss"))
    form = client.get(reverse("project_settings", args=[project.slug])).context["form"]
    data = {name: value for name, value in form.initial.items() if value is not None}
    data.update(blind=False, separation_of_duties=False)
    data = {name: value for name, value in data.items() if value is not False}
    client.post(reverse("project_settings", args=[project.slug]), data)
    line = _only(project)
    assert line.action == ProjectAction.SETTINGS_CHANGED
    assert (line.before, line.after) == (
        {"blind": True, "separation_of_duties": True},
        {"blind": False, "separation_of_duties": False},
    )
    client.post(reverse("project_settings", args=[project.slug]), data)  # nothing changed
    assert len(_lines(project)) == 1


def test_tokens_are_site_wide_lines_without_their_secret():
    erin = UserFactory(username="erin")
    token, secret = token_create(actor=erin, name="ci", days=30)
    root = UserFactory(username="root", is_superuser=True)
    assert token_revoke(actor=root, token_pk=token.pk)
    assert not token_revoke(actor=root, token_pk=token.pk)  # already revoked: no second line
    created, revoked = _lines(None)
    assert (created.action, created.actor_name, created.target) == ("token_created", "erin", "ci")
    assert (revoked.action, revoked.actor_name, revoked.after["owner"]) == (
        "token_revoked",
        "root",
        "erin",
    )
    stored = json.dumps([created.before, created.after, revoked.after])
    token.refresh_from_db()
    assert secret not in stored and token.key_sha256 not in stored
    assert secret[4:10] not in stored


def test_trusting_and_revoking_a_key_through_the_commands(tmp_path):
    project = ProjectFactory(slug="keys")
    member(project, Role.ADMIN, Role.APPROVER, username="frank")
    pem = tmp_path / "partner.pem"
    pem.write_text(_pem())
    call_command(
        "trust_key",
        str(pem),
        "--project",
        "keys",
        "--by",
        "frank",
        "--label",
        "partner",
        stdout=StringIO(),
    )
    trusted = _only(project)
    assert (trusted.action, trusted.actor_name, trusted.after) == (
        ProjectAction.KEY_TRUSTED,
        "frank",
        {"label": "partner"},
    )
    call_command(
        "revoke_key",
        trusted.target,
        "--project",
        "keys",
        "--by",
        "frank",
        "--reason",
        "leaked",
        stdout=StringIO(),
    )
    revoked = _only(project, action=ProjectAction.KEY_REVOKED)
    assert (revoked.target, revoked.after) == (trusted.target, {"reason": "leaked"})


def test_secrets_and_misplaced_lines_are_refused():
    project = ProjectFactory()
    with pytest.raises(SecretInAuditLog):
        project_event_record(project, None, ProjectAction.SETTINGS_CHANGED, after={"api_key": "x"})
    with pytest.raises(ValueError, match="site-wide"):
        project_event_record(project, None, ProjectAction.TOKEN_CREATED)
    with pytest.raises(ValueError, match="site-wide"):
        project_event_record(None, None, ProjectAction.SETTINGS_CHANGED)
    with pytest.raises(ValueError):
        project_event_record(project, None, "renamed")
    assert not ProjectEvent.objects.exists()


def _refused(sql, params):
    with (
        pytest.raises(IntegrityError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(sql, params)


def test_the_table_refuses_update_and_delete():
    project = ProjectFactory()
    line = project_event_record(project, None, ProjectAction.SETTINGS_CHANGED, after={"x": 1})
    with pytest.raises(AppendOnlyError):
        ProjectEvent.objects.filter(pk=line.pk).update(target="edited")
    with pytest.raises(AppendOnlyError):
        line.delete()
    _refused("UPDATE reviews_projectevent SET target = 'edited' WHERE id = %s", [line.pk])
    _refused("DELETE FROM reviews_projectevent WHERE id = %s", [line.pk])
    if connection.vendor == "sqlite":
        _refused(
            "REPLACE INTO reviews_projectevent (id, project_id, actor_name, action, target, "
            "before, after, created_at) VALUES (%s, %s, '', 'settings_changed', 'x', '{}', '{}', "
            "'2026-01-01')",
            [line.pk, project.pk],
        )
    line.refresh_from_db()
    assert line.target == ""


# The page.


@pytest.fixture
def audited(client):
    project = ProjectFactory(slug="audited")
    boss = member(project, Role.ADMIN, username="boss")
    gina = UserFactory(username="gina")
    membership_add(actor=boss, project=project, user=gina, role=Role.RATER)
    project_settings_update(actor=boss, project=project, changes={"overlap": 5})
    project_event_record(None, boss, ProjectAction.PRICE_ADDED, target="openai/gpt", after={"x": 1})
    other = ProjectFactory()
    project_event_record(other, None, ProjectAction.SETTINGS_CHANGED, after={"overlap": 9})
    client.force_login(boss)
    return project


def _actions(client, **query) -> list[str]:
    response = client.get(reverse("project_audit", args=["audited"]), query)
    assert response.status_code == 200
    return [row.action for row in response.context["page"].rows]


def test_the_page_shows_the_project_and_site_wide_lines_newest_first(client, audited):
    assert _actions(client) == ["price_added", "settings_changed", "member_added"]
    page = client.get(reverse("project_audit", args=["audited"])).content.decode()
    assert "overlap:</span> 2 → 5" in page and "site-wide" in page
    home = client.get(reverse("project_home", args=["audited"])).content.decode()
    assert reverse("project_audit", args=["audited"]) in home


def test_the_page_filters_by_action_actor_and_date(client, audited):
    assert _actions(client, action="member_added") == ["member_added"]
    assert _actions(client, actor="boss") == ["price_added", "settings_changed", "member_added"]
    assert _actions(client, actor="nobody") == []
    today = timezone.now().date()
    assert len(_actions(client, since=today.isoformat(), until=today.isoformat())) == 3
    assert _actions(client, until=(today - timedelta(days=1)).isoformat()) == []
    assert _actions(client, since="not a date", action="renamed") == _actions(client)


def test_the_page_pages_by_keyset(client, audited):
    from reviews import selectors_audit

    first = selectors_audit.project_audit_page(audited, size=2)
    assert first.has_next and len(first.rows) == 2
    rest = _actions(client, before=first.last_id)
    assert rest == ["member_added"]


def test_only_the_projects_admins_see_the_page(client, audited):
    url = reverse("project_audit", args=["audited"])
    client.force_login(member(audited, Role.RATER, Role.APPROVER, username="rita"))
    assert client.get(url).status_code == 403
    client.force_login(UserFactory(username="stranger", is_staff=True))
    assert client.get(url).status_code == 404


def test_clearing_a_lockout_from_the_members_page_is_a_line(client, project):
    from axes.models import AccessAttempt

    nina = member(project, Role.APPROVER, username="nina")
    AccessAttempt.objects.create(
        username="nina", ip_address="10.0.0.9", user_agent="t", failures_since_start=9
    )
    client.force_login(member(project, Role.ADMIN, username="ada"))
    client.post(reverse("member_unlock", args=[project.slug, nina.pk]))
    line = _only(project, action=ProjectAction.LOCKOUT_CLEARED)
    assert (line.actor_name, line.target) == ("ada", "nina")
    assert (line.before, line.after) == (
        {"failed_attempt_records": 1},
        {"failed_attempt_records": 0},
    )


def test_critical_slices_set_by_the_service_and_the_admin_are_lines(client, project):
    from reviews.models import Slice
    from reviews.services.items import slices_critical_set

    safety = Slice.objects.create(project=project, name="safety")
    Slice.objects.create(project=project, name="tone", critical=True)
    assert slices_critical_set(project=project, names=["safety", "tone", "nope"]) == 2
    line = _only(project, action=ProjectAction.SLICES_CRITICAL_SET)  # tone already was
    assert (line.actor, line.target) == (None, "safety")
    assert (line.before, line.after) == (
        {"critical": False, "slices": ["safety"]},
        {"critical": True, "slices": ["safety"]},
    )
    slices_critical_set(project=project, names=["safety"])  # the same again: no line
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    client.force_login(root)
    url = reverse("admin:reviews_slice_change", args=[safety.pk])
    data = {"project": project.pk, "name": "safety"}  # the box unticked
    assert client.post(url, data).status_code == 302
    safety.refresh_from_db()
    assert not safety.critical
    last = _lines(project, action=ProjectAction.SLICES_CRITICAL_SET)[-1]
    assert (last.actor_name, last.before["critical"], last.after["critical"]) == (
        "root",
        True,
        False,
    )
