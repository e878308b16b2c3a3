"""Keras 3's correlation metrics: ``PearsonCorrelation`` and ``ConcordanceCorrelation``,
the means of ``pearson_correlation`` and ``concordance_correlation`` (``nn.metrics`` holds
them all).

Each function correlates ``y_true`` with ``y_pred`` along ``axis`` (the last by default),
so for ``(batch, outputs)`` inputs it is one correlation per example, across its outputs,
and for ``(batch,)`` inputs one correlation per batch, across the batch; the metric is
their mean. Deviations are population ones (divided by ``n``), as Keras's.
"""

from __future__ import annotations

from typing import Any

import ember.core as em

from ._metrics_wrapper import _EPSILON, MeanMetricWrapper, float_pair


def pearson_correlation(y_true: Any, y_pred: Any, axis: int = -1) -> Any:
    """Pearson's correlation coefficient of ``y_true`` and ``y_pred`` along ``axis`` (NaN
    where either is constant, as Keras).

    Examples:
        >>> from ember import nn
        >>> round(float(nn.metrics.pearson_correlation([1.0, 2.0, 3.0], [2.0, 4.0, 7.0])), 6)
        0.993399
    """
    y, p = float_pair("pearson_correlation", y_true, y_pred)
    yc = em.subtract(y, em.reduce_mean(y, axis=axis, keepdims=True))
    pc = em.subtract(p, em.reduce_mean(p, axis=axis, keepdims=True))
    yn = em.divide(yc, em.reduce_std(yc, axis=axis, keepdims=True))
    pn = em.divide(pc, em.reduce_std(pc, axis=axis, keepdims=True))
    return em.reduce_mean(em.multiply(yn, pn), axis=axis)


def concordance_correlation(y_true: Any, y_pred: Any, axis: int = -1) -> Any:
    """Lin's concordance correlation coefficient of ``y_true`` and ``y_pred`` along
    ``axis``, computed as Keras 3.15 computes it: ``mean(2 (y_true - mean(y_pred))
    (y_pred - mean(y_pred)) / (var(y_true) + var(y_pred) + (mean(y_true) -
    mean(y_pred))^2 + 1e-7))``. (Keras centres ``y_true`` on ``y_pred``'s mean in the
    covariance, where Lin's coefficient centres it on its own; ember gives Keras's
    values.)"""
    y, p = float_pair("concordance_correlation", y_true, y_pred)
    y_mean = em.reduce_mean(y, axis=axis, keepdims=True)
    p_mean = em.reduce_mean(p, axis=axis, keepdims=True)
    y_var = em.reduce_variance(em.subtract(y, y_mean), axis=axis, keepdims=True)
    p_var = em.reduce_variance(em.subtract(p, p_mean), axis=axis, keepdims=True)
    covar = em.multiply(em.subtract(y, p_mean), em.subtract(p, p_mean))
    norm = em.add(em.add(y_var, p_var), em.square(em.subtract(y_mean, p_mean)))
    return em.reduce_mean(em.divide(em.multiply(covar, 2.0), em.add(norm, _EPSILON)),
                          axis=axis)


def _check_axis(name: str | None, axis: Any) -> None:
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise ValueError(f"{name}: axis must be an integer, got {axis!r}")


class PearsonCorrelation(MeanMetricWrapper):
    """The mean of ``pearson_correlation`` along ``axis``.

    Examples:
        >>> from ember import nn
        >>> m = nn.metrics.PearsonCorrelation()
        >>> m.update_state([[1.0, 2.0, 3.0]], [[2.0, 4.0, 7.0]])
        >>> round(float(m.result()), 6)
        0.993399
    """

    def __init__(self, name: str | None = "pearson_correlation", dtype: Any = None,
                 axis: int = -1) -> None:
        _check_axis(name, axis)
        super().__init__(pearson_correlation, name, dtype, axis=axis)
        self.axis = axis


class ConcordanceCorrelation(MeanMetricWrapper):
    """The mean of ``concordance_correlation`` along ``axis``."""

    def __init__(self, name: str | None = "concordance_correlation", dtype: Any = None,
                 axis: int = -1) -> None:
        _check_axis(name, axis)
        super().__init__(concordance_correlation, name, dtype, axis=axis)
        self.axis = axis
