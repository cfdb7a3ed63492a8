"""Text overlap measures of an output against its reference: exact match and token F1 (SQuAD),
BLEU (sacrebleu) and ROUGE (rouge-score). Pure: strings in, numbers out.

- ``exact_match``: 1 when the two are equal after the SQuAD normalisation (lower case,
  punctuation removed, the articles a/an/the removed, whitespace collapsed), else 0.
- ``token_f1``: F1 of the two bags of normalised tokens, 2PR / (P + R) with P = common / output
  tokens, R = common / reference tokens; 1 when both are empty, 0 when only one is (SQuAD 2.0's
  rule; SQuAD 1.1 gave 0 for two empty strings, which exact match calls equal).
- ``bleu``: per item sacrebleu's sentence BLEU; over the items sacrebleu's corpus BLEU (n-gram
  counts summed over the items first, not a mean of sentence scores); both divided by 100.
- ``rouge1``, ``rouge2``, ``rougeL``: rouge-score's F-measure, without stemming.

Figures: the mean of the per-item scores with a percentile bootstrap CI over items; BLEU also the
corpus figure with its own CI, each resample recomputed from the resampled items' summed counts.
"""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from .resample import mean_ci, summed_ci
from .stat import Stat

METRICS = ("exact_match", "token_f1", "bleu", "rouge1", "rouge2", "rougeL")
ROUGE = ("rouge1", "rouge2", "rougeL")
NO_PAIRS = "no item has both an output and a reference (n = 0)"
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = set(string.punctuation)


def as_text(value: Any) -> str:
    """A string as it is; any other JSON value as canonical JSON text (sorted keys)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def squad_normalise(text: str) -> str:
    """SQuAD's `normalize_answer`: lower case, drop punctuation, drop articles, fold spaces."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(output: str, reference: str) -> float:
    return float(squad_normalise(output) == squad_normalise(reference))


def token_f1(output: str, reference: str) -> float:
    predicted = squad_normalise(output).split()
    expected = squad_normalise(reference).split()
    if not predicted or not expected:
        return float(predicted == expected)
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def _bleu_objects():
    # sacrebleu's own per-segment statistics and score-from-statistics (the functions its
    # corpus_score and sentence_score call): summing them over resampled items gives each
    # resample's corpus BLEU without tokenising again.
    from sacrebleu.metrics import BLEU

    return BLEU(), BLEU(effective_order=True)


def bleu_statistics(outputs: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """Per item sacrebleu's counts: sys_len, ref_len, matches and totals for orders 1-4."""
    corpus, _ = _bleu_objects()
    if not outputs:
        return np.zeros((0, 2 + 2 * corpus.max_ngram_order))
    return np.asarray(
        corpus._extract_corpus_statistics(list(outputs), [list(references)]), dtype=np.float64
    )


def _corpus_bleu_values(summed: np.ndarray, _n: int) -> np.ndarray:
    corpus, _ = _bleu_objects()
    return np.array(
        [corpus._compute_score_from_stats(row.astype(np.int64)).score / 100.0 for row in summed]
    )


def item_scores(metric: str, outputs: Sequence[str], references: Sequence[str]) -> list[float]:
    """Each item's score under `metric` (one of METRICS)."""
    if metric == "exact_match":
        return [exact_match(o, r) for o, r in zip(outputs, references, strict=True)]
    if metric == "token_f1":
        return [token_f1(o, r) for o, r in zip(outputs, references, strict=True)]
    if metric == "bleu":
        _, sentence = _bleu_objects()
        stats = bleu_statistics(outputs, references).astype(np.int64)
        return [sentence._compute_score_from_stats(row).score / 100.0 for row in stats]
    if metric in ROUGE:
        from rouge_score import rouge_scorer

        scorer = rouge_scorer.RougeScorer([metric], use_stemmer=False)
        return [
            scorer.score(r, o)[metric].fmeasure for o, r in zip(outputs, references, strict=True)
        ]
    raise ValueError(f"unknown text metric {metric!r} (choose from {', '.join(METRICS)})")


def text_metric(
    metric: str,
    outputs: Sequence[str],
    references: Sequence[str],
    *,
    seed: int = 0,
    n_resamples: int = 2000,
) -> tuple[dict[str, Any], list[float]]:
    """(``{"metric", "n", "mean", "corpus"?}``, the per-item scores). Statistics are
    ``Stat.as_dict()``; ``corpus`` only for BLEU."""
    scores = item_scores(metric, outputs, references)
    options = {"seed": seed, "n_resamples": n_resamples}
    mean = mean_ci(scores, **options) if scores else Stat.undefined(NO_PAIRS)
    figure: dict[str, Any] = {"metric": metric, "n": len(scores), "mean": mean.as_dict()}
    if metric == "bleu":
        stats = bleu_statistics(outputs, references)
        corpus = summed_ci(stats, _corpus_bleu_values, **options) if scores else mean
        figure["corpus"] = corpus.as_dict()
    return figure, scores
