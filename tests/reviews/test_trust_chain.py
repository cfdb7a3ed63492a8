"""Issue 10's trust chain: approve, correct, export (three formats), verify; every edit an
attacker would try fails naming the item; forged, rolled-back and moved imports are refused
and change nothing."""

import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import CommandError, call_command

from reviews.formats.canonical import canonical_rows
from reviews.formats.signed import payload_bytes
from reviews.models import Approval, Event, Item, Reference, Resolution, Role, TrustedKey
from reviews.services import signing
from reviews.services.approval import approval_record
from reviews.services.approved_imports import KeyRefused, trusted_key_register
from reviews.services.exports import files_export
from reviews.services.imports import ImportFailed, file_import
from reviews.services.resolution import adjudication_record
from tests.factories import PASSWORD, MembershipFactory, ProjectFactory, member

pytestmark = pytest.mark.django_db

CASE = "case-0001"


def _review_file(item) -> dict:
    """The review file an import would have left on the item (claims + disputed paths)."""
    generated = item.references.get(authority="generated")
    questions = item.questions.filter(kind="field")
    return {
        "case_id": item.external_id,
        "claims": [
            {"path": r["path"], "expected_value": r["expected_value"]} for r in generated.rows
        ],
        "review_items": [
            {
                "path": q.key,
                "reason": "disagreement",
                "candidates": [
                    {"provider": c.providers[0], "expected_value": c.value}
                    for c in item.claims.filter(question=q)
                ],
                "decision": None,
                "value": None,
                "note": None,
            }
            for q in questions
        ],
    }


@pytest.fixture
def corrected(project, review_item, rate):
    """Approved as v2 (total 1200), then corrected by adjudication and approved again (v3)."""
    item = review_item(project, external_id=CASE)
    item.metadata = {"review_file": _review_file(item)}
    item.save(update_fields=["metadata"])
    first, second = (member(project, Role.RATER, username=f"r{n}") for n in (1, 2))
    rate(first, item, {"$.total": "1,200.00"})
    rate(second, item, {"$.total": "1,200.00"})
    approver = member(project, Role.APPROVER, username="appy")
    approval_record(actor=approver, item=item, password=PASSWORD, confirmed=True)
    adjudication_record(
        actor=member(project, Role.ADJUDICATOR, username="ada"),
        question=item.questions.get(key="$.total"),
        decision="set",
        value="1,290.00",
        reason="Page 2 shows 1,290.00",
    )
    item.refresh_from_db()
    approval_record(
        actor=approver, item=item, password=PASSWORD, confirmed=True, correction_reason="typo"
    )
    return item


def _export_all(project, folder):
    for format in ("review", "reference", "csv"):
        for name, content in files_export(actor=None, project=project, format=format).items():
            (folder / name).write_bytes(content)
    return folder


def _verify(path, *args):
    out = io.StringIO()
    try:
        call_command("verify_approval", str(path), *args, stdout=out)
    except CommandError as error:
        return False, out.getvalue() + str(error)
    return True, out.getvalue()


def test_after_a_correction_every_export_renders_the_signed_v2_and_verifies(
    project, corrected, tmp_path
):
    folder = _export_all(project, tmp_path)
    review = json.loads((folder / f"{CASE}.review.json").read_text())
    (total,) = review["review_items"]
    assert (total["decision"], total["value"]) == ("set", "1,290.00")
    assert total["note"] == "Page 2 shows 1,290.00"  # the adjudicator's reason is kept
    assert review["approval"]["format"] == 2 and review["approval"]["supersedes"] is not None
    reference = json.loads((folder / f"{CASE}.reference.json").read_text())
    assert reference["project"] == project.slug and reference["supersedes"] is not None
    ok, out = _verify(folder)
    assert ok, out
    assert out.count(f"OK   {CASE}: v2") == 3, out  # review, reference and the CSV's case


def _edit_json(path, edit):
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize(
    ("name", "edit", "names"),
    [
        ("case id", lambda d: d.update(case_id="case-0002"), "$.case_id"),
        ("version", lambda d: d.update(version=d["version"] + 1), "$.version"),
        ("approved_by", lambda d: d.update(approved_by="eve@example.com"), "$.approved_by"),
        ("approved_at", lambda d: d.update(approved_at="2030-01-01T00:00:00Z"), "$.approved_at"),
        (
            "signed version too",
            lambda d: (d.update(version=9), d["approval"].update(version=9)),
            "$.approval.signature",
        ),
    ],
)
def test_each_edit_of_a_reference_fails_naming_the_item(
    project, corrected, tmp_path, name, edit, names
):
    folder = _export_all(project, tmp_path)
    target = folder / f"{CASE}.reference.json"
    _edit_json(target, edit)
    ok, out = _verify(target)
    assert not ok
    assert f"FAIL {CASE}" in out or "FAIL case-0002" in out, out
    assert names in out, out


