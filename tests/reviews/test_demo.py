from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command

from reviews.demo.load import DEMO_USERS
from reviews.models import Item, Membership, Project

pytestmark = pytest.mark.django_db


def _counts():
    return (
        Project.objects.count(),
        get_user_model().objects.count(),
        Membership.objects.count(),
        Item.objects.count(),
    )


def test_load_demo_is_idempotent_and_prints_working_logins(capsys):
    call_command("load_demo")
    first = _counts()
    call_command("load_demo")
    assert _counts() == first
    out = capsys.readouterr().out
    for spec in DEMO_USERS:
        assert spec.username in out and spec.password in out
        user = get_user_model().objects.get(username=spec.username)
        assert user.check_password(spec.password)
        held = set(Membership.objects.filter(user=user).values_list("role", flat=True))
        assert held == set(spec.roles)


def test_load_demo_if_empty_leaves_an_existing_database_alone(capsys):
    Project.objects.create(slug="existing", name="Existing")
    call_command("load_demo", "--if-empty")
    assert not Project.objects.filter(slug="demo").exists()


def test_the_demo_staff_user_is_no_superuser_and_readme_says_what_each_login_is(capsys):
    """README's logins table is what `make run` prints (via load_demo) and what each login is."""
    call_command("load_demo")
    users = get_user_model().objects.filter(username__in=[s.username for s in DEMO_USERS])
    assert not users.filter(is_superuser=True).exists()
    assert users.get(username="alex").is_staff
    out = capsys.readouterr().out
    readme = (Path(settings.BASE_DIR) / "README.md").read_text()
    for spec in DEMO_USERS:
        assert f"| `{spec.username}` | `{spec.password}` | {spec.described} |" in readme
        assert f"{spec.password:<17} {spec.described}" in out
    assert "site staff (not a superuser)" in DEMO_USERS[-1].described
