"""Settings from the environment, read with django-environ, failing loudly on junk.

django-environ reads the variables, the git-ignored ``.env`` and database URLs. What is added
here is strictness it does not have: it reads any unknown word as False (``DEBUG=ture`` would
quietly switch a setting off), has no minimums, keeps the spaces in ``a, b`` lists, and accepts
database URLs this site cannot use (MySQL, an in-memory SQLite). Every reader here refuses such a
value at start-up, naming the variable.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

import environ
from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
_ENGINES = {"sqlite": "evalsite.backends.sqlite3", "postgres": "evalsite.backends.postgresql"}


def _env(environ_: os._Environ | dict) -> environ.Env:
    reader = environ.Env()
    reader.ENVIRON = environ_
    return reader


def read_env_file(path: Path) -> None:
    """Fill in, from ``path`` (if it exists), what the environment leaves unset."""
    if path.exists():
        environ.Env.read_env(path, overwrite=False)


def env_str(name: str, default: str | None = None, *, environ=os.environ) -> str | None:
    # A plain lookup: django-environ reads a value starting with "$" as the name of another
    # variable, and a secret key or a password may start with "$".
    return environ.get(name, default)


def env_bool(name: str, default: bool, *, environ=os.environ) -> bool:
    raw = environ.get(name)
    if raw is None:
        return default
    lowered = raw.strip().lower()
    if lowered not in _TRUE | _FALSE:
        raise ImproperlyConfigured(
            f"{name}={raw!r} is not a boolean (use one of: true, false, 1, 0)."
        )
    return lowered in _TRUE


def env_int(name: str, default: int, *, minimum: int | None = None, environ=os.environ) -> int:
    try:
        value = _env(environ).int(name, default=default)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={environ[name]!r} is not a whole number.") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}.")
    return value


def env_list(name: str, default: list[str], *, environ=os.environ) -> list[str]:
    values = _env(environ).list(name, default=default)
    return [part.strip() for part in values if part.strip()]


def env_int_list(name: str, default: list[int], *, environ=os.environ) -> list[int]:
    values = env_list(name, [str(n) for n in default], environ=environ)
    if not all(v.isdigit() for v in values):
        raise ImproperlyConfigured(f"{name}={environ[name]!r} is not a list of whole numbers.")
    return [int(v) for v in values]


def env_path(name: str, default: Path, *, environ=os.environ) -> Path:
    raw = env_str(name, "", environ=environ)
    return Path(raw).expanduser().resolve() if raw else default


def parse_database_url(url: str, *, base_dir: Path) -> dict:
    """Turn ``sqlite:///var/db.sqlite3`` or ``postgres://user:pw@host:5432/name`` into DATABASES.

    Relative SQLite paths are relative to ``base_dir``. SQLite gets a busy timeout and IMMEDIATE
    transactions, so concurrent writers wait for the lock instead of failing mid-transaction.
    Both keep a connection for ``?conn_max_age=`` seconds (default 60; 0 opens one per request);
    PostgreSQL's other query parameters (``sslmode=``…) become connection OPTIONS.
    """
    parts = urlsplit(url)
    scheme = {"postgresql": "postgres", "pgsql": "postgres"}.get(parts.scheme.lower(), parts.scheme)
    if scheme not in _ENGINES:
        raise ImproperlyConfigured(
            f"DATABASE_URL={url!r}: unsupported scheme {parts.scheme!r} "
            "(use sqlite:// or postgres://)."
        )
    if scheme == "sqlite" and parts.netloc:  # django-environ would only warn and drop the host
        raise ImproperlyConfigured(
            f"DATABASE_URL={url!r}: write SQLite URLs as sqlite:///relative/path "
            "or sqlite:////absolute/path."
        )
    config = environ.Env.db_url_config(url)
    config.setdefault("CONN_MAX_AGE", 60)  # opening a connection is ~1 ms of every request
    if scheme == "sqlite":
        return _sqlite_database(url, config, base_dir=base_dir)
    if not config["NAME"]:
        raise ImproperlyConfigured(f"DATABASE_URL={url!r} names no database.")
    config["ENGINE"] = _ENGINES["postgres"]  # Django's, with a cheaper health check
    config["PORT"] = str(config["PORT"])
    config["CONN_HEALTH_CHECKS"] = True
    config.setdefault("OPTIONS", {})
    return config


def _sqlite_database(url: str, config: dict, *, base_dir: Path) -> dict:
    if config["NAME"] in ("", ":memory:"):
        raise ImproperlyConfigured(f"DATABASE_URL={url!r} names no SQLite file.")
    path = Path(config["NAME"])  # "sqlite:///var/db" -> "var/db"; "sqlite:////abs/db" -> "/abs/db"
    if not path.is_absolute():
        path = base_dir / path
    options = config.get("OPTIONS", {})
    return {
        "ENGINE": _ENGINES["sqlite"],
        "NAME": str(path),
        "CONN_MAX_AGE": config["CONN_MAX_AGE"],
        "OPTIONS": {
            "timeout": int(options.get("timeout", 20)),
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
        # Tests get a file beside it, not Django's shared-cache in-memory database: there a
        # writer locks whole tables and a concurrent request (the browser tests' live
        # server) fails at once with "database table is locked" instead of waiting.
        "TEST": {"NAME": str(path.with_name(f"{path.stem}-test{path.suffix}"))},
    }