def test_a_duplicate_key_fails_naming_the_file(project, corrected, tmp_path):
    folder = _export_all(project, tmp_path)
    target = folder / f"{CASE}.reference.json"
    text = target.read_text()
    target.write_text(text.replace('"case_id":', '"case_id": "case-0009", "case_id":', 1))
    ok, out = _verify(target)
    assert not ok and "duplicate" in out.lower() and target.name in out, out


def test_a_tampered_jsonl_and_upper_case_json_in_a_folder_are_read(project, corrected, tmp_path):
    folder = _export_all(project, tmp_path)
    reference = folder / f"{CASE}.reference.json"
    line = json.loads(reference.read_text())
    shutil.move(reference, folder / "COPY.JSON")
    line["rows"][-1]["expected_value"] = "1,999.00"
    (folder / "batch.JSONL").write_text(json.dumps(line) + "\n")
    ok, out = _verify(folder)
    assert not ok
    assert f"FAIL {CASE}: $.total changed ('1,290.00' -> '1,999.00') [batch.JSONL, line 1]" in out
    assert "[COPY.JSON]" in out and out.count("OK   ") == 3, out


def test_an_edited_csv_row_fails_naming_item_and_path(project, corrected, tmp_path):
    folder = _export_all(project, tmp_path)
    csv_file = folder / f"{project.slug}-ground-truth.csv"
    csv_file.write_text(csv_file.read_text().replace("1,290.00", "1,291.00"))
    ok, out = _verify(csv_file)
    assert not ok and f"FAIL {CASE}: $.total changed" in out, out
    (folder / f"{csv_file.name}.sig.json").unlink()
    ok, out = _verify(csv_file)
    assert not ok and "no signature file" in out, out


def test_a_v1_file_is_reported_and_fails_unless_allowed(project, corrected, tmp_path):
    folder = _export_all(project, tmp_path)
    target = folder / f"{CASE}.reference.json"
    data = json.loads(target.read_text())
    rows = canonical_rows(data["rows"])
    from reviews.services import signing

    v1 = signing.sign(json.dumps(rows, sort_keys=True, separators=(",", ":")).encode())
    data["approval"] = {**{k: data["approval"][k] for k in ("sha256", "algorithm", "key_id")}}
    data["approval"]["signature"] = v1.signature
    target.write_text(json.dumps(data))
    ok, out = _verify(target)
    assert not ok and "v1: rows only, not bound to the case" in out and "--allow-v1" in out
    ok, out = _verify(target, "--allow-v1")
    assert ok, out


# --- imports of approved files -------------------------------------------------------------


def _counts():
    return [m.objects.count() for m in (Item, Reference, Approval, Resolution, Event)]


def _signed_file(tmp_path, key, *, project, case_id, version, rows, supersedes=None):
    """An approved review file signed (format 2) by `key`, as another site would export."""
    from reviews.services.signing import key_id_of

    bound = {
        "format": 2,
        "project": project,
        "case_id": case_id,
        "version": version,
        "supersedes": supersedes,
        "authority": "ground_truth",
        "parent_generated_sha256": None,
        "approved_by": "olga@elsewhere.example",
        "approved_at": "2026-11-30T10:00:00.000000Z",
    }
    import base64

    from reviews.formats.canonical import rows_sha256

    signature = base64.b64encode(key.sign(payload_bytes(bound, rows))).decode()
    review = {
        "case_id": case_id,
        "status": "approved",
        "approved_by": bound["approved_by"],
        "approved_at": bound["approved_at"],
        "claims": rows,
        "approval": {
            **bound,
            "sha256": rows_sha256(rows),
            "signature": signature,
            "algorithm": "ed25519",
            "key_id": key_id_of(key.public_key()),
        },
    }
    path = tmp_path / f"{case_id}-v{version}.json"
    path.write_text(json.dumps(review))
    return path


ROWS = [{"path": "$.total", "expected_value": "1,200.00"}]


def test_an_untrusted_key_is_refused_then_trusted_once_registered(tmp_path):
    project = ProjectFactory(slug="ledger")
    other_site = Ed25519PrivateKey.generate()
    path = _signed_file(tmp_path, other_site, project="ledger", case_id="c1", version=2, rows=ROWS)
    before = _counts()
    with pytest.raises(ImportFailed, match="which this project does not trust"):
        file_import(actor=None, project=project, path=path)
    assert _counts() == before

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
    old = _signed_file(tmp_path, other_site, project="ledger", case_id="c1", version=1, rows=ROWS)
    before = _counts()
    with pytest.raises(ImportFailed, match="roll the approval back"):
        file_import(actor=None, project=project, path=old)
    assert _counts() == before
    with pytest.raises(KeyRefused, match="already trusted"):
        trusted_key_register(actor=admin, project=project, pem=pem.decode())


