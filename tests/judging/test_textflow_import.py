"""TextFlow import (FORMATS §1), and the acceptance path: import, then report, checked by hand."""

import json
import shutil

import pytest
from django.core.management import CommandError

from judging.models import Criterion, Judge, Verdict
from reviews.models import Item, ItemSource, ItemStatus
from tests.helpers import row_counts
from tests.judging.helpers import (
    EXAMPLES,
    import_items,
    report_json,
    row_for,
    write_jsonl,
)

pytestmark = pytest.mark.django_db
EXAMPLE = EXAMPLES / "textflow-evaluated.json"


def sample(key, qid, d1, d2, d3, final):
    return {
        "key": key,
        "question_id": qid,
        "question": f"Q{qid}?",
        "response": f"R{qid}",
        "answer": f"A{qid}",
        "decision1": d1,
        "decision2": d2,
        "decision3": d3,
        "final_decision": final,
    }


Y, N = "Correct", "Incorrect"  # in the comments below too
# Seven samples with known votes. flowA/6 is a three-way split (a tie after normalising:
# Correct, unparsed, Incorrect); flowA/7 gets tied human labels.
SMALL = {
    "0": sample("flowA", "1", Y, Y, Y, Y),
    "1": sample("flowA", "2", Y, Y, N, Y),
    "2": sample("flowA", "3", N, N, N, N),
    "3": sample("flowA", "4", N, N, Y, N),
    "4": sample("flowA", "5", Y, Y, Y, Y),
    "5": sample("flowA", "6", Y, "Maybe so", N, Y),
    "6": sample("flowA", "7", Y, Y, Y, Y),
}
HUMAN = {  # item -> (ana, ben)
    "flowA/1": (Y, Y),
    "flowA/2": (N, N),
    "flowA/3": (N, N),
    "flowA/4": (N, N),
    "flowA/5": (Y, Y),
    "flowA/6": (Y, Y),
    "flowA/7": (Y, N),
}


def human_labels_file(tmp_path):
    records = [
        {
            "type": "human_label",
            "item_id": item,
            "criterion": "correctness",
            "rater": rater,
            "label": label,
        }
        for item, labels in HUMAN.items()
        for rater, label in zip(("ana", "ben"), labels, strict=True)
    ]
    return write_jsonl(tmp_path / "humans.jsonl", records)


def test_example_file_imports_items_verdicts_and_flags(project):
    out = import_items(project, EXAMPLE, "--format", "textflow")
    assert "imported 30 items, 0 questions, 90 verdicts, 1 criterion, 0 errors" in out
    assert "5 split votes" in out and "1 three-way splits flagged ambiguous: keys 29" in out
    assert "key \"29\" (final 'Correct', majority none: a tie)" in out
    assert 'TextFlow accuracy (final_decision exactly "Correct"): 22/30' in out
    item = Item.objects.get(project=project, external_id="code90511/6")
    source = json.loads(EXAMPLE.read_text())["29"]
    assert (item.input, item.output, item.expected) == (
        source["question"],
        source["response"],
        source["answer"],
    )
    assert item.status == ItemStatus.RESOLVED  # no questions until send_to_humans asks
    flags = item.metadata["textflow"]
    assert flags["flowchart_key"] == "code90511" and flags["question_id"] == "6"
    assert flags["file_key"] == "29" and flags["variant"] == "upstream"
    assert flags["three_way_split"] and flags["split_vote"] and flags["final_decision_disagrees"]
    judge = Judge.objects.get(project=project)
    assert (judge.name, judge.temperature) == ("openai/gpt-4o", 0.2)
    verdicts = list(Verdict.objects.filter(item=item).order_by("sample"))
    assert [v.sample for v in verdicts] == [0, 1, 2]
    assert [v.label for v in verdicts] == ["Correct", "unparsed", "Incorrect"]
    assert verdicts[1].raw.startswith("The provided answer")
    criterion = Criterion.objects.get(project=project)
    assert (criterion.name, criterion.labels, criterion.positive_label) == (
        "correctness",
        ["Correct", "Incorrect"],
        "Correct",
    )


def test_reimport_is_idempotent(project):
    import_items(project, EXAMPLE, "--format", "textflow")
    before = row_counts()
    out = import_items(project, EXAMPLE, "--format", "textflow")
    assert "imported 30 items (30 unchanged)" in out
    assert row_counts() == before


def test_judge_option_names_the_model_group(project):
    import_items(project, EXAMPLE, "--format", "textflow", "--judge", "anthropic/claude-sonnet")
    assert [j.name for j in Judge.objects.filter(project=project)] == ["anthropic/claude-sonnet"]


