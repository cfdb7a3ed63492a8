"""The upload page of ground-truth generation, end to end with the immediate task backend."""

import json
import re

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from judging.models import Run
from reviews.forms import ProjectSettingsForm
from reviews.models import Item, Question, Reference, Role
from tests.factories import member
from tests.judging.generation_helpers import FIRST, SECOND, reader, statement
from tests.judging.run_helpers import judge
from tests.judging.wire_server import WireServer


def _upload(client, project, tmp_path):
    return client.post(
        reverse("generate", args=[project.slug]),
        {
            "files": [SimpleUploadedFile("statement.pdf", statement(tmp_path).read_bytes())],
            "fields": "$.currency, $.total, $.account, $.iban",
            "instruction": "Extract the statement fields.",
            "readers": ["model-a", "model-b"],
            "min_agreement": "1.0",
        },
        follow=True,
    )


def _readers(project, url):
    for name in ("model-a", "model-b"):
        judge(project, url, name=name, model=name, criterion=None,
              prompt="{{ instruction }} {{ fields }}")  # fmt: skip


def test_upload_generates_rows_and_questions(client, project, tmp_path):
    client.force_login(member(project, Role.ADMIN))
    with WireServer("openai-compatible", answer=reader(FIRST, SECOND)) as srv:
        _readers(project, srv.url)
        page = _upload(client, project, tmp_path)
    assert b"Generation queued" in page.content and b"<progress" in page.content
    rows = Reference.objects.get(authority="generated").rows
    assert json.dumps(sorted(r["path"] for r in rows)) == '["$.account", "$.currency"]'
    assert set(Question.objects.values_list("key", flat=True)) == {"$.total", "$.iban"}
    # The page ends with what the generation made: the item, linked, its agreed fields and
    # its questions; the item's page shows the agreed rows nobody is asked about.
    item = Item.objects.get()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.content.decode()))
    assert "1 item, 2 agreed fields (the generated reference), 2 questions for people" in text
    assert "2: $.account , $.currency" in text and "2 questions : $.iban , $.total" in text
    assert reverse("item_detail", args=[project.slug, item.pk]) in page.content.decode()
    detail = client.get(reverse("item_detail", args=[project.slug, item.pk])).content.decode()
    agreed = re.search(r'<section class="agreed-rows".*?</section>', detail, re.S).group(0)
    assert "Models agreed: 2 fields not asked" in agreed
    assert 'data-path="$.account"' in agreed and 'data-path="$.total"' not in agreed


def test_the_readers_runs_show_while_the_work_waits_for_a_worker(
    client, project, tmp_path, monkeypatch
):
    from types import SimpleNamespace

    from judging.views import generate

    queued = []
    worker_busy = SimpleNamespace(enqueue=lambda *args: queued.append(args))
    monkeypatch.setattr(generate, "generate_task", worker_busy)
    client.force_login(member(project, Role.ADMIN))
    _readers(project, "http://127.0.0.1:9")
    page = _upload(client, project, tmp_path).content.decode()
    runs = Run.objects.order_by("pk")
    assert [r.status for r in runs] == ["queued", "queued"]
    assert queued[0][2]["run_ids"] == {"model-a": runs[0].pk, "model-b": runs[1].pk}
    for run in runs:  # each bar polls its run's status; a reader's run has no Cancel
        assert reverse("run_status", args=[project.slug, run.pk]) in page
    assert "Cancel" not in page


def test_upload_refuses_a_file_that_is_not_evidence(client, project):
    client.force_login(member(project, Role.ADMIN))
    page = client.post(
        reverse("generate", args=[project.slug]),
        {"files": [SimpleUploadedFile("x.pdf", b"not a pdf")], "fields": "$.a",
         "instruction": "x", "min_agreement": "1"},
    )  # fmt: skip
    assert b"x.pdf:" in page.content and not Reference.objects.exists()


def test_union_is_a_project_setting_shown_on_settings_and_generation_pages(client, project):
    client.force_login(member(project, Role.ADMIN))
    settings_url = reverse("project_settings", args=[project.slug])
    assert "Generation: union" in client.get(settings_url).content.decode()
    form = ProjectSettingsForm(instance=project)  # every setting as it is, then union on
    data = {k: v for k, v in form.initial.items() if v is not None and v is not False}
    data["generation_union"] = "on"
    assert client.post(settings_url, data).status_code == 302
    project.refresh_from_db()
    assert project.generation_union is True
    page = client.get(reverse("generate", args=[project.slug])).content.decode()
    assert "<strong>on</strong>" in page and 'name="union"' not in page


def test_an_oversize_file_is_refused_before_it_is_read(project, settings):
    """The evidence limit is checked on the upload's size, not after reading it into memory."""
    import io

    from django.core.files.uploadedfile import InMemoryUploadedFile

    from judging.forms import GenerateForm

    reads = []

    class Counting(io.BytesIO):
        def read(self, *size):
            reads.append(size)
            return super().read(*size)

    settings.EVIDENCE_MAX_BYTES = 1000
    content = b"%PDF-1.7\n" + b"0" * 5000
    upload = InMemoryUploadedFile(
        Counting(content), "files", "big.pdf", "application/pdf", len(content), None
    )
    data = {"fields": "$.total", "instruction": "Read it.", "min_agreement": "1"}
    form = GenerateForm(data, {"files": [upload]}, project=project)
    assert not form.is_valid()
    assert "big.pdf: is too large" in form.errors["files"][0]
    assert reads == []


def test_without_a_reader_the_page_says_how_to_make_one(client, project):
    client.force_login(member(project, Role.ADMIN))
    url = reverse("generate", args=[project.slug])
    assert "No reader yet: on the Judges page" in client.get(url).content.decode()
    _readers(project, "http://127.0.0.1:8001/v1")
    page = client.get(url).content.decode()
    assert "No reader yet" not in page and 'value="model-a"' in page
