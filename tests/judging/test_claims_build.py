"""Which rows compare by claims, the claims of a value, and the claim measures (pure)."""

import numpy as np
import pytest

from judging.metrics.claims import case_scores, pooled_scores
from judging.reports.scoring.claims import claim_task, claim_texts, semantic_kind


@pytest.mark.parametrize(
    ("path", "value", "kind"),
    [
        (("total",), "798.60", ""),
        (("name",), "Northwind Traders Ltd", ""),
        (("summary",), "one two three four five six seven eight nine", "free text"),
        (("address",), "Main St 1\nBerlin", "free text"),
        (("lines",), [{"amount": 1}, {"amount": 2}], "table"),
        (("lines",), [1, 2], ""),
        (("invoice",), {"number": "7"}, ""),
        (("items", 0, "Notes"), "short", "note"),
    ],
)
def test_semantic_kind(path, value, kind):
    assert semantic_kind(path, value) == kind


def test_claims_of_a_text_a_table_and_a_value():
    text = "It rained. Then it stopped! Did it? Yes; indeed\nthe end"
    assert claim_texts(("s",), text, "free text") == [
        "It rained.", "Then it stopped!", "Did it?", "Yes;", "indeed", "the end"
    ]  # fmt: skip
    assert claim_texts(("lines",), [{"a": 1}, {"a": 2}]) == [
        '$.lines row 1: {"a": 1}', '$.lines row 2: {"a": 2}'
    ]  # fmt: skip
    assert claim_texts(("total",), "15.00") == ['$.total = "15.00"']


def test_a_task_numbers_claims_and_skips_absent_predictions():
    rows = [(("summary",), "A is b. C is d. E is f, g, h and i."), (("notes",), "late")]
    task = claim_task(("c", "", ""), {"summary": "A is b."}, rows, extra=[])
    assert [c["id"] for c in task.reference] == ["r1", "r2", "r3", "r4"]
    assert [(c["id"], c["text"]) for c in task.predicted] == [("p1", "A is b.")]


def test_case_scores_and_their_undefined_reasons():
    scores = case_scores(
        {"supported": 3, "contradicted": 1, "predicted_undecidable": 1, "matched": 1, "missed": 1,
         "reference_undecidable": 0}
    )  # fmt: skip
    assert scores["claim_precision"]["value"] == 0.75
    assert scores["reference_recall"]["value"] == 0.5
    assert scores["claim_verification_coverage"]["value"] == pytest.approx(6 / 7)
    assert scores["f1"]["value"] == pytest.approx(2 * 0.75 * 0.5 / 1.25)
    none = case_scores(
        {"supported": 0, "contradicted": 0, "predicted_undecidable": 2, "matched": 0,
         "missed": 0, "reference_undecidable": 0}
    )  # fmt: skip
    assert none["claim_precision"]["value"] is None and none["f1"]["value"] is None
    assert none["claim_verification_coverage"]["value"] == 0.0


def test_pooled_scores_sum_the_counts_and_resample_cases():
    cases = [
        {"supported": 2, "contradicted": 0, "predicted_undecidable": 0, "matched": 1,
         "missed": 1, "reference_undecidable": 0},
        {"supported": 0, "contradicted": 2, "predicted_undecidable": 0, "matched": 1,
         "missed": 0, "reference_undecidable": 1},
    ]  # fmt: skip
    pooled = pooled_scores(cases, seed=4, n_resamples=400)
    assert pooled["claim_precision"]["value"] == 0.5
    assert pooled["reference_recall"]["value"] == pytest.approx(2 / 3)
    low, high = pooled["claim_precision"]["ci"]
    assert (low, high) == (0.0, 1.0)  # a resample of only one of the two cases is 0 or 1
    assert np.isclose(pooled["claim_verification_coverage"]["value"], 7 / 8)
    assert pooled_scores([])["f1"]["undefined_reason"] == "no case was compared semantically"
