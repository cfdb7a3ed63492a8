"""Issue 26, F7: an approval signs the evidence of every approved row (quote, box, source and
page: payload format 3); `verify_approval` and the import check a block the same way (the
algorithm included); a tampered CSV export imported as generated says, per case, that its
signature file does not verify. Format 2 signatures still verify, as binding no evidence."""

from __future__ import annotations

import base64
import csv
import io
import json
from datetime import UTC, datetime

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from reviews.demo import documents as demo_evidence
from reviews.demo.files import STATEMENT_FILE
from reviews.formats.canonical import rows_sha256
from reviews.formats.review_file import ReviewFile
from reviews.formats.signed import bound_fields, citations_of, payload_bytes
from reviews.models import TrustedKey
from reviews.reports.exports import files_export
from reviews.services.approval.signing import key_id_of
from reviews.services.imports.pipeline import ImportFailed, file_import
from tests.builders import signed_review_file, trust_counts, verify
from tests.factories import member
from tests.reviews.test_import_round_trip import CASE, approved  # noqa: F401 (the fixture)

pytestmark = pytest.mark.django_db


def _exported(project, folder, format="review") -> dict[str, object]:
    files = files_export(actor=None, project=project, format=format)
    for name, content in files.items():
        (folder / name).write_bytes(content)
    (folder / STATEMENT_FILE).write_bytes(demo_evidence.statement_pdf())  # the cited evidence
    return files


def _review(folder):
    path = folder / f"{CASE}.review.json"
    return path, json.loads(path.read_text())


def test_the_signature_binds_every_approved_rows_evidence(project, approved, tmp_path):  # noqa: F811
    _exported(project, tmp_path)
    _, review = _review(tmp_path)
    block = review["approval"]
    assert block["format"] == 3
    holder = next(c for c in block["citations"] if c["path"] == "$.holder")
    claim = next(c for c in review["claims"] if c["path"] == "$.holder")
    assert holder == {
        "path": "$.holder",
        "provider": None,
        "quote": claim["evidence"],
        "bbox": claim["bbox"],
        "source": {"artifact_id": claim["reference_id"], "path": STATEMENT_FILE, "page": 1},
    }
    # The decided dispute's candidates are cited with their providers; the omitted one is not.
    cited_paths = {c["path"] for c in block["citations"]}
    assert "$.total_due" in cited_paths and "$.period" not in cited_paths
    ok, out = verify(tmp_path / f"{CASE}.review.json")
    assert ok and f"OK   {CASE}: v3" in out, out


def _claim(review, path):
    return next(c for c in review["claims"] if c["path"] == path)


def _candidate(review, path):
    return next(i for i in review["review_items"] if i["path"] == path)["candidates"][0]


def _page_of(review, artifact_id):
    return next(s for s in review["sources"] if s["artifact_id"] == artifact_id)["metadata"]


TAMPERING = {
    "quote": lambda r: _claim(r, "$.holder").update(evidence="Account holder: Mallory"),
    "bbox": lambda r: _claim(r, "$.holder").update(bbox=[0.0, 0.0, 10.0, 10.0]),
    "source": lambda r: _claim(r, "$.holder").update(reference_id="statement-p3"),
    "page": lambda r: _page_of(r, _claim(r, "$.holder")["reference_id"]).update(page=2),
    "candidate quote": lambda r: _candidate(r, "$.total_due").update(evidence="Total: 0.00"),
}


@pytest.mark.parametrize("edit", TAMPERING, ids=str)
def test_edited_evidence_fails_verification_and_import(project, approved, tmp_path, edit):  # noqa: F811
    _exported(project, tmp_path)
    path, review = _review(tmp_path)
    TAMPERING[edit](review)
    path.write_text(json.dumps(review, indent=2))

    ok, out = verify(path)
    assert not ok and "FAIL" in out and "(quote, bbox, source or page) is not what was" in out, out

    before = trust_counts()
    with pytest.raises(ImportFailed, match=r"does not verify.*the evidence of \$\."):
        file_import(actor=member(project, "admin"), project=project, path=path)
    assert trust_counts() == before


def test_algorithm_none_is_refused_by_verify_approval_as_by_the_import(
    project,
    approved,  # noqa: F811
    tmp_path,
):
    _exported(project, tmp_path, format="reference")
    _exported(project, tmp_path, format="review")
    for path in (tmp_path / f"{CASE}.reference.json", tmp_path / f"{CASE}.review.json"):
        data = json.loads(path.read_text())
        data["approval"]["algorithm"] = "none"
        path.write_text(json.dumps(data))
        ok, out = verify(path)
        assert not ok and "$.approval.algorithm: 'none' is not 'ed25519'" in out, out
    with pytest.raises(ImportFailed, match=r"\$\.approval\.algorithm"):
        file_import(actor=member(project, "admin"), project=project, path=path)


