"""Exports verify as offered (issue 28): the buttons name the .zip they download,
`verify_approval` reads that .zip as it is, and an export with nothing approved is refused with
a message instead of an empty .zip."""

import zipfile

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from reviews.models import Role
from tests.builders import verify
from tests.factories import member

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("format", ["reference", "csv"])
def test_the_browsers_zip_verifies_as_downloaded(client, approved_item, tmp_path, format):
    project = approved_item.project
    client.force_login(member(project, Role.APPROVER))
    response = client.post(reverse("project_export", args=[project.slug]), {"format": format})
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    download = tmp_path / f"{project.slug}-ground-truth-{format}.zip"
    download.write_bytes(response.content)
    assert zipfile.ZipFile(download).namelist()
    passed, output = verify(download)
    assert passed, output
    assert f"[{download.name}/" in output and "all 1 approval(s) verify" in output


def test_a_tampered_zip_fails_naming_the_member(client, approved_item, tmp_path):
    project = approved_item.project
    client.force_login(member(project, Role.APPROVER))
    response = client.post(reverse("project_export", args=[project.slug]), {"format": "reference"})
    original = zipfile.ZipFile(__import__("io").BytesIO(response.content))
    tampered = tmp_path / "export.zip"
    with zipfile.ZipFile(tampered, "w") as out:
        for name in original.namelist():
            data = original.read(name).replace(b'"expected_value": "', b'"expected_value": "9')
            out.writestr(name, data)
    passed, output = verify(tampered)
    assert not passed and "export.zip/" in output and "do not verify" in output


def test_nothing_approved_is_refused_with_a_message(client, project, tmp_path):
    client.force_login(member(project, Role.ADMIN))
    home = reverse("project_home", args=[project.slug])
    page = client.get(home).content.decode()
    assert "Review files (.zip of .json)" in page and "(.json)</button>" not in page
    response = client.post(reverse("project_export", args=[project.slug]), {"format": "review"})
    assert response.status_code == 302 and response.url == home
    assert "Nothing to export: no item of" in client.get(home).content.decode()
    with pytest.raises(CommandError, match="nothing to export"):
        call_command(
            "export_ground_truth", "--project", project.slug, "--format", "csv",
            "--out", str(tmp_path / "out"),
        )  # fmt: skip
    assert not (tmp_path / "out").exists()


def test_review_files_of_items_that_came_without_one_are_refused(client, approved_item):
    project = approved_item.project  # approved, but built without a review file
    client.force_login(member(project, Role.APPROVER))
    response = client.post(reverse("project_export", args=[project.slug]), {"format": "review"})
    assert response.status_code == 302
    page = client.get(response.url).content.decode()
    assert "none of the 1 approved items came from a review file" in page
