"""Acceptance (#11): the hostile corpus through the CLI, the upload form and the API.

Each file is refused with its own message, within 5 s of CPU and 300 MB peak memory (each case
and channel runs in a process of its own that reports its own peak RSS: the CLI command, and the
form and the API's file import through Django's test client), and the database row counts and
the media folder are what they were before.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from reviews.models import ImportJob, Role
from reviews.services.projects.tokens import token_create
from tests.factories import member
from tests.hostile import CASES, HOSTILE, build_large

ROOT = Path(__file__).resolve().parents[2]
MB = 1024 * 1024


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict[str, Path]:
    large = tmp_path_factory.mktemp("hostile-large")
    build_large(large)
    return {c.name: (large if c.large else HOSTILE) / c.name for c in CASES}


def _media_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


# --- CLI: a real process on its own SQLite database -------------------------------------------


# The project admin who uploads through the form and the API (with the token it writes down).
ADMIN = """
import pathlib
from django.contrib.auth import get_user_model
from reviews.models import Membership, Project
from reviews.services.projects.tokens import token_create
user = get_user_model().objects.create_user("ada", password="x")
Membership.objects.create(project=Project.objects.get(slug="hostile"), user=user, role="admin")
pathlib.Path({path!r}).write_text(token_create(actor=user, name="pipeline")[1])
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A migrated throw-away site with one project holding one item."""
    folder = tmp_path_factory.mktemp("hostile-site")
    env = {
        **os.environ,
        "DEBUG": "true",
        "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
        "MEDIA_ROOT": str(folder / "media"),
        "EVALSITE_VAR_DIR": str(folder),
        "TASKS_BACKEND": "immediate",
        "ALLOWED_HOSTS": "testserver",
    }
    (folder / "media").mkdir()
    good = folder / "good.jsonl"
    good.write_text('{"type": "item", "item_id": "kept"}\n')
    for args in (
        ["migrate", "-v", "0"],
        ["create_project", "hostile"],
        ["import_items", "--project", "hostile", str(good)],
        ["shell", "-c", ADMIN.format(path=str(folder / "token"))],
    ):
        subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True)
    return folder, env


# Every case runs in a process of its own, as the CLI would, but Django starts once: one child
# sets it up, then forks a grandchild per case and channel (a "zygote"). Each grandchild runs the
# command line (`manage.py import_items ...`), the upload form or the API through Django's test
# client, and reports its refusal and its own peak RSS from /proc/self/status: a fork starts its
# high-water mark at the zygote's resident size, so the peak includes Django as a fresh process's
# would. Its CPU comes from wait4 and counts the work after Django's start (about 1.5 s of it
# fewer than a fresh `manage.py` per case, which made this file the suite's slowest: 45 starts).
_ZYGOTE = r"""
import json, os, sqlite3, sys
import django
django.setup()
from django.contrib.auth import get_user_model
from django.core.management import execute_from_command_line
from django.db import connections
from django.test import Client
from reviews.models import ImportJob

folder = sys.argv[1]

# What every case would load on first use is loaded once, before the forks: the URLconf (views
# and the API's schemas) and the import command.
from django.core.management import load_command_class
from django.urls import get_resolver
get_resolver().url_patterns
load_command_class("reviews", "import_items")

def snapshot():
    with sqlite3.connect(os.path.join(folder, "db.sqlite3")) as db:
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                  if name.startswith(("reviews_", "judging_")) and name != "reviews_importjob"]
        counts = {t: db.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}
    media = os.path.join(folder, "media")
    files = sorted(os.path.relpath(os.path.join(d, f), media)
                   for d, _, names in os.walk(media) for f in names)
    return [counts, files]

def run(channel, path):
    if channel == "cli":
        try:
            execute_from_command_line(["manage.py", "import_items", "--project", "hostile", path])
            return 0
        except SystemExit as exit:
            return exit.code or 0
    client = Client()
    with open(path, "rb") as upload:
        if channel == "form":
            client.force_login(get_user_model().objects.get(username="ada"))
            client.post("/p/hostile/imports/", {"file": upload})
            print(ImportJob.objects.latest("pk").error, file=sys.stderr)
        else:
            secret = open(os.path.join(folder, "token")).read()
            response = client.post("/api/projects/hostile/imports", {"file": upload},
                                   headers={"Authorization": f"Bearer {secret}"})
            print(response.status_code, response.json()["error"], file=sys.stderr)
    return 0

results = {}
for channel, name, path in json.load(sys.stdin):
    connections.close_all()  # no connection crosses the fork
    before = snapshot()
    stderr_path = os.path.join(folder, "stderr.txt")
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            with open(stderr_path, "w") as err:
                os.dup2(err.fileno(), 2)
                sys.stderr = os.fdopen(2, "w", buffering=1)
                code = run(channel, path)
        except BaseException:
            import traceback
            traceback.print_exc()
        finally:
            with open("/proc/self/status") as status:
                kib = next(l.split()[1] for l in status if l.startswith("VmHWM:"))
            with open(stderr_path + ".peak", "w") as peak:
                peak.write(kib)
            sys.stderr.flush()
            os._exit(code if isinstance(code, int) else 1)
    _, status, usage = os.wait4(pid, 0)
    with open(stderr_path) as err, open(stderr_path + ".peak") as peak:
        results[f"{channel} {name}"] = {
            "code": os.waitstatus_to_exitcode(status), "stderr": err.read(),
            "cpu": usage.ru_utime + usage.ru_stime, "peak": int(peak.read()) * 1024,
            "changed": snapshot() != before,
        }
