"""`add_member`: scripted set-up of who holds which role; idempotent, clear errors."""

import pytest
from django.core.management import CommandError, call_command

from reviews.models import Membership, Project, Role
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def evals():
    return Project.objects.create(slug="evals", name="Evals")


def test_add_member_gives_the_role_once_and_says_so(evals, capsys):
    rita = UserFactory(username="rita")
    call_command("add_member", "--project", "evals", "rita", "--role", "rater")
    call_command("add_member", "--project", "evals", "rita", "--role", "rater")
    call_command("add_member", "--project", "evals", "rita", "--role", "adjudicator")
    held = Membership.objects.filter(project=evals, user=rita)
    assert sorted(held.values_list("role", flat=True)) == [Role.ADJUDICATOR, Role.RATER]
    out = capsys.readouterr().out
    assert "rita now holds rater in evals" in out
    assert "rita already holds rater in evals" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--project", "nope", "rita", "--role", "rater"], "No project 'nope'"),
        (["--project", "evals", "ghost", "--role", "rater"], "No user named 'ghost'"),
        (["--project", "evals", "rita", "--role", "boss"], "invalid choice: 'boss'"),
        (["--project", "evals", "sleepy", "--role", "rater"], "inactive"),
    ],
)
def test_add_member_refuses_bad_input_and_changes_nothing(evals, args, message):
    UserFactory(username="rita")
    UserFactory(username="sleepy", is_active=False)
    with pytest.raises(CommandError, match=message):
        call_command("add_member", *args)
    assert Membership.objects.count() == 0
