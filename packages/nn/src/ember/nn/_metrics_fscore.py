"""Keras 3's F-scores: ``FBetaScore`` and ``F1Score`` (``nn.metrics`` holds them).

What they count, as Keras's: a prediction is positive above ``threshold``, or, with no
threshold, where it is its row's largest (and not 0); labels count by their value
(multi-hot 0/1). Per class: true positives, false positives, false negatives and the
labels' sum, weighted by ``sample_weight`` (one weight per example). The score of a
class is ``(1 + beta^2) P R / (beta^2 P + R)`` with Keras's 1e-7 in each denominator.

The counts are float64 variables on the device of the predictions, one per class (one
in all for ``average="micro"``), made on the first update (the number of classes is the
predictions' last axis then).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.core as em

from ._metrics_wrapper import _EPSILON, float_pair
from .metrics import _STATE_DTYPE, Metric, _weights_like

_AVERAGES = (None, "micro", "macro", "weighted")
_COUNTS = ("true_positives", "false_positives", "false_negatives", "intermediate_weights")


class FBetaScore(Metric):
    """The F-beta score: recall weighs ``beta`` times as much as precision.

    Args:
        average: None (one score per class, the default), ``"micro"`` (one score from
            the counts of every class), ``"macro"`` (the mean of the classes' scores) or
            ``"weighted"`` (their mean weighted by each class's labels).
        beta: recall's weight, > 0 (1.0 by default).
        threshold: predictions above it are positive, in (0, 1]; None (the default)
            takes each row's largest prediction as its one positive.
        name: the metric's name.
        dtype: the result's dtype (float32 by default).

    Takes 2-D ``y_true`` and ``y_pred``, ``(batch_size, classes)``.

    Examples:
        >>> from ember import nn
        >>> m = nn.metrics.FBetaScore(beta=2.0, threshold=0.5)
        >>> m.update_state([[1, 1, 1], [1, 0, 0], [1, 1, 0]],
        ...                [[0.2, 0.6, 0.7], [0.2, 0.6, 0.6], [0.6, 0.8, 0.0]])
        >>> m.result().numpy().round(6)
        array([0.384615, 0.909091, 0.833333], dtype=float32)
    """

    def __init__(self, average: str | None = None, beta: float = 1.0,
                 threshold: float | None = None, name: str | None = "fbeta_score",
                 dtype: Any = None) -> None:
        self._named(name, dtype)
        if average not in _AVERAGES:
            raise ValueError(f"{self.name}: average must be one of {_AVERAGES}, got "
                             f"{average!r}")
        if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not beta > 0:
            raise ValueError(f"{self.name}: beta must be a number > 0, got {beta!r}")
        if threshold is not None and (
                isinstance(threshold, bool) or not isinstance(threshold, (int, float))
                or not 0 < threshold <= 1):
            raise ValueError(f"{self.name}: threshold must be None or a number in (0, 1], "
                             f"got {threshold!r}")
        self.average, self.beta = average, float(beta)
        self.threshold = None if threshold is None else float(threshold)
        self._counts: dict[str, Any] = {}

    def _build(self, classes: int, device: str) -> None:
        shape = () if self.average == "micro" else (classes,)
        with em.device(device):
            self._counts = {k: em.Variable(np.zeros(shape, _STATE_DTYPE),
                                           name=f"{self.name}/{k}", trainable=False)
                            for k in _COUNTS}

    def __checkpoint_children__(self) -> dict[str, Any]:
        return dict(self._counts)

    @property
    def variables(self) -> list[Any]:
        return list(self._counts.values())

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y, p = float_pair(self.name, y_true, y_pred)
        if p.ndim != 2:
            raise ValueError(f"{self.name}: expects 2-D y_true and y_pred, (batch_size, "
                             f"classes); got y_pred of shape {tuple(p.shape)}")
        if not self._counts:
            self._build(p.shape[-1], p.device)
        elif self.average != "micro" and self._counts[_COUNTS[0]].shape[0] != p.shape[-1]:
            raise ValueError(f"{self.name}: y_pred has {p.shape[-1]} classes, but the metric "
                             f"has counted {self._counts[_COUNTS[0]].shape[0]}")
        if self.threshold is None:
            top = em.reduce_max(p, axis=-1, keepdims=True)
            positive = em.logical_and(em.greater_equal(p, top), em.greater(em.abs(p), 1e-9))
        else:
            positive = em.greater(p, self.threshold)
        pred = em.cast(positive, _STATE_DTYPE)
        label = em.cast(y, _STATE_DTYPE)
        parts = {"true_positives": em.multiply(pred, label),
                 "false_positives": em.multiply(pred, em.subtract(1.0, label)),
                 "false_negatives": em.multiply(em.subtract(1.0, pred), label),
                 "intermediate_weights": label}
        w = None if sample_weight is None else _weights_like(sample_weight, tuple(p.shape))
        axis = None if self.average == "micro" else 0
        for key, value in parts.items():
            if w is not None:
                value = em.multiply(value, w)
            total = em.reduce_sum(value, axis=axis)
            var = self._counts[key]
            var.assign_add(total if total.device == var.device else total.to(var.device))

    def result(self) -> Any:
        """The score(s), in ``dtype``; 0 before any update."""
        if not self._counts:
            return em.cast(em.zeros(()), self.dtype)
        tp, fp, fn, weights = (self._counts[k].value() for k in _COUNTS)
        precision = em.divide(tp, em.add(em.add(tp, fp), _EPSILON))
        recall = em.divide(tp, em.add(em.add(tp, fn), _EPSILON))
        b2 = self.beta ** 2
        score = em.multiply(em.divide(em.multiply(precision, recall),
                                      em.add(em.add(em.multiply(precision, b2), recall),
                                             _EPSILON)), 1.0 + b2)
        if self.average == "weighted":
            share = em.divide(weights, em.add(em.reduce_sum(weights), _EPSILON))
            score = em.reduce_sum(em.multiply(score, share))
        elif self.average is not None:
            score = em.reduce_mean(score)
        return em.cast(score, self.dtype)


class F1Score(FBetaScore):
    """The F1 score, the harmonic mean of precision and recall (``FBetaScore`` with
    ``beta=1``).

    Args:
        average: None (one score per class), ``"micro"``, ``"macro"`` or ``"weighted"``
            (see ``FBetaScore``).
        threshold: predictions above it are positive; None takes each row's largest.
        name: the metric's name.
        dtype: the result's dtype (float32 by default).

    Examples:
        >>> from ember import nn
        >>> m = nn.metrics.F1Score(threshold=0.5)
        >>> m.update_state([[1, 1, 1], [1, 0, 0], [1, 1, 0]],
        ...                [[0.2, 0.6, 0.7], [0.2, 0.6, 0.6], [0.6, 0.8, 0.0]])
        >>> m.result().numpy().round(6)
        array([0.5     , 0.8     , 0.666667], dtype=float32)
    """

    def __init__(self, average: str | None = None, threshold: float | None = None,
                 name: str | None = "f1_score", dtype: Any = None) -> None:
        super().__init__(average, 1.0, threshold, name, dtype)
