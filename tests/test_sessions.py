"""evalsite.sessions reads Django's session rows by hand: the same rows, the same expiry, and
the signed-in user's row in the same statement once this process knows whose session it is."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from evalsite import sessions
from evalsite.sessions import SessionStore
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_it_is_the_engine():
    assert settings.SESSION_ENGINE == "evalsite.sessions"


def test_a_live_session_loads_and_an_expired_one_does_not():
    store = SessionStore()
    store["answer"] = 42
    store.create()
    assert SessionStore(store.session_key).load() == {"answer": 42}

    Session.objects.filter(session_key=store.session_key).update(
        expire_date=timezone.now() - timedelta(seconds=1)
    )
    stale = SessionStore(store.session_key)
    assert stale.load() == {}
    assert stale.session_key is None  # a new key next time, as Django's own store does


def test_an_unknown_key_loads_nothing():
    assert SessionStore("x" * 32).load() == {}


# The user's row read with the session (evalsite/sessions.py, evalsite/auth.py).


def _reads(queries, table: str) -> list[str]:
    return [q["sql"] for q in queries if f'FROM "{table}"' in q["sql"]]


def _signed_in(client):
    user = UserFactory()
    client.force_login(user)
    assert client.get(reverse("api_tokens")).status_code == 200  # this process reads it once
    return user


def test_a_session_read_before_brings_its_users_row_in_the_same_statement(client):
    user = _signed_in(client)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse("api_tokens"))
    assert response.wsgi_request.user == user
    (session_read,) = _reads(queries, "django_session")
    assert 'LEFT JOIN "auth_user"' in session_read
    assert _reads(queries, "auth_user") == []  # no read of its own


def test_the_user_is_the_one_the_session_names_whatever_the_guess(client):
    user, other = _signed_in(client), UserFactory()
    key = client.session.session_key
    for guess in (other.pk, other.pk + 1000):  # another user; nobody
        sessions._USER_OF[key] = guess
        with CaptureQueriesContext(connection) as queries:
            response = client.get(reverse("api_tokens"))
        assert response.status_code == 200
        assert response.wsgi_request.user == user
        assert len(_reads(queries, "auth_user")) == 1  # read by itself, as without a guess
        assert sessions._USER_OF[key] == user.pk  # and the guess put right


def test_the_row_read_with_the_session_is_current(client):
    """A password changed or an account deactivated since the last request counts at once."""
    user = _signed_in(client)
    user.set_password("another-long-password")
    user.save()
    assert client.get(reverse("api_tokens")).status_code == 302  # the session no longer verifies

    user = _signed_in(client)
    type(user).objects.filter(pk=user.pk).update(is_active=False)
    assert client.get(reverse("api_tokens")).status_code == 302


def test_what_the_process_remembers_is_bounded(client, monkeypatch):
    monkeypatch.setattr(sessions, "_USER_OF", {})
    monkeypatch.setattr(sessions, "_REMEMBERED_AT_MOST", 2)
    for _ in range(3):
        _signed_in(client)
    assert len(sessions._USER_OF) == 1  # emptied when full, then this session's
