"""Keras 3's regression metrics beyond ``MeanSquaredError`` and ``MeanAbsoluteError``:
``MeanAbsolutePercentageError``, ``MeanSquaredLogarithmicError``, ``RootMeanSquaredError``,
``CosineSimilarity``, ``LogCoshError`` and ``R2Score``, with Keras's per-example functions
(``mean_squared_error``, ``mean_absolute_error``, ``huber``: ``nn.losses``' own;
``mean_absolute_percentage_error``, ``mean_squared_logarithmic_error``, ``log_cosh``,
``cosine_similarity``; ``nn.metrics`` holds them all).

Each per-example value is computed as Keras computes it, in the predictions' float dtype,
over the last axis; the means are kept in float64 on the device (see
``_metrics_wrapper``). ``y_true`` of shape ``(N,)`` against ``y_pred`` of ``(N, 1)`` is
taken as ``(N, 1)``; other differences in shape are refused, never broadcast.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import ember.core as em

from ._metrics_wrapper import _EPSILON, MeanMetricWrapper, float_pair
from .keras_losses import _huber, _mae, _mse
from .metrics import _STATE_DTYPE, Metric, _divide_no_nan, _weights_like


def mean_squared_error(y_true: Any, y_pred: Any) -> Any:
    """``mean((y_true - y_pred)^2)`` over the last axis (Keras's; ``nn.losses``'
    per-example function).

    Examples:
        >>> from ember import nn
        >>> nn.metrics.mean_squared_error([[0.0, 1.0]], [[1.0, 1.0]]).numpy()
        array([0.5], dtype=float32)
    """
    return _mse(y_true, y_pred)


def mean_absolute_error(y_true: Any, y_pred: Any) -> Any:
    """``mean(|y_true - y_pred|)`` over the last axis (Keras's; ``nn.losses``'
    per-example function)."""
    return _mae(y_true, y_pred)


def huber(y_true: Any, y_pred: Any, delta: float = 1.0) -> Any:
    """The Huber loss of each value, averaged over the last axis: ``0.5 e^2`` where
    ``|e| <= delta``, else ``delta (|e| - 0.5 delta)`` (Keras's; ``nn.losses``'
    per-example function)."""
    return _huber(y_true, y_pred, delta)


def mean_absolute_percentage_error(y_true: Any, y_pred: Any) -> Any:
    """``100 * mean(|y_true - y_pred| / max(|y_true|, 1e-7))`` over the last axis.

    Examples:
        >>> from ember import nn
        >>> nn.metrics.mean_absolute_percentage_error([[2.0, 4.0]], [[1.0, 5.0]]).numpy()
        array([37.5], dtype=float32)
    """
    y, p = float_pair("mean_absolute_percentage_error", y_true, y_pred)
    ratio = em.abs(em.divide(em.subtract(y, p), em.maximum(em.abs(y), _EPSILON)))
    return em.multiply(em.reduce_mean(ratio, axis=-1), 100.0)


def mean_squared_logarithmic_error(y_true: Any, y_pred: Any) -> Any:
    """``mean((log(max(y_pred, 1e-7) + 1) - log(max(y_true, 1e-7) + 1))^2)`` over the last
    axis."""
    y, p = float_pair("mean_squared_logarithmic_error", y_true, y_pred)
    first = em.log(em.add(em.maximum(p, _EPSILON), 1.0))
    second = em.log(em.add(em.maximum(y, _EPSILON), 1.0))
    return em.reduce_mean(em.square(em.subtract(first, second)), axis=-1)


def log_cosh(y_true: Any, y_pred: Any) -> Any:
    """``mean(log(cosh(y_pred - y_true)))`` over the last axis, as
    ``x + softplus(-2x) - log(2)`` (no overflow for large errors)."""
    y, p = float_pair("log_cosh", y_true, y_pred)
    x = em.subtract(p, y)
    value = em.subtract(em.add(x, em.softplus(em.multiply(x, -2.0))), math.log(2.0))
    return em.reduce_mean(value, axis=-1)


def _l2_normalize(x: Any, axis: int) -> Any:
    """Keras 3's ``normalize(x, axis)``: ``x * rsqrt(max(sum(x^2), eps^2))``: zeros stay
    zeros, and their gradient is finite (clamping after the rsqrt gave NaN there)."""
    sq = em.reduce_sum(em.square(x), axis=axis, keepdims=True)
    return em.multiply(x, em.rsqrt(em.maximum(sq, _EPSILON * _EPSILON)))


def cosine_similarity(y_true: Any, y_pred: Any, axis: int = -1) -> Any:
    """The cosine of the angle between ``y_true`` and ``y_pred`` along ``axis`` (1 for the
    same direction; Keras's metric function, the loss's negative).

    Examples:
        >>> from ember import nn
        >>> nn.metrics.cosine_similarity([[0.0, 1.0]], [[1.0, 1.0]]).numpy().round(6)
        array([0.707107], dtype=float32)
    """
    y, p = float_pair("cosine_similarity", y_true, y_pred)
    return em.reduce_sum(em.multiply(_l2_normalize(y, axis), _l2_normalize(p, axis)),
                         axis=axis)


def _squared_error(y_true: Any, y_pred: Any) -> Any:
    y, p = float_pair("root_mean_squared_error", y_true, y_pred)
    return em.square(em.subtract(p, y))


class MeanAbsolutePercentageError(MeanMetricWrapper):
    """The mean of ``mean_absolute_percentage_error``: ``100 * |y_true - y_pred| /
    |y_true|``, averaged (a label of 0 counts as 1e-7).

    Examples:
        >>> from ember import nn
        >>> m = nn.metrics.MeanAbsolutePercentageError()
        >>> m.update_state([[0, 1], [0, 0]], [[1, 1], [0, 0]])
        >>> float(m.result())
        250000000.0
    """

    def __init__(self, name: str | None = "mean_absolute_percentage_error",
                 dtype: Any = None) -> None:
        super().__init__(mean_absolute_percentage_error, name, dtype)


class MeanSquaredLogarithmicError(MeanMetricWrapper):
    """The mean of ``mean_squared_logarithmic_error``."""

    def __init__(self, name: str | None = "mean_squared_logarithmic_error",
                 dtype: Any = None) -> None:
        super().__init__(mean_squared_logarithmic_error, name, dtype)


class LogCoshError(MeanMetricWrapper):
    """The mean of ``log_cosh`` (Keras names it ``"logcosh"``)."""

    def __init__(self, name: str | None = "logcosh", dtype: Any = None) -> None:
        super().__init__(log_cosh, name, dtype)


class CosineSimilarity(MeanMetricWrapper):
    """The mean of ``cosine_similarity`` along ``axis`` (-1: the last).

    Keras 3.15 leaves ``axis`` out of its config, so a reloaded Keras metric measures
    along the last axis; ember's config keeps it."""

    def __init__(self, name: str | None = "cosine_similarity", dtype: Any = None,
                 axis: int = -1) -> None:
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise ValueError(f"{name}: axis must be an integer, got {axis!r}")
        super().__init__(cosine_similarity, name, dtype, axis=axis)
        self.axis = axis


