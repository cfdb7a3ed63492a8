"""PostgreSQL connections kept between requests are checked without a round trip
(evalsite/backends/postgresql/base.py): a sound one sends nothing before the request's own
statements; one the server dropped is replaced before the request uses it."""

import time

import psycopg
import pytest
from django.db import connection


def _request_starts():
    connection.close_if_unusable_or_obsolete()  # what Django runs as each request starts


@pytest.fixture
def checks(monkeypatch):
    """How many times Django's `SELECT 1` check ran."""
    ran = []
    real = connection.is_usable
    monkeypatch.setattr(connection, "is_usable", lambda: ran.append(1) or real())
    return ran


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


@pytest.mark.postgres
def test_a_sound_connection_is_kept_without_a_select_1(transactional_db, checks):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL=postgres://…)")
    _request_starts()  # a connection left with errors by an earlier test is checked: not here
    pid = _backend_pid()
    checks.clear()
    assert connection.health_check_enabled
    _request_starts()
    assert _backend_pid() == pid
    assert checks == []


@pytest.mark.postgres
def test_a_connection_the_server_dropped_is_replaced_before_use(transactional_db, checks):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL=postgres://…)")
    _request_starts()
    pid = _backend_pid()
    checks.clear()
    with psycopg.connect(**connection.get_connection_params(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])
        deadline = time.monotonic() + 10
        while (
            admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone()
            and time.monotonic() < deadline
        ):
            time.sleep(0.05)
    _request_starts()
    assert _backend_pid() != pid  # no error: a new connection
    assert checks == [1]  # the socket had the server's goodbye: Django's check confirmed it
