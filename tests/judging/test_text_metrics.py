"""`manage.py text_metrics`: the figures of a project's items against sacrebleu and rouge-score,
the split and slice it reads, what it leaves out and how it refuses."""

import json
from io import StringIO

import numpy as np
import pytest
import sacrebleu
from django.core.management import CommandError, call_command
from rouge_score import rouge_scorer

from judging.metrics.text import token_f1
from judging.models import HeldOutAccess
from judging.services.calibration.splits import split_draw
from tests.judging.helpers import import_items, item_record, write_jsonl

pytestmark = pytest.mark.django_db

PAIRS = {
    "t1": ("The cat sat on the mat.", "The cat is on the mat."),
    "t2": ("A dog barked at the postman", "the dog barked at the mailman"),
    "t3": ("Paris is the capital of France", "The capital of France is Paris."),
    "t4": ("42", "42"),
}


@pytest.fixture
def texts(project, tmp_path):
    records = [
        item_record(item_id, output=output, reference=reference, slices=["short"] * (i % 2))
        for i, (item_id, (output, reference)) in enumerate(PAIRS.items())
    ]
    records.append(item_record("no-ref", output="something"))
    import_items(project, write_jsonl(tmp_path / "items.jsonl", records))
    return project


def run(project, *args):
    out = StringIO()
    call_command("text_metrics", "--project", project.slug, "--format", "json", *args, stdout=out)
    return json.loads(out.getvalue())


def test_figures_equal_the_reference_libraries(texts):
    outputs = [o for o, _ in PAIRS.values()]
    references = [r for _, r in PAIRS.values()]
    report = run(texts, "--metric", "exact_match", "token_f1", "bleu", "--metric", "rouge2")
    assert (report["n_items"], report["skipped"]) == (5, 1)
    figures = {f["metric"]: f for f in report["metrics"]}
    assert list(figures) == ["exact_match", "token_f1", "bleu", "rouge2"]
    assert all(f["n"] == 4 for f in figures.values())
    assert figures["exact_match"]["mean"]["value"] == 0.25
    f1 = np.mean([token_f1(o, r) for o, r in PAIRS.values()])
    assert figures["token_f1"]["mean"]["value"] == pytest.approx(f1)
    bleu = figures["bleu"]
    assert bleu["corpus"]["value"] == pytest.approx(
        sacrebleu.corpus_bleu(outputs, [references]).score / 100
    )
    sentence = [sacrebleu.sentence_bleu(o, [r]).score / 100 for o, r in PAIRS.values()]
    assert bleu["mean"]["value"] == pytest.approx(np.mean(sentence))
    scorer = rouge_scorer.RougeScorer(["rouge2"], use_stemmer=False)
    rouge = np.mean([scorer.score(r, o)["rouge2"].fmeasure for o, r in PAIRS.values()])
    assert figures["rouge2"]["mean"]["value"] == pytest.approx(rouge)
    for figure in figures.values():
        low, high = figure["mean"]["ci"]
        assert low <= figure["mean"]["value"] <= high
    assert "corpus" not in figures["rouge2"]


def test_a_slice_and_a_split_choose_the_items(texts):
    report = run(texts, "--metric", "exact_match", "--slice", "short")
    assert report["n_items"] == 2 and report["metrics"][0]["mean"]["value"] == 0.5
    split_draw(actor=None, project=texts, seed=1)
    before = HeldOutAccess.objects.count()
    held = run(texts, "--metric", "exact_match", "--split", "held_out")
    calibration = run(texts, "--metric", "exact_match", "--split", "calibration")
    assert held["n_items"] + calibration["n_items"] == 5
    assert HeldOutAccess.objects.count() == before + 1  # the held-out look is recorded


def test_markdown_names_what_was_measured(texts):
    out = StringIO()
    call_command("text_metrics", "--project", texts.slug, "--metric", "bleu", stdout=out)
    text = out.getvalue()
    assert "5 items, 1 without an output or a reference (left out)" in text
    assert "| bleu | 4 |" in text
    assert "not correctness" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--metric", "bleu", "--slice", "nope"], "no slice 'nope'"),
        (["--metric", "bleu", "--split", "held_out"], "no split has been drawn"),
        (["--metric", "meteor"], "invalid choice: 'meteor'"),
    ],
)
def test_refusals_name_the_option(texts, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("text_metrics", "--project", texts.slug, *args, stdout=StringIO())