def test_evidence_image_is_attached_when_present(project, tmp_path):
    (tmp_path / "images").mkdir()
    shutil.copy(EXAMPLES / "ticket-88.png", tmp_path / "images" / "flowA.png")
    path = tmp_path / "small.json"
    path.write_text(json.dumps(SMALL))
    import_items(project, path, "--format", "textflow")
    sources = ItemSource.objects.filter(item__project=project)
    assert sources.count() == 7 and {s.path for s in sources} == {"images/flowA.png"}
    assert len({s.document_id for s in sources}) == 1  # stored once


def test_derived_variant_gives_one_judge_per_named_model(project, tmp_path):
    record = {
        "key": "code7",
        "question_id": "2",
        "question": "Initial value?",
        "response": "0",
        "answers": ["0", "zero"],
        "decision1": {"verdict": "Correct", "explanation": "matches", "model": "openai/gpt-4o"},
        "decision2": {"verdict": "Correct", "explanation": "same", "model": "claude"},
        "decision3": {"verdict": "Incorrect", "explanation": "no", "model": "gemini"},
        "final_decision": "Correct",
    }
    path = tmp_path / "derived.json"
    path.write_text(json.dumps({"0": record}))
    out = import_items(project, path, "--format", "textflow")
    assert "derived variant" in out
    names = sorted(j.name for j in Judge.objects.filter(project=project))
    assert names == ["openai/gpt-4o", "unknown/claude", "unknown/gemini"]
    assert Item.objects.get(external_id="code7/2").expected == ["0", "zero"]
    assert Verdict.objects.get(judge__model="claude").explanation == "same"


def test_bad_final_decision_changes_nothing(project, tmp_path):
    bad = dict(SMALL)
    bad["1"] = sample("flowA", "2", Y, Y, N, N)  # the majority is Correct
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    before = row_counts()
    with pytest.raises(CommandError):
        import_items(project, path, "--format", "textflow")
    assert row_counts() == before


def test_example_file_report_has_rows_before_any_human_label(project):
    import_items(project, EXAMPLE, "--format", "textflow")
    report = report_json(project)
    row = row_for(report, "correctness", "openai/gpt-4o")
    assert (row["n"], row["n_judged"], row["n_human"]) == (0, 30, 0)
    assert row["cohen_kappa"]["value"] is None
    assert "n = 0" in row["cohen_kappa"]["undefined_reason"]
    # 21 of 30 samples have a Correct majority; key 29 is a tie (TextFlow's own 22/30 counts
    # it Correct because its final_decision says so).
    assert row["pass_rate_judged"]["value"] == pytest.approx(21 / 30)
    assert row["unparsed_samples"] == 1


