"""Pure scoring: field accuracy, missing and extra paths, normalisation, per-field CIs and
failure contexts on hand-made cases (no database)."""

import io
import json

import pytest

from judging.formats.json_paths import parse_path
from judging.formats.predictions import parse_predictions
from judging.reports.scoring.build import (
    CaseReferences,
    ReferenceInput,
    compare,
    score_report_build,
    share_ci,
)
from judging.reports.scoring.markdown import render_markdown
from reviews.formats.errors import FormatError


def predictions(*records):
    data = "\n".join(json.dumps(r) for r in records).encode()
    return parse_predictions(io.BytesIO(data), file="preds.jsonl")


def rows(**values):
    return [{"path": f"$.{k}", "expected_value": v} for k, v in values.items()]


def gt(rows, version=2):
    return CaseReferences(ground_truth=ReferenceInput("ground_truth", version, rows))


def report(records, references, **kwargs):
    return score_report_build(
        project="p",
        computed_at="2026-11-30T10:00:00Z",
        source="preds.jsonl",
        predictions=predictions(*records),
        references=references,
        n_resamples=200,
        **kwargs,
    )


def test_normalised_values_count_as_correct():
    (p,) = predictions(
        {"case_id": "c1", "prediction": {"amount": 1200, "name": "  northwind   TRADERS "}}
    )
    result = compare(p, rows(amount="1,200.00", name="Northwind Traders"))
    assert [f["outcome"] for f in result["fields"]] == ["correct", "correct"]


def test_missing_wrong_and_extra_paths():
    (p,) = predictions(
        {
            "case_id": "c1",
            "prediction": {"currency": "EUR", "amount": "5", "notes": {"a": 1}, "lines": [1, 2]},
        }
    )
    reference = [
        *rows(currency="USD", amount="5", account_name="Acme"),
        {"path": "$.lines", "expected_value": [1, 2]},
    ]
    result = compare(p, reference)
    outcomes = {f["path"]: f["outcome"] for f in result["fields"]}
    assert outcomes == {
        "$.currency": "wrong",
        "$.amount": "correct",
        "$.account_name": "missing",
        "$.lines": "correct",
    }
    assert result["missing"] == ["$.account_name"]
    assert result["extra"] == ["$.notes.a"]


def test_bracketed_reference_paths_match_dotted_predictions():
    assert parse_path("$['unit price'].total") == parse_path('$["unit price"]["total"]')
    (p,) = predictions({"case_id": "c1", "prediction": {"unit price": {"total": "3"}}})
    result = compare(p, [{"path": "$['unit price'].total", "expected_value": 3}])
    assert result["fields"][0]["outcome"] == "correct"
    assert result["fields"][0]["path"] == '$["unit price"].total'


def test_field_accuracy_per_case_and_per_field():
    out = report(
        [
            {"case_id": "c1", "prediction": {"a": 1, "b": 2}},
            {"case_id": "c2", "prediction": {"a": 1, "b": 3}},
        ],
        {"c1": gt(rows(a=1, b=2)), "c2": gt(rows(a=1, b=2))},
    )
    (section,) = out["sections"]
    assert section["label"] == "accuracy against approved ground truth"
    accuracy = {c["case_id"]: c["field_accuracy"]["value"] for c in section["cases"]}
    assert accuracy == {"c1": 1.0, "c2": 0.5}
    fields = {f["path"]: f for f in section["fields"]}
    assert fields["$.a"]["accuracy"]["value"] == 1.0
    assert fields["$.b"]["accuracy"]["value"] == 0.5
    assert fields["$.b"]["n"] == 2 and fields["$.b"]["wrong"] == 1
    low, high = fields["$.b"]["accuracy"]["ci"]
    assert 0.0 <= low <= 0.5 <= high <= 1.0