def test_forged_moved_and_other_project_files_are_refused_and_change_nothing(tmp_path):
    from reviews.services.signing import load_or_create_private_key

    project = ProjectFactory(slug="ledger")
    site = load_or_create_private_key()
    good = _signed_file(tmp_path, site, project="ledger", case_id="c1", version=2, rows=ROWS)
    forged = json.loads(good.read_text())
    forged["claims"][0]["expected_value"] = "9,999.00"
    forged["approval"]["sha256"] = (
        __import__("hashlib")
        .sha256(json.dumps(forged["claims"], sort_keys=True, separators=(",", ":")).encode())
        .hexdigest()
    )
    moved = json.loads(good.read_text())
    moved["case_id"] = "c2"
    elsewhere = _signed_file(tmp_path, site, project="other", case_id="c1", version=2, rows=ROWS)
    cases = {
        "forged.json": (forged, "signature does not verify"),
        "moved.json": (moved, "signed for case 'c1', not 'c2'"),
    }
    before = _counts()
    for name, (data, message) in cases.items():
        (tmp_path / name).write_text(json.dumps(data))
        with pytest.raises(ImportFailed, match=message):
            file_import(actor=None, project=project, path=tmp_path / name)
    with pytest.raises(ImportFailed, match="signed for project 'other'"):
        file_import(actor=None, project=project, path=elsewhere)
    assert _counts() == before

    report = file_import(
        actor=None, project=project, path=tmp_path / "moved.json", options={"as_generated": True}
    )
    item = Item.objects.get(project=project, external_id="c2")
    assert not item.approvals.exists() and report.notes
    assert item.references.filter(authority="generated").exists()


# --- docs/formats.md's ten-line verification example, run as written ------------------------

DOC = Path(__file__).resolve().parents[2] / "docs" / "formats.md"


def _example() -> str:
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"<!-- verify-example -->\n```python\n(.*?)```", text, re.S)
    assert block, "docs/formats.md lost its verification example"
    code = block.group(1)
    lines = [line for line in code.splitlines() if line.strip()]
    assert len([line for line in lines if "import" not in line]) <= 10  # "ten lines"
    return code


def _run(script, *args):
    return subprocess.run(
        [sys.executable, "-I", str(script), *map(str, args)],  # -I: no project on the path
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_documented_example_verifies_an_export_and_catches_an_edit(
    project, corrected, tmp_path
):
    script = tmp_path / "verify.py"
    script.write_text(_example())
    pem = tmp_path / "site.pem"
    pem.write_bytes(signing.public_key_pem())
    name = f"{CASE}.reference.json"
    export = tmp_path / name
    export.write_bytes(files_export(actor=None, project=project, format="reference")[name])

    done = _run(script, export, pem)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith(f"OK {CASE} version ")

    export.write_text(export.read_text().replace("1,290.00", "1,299.00"))
    done = _run(script, export, pem)
    assert done.returncode != 0 and "InvalidSignature" in done.stderr


# --- the same policy through the API and the upload form -------------------------------------


def _forged_review(tmp_path, project):
    key = Ed25519PrivateKey.generate()  # nobody registered it
    path = _signed_file(tmp_path, key, project=project.slug, case_id="c1", version=2, rows=ROWS)
    return json.loads(path.read_text())


def test_the_api_refuses_an_untrusted_approved_review_unless_as_generated(client, tmp_path):
    from reviews.services.tokens import token_create

    project = ProjectFactory(slug="ledger")
    _, secret = token_create(actor=member(project, Role.ADMIN), name="t")
    url = f"/api/projects/{project.slug}/items"
    body = {"format": "review", "reviews": [_forged_review(tmp_path, project)]}
    headers = {"Authorization": f"Bearer {secret}"}
    before = _counts()
    refused = client.post(url, body, content_type="application/json", headers=headers)
    assert refused.status_code == 422
    assert "does not trust" in refused.json()["error"]["reason"]
    assert _counts() == before
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
    from reviews.services.ground_truth import approval_sign
    from reviews.services.signing import load_or_create_private_key

    project = ProjectFactory(slug="ledger")
    path = _signed_file(
        tmp_path, load_or_create_private_key(), project="ledger", case_id="c1", version=9, rows=ROWS
    )
    file_import(actor=None, project=project, path=path)
    item = Item.objects.get(project=project, external_id="c1")
    fixed = [{"path": "$.total", "expected_value": "1,290.00"}]
    approval = approval_sign(
        actor=member(project, Role.APPROVER), item=item, rows=fixed, reason="typo"
    )
    assert (approval.signed["version"], approval.signed["supersedes"]) == (10, 9)
