"""Small builders shared by the judging service tests (files written into tmp_path), and the
small calibration project of the dashboard, freshness, failure and setup-form tests."""

import json
from pathlib import Path

from django.core.management import call_command
from django.urls import reverse

from judging.services.calibration.panels import panel_configure
from judging.services.calibration.splits import split_draw
from judging.services.dashboard import dashboard_refresh
from reviews.models import Item, Slice
from reviews.services.imports.pipeline import file_import

EXAMPLES = Path(__file__).resolve().parent.parent / "data" / "examples"
JUDGE = {"provider": "openai", "model": "gpt-4o", "temperature": 0.2}


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def import_items(project, path, *args):
    """Run `manage.py import_items`; returns stdout."""
    from io import StringIO

    out, err = StringIO(), StringIO()
    call_command(
        "import_items", "--project", project.slug, str(path), *args, stdout=out, stderr=err
    )
    return out.getvalue()


def report_json(project, *args) -> dict:
    from io import StringIO

    out = StringIO()
    call_command(
        "agreement_report", "--project", project.slug, "--format", "json", *args, stdout=out
    )
    return json.loads(out.getvalue())


def row_for(report: dict, criterion: str, judge: str) -> dict:
    (row,) = [r for r in report["results"] if r["criterion"] == criterion and r["judge"] == judge]
    return row


def criterion_record(**fields) -> dict:
    return {
        "type": "criterion",
        "name": "faithful",
        "labels": ["pass", "fail"],
        "positive": "pass",
        "version": "1",
    } | fields


def item_record(item_id: str, **fields) -> dict:
    return {"type": "item", "item_id": item_id, "input": "in", "output": "out"} | fields


def verdict_record(item_id: str, label: str, **fields) -> dict:
    return {
        "type": "verdict",
        "item_id": item_id,
        "criterion": "faithful",
        "label": label,
        "judge": JUDGE,
    } | fields


def human_record(item_id: str, rater: str, label: str, **fields) -> dict:
    return {
        "type": "human_label",
        "item_id": item_id,
        "criterion": "faithful",
        "rater": rater,
        "label": label,
    } | fields


def referenced_item(project, external_id: str, rows: dict, *, authority="ground_truth", version=1):
    """An item with one reference of `rows` ({path: value}) of `authority`."""
    from reviews.formats.canonical import canonical_rows, rows_sha256
    from reviews.models import Reference

    item, _ = Item.objects.get_or_create(project=project, external_id=external_id)
    body = canonical_rows({"path": p, "expected_value": v} for p, v in rows.items())
    Reference.objects.create(
        item=item, authority=authority, version=version, rows=body, sha256=rows_sha256(body)
    )
    return item


# --- the small calibration project ----------------------------------------------------------

CLAUDE = {"provider": "anthropic", "model": "claude", "temperature": 0.0}
SMALL_ITEMS = 40
GPT_WRONG = {0, 1, 4, 5, 8, 9, 12, 13}  # every other one is in the critical slice
CLAUDE_WRONG = {2, 3}


def small_records(n_items: int = SMALL_ITEMS) -> list[dict]:
    """One critical criterion; per item two raters (ana, ben) and two judges: gpt-4o (JUDGE,
    with confidences and explanations, wrong on GPT_WRONG) and claude (wrong on CLAUDE_WRONG).
    Items with n % 4 in (0, 1) are in the `safety` slice."""
    records = [criterion_record(critical=True, text="Every claim is supported.")]
    for n in range(n_items):
        item_id = f"s{n:02d}"
        truth = "pass" if n % 2 == 0 else "fail"
        other = "fail" if truth == "pass" else "pass"
        records.append(item_record(item_id, slices=["safety"] if n % 4 in (0, 1) else []))
        records += [human_record(item_id, "ana", truth), human_record(item_id, "ben", truth)]
        records.append(
            verdict_record(
                item_id,
                other if n in GPT_WRONG else truth,
                judge=JUDGE,
                confidence=0.7,
                explanation=f"Checked {item_id}.",
            )
        )
        records.append(verdict_record(item_id, other if n in CLAUDE_WRONG else truth, judge=CLAUDE))
    # Criterion, items, then labels and verdicts: the importer writes consecutive items in one
    # batch (interleaved, it writes them one at a time, which only costs time here).
    first = {"criterion": 0, "item": 1}
    return sorted(records, key=lambda r: first.get(r["type"], 2))


def small_project(project, folder: Path, *, draw: bool = True, n_items: int = SMALL_ITEMS):
    """Import the small calibration project (its two judges on the panel `majority`, and its
    split drawn) into `project`, and compute
    its figures as the import's and the draw's recompute would once committed (their on-commit
    signal never fires inside a test's transaction)."""
    path = write_jsonl(folder / "small.jsonl", small_records(n_items))
    file_import(actor=None, project=project, path=path, format="jsonl")
    Slice.objects.filter(project=project, name="safety").update(critical=True)
    panel_configure(
        project=project,
        name="majority",
        rule="majority",
        members=["openai/gpt-4o", "anthropic/claude"],
    )
    if draw:
        split_draw(actor=None, project=project, seed=7)
    dashboard_refresh(project=project)
    return project


def see_held_out(client, user, project):
    """Sign in as `user` and press *Show held-out figures* (pages hide them until then)."""
    client.force_login(user)
    response = client.post(reverse("held_out_show", args=[project.slug]))
    assert response.status_code == 302


# An invoice's approved rows and a pipeline's predictions of it (two stages; the amounts and
# total are the prediction's mistakes).
INVOICE_ROWS = {
    "$.invoice.number": "INV-7",
    "$.invoice.lines[0].amount": "10.00",
    "$.invoice.lines[1].amount": "5.00",
    "$.total": "15.00",
}


def invoice_predictions(case_id="inv-1", amount="8", total="18"):
    return [
        {
            "case_id": case_id,
            "producer": {"provider": "openai", "model": "gpt-4o"},
            "stage_id": "invoice_extraction",
            "operation": "extract",
            "depends_on": [],
            "fields": ["$.invoice"],
            "prediction": {
                "invoice": {"number": "inv-7", "lines": [{"amount": "10"}, {"amount": amount}]}
            },
        },
        {
            "case_id": case_id,
            "producer": {"provider": "openai", "model": "gpt-4o"},
            "stage_id": "total",
            "operation": "sum",
            "depends_on": ["invoice_extraction"],
            "fields": ["$.total"],
            "prediction": {"total": total},
        },
    ]