def test_a_headline_per_producer_pools_its_fields_and_resamples_cases():
    out = report(
        [
            {
                "case_id": "c1",
                "producer": {"provider": "acme", "model": "one"},
                "prediction": {"a": 1, "b": 2},
            },
            {
                "case_id": "c2",
                "producer": {"provider": "acme", "model": "one"},
                "prediction": {"a": 1, "b": 3},
            },
            {
                "case_id": "c1",
                "producer": {"provider": "acme", "model": "two"},
                "prediction": {"a": 9, "b": 9},
            },
        ],
        {"c1": gt(rows(a=1, b=2)), "c2": gt(rows(a=1, b=2))},
    )
    (section,) = out["sections"]
    one, two = section["producers"]
    assert (one["producer"], one["correct"], one["n_fields"]) == ("acme/one", 3, 4)
    assert (one["n_cases"], one["n_records"], one["records_correct"]) == (2, 2, 1)
    assert one["accuracy"]["value"] == 0.75
    # Two cases: a resample holds c1 twice (1.0), c2 twice (0.5) or both (0.75).
    assert one["accuracy"]["ci"] == [0.5, 1.0]
    assert two["accuracy"]["value"] == 0.0 and two["records_correct"] == 0


def test_share_ci_is_a_bootstrap_of_the_items():
    stat = share_ci(30, 40, seed=1, n_resamples=2000)
    assert stat.value == 0.75
    low, high = stat.ci
    # Normal approximation: 0.75 ± 1.96 * sqrt(0.75 * 0.25 / 40) = [0.616, 0.884].
    assert low == pytest.approx(0.616, abs=0.04)
    assert high == pytest.approx(0.884, abs=0.04)
    assert share_ci(0, 0, seed=1, n_resamples=10).value is None


def test_generated_reference_only_when_asked_and_never_mixed():
    refs = {
        "c1": gt(rows(a=1)),
        "c2": CaseReferences(generated=ReferenceInput("generated", 1, rows(a=1))),
    }
    records = [{"case_id": "c1", "prediction": {"a": 1}}, {"case_id": "c2", "prediction": {"a": 2}}]
    strict = report(records, refs)
    assert [s["reference"] for s in strict["sections"]] == ["ground_truth"]
    assert strict["sections"][0]["n_cases"] == 1
    assert strict["unscored"][0]["case_id"] == "c2"
    assert "--allow-generated" in strict["unscored"][0]["reason"]

    loose = report(records, refs, allow_generated=True)
    truth, provisional = loose["sections"]
    assert [c["case_id"] for c in truth["cases"]] == ["c1"]
    assert [c["case_id"] for c in provisional["cases"]] == ["c2"]
    assert provisional["label"] == "agreement with a provisional AI reference"
    assert provisional["measure"] == "agreement"
    assert "accuracy" not in json.dumps(provisional)
    assert provisional["cases"][0]["field_agreement"]["value"] == 0.0


INVOICE = {
    "invoice": {"number": "INV-7", "lines": [{"amount": "10.00"}, {"amount": "5.00"}]},
    "total": "15.00",
}


def invoice_records(extracted_amount, total):
    return [
        {
            "case_id": "inv-1",
            "stage_id": "invoice_extraction",
            "operation": "extract",
            "fields": ["$.invoice"],
            "prediction": {
                "invoice": {
                    "number": "INV-7",
                    "lines": [{"amount": "10"}, {"amount": extracted_amount}],
                }
            },
        },
        {
            "case_id": "inv-1",
            "stage_id": "total",
            "operation": "sum",
            "depends_on": ["invoice_extraction"],
            "fields": ["$.total"],
            "prediction": {"total": total},
        },
    ]


def invoice_rows():
    return [
        {"path": "$.invoice.number", "expected_value": "INV-7"},
        {"path": "$.invoice.lines[0].amount", "expected_value": "10.00"},
        {"path": "$.invoice.lines[1].amount", "expected_value": "5.00"},
        {"path": "$.total", "expected_value": "15.00"},
    ]


@pytest.mark.parametrize(
    ("amount", "total", "contexts"),
    [
        ("5", "15", {"invoice_extraction": None, "total": None}),
        ("5", "16", {"invoice_extraction": None, "total": "current_stage"}),
        # The extraction misread 5 as 8 and the total faithfully summed it: upstream's fault.
        ("8", "18", {"invoice_extraction": "current_stage", "total": "upstream_or_combined"}),
        ("8", "15", {"invoice_extraction": "current_stage", "total": "upstream"}),
    ],
)
def test_invoice_then_total_failure_context(amount, total, contexts):
    out = report(invoice_records(amount, total), {"inv-1": gt(invoice_rows())})
    (section,) = out["sections"]
    (pipeline,) = section["pipelines"]
    assert {s["stage_id"]: s["failure_context"] for s in pipeline["stages"]} == contexts
    stages = {c["stage_id"]: c for c in section["cases"]}
    # Each stage answers for the part of the case's reference its `fields` declare.
    assert stages["invoice_extraction"]["n_fields"] == 3
    assert stages["total"]["n_fields"] == 1
    assert stages["total"]["extra"] == []
    counts = {r["stage_id"]: r["contexts"] for r in section["stage_counts"]}
    assert sum(counts["total"].values()) == 1


