"""Per-class precision / recall / F1, their averages, and accuracy, from a confusion matrix.

The table is ``confusion_matrix(reference, predicted, labels)``: rows = reference (human),
columns = predicted (judge). For class k: tp = t[k, k], fp = column k - tp, fn = row k - tp.

Undefined per class (never 0): precision when tp + fp = 0 (class never predicted); recall when
tp + fn = 0 (support 0); F1 = 2tp / (2tp + fp + fn) when tp + fp + fn = 0 (class absent from
both). F1 is therefore defined (= 0) when only one of precision / recall is undefined, as in
scikit-learn >= 1.3.

Averages, our choice: macro = unweighted mean over the classes where the metric is defined;
weighted = support-weighted mean over the same classes (undefined if their support is 0);
micro = sum tp / sum predicted = accuracy (single-label). This equals scikit-learn with
``zero_division=np.nan`` (undefined classes are left out of the averages), which differs from
its default (undefined counted as 0). Which classes were left out is visible in ``per_class``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .agreement import as_tables
from .stat import Stat


@dataclass(frozen=True, slots=True)
class ClassScores:
    label: Hashable
    precision: Stat
    recall: Stat
    f1: Stat
    support: int


@dataclass(frozen=True, slots=True)
class AveragedScores:
    precision: Stat
    recall: Stat
    f1: Stat


@dataclass(frozen=True, slots=True)
class ClassificationReport:
    per_class: tuple[ClassScores, ...]
    macro: AveragedScores
    micro: AveragedScores
    weighted: AveragedScores
    accuracy: Stat
    n: int

    def by_label(self) -> dict[Hashable, ClassScores]:
        return {scores.label: scores for scores in self.per_class}


def per_class_values(tables: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised per-class ``(precision, recall, f1, support)``, each of shape ``(..., k)``.

    tp / column sum, tp / row sum, 2 tp / (row + column); NaN where the denominator is 0.
    """
    t = as_tables(tables)
    tp = np.diagonal(t, axis1=-2, axis2=-1)
    predicted = t.sum(axis=-2)
    support = t.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(predicted > 0, tp / predicted, np.nan)
        recall = np.where(support > 0, tp / support, np.nan)
        f1 = np.where(predicted + support > 0, 2 * tp / (predicted + support), np.nan)
    return precision, recall, f1, support


def _nan_average(values: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Mean over the last axis ignoring NaN (weighted if given); NaN when nothing is left."""
    defined = ~np.isnan(values)
    w = defined.astype(np.float64) if weights is None else np.where(defined, weights, 0.0)
    total = w.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = (np.where(defined, values, 0.0) * w).sum(axis=-1) / total
    return np.where(total > 0, mean, np.nan)


def macro_f1_values(tables: Any) -> np.ndarray:
    """Vectorised macro F1 over classes with defined F1; NaN when no class is defined (n = 0)."""
    return _nan_average(per_class_values(tables)[2])


def accuracy_values(tables: Any) -> np.ndarray:
    """Vectorised accuracy = trace / n; NaN when n = 0."""
    t = as_tables(tables)
    n = t.sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n > 0, np.trace(t, axis1=-2, axis2=-1) / n, np.nan)


def accuracy(table: Any) -> Stat:
    """Accuracy = trace / n of a confusion matrix. Undefined: n = 0."""
    value = float(accuracy_values(table))
    return Stat.undefined("no items (n = 0)") if np.isnan(value) else Stat(value)


def _stat(value: float, reason: str) -> Stat:
    return Stat.undefined(reason) if np.isnan(value) else Stat(float(value))


def classification_report(
    table: Any, labels: Sequence[Hashable] | None = None
) -> ClassificationReport:
    """Per-class and averaged precision / recall / F1 plus accuracy (rows = reference).

    Per class: P = tp / (tp + fp), R = tp / (tp + fn), F1 = 2tp / (2tp + fp + fn); macro and
    support-weighted means over the classes where each is defined; micro = accuracy = trace / n.
    Undefined: see the module docstring (0/0 per class; averages when no class is defined or, for
    weighted, the defined classes have support 0). ``labels`` names rows/columns (default 0..k-1).
    """
    t = as_tables(table)
    if t.ndim != 2:
        raise ValueError(f"expected one k x k table, got shape {t.shape}")
    k = t.shape[0]
    labels = list(range(k)) if labels is None else list(labels)
    if len(labels) != k:
        raise ValueError(f"{len(labels)} labels for a {k} x {k} table")
    precision, recall, f1, support = per_class_values(t)
    per_class = tuple(
        ClassScores(
            label=label,
            precision=_stat(precision[i], f"class {label!r} was never predicted (tp + fp = 0)"),
            recall=_stat(recall[i], f"class {label!r} has no reference items (support 0)"),
            f1=_stat(f1[i], f"class {label!r} is absent from reference and predictions"),
            support=int(support[i]),
        )
        for i, label in enumerate(labels)
    )
    none_defined = "undefined for every class: no items (n = 0)"
    macro = AveragedScores(
        precision=_stat(_nan_average(precision), f"precision {none_defined}"),
        recall=_stat(_nan_average(recall), f"recall {none_defined}"),
        f1=_stat(_nan_average(f1), f"F1 {none_defined}"),
    )
    no_support = "the classes where it is defined have no reference items (support 0)"
    weighted = AveragedScores(
        precision=_stat(_nan_average(precision, support), f"weighted precision: {no_support}"),
        recall=_stat(_nan_average(recall, support), f"weighted recall: {no_support}"),
        f1=_stat(_nan_average(f1, support), f"weighted F1: {no_support}"),
    )
    acc = accuracy(t)
    micro = AveragedScores(precision=acc, recall=acc, f1=acc)
    return ClassificationReport(per_class, macro, micro, weighted, acc, int(t.sum()))


def precision_recall_f1(tp: int, fp: int, fn: int) -> tuple[Stat, Stat, Stat]:
    """Binary precision tp/(tp+fp), recall tp/(tp+fn), F1 2tp/(2tp+fp+fn); undefined on 0/0."""
    table = np.array([[tp, fn], [fp, 0]])
    scores = classification_report(table, ["positive", "negative"]).per_class[0]
    return scores.precision, scores.recall, scores.f1