class RootMeanSquaredError(MeanMetricWrapper):
    """``sqrt`` of the (weighted) mean of ``(y_pred - y_true)^2`` over everything seen.

    Examples:
        >>> from ember import nn
        >>> m = nn.metrics.RootMeanSquaredError()
        >>> m.update_state([[0, 1], [0, 0]], [[1, 1], [0, 0]])
        >>> float(m.result())
        0.5
    """

    def __init__(self, name: str | None = "root_mean_squared_error",
                 dtype: Any = None) -> None:
        super().__init__(_squared_error, name, dtype)

    def result(self) -> Any:
        """``sqrt`` of the float64 mean, in the result's dtype (0 before any update)."""
        mean = _divide_no_nan(self.total.value(), self.count.value())
        return em.cast(em.sqrt(mean), self.dtype)


_AGGREGATIONS = (None, "uniform_average", "variance_weighted_average")


class R2Score(Metric):
    """The coefficient of determination, ``1 - sum((y - p)^2) / sum((y - mean(y))^2)``, per
    output column over everything seen, as Keras 3's ``R2Score``.

    Args:
        class_aggregation: how the columns' scores combine: ``"uniform_average"`` (their
            mean, the default), ``"variance_weighted_average"`` (weighted by each column's
            variance of ``y_true``) or None (one score per column). A column whose labels
            never vary scores 0 (NaN where it is predicted exactly), as Keras.
        num_regressors: the number of independent variables, for the adjusted R2
            ``1 - (1 - R2) (n - 1) / (n - p - 1)``, where ``n`` counts every value seen (as
            Keras counts). 0 (the default) is the plain R2; with ``p >= n - 1`` the plain
            R2 is returned (Keras warns; ember reads nothing back to tell).
        name: the metric's name.
        dtype: the result's dtype (float32 by default).

    Takes 2-D ``y_true`` and ``y_pred``, ``(batch_size, outputs)``; ``sample_weight`` of
    ``(batch_size,)`` weighs each example (``(batch_size, outputs)``: each value). The sums
    are kept in float64 on the device, made on the first update.

    Examples:
        >>> from ember import nn
        >>> m = nn.metrics.R2Score()
        >>> m.update_state([[1.0], [4.0], [3.0]], [[2.0], [4.0], [4.0]])
        >>> round(float(m.result()), 6)
        0.571429
    """

    def __init__(self, class_aggregation: str | None = "uniform_average",
                 num_regressors: int = 0, name: str | None = "r2_score",
                 dtype: Any = None) -> None:
        self._named(name, dtype)
        if class_aggregation not in _AGGREGATIONS:
            raise ValueError(f"{self.name}: class_aggregation must be one of "
                             f"{_AGGREGATIONS}, got {class_aggregation!r}")
        if isinstance(num_regressors, bool) or not isinstance(num_regressors, int) \
                or num_regressors < 0:
            raise ValueError(f"{self.name}: num_regressors must be an integer >= 0, got "
                             f"{num_regressors!r}")
        self.class_aggregation, self.num_regressors = class_aggregation, num_regressors
        self.num_samples = em.Variable(np.zeros((), _STATE_DTYPE),
                                       name=f"{self.name}/num_samples", trainable=False)
        self._sums: dict[str, Any] = {}

    _SUMS = ("squared_sum", "sum", "residual", "count")  # Keras's variable names

    def _build(self, outputs: int) -> None:
        with em.device(self.num_samples.device):
            self._sums = {k: em.Variable(np.zeros((outputs,), _STATE_DTYPE),
                                         name=f"{self.name}/{k}", trainable=False)
                          for k in self._SUMS}

    def __checkpoint_children__(self) -> dict[str, Any]:
        return {"num_samples": self.num_samples, **self._sums}

    @property
    def variables(self) -> list[Any]:
        return [self.num_samples, *self._sums.values()]

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y, p = float_pair(self.name, y_true, y_pred)
        if p.ndim != 2:
            raise ValueError(f"{self.name}: expects 2-D y_true and y_pred, (batch_size, "
                             f"outputs); got y_pred of shape {tuple(p.shape)}")
        if not self._sums:
            self._build(p.shape[-1])
        elif self._sums["sum"].shape[0] != p.shape[-1]:
            raise ValueError(f"{self.name}: y_pred has {p.shape[-1]} outputs, but the "
                             f"metric has counted {self._sums['sum'].shape[0]}")
        y64, p64 = em.cast(y, _STATE_DTYPE), em.cast(p, _STATE_DTYPE)
        if sample_weight is None:
            w = em.ones_like(y64)
        else:
            w = _weights_like(sample_weight, tuple(y64.shape))
        wy = em.multiply(y64, w)
        adds = {"sum": em.reduce_sum(wy, axis=0),
                "squared_sum": em.reduce_sum(em.multiply(y64, wy), axis=0),
                "residual": em.reduce_sum(em.multiply(em.square(em.subtract(y64, p64)), w),
                                          axis=0),
                "count": em.reduce_sum(w, axis=0)}
        for key, value in adds.items():
            var = self._sums[key]
            var.assign_add(value if value.device == var.device else value.to(var.device))
        n = em.constant(float(p.size), dtype=_STATE_DTYPE)
        self.num_samples.assign_add(n if n.device == self.num_samples.device
                                    else n.to(self.num_samples.device))

    def result(self) -> Any:
        if not self._sums:
            return em.cast(em.zeros_like(self.num_samples.value()), self.dtype)
        s, sq, res, count = (self._sums[k].value()
                             for k in ("sum", "squared_sum", "residual", "count"))
        total = em.subtract(sq, em.multiply(s, _divide_no_nan(s, count)))
        # Keras's 1 - res / total, where an infinite score (labels that never vary,
        # predicted with an error) is 0 and 0 / 0 stays NaN; without dividing by 0
        zero = em.equal(total, 0.0)
        raw = em.subtract(1.0, em.divide(res, em.where(zero, em.ones_like(total), total)))
        raw = em.where(zero, em.where(em.equal(res, 0.0), em.add(em.zeros_like(res), np.nan),
                                      em.zeros_like(raw)), raw)
        if self.class_aggregation == "uniform_average":
            score = em.reduce_mean(raw)
        elif self.class_aggregation == "variance_weighted_average":
            score = em.divide(em.reduce_sum(em.multiply(total, raw)), em.reduce_sum(total))
        else:
            score = raw
        if self.num_regressors:
            n, k = self.num_samples.value(), float(self.num_regressors)
            fits = em.less(k, em.subtract(n, 1.0))  # else the plain R2 (Keras warns)
            den = em.where(fits, em.subtract(em.subtract(n, k), 1.0), em.ones_like(n))
            adjusted = em.subtract(1.0, em.divide(em.multiply(em.subtract(1.0, score),
                                                              em.subtract(n, 1.0)), den))
            score = em.where(fits, adjusted, score)
        # 0 before anything is counted (Keras: NaN)
        seen = em.greater(em.reduce_sum(count), 0.0)
        return em.cast(em.where(seen, score, em.zeros_like(score)), self.dtype)
