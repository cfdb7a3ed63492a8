"""The streamed JSONL import (`POST /api/projects/{slug}/items.jsonl`): the body is read as a
stream, never as `request.body`, checked as it arrives, written all or nothing, memory flat."""

import gc
import json
import tracemalloc

import pytest

from reviews.formats import limits
from reviews.models import Event, Item, Role
from reviews.services.imports.pipeline import stream_import
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


def test_memory_stays_flat_in_the_size_of_the_body():
    small, large = _peak_mb(1_000), _peak_mb(10_000)
    assert large < small * 1.5 + 0.5, (small, large)  # a body held in memory would be 10x
