"""Small builders shared by the judging service tests (files written into tmp_path)."""

import json
from pathlib import Path

from django.core.management import call_command

from reviews.models import Item

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