def test_a_tampered_csv_export_says_so_per_case_when_imported_as_generated(
    project,
    approved,  # noqa: F811
    tmp_path,
):
    files = _exported(project, tmp_path, format="csv")
    csv_name = next(name for name in files if name.endswith(".csv"))
    csv_path = tmp_path / csv_name
    admin = member(project, "admin")

    report = file_import(actor=admin, project=project, path=csv_path)
    assert any(f"case {CASE!r}" in n and "its signature verifies" in n for n in report.notes)

    rows = list(csv.reader(io.StringIO(csv_path.read_text())))
    for row in rows:
        if row[1] == "$.total_due":
            row[2] = "9" + row[2]  # one more digit on the total due
    with csv_path.open("w", newline="") as out:
        csv.writer(out, lineterminator="\n").writerows(rows)
    report = file_import(actor=admin, project=project, path=csv_path)
    (note,) = [n for n in report.notes if f"case {CASE!r}" in n]
    assert "imported as generated; its signature does NOT verify" in note, report.notes
    assert "$.approval.sha256: does not match the rows" in note
    assert report.counts["references"] == 1  # still imported, as generated rows


def test_a_format_2_signature_still_verifies_as_binding_no_evidence(project, tmp_path):
    key = Ed25519PrivateKey.generate()
    pem = tmp_path / "other.pem"
    pem.write_bytes(key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo))
    path = signed_review_file(tmp_path, key, project=project.slug, case_id="c-1", version=1)
    ok, out = verify(path, "--public-key", str(pem))
    assert ok and "OK   c-1: v2 (evidence citations not signed), version 1" in out, out

    data = json.loads(path.read_text())
    data["approval"]["algorithm"] = "none"  # the same check for format 2
    path.write_text(json.dumps(data))
    ok, out = verify(path, "--public-key", str(pem))
    assert not ok and "$.approval.algorithm" in out


def test_a_format_3_block_cannot_drop_its_citations(project, approved, tmp_path):  # noqa: F811
    """Taking `citations` out (or calling it format 2) changes what the signature covers."""
    _exported(project, tmp_path)
    path, review = _review(tmp_path)
    for change in ({"format": 2}, {"citations": []}):
        block = {k: v for k, v in review["approval"].items() if k != "citations"}
        tampered = {**review, "approval": {**block, **change}}
        path.write_text(json.dumps(tampered))
        ok, out = verify(path)
        assert not ok and "$.approval.signature: does not match" in out, out


def _other_site_v3(folder, key, project, *, quote: str) -> object:
    """An approved review file signed (format 3) by another site's `key`, citing page 2."""
    sources = [{"artifact_id": "doc-p2", "path": "doc.pdf", "metadata": {"page": 2}}]
    claims = [
        {
            "path": "$.total",
            "expected_value": "7.00",
            "reference_id": "doc-p2",
            "evidence": "Total 7.00",
            "bbox": [10.0, 20.0, 60.0, 30.0],
        }
    ]
    review = ReviewFile.model_validate({"case_id": "c-3", "sources": sources, "claims": claims})
    rows = review.reference_rows()
    bound = bound_fields(
        project=project.slug,
        case_id="c-3",
        version=1,
        supersedes=None,
        parent_generated_sha256=None,
        approved_by="olga@elsewhere.example",
        approved_at=datetime(2026, 11, 30, 10, tzinfo=UTC),
        citations=citations_of(review, [r["path"] for r in rows]),
    )
    signature = base64.b64encode(key.sign(payload_bytes(bound, rows))).decode()
    claims[0]["evidence"] = quote  # what the file states (the signed one, or an edit)
    data = {
        "case_id": "c-3",
        "status": "approved",
        "approved_by": bound["approved_by"],
        "approved_at": bound["approved_at"],
        "sources": sources,
        "claims": claims,
        "approval": {
            **bound,
            "sha256": rows_sha256(rows),
            "signature": signature,
            "algorithm": "ed25519",
            "key_id": key_id_of(key.public_key()),
        },
    }
    (folder / "doc.pdf").write_bytes(demo_evidence.statement_pdf())
    path = folder / "c-3.json"
    path.write_text(json.dumps(data))
    return path


def test_another_sites_format_3_file_imports_with_its_evidence_and_exports_verifiable(
    project, tmp_path
):
    key = Ed25519PrivateKey.generate()
    pem = key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    admin = member(project, "admin")
    TrustedKey.objects.create(
        project=project, key_id=key_id_of(key.public_key()), public_key_pem=pem.decode(),
        registered_by=admin,
    )  # fmt: skip
    edited = _other_site_v3(tmp_path, key, project, quote="Total 1.00")
    before = trust_counts()
    with pytest.raises(ImportFailed, match=r"the evidence of \$\.total"):
        file_import(actor=admin, project=project, path=edited)
    assert trust_counts() == before

    path = _other_site_v3(tmp_path, key, project, quote="Total 7.00")
    report = file_import(actor=admin, project=project, path=path)
    assert report.counts["ground_truth"] == 1
    out = tmp_path / "export"
    out.mkdir()
    for name, content in files_export(actor=None, project=project, format="review").items():
        (out / name).write_bytes(content)
    (tmp_path / "other.pem").write_bytes(pem)
    ok, text = verify(out, "--public-key", str(tmp_path / "other.pem"))
    assert ok and "OK   c-3: v3" in text, text
