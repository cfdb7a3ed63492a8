"""Deterministic baseline judges: each kind on hand-made pairs, the oracle libraries, and the
command writing verdicts that the agreement report puts beside an LLM judge."""

from io import StringIO

import pytest
import sacrebleu
from django.core.management import CommandError, call_command
from rouge_score import rouge_scorer

from judging.models import Verdict
from judging.services.runs.baselines import Baseline, BaselineError, judge
from tests.judging.helpers import (
    criterion_record,
    human_record,
    import_items,
    item_record,
    report_json,
    verdict_record,
    write_jsonl,
)


@pytest.mark.parametrize(
    ("kind", "output", "reference", "passed"),
    [
        ("exact", "Paris", "Paris", True),
        ("exact", "paris", "Paris", False),
        ("exact", 1, 1.0, False),
        ("exact", {"a": [1, 2]}, {"a": [1, 2]}, True),
        ("normalised", "  PARIS ", "paris", True),
        ("normalised", "1,200.00", 1200, True),
        ("normalised", "Paris", "Lyon", False),
    ],
)
def test_exact_and_normalised(kind, output, reference, passed):
    outcome = judge(Baseline(kind), output, reference)
    assert outcome.passed is passed
    assert outcome.score is None


@pytest.mark.parametrize(
    ("output", "reference", "rel_tol", "passed"),
    [
        ("1,000", 1005, 0.01, True),
        ("1,000", 1020, 0.01, False),
        ("1000.0", 1000, 0.0, True),
        ("-3.5", "-3.50", 0.0, True),
        ("about 1000", 1000, 0.5, False),
        (0, 0, 0.1, True),
    ],
)
def test_numeric_relative_tolerance(output, reference, rel_tol, passed):
    assert judge(Baseline("numeric", rel_tol=rel_tol), output, reference).passed is passed


def test_numeric_names_what_is_not_a_number():
    assert judge(Baseline("numeric"), "n/a", 3).explanation == "the output is not a number"


def test_bleu_matches_sacrebleu_and_threshold_sets_the_label():
    output, reference = "the cat is on the mat today", "the cat sat on the mat today"
    expected = sacrebleu.sentence_bleu(output, [reference]).score / 100
    low = judge(Baseline("bleu", threshold=expected - 0.01), output, reference)
    high = judge(Baseline("bleu", threshold=expected + 0.01), output, reference)
    assert low.score == pytest.approx(expected) and low.passed
    assert high.score == pytest.approx(expected) and not high.passed


@pytest.mark.parametrize("rouge_type", ["rouge1", "rouge2", "rougeL"])
def test_rouge_matches_rouge_score(rouge_type):
    output, reference = "a quick brown fox jumps", "the quick brown fox jumped over"
    expected = rouge_scorer.RougeScorer([rouge_type]).score(reference, output)[rouge_type]
    outcome = judge(Baseline("rouge", rouge_type=rouge_type, threshold=0.3), output, reference)
    assert outcome.score == pytest.approx(expected.fmeasure)
    assert outcome.passed is (expected.fmeasure >= 0.3)


@pytest.mark.parametrize(
    "given",
    [{"kind": "levenshtein"}, {"kind": "bleu", "threshold": 2}, {"kind": "numeric", "rel_tol": -1}],
)
def test_bad_settings(given):
    with pytest.raises(BaselineError):
        Baseline(**given)


def test_names_carry_their_settings():
    assert Baseline("numeric", rel_tol=0.01).model == "numeric(rel_tol=0.01)"
    assert Baseline("rouge", rouge_type="rouge2", threshold=0.4).model == "rouge2>=0.4"
    assert Baseline("bleu").fingerprint != Baseline("bleu", threshold=0.6).fingerprint