json.dump(results, sys.stdout)
"""


@dataclass(frozen=True)
class Refusal:
    code: int
    stderr: str
    cpu: float  # seconds
    peak: int  # bytes
    changed: bool  # a table's row count or the media folder differs afterwards


@pytest.fixture(scope="module")
def refusals(corpus, site) -> dict[str, Refusal]:
    """Every case through each channel ("cli", "form", "api"), keyed "CHANNEL NAME"."""
    folder, env = site
    jobs = [(channel, c.name, str(corpus[c.name])) for channel in CHANNELS for c in CASES]
    done = subprocess.run(
        [sys.executable, "-c", _ZYGOTE, str(folder)],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "evalsite.settings"},
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return {key: Refusal(**value) for key, value in json.loads(done.stdout).items()}


CHANNELS = ("cli", "form", "api")


def _within_limits(refusal: Refusal, name: str) -> None:
    assert "Traceback" not in refusal.stderr, refusal.stderr
    assert name in refusal.stderr, refusal.stderr  # the error names the file
    assert refusal.cpu < 5, f"{refusal.cpu:.1f} s of CPU"
    assert refusal.peak < 300 * MB, f"peak RSS {refusal.peak / MB:.0f} MB"
    assert not refusal.changed, "rows or media files changed"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_cli_refuses_each_hostile_file(case, refusals):
    refusal = refusals[f"cli {case.name}"]
    assert refusal.code != 0 and case.reason in refusal.stderr, refusal.stderr
    _within_limits(refusal, case.name)


@pytest.mark.parametrize("channel", ["form", "api"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_form_and_api_refuse_each_hostile_file_within_limits(case, channel, refusals):
    refusal = refusals[f"{channel} {case.name}"]
    assert refusal.code == 0 and case.reason in refusal.stderr, refusal.stderr
    if channel == "api":
        assert "422 {" in refusal.stderr, refusal.stderr
    _within_limits(refusal, case.name)


# --- upload form and API: in the test process ------------------------------------------------


def _row_counts() -> dict[str, int]:
    models = [
        model
        for app in ("reviews", "judging")
        for model in apps.get_app_config(app).get_models(include_auto_created=True)
        if model is not ImportJob  # the job is the record of the refusal
    ]
    return {model._meta.label: model._default_manager.count() for model in models}


@pytest.mark.django_db
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_upload_form_refuses_each_hostile_file(
    case, corpus, client, project, django_capture_on_commit_callbacks
):
    client.force_login(member(project, Role.ADMIN))
    media = Path(settings.MEDIA_ROOT)
    media.mkdir(parents=True, exist_ok=True)
    before = (_row_counts(), _media_files(media))
    upload = SimpleUploadedFile(case.name, corpus[case.name].read_bytes())
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("import_upload", args=[project.slug]), {"file": upload})
    job = ImportJob.objects.get()
    assert job.status == ImportJob.Status.FAILED
    assert case.reason in job.error and case.name in job.error, job.error
    assert not job.file  # the refused upload is not kept
    assert (_row_counts(), _media_files(media)) == before


@pytest.mark.django_db
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_api_file_import_refuses_each_hostile_file(case, corpus, client, project):
    _, secret = token_create(actor=member(project, Role.ADMIN), name="test")
    media = Path(settings.MEDIA_ROOT)
    media.mkdir(parents=True, exist_ok=True)
    before = (_row_counts(), _media_files(media))
    with corpus[case.name].open("rb") as upload:
        response = client.post(
            f"/api/projects/{project.slug}/imports",
            {"file": upload},
            headers={"Authorization": f"Bearer {secret}"},
        )
    assert response.status_code == 422, response.content
    error = response.json()["error"]
    assert case.reason in error["reason"] and error["file"].startswith(case.name), error
    assert (_row_counts(), _media_files(media)) == before


# The JSON batch endpoint: the corpus files that are JSON go in as its records or reviews.
def _records(data: bytes) -> bytes:
    return b'{"format": "jsonl", "records": [' + data.strip().replace(b"\n", b",") + b"]}"


def _reviews(data: bytes) -> bytes:
    return b'{"format": "review", "reviews": [' + data + b"]}"


API_CASES = {
    "deep.review.json": (_reviews, "JSON nesting is over the limit of 64 (IMPORT_MAX_DEPTH)"),
    "deep-record.jsonl": (_records, "JSON nesting is over the limit of 64 (IMPORT_MAX_DEPTH)"),
    "invalid-utf8.jsonl": (_records, "not UTF-8 text"),
    "long-string.review.json": (_reviews, "IMPORT_MAX_STRING_CHARS"),
}


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(API_CASES))
def test_api_refuses_each_hostile_json_body(name, corpus, client, project, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * MB
    _, secret = token_create(actor=member(project, Role.ADMIN), name="test")
    body, reason = API_CASES[name]
    before = _row_counts()
    response = client.post(
        f"/api/projects/{project.slug}/items",
        body(corpus[name].read_bytes()),
        content_type="application/json",
        headers={"Authorization": f"Bearer {secret}"},
    )
    assert response.status_code in (400, 422), response.content
    assert reason in response.json()["error"]["reason"]
    assert _row_counts() == before
