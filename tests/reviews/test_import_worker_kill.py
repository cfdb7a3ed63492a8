"""A real `manage.py db_worker` killed (SIGKILL) in the middle of an import's write.

Real processes on a SQLite file: the worker's transaction dies with it, so no row it wrote
survives; after IMPORT_STALE_SECONDS the job page says why and offers Retry, and the retried job
imports the whole file in a new worker.
"""

import os
import signal
import sqlite3
import time

from tests.helpers import sqlite_site_env, write_item_lines
from tests.worker_processes import manage, migrate, query, wait_for, worker

N_ITEMS = 20_000
START = """
from django.core.files import File
from django.db import transaction
from reviews.models import Project
from reviews.services.imports.jobs import import_job_start
from reviews.tasks import run_import_job
from django.contrib.auth import get_user_model
user = get_user_model().objects.get(username="ada")
with open({path!r}, "rb") as handle, transaction.atomic():
    job = import_job_start(actor=user, project=Project.objects.get(slug="kill"), upload=File(handle, name="items.jsonl"))
    transaction.on_commit(lambda: run_import_job.enqueue(job.pk))
"""
# The page and the Retry button, as the project admin sees them.
BROWSE = """
from django.contrib.auth import get_user_model
from django.test import Client
from reviews.models import ImportJob
job = ImportJob.objects.get()
client = Client()
client.force_login(get_user_model().objects.get(username="ada"))
print(client.get(f"/p/kill/imports/{job.pk}/").content.decode())
print("RETRY", client.post(f"/p/kill/imports/{job.pk}/retry/").status_code)
"""
KEPT_OUT = ("reviews_importjob", "django_tasks_database", "django_session", "axes_", "sqlite_")


def file_row_counts(db) -> dict[str, int]:
    """Rows in every table of the SQLite file `db` the import could write (not the job and task
    bookkeeping): read with sqlite3, since the site runs in other processes."""
    tables = [t for (t,) in query(db, "select name from sqlite_master where type = 'table'")]
    return {
        t: query(db, f'select count(*) from "{t}"')[0][0]
        for t in tables
        if not t.startswith(KEPT_OUT)
    }


def writing(db) -> bool:
    """Some connection holds SQLite's write lock (the import's transaction is open)."""
    connection = sqlite3.connect(db, timeout=0, isolation_level=None)
    try:
        connection.execute("begin immediate")
        connection.execute("rollback")
        return False
    except sqlite3.OperationalError:
        return True
    finally:
        connection.close()


def test_killed_worker_leaves_nothing_and_retry_imports(tmp_path):
    db = tmp_path / "db.sqlite3"
    env = sqlite_site_env(tmp_path, TASKS_BACKEND="database", IMPORT_STALE_SECONDS="1")
    items = write_item_lines(tmp_path / "items.jsonl", N_ITEMS)
    migrate(env)
    manage(env, "create_project", "kill")
    manage(env, "shell", "-c", "from django.contrib.auth import get_user_model; "
           "get_user_model().objects.create_user('ada', password='x')")  # fmt: skip
    manage(env, "add_member", "--project", "kill", "ada", "--role", "admin")
    before = file_row_counts(db)
    manage(env, "shell", "-c", START.format(path=str(items)))

    first = worker(env)
    try:
        wait_for(lambda: query(db, "select status from reviews_importjob") == [("running",)])
        wait_for(lambda: writing(db))  # the import's write transaction is open
        wal = db.with_name("db.sqlite3-wal")
        start = wal.stat().st_size
        # ...and has written rows: its uncommitted pages spill into the WAL file.
        wait_for(lambda: wal.stat().st_size > start + 256 * 1024)
        assert writing(db)
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    assert query(db, "select status from reviews_importjob") == [("running",)]
    assert file_row_counts(db) == before, "the killed import left rows behind"

    time.sleep(1.5)  # the dead worker's heartbeat goes stale (IMPORT_STALE_SECONDS=1)
    page = manage(env, "shell", "-c", BROWSE).stdout
    assert "The task worker stopped while importing (no heartbeat for 1 s)" in page
    assert ">Retry</button>" in page and "RETRY 302" in page
    assert query(db, "select status, error from reviews_importjob order by id")[0] == (
        "failed",
        "The task worker stopped while importing (no heartbeat for 1 s); nothing was written. "
        "Retry to import the same file again.",
    )

    second = worker(env)
    try:
        wait_for(lambda: query(db, "select status from reviews_importjob order by id")[1:]
                 == [("succeeded",)], timeout=240)  # fmt: skip
    finally:
        os.killpg(second.pid, signal.SIGKILL)
        second.wait()
    assert query(db, "select count(*) from reviews_item") == [(N_ITEMS,)]
