"""Text metrics against their reference implementations: sacrebleu, rouge-score and SQuAD's
own normalisation and token F1 (copied below as the oracle), plus hand-made cases."""

import collections
import re
import string

import numpy as np
import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer

from judging.metrics.resample import mean_ci
from judging.metrics.text import (
    _corpus_bleu_values,
    bleu_statistics,
    exact_match,
    squad_normalise,
    text_metric,
    token_f1,
)

FAST = settings(max_examples=60, deadline=None, database=None)
OUTPUTS = [
    "The cat sat on the mat.",
    "A dog barked at the postman twice",
    "Paris is the capital of France",
    "",
    "fourty-two",
]
REFERENCES = [
    "The cat is on the mat.",
    "the dog barked at the mailman",
    "The capital of France is Paris.",
    "nothing",
    "42",
]


# --- the SQuAD 2.0 evaluation script's functions, verbatim but for names (the oracle) ---
def squad_normalize_answer(s):
    def remove_articles(text):
        regex = re.compile(r"\b(a|an|the)\b", re.UNICODE)
        return re.sub(regex, " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


def squad_compute_f1(a_gold, a_pred):
    gold_toks = squad_normalize_answer(a_gold).split()
    pred_toks = squad_normalize_answer(a_pred).split()
    common = collections.Counter(gold_toks) & collections.Counter(pred_toks)
    num_same = sum(common.values())
    if len(gold_toks) == 0 or len(pred_toks) == 0:
        return int(gold_toks == pred_toks)
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(pred_toks)
    recall = 1.0 * num_same / len(gold_toks)
    return (2 * precision * recall) / (precision + recall)


@pytest.mark.parametrize(
    ("output", "reference", "em", "f1"),
    [
        ("The Eiffel Tower!", "eiffel   tower", 1.0, 1.0),
        ("an apple a day", "Apple, day.", 1.0, 1.0),
        # 2 common of 3 predicted and 4 expected tokens: P 2/3, R 1/2, F1 4/7
        ("red green blue", "red green yellow black", 0.0, 4 / 7),
        # bags, not sets: "the" is dropped, "b b" against one "b" shares one token
        ("b b c", "b d", 0.0, 2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2)),
        ("", "", 1.0, 1.0),
        ("", "something", 0.0, 0.0),
        ("the", "a", 1.0, 1.0),  # both normalise to nothing
    ],
)
def test_squad_exact_match_and_token_f1_on_hand_made_cases(output, reference, em, f1):
    assert exact_match(output, reference) == em
    assert token_f1(output, reference) == pytest.approx(f1)


text = st.text(alphabet=st.sampled_from(list("ab cd,.!AThe-")), max_size=20)


@FAST
@given(text, text)
def test_normalisation_and_token_f1_match_the_squad_script(output, reference):
    assert squad_normalise(output) == squad_normalize_answer(output)
    assert token_f1(output, reference) == pytest.approx(squad_compute_f1(reference, output))


def test_bleu_matches_sacrebleu_sentence_and_corpus():
    figure, scores = text_metric("bleu", OUTPUTS, REFERENCES, n_resamples=200)
    for score, output, reference in zip(scores, OUTPUTS, REFERENCES, strict=True):
        assert score == pytest.approx(sacrebleu.sentence_bleu(output, [reference]).score / 100)
    corpus = sacrebleu.corpus_bleu(OUTPUTS, [REFERENCES]).score / 100
    assert figure["corpus"]["value"] == pytest.approx(corpus)
    assert figure["mean"]["value"] == pytest.approx(np.mean(scores))
    assert figure["n"] == 5
    low, high = figure["corpus"]["ci"]
    assert low <= corpus <= high


def test_a_corpus_bleu_resample_is_sacrebleus_corpus_bleu_of_the_resampled_items():
    """Summing the per-item counts of a resample = corpus BLEU of the repeated sentences."""
    counts = np.array([2, 0, 1, 0, 2])
    summed = counts @ bleu_statistics(OUTPUTS, REFERENCES)
    outputs = [o for o, c in zip(OUTPUTS, counts, strict=True) for _ in range(c)]
    references = [r for r, c in zip(REFERENCES, counts, strict=True) for _ in range(c)]
    expected = sacrebleu.corpus_bleu(outputs, [references]).score / 100
    assert _corpus_bleu_values(summed[None, :], 5)[0] == pytest.approx(expected)


@pytest.mark.parametrize("metric", ["rouge1", "rouge2", "rougeL"])
def test_rouge_matches_rouge_score_without_stemming(metric):
    scorer = rouge_scorer.RougeScorer([metric], use_stemmer=False)
    figure, scores = text_metric(metric, OUTPUTS, REFERENCES, n_resamples=200)
    expected = [scorer.score(r, o)[metric].fmeasure for o, r in zip(OUTPUTS, REFERENCES)]
    assert scores == pytest.approx(expected)
    assert figure["mean"]["value"] == pytest.approx(np.mean(expected))
    assert "corpus" not in figure
    # "barked" against "barking" would match with a stemmer; without one it does not
    assert text_metric(metric, ["dogs barking"], ["dogs barked"])[1][0] < 1.0


def test_no_items_is_undefined_with_the_reason():
    figure, scores = text_metric("bleu", [], [])
    assert scores == []
    assert figure["mean"] == {
        "value": None,
        "ci": None,
        "undefined_reason": "no item has both an output and a reference (n = 0)",
    }
    assert figure["corpus"]["value"] is None


def test_mean_ci_is_seeded_and_brackets_the_mean():
    values = [0.0, 1.0, 0.5, 0.25, 1.0, 0.0, 0.75]
    first = mean_ci(values, seed=3, n_resamples=500)
    assert first == mean_ci(values, seed=3, n_resamples=500)
    assert first.value == pytest.approx(np.mean(values))
    low, high = first.ci
    assert 0.0 <= low < first.value < high <= 1.0
    assert mean_ci([0.4] * 5, seed=1).ci == (pytest.approx(0.4), pytest.approx(0.4))


def test_mean_ci_interval_is_the_percentiles_of_explicit_resamples():
    """The chunked multinomial counts are item resamples: the same counts applied by hand
    give the same interval."""
    from judging.metrics.resample import percentile_ci, resample_counts

    values = np.array([0.1, 0.9, 0.4, 0.3])
    counts = np.concatenate(list(resample_counts(4, 300, np.random.default_rng(9))))
    assert (counts.sum(axis=1) == 4).all()
    by_hand = np.array([np.repeat(values, row).mean() for row in counts])
    assert mean_ci(values, seed=9, n_resamples=300).ci == pytest.approx(
        percentile_ci(by_hand, 0.95)
    )
