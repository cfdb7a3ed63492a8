"""The agreement report: the pure builder's rules, and the service and command around it."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from judging.metrics import cohen_kappa, confusion_matrix
from judging.reports.agreement.build import NO_PAIRS as NO_PAIRS_REASON
from judging.reports.agreement.build import agreement_report_build
from judging.reports.agreement.inputs import CriterionInput, JudgeSamples, PanelInput
from judging.reports.agreement.markdown import render_markdown
from judging.services.calibration.splits import split_draw
from tests.judging.helpers import (
    EXAMPLES,
    criterion_record,
    human_record,
    import_items,
    item_record,
    report_json,
    row_for,
    verdict_record,
    write_jsonl,
)

TOP_LEVEL = {"project", "split", "computed_at", "results", "human_human"}


def judge(name, samples, group=None, orders=None):
    return JudgeSamples(
        name=name,
        model_group=group or name,
        configuration=f"{name}|t=0",
        samples=samples,
        orders=orders or {},
    )


def version(name, number, model, samples):
    """A judge version run from Evalsite (`NAME@number`) writing as `model`."""
    return JudgeSamples(
        name=model,
        model_group=model,
        configuration=f"{model}|t=0|p={name}{number}",
        samples=samples,
        judge_name=name,
        judge_version=number,
    )


def build(*criteria, split="held_out"):
    return agreement_report_build(
        project="p",
        split=split,
        computed_at="2026-01-01T00:00:00Z",
        criteria=criteria,
        n_resamples=50,
    )


def by_judge(report):
    return {row["judge"]: row for row in report["results"]}


def test_a_judge_with_verdicts_but_no_human_label_still_gets_a_row():
    criterion = CriterionInput(
        name="c",
        version="1",
        labels=["pass", "fail"],
        positive_label="pass",
        judges=[judge("x/y", {"i1": ["pass"], "i2": ["fail"], "i3": ["pass"]})],
    )
    (row,) = build(criterion)["results"]
    assert (row["n"], row["n_judged"], row["n_human"]) == (0, 3, 0)
    for key in ("cohen_kappa", "observed_agreement", "gwet_ac1", "krippendorff_alpha", "f1_macro"):
        assert row[key]["value"] is None and "(n = 0)" in row[key]["undefined_reason"]
    assert row["pass_rate_judged"]["value"] == pytest.approx(2 / 3)
    assert row["pass_rate_human"]["undefined_reason"] == "no item has a final human label"


def test_sample_ties_are_left_out_and_counted_and_a_configured_panel_votes_per_model_group():
    final = {"i1": "pass", "i2": "fail", "i3": "pass"}
    judges = [
        judge("g1/m", {"i1": ["pass", "pass", "fail"], "i2": ["fail"], "i3": ["pass", "fail"]}),
        judge("g2/m", {"i1": ["fail"], "i2": ["fail"], "i3": ["pass"]}),
        judge("g3/m", {"i1": ["pass"], "i2": ["pass"], "i3": ["unparsed", "pass"]}),
    ]
    criterion = CriterionInput(
        name="c",
        version="1",
        labels=["pass", "fail"],
        positive_label="pass",
        final_labels=final,
        judges=judges,
        panels=[PanelInput(name="trio", rule="majority", members=judges)],
    )
    rows = by_judge(build(criterion))
    assert (rows["g1/m"]["n"], rows["g1/m"]["ties_excluded"]) == (2, 1)
    assert rows["g3/m"]["unparsed_samples"] == 1
    # Panel: i1 pass (g1 pass, g2 fail, g3 pass); i2 fail (fail, fail, pass);
    # i3 pass (g1 abstains on its tie, g2 pass, g3 pass): all three match the humans.
    panel = rows["panel:trio"]
    assert panel["n"] == 3 and panel["ties_excluded"] == 0
    assert panel["model_groups"] == ["g1/m", "g2/m", "g3/m"]
    assert panel["confusion_matrix"]["counts"] == [[2, 0], [0, 1]]
    assert panel["cohen_kappa"]["value"] == pytest.approx(1.0)
    assert (panel["judge_name"], panel["judge_version"], panel["judge_ref"]) == (
        None,
        None,
        "panel:trio",
    )
    assert panel["panel"]["rule"] == "majority"
    assert [m["ref"] for m in panel["panel"]["members"]] == ["g1/m", "g2/m", "g3/m"]
    assert rows["g1/m"]["panel"] is None


def test_no_implicit_panel_however_many_model_groups_judged():
    criterion = CriterionInput(
        name="c",
        version="1",
        labels=["pass", "fail"],
        judges=[judge("a/m", {"i1": ["pass"]}), judge("b/m", {"i1": ["fail"]})],
    )
    assert [row["judge"] for row in build(criterion)["results"]] == ["a/m", "b/m"]


def test_a_panel_names_per_member_the_items_it_did_not_judge():
    """A member that never judged an item is reported, not folded silently into "undecided":
    i3 and i4 were judged by v1 only, so v2 misses them and they tie (one group each)."""
    v1 = version("j", 1, "a/m", {"i1": ["pass"], "i2": ["fail"], "i3": ["pass"], "i4": ["fail"]})
    v2 = version("j", 2, "b/m", {"i1": ["pass"], "i2": ["pass"]})
    criterion = CriterionInput(
        name="c",
        version="1",
        labels=["pass", "fail"],
        final_labels={"i1": "pass", "i2": "fail", "i3": "pass", "i4": "fail"},
        judges=[v1, v2],
        panels=[PanelInput(name="p", rule="unanimous", members=[v1, v2])],
    )
    panel = by_judge(build(criterion))["panel:p"]
    members = {m["ref"]: m for m in panel["panel"]["members"]}
    assert members["j@1"] | {"missing_items": None} == {
        "ref": "j@1",
        "judge": "a/m",
        "judge_name": "j",
        "judge_version": 1,
        "n_judged": 4,
        "missing": 0,
        "missing_items": None,
    }
    assert (members["j@2"]["missing"], members["j@2"]["missing_items"]) == (2, ["i3", "i4"])
    # i1 decided (both pass), i2 no consensus; i3 and i4 decided by the only member that judged.
    assert (panel["n"], panel["ties_excluded"], panel["n_judged"]) == (3, 1, 4)


def test_two_versions_of_one_judge_are_two_rows_with_their_name_and_number():
    criterion = CriterionInput(
        name="c",
        version="1",
        labels=["pass", "fail"],
        final_labels={"i1": "pass"},
        judges=[
            version("stub-judge", 2, "openai-compatible/stub", {"i1": ["fail"]}),
            version("stub-judge", 1, "openai-compatible/stub", {"i1": ["pass"]}),
            judge("imported/m", {"i1": ["pass"]}),
        ],
    )
    rows = build(criterion)["results"]
    assert [(r["judge"], r["judge_name"], r["judge_version"], r["judge_ref"]) for r in rows] == [
        ("imported/m", None, None, "imported/m"),
        ("openai-compatible/stub", "stub-judge", 1, "stub-judge@1"),
        ("openai-compatible/stub", "stub-judge", 2, "stub-judge@2"),
    ]
    assert [r["observed_agreement"]["value"] for r in rows] == [1.0, 1.0, 0.0]


def test_ordinal_criteria_get_weighted_kappa_and_ordinal_alpha():
    humans = {"i1": "1", "i2": "2", "i3": "3", "i4": "3", "i5": "1"}
    judged = {"i1": ["1"], "i2": ["3"], "i3": ["3"], "i4": ["2"], "i5": ["2"]}
    criterion = CriterionInput(
        name="clarity",
        version="1",
        labels=["1", "2", "3"],
        ordinal=True,
        final_labels=humans,
        judges=[judge("x/y", judged)],
    )
    (row,) = build(criterion)["results"]
    items = sorted(humans)
    table = confusion_matrix(
        [humans[i] for i in items], [judged[i][0] for i in items], ["1", "2", "3"]
    )
    assert row["weighted_kappa_linear"]["value"] == pytest.approx(
        cohen_kappa(table, "linear").value
    )
    assert row["weighted_kappa_quadratic"]["value"] == pytest.approx(
        cohen_kappa(table, "quadratic").value
    )
    assert row["krippendorff_level"] == "ordinal"
    assert row["pass_rate_judged"]["undefined_reason"] == "the criterion has no positive label"


def test_pairwise_rows_report_position_consistency():
    criterion = CriterionInput(
        name="preference",
        version="1",
        labels=["A", "B", "tie"],
        pairwise=True,
        judges=[
            judge(
                "x/y",
                {"i1": ["A", "A"], "i2": ["A", "B"], "i3": ["B"]},
                orders={"i1": ["AB", "BA"], "i2": ["AB", "BA"], "i3": ["AB"]},
            )
        ],
    )
    (row,) = build(criterion)["results"]
    assert row["position_consistency"]["value"] == pytest.approx(0.5)  # i1 same, i2 flipped


def test_split_labels_say_which_figures_are_development_figures():
    held_out, calibration = build(split="held_out"), build(split="calibration")
    assert held_out["development_figures"] is False
    assert calibration["development_figures"] is True
    assert calibration["split_label"].startswith("development figures")
    assert "DEVELOPMENT FIGURES" in render_markdown(calibration)
    assert "DEVELOPMENT FIGURES" not in render_markdown(held_out)
    assert set(held_out) >= TOP_LEVEL


@pytest.mark.django_db
def test_calibration_report_is_labelled_and_counts_only_calibration_items(project, tmp_path):
    import_items(project, EXAMPLES / "judging.jsonl")
    split_draw(actor=None, project=project, seed=11)
    report = report_json(project, "--split", "calibration", "--criterion", "faithful")
    assert report["split"] == "calibration" and report["development_figures"] is True
    assert "development figures" in report["split_label"]
    row = row_for(report, "faithful", "openai/gpt-4o")
    # Strata: 3 safety-sensitive items -> 2 held out; 9 general -> 5 held out (halves round up).
    assert row["n_judged"] == report["split_draw"]["calibration_items"] == 5
    held_out = report_json(project, "--criterion", "faithful")
    assert held_out["split"] == "held_out" and held_out["development_figures"] is False
    assert row_for(held_out, "faithful", "openai/gpt-4o")["n_judged"] == 7


@pytest.mark.django_db
def test_asking_for_a_split_before_one_is_drawn_is_an_error(project):
    with pytest.raises(CommandError, match="no split has been drawn"):
        report_json(project, "--split", "held_out")


@pytest.mark.django_db
def test_unknown_criterion_is_an_error(project):
    with pytest.raises(CommandError, match="no criterion 'ghost'"):
        report_json(project, "--criterion", "ghost")


@pytest.mark.django_db
def test_markdown_report_has_a_table_per_criterion(project, tmp_path):
    path = write_jsonl(
        tmp_path / "r.jsonl",
        [
            criterion_record(),
            item_record("i1"),
            item_record("i2"),
            verdict_record("i1", "pass"),
            verdict_record("i2", "fail"),
            human_record("i1", "ana", "pass"),
            human_record("i2", "ana", "pass"),
        ],
    )
    import_items(project, path)
    out = StringIO()
    call_command("agreement_report", "--project", project.slug, "--format", "markdown", stdout=out)
    text = out.getvalue()
    assert "## faithful (version 1)" in text
    assert "| openai/gpt-4o | 2 | 0 |" in text
    assert "| human \\ judge | pass | fail |" in text


@pytest.mark.django_db
def test_json_output_is_plain_json_with_stable_keys(project):
    import_items(project, EXAMPLES / "judging.jsonl")
    out = StringIO()
    call_command("agreement_report", "--project", project.slug, "--format", "json", stdout=out)
    report = json.loads(out.getvalue())
    assert set(report) == TOP_LEVEL | {
        "split_label",
        "development_figures",
        "split_draw",
        "notes",
        "collapse_at",
    }
    keys = {frozenset(row) for row in report["results"]}
    assert len(keys) == 1  # every row has the same keys, pairwise or not


PER_LABEL_KEYS = [
    f"{measure}_{average}"
    for average in ("macro", "micro", "weighted")
    for measure in ("precision", "recall", "f1")
]


def _sklearn(human, judged, labels, average):
    import warnings

    import numpy as np
    from sklearn.metrics import precision_recall_fscore_support

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return precision_recall_fscore_support(
            human, judged, labels=labels, average=average, zero_division=np.nan
        )


def _assert_stat(stat, expected):
    import math

    if math.isnan(expected):
        assert stat["value"] is None and stat["undefined_reason"]
    else:
        assert stat["value"] == pytest.approx(expected, abs=1e-12)
        assert stat["undefined_reason"] is None


@pytest.mark.django_db
def test_per_label_micro_and_weighted_figures_match_scikit_learn(project, tmp_path):
    """Four labels, one never predicted by the judge and one never given by people: the command's
    JSON per_label and averages equal scikit-learn's with zero_division=nan (undefined = null)."""
    labels = ["good", "ok", "bad", "ugly"]
    human = ["good", "good", "ok", "ok", "ok", "bad", "bad", "good", "ok", "bad"]
    judged = ["good", "ok", "ok", "ok", "good", "bad", "good", "good", "ok", "ok"]
    records = [criterion_record(labels=labels, positive="good")]
    for n, (h, j) in enumerate(zip(human, judged, strict=True)):
        records += [item_record(f"i{n}"), human_record(f"i{n}", "ana", h)]
        records.append(verdict_record(f"i{n}", j))
    import_items(project, write_jsonl(tmp_path / "r.jsonl", records))
    row = row_for(report_json(project, "--split", "all"), "faithful", "openai/gpt-4o")

    precision, recall, f1, support = _sklearn(human, judged, labels, None)
    assert list(row["per_label"]) == labels
    for i, label in enumerate(labels):
        scores = row["per_label"][label]
        assert scores["support"] == support[i]
        for key, expected in (("precision", precision), ("recall", recall), ("f1", f1)):
            _assert_stat(scores[key], expected[i])
    assert row["per_label"]["ugly"]["recall"]["undefined_reason"] == (
        "class 'ugly' has no reference items (support 0)"
    )
    for average in ("macro", "micro", "weighted"):
        expected = _sklearn(human, judged, labels, average)[:3]
        for measure, value in zip(("precision", "recall", "f1"), expected, strict=True):
            _assert_stat(row[f"{measure}_{average}"], value)


