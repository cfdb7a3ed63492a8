"""Issue 10's trust chain, between sites: forged, rolled-back and moved imports of approved
files, and those signed by a key the project does not trust, are refused and change nothing,
through the CLI, the API and the upload form alike; trusting a key takes an admin who is also
an approver (CLI and admin)."""

import io
import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import CommandError, call_command

from reviews.models import Approval, Event, Item, Role, TrustedKey
from reviews.services.imports.approved import KeyRefused, trusted_key_register
from reviews.services.imports.pipeline import ImportFailed, file_import
from tests.builders import signed_review_file, trust_counts
from tests.factories import MembershipFactory, ProjectFactory, member

pytestmark = pytest.mark.django_db


def test_an_untrusted_key_is_refused_then_trusted_once_registered(tmp_path):
    project = ProjectFactory(slug="ledger")
    other_site = Ed25519PrivateKey.generate()
    path = signed_review_file(tmp_path, other_site, project="ledger", case_id="c1", version=2)
    before = trust_counts()
    with pytest.raises(ImportFailed, match="which this project does not trust"):
        file_import(actor=None, project=project, path=path)
    assert trust_counts() == before

    from cryptography.hazmat.primitives import serialization

    pem = other_site.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    pem_file = tmp_path / "olga.pem"
    pem_file.write_bytes(pem)
    with pytest.raises(CommandError, match="not an admin"):
        call_command("trust_key", str(pem_file), project="ledger", by=member(project).username)
    admin = member(project, Role.ADMIN, username="boss")
    with pytest.raises(CommandError, match="not an approver"):  # an admin alone cannot
        call_command("trust_key", str(pem_file), project="ledger", by="boss")
    MembershipFactory(project=project, user=admin, role=Role.APPROVER)
    call_command("trust_key", str(pem_file), project="ledger", by="boss", stdout=io.StringIO())
    key = TrustedKey.objects.get(project=project)
    assert key.registered_by == admin and key.registered_at is not None

    report = file_import(actor=None, project=project, path=path)
    assert report.counts["ground_truth"] == 1
    item = Item.objects.get(project=project, external_id="c1")
    event = Event.objects.get(item=item, kind="approval_imported")
    assert key.key_id in event.data["signer"] and "registered by boss" in event.data["signer"]

    # The same file again: nothing new. An older version: a rollback, refused.
    assert file_import(actor=None, project=project, path=path).counts.get("ground_truth", 0) == 0
    old = signed_review_file(tmp_path, other_site, project="ledger", case_id="c1", version=1)
    before = trust_counts()
    with pytest.raises(ImportFailed, match="roll the approval back"):
        file_import(actor=None, project=project, path=old)
    assert trust_counts() == before
    with pytest.raises(KeyRefused, match="already trusted"):
        trusted_key_register(actor=admin, project=project, pem=pem.decode())


def test_forged_moved_and_other_project_files_are_refused_and_change_nothing(tmp_path):
    from reviews.services.approval.signing import load_or_create_private_key

    project = ProjectFactory(slug="ledger")
    site = load_or_create_private_key()
    good = signed_review_file(tmp_path, site, project="ledger", case_id="c1", version=2)
    forged = json.loads(good.read_text())
    forged["claims"][0]["expected_value"] = "9,999.00"
    forged["approval"]["sha256"] = (
        __import__("hashlib")
        .sha256(json.dumps(forged["claims"], sort_keys=True, separators=(",", ":")).encode())
        .hexdigest()
    )
    moved = json.loads(good.read_text())
    moved["case_id"] = "c2"
    elsewhere = signed_review_file(tmp_path, site, project="other", case_id="c1", version=2)
    cases = {
        "forged.json": (forged, "signature does not verify"),
        "moved.json": (moved, "signed for case 'c1', not 'c2'"),
    }
    before = trust_counts()
    for name, (data, message) in cases.items():
        (tmp_path / name).write_text(json.dumps(data))
        with pytest.raises(ImportFailed, match=message):
            file_import(actor=None, project=project, path=tmp_path / name)
    with pytest.raises(ImportFailed, match="signed for project 'other'"):
        file_import(actor=None, project=project, path=elsewhere)
    assert trust_counts() == before

    report = file_import(
        actor=None, project=project, path=tmp_path / "moved.json", options={"as_generated": True}
    )
    item = Item.objects.get(project=project, external_id="c2")
    assert not item.approvals.exists() and report.notes
    assert item.references.filter(authority="generated").exists()


