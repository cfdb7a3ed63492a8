"""One judge run shared by two task workers (RUN_WORKERS=2): two real `manage.py db_worker`
processes take its items as they go, and every item reaches the model server here (which counts
the requests) exactly once. On the suite's database: a SQLite file on the SQLite pass, the test
database on the PostgreSQL pass (claims taken with SELECT ... FOR UPDATE SKIP LOCKED)."""

import os
import signal
import sqlite3
import time
from collections import Counter

import pytest
from django.db import connection

from judging.stub_model import answer
from tests.judging.test_run_worker_kill import N_ITEMS, site_with_judge
from tests.judging.wire_server import Say, WireServer
from tests.worker_processes import manage, wait_for, worker

pytestmark = pytest.mark.django_db(transaction=True)

TASKS = "from django_tasks_database_dbtaskresult where task_path = 'judging.tasks.run_judge_task'"
TASKS_LEFT = f"select count(*) {TASKS} and finished_at is null"
SITE_RUN = """
from judging.models import JudgeConfig
from judging.services.runs.control import run_create
from judging.tasks import run_enqueue
run = run_create(config=JudgeConfig.objects.get(name="j"), split="all", confirm_held_out=True,
                 concurrency=4, from_site=True)
run_enqueue(run)
"""


def _site(tmp_path) -> tuple[dict, callable]:
    """The environment of the site's processes and a way to read its tables."""
    env = {**os.environ, "TASKS_BACKEND": "database", "RUN_WORKERS": "2", "DEBUG": "true",
           "EVALSITE_VAR_DIR": str(tmp_path)}  # fmt: skip
    if connection.vendor == "postgresql":  # the test database, committed rows only
        db = connection.settings_dict
        env["DATABASE_URL"] = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"

        def rows(sql):
            with connection.cursor() as cursor:
                cursor.execute(sql)
                return cursor.fetchall()

        return env, rows
    path = tmp_path / "db.sqlite3"
    env["DATABASE_URL"] = f"sqlite:///{path}"

    def rows(sql):
        with sqlite3.connect(path) as db:
            return db.execute(sql).fetchall()

    return env, rows


def test_two_workers_share_a_run_and_make_each_call_once(tmp_path):
    def slow(request):
        time.sleep(0.03)  # long enough that both workers are busy at once
        return Say(answer(request["json"]))

    env, rows = _site(tmp_path)
    with WireServer("openai-compatible", answer=slow) as server:
        site_with_judge(env, tmp_path, server, migrated=connection.vendor == "postgresql")
        manage(env, "shell", "-c", SITE_RUN)
        workers = [worker(env), worker(env)]
        try:
            wait_for(lambda: rows("select status from judging_run") == [("done",)], timeout=120)
            wait_for(lambda: rows(TASKS_LEFT) == [(0,)])  # the other worker's part ends too
        finally:
            for process in workers:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        sent = Counter(r["json"]["messages"][1]["content"][0]["text"] for r in server.requests)
    assert len(sent) == N_ITEMS and set(sent.values()) == {1}, "an item was called twice"
    assert rows("select workers, done, failed from judging_run") == [(2, N_ITEMS, 0)]
    assert rows("select count(*) from judging_verdict") == [(N_ITEMS,)]
    assert rows("select count(*) from judging_runclaim") == [(0,)]
    # Both workers had the run at once: each task started before the other finished.
    tasks = rows(f"select worker_ids, started_at, finished_at {TASKS}")
    assert len(tasks) == 2 and len({str(ids) for ids, _, _ in tasks}) == 2
    (_, start_a, end_a), (_, start_b, end_b) = tasks
    assert start_a < end_b and start_b < end_a, "the second worker did not take part"