def test_stage_missing_from_file_makes_dependents_indeterminate():
    records = invoice_records("5", "16")[1:]
    out = report(records, {"inv-1": gt(invoice_rows())})
    (stage,) = out["sections"][0]["pipelines"][0]["stages"]
    assert stage["failure_context"] == "indeterminate"
    assert stage["upstream"] == [{"stage_id": "invoice_extraction", "verdict": "missing"}]


def test_explicit_fields_scope():
    (p,) = predictions(
        {"case_id": "c", "stage_id": "s", "fields": ["$.total"], "prediction": {"total": "15"}}
    )
    result = compare(p, invoice_rows())
    assert [f["path"] for f in result["fields"]] == ["$.total"]


def test_a_stage_without_fields_is_scored_on_every_reference_path_and_says_so():
    """The issue's case: an extraction that leaves the total out is not 1.000 'pass' because it
    named only its own keys; it is 3 of 4 and fails, the same with or without `stage_id`."""
    extraction = invoice_records("5", "15")[0]
    del extraction["fields"]
    as_stage = report([extraction], {"inv-1": gt(invoice_rows())})["sections"][0]["cases"][0]
    plain = {k: v for k, v in extraction.items() if k not in ("stage_id", "operation")}
    alone = report([plain], {"inv-1": gt(invoice_rows())})["sections"][0]["cases"][0]
    for case in (as_stage, alone):
        assert case["field_accuracy"]["value"] == 0.75
        assert case["verdict"] == "fail"
        assert case["missing"] == ["$.total"]
        assert (case["scope"], case["scope_fields"]) == ("every_reference_path", None)
    declared = report(invoice_records("5", "15")[:1], {"inv-1": gt(invoice_rows())})
    case = declared["sections"][0]["cases"][0]
    assert (case["field_accuracy"]["value"], case["verdict"]) == (1.0, "pass")
    assert (case["scope"], case["scope_fields"]) == ("declared_fields", ["$.invoice"])
    text = render_markdown(declared)
    assert "| inv-1 | - | invoice_extraction | declared fields: $.invoice | 1.000 |" in text


@pytest.mark.parametrize(
    ("records", "line", "path", "reason"),
    [
        ([{"prediction": {}}], "line 1", "$.case_id", "Field required"),
        ([{"case_id": "c", "prediction": [1]}], "line 1", "$.prediction", "dictionary"),
        (
            [{"case_id": "c", "prediction": {}, "producer": {"provider": "x"}}],
            "line 1",
            "$.producer.model",
            "Field required",
        ),
        (
            [{"case_id": "c", "prediction": {}, "depends_on": ["a"]}],
            "line 1",
            "$.depends_on",
            "stage_id",
        ),
        (
            [{"case_id": "c", "prediction": {}}, {"case_id": "c", "prediction": {}}],
            "line 2",
            "$.case_id",
            "already given on line 1",
        ),
        (
            [
                {"case_id": "c", "stage_id": "a", "depends_on": ["b"], "prediction": {}},
                {"case_id": "c", "stage_id": "b", "depends_on": ["a"], "prediction": {}},
            ],
            "line 2",
            "$.depends_on",
            "cycle",
        ),
        (
            [{"case_id": "c", "prediction": {}, "fields": ["total"]}],
            "line 1",
            "$.fields[0]",
            "JSON path",
        ),
    ],
)
def test_bad_records_are_named(records, line, path, reason):
    with pytest.raises(FormatError) as caught:
        predictions(*records)
    error = caught.value
    assert (error.file, error.record, error.path) == ("preds.jsonl", line, path)
    assert reason in error.reason


def test_bad_json_line_is_named():
    with pytest.raises(FormatError) as caught:
        parse_predictions(io.BytesIO(b'{"case_id": "c", "prediction": {}}\n{oops\n'), file="f")
    assert caught.value.record == "line 2"