# --- the same policy through the API and the upload form -------------------------------------


def _forged_review(tmp_path, project):
    key = Ed25519PrivateKey.generate()  # nobody registered it
    path = signed_review_file(tmp_path, key, project=project.slug, case_id="c1", version=2)
    return json.loads(path.read_text())


def test_the_api_refuses_an_untrusted_approved_review_unless_as_generated(client, tmp_path):
    from reviews.services.projects.tokens import token_create

    project = ProjectFactory(slug="ledger")
    _, secret = token_create(actor=member(project, Role.ADMIN), name="t")
    url = f"/api/projects/{project.slug}/items"
    body = {"format": "review", "reviews": [_forged_review(tmp_path, project)]}
    headers = {"Authorization": f"Bearer {secret}"}
    before = trust_counts()
    refused = client.post(url, body, content_type="application/json", headers=headers)
    assert refused.status_code == 422
    assert "does not trust" in refused.json()["error"]["reason"]
    assert trust_counts() == before
    body["as_generated"] = True
    done = client.post(url, body, content_type="application/json", headers=headers)
    assert done.status_code == 201, done.json()
    assert not Approval.objects.exists()


def test_the_upload_refuses_an_untrusted_approved_review_unless_as_generated(
    client, tmp_path, django_capture_on_commit_callbacks
):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from reviews.models import ImportJob

    project = ProjectFactory(slug="ledger")
    client.force_login(member(project, Role.ADMIN))
    content = json.dumps(_forged_review(tmp_path, project)).encode()
    url = reverse("import_upload", args=[project.slug])
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url, {"file": SimpleUploadedFile("c1.json", content)})
    job = ImportJob.objects.get()
    assert job.status == ImportJob.Status.FAILED and "does not trust" in job.error
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url, {"file": SimpleUploadedFile("c1.json", content), "as_generated": "1"})
    job = ImportJob.objects.order_by("-pk").first()
    assert job.status == ImportJob.Status.SUCCEEDED, job.error
    assert not Approval.objects.exists()


def test_a_project_admin_registers_a_key_in_the_admin(client):
    from cryptography.hazmat.primitives import serialization
    from django.urls import reverse

    from tests.factories import MembershipFactory, UserFactory

    project = ProjectFactory(slug="ledger")
    staff = UserFactory(username="staffer", is_staff=True, is_superuser=True)
    client.force_login(staff)
    pem = (
        Ed25519PrivateKey.generate()
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    url = reverse("admin:reviews_trustedkey_add")
    data = {"project": project.pk, "public_key_pem": pem, "label": "Olga's site"}
    refused = client.post(url, data)
    assert "is not an admin of project" in refused.content.decode()
    assert not TrustedKey.objects.exists()
    MembershipFactory(project=project, user=staff, role=Role.ADMIN)
    assert "is not an approver" in client.post(url, data).content.decode()
    MembershipFactory(project=project, user=staff, role=Role.APPROVER)
    assert client.post(url, data).status_code == 302
    key = TrustedKey.objects.get()
    assert (key.registered_by, key.label, len(key.key_id)) == (staff, "Olga's site", 16)


def test_a_local_correction_after_an_imported_approval_is_newer_than_it(tmp_path):
    from reviews.services.approval.ground_truth import approval_sign
    from reviews.services.approval.signing import load_or_create_private_key

    project = ProjectFactory(slug="ledger")
    key = load_or_create_private_key()
    path = signed_review_file(tmp_path, key, project="ledger", case_id="c1", version=9)
    file_import(actor=None, project=project, path=path)
    item = Item.objects.get(project=project, external_id="c1")
    fixed = [{"path": "$.total", "expected_value": "1,290.00"}]
    approval = approval_sign(
        actor=member(project, Role.APPROVER), item=item, rows=fixed, reason="typo"
    )
    assert (approval.signed["version"], approval.signed["supersedes"]) == (10, 9)
