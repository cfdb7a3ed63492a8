"""Importing FORMATS §4 generic items (JSONL and CSV) and §3 `path,expected` tables.

Items with input/output/reference, slices (created once, linked), evidence paths (documents
stored once by SHA-256), idempotent re-import, updates kept in the timeline, reference tables
with their column aliases becoming generated references (new versions supersede old ones),
and the `import_items` command's summary line and failure exit.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from reviews.demo import documents as demo_evidence
from reviews.models import (
    Authority,
    Document,
    Event,
    Item,
    ItemSource,
    ItemStatus,
    Reference,
    Slice,
)
from reviews.services.imports import item_batch
from reviews.services.imports.pipeline import ImportFailed, file_import
from tests.factories import ProjectFactory
from tests.helpers import row_counts

EXAMPLES = Path(__file__).resolve().parent.parent / "data" / "examples"


def _nonzero(counts: dict[str, int]) -> dict[str, int]:
    return {key: n for key, n in counts.items() if n}


def _jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _items(n: int, *, start: int = 0, evidence: list[str] | None = None):
    for i in range(start, start + n):
        record = {
            "type": "item",
            "item_id": f"item-{i:05d}",
            "input": {"question": f"q{i}"},
            "output": f"answer {i}",
            "reference": f"gold {i}",
            "slices": ["all", f"mod-{i % 3}"],
            "metadata": {"n": i},
        }
        if evidence:
            record["evidence"] = evidence
        yield record


# ---------------------------------------------------------------------------------------------
# Items, slices, evidence


def test_items_are_created_with_their_fields_and_slices(project, tmp_path):
    path = _jsonl(
        tmp_path / "items.jsonl",
        [
            *_items(3),
            {
                "type": "item",
                "item_id": "plain",
                "input": "a string",
                "output": {"text": "obj"},
                "slices": ["all", "all", "extra"],
                "source": "kept as metadata",
            },
        ],
    )
    report = file_import(actor=None, project=project, path=path)
    assert report.format == "jsonl"
    assert report.counts == {"items_created": 4}
    assert report.summary() == "imported 4 items, 0 questions, 0 errors"

    item = Item.objects.get(project=project, external_id="item-00001")
    assert (item.input, item.output, item.expected) == ({"question": "q1"}, "answer 1", "gold 1")
    assert item.metadata == {"n": 1}
    assert item.status == ItemStatus.RESOLVED  # nothing to answer until criteria come
    plain = Item.objects.get(project=project, external_id="plain")
    assert (plain.input, plain.output, plain.expected) == ("a string", {"text": "obj"}, None)
    assert plain.metadata == {"source": "kept as metadata"}  # unknown keys are kept

    slices = {s.name: s for s in Slice.objects.filter(project=project)}
    assert sorted(slices) == ["all", "extra", "mod-0", "mod-1", "mod-2"]
    assert sorted(s.name for s in item.slices.all()) == ["all", "mod-1"]
    assert sorted(s.name for s in plain.slices.all()) == [
        "all",
        "extra",
    ]  # listed twice, linked once
    assert slices["all"].items.count() == 4
    assert Event.objects.filter(kind="imported", item__project=project).count() == 4


def test_slices_are_per_project_and_reused_by_later_files(project, tmp_path):
    file_import(actor=None, project=project, path=_jsonl(tmp_path / "a.jsonl", _items(2)))
    file_import(actor=None, project=project, path=_jsonl(tmp_path / "b.jsonl", _items(2, start=10)))
    other = ProjectFactory()
    file_import(actor=None, project=other, path=_jsonl(tmp_path / "c.jsonl", _items(1)))
    assert Slice.objects.filter(project=project).count() == 4  # all, mod-0, mod-1, mod-2
    assert Slice.objects.filter(project=other).count() == 2
    assert Slice.objects.get(project=project, name="all").items.count() == 4


def test_items_across_batches_keep_their_slices(project, tmp_path, monkeypatch):
    monkeypatch.setattr(item_batch, "BATCH", 7)
    path = _jsonl(tmp_path / "many.jsonl", _items(50))
    report = file_import(actor=None, project=project, path=path)
    assert report.counts["items_created"] == 50
    assert Item.slices.through.objects.filter(item__project=project).count() == 100
    assert sorted(Slice.objects.filter(project=project).values_list("name", flat=True)) == [
        "all",
        "mod-0",
        "mod-1",
        "mod-2",
    ]
    assert Slice.objects.get(project=project, name="mod-0").items.count() == 17


def test_items_with_evidence_paths_store_each_document_once(project, tmp_path):
    folder = tmp_path / "bundle"
    (folder / "scans").mkdir(parents=True)
    (folder / "scans" / "receipt.png").write_bytes(demo_evidence.receipt_png())
    (folder / "statement.pdf").write_bytes(demo_evidence.statement_pdf())
    (folder / "same-receipt.png").write_bytes(demo_evidence.receipt_png())
    path = _jsonl(
        folder / "items.jsonl",
        [
            *_items(2, evidence=["scans/receipt.png", "statement.pdf"]),
            {"type": "item", "item_id": "renamed", "evidence": ["./same-receipt.png"]},
        ],
    )
    report = file_import(actor=None, project=project, path=path)
    assert report.counts == {"items_created": 3, "documents": 2}
    assert Document.objects.count() == 2
    first = Item.objects.get(external_id="item-00000")
    sources = list(first.sources.order_by("position"))
    assert [(s.path, s.document.kind) for s in sources] == [
        ("scans/receipt.png", "image"),
        ("statement.pdf", "pdf"),
    ]
    assert sources[1].document.page_count == 3
    renamed = Item.objects.get(external_id="renamed").sources.get()
    assert renamed.document == sources[0].document  # same bytes, one Document
    assert ItemSource.objects.count() == 5

    other = ProjectFactory()  # and across projects
    file_import(actor=None, project=other, path=path)
    assert Document.objects.count() == 2 and ItemSource.objects.count() == 10


def test_items_csv_with_a_type_column(project, tmp_path):
    path = tmp_path / "items.csv"
    path.write_text(
        "type,item_id,input,output,slices,metadata\n"
        'item,c-1,hello,"{""text"": ""hi""}",safety|long,"{""lang"": ""en""}"\n'
        "item,c-2,bye,ciao,,\n",
        encoding="utf-8",
    )
    report = file_import(actor=None, project=project, path=path)
    assert (report.format, report.counts) == ("csv", {"items_created": 2})
    first = Item.objects.get(external_id="c-1")
    assert (first.input, first.output, first.metadata) == ("hello", {"text": "hi"}, {"lang": "en"})
    assert sorted(first.slices.values_list("name", flat=True)) == ["long", "safety"]
    assert not Item.objects.get(external_id="c-2").slices.exists()


# ---------------------------------------------------------------------------------------------
# Re-import


def test_reimporting_items_adds_no_rows_and_says_unchanged(project, tmp_path):
    folder = tmp_path / "bundle"
    folder.mkdir()
    (folder / "receipt.png").write_bytes(demo_evidence.receipt_png())
    path = _jsonl(folder / "items.jsonl", _items(30, evidence=["receipt.png"]))
    file_import(actor=None, project=project, path=path)
    rows = row_counts()
    report = file_import(actor=None, project=project, path=path)
    assert report.counts == {"items_unchanged": 30}
    assert report.summary() == "imported 30 items (30 unchanged), 0 questions, 0 errors"
    assert row_counts() == rows


def test_a_changed_item_is_updated_and_its_previous_values_kept(project, tmp_path):
    file_import(actor=None, project=project, path=_jsonl(tmp_path / "v1.jsonl", _items(3)))
    changed = list(_items(3))
    changed[1]["output"] = "a better answer"
    report = file_import(actor=None, project=project, path=_jsonl(tmp_path / "v2.jsonl", changed))
    assert report.counts == {"items_unchanged": 2, "items_updated": 1, "items_revised": 1}
    item = Item.objects.get(external_id="item-00001")
    assert item.output == "a better answer"
    event = Event.objects.get(item=item, kind="updated")
    assert event.data == {
        "file": "v2.jsonl",
        "record": "line 2",
        "previous": {"output": "answer 1"},
        "revision": 2,
        "asked_again": [],
    }


def test_a_reimport_adds_new_slices_to_existing_items(project, tmp_path):
    file_import(actor=None, project=project, path=_jsonl(tmp_path / "v1.jsonl", _items(2)))
    retagged = list(_items(2))
    retagged[0]["slices"] = [*retagged[0]["slices"], "safety-sensitive"]
    report = file_import(actor=None, project=project, path=_jsonl(tmp_path / "v2.jsonl", retagged))
    assert report.counts == {"items_unchanged": 1, "items_updated": 1}
    item = Item.objects.get(external_id="item-00000")
    assert sorted(item.slices.values_list("name", flat=True)) == [
        "all",
        "mod-0",
        "safety-sensitive",
    ]
    event = Event.objects.get(item=item, kind="updated")
    assert event.data["slices_added"] == ["safety-sensitive"]


def test_a_reimport_adds_new_evidence_to_existing_items(project, tmp_path):
    (tmp_path / "receipt.png").write_bytes(demo_evidence.receipt_png())
    (tmp_path / "statement.pdf").write_bytes(demo_evidence.statement_pdf())
    file_import(
        actor=None,
        project=project,
        path=_jsonl(tmp_path / "v1.jsonl", _items(2, evidence=["receipt.png"])),
    )
    more = list(_items(2, evidence=["receipt.png", "statement.pdf"]))
    report = file_import(actor=None, project=project, path=_jsonl(tmp_path / "v2.jsonl", more))
    assert _nonzero(report.counts) == {"items_updated": 2, "items_revised": 2, "documents": 1}
    item = Item.objects.get(external_id="item-00000")
    assert list(item.sources.order_by("position").values_list("path", flat=True)) == [
        "receipt.png",
        "statement.pdf",
    ]
    assert Event.objects.get(item=item, kind="updated").data["evidence_added"] == ["statement.pdf"]
    again = file_import(actor=None, project=project, path=tmp_path / "v2.jsonl")
    assert _nonzero(again.counts) == {"items_unchanged": 2}


@pytest.mark.parametrize("gap", [1, 1500], ids=["same-batch", "later-batch"])
def test_an_item_listed_twice_in_one_file_is_an_error(project, tmp_path, gap):
    records = list(_items(gap + 1))
    records.append({**records[0], "output": "a second opinion"})
    path = _jsonl(tmp_path / "twice.jsonl", records)
    with pytest.raises(ImportFailed) as failure:
        file_import(actor=None, project=project, path=path)
    error = failure.value.error
    assert (error.file, error.record, error.path) == ("twice.jsonl", f"line {gap + 2}", "$.item_id")
    assert "appears twice" in error.reason and "line 1" in error.reason
    assert not Item.objects.exists()


def test_an_existing_item_listed_twice_in_a_reimport_is_an_error(project, tmp_path):
    file_import(actor=None, project=project, path=_jsonl(tmp_path / "v1.jsonl", _items(3)))
    records = [*_items(1200), next(_items(1, start=2))]
    rows = row_counts()
    with pytest.raises(ImportFailed) as failure:
        file_import(actor=None, project=project, path=_jsonl(tmp_path / "v2.jsonl", records))
    error = failure.value.error
    assert (error.record, error.path) == ("line 1201", "$.item_id")
    assert "'item-00002' appears twice" in error.reason
    assert row_counts() == rows


# ---------------------------------------------------------------------------------------------
# §3 path,expected tables


def test_reference_csv_with_aliases_creates_generated_references(project, tmp_path):
    path = tmp_path / "truth.csv"
    path.write_text(
        "case_id,field_path,expected\n"
        'statement-1,$.amount,"1,200.00"\n'
        "statement-1,$.pages,3\n"
        "statement-1,$.currency,USD\n"
        "statement-2,$.amount,\n",
        encoding="utf-8",
    )
    report = file_import(actor=None, project=project, path=path)
    assert (report.format, report.counts) == ("csv", {"items_created": 2, "references": 2})
    assert report.summary() == "imported 2 items, 0 questions, 2 references, 0 errors"
    first = Item.objects.get(project=project, external_id="statement-1")
    reference = Reference.objects.get(item=first)
    assert (reference.authority, reference.version) == (Authority.GENERATED, 1)
    assert reference.rows == [  # sorted by path; "1,200.00" stays text, 3 is a number
        {"path": "$.amount", "expected_value": "1,200.00"},
        {"path": "$.currency", "expected_value": "USD"},
        {"path": "$.pages", "expected_value": 3},
    ]
    assert Reference.objects.get(item__external_id="statement-2").rows == [
        {"path": "$.amount", "expected_value": ""}
    ]
    assert not Reference.objects.filter(authority=Authority.GROUND_TRUTH).exists()


@pytest.mark.parametrize(
    "header", ["case_id,path,expected_value", "case_id,field_path,value", "CASE_ID,Path,Expected"]
)
def test_reference_csv_header_spellings(project, tmp_path, header):
    path = tmp_path / "t.csv"
    path.write_text(f"{header}\nc-1,$.total,12.50\n", encoding="utf-8")
    file_import(actor=None, project=project, path=path)
    assert Reference.objects.get(item__external_id="c-1").rows == [
        {"path": "$.total", "expected_value": 12.5}
    ]


def test_single_case_path_expected_table_takes_the_case_from_the_options(project, tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("field_path,expected\n$.total,9.00\n$.date,2024-03-14\n", encoding="utf-8")
    report = file_import(actor=None, project=project, path=path, options={"case_id": "ticket-9"})
    assert report.counts == {"items_created": 1, "references": 1}
    rows = Reference.objects.get(item__external_id="ticket-9").rows
    assert rows == [
        {"path": "$.date", "expected_value": "2024-03-14"},
        {"path": "$.total", "expected_value": 9.0},
    ]


def test_reference_csv_reimport_is_unchanged_and_a_change_is_a_new_version(project, tmp_path):
    path = tmp_path / "truth.csv"
    path.write_text(
        "case_id,path,expected_value\nc-1,$.total,10\nc-2,$.total,20\n", encoding="utf-8"
    )
    file_import(actor=None, project=project, path=path)
    rows = row_counts()
    again = file_import(actor=None, project=project, path=path)
    assert again.counts == {"items_unchanged": 2}
    assert row_counts() == rows

    path.write_text(
        "case_id,path,expected_value\nc-1,$.total,11\nc-2,$.total,20\n", encoding="utf-8"
    )
    report = file_import(actor=None, project=project, path=path)
    assert report.counts == {"items_unchanged": 1, "items_updated": 1, "references": 1}
    old, new = Reference.objects.filter(item__external_id="c-1").order_by("version")
    assert (old.rows, new.rows) == (
        [{"path": "$.total", "expected_value": 10}],
        [{"path": "$.total", "expected_value": 11}],
    )
    assert (new.version, new.supersedes_id, new.authority) == (2, old.pk, Authority.GENERATED)


def test_reference_csv_for_an_imported_review_item_supersedes_its_generated_rows(project, tmp_path):
    file_import(actor=None, project=project, path=EXAMPLES / "statement-0912.review.json")
    path = tmp_path / "fix.csv"
    path.write_text(
        "case_id,path,expected_value\nstatement-0912,$.account,NW-004512\n"
        "statement-0912,$.currency,EUR\n",
        encoding="utf-8",
    )
    report = file_import(actor=None, project=project, path=path)
    assert report.counts == {"items_updated": 1, "references": 1}
    old, new = Reference.objects.filter(item__external_id="statement-0912").order_by("version")
    assert new.supersedes_id == old.pk and {"path": "$.currency", "expected_value": "EUR"} in (
        new.rows
    )


# ---------------------------------------------------------------------------------------------
# The command line


def test_import_items_summary_line_for_items(project, tmp_path):
    path = _jsonl(tmp_path / "items.jsonl", _items(5))
    out = io.StringIO()
    call_command("import_items", str(path), project=project.slug, stdout=out)
    assert out.getvalue().splitlines() == ["imported 5 items, 0 questions, 0 errors"]
    out = io.StringIO()
    call_command("import_items", str(path), project=project.slug, format="jsonl", stdout=out)
    assert out.getvalue().splitlines() == ["imported 5 items (5 unchanged), 0 questions, 0 errors"]


def test_import_items_summary_for_a_csv_of_one_kind(project, tmp_path):
    path = tmp_path / "items.csv"
    path.write_text("item_id,input,output\na,1,2\nb,3,4\n", encoding="utf-8")
    out = io.StringIO()
    call_command("import_items", str(path), project=project.slug, kind="item", stdout=out)
    assert out.getvalue().strip() == "imported 2 items, 0 questions, 0 errors"
    assert Item.objects.get(external_id="a").input == "1"


def test_import_items_error_exit_names_file_line_and_path(project, tmp_path):
    path = _jsonl(tmp_path / "bad.jsonl", [*_items(3), {"type": "item", "item_id": ""}])
    err = io.StringIO()
    with pytest.raises(CommandError, match="import refused; nothing was written"):
        call_command("import_items", str(path), project=project.slug, stderr=err)
    lines = err.getvalue().splitlines()
    assert lines[0] == "imported 0 items, 0 questions, 1 error"
    assert lines[1].startswith("bad.jsonl, line 4, $.item_id: ")
    assert not Item.objects.exists()
