"""Acceptance (#11): the hostile corpus through the CLI, the upload form and the API.

Each file is refused with its own message, within 5 s of CPU and 300 MB peak memory (each
channel runs in a subprocess that reports its own peak RSS: the CLI command, and the form and
the API's file import through Django's test client), and the database row counts and the
media folder are what they were before.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
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


def _sqlite_counts(path: Path) -> dict[str, int]:
    """Rows per table (not the import job: it is the record of the refusal)."""
    with sqlite3.connect(path) as db:
        tables = [
            name
            for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if name.startswith(("reviews_", "judging_")) and name != "reviews_importjob"
        ]
        return {t: db.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}


# The child reports its own peak from /proc/self/status (VmHWM belongs to the address space made
# by execve). The kernel's ru_maxrss would not do: it keeps the forking parent's high-water mark
# across execve, so a child started from a 500 MB pytest process "peaks" at 500 MB before it runs.
_PEAK_REPORTER = """
import atexit, runpy, sys
def report_peak():
    with open("/proc/self/status") as status:
        kib = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    sys.stderr.write(f"\\npeak-rss-kib {kib}\\n")
atexit.register(report_peak)
sys.argv = sys.argv[1:]
runpy.run_path("manage.py", run_name="__main__")
"""


def _run_measured(args: list[str], env: dict) -> tuple[int, str, float, int]:
    """(exit code, stderr, CPU seconds, peak RSS bytes) of one child process."""
    process = subprocess.Popen(
        [sys.executable, "-c", _PEAK_REPORTER, "manage.py", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    stderr = process.stderr.read().decode()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    stderr, _, peak_kib = stderr.rpartition("\npeak-rss-kib ")
    return process.returncode, stderr, usage.ru_utime + usage.ru_stime, int(peak_kib) * 1024


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_cli_refuses_each_hostile_file(case, corpus, site):
    folder, env = site
    before = (_sqlite_counts(folder / "db.sqlite3"), _media_files(folder / "media"))
    code, stderr, cpu, peak = _run_measured(
        ["import_items", "--project", "hostile", str(corpus[case.name])], env
    )
    assert code != 0 and case.reason in stderr, stderr
    assert "Traceback" not in stderr
    assert case.name in stderr  # the error names the file
    assert cpu < 5, f"{cpu:.1f} s of CPU"
    assert peak < 300 * MB, f"peak RSS {peak / MB:.0f} MB"
    assert (_sqlite_counts(folder / "db.sqlite3"), _media_files(folder / "media")) == before


# The form and the API in a process of their own, through the test client: prints the refusal.
_CHANNEL = """
import sys
from django.contrib.auth import get_user_model
from django.test import Client
from reviews.models import ImportJob
ada = get_user_model().objects.get(username="ada")
client = Client()
with open({path!r}, "rb") as upload:
    if {channel!r} == "form":
        client.force_login(ada)
        client.post("/p/hostile/imports/", {{"file": upload}})
        print(ImportJob.objects.latest("pk").error, file=sys.stderr)
    else:
        secret = open({token!r}).read()
        response = client.post("/api/projects/hostile/imports", {{"file": upload}},
                               headers={{"Authorization": f"Bearer {{secret}}"}})
        print(response.status_code, response.json()["error"], file=sys.stderr)
"""


@pytest.mark.parametrize("channel", ["form", "api"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_form_and_api_refuse_each_hostile_file_within_limits(case, channel, corpus, site):
    folder, env = site
    before = (_sqlite_counts(folder / "db.sqlite3"), _media_files(folder / "media"))
    script = _CHANNEL.format(
        path=str(corpus[case.name]), channel=channel, token=str(folder / "token")
    )
    code, stderr, cpu, peak = _run_measured(["shell", "-c", script], env)
    assert code == 0 and case.reason in stderr and case.name in stderr, stderr
    assert "Traceback" not in stderr
    if channel == "api":
        assert "\n422 {" in stderr, stderr
    assert cpu < 5, f"{cpu:.1f} s of CPU"
    assert peak < 300 * MB, f"peak RSS {peak / MB:.0f} MB"
    assert (_sqlite_counts(folder / "db.sqlite3"), _media_files(folder / "media")) == before


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
