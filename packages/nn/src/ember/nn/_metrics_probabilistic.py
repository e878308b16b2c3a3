"""Keras 3's probabilistic metrics: ``BinaryCrossentropy``, ``CategoricalCrossentropy``,
``SparseCategoricalCrossentropy``, ``KLDivergence`` and ``Poisson`` (the means of the loss
functions of those names), and the functions ``poisson``, ``binary_focal_crossentropy``,
``categorical_focal_crossentropy`` and ``sparse_categorical_crossentropy`` with Keras's
``ignore_class`` (``nn.metrics`` holds them all).

The crossentropies are ``nn.losses``' functions, so they take probabilities by default
and refuse predictions outside ``[0, 1]`` by naming ``from_logits`` (Keras would clip
them silently); that check reads two numbers back on a GPU, as the loss's does.
"""

from __future__ import annotations

from typing import Any

import ember.core as em

from ._metrics_wrapper import _EPSILON, MeanMetricWrapper, float_pair
from .keras_losses import (
    _in_range,
    binary_crossentropy,
    categorical_crossentropy,
    kl_divergence,
)
from .keras_losses import (
    sparse_categorical_crossentropy as _sparse_crossentropy,
)
from .layers._masks import set_mask
from .metrics import _tensor


def poisson(y_true: Any, y_pred: Any) -> Any:
    """``mean(y_pred - y_true * log(y_pred + 1e-7))`` over the last axis (the Poisson
    negative log-likelihood up to a constant), as Keras.

    Examples:
        >>> from ember import nn
        >>> nn.metrics.poisson([[1.0, 0.0]], [[1.0, 2.0]]).numpy()
        array([1.5], dtype=float32)
    """
    y, p = float_pair("poisson", y_true, y_pred)
    return em.reduce_mean(em.subtract(p, em.multiply(y, em.log(em.add(p, _EPSILON)))),
                          axis=-1)


def sparse_categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False,
                                    ignore_class: int | None = None, axis: int = -1) -> Any:
    """Per-example cross entropy of integer labels (``nn.losses``' function), with Keras's
    ``ignore_class``: examples labelled ``ignore_class`` get 0 and are masked, so that a
    mean of them (``SparseCategoricalCrossentropy``, ``MeanMetricWrapper``) leaves them
    out.

    Examples:
        >>> from ember import nn
        >>> nn.metrics.sparse_categorical_crossentropy(
        ...     [1, 2], [[0.5, 0.5, 0.0], [0.2, 0.2, 0.6]], ignore_class=2).numpy().round(6)
        array([0.693147, 0.      ], dtype=float32)
    """
    if ignore_class is None:
        return _sparse_crossentropy(y_true, y_pred, from_logits, axis)
    if isinstance(ignore_class, bool) or not isinstance(ignore_class, int):
        raise ValueError(f"sparse_categorical_crossentropy: ignore_class must be an integer "
                         f"or None, got {ignore_class!r}")
    y, p = _tensor(y_true), _tensor(y_pred)
    if y.ndim == p.ndim and y.ndim and y.shape[-1] == 1:
        y = em.squeeze(y, -1)
    valid = em.not_equal(y, ignore_class)
    values = _sparse_crossentropy(em.where(valid, y, em.zeros_like(y)), p, from_logits, axis)
    values = em.where(valid, values, em.zeros_like(values))
    set_mask(values, valid)
    return values


def binary_focal_crossentropy(y_true: Any, y_pred: Any, apply_class_balancing: bool = False,
                              alpha: float = 0.25, gamma: float = 2.0,
                              from_logits: bool = False, label_smoothing: float = 0.0,
                              axis: int = -1) -> Any:
    """Keras's binary focal crossentropy: the binary crossentropy of each value times
    ``(1 - p_t)^gamma`` (``p_t`` the probability given to the label; with
    ``apply_class_balancing``, also ``alpha`` for positives and ``1 - alpha`` for
    negatives), averaged over ``axis``."""
    fn = "binary_focal_crossentropy"
    y, p = float_pair(fn, y_true, y_pred)
    if label_smoothing:
        y = em.add(em.multiply(y, 1.0 - label_smoothing), 0.5 * label_smoothing)
    p = em.sigmoid(p) if from_logits else _in_range(fn, p)
    q = em.clip_by_value(p, _EPSILON, 1.0 - _EPSILON)
    one_minus_y = em.subtract(1.0, y)
    bce = em.negative(em.add(em.multiply(y, em.log(q)),
                             em.multiply(one_minus_y, em.log(em.subtract(1.0, q)))))
    p_t = em.add(em.multiply(y, p), em.multiply(one_minus_y, em.subtract(1.0, p)))
    focal = em.multiply(em.pow(em.subtract(1.0, p_t), gamma), bce)
    if apply_class_balancing:
        focal = em.multiply(em.add(em.multiply(y, alpha), em.multiply(one_minus_y,
                                                                      1.0 - alpha)), focal)
    return em.reduce_mean(focal, axis=axis)


