"""Settings come from the environment, parsed strictly: junk fails loudly, never defaults."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.test import override_settings

from evalsite.env import env_bool, env_int, env_list, env_str, parse_database_url, read_env_file

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


def test_env_str_keeps_a_leading_dollar():
    # django-environ would read "$abc" as the variable abc (unset: None); a secret may start so.
    assert env_str("S", environ={"S": "$abc"}) == "$abc"


def test_env_file_fills_in_what_the_environment_leaves_unset(tmp_path, monkeypatch):
    (tmp_path / ".env").write_text("EVALSITE_T_A=from-file\nEVALSITE_T_B=from-file\n")
    monkeypatch.setenv("EVALSITE_T_A", "from-environment")
    monkeypatch.delenv("EVALSITE_T_B", raising=False)
    read_env_file(tmp_path / ".env")
    assert os.environ["EVALSITE_T_A"] == "from-environment"
    assert os.environ.pop("EVALSITE_T_B") == "from-file"
    read_env_file(tmp_path / "missing.env")  # no file: nothing to read, no error


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
    assert config["ENGINE"] == "evalsite.backends.postgresql"
    assert (config["USER"], config["PASSWORD"], config["HOST"], config["PORT"]) == (
        "u",
        "p@ss",
        "db.example",
        "6543",
    )
    assert config["NAME"] == "evals"
    assert config["CONN_MAX_AGE"] == 60 and config["CONN_HEALTH_CHECKS"] is True
    tuned = parse_database_url("postgres://h/evals?conn_max_age=0&sslmode=require", base_dir=ROOT)
    assert tuned["CONN_MAX_AGE"] == 0 and tuned["OPTIONS"] == {"sslmode": "require"}


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


def _settings_under(environ: dict[str, str], monkeypatch) -> dict:
    """evalsite/settings.py read again, as a deployment would, under `environ`."""
    for name in ("DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    spec = importlib.util.spec_from_file_location("production", ROOT / "evalsite/settings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {name: getattr(module, name) for name in dir(module) if name.isupper()}


def test_check_deploy_is_clean_with_production_settings(tmp_path, monkeypatch):
    """`check --deploy` on the settings a production environment gives. In this process, every
    setting that differs from the test run's swapped in (a second Django start in a subprocess
    cost more than the rest of this file); the test database stays, --deploy reads none."""
    production = _settings_under(
        {
            "DEBUG": "false",
            "SECRET_KEY": "p" + "roduction-grade-secret-key-with-plenty-of-entropy-0123456789",
            "ALLOWED_HOSTS": "evals.example.com",
            "SECURE_SSL_REDIRECT": "true",
            "EVALSITE_VAR_DIR": str(tmp_path),
        },
        monkeypatch,
    )
    assert production["DEBUG"] is False and production["ALLOWED_HOSTS"] == ["evals.example.com"]
    changed = {
        name: value
        for name, value in production.items()
        if name != "DATABASES" and value != getattr(settings, name, object())
    }
    with override_settings(**changed):
        call_command("check", "--deploy", "--fail-level", "WARNING")


def test_single_sign_on_half_configured_refuses_to_start(monkeypatch):
    """OIDC_RP_CLIENT_ID turns single sign-on on: the rest must be set, and is named if not."""
    env = {"DEBUG": "true", "OIDC_RP_CLIENT_ID": "evalsite",
           "OIDC_OP_TOKEN_ENDPOINT": "https://idp.example.com/token"}  # fmt: skip
    with pytest.raises(ImproperlyConfigured) as refused:
        _settings_under(env, monkeypatch)
    message = str(refused.value)
    assert "OIDC_RP_CLIENT_SECRET, OIDC_OP_AUTHORIZATION_ENDPOINT" in message
    assert "OIDC_OP_TOKEN_ENDPOINT" not in message
    assert _settings_under({"OIDC_RP_CLIENT_ID": ""}, monkeypatch)["SSO_ENABLED"] is False


def test_env_int_list_reads_whole_numbers_and_refuses_junk():
    from evalsite.env import env_int_list

    assert env_int_list("X", [10, 60], environ={}) == [10, 60]
    assert env_int_list("X", [10], environ={"X": "5, 30"}) == [5, 30]
    with pytest.raises(ImproperlyConfigured, match="X='5,soon' is not a list of whole numbers"):
        env_int_list("X", [10], environ={"X": "5,soon"})
