"""`create_project`: creates, or re-runs harmlessly for the project's own admin; never takes over."""

import pytest
from django.core.management import CommandError, call_command

from reviews.models import Membership, Project, Role
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _state():
    return list(Project.objects.values_list("slug", "name", "overlap", "resolution_rule")), list(
        Membership.objects.values_list("project__slug", "user__username", "role")
    )


def test_create_project_then_rerun_by_its_admin_changes_nothing(capsys):
    admin = UserFactory(username="boss")
    call_command("create_project", "evals", "--name", "Evals", "--admin", "boss", "--overlap", "3")
    before = _state()
    call_command("create_project", "evals", "--admin", "boss", "--overlap", "3")
    assert _state() == before
    project = Project.objects.get(slug="evals")
    assert (project.name, project.overlap, project.resolution_rule) == ("Evals", 3, "unanimous")
    assert Membership.objects.filter(project=project, user=admin, role=Role.ADMIN).count() == 1
    out = capsys.readouterr().out
    assert "created project evals" in out and "project evals exists" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["evals"], "exists already: choose another slug"),
        (["evals", "--admin", "staffer"], "exists already: choose another slug"),
        (["evals", "--admin", "boss", "--overlap", "5"], "overlap is 3, not 5.*settings page"),
        (["evals", "--admin", "boss", "--resolution", "majority"], "resolution_rule is"),
    ],
)
def test_an_existing_slug_is_an_error_for_non_admins_and_settings_never_change(args, message):
    UserFactory(username="boss")
    UserFactory(username="staffer", is_staff=True, is_superuser=True)
    call_command("create_project", "evals", "--admin", "boss", "--overlap", "3")
    before = _state()
    with pytest.raises(CommandError, match=message):
        call_command("create_project", *args)
    assert _state() == before


@pytest.mark.parametrize(
    "args, message",
    [
        (["p1", "--admin", "ghost"], "No user named 'ghost'"),
        (["p2", "--overlap", "0"], "Overlap must be at least 1"),
        (["not a slug"], "slug"),
    ],
)
def test_create_project_refuses_bad_input_and_changes_nothing(args, message):
    with pytest.raises(CommandError, match=message):
        call_command("create_project", *args)
    assert Project.objects.count() == 0
