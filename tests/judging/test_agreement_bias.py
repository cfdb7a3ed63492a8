"""Judge bias checks in the agreement report: length bias (pass/fail) and first-position win
rate (pairwise), from the pure builder and from imported items."""

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from judging.metrics.length_bias import length_bias
from judging.reports.agreement.bias import NOT_TWO_LABEL
from judging.reports.agreement.build import agreement_report_build
from judging.reports.agreement.inputs import CriterionInput, JudgeSamples
from tests.judging.helpers import (
    criterion_record,
    human_record,
    import_items,
    item_record,
    report_json,
    row_for,
    verdict_record,
    write_jsonl,
)


def build(criterion):
    (row,) = agreement_report_build(
        project="p",
        split="all",
        computed_at="2026-01-01T00:00:00Z",
        criteria=[criterion],
        n_resamples=20,
    )["results"]
    return row


def test_first_position_win_rate_counts_decided_samples_with_a_wilson_interval():
    criterion = CriterionInput(
        name="preference",
        version="1",
        labels=["A", "B", "tie"],
        pairwise=True,
        judges=[
            JudgeSamples(
                name="x/y",
                model_group="x",
                configuration="c",
                samples={"i1": ["A", "A"], "i2": ["A", "B"], "i3": ["B", "tie"]},
                orders={"i1": ["AB", "BA"], "i2": ["AB", "BA"], "i3": ["AB", "BA"]},
            )
        ],
    )
    row = build(criterion)
    # First shown won: i1 AB, i2 AB, i2 BA (B shown first); lost: i1 BA, i3 AB; the tie is out.
    stat = row["first_position_win_rate"]
    assert stat["value"] == pytest.approx(3 / 5)
    assert stat["ci"] == pytest.approx(proportion_confint(3, 5, method="wilson"), abs=1e-12)
    assert row["length_bias"] == {"undefined_reason": NOT_TWO_LABEL}


def test_length_bias_row_fits_the_paired_items_lengths():
    rng = np.random.default_rng(7)
    n = 80
    lengths = rng.integers(10, 3000, size=n).tolist()
    human = (rng.random(n) < 0.5).tolist()
    judge = (rng.random(n) < 1 / (1 + np.exp(1 - np.array(lengths) / 1000))).tolist()
    names = [f"i{k}" for k in range(n)]
    criterion = CriterionInput(
        name="faithful",
        version="1",
        labels=["pass", "fail"],
        positive_label="pass",
        final_labels={i: "pass" if h else "fail" for i, h in zip(names, human, strict=True)},
        output_chars=dict(zip(names, lengths, strict=True)),
        judges=[
            JudgeSamples(
                name="x/y",
                model_group="x",
                configuration="c",
                samples={i: ["pass" if j else "fail"] for i, j in zip(names, judge, strict=True)},
            )
        ],
    )
    row = build(criterion)
    expected = length_bias(lengths, judge, human)
    got = row["length_bias"]
    assert got["n"] == n and got["quintiles"] == expected["quintiles"]
    for key in ("slope_per_1000_chars", "se", "p_value"):  # items in another order
        assert got[key] == pytest.approx(expected[key], rel=1e-9)
    assert row["first_position_win_rate"]["undefined_reason"].endswith("pairwise criteria only")


@pytest.mark.django_db
def test_report_measures_output_lengths_of_labelled_items(project, tmp_path):
    records = [criterion_record()]
    for k in range(12):
        # Longer outputs pass with the judge more often than with people (not separable).
        output = "x" * (100 * (k + 1)) if k != 3 else {"text": "y" * 40}
        records.append(item_record(f"i{k}", output=output))
        records.append(verdict_record(f"i{k}", "pass" if k in (1, 2, 5, 7, 8, 10, 11) else "fail"))
        records.append(human_record(f"i{k}", "ann", "pass" if k % 2 else "fail"))
    records.append(item_record("unlabelled", output="z" * 5000))
    import_items(project, write_jsonl(tmp_path / "bias.jsonl", records))
    row = row_for(report_json(project, "--split", "all"), "faithful", "openai/gpt-4o")
    bias = row["length_bias"]
    assert bias["n"] == 12  # the unlabelled item is not measured
    # A dict output counts as its JSON text: {"text": "yyyy…"} is 12 + 40 characters.
    assert [(q["min_chars"], q["max_chars"], q["n"]) for q in bias["quintiles"]] == [
        (52, 200, 3),
        (300, 600, 3),
        (700, 800, 2),
        (900, 1000, 2),
        (1100, 1200, 2),
    ]
    assert bias["slope_per_1000_chars"] > 0 and 0 < bias["p_value"] < 1
