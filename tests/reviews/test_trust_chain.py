"""Issue 10's trust chain, on this site: approve, correct, export (three formats), verify;
every edit an attacker would try fails naming the item, and docs/formats.md's ten-line
verification example does the same. Imports of approved files: test_trust_chain_imports.py."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reviews.formats.canonical import canonical_rows
from reviews.models import Role
from reviews.reports.exports import files_export
from reviews.services.approval import signing
from reviews.services.approval.approve import approval_record
from reviews.services.rating.resolution import adjudication_record
from tests.builders import export_all, review_file_of, verify
from tests.factories import PASSWORD, member

pytestmark = pytest.mark.django_db

CASE = "case-0001"


@pytest.fixture
def corrected(project, review_item, rate):
    """Approved as v2 (total 1200), then corrected by adjudication and approved again (v3)."""
    item = review_item(project, external_id=CASE)
    item.metadata = {"review_file": review_file_of(item)}
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


def test_after_a_correction_every_export_renders_the_signed_v2_and_verifies(
    project, corrected, tmp_path
):
    folder = export_all(project, tmp_path)
    review = json.loads((folder / f"{CASE}.review.json").read_text())
    (total,) = review["review_items"]
    assert (total["decision"], total["value"]) == ("set", "1,290.00")
    assert total["note"] == "Page 2 shows 1,290.00"  # the adjudicator's reason is kept
    assert review["approval"]["format"] == 3 and review["approval"]["supersedes"] is not None
    reference = json.loads((folder / f"{CASE}.reference.json").read_text())
    assert reference["project"] == project.slug and reference["supersedes"] is not None
    ok, out = verify(folder)
    assert ok, out
    assert out.count(f"OK   {CASE}: v3") == 3, out  # review, reference and the CSV's case


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
    folder = export_all(project, tmp_path)
    target = folder / f"{CASE}.reference.json"
    _edit_json(target, edit)
    ok, out = verify(target)
    assert not ok
    assert f"FAIL {CASE}" in out or "FAIL case-0002" in out, out
    assert names in out, out


def test_a_duplicate_key_fails_naming_the_file(project, corrected, tmp_path):
    folder = export_all(project, tmp_path)
    target = folder / f"{CASE}.reference.json"
    text = target.read_text()
    target.write_text(text.replace('"case_id":', '"case_id": "case-0009", "case_id":', 1))
    ok, out = verify(target)
    assert not ok and "duplicate" in out.lower() and target.name in out, out


def test_a_tampered_jsonl_and_upper_case_json_in_a_folder_are_read(project, corrected, tmp_path):
    folder = export_all(project, tmp_path)
    reference = folder / f"{CASE}.reference.json"
    line = json.loads(reference.read_text())
    shutil.move(reference, folder / "COPY.JSON")
    line["rows"][-1]["expected_value"] = "1,999.00"
    (folder / "batch.JSONL").write_text(json.dumps(line) + "\n")
    ok, out = verify(folder)
    assert not ok
    assert f"FAIL {CASE}: $.total changed ('1,290.00' -> '1,999.00') [batch.JSONL, line 1]" in out
    assert "[COPY.JSON]" in out and out.count("OK   ") == 3, out


def test_an_edited_csv_row_fails_naming_item_and_path(project, corrected, tmp_path):
    folder = export_all(project, tmp_path)
    csv_file = folder / f"{project.slug}-ground-truth.csv"
    csv_file.write_text(csv_file.read_text().replace("1,290.00", "1,291.00"))
    ok, out = verify(csv_file)
    assert not ok and f"FAIL {CASE}: $.total changed" in out, out
    (folder / f"{csv_file.name}.sig.json").unlink()
    ok, out = verify(csv_file)
    assert not ok and "no signature file" in out, out


def test_a_v1_file_is_reported_and_fails_unless_allowed(project, corrected, tmp_path):
    folder = export_all(project, tmp_path)
    target = folder / f"{CASE}.reference.json"
    data = json.loads(target.read_text())
    rows = canonical_rows(data["rows"])
    from reviews.services.approval import signing

    v1 = signing.sign(json.dumps(rows, sort_keys=True, separators=(",", ":")).encode())
    data["approval"] = {**{k: data["approval"][k] for k in ("sha256", "algorithm", "key_id")}}
    data["approval"]["signature"] = v1.signature
    target.write_text(json.dumps(data))
    ok, out = verify(target)
    assert not ok and "v1: rows only, not bound to the case" in out and "--allow-v1" in out
    ok, out = verify(target, "--allow-v1")
    assert ok, out


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
