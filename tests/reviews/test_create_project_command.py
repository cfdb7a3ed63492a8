import pytest
from django.core.management import CommandError, call_command

from reviews.models import Membership, Project, Role
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_create_project_is_idempotent_and_applies_given_settings(capsys):
    admin = UserFactory(username="boss")
    call_command("create_project", "evals", "--name", "Evals", "--admin", "boss", "--overlap", "3")
    call_command("create_project", "evals", "--resolution", "majority")
    project = Project.objects.get(slug="evals")
    assert (project.name, project.overlap, project.resolution_rule) == ("Evals", 3, "majority")
    assert Membership.objects.filter(project=project, user=admin, role=Role.ADMIN).count() == 1
    out = capsys.readouterr().out
    assert "created project evals" in out and "exists project evals" in out


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
