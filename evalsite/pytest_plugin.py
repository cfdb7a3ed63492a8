"""Test-run defaults, loaded by pytest before Django settings are read (`-p` in pyproject).

A throwaway SECRET_KEY, tasks run inline, and evidence/media under a per-run temporary folder,
so a test run never touches the developer's `var/`. Anything already set in the environment wins
(e.g. `DATABASE_URL` for the PostgreSQL run).
"""

import os
import tempfile

_run_dir = tempfile.mkdtemp(prefix="evalsite-test-")
# The suite never reads a developer's `.env` (`make run` writes DEBUG=true there).
os.environ.setdefault("DEBUG", "false")
os.environ.setdefault("SECRET_KEY", "test-only-not-secret-" + "x" * 40)
os.environ.setdefault("TASKS_BACKEND", "immediate")
os.environ.setdefault("EVALSITE_VAR_DIR", _run_dir)
os.environ.setdefault("SECURE_SSL_REDIRECT", "false")
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's live server thread
os.makedirs(os.path.join(os.environ["EVALSITE_VAR_DIR"], "static"), exist_ok=True)


def pytest_configure(config):
    """Transactional tests end with a flush: `TRUNCATE` on PostgreSQL (no row trigger fires),
    but `DELETE FROM` on SQLite, which the append-only triggers refuse. Unlock history for that
    wipe only (evalsite/history_triggers.py); every other delete in a test is still refused."""
    from django.db.backends.sqlite3.base import DatabaseOperations  # base first: import cycle

    flush = DatabaseOperations.execute_sql_flush

    def execute_sql_flush(self, sql_list):
        from evalsite.history_triggers import history_unlocked

        with history_unlocked(self.connection):
            flush(self, sql_list)

    DatabaseOperations.execute_sql_flush = execute_sql_flush
