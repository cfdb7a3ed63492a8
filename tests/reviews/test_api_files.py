"""POST /api/projects/<slug>/imports: a file as it is on disk, through the same importer."""

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from reviews.models import Document, Item, Role
from reviews.services.projects.tokens import token_create
from tests.factories import member

pytestmark = pytest.mark.django_db
EXAMPLES = Path(__file__).resolve().parent.parent / "data" / "examples"


def post(client, project, role, name, data, **fields):
    _, secret = token_create(actor=member(project, role), name="pipeline")
    return client.post(
        f"/api/projects/{project.slug}/imports",
        {"file": SimpleUploadedFile(name, data), **fields},
        headers={"Authorization": f"Bearer {secret}"},
    )


def test_a_zip_bundle_imports_with_its_evidence(client, project):
    bundle = (EXAMPLES / "review-bundle.zip").read_bytes()
    response = post(client, project, Role.ADMIN, "review-bundle.zip", bundle)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["file"] == "review-bundle.zip" and body["format"] == "review"
    assert body["counts"]["documents"] >= 1 and Document.objects.exists()
    assert Item.objects.filter(project=project).count() == body["counts"]["items_created"]
    again = post(client, project, Role.ADMIN, "review-bundle.zip", bundle)
    assert again.status_code == 201, again.content  # the same bundle again changes nothing
    assert Item.objects.filter(project=project).count() == body["counts"]["items_created"]


def test_a_refused_file_names_itself_and_changes_nothing(client, project):
    response = post(client, project, Role.ADMIN, "items.jsonl", b'{"type": "item"}\n')
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["file"] == "items.jsonl" and error["record"] == "line 1"
    assert not Item.objects.exists()
    unknown = post(client, project, Role.ADMIN, "items.jsonl", b"", format="yaml")
    assert (
        unknown.status_code == 422 and "unknown format 'yaml'" in unknown.json()["error"]["reason"]
    )


def test_only_project_admins_import(client, project):
    response = post(
        client, project, Role.RATER, "items.jsonl", b'{"type": "item", "item_id": "a"}\n'
    )
    assert response.status_code == 403 and not Item.objects.exists()


def test_questions_are_asked_on_every_imported_item(client, project):
    records = b'{"type": "criterion", "name": "ok", "labels": ["yes", "no"]}\n'
    records += b'{"type": "item", "item_id": "a"}\n'
    response = post(client, project, Role.ADMIN, "items.jsonl", records, questions="criterion:ok")
    assert response.status_code == 201, response.content
    assert response.json()["counts"]["questions"] == 1