def test_a_row_without_paired_items_has_every_per_label_figure_null_with_the_reason():
    criterion = CriterionInput(
        name="faithful",
        version="1",
        labels=("pass", "fail"),
        positive_label="pass",
        final_labels={},
        judges=[judge("j", {"i1": ["pass"]})],
    )
    (row,) = build(criterion)["results"]
    for key in PER_LABEL_KEYS:
        assert row[key] == {"value": None, "ci": None, "undefined_reason": NO_PAIRS_REASON}
    for scores in row["per_label"].values():
        assert scores["support"] == 0
        assert scores["f1"]["undefined_reason"] == NO_PAIRS_REASON


def test_markdown_has_the_per_label_table_with_each_average_named():
    criterion = CriterionInput(
        name="faithful",
        version="1",
        labels=("pass", "fail"),
        positive_label="pass",
        final_labels={"i1": "pass", "i2": "pass"},
        judges=[judge("j", {"i1": ["pass"], "i2": ["pass"]})],
    )
    text = render_markdown(build(criterion))
    assert "| pass | 1.000 | 1.000 | 1.000 | 2 |" in text
    assert "| fail | undefined | undefined | undefined | 0 |" in text
    assert "| *weighted average* | 1.000 | 1.000 | 1.000 | 2 |" in text
    assert "- undefined: class 'fail' was never predicted (tp + fp = 0)" in text
