"""Prepare an empty Evalsite database for the side-by-side benchmark (run as a subprocess).

``python -m bench._evalsite_setup --slug S --raters N`` with the server's environment
(``DATABASE_URL``, ``SECRET_KEY``, ``EVALSITE_VAR_DIR``...): migrates, collects static files,
creates a project admin with an API token, project ``S`` (overlap 1) with a pass/fail
criterion ``correct``, and ``N`` raters; signs everyone in (a session row each: no password
hashing, no login throttle). Prints one JSON line: the slug, the token and the session keys.
A PostgreSQL database named by ``DATABASE_URL`` is dropped and created first.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

CRITERION = {
    "type": "criterion",
    "name": "correct",
    "labels": ["pass", "fail"],
    "positive": "pass",
    "text": "Is the output correct?",
}


def fresh_postgres(url: str) -> None:
    """Drop and create the database `url` names (PostgreSQL only)."""
    import psycopg

    base, name = url.rsplit("/", 1)
    name = name.split("?")[0]
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        # DROP DATABASE waits for every backend of the server to acknowledge it: fail, do not
        # hang, if another client's connection never does.
        conn.execute("SET statement_timeout = '120s'")
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def _session_key(user) -> str:
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[-1]  # what a login stores
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return session.session_key


def _criterion(project, admin) -> None:
    from reviews.services.imports.pipeline import file_import

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "criterion.jsonl"
        path.write_text(json.dumps(CRITERION) + "\n", encoding="utf-8")
        file_import(actor=admin, project=project, path=path, format="jsonl")


def build(slug: str, raters: int) -> dict:
    from django.contrib.auth import get_user_model

    from reviews.models import Role
    from reviews.services.projects.members import membership_add, project_create
    from reviews.services.projects.tokens import token_create

    users = get_user_model().objects
    admin = users.create_user(f"{slug}-admin", password=None)
    project = project_create(actor=admin, slug=slug, overlap=1).project
    _criterion(project, admin)
    _, token = token_create(actor=admin, name="bench")
    sessions = []
    for n in range(raters):
        user = users.create_user(f"{slug}-rater-{n:03d}", password=None)
        membership_add(actor=admin, project=project, user=user, role=Role.RATER)
        sessions.append(_session_key(user))
    return {"slug": slug, "token": token, "admin": _session_key(admin), "raters": sessions}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--slug", required=True)
    parser.add_argument("--raters", type=int, required=True)
    args = parser.parse_args()
    url = os.environ["DATABASE_URL"]
    if url.startswith(("postgres://", "postgresql://")):
        fresh_postgres(url)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)
    call_command("collectstatic", verbosity=0, interactive=False)
    print(json.dumps(build(args.slug, args.raters)))


if __name__ == "__main__":
    main()
