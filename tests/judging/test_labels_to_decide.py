"""The dashboard's "label N more to decide": the whole held-out set and each failing critical
slice, from the snapshot's rows (judging/presenters.py)."""

from judging.presenters import labels_to_decide

GATE = {"statistic": "cohen_kappa", "min_lower": 0.6, "min_n": 50}


def _row(kappa, low, n, decision="HOLD", failing=()):
    return {
        "judge_ref": "openai/gpt-4o",
        "judge_configurations": ["c"],
        "n": n,
        "n_judged": n + 4,
        "cohen_kappa": {"value": kappa, "ci": [low, 2 * kappa - low]},
        "gate": {"decision": decision, "failing_slices": list(failing)},
    }


def test_the_held_set_and_each_failing_slice_get_their_number():
    row = _row(0.70, 0.58, 100, failing=["safety"])
    criterion = {
        "gate": GATE,
        "slices": {"safety": [_row(0.9, 0.7, 20, decision=None)], "other": [_row(0.1, 0, 9)]},
    }
    whole, safety = labels_to_decide(row, criterion)
    assert (whole["where"], whole["total"], whole["more"]) == ("", 144, 44)
    assert (safety["where"], safety["more"]) == ("slice safety", 30)  # the gate's minimum n
    assert safety["judged"] == 24
    assert "1/sqrt(n)" in whole["method"]


def test_a_passing_set_is_not_named_and_kappa_under_the_gate_has_no_number():
    passing = _row(0.95, 0.9, 80, failing=["safety"])
    criterion = {"gate": GATE, "slices": {"safety": [_row(0.5, 0.2, 60)]}}
    (safety,) = labels_to_decide(passing, criterion)
    assert (safety["where"], safety["total"], safety["more"]) == ("slice safety", None, None)


def test_nothing_for_a_go_or_another_statistic():
    assert labels_to_decide(_row(0.9, 0.8, 80, decision="GO"), {"gate": GATE}) == []
    other = {"gate": {**GATE, "statistic": "gwet_ac1"}}
    assert labels_to_decide(_row(0.7, 0.58, 100), other) == []
