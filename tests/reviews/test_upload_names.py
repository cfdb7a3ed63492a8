"""An uploaded file's name never chooses where it is stored, and is shown escaped."""

from pathlib import PurePosixPath

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from reviews.models import ImportJob, Role
from tests.factories import member
from tests.helpers import media_files

pytestmark = pytest.mark.django_db

RECORD = b'{"type": "item", "item_id": "a", "input": "q"}\n'


@pytest.mark.parametrize(
    "name",
    [
        "../../../evil.jsonl",
        "..\\..\\evil.jsonl",
        "/etc/evil.jsonl",
        "a/../../b.jsonl",
        "<img src=x onerror=alert(1)>.jsonl",
    ],
)
def test_upload_names_stay_in_the_jobs_folder(client, project, name):
    client.force_login(member(project, Role.ADMIN))
    url = reverse("import_upload", args=[project.slug])
    client.post(url, {"file": SimpleUploadedFile(name, RECORD)})
    job = ImportJob.objects.get()
    stored = PurePosixPath(job.file.name)
    assert stored.parts[:2] == ("imports", project.slug) and len(stored.parts) == 4
    assert ".." not in stored.parts and media_files() == [job.file.name]
    assert "<img src=x" not in client.get(url).content.decode()
