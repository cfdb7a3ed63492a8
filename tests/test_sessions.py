"""evalsite.sessions reads Django's session rows by hand: the same rows, the same expiry."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.utils import timezone

from evalsite.sessions import SessionStore

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