def test_acceptance_small_file_with_human_labels(project, tmp_path):
    path = tmp_path / "small.json"
    path.write_text(json.dumps(SMALL))
    import_items(project, path, "--format", "textflow")
    out = import_items(project, human_labels_file(tmp_path))
    assert "14 human labels" in out

    report = report_json(project, "--criterion", "correctness")

    assert set(report) >= {"project", "split", "computed_at", "results", "human_human"}
    assert report["split"] == "all" and report["development_figures"] is True
    assert any("no split has been drawn" in note for note in report["notes"])
    row = row_for(report, "correctness", "openai/gpt-4o")
    # Judge majorities: 1 Y, 2 Y, 3 N, 4 N, 5 Y, 6 tie (Correct / unparsed / Incorrect), 7 Y.
    # Final human labels: 1 Y, 2 N, 3 N, 4 N, 5 Y, 6 Y, 7 none (ana Y vs ben N: a tie).
    # Paired items 1-5 (6: judge tie, excluded; 7: no final label):
    #                 judge Y  judge N
    #   human Y          2        0       (1, 5)
    #   human N          1        2       (2 | 3, 4)
    # n = 5, p_o = 4/5 = 0.8; rows (2, 3), columns (3, 2): p_e = (2*3 + 3*2)/25 = 0.48
    # kappa = (0.8 - 0.48) / (1 - 0.48) = 0.32 / 0.52 = 8/13
    # AC1: pi = ((2+3)/10, (3+2)/10) = (.5, .5); p_e = .5; AC1 = (0.8 - 0.5)/0.5 = 0.6
    # alpha (nominal, 10 values: 5 Y, 5 N; one disagreeing unit): 1 - 9 * 2 / (5*5*2) = 0.64
    # precision Y 2/3, N 2/2; recall Y 2/2, N 2/3; F1 Y = N = 0.8: macro P = R = 5/6, F1 0.8
    # pass_rate_judged: Correct majority on 1, 2, 5, 7 of 7 judged items = 4/7
    # pass_rate_human: Correct on 1, 5, 6 of 6 items with a final label = 1/2
    assert row["confusion_matrix"] == {"labels": [Y, N], "counts": [[2, 0], [1, 2]]}
    assert (row["n"], row["n_judged"], row["n_human"]) == (5, 7, 6)
    assert (row["ties_excluded"], row["human_ties_excluded"], row["unparsed_samples"]) == (1, 1, 1)
    assert row["observed_agreement"]["value"] == pytest.approx(0.8)
    assert row["expected_agreement"]["value"] == pytest.approx(0.48)
    assert row["cohen_kappa"]["value"] == pytest.approx(8 / 13)
    low, high = row["cohen_kappa"]["ci"]
    assert low <= 8 / 13 <= high
    assert row["gwet_ac1"]["value"] == pytest.approx(0.6)
    assert row["krippendorff_alpha"]["value"] == pytest.approx(0.64)
    assert row["accuracy"]["value"] == pytest.approx(0.8)
    assert row["precision_macro"]["value"] == pytest.approx(5 / 6)
    assert row["recall_macro"]["value"] == pytest.approx(5 / 6)
    assert row["f1_macro"]["value"] == pytest.approx(0.8)
    assert row["pass_rate_judged"]["value"] == pytest.approx(4 / 7)
    assert row["pass_rate_human"]["value"] == pytest.approx(0.5)
    assert row["weighted_kappa_linear"]["undefined_reason"].endswith("this criterion is nominal")
    assert row["bootstrap"]["n_resamples"] == 2000
    assert any("flowA/7" in note for note in report["notes"])

    # Human-human, ana vs ben over 7 items (rows ana, columns ben):
    #             ben Y  ben N
    #   ana Y       3      1      (1, 5, 6 | 7)
    #   ana N       0      3      (2, 3, 4)
    # p_o = 6/7; margins ana (4, 3), ben (3, 4): p_e = (12 + 12)/49; kappa = (42-24)/(49-24) = 18/25
    # Fleiss (m = 2): P = 6/7, p_C = p_I = 7/14: P_e = 0.5, kappa = (6/7 - .5)/.5 = 5/7
    # alpha: 14 values (7 Y, 7 N), one disagreeing unit: 1 - 13 * 2 / (7*7*2) = 72/98
    pair, overall = report["human_human"]
    assert pair["kind"] == "rater_pair" and pair["raters"] == ["ana", "ben"] and pair["n"] == 7
    assert pair["cohen_kappa"]["value"] == pytest.approx(18 / 25)
    assert overall["kind"] == "all_raters" and overall["n_items"] == 7
    assert overall["fleiss_kappa"]["value"] == pytest.approx(5 / 7)
    assert overall["krippendorff_alpha"]["value"] == pytest.approx(72 / 98)


def test_report_is_deterministic_for_a_seed(project, tmp_path):
    path = tmp_path / "small.json"
    path.write_text(json.dumps(SMALL))
    import_items(project, path, "--format", "textflow")
    import_items(project, human_labels_file(tmp_path))
    first, second = report_json(project), report_json(project)
    assert first["results"] == second["results"]
    assert first["human_human"] == second["human_human"]


def test_answers_only_file_gives_items_without_verdicts(project, tmp_path):
    record = {
        key: value
        for key, value in sample("flowB", "1", Y, Y, Y, Y).items()
        if not key.startswith(("decision", "final"))
    }
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"0": record}))
    import_items(project, path, "--format", "textflow")
    assert Item.objects.filter(project=project, external_id="flowB/1").exists()
    assert Verdict.objects.count() == 0 and Judge.objects.count() == 0


def test_derived_variant_without_model_names_gives_one_judge_per_position(project, tmp_path):
    record = {
        "key": "code7",
        "question_id": "2",
        "question": "Initial value?",
        "response": "0",
        "answers": ["0"],
        "decision1": {"verdict": "Correct"},
        "decision2": {"verdict": "Incorrect"},
        "decision3": {"verdict": "Correct"},
        "final_decision": "Correct",
    }
    path = tmp_path / "derived.json"
    path.write_text(json.dumps({"0": record}))
    out = import_items(project, path, "--format", "textflow")
    assert "one judge per decision position" in out
    assert sorted(j.name for j in Judge.objects.all()) == [
        "textflow/decision1",
        "textflow/decision2",
        "textflow/decision3",
    ]
