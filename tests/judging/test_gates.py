"""The GO / HOLD rule, including critical slices (pure: no database)."""

from judging.gates import GO, HOLD, GateRule, ci_width_warning, evaluate, release_decision

RULE = GateRule(statistic="cohen_kappa", min_lower=0.6, min_n=50)


def row(criterion, n, value, low, high, judge="openai/gpt-4o", **extra):
    return {
        "criterion": criterion,
        "judge": judge,
        "n": n,
        "cohen_kappa": {"value": value, "ci": [low, high], "undefined_reason": None},
        **extra,
    }


def test_passes_with_enough_items_and_a_high_lower_bound():
    outcome = evaluate(RULE, row("clarity", 120, 0.78, 0.66, 0.88), critical=False)
    assert outcome.decision == GO and outcome.reasons == ()


def test_holds_when_n_is_too_small_even_with_a_high_kappa():
    outcome = evaluate(RULE, row("clarity", 30, 0.9, 0.75, 0.98), critical=False)
    assert outcome.decision == HOLD
    assert outcome.reasons == ("held-out n = 30 < 50",)


def test_holds_when_the_lower_bound_misses_the_threshold():
    outcome = evaluate(RULE, row("clarity", 80, 0.66, 0.52, 0.79), critical=False)
    assert outcome.reasons == ("Cohen's κ lower 95% bound 0.52 < 0.60",)


def test_undefined_statistic_holds_with_its_reason():
    undefined = {
        "criterion": "c",
        "judge": "j",
        "n": 60,
        "cohen_kappa": {"value": None, "ci": None, "undefined_reason": "chance agreement is 1"},
    }
    assert evaluate(RULE, undefined, critical=False).reasons == (
        "Cohen's κ undefined (chance agreement is 1)",
    )


def test_critical_criterion_must_pass_on_every_critical_slice():
    aggregate = row("faithful", 200, 0.74, 0.66, 0.81)
    slices = {
        "safety-sensitive": row("faithful", 60, 0.5, 0.31, 0.66),
        "long": row("faithful", 70, 0.8, 0.69, 0.9),
    }
    critical = evaluate(RULE, aggregate, critical=True, critical_slice_rows=slices)
    assert critical.decision == HOLD
    assert critical.failing_slices == ("safety-sensitive",)
    assert critical.reasons == ("slice safety-sensitive: Cohen's κ lower 95% bound 0.31 < 0.60",)
    # The same numbers on a non-critical criterion pass: slices only gate critical criteria.
    assert evaluate(RULE, aggregate, critical=False, critical_slice_rows=slices).decision == GO


def test_product_description_example_is_a_hold_although_the_pass_count_improved():
    """The book's product-description case: the new prompt passes more descriptions overall
    (pass rate 0.74 -> 0.82), but on the critical `faithful` criterion the judge cannot be
    trusted on safety-sensitive products, so the release holds."""
    before = {
        "faithful": row("faithful", 150, 0.71, 0.62, 0.79, pass_rate_judged={"value": 0.74}),
        "clarity": row("clarity", 150, 0.69, 0.61, 0.77, pass_rate_judged={"value": 0.70}),
    }
    after = {
        "faithful": row("faithful", 150, 0.72, 0.63, 0.8, pass_rate_judged={"value": 0.82}),
        "clarity": row("clarity", 150, 0.73, 0.65, 0.8, pass_rate_judged={"value": 0.78}),
    }
    assert (
        after["faithful"]["pass_rate_judged"]["value"]
        > before["faithful"]["pass_rate_judged"]["value"]
    )
    critical_slices = {"safety-sensitive": row("faithful", 55, 0.41, 0.18, 0.62)}
    outcomes = [
        evaluate(RULE, after["faithful"], critical=True, critical_slice_rows=critical_slices),
        evaluate(RULE, after["clarity"], critical=False),
    ]
    decision = release_decision("openai/gpt-4o", outcomes)
    assert decision.decision == HOLD
    assert decision.failing_criteria == ("faithful",)
    assert decision.failing_slices == ("safety-sensitive",)


def test_release_is_go_only_when_every_criterion_passes_and_holds_with_nothing_measured():
    passing = [evaluate(RULE, row("a", 90, 0.8, 0.7, 0.9), critical=True, critical_slice_rows={})]
    assert release_decision("j", passing).decision == GO
    assert release_decision("j", []).decision == HOLD


def test_wide_interval_warns_with_the_items_needed():
    warning = ci_width_warning(RULE, row("c", 50, 0.7, 0.45, 0.9))
    assert (
        warning == "CI width 0.45 > 0.30: held-out n = 50 is too small (about 113 items would do)"
    )
    assert ci_width_warning(RULE, row("c", 400, 0.7, 0.62, 0.78)) is None
