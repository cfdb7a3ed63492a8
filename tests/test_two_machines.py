"""Past one machine: two web servers (gunicorn, different ports) and two task workers share one
PostgreSQL database and one S3 bucket (moto's server mode on 127.0.0.1), with no local disk in
common. Evidence uploaded through one server is imported by a worker and rendered by the other;
raters claiming through both servers at once never over-assign an item.

PostgreSQL only (the servers are separate processes on one database): the PostgreSQL run of
`make test` runs it, SQLite runs skip it.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import threading
import time
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore
from django.db import connection
from PIL import Image

from reviews.demo import documents as demo_documents
from reviews.demo.files import STATEMENT_FILE, statement_case
from reviews.models import (
    HOLDING_STATUSES,
    Assignment,
    CachedRender,
    Document,
    ImportJob,
    Project,
    Role,
)
from tests.factories import member

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]

httpx = pytest.importorskip("httpx")
boto3 = pytest.importorskip("boto3")
moto_server = pytest.importorskip("moto.server")

ROOT = Path(__file__).resolve().parents[1]
BUCKET = "evalsite-two-machines"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
RATERS_PER_SERVER = 4
ITEMS, OVERLAP = 3, 2  # 6 places for 8 raters: two of them must be told nothing is waiting


@pytest.fixture(autouse=True)
def _postgres_only():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: several processes share one database")


@pytest.fixture
def bucket():
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    client = boto3.client(
        "s3", endpoint_url=endpoint, region_name="us-east-1", **_lower(CREDENTIALS)
    )
    client.create_bucket(Bucket=BUCKET)
    yield endpoint, client
    server.stop()


def _lower(credentials: dict) -> dict:
    return {key.lower(): value for key, value in credentials.items()}


@pytest.fixture
def machines(bucket, tmp_path):
    """Start two web servers and two workers; each has its own var/ folder (no shared disk)."""
    endpoint, _ = bucket
    db = connection.settings_dict
    database_url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    processes: list[subprocess.Popen] = []

    def environment(name: str) -> dict:
        var = tmp_path / name
        var.mkdir()
        return {
            **os.environ,
            **CREDENTIALS,
            "DEBUG": "true",
            "DATABASE_URL": database_url,
            "TASKS_BACKEND": "database",
            "EVALSITE_VAR_DIR": str(var),
            "MEDIA_S3_BUCKET": BUCKET,
            "MEDIA_S3_ENDPOINT_URL": endpoint,
            "MEDIA_S3_REGION": "us-east-1",
        }

    def start(name: str, *args: str) -> subprocess.Popen:
        process = subprocess.Popen(
            [*args],
            cwd=ROOT,
            env=environment(name),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        processes.append(process)
        return process

    try:
        urls = [_serve(start(f"web-{n}", *_gunicorn())) for n in (1, 2)]
        for n in (1, 2):
            start(f"worker-{n}", sys.executable, "manage.py", "db_worker", "--queue-name", "*",
                  "--no-reload", "--interval", "0.2", "--no-startup-delay")  # fmt: skip
        yield urls
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


def _gunicorn() -> list[str]:
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    # One process with threads: concurrent requests without a second copy of Django to load.
    return [gunicorn, "evalsite.wsgi", "-b", "127.0.0.1:0", "-w", "1", "--threads", "4",
            "--preload", "--log-level", "info"]  # fmt: skip


def _serve(process: subprocess.Popen) -> str:
    """The URL a gunicorn started on port 0 listens at (read from its log)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if match := re.search(r"Listening at: (http://127\.0\.0\.1:\d+)", line):
            # Keep draining its log so a full pipe never blocks the server.
            threading.Thread(target=process.stderr.read, daemon=True).start()
            httpx.get(f"{match.group(1)}/accounts/login/", timeout=120).raise_for_status()
            return match.group(1)
        if not line and process.poll() is not None:
            break
    raise AssertionError(f"gunicorn did not start (exit {process.poll()})")


def _client(base_url: str, user) -> httpx.Client:
    """An HTTP client logged in as ``user`` (a database session: valid on every server)."""
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[-1]  # what a login stores
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    client = httpx.Client(base_url=base_url, timeout=120, follow_redirects=False)
    client.cookies.set(settings.SESSION_COOKIE_NAME, session.session_key)
    return client