def run(project, *args):
    out = StringIO()
    call_command("run_baselines", "--project", project.slug, *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_command_writes_verdicts_beside_the_llm_judge(project, tmp_path):
    pairs = [("Paris", "paris", "pass"), ("Lyon", "Paris", "fail"), ("Rome", "Rome", "pass")]
    records = [criterion_record(name="correct", labels=["pass", "fail"], positive="pass")]
    for n, (output, reference, human) in enumerate(pairs):
        records += [
            item_record(f"i{n}", output=output, reference=reference),
            human_record(f"i{n}", "ann", human, criterion="correct"),
            verdict_record(f"i{n}", "pass", criterion="correct"),
        ]
    records.append(item_record("no-reference", output="x", reference=None))
    import_items(project, write_jsonl(tmp_path / "r.jsonl", records))

    out = run(project, "--criterion", "correct", "--baseline", "normalised")
    assert out.strip() == (
        "baseline/normalised: 3 verdicts written (2 passed), 0 already labelled, "
        "1 items without output or reference"
    )
    again = run(project, "--criterion", "correct", "--baseline", "normalised")
    assert "0 verdicts written" in again and "3 already labelled" in again
    run(project, "--criterion", "correct", "--baseline", "bleu", "--threshold", "0.9")
    bleu = Verdict.objects.filter(judge__model="bleu>=0.9").order_by("item__external_id")
    assert [v.label for v in bleu] == ["fail", "fail", "pass"]  # BLEU is case-sensitive
    assert [v.confidence for v in bleu][1] == pytest.approx(0.0)

    report = report_json(project, "--split", "all")
    judges = {row["judge"]: row for row in report["results"]}
    assert set(judges) >= {"openai/gpt-4o", "baseline/normalised", "baseline/bleu>=0.9"}
    assert judges["baseline/normalised"]["cohen_kappa"]["value"] == 1.0
    assert judges["openai/gpt-4o"]["observed_agreement"]["value"] == pytest.approx(2 / 3)


@pytest.mark.django_db
def test_command_errors(project, tmp_path):
    import_items(
        project,
        write_jsonl(
            tmp_path / "c.jsonl",
            [criterion_record(name="grade", labels=["1", "2", "3"], positive="3", ordinal=True)],
        ),
    )
    with pytest.raises(CommandError, match="needs two labels"):
        run(project, "--criterion", "grade", "--baseline", "exact")
    with pytest.raises(CommandError, match="no criterion 'nope'"):
        run(project, "--criterion", "nope", "--baseline", "exact")
    with pytest.raises(CommandError, match="threshold"):
        run(project, "--criterion", "grade", "--baseline", "bleu", "--threshold", "3")


@pytest.mark.django_db
def test_dashboard_shows_baselines_beside_the_llm_judge_on_held_out_items(
    client, project, tmp_path
):
    from django.urls import reverse

    from judging.services.calibration.splits import split_draw
    from judging.services.dashboard import dashboard_refresh
    from reviews.models import Role
    from tests.factories import member
    from tests.judging.helpers import see_held_out

    records = [criterion_record(name="correct", labels=["pass", "fail"], positive="pass")]
    for n in range(12):
        same = n % 3 != 0
        output, reference = ("Paris", "paris") if same else ("Lyon", "Paris")
        records += [
            item_record(f"i{n}", output=output, reference=reference),
            human_record(f"i{n}", "ann", "pass" if same else "fail", criterion="correct"),
            verdict_record(f"i{n}", "pass", criterion="correct"),
        ]
    import_items(project, write_jsonl(tmp_path / "r.jsonl", records))
    split_draw(actor=None, project=project, seed=3)
    run(project, "--criterion", "correct", "--baseline", "normalised", "--split", "held_out")
    run(project, "--criterion", "correct", "--baseline", "exact", "--split", "held_out")
    held_out_verdicts = Verdict.objects.filter(judge__provider="baseline")
    assert held_out_verdicts.exists()
    assert set(held_out_verdicts.values_list("item__split__split", flat=True)) == {"held_out"}

    dashboard_refresh(project=project)
    see_held_out(client, member(project, Role.ADMIN), project)
    page = client.get(reverse("dashboard_criterion", args=[project.slug, "correct"]))
    html = page.content.decode()
    for judge_name in ("openai/gpt-4o", "baseline/normalised", "baseline/exact"):
        assert judge_name in html
