"""A run's worker process killed half-way: resuming makes only the calls still missing.

Real processes: `manage.py db_worker` on a SQLite file, the model server here counting every
request. Calls recorded as finished before the kill must reach the server exactly once in all.
"""

import json
import os
import signal
import threading
import time
from collections import Counter

from judging.stub_model import answer
from tests.judging.run_helpers import PROMPT
from tests.judging.wire_server import Say, WireServer
from tests.worker_processes import manage, migrate, query, wait_for, worker

N_ITEMS = 60
ENQUEUE = """
from judging.models import JudgeConfig, Run
from judging.services.runs.control import run_create, run_resume
from judging.tasks import run_judge_task
run = Run.objects.first()
if run is None:
    run = run_create(config=JudgeConfig.objects.get(name="j"), split="all", confirm_held_out=True, concurrency=2)
else:
    run = run_resume(run)
run_judge_task.enqueue(run.pk)
"""


def site_env(tmp_path) -> dict:
    return {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "TASKS_BACKEND": "database",
        "RUN_STALE_SECONDS": "1",
        "EVALSITE_VAR_DIR": str(tmp_path),
        "DEBUG": "true",
    }


def site_with_judge(env, tmp_path, server, *, migrated: bool = False) -> None:
    """A project `kill` with N_ITEMS items and a judge `j` at `server` (`migrated`: the
    database has its tables already)."""
    env["JUDGE_ALLOWED_HOSTS"] = server.host_port  # the stub model server, its port only
    records = [{"type": "criterion", "name": "faithful", "labels": ["pass", "fail"]}] + [
        {"type": "item", "item_id": f"i{i:03}", "input": "q", "output": f"a{i}"}
        for i in range(N_ITEMS)
    ]
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in records))
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(PROMPT)
    if not migrated:
        migrate(env)
    manage(env, "create_project", "kill")
    manage(env, "import_items", "--project", "kill", str(items))
    manage(env, "judge_config", "--project", "kill", "--name", "j", "--provider",
           "openai-compatible", "--base-url", server.url, "--model", "stub",
           "--criterion", "faithful", "--prompt-file", str(prompt))  # fmt: skip


def test_killed_worker_resumes_without_repeating_finished_calls(tmp_path):
    gate = threading.Semaphore(0)  # the server answers only as fast as the test lets it

    def slow(request):
        gate.acquire(timeout=30)
        return Say(answer(request["json"]))

    db = tmp_path / "db.sqlite3"

    def calls():
        return query(db, "select request from judging_call where status != 'failed'")

    def status():
        return query(db, "select status, done from judging_run")[0]

    env = site_env(tmp_path)
    with WireServer("openai-compatible", answer=slow) as server:
        site_with_judge(env, tmp_path, server)
        manage(env, "shell", "-c", ENQUEUE)
        first = worker(env)
        for _ in range(25):
            gate.release()
        wait_for(lambda: len(calls()) >= 20)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        finished = [json.loads(r)["parts"][0]["text"] for (r,) in calls()]
        assert 20 <= len(finished) < N_ITEMS

        for _ in range(N_ITEMS * 2):
            gate.release()
        time.sleep(1.2)  # the killed run's heartbeat goes stale
        manage(env, "shell", "-c", ENQUEUE)
        second = worker(env)
        try:
            wait_for(lambda: status()[0] == "done")
        finally:
            os.killpg(second.pid, signal.SIGKILL)
            second.wait()
        sent = Counter(r["json"]["messages"][1]["content"][0]["text"] for r in server.requests)
    assert all(sent[text] == 1 for text in finished), "a finished call was made again"
    assert status() == ("done", N_ITEMS)
    assert query(db, "select count(*) from judging_verdict") == [(N_ITEMS,)]


SITE_RUN = """
from judging.models import JudgeConfig
from judging.services.runs.control import run_create
from judging.tasks import run_judge_task
run = run_create(config=JudgeConfig.objects.get(name="j"), split="all", confirm_held_out=True,
                 concurrency=2, from_site=True)
run_judge_task.enqueue(run.pk)
"""


def test_a_site_run_whose_worker_died_shows_interrupted_and_a_starting_worker_resumes_it(
    tmp_path,
):
    gate = threading.Semaphore(0)

    def slow(request):
        gate.acquire(timeout=30)
        return Say(answer(request["json"]))

    db = tmp_path / "db.sqlite3"
    env = site_env(tmp_path)

    def runs():
        out = manage(env, "judge_runs", "--project", "kill", "--format", "json").stdout
        return json.loads(out)["runs"]

    with WireServer("openai-compatible", answer=slow) as server:
        site_with_judge(env, tmp_path, server)
        manage(env, "shell", "-c", SITE_RUN)
        first = worker(env)
        for _ in range(25):
            gate.release()
        wait_for(lambda: len(query(db, "select id from judging_call")) >= 20)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        finished = [
            json.loads(r)["parts"][0]["text"]
            for (r,) in query(db, "select request from judging_call where status != 'failed'")
        ]
        time.sleep(1.2)  # the killed run's heartbeat goes stale
        [row] = runs()
        assert row["status"] == "interrupted" and row["finished_at"] is None
        assert query(db, "select status from judging_run") == [("running",)]

        for _ in range(N_ITEMS * 2):
            gate.release()
        second = worker(env)  # nobody presses Resume
        try:
            wait_for(lambda: query(db, "select status from judging_run") == [("done",)])
        finally:
            os.killpg(second.pid, signal.SIGKILL)
            second.wait()
        sent = Counter(r["json"]["messages"][1]["content"][0]["text"] for r in server.requests)
    [row] = runs()
    assert (row["status"], row["calls"]) == ("done", N_ITEMS)
    assert len(finished) >= 20 and all(sent[text] == 1 for text in finished)
    assert query(db, "select count(*) from judging_verdict") == [(N_ITEMS,)]