def _csrf(client: httpx.Client, path: str) -> str:
    client.get(path).raise_for_status()
    return client.cookies[settings.CSRF_COOKIE_NAME]


def _bundle() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as bundle:
        for n in range(1, ITEMS + 1):
            case = statement_case(f"shared-{n}", wrong_total="1,290.00", wrong_balance="12,840.55")
            bundle.writestr(f"shared-{n}.json", json.dumps(case))
        bundle.writestr(STATEMENT_FILE, demo_documents.statement_pdf())
    return out.getvalue()


def _wait_for(job_pk: int) -> ImportJob:
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline:
        job = ImportJob.objects.get(pk=job_pk)
        if job.status in (ImportJob.Status.SUCCEEDED, ImportJob.Status.FAILED):
            return job
        time.sleep(0.2)
    raise AssertionError(f"import job {job_pk} still {job.status}")


def _claim(client: httpx.Client, slug: str) -> int | None:
    """Claim the next item through the web (POST, or GET where claiming is still a link)."""
    path = f"/p/{slug}/review/next/"
    response = client.post(path, headers={"X-CSRFToken": _csrf(client, "/queue/")})
    if response.status_code == 405:
        response = client.get(path)
    assert response.status_code == 302, response.text[:300]
    match = re.search(r"/items/(\d+)/review/", response.headers["location"])
    return int(match.group(1)) if match else None


def test_two_web_servers_and_two_workers_share_one_database_and_one_bucket(
    machines, bucket, tmp_path
):
    first, second = machines
    _, s3 = bucket
    project = Project.objects.create(slug="shared", name="Shared", overlap=OVERLAP)
    admin = member(project, Role.ADMIN, username="admin")
    raters = [member(project, Role.RATER, username=f"r{n}") for n in range(2 * RATERS_PER_SERVER)]

    # Upload through the first server; a worker (either one) imports it from the bucket.
    uploader = _client(first, admin)
    token = _csrf(uploader, f"/p/{project.slug}/imports/")
    response = uploader.post(
        f"/p/{project.slug}/imports/",
        data={"format": "", "csrfmiddlewaretoken": token},
        files={"file": ("statements.zip", _bundle(), "application/zip")},
    )
    assert response.status_code == 302, response.text[:500]
    job = _wait_for(ImportJob.objects.get(project=project).pk)
    assert job.status == ImportJob.Status.SUCCEEDED, job.error
    document = Document.objects.get()
    stored = {o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])}
    assert document.file.name in stored and job.file.name in stored
    assert not list(tmp_path.glob("*/media/**/*.*"))  # nothing on any machine's own disk

    # The second server renders a page of it (from the bucket), the first then serves that
    # render from the shared cache.
    page = f"/p/{project.slug}/documents/{document.sha256}/pages/2.img?dpi=72"
    rendered = _client(second, raters[0]).get(page)
    assert rendered.status_code == 200, rendered.text[:300]
    assert Image.open(io.BytesIO(rendered.content)).size == (612, 792)
    (render,) = CachedRender.objects.values_list("name", flat=True)
    assert render in {o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]}
    again = _client(first, raters[1]).get(page)
    assert again.status_code == 200 and again.content == rendered.content
    assert not list(tmp_path.glob("*/media/**/*.*"))

    # Eight raters, four on each server, claim at the same moment: six places, no more.
    clients = [_client(first if n % 2 else second, r) for n, r in enumerate(raters)]
    claimed: list[int | None] = [None] * len(clients)
    barrier = threading.Barrier(len(clients))

    def claim(n: int) -> None:
        barrier.wait(timeout=30)
        claimed[n] = _claim(clients[n], project.slug)

    threads = [threading.Thread(target=claim, args=(n,)) for n in range(len(clients))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    holders = Counter(
        Assignment.objects.filter(item__project=project, status__in=HOLDING_STATUSES).values_list(
            "item_id", flat=True
        )
    )
    assert sorted(holders.values()) == [OVERLAP] * ITEMS  # every place taken once, none twice
    assert sorted(c for c in claimed if c) == sorted(holders.elements())
    assert claimed.count(None) == len(clients) - ITEMS * OVERLAP
