"""Real `manage.py` processes for the kill and concurrency tests: commands, a task worker, and
polling the SQLite file they share."""

import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def manage(env, *args, **kwargs):
    """Run `manage.py *args` in ROOT with `env`; raise if it fails, return its captured output."""
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True,
        capture_output=True, text=True, timeout=120, **kwargs,
    )  # fmt: skip


_MIGRATED: list[Path] = []  # the file migrated once in this test process


def migrate(env):
    """The site's tables in `env`'s SQLite file: a copy of one file migrated once per test run
    by `manage.py migrate` (each migrate costs ~7 s of CPU; the kill tests all start from it)."""
    if not _MIGRATED:
        folder = Path(tempfile.mkdtemp(prefix="evalsite-migrated-"))
        template = folder / "db.sqlite3"
        manage({**env, "DATABASE_URL": f"sqlite:///{template}", "EVALSITE_VAR_DIR": str(folder)},
               "migrate", "-v", "0")  # fmt: skip
        _MIGRATED.append(template)
    url = env["DATABASE_URL"]
    assert url.startswith("sqlite:////"), url
    # SQLite's backup copies a consistent file, whatever is still in the template's WAL.
    with (
        closing(sqlite3.connect(_MIGRATED[0])) as source,
        closing(sqlite3.connect(url[10:])) as copy,
    ):
        source.backup(copy)


def worker(env):
    """Start `manage.py db_worker` (polling every 0.1 s) in its own session, for os.killpg."""
    return subprocess.Popen(
        [sys.executable, "manage.py", "db_worker", "--no-reload", "--no-startup-delay",
         "--interval", "0.1"],
        cwd=ROOT, env=env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def wait_for(condition, timeout=90):
    """Poll `condition()` every 0.05 s until it is true; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def query(db, sql):
    """The rows of `sql` on the SQLite file `db`, read in a connection of its own."""
    with sqlite3.connect(db) as connection:
        return connection.execute(sql).fetchall()
