"""Settings come from the environment, parsed strictly: junk fails loudly, never defaults."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from evalsite.env import env_bool, env_int, env_list, parse_database_url

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    "raw, expected", [("true", True), ("1", True), ("Off", False), ("", False)]
)
def test_env_bool_accepts_usual_spellings(raw, expected):
    assert env_bool("X", False, environ={"X": raw}) is expected


@pytest.mark.parametrize("raw", ["ture", "2", "enabled"])
def test_env_bool_refuses_junk(raw):
    with pytest.raises(ImproperlyConfigured, match="X="):
        env_bool("X", False, environ={"X": raw})


def test_env_int_refuses_junk_and_out_of_range():
    assert env_int("N", 5, environ={}) == 5
    assert env_int("N", 5, environ={"N": " 12 "}) == 12
    with pytest.raises(ImproperlyConfigured, match="not a whole number"):
        env_int("N", 5, environ={"N": "12MB"})
    with pytest.raises(ImproperlyConfigured, match="at least 1"):
        env_int("N", 5, minimum=1, environ={"N": "0"})


def test_env_list_splits_and_trims():
    assert env_list("H", [], environ={"H": "a.com, b.com,,"}) == ["a.com", "b.com"]


def test_database_url_sqlite_relative_and_absolute(tmp_path):
    relative = parse_database_url("sqlite:///var/x.sqlite3", base_dir=tmp_path)
    assert relative["NAME"] == str(tmp_path / "var/x.sqlite3")
    assert relative["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert relative["OPTIONS"]["timeout"] == 20
    assert relative["CONN_MAX_AGE"] == 60  # persistent: no new connection per request
    absolute = parse_database_url("sqlite:////tmp/y.sqlite3?conn_max_age=0", base_dir=tmp_path)
    assert absolute["NAME"] == "/tmp/y.sqlite3"
    assert absolute["CONN_MAX_AGE"] == 0


def test_database_url_postgres():
    config = parse_database_url("postgres://u:p%40ss@db.example:6543/evals", base_dir=ROOT)
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert (config["USER"], config["PASSWORD"], config["HOST"], config["PORT"]) == (
        "u",
        "p@ss",
        "db.example",
        "6543",
    )
    assert config["NAME"] == "evals"


@pytest.mark.parametrize(
    "url, message",
    [
        ("mysql://x/y", "unsupported scheme"),
        ("postgres://host:5432/", "names no database"),
        ("sqlite://", "names no SQLite file"),
        ("sqlite://host/db", "sqlite:///relative/path"),
    ],
)
def test_database_url_refuses_junk(url, message):
    with pytest.raises(ImproperlyConfigured, match=message):
        parse_database_url(url, base_dir=ROOT)


def _start(env_overrides):
    env = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG"}}
    env.update(env_overrides)
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_debug_off_without_secret_key_refuses_to_start():
    result = _start({"DEBUG": "false"})
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


def test_bad_debug_value_refuses_to_start():
    result = _start({"DEBUG": "yes please", "SECRET_KEY": "x" * 50})
    assert result.returncode != 0
    assert "DEBUG='yes please' is not a boolean" in result.stderr


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env={
            **{
                k: v
                for k, v in os.environ.items()
                if k not in {"DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE"}
            },
            "DEBUG": "false",
            "SECRET_KEY": "p" + "roduction-grade-secret-key-with-plenty-of-entropy-0123456789",
            "ALLOWED_HOSTS": "evals.example.com",
            "SECURE_SSL_REDIRECT": "true",
            "EVALSITE_VAR_DIR": str(tmp_path),
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
