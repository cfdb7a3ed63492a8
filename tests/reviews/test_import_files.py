"""Images and PDFs straight in (issue 28): each file an item with that file as its evidence,
asked the chosen questions, through the CLI, the upload page and the API alike; several at once,
a folder or a .zip; the evidence checks of any upload; errors that say where a file goes."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from PIL import Image

from reviews.evidence import DrawText, build_pdf
from reviews.models import Document, ImportJob, Item, Question, Role
from reviews.services.imports.pipeline import ImportFailed, file_import
from reviews.services.projects.tokens import token_create
from tests.bad_evidence import truncated_png
from tests.factories import member

pytestmark = pytest.mark.django_db


def _image(fmt: str = "JPEG", colour: str = "white") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (120, 80), colour).save(out, fmt)
    return out.getvalue()


def _pdf(text: str = "Total 12.00") -> bytes:
    return build_pdf([[DrawText(20, 60, text, size=11)]], page_size=(300.0, 200.0))


@pytest.fixture
def legible(project):
    call_command(
        "criterion", "--project", project.slug, "--name", "legible", "--labels", "yes,no",
        "--positive", "yes", "--text", "Can you read it?",
    )  # fmt: skip
    return "criterion:legible"


def test_the_command_makes_an_item_per_file_with_its_evidence_and_question(
    project, legible, tmp_path, capsys
):
    (tmp_path / "a.jpg").write_bytes(_image())
    (tmp_path / "b.pdf").write_bytes(_pdf())
    call_command(
        "import_items", "--project", project.slug, "--questions", legible,
        str(tmp_path / "a.jpg"), str(tmp_path / "b.pdf"),
    )  # fmt: skip
    assert "imported 2 items, 2 questions" in capsys.readouterr().out
    items = Item.objects.filter(project=project).order_by("external_id")
    assert [i.external_id for i in items] == ["a.jpg", "b.pdf"]
    for item, mime in zip(items, ["image/jpeg", "application/pdf"], strict=True):
        assert [s.document.mime for s in item.sources.select_related("document")] == [mime]
        assert list(item.questions.values_list("key", "labels")) == [("legible", ["yes", "no"])]
    # The same files again change nothing; another file under a name imported is refused.
    call_command("import_items", "--project", project.slug, str(tmp_path / "a.jpg"))
    assert "imported 1 item (1 unchanged), 0 questions" in capsys.readouterr().out
    (tmp_path / "a.jpg").write_bytes(_image(colour="black"))
    with pytest.raises(CommandError):
        call_command("import_items", "--project", project.slug, str(tmp_path / "a.jpg"))
    assert "exists with other evidence" in capsys.readouterr().err


def test_a_folder_and_a_zip_of_files(project, legible, tmp_path):
    folder = tmp_path / "scans"
    (folder / "june").mkdir(parents=True)
    (folder / "a.png").write_bytes(_image("PNG"))
    (folder / "june" / "b.webp").write_bytes(_image("WEBP"))
    (folder / ".DS_Store").write_bytes(b"\x00junk")
    report = file_import(actor=None, project=project, path=folder, options={"questions": [legible]})
    assert report.format == "files" and report.counts["items_created"] == 2
    assert sorted(Item.objects.values_list("external_id", flat=True)) == ["a.png", "june/b.webp"]
    archive = tmp_path / "more.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("c.tif", _image("TIFF"))
        bundle.writestr("d.pdf", _pdf())
    report = file_import(actor=None, project=project, path=archive)
    assert report.format == "files" and report.counts["items_created"] == 2
    assert Question.objects.filter(item__project=project).count() == 2  # the zip asked none


@pytest.mark.parametrize(
    ("name", "data", "words"),
    [
        ("bad.png", truncated_png(), 'file "bad.png": "bad.png" is a truncated'),
        ("notes.csv", b"a,b\n1,2\n", "notes.csv: not an image or PDF: several files at once"),
    ],
)
def test_a_bad_file_among_several_is_named_and_nothing_is_written(
    project, tmp_path, name, data, words
):
    (tmp_path / "ok.jpg").write_bytes(_image())
    (tmp_path / name).write_bytes(data)
    with pytest.raises(ImportFailed) as refused:
        file_import(actor=None, project=project, path=[tmp_path / "ok.jpg", tmp_path / name])
    assert words in str(refused.value)
    assert not Item.objects.exists() and not Document.objects.exists()


def test_a_format_that_cannot_read_an_image_says_where_it_goes(project, tmp_path):
    (tmp_path / "scan.png").write_bytes(_image("PNG"))
    with pytest.raises(ImportFailed) as refused:
        file_import(actor=None, project=project, path=tmp_path / "scan.png", format="jsonl")
    message = str(refused.value)
    assert "scan.png: a PNG image, not jsonl (it reads typed JSONL records)" in message
    assert "images (PNG, JPEG, WebP, TIFF) and PDFs import as items of their own" in message
    (tmp_path / "items.csv").write_text("item_id,input\na,b\n")
    with pytest.raises(ImportFailed, match="the files format reads images"):
        file_import(actor=None, project=project, path=tmp_path / "items.csv", format="files")


def test_a_zip_holding_a_text_file_names_the_member(project, tmp_path):
    archive = tmp_path / "mixed.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("a.jpg", _image())
        bundle.writestr("readme.txt", "hello")
    with pytest.raises(ImportFailed, match='mixed.zip, file "readme.txt": not an image'):
        file_import(actor=None, project=project, path=archive)


def test_the_upload_page_takes_several_files(
    client, project, legible, django_capture_on_commit_callbacks
):
    client.force_login(member(project, Role.ADMIN))
    url = reverse("import_upload", args=[project.slug])
    page = client.get(url).content.decode()
    assert "Images and PDFs" in page and "#7-files-images-and-pdfs" in page
    files = [
        SimpleUploadedFile("a.jpg", _image()),
        SimpleUploadedFile("b.png", _image("PNG")),
        SimpleUploadedFile("c.pdf", _pdf()),
    ]
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, {"file": files, "questions": legible})
    assert response.status_code == 302
    job = ImportJob.objects.get()
    assert job.status == ImportJob.Status.SUCCEEDED, job.error
    assert job.original_name == "3 files: a.jpg, b.png, c.pdf"
    assert Item.objects.filter(project=project).count() == 3
    assert Question.objects.filter(item__project=project, key="legible").count() == 3


def test_a_refused_upload_keeps_the_options_and_names_the_file(client, project):
    client.force_login(member(project, Role.ADMIN))
    url = reverse("import_upload", args=[project.slug])
    files = [SimpleUploadedFile("a.jpg", _image()), SimpleUploadedFile("notes.csv", b"a,b\n")]
    response = client.post(url, {"file": files, "questions": "criterion:legible", "kind": "item"})
    page = response.content.decode()
    assert response.status_code == 200 and not ImportJob.objects.exists()
    assert "notes.csv: not an image or PDF." in page
    assert 'value="criterion:legible"' in page and "<option selected>item</option>" in page


def test_the_api_takes_an_image(client, project, legible):
    _, secret = token_create(actor=member(project, Role.ADMIN), name="pipeline")
    response = client.post(
        f"/api/projects/{project.slug}/imports",
        {"file": SimpleUploadedFile("scan.jpg", _image()), "questions": [legible]},
        headers={"Authorization": f"Bearer {secret}"},
    )
    assert response.status_code == 201, response.content
    assert response.json()["format"] == "files"
    assert Item.objects.get(project=project).questions.get().key == "legible"


def test_the_formats_doc_is_served_with_its_sections(client, project):
    client.force_login(member(project, Role.RATER))
    page = client.get(reverse("docs_page", args=["formats"])).content.decode()
    assert 'id="7-files-images-and-pdfs"' in page
    assert client.get(reverse("docs_page", args=["security"])).status_code == 404
    assert Path("docs/formats.md").exists()


def test_the_api_takes_several_files(client, project, legible):
    _, secret = token_create(actor=member(project, Role.ADMIN), name="pipeline")
    files = [SimpleUploadedFile("a.jpg", _image()), SimpleUploadedFile("b.pdf", _pdf())]
    response = client.post(
        f"/api/projects/{project.slug}/imports",
        {"file": files, "questions": [legible]},
        headers={"Authorization": f"Bearer {secret}"},
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["format"] == "files" and body["file"] == "2 files"
    assert sorted(Item.objects.values_list("external_id", flat=True)) == ["a.jpg", "b.pdf"]
    notes = SimpleUploadedFile("notes.csv", b"a,b\n1,2\n")
    refused = client.post(
        f"/api/projects/{project.slug}/imports",
        {"file": [SimpleUploadedFile("c.jpg", _image()), notes]},
        headers={"Authorization": f"Bearer {secret}"},
    )
    assert refused.status_code == 422
    assert "not an image or PDF" in refused.json()["error"]["reason"]
    assert Item.objects.count() == 2
