"""SQLite: a rater's autosaves during a large command-line import all succeed.

Real processes on one SQLite file: the import parses and validates outside its transaction and
then writes in one short one; WAL lets the rater's reads go on, the busy timeout lets each save
wait for the write lock. Every save must be confirmed (200) and stored.
"""

import json
import subprocess
import sys

from tests.helpers import sqlite_site_env, write_item_lines
from tests.worker_processes import ROOT, manage, migrate, query, wait_for

N_ITEMS = 40_000
EXAMPLE = ROOT / "tests" / "data" / "examples" / "statement-0912.review.json"
# The rater claims the example item, then saves a new value until told to stop, and prints
# every save's status code (and the slowest save's seconds, for the record: not asserted).
SAVER = """
import json, pathlib, time
from django.contrib.auth import get_user_model
from django.test import Client
from reviews.models import Assignment
client = Client()
client.force_login(get_user_model().objects.get(username="rita"))
assert client.post("/p/load/review/next/").status_code == 302
assignment = Assignment.objects.get()
question = assignment.item.questions.order_by("pk").first()
url = f"/p/load/items/{{assignment.item_id}}/questions/{{question.pk}}/answer/"
ready, stop = pathlib.Path({ready!r}), pathlib.Path({stop!r})
codes, slowest = [], 0.0
while not stop.exists() or len(codes) < 3:
    data = {{"choice": "value", "value": str(len(codes)), "expected_seq": str(len(codes))}}
    started = time.monotonic()
    codes.append(client.post(url, data, headers={{"HX-Request": "true"}}).status_code)
    slowest = max(slowest, time.monotonic() - started)
    ready.touch()
print(json.dumps({{"codes": codes, "slowest": slowest}}))
"""


def test_every_autosave_during_a_large_import_is_stored(tmp_path):
    db = tmp_path / "db.sqlite3"
    env = sqlite_site_env(tmp_path, TASKS_BACKEND="immediate")
    items = write_item_lines(tmp_path / "items.jsonl", N_ITEMS)
    migrate(env)
    manage(env, "create_project", "load")
    manage(env, "import_items", "--project", "load", str(EXAMPLE))
    manage(env, "shell", "-c", "from django.contrib.auth import get_user_model; "
           "get_user_model().objects.create_user('rita', password='x')")  # fmt: skip
    manage(env, "add_member", "--project", "load", "rita", "--role", "rater")

    ready, stop = tmp_path / "ready", tmp_path / "stop"
    saver = subprocess.Popen(
        [sys.executable, "manage.py", "shell", "-c", SAVER.format(ready=str(ready), stop=str(stop))],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for(ready.exists)
        imported = manage(env, "import_items", "--project", "load", str(items))
    finally:
        stop.touch()
        out, err = saver.communicate(timeout=120)
    assert saver.returncode == 0, err
    assert f"imported {N_ITEMS} items" in imported.stdout
    saves = json.loads(out.strip().splitlines()[-1])
    codes = saves["codes"]
    print(f"{len(codes)} saves during the import, slowest {saves['slowest']:.2f} s")
    assert codes and set(codes) == {200}, codes
    stored = query(db, "select count(*), max(seq) from reviews_answer")
    assert stored == [(len(codes), len(codes))]
