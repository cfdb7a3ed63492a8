"""The streamed JSONL import (`POST /api/projects/{slug}/items.jsonl`): the body is read as a
stream, never as `request.body`, checked as it arrives, written all or nothing, memory flat."""

import gc
import io
import json
import threading
import tracemalloc

import pytest
from django.db import connection

from reviews.formats import limits
from reviews.models import Event, Item, Question, Role
from reviews.services.imports import item_batch, records
from reviews.services.imports.item_batch import ItemBatch
from reviews.services.imports.pipeline import ImportFailed, stream_import
from tests.factories import ProjectFactory, member
from tests.helpers import bearer

pytestmark = pytest.mark.django_db


def jsonl_url(project) -> str:
    return f"/api/projects/{project.slug}/items.jsonl"


def line(n: int) -> bytes:
    record = {"type": "item", "item_id": f"q-{n:06d}", "input": {"q": f"{n}+1?"}, "output": "x"}
    return json.dumps(record).encode() + b"\n"


def post_jsonl(client, project, body: bytes, headers, query=""):
    return client.post(
        jsonl_url(project) + query, body, content_type="application/x-ndjson", headers=headers
    )


@pytest.fixture
def admin_headers(project):
    return bearer(member(project, Role.ADMIN))


def test_body_over_django_memory_limit_imports_as_a_stream(
    client, project, admin_headers, settings
):
    # request.body would refuse anything over this: the streamed import never reads it.
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    body = b"".join(line(n) for n in range(300)) + b"\n"  # a trailing blank line is fine
    response = post_jsonl(client, project, body, admin_headers)
    assert response.status_code == 201, response.json()
    assert response.json()["counts"] == {"items_created": 300}
    assert Item.objects.filter(project=project).count() == 300
    again = post_jsonl(client, project, body, admin_headers)
    assert again.json()["counts"] == {"items_unchanged": 300}


def test_bad_line_is_422_naming_it_and_writes_nothing(client, project, admin_headers):
    body = line(1) + line(2) + b'{"type": "item", "item_id": "q-3", "slices": "math"}\n'
    response = post_jsonl(client, project, body, admin_headers)
    assert response.status_code == 422
    error = response.json()["error"]
    assert (error["file"], error["record"], error["path"]) == ("API request", "line 3", "$.slices")
    assert not Item.objects.exists() and not Event.objects.exists()


def test_unknown_question_is_422_and_writes_nothing(client, project, admin_headers):
    response = post_jsonl(client, project, line(1), admin_headers, "?questions=criterion:nope")
    assert response.status_code == 422
    assert response.json()["error"]["path"] == "questions"
    assert not Item.objects.exists()


def test_body_over_the_import_limit_is_413_naming_the_setting(client, project, admin_headers):
    body = b"".join(line(n) for n in range(20))
    with limits.overridden(file_bytes=len(body) - 1):
        response = post_jsonl(client, project, body, admin_headers)
    assert response.status_code == 413
    reason = response.json()["error"]["reason"]
    assert f"({len(body):,})" in reason and "IMPORT_MAX_FILE_BYTES" in reason
    assert not Item.objects.exists()


def test_body_without_content_length_is_411(client, project, admin_headers):
    response = client.post(
        jsonl_url(project),
        line(1),
        content_type="application/x-ndjson",
        headers=admin_headers,
        CONTENT_LENGTH="",
    )
    assert response.status_code == 411
    assert "Content-Length" in response.json()["error"]["reason"]


def test_needs_the_admin_role_and_hides_the_project_from_outsiders(client, project, outsider):
    rater = member(project, Role.RATER)
    assert post_jsonl(client, project, line(1), bearer(rater)).status_code == 403
    assert post_jsonl(client, project, line(1), bearer(outsider)).status_code == 404
    assert not Item.objects.exists()


class GeneratedBody:
    """A JSONL body of `n` item lines made as it is read, like a socket: never all in memory."""

    def __init__(self, n: int):
        self.lines = (line(k) for k in range(n))

    def readline(self, size: int = -1) -> bytes:
        return next(self.lines, b"")


def _peak_mb(n: int) -> float:
    project = ProjectFactory(slug=f"stream-{n}")
    gc.collect()
    tracemalloc.start()
    try:
        report = stream_import(
            actor=None, project=project, stream=GeneratedBody(n), name="API request"
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert report.counts == {"items_created": n}
    return peak / 2**20


def test_memory_stays_flat_in_the_size_of_the_body(monkeypatch):
    # A batch (and the records parsed ahead of it) a quarter of the real one: both sizes then
    # span several batches, at a tenth of the time; what is held is still one batch, whatever
    # the body's size.
    monkeypatch.setattr(item_batch, "BATCH", item_batch.BATCH // 4)
    monkeypatch.setattr(records._LiveSpool, "DEPTH", records._LiveSpool.DEPTH // 4)
    small, large = _peak_mb(1_000), _peak_mb(10_000)
    assert large < small * 1.5 + 0.5, (small, large)  # a body held in memory would be 10x


@pytest.mark.django_db(transaction=True)  # the import's own transaction, as in production
def test_a_bad_line_after_written_batches_writes_nothing():
    # On PostgreSQL the body is checked beside the write (`records._LiveSpool`) and the foreign
    # keys as each COPY ends: the batches before the bad line are written, then rolled back.
    project, threads = ProjectFactory(slug="late-error"), threading.active_count()
    bad = b'{"type": "item", "item_id": "q", "slices": "math"}\n'
    body = b"".join(line(n) for n in range(2500)) + bad
    with pytest.raises(ImportFailed) as failed:
        stream_import(actor=None, project=project, stream=io.BytesIO(body), name="API request")
    error = failed.value.error
    assert (error.file, error.record, error.path) == ("API request", "line 2501", "$.slices")
    assert not Item.objects.exists() and not Event.objects.exists()
    assert threading.active_count() == threads  # the validating thread ended


def test_the_import_limits_of_the_caller_hold_while_the_body_is_checked():
    project = ProjectFactory(slug="limits")
    body = b"".join(line(n) for n in range(3)) + b'{"type": "item", "item_id": "' + b"x" * 200
    with limits.overridden(line_bytes=150), pytest.raises(ImportFailed) as failed:
        stream_import(actor=None, project=project, stream=io.BytesIO(body), name="API request")
    assert failed.value.error.record == "line 4"
    assert not Item.objects.exists()


def test_a_failed_write_stops_the_check_of_the_body(monkeypatch):
    project, threads = ProjectFactory(slug="write-fails"), threading.active_count()

    def refused(self, *args):
        raise RuntimeError("the database refused")

    monkeypatch.setattr(ItemBatch, "_create", refused)
    body = GeneratedBody(20_000)
    with pytest.raises(RuntimeError, match="refused"):
        stream_import(actor=None, project=project, stream=body, name="API request")
    assert threading.active_count() == threads
    if connection.vendor == "postgresql":  # checked beside the write: it stopped early
        assert next(body.lines, None) is not None
    assert not Item.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_items_events_and_questions_written_in_the_import_own_transaction():
    from judging.models import Criterion

    project = ProjectFactory(slug="own-transaction")
    Criterion.objects.create(project=project, name="ok", labels=["pass", "fail"], sha256="0")
    body = b"".join(line(n) for n in range(2500))
    report = stream_import(
        actor=None,
        project=project,
        stream=io.BytesIO(body),
        name="API request",
        options={"questions": ["criterion:ok"]},
    )
    assert report.counts == {"items_created": 2500, "questions": 2500}
    assert Question.objects.filter(item__project=project).count() == 2500
    assert Event.objects.filter(item__project=project, kind="imported").count() == 2500
