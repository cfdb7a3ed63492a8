"""Ordinal cut points (`thresholds`, `--collapse-at`) and label distributions (`label_counts`,
`final_label_counts`), checked against scikit-learn and collections.Counter."""

import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from judging.reports.agreement.build import agreement_report_build
from judging.reports.agreement.cuts import CollapseError, group_names
from judging.reports.agreement.inputs import CriterionInput, JudgeSamples

LABELS = ["0", "1", "2", "3"]
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")


def criterion(humans, judged, *, labels=LABELS, ordinal=True, raters=None):
    items = [f"i{n}" for n in range(len(humans))]
    return CriterionInput(
        name="relevance",
        version="1",
        labels=labels,
        ordinal=ordinal,
        final_labels=dict(zip(items, humans, strict=True)),
        rater_labels=raters or {},
        judges=[
            JudgeSamples(
                name="openai/gpt-4o",
                model_group="openai/gpt-4o",
                configuration="c",
                samples={item: [label] for item, label in zip(items, judged, strict=True)},
            )
        ],
    )


def build(*criteria, **kwargs):
    return agreement_report_build(
        project="p",
        split="all",
        computed_at="2026-01-01T00:00:00Z",
        criteria=criteria,
        n_resamples=20,
        **kwargs,
    )


pairs = st.integers(min_value=0, max_value=40).flatmap(
    lambda n: st.tuples(
        st.lists(st.sampled_from(LABELS), min_size=n, max_size=n),
        st.lists(st.sampled_from(LABELS), min_size=n, max_size=n),
    )
)


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(pairs)
def test_thresholds_agree_with_scikit_learn_on_binarised_labels(labels):
    humans, judged = labels
    (row,) = build(criterion(humans, judged))["results"]
    assert [t["at"] for t in row["thresholds"]] == LABELS[1:]
    for entry in row["thresholds"]:
        cut = LABELS.index(entry["at"])
        h = [int(LABELS.index(x) >= cut) for x in humans]
        j = [int(LABELS.index(x) >= cut) for x in judged]
        assert entry["n"] == len(humans)
        counts = entry["confusion_matrix"]["counts"]
        assert sum(map(sum, counts)) == len(humans)
        ours = entry["cohen_kappa"]["value"]
        if not humans:
            assert ours is None
            continue
        expected = cohen_kappa_score(h, j, labels=[0, 1])
        if math.isnan(expected):
            assert ours is None and entry["cohen_kappa"]["undefined_reason"]
        else:
            assert ours == pytest.approx(expected, abs=1e-9)
        agreement = sum(a == b for a, b in zip(h, j, strict=True)) / len(h)
        assert entry["observed_agreement"]["value"] == pytest.approx(agreement)


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(pairs)
def test_label_counts_agree_with_counter(labels):
    humans, judged = labels
    (row,) = build(criterion(humans, judged))["results"]
    assert list(row["label_counts"]["human"]) == LABELS  # every label, in order
    assert Counter(row["label_counts"]["human"]) == Counter(humans)
    assert Counter(row["label_counts"]["judge"]) == Counter(judged)
    assert sum(row["label_counts"]["judge"].values()) == row["n"]


def test_trec_style_cut_points_and_group_names():
    assert group_names(LABELS, "1") == ("0", "1–3")
    assert group_names(LABELS, "2") == ("0–1", "2–3")
    assert group_names(LABELS, "3") == ("0–2", "3")
    (row,) = build(criterion(["0", "1", "2", "3"], ["1", "1", "3", "2"]))["results"]
    at_2 = row["thresholds"][1]
    assert at_2["at"] == "2"
    assert at_2["confusion_matrix"] == {"labels": ["0–1", "2–3"], "counts": [[2, 0], [0, 2]]}
    assert at_2["cohen_kappa"]["value"] == 1.0
    assert at_2["cohen_kappa"]["ci"] is not None or at_2["cohen_kappa"]["undefined_reason"]


def test_nominal_criteria_have_no_thresholds():
    (row,) = build(criterion(["0", "1"], ["0", "1"], ordinal=False))["results"]
    assert row["thresholds"] == []
    assert row["collapsed_at"] is None


def test_final_label_counts_on_all_raters_entry():
    raters = {"ann": {"i0": "0", "i1": "2"}, "bob": {"i0": "0", "i1": "3"}}
    report = build(criterion(["0", "2", "3"], ["0", "2", "2"], raters=raters))
    (entry,) = [e for e in report["human_human"] if e["kind"] == "all_raters"]
    assert entry["final_label_counts"] == {"0": 1, "1": 0, "2": 1, "3": 1}


def test_collapse_reports_the_whole_criterion_as_two_groups():
    raters = {"ann": {"i0": "0", "i1": "2"}, "bob": {"i0": "1", "i1": "3"}}
    report = build(
        criterion(["0", "1", "2", "3"], ["1", "0", "3", "2"], raters=raters), collapse_at="2"
    )
    assert report["collapse_at"] == "2"
    (row,) = report["results"]
    assert row["labels"] == ["0–1", "2–3"]
    assert row["positive_label"] == "2–3"
    assert row["collapsed_at"] == "2"
    assert row["cohen_kappa"]["value"] == 1.0  # disagreements were all within a group
    assert row["label_counts"]["human"] == {"0–1": 2, "2–3": 2}
    (pair,) = [e for e in report["human_human"] if e["kind"] == "rater_pair"]
    assert pair["n"] == 2 and pair["cohen_kappa"]["value"] == 1.0


@pytest.mark.parametrize(
    ("at", "ordinal", "reason"),
    [("0", True, "first label"), ("9", True, "not a label"), ("2", False, "not ordinal")],
)
def test_collapse_refuses_a_cut_that_does_not_split(at, ordinal, reason):
    with pytest.raises(CollapseError, match=reason):
        build(criterion(["0"], ["0"], ordinal=ordinal), collapse_at=at)


@pytest.mark.django_db
def test_command_collapse_at(tmp_path, project):
    from django.core.management import CommandError

    from tests.judging.helpers import (
        criterion_record,
        human_record,
        import_items,
        item_record,
        report_json,
        verdict_record,
        write_jsonl,
    )

    records = [criterion_record(name="relevance", labels=LABELS, ordinal=True, positive="3")]
    for n, (human, judged) in enumerate([("0", "1"), ("2", "3"), ("3", "3"), ("1", "0")]):
        records += [
            item_record(f"i{n}"),
            human_record(f"i{n}", "ann", human, criterion="relevance"),
            verdict_record(f"i{n}", judged, criterion="relevance"),
        ]
    import_items(project, write_jsonl(tmp_path / "r.jsonl", records))
    report = report_json(
        project, "--split", "all", "--criterion", "relevance", "--collapse-at", "2"
    )
    (row,) = report["results"]
    assert row["collapsed_at"] == "2" and row["cohen_kappa"]["value"] == 1.0
    with pytest.raises(CommandError, match="needs --criterion"):
        report_json(project, "--split", "all", "--collapse-at", "2")
    with pytest.raises(CommandError, match="first label"):
        report_json(project, "--split", "all", "--criterion", "relevance", "--collapse-at", "0")
