"""Strict readers for settings that come from the environment.

Every reader fails loudly on junk (``DEBUG=ture`` is an error, not False), so a typo in a
deployment shows up at start-up instead of as a silently insecure site.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import SplitResult, parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str | None = None, *, environ=os.environ) -> str | None:
    value = environ.get(name)
    return default if value is None else value


def env_bool(name: str, default: bool, *, environ=os.environ) -> bool:
    raw = environ.get(name)
    if raw is None:
        return default
    lowered = raw.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use one of: true, false, 1, 0).")


def env_int(name: str, default: int, *, minimum: int | None = None, environ=os.environ) -> int:
    raw = environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a whole number.") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}.")
    return value


def env_list(name: str, default: list[str], *, environ=os.environ) -> list[str]:
    raw = environ.get(name)
    if raw is None:
        return default
    return [part.strip() for part in raw.split(",") if part.strip()]


def env_path(name: str, default: Path, *, environ=os.environ) -> Path:
    raw = environ.get(name)
    return Path(raw).expanduser().resolve() if raw else default


def parse_database_url(url: str, *, base_dir: Path) -> dict:
    """Turn ``sqlite:///var/db.sqlite3`` or ``postgres://user:pw@host:5432/name`` into DATABASES.

    Relative SQLite paths are relative to ``base_dir``. SQLite gets a busy timeout and IMMEDIATE
    transactions, so concurrent writers wait for the lock instead of failing mid-transaction.
    Both keep a connection for ``?conn_max_age=`` seconds (default 60; 0 opens one per request).
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    options = dict(parse_qsl(parts.query))
    if scheme == "sqlite":
        return _sqlite_database(url, parts, options, base_dir=base_dir)
    if scheme in {"postgres", "postgresql", "pgsql"}:
        return _postgres_database(url, parts, options)
    raise ImproperlyConfigured(
        f"DATABASE_URL={url!r}: unsupported scheme {scheme!r} (use sqlite:// or postgres://)."
    )


def _sqlite_database(url: str, parts: SplitResult, options: dict, *, base_dir: Path) -> dict:
    raw_path = unquote(parts.path)
    if parts.netloc:
        raise ImproperlyConfigured(
            f"DATABASE_URL={url!r}: write SQLite URLs as sqlite:///relative/path "
            "or sqlite:////absolute/path."
        )
    if not raw_path or raw_path == "/":
        raise ImproperlyConfigured(f"DATABASE_URL={url!r} names no SQLite file.")
    path = Path(raw_path[1:])  # "/var/db" -> relative "var/db"; "//abs/db" -> "/abs/db"
    if not path.is_absolute():
        path = base_dir / path
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(path),
        # Opening the file and running the PRAGMAs below is ~1 ms of every request.
        "CONN_MAX_AGE": int(options.get("conn_max_age", 60)),
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


def _postgres_database(url: str, parts: SplitResult, options: dict) -> dict:
    """The query's other parameters (``sslmode=``…) pass through as connection OPTIONS."""
    name = unquote(parts.path.lstrip("/"))
    if not name:
        raise ImproperlyConfigured(f"DATABASE_URL={url!r} names no database.")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "",
        "PORT": str(parts.port or ""),
        "CONN_MAX_AGE": int(options.pop("conn_max_age", 60)),
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": options,
    }