def categorical_focal_crossentropy(y_true: Any, y_pred: Any, alpha: float = 0.25,
                                   gamma: float = 2.0, from_logits: bool = False,
                                   label_smoothing: float = 0.0, axis: int = -1) -> Any:
    """Keras's categorical focal crossentropy: ``-alpha (1 - p)^gamma y log(p)`` summed
    over ``axis``, the predictions normalized to sum to 1 along it (and clipped to
    ``[1e-7, 1 - 1e-7]``)."""
    fn = "categorical_focal_crossentropy"
    y, p = float_pair(fn, y_true, y_pred)
    if label_smoothing:
        y = em.add(em.multiply(y, 1.0 - label_smoothing), label_smoothing / p.shape[axis])
    p = em.nn_ops.softmax(p, axis=axis) if from_logits else _in_range(fn, p)
    p = em.clip_by_value(em.divide(p, em.reduce_sum(p, axis=axis, keepdims=True)),
                         _EPSILON, 1.0 - _EPSILON)
    cce = em.negative(em.multiply(y, em.log(p)))
    focal = em.multiply(em.multiply(em.pow(em.subtract(1.0, p), gamma), alpha), cce)
    return em.reduce_sum(focal, axis=axis)


class BinaryCrossentropy(MeanMetricWrapper):
    """The mean of ``binary_crossentropy`` (each example's mean over its last axis).

    Args:
        name: the metric's name.
        dtype: the result's dtype (float32 by default).
        from_logits: ``y_pred`` holds logits (else probabilities).
        label_smoothing: moves the labels this far towards 0.5.
    """

    def __init__(self, name: str | None = "binary_crossentropy", dtype: Any = None,
                 from_logits: bool = False, label_smoothing: float = 0) -> None:
        super().__init__(binary_crossentropy, name, dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing)
        self.from_logits, self.label_smoothing = from_logits, label_smoothing


class CategoricalCrossentropy(MeanMetricWrapper):
    """The mean of ``categorical_crossentropy`` (one-hot or soft labels).

    Args:
        name: the metric's name.
        dtype: the result's dtype (float32 by default).
        from_logits: ``y_pred`` holds logits (else probabilities).
        label_smoothing: moves the labels this far towards uniform.
        axis: the classes' axis (only the last is supported; another is refused by name).
    """

    def __init__(self, name: str | None = "categorical_crossentropy", dtype: Any = None,
                 from_logits: bool = False, label_smoothing: float = 0,
                 axis: int = -1) -> None:
        super().__init__(categorical_crossentropy, name, dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis


class SparseCategoricalCrossentropy(MeanMetricWrapper):
    """The mean of ``sparse_categorical_crossentropy`` (integer labels).

    Args:
        name: the metric's name.
        dtype: the result's dtype (float32 by default).
        from_logits: ``y_pred`` holds logits (else probabilities).
        ignore_class: examples with this label are left out of the mean. (Keras 3.15
            leaves them out only when ``sample_weight`` is given and otherwise counts them
            as 0; ember always leaves them out, which is Keras's weighted result with
            weights of 1.)
        axis: the classes' axis (only the last is supported; another is refused by name).
    """

    def __init__(self, name: str | None = "sparse_categorical_crossentropy",
                 dtype: Any = None, from_logits: bool = False, ignore_class: int | None = None,
                 axis: int = -1) -> None:
        if ignore_class is not None and (isinstance(ignore_class, bool)
                                         or not isinstance(ignore_class, int)):
            raise ValueError(f"{name}: ignore_class must be an integer or None, got "
                             f"{ignore_class!r}")
        super().__init__(sparse_categorical_crossentropy, name, dtype, from_logits=from_logits,
                         ignore_class=ignore_class, axis=axis)
        self.from_logits, self.ignore_class, self.axis = from_logits, ignore_class, axis


class KLDivergence(MeanMetricWrapper):
    """The mean of ``kl_divergence(y_true, y_pred)``."""

    def __init__(self, name: str | None = "kl_divergence", dtype: Any = None) -> None:
        super().__init__(kl_divergence, name, dtype)


class Poisson(MeanMetricWrapper):
    """The mean of ``poisson(y_true, y_pred)``."""

    def __init__(self, name: str | None = "poisson", dtype: Any = None) -> None:
        super().__init__(poisson, name, dtype)
