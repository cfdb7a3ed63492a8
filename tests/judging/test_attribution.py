"""Failure attribution (the visual_evals rule) on hand-made pipelines."""

import pytest

from judging.reports.attribution import (
    CURRENT_STAGE,
    FAIL,
    INDETERMINATE,
    PASS,
    UNDECIDABLE,
    UPSTREAM,
    UPSTREAM_OR_COMBINED,
    Stage,
    attribute,
)


def invoice_then_total(extraction: str, total: str):
    return attribute(
        {"invoice_extraction": Stage(extraction), "total": Stage(total, ["invoice_extraction"])}
    )


@pytest.mark.parametrize(
    ("extraction", "total", "extraction_context", "total_context"),
    [
        (PASS, PASS, None, None),
        (PASS, FAIL, None, CURRENT_STAGE),
        (FAIL, PASS, CURRENT_STAGE, UPSTREAM),
        (FAIL, FAIL, CURRENT_STAGE, UPSTREAM_OR_COMBINED),
        (UNDECIDABLE, FAIL, None, INDETERMINATE),
        (UNDECIDABLE, PASS, None, INDETERMINATE),
    ],
)
def test_invoice_then_total(extraction, total, extraction_context, total_context):
    result = invoice_then_total(extraction, total)
    assert result["invoice_extraction"].failure_context == extraction_context
    assert result["total"].failure_context == total_context
    assert result["total"].upstream == (("invoice_extraction", extraction),)
    assert result["invoice_extraction"].upstream == ()


def test_missing_upstream_stage_is_indeterminate():
    result = attribute({"total": Stage(FAIL, ["invoice_extraction"])})
    assert result["total"].failure_context == INDETERMINATE
    assert result["total"].upstream == (("invoice_extraction", "missing"),)


def test_upstream_is_transitive_nearest_first():
    result = attribute(
        {
            "ocr": Stage(FAIL),
            "extract": Stage(PASS, ["ocr"]),
            "total": Stage(FAIL, ["extract"]),
        }
    )
    assert result["total"].upstream == (("extract", PASS), ("ocr", FAIL))
    # A failure two stages up still explains the last stage's failure.
    assert result["total"].failure_context == UPSTREAM_OR_COMBINED
    assert result["extract"].failure_context == UPSTREAM


def test_diamond_counts_each_upstream_once():
    result = attribute(
        {
            "a": Stage(PASS),
            "b": Stage(PASS, ["a"]),
            "c": Stage(PASS, ["a"]),
            "d": Stage(FAIL, ["b", "c"]),
        }
    )
    assert [s for s, _ in result["d"].upstream] == ["b", "c", "a"]
    assert result["d"].failure_context == CURRENT_STAGE
