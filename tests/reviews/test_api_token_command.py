"""`api_token`: a token for a named user, printed once alone on the last line, audited."""

import pytest
from django.core.management import CommandError, call_command

from reviews.models import ApiToken, ProjectAction, ProjectEvent
from reviews.services.projects.tokens import token_user
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_api_token_prints_a_working_secret_on_the_last_line(capsys):
    rita = UserFactory(username="rita")
    call_command("api_token", "--user", "rita", "--name", "notebook", "--days", "30")
    out = capsys.readouterr().out.rstrip("\n").splitlines()
    secret = out[-1]
    assert secret.startswith("evs_") and " " not in secret
    assert token_user(secret) == rita
    token = ApiToken.objects.get()
    assert (token.user, token.name) == (rita, "notebook")
    assert round((token.expires_at - token.created_at).total_seconds() / 86400) == 30
    # Audited like the page's token, without the secret; the console has no actor.
    event = ProjectEvent.objects.get()
    assert event.action == ProjectAction.TOKEN_CREATED and event.actor is None
    assert event.target == "notebook" and event.after["owner"] == "rita"
    assert secret not in str(event.after) and token.key_sha256 not in str(event.after)


def test_api_token_never_expires_when_asked(capsys):
    UserFactory(username="rita")
    call_command("api_token", "--user", "rita", "--name", "ci", "--days", "never")
    assert ApiToken.objects.get().expires_at is None


@pytest.mark.parametrize(
    "args, message",
    [
        (["--user", "ghost", "--name", "x"], "No user named 'ghost'"),
        (["--user", "sleepy", "--name", "x"], "inactive"),
        (["--user", "rita", "--name", "x", "--days", "7"], "lifetime"),
    ],
)
def test_api_token_refuses_bad_input_and_creates_nothing(args, message):
    UserFactory(username="rita")
    UserFactory(username="sleepy", is_active=False)
    with pytest.raises(CommandError, match=message):
        call_command("api_token", *args)
    assert ApiToken.objects.count() == 0
