"""Position-swap consistency and model-balanced panel voting."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judging.metrics import (
    PanelVote,
    group_vote,
    majority_vote,
    panel_vote,
    position_swap_consistency,
    unanimous_vote,
)

FAST = settings(max_examples=60, deadline=None, database=None)


def test_position_swap_consistency_counts_only_pairs_judged_both_ways():
    original = ["A", "B", "tie", "A", None, "B"]
    swapped = ["A", "A", "tie", None, "B", "B"]  # winners name the ORIGINAL answers
    # pairs judged both ways: 0 (same), 1 (flip), 2 (same tie), 5 (same) -> 3 / 4
    assert position_swap_consistency(original, swapped).value == pytest.approx(0.75)


def test_position_swap_display_terms_are_mapped_back():
    original = ["A", "B", "tie", "A"]
    swapped_display = ["B", "A", "tie", "A"]  # slot names as displayed in swapped order
    result = position_swap_consistency(original, swapped_display, swapped_in_display_terms=True)
    assert result.value == pytest.approx(0.75)
    # a judge that always prefers the first slot is never consistent on non-ties
    always_first = position_swap_consistency(["A"] * 5, ["A"] * 5, swapped_in_display_terms=True)
    assert always_first.value == 0.0


def test_position_swap_undefined_and_validation():
    result = position_swap_consistency(["A", None], [None, "B"])
    assert not result.is_defined and "both display orders" in result.undefined_reason
    assert not position_swap_consistency([], []).is_defined
    with pytest.raises(ValueError):
        position_swap_consistency(["A"], ["A", "B"])


@FAST
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["A", "B", "tie", None]), st.sampled_from(["A", "B", "tie", None])
        ),
        max_size=30,
    )
)
def test_position_swap_matches_direct_count(pairs):
    both = [(x, y) for x, y in pairs if x is not None and y is not None]
    result = position_swap_consistency([x for x, _ in pairs], [y for _, y in pairs])
    if not both:
        assert result.undefined_reason
    else:
        assert result.value == pytest.approx(sum(x == y for x, y in both) / len(both))


def test_group_vote_majority_inside_group_and_abstain_on_tie():
    assert group_vote(["pass", "pass", "fail"]) == "pass"
    assert group_vote(["pass", "fail"]) is None
    assert group_vote([None, "fail", None]) == "fail"
    assert group_vote([]) is None


def test_model_balanced_majority():
    # model "big" has 5 samples but votes once: groups pass / fail / fail -> fail
    votes = {"big": ["pass"] * 5, "small": ["fail"], "mid": ["fail", "fail", "pass"]}
    result = majority_vote(votes)
    assert result == PanelVote(
        "fail", "decided", None, {"big": "pass", "small": "fail", "mid": "fail"}
    )
    assert result.is_decided
    # the same votes as (group, label) rows
    rows = [(group, label) for group, labels in votes.items() for label in labels]
    assert panel_vote(rows).label == "fail"


def test_ties_are_reported_never_broken():
    result = majority_vote({"m1": ["pass"], "m2": ["fail"]})
    assert result.status == "tie" and result.label is None
    assert set(result.tied) == {"pass", "fail"} and result.reason
    # a group tie is an abstention: the other groups decide
    abstain = majority_vote({"m1": ["pass", "fail"], "m2": ["fail"], "m3": ["fail", None]})
    assert abstain.label == "fail" and abstain.group_votes["m1"] is None
    every_group_abstains = majority_vote({"m1": ["pass", "fail"], "m2": ["x", "y"]})
    assert every_group_abstains.status == "no_votes" and every_group_abstains.reason


def test_unanimous():
    assert unanimous_vote({"m1": ["pass", "pass", "fail"], "m2": ["pass"]}).label == "pass"
    split = unanimous_vote({"m1": ["pass"], "m2": ["fail"]})
    assert split.status == "no_consensus" and "disagree" in split.reason
    abstained = unanimous_vote({"m1": ["pass"], "m2": ["pass", "fail"]})
    assert abstained.status == "no_consensus" and "abstained" in abstained.reason
    # a group whose samples are all missing does not vote at all
    assert unanimous_vote({"m1": ["pass"], "m2": [None, None]}).label == "pass"


def test_no_votes_and_bad_rule():
    assert panel_vote({}).status == "no_votes"
    assert panel_vote({"m1": [None]}, rule="unanimous").status == "no_votes"
    with pytest.raises(ValueError):
        panel_vote({"m1": ["x"]}, rule="plurality")


@FAST
@given(
    st.dictionaries(
        st.sampled_from(["m1", "m2", "m3", "m4"]),
        st.lists(st.sampled_from(["pass", "fail", None]), max_size=5),
    )
)
def test_majority_invariants(votes):
    result = majority_vote(votes)
    cast = [v for v in result.group_votes.values() if v is not None]
    if result.status == "decided":
        assert cast.count(result.label) > max(
            cast.count(o) for o in set(cast) - {result.label} or [None]
        )
    elif result.status == "tie":
        assert result.label is None and len(result.tied) >= 2
        assert len({cast.count(t) for t in result.tied}) == 1
    else:
        assert result.status == "no_votes" and not cast
