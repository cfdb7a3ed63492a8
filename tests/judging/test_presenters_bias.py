"""The criterion page's judge bias checks, from snapshot rows (no database)."""

from judging.presenters import bias_figures


def _quintile(lo, hi, diff):
    return {"min_chars": lo, "max_chars": hi, "n": 4, "difference": diff}


def test_length_bias_gives_slope_p_value_and_a_quintile_chart():
    bias = {
        "n": 20,
        "slope_per_1000_chars": 0.8,
        "se": 0.2,
        "p_value": 3e-5,
        "quintiles": [_quintile(10, 900, -0.25), _quintile(950, 2100, 0.5)],
        "undefined_reason": None,
    }
    criterion = {
        "name": "faithful",
        "pairwise": False,
        "rows": [{"judge": "x/y", "length_bias": bias}],
    }
    (entry,) = bias_figures(criterion)
    assert entry["judge"] == "x/y" and entry["p_text"] == "< 0.0001"
    svg = str(entry["svg"])
    assert "10–900 chars: -0.25 (n 4)" in svg and "950–2,100 chars: +0.50 (n 4)" in svg


def test_pairwise_rows_chart_the_first_position_win_rate():
    first = {"value": 0.7, "ci": [0.55, 0.82], "undefined_reason": None}
    criterion = {
        "name": "preference",
        "pairwise": True,
        "rows": [{"judge": "x/y", "label": "x/y@2", "first_position_win_rate": first}],
    }
    (entry,) = bias_figures(criterion)
    assert entry["judge"] == "x/y@2" and entry["first_position"] is first
    assert "0.700, 95% CI 0.550 to 0.820" in str(entry["svg"])


def test_snapshots_from_before_the_checks_and_other_criteria_show_nothing():
    old = {"name": "faithful", "pairwise": False, "rows": [{"judge": "x/y"}]}
    nominal = {
        "name": "tone",
        "pairwise": False,
        "rows": [{"judge": "x/y", "length_bias": {"undefined_reason": "pass/fail only"}}],
    }
    assert bias_figures(old) == [] and bias_figures(nominal) == []
