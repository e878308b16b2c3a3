"""Keras 3's other losses: the focal crossentropies, the hinges, the regression losses
(``MeanAbsolutePercentageError``, ``MeanSquaredLogarithmicError``, ``LogCosh``,
``CosineSimilarity``), ``Poisson``, the segmentation losses ``Dice`` and ``Tversky``, the
metric-learning ``Circle`` and ``CategoricalGeneralizedCrossEntropy``, with their
per-example functions. Re-exported by ``ember.nn.losses``.

Each class is a ``Loss`` (``reduction``, ``name``, ``dtype``: see ``keras_losses.Loss``)
keeping its constructor's arguments as attributes of the same names, so its config is
them. The per-example functions ``nn.metrics`` already has are used as they are (Keras's
losses and metrics share them): ``hinge``, ``squared_hinge``, ``categorical_hinge``,
``mean_absolute_percentage_error``, ``mean_squared_logarithmic_error``, ``log_cosh``,
``poisson`` and the focal crossentropies' arithmetic.

As ember's other losses, predictions Keras takes as probabilities (the focal losses
without ``from_logits``, ``Dice``, ``Tversky``, ``CategoricalGeneralizedCrossEntropy``)
are refused outside ``[0, 1]``, and an argument is either honoured or refused by name.

Examples:
    >>> from ember import nn
    >>> float(nn.losses.Hinge()([[0.0, 1.0]], [[0.6, 0.4]]))
    1.100000023841858
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np

import ember.core as em

from . import metrics as _metrics  # noqa: F401  (loads the _metrics_* modules in order)
from ._metrics_hinge import categorical_hinge, hinge, squared_hinge
from ._metrics_probabilistic import binary_focal_crossentropy as _binary_focal
from ._metrics_probabilistic import categorical_focal_crossentropy as _categorical_focal
from ._metrics_probabilistic import poisson
from ._metrics_regression import (
    log_cosh,
    mean_absolute_percentage_error,
    mean_squared_logarithmic_error,
)
from ._metrics_wrapper import _EPSILON, float_pair
from .keras_losses import (
    Loss,
    _float,
    _mask_of,
    _users_call,
    apply_mask,
    reduce_weighted,
)
from .layers._masks import get_mask, set_mask

__all__ = ["BinaryFocalCrossentropy", "CategoricalFocalCrossentropy",
           "CategoricalGeneralizedCrossEntropy", "CategoricalHinge", "Circle",
           "CosineSimilarity", "Dice", "Hinge", "LogCosh", "MeanAbsolutePercentageError",
           "MeanSquaredLogarithmicError", "Poisson", "SquaredHinge", "Tversky",
           "binary_focal_crossentropy", "categorical_focal_crossentropy",
           "categorical_generalized_cross_entropy", "categorical_hinge", "circle",
           "cosine_similarity", "dice", "hinge", "log_cosh", "mean_absolute_percentage_error",
           "mean_squared_logarithmic_error", "poisson", "squared_hinge", "tversky"]


# --- arguments ----------------------------------------------------------------------------
def _number(fn: str, arg: str, value: Any, low: float | None = None,
            high: float | None = None) -> float:
    """``value`` as a float, refused (naming ``arg``) unless a finite real number in
    ``[low, high]``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) \
            or not math.isfinite(float(value)):
        raise ValueError(f"{fn}: {arg} must be a real number, got {arg}={value!r}")
    v = float(value)
    if high is None and low is not None and v < low:
        raise ValueError(f"{fn}: {arg} must be >= {low}, got {arg}={value!r}")
    if (low is not None and v < low) or (high is not None and v > high):
        raise ValueError(f"{fn}: {arg} must be in [{low}, {high}], got {arg}={value!r}")
    return v


def _flag(fn: str, arg: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{fn}: {arg} must be True or False, got {arg}={value!r}")
    return bool(value)


def _int_axis(fn: str, axis: Any) -> int:
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, numbers.Integral):
        raise ValueError(f"{fn}: axis must be an integer, got axis={axis!r}")
    return int(axis)


def _axes(fn: str, axis: Any) -> Any:
    """None (every axis), an integer, or a tuple of them (a list is kept: a config read
    back from JSON has one)."""
    if axis is None:
        return None
    if isinstance(axis, (list, tuple)):
        return type(axis)(_int_axis(fn, a) for a in axis)
    return _int_axis(fn, axis)


def _check_axes(fn: str, axis: Any, rank: int) -> None:
    for a in ([] if axis is None else axis if isinstance(axis, (list, tuple)) else [axis]):
        if not -rank <= a < rank:
            raise ValueError(f"{fn}: axis {a} is out of range for y_pred of rank {rank}")


def _alpha_list(fn: str, alpha: Any) -> Any:
    """Categorical focal's ``alpha``: a number, or one weight per class (a list)."""
    if isinstance(alpha, (list, tuple, np.ndarray)):
        values = [_number(fn, "alpha", a) for a in np.asarray(alpha).reshape(-1).tolist()]
        if not values:
            raise ValueError(f"{fn}: alpha must be a number or one weight per class, got "
                             f"alpha={alpha!r}")
        return values if not isinstance(alpha, tuple) else tuple(values)
    return _number(fn, "alpha", alpha)


def _smoothing(fn: str, label_smoothing: Any) -> float:
    return _number(fn, "label_smoothing", label_smoothing, 0.0, 1.0)


# --- per-example functions ----------------------------------------------------------------
def binary_focal_crossentropy(y_true: Any, y_pred: Any, apply_class_balancing: bool = False,
                              alpha: float = 0.25, gamma: float = 2.0,
                              from_logits: bool = False, label_smoothing: float = 0.0,
                              axis: int = -1) -> Any:
    """Keras's ``keras.losses.binary_focal_crossentropy``: each value's binary
    crossentropy (predictions clipped to ``[1e-7, 1 - 1e-7]``) times the focal factor
    ``(1 - p_t)^gamma``, ``p_t`` the probability given to the label; with
    ``apply_class_balancing``, also times ``alpha`` for a label of 1 and ``1 - alpha``
    for 0; then the mean over ``axis``.

    Args:
        y_true: labels, 0 or 1 (smoothed towards 0.5 by ``label_smoothing``).
        y_pred: probabilities (``from_logits=False``: refused outside ``[0, 1]``) or
            logits, the shape of ``y_true``.
        apply_class_balancing: weigh the classes by ``alpha`` and ``1 - alpha``.
        alpha: the weight of class 1, in ``[0, 1]``. Used only with
            ``apply_class_balancing`` (Keras ignores it otherwise; here a value other
            than the default is refused without it).
        gamma: the focusing parameter, ``>= 0`` (0: the binary crossentropy).
        from_logits: ``y_pred`` holds logits.
        label_smoothing: in ``[0, 1]``.
        axis: the axis the mean is taken over.

    Returns:
        A tensor of ``y_pred``'s shape without ``axis``.

    Examples:
        >>> from ember import nn
        >>> nn.losses.binary_focal_crossentropy([[0, 1], [0, 0]],
        ...                                     [[0.6, 0.4], [0.4, 0.6]]).numpy().round(3)
        array([0.33 , 0.206], dtype=float32)
    """
    fn = "binary_focal_crossentropy"
    balanced = _flag(fn, "apply_class_balancing", apply_class_balancing)
    a = _number(fn, "alpha", alpha, 0.0, 1.0)
    if not balanced and a != 0.25:
        raise ValueError(f"{fn}: alpha={alpha!r} weighs the classes only with "
                         f"apply_class_balancing=True (Keras would ignore it)")
    return _binary_focal(y_true, y_pred, apply_class_balancing=balanced, alpha=a,
                         gamma=_number(fn, "gamma", gamma, 0.0),
                         from_logits=_flag(fn, "from_logits", from_logits),
                         label_smoothing=_smoothing(fn, label_smoothing),
                         axis=_int_axis(fn, axis))


def categorical_focal_crossentropy(y_true: Any, y_pred: Any, alpha: Any = 0.25,
                                   gamma: float = 2.0, from_logits: bool = False,
                                   label_smoothing: float = 0.0, axis: int = -1) -> Any:
    """Keras's ``keras.losses.categorical_focal_crossentropy``: with the predictions
    made to sum to 1 along ``axis`` (a softmax first when ``from_logits``) and clipped to
    ``[1e-7, 1 - 1e-7]``, the sum over ``axis`` of ``-alpha (1 - p)^gamma y log(p)``.

    Args:
        y_true: one-hot (or soft) labels, smoothed towards uniform by
            ``label_smoothing``.
        y_pred: probabilities (refused outside ``[0, 1]``) or logits.
        alpha: the weight of every class, or a list of one weight per class (``axis``
            must then be the last).
        gamma: the focusing parameter, ``>= 0``.
        from_logits: ``y_pred`` holds logits.
        label_smoothing: in ``[0, 1]``.
        axis: the classes' axis. A single class warns, as Keras.

    Examples:
        >>> from ember import nn
        >>> nn.losses.categorical_focal_crossentropy(
        ...     [[0, 1, 0], [0, 0, 1]], [[0.05, 0.9, 0.05], [0.1, 0.85, 0.05]]).numpy().round(5)
        array([2.6000e-04, 6.7591e-01], dtype=float32)
    """
    fn = "categorical_focal_crossentropy"
    ax = _int_axis(fn, axis)
    weights = _alpha_list(fn, alpha)
    p = _float(y_pred if isinstance(y_pred, em.Tensor) else em.convert_to_tensor(y_pred))
    _check_axes(fn, ax, p.ndim)
    if p.shape[ax] == 1:
        warnings.warn(f"In loss {fn}, expected y_pred.shape to be (batch_size, num_classes) "
                      f"with num_classes > 1. Received: y_pred.shape={tuple(p.shape)}. "
                      f"Consider using 'binary_crossentropy' if you only have 2 classes.",
                      SyntaxWarning, stacklevel=2)
    if isinstance(weights, (list, tuple)):
        if ax % p.ndim != p.ndim - 1:
            raise ValueError(f"{fn}: alpha as one weight per class needs the classes on "
                             f"the last axis, got axis={axis}")
        if len(weights) != p.shape[-1]:
            raise ValueError(f"{fn}: alpha has {len(weights)} weights for "
                             f"{p.shape[-1]} classes")
        with em.device(p.device):
            weights = em.constant(np.asarray(weights, dtype=p.dtype))
    return _categorical_focal(y_true, p, alpha=weights, gamma=_number(fn, "gamma", gamma, 0.0),
                              from_logits=_flag(fn, "from_logits", from_logits),
                              label_smoothing=_smoothing(fn, label_smoothing), axis=ax)


def _l2_normalize(x: Any, axis: int) -> Any:
    """Keras 3's ``ops.normalize(x, axis)``: ``x * rsqrt(max(sum(x^2), 1e-7^2))``, the
    squared norm clamped before the ``rsqrt`` so that a zero vector stays zero with a
    finite gradient."""
    square_sum = em.reduce_sum(em.square(x), axis=axis, keepdims=True)
    return em.multiply(x, em.rsqrt(em.maximum(square_sum, _EPSILON * _EPSILON)))


def cosine_similarity(y_true: Any, y_pred: Any, axis: int = -1) -> Any:
    """Keras's ``keras.losses.cosine_similarity``: minus the cosine of the angle between
    ``y_true`` and ``y_pred`` along ``axis`` (-1 for the same direction, 0 where either
    is a zero vector). ``nn.metrics.cosine_similarity`` is the cosine itself.

    Examples:
        >>> from ember import nn
        >>> nn.losses.cosine_similarity([[0., 1.], [1., 1.], [1., 1.]],
        ...                             [[1., 0.], [1., 1.], [-1., -1.]]).numpy().round(6)
        array([-0., -1.,  1.], dtype=float32)
    """
    fn = "cosine_similarity"
    ax = _int_axis(fn, axis)
    y, p = float_pair(fn, y_true, y_pred)
    _check_axes(fn, ax, p.ndim)
    return em.negative(em.reduce_sum(em.multiply(_l2_normalize(y, ax), _l2_normalize(p, ax)),
                                     axis=ax))


def _probabilities(fn: str, p: Any) -> Any:
    """``p``, refused where a value lies outside [0, 1] (for a loss without
    ``from_logits``; see ``keras_losses._in_range``)."""
    return em.debugging.check_range(p, 0.0, 1.0, f"{fn}: y_pred holds probabilities, so it")


def _segmentation_pair(fn: str, y_true: Any, y_pred: Any, axis: Any) -> tuple[Any, Any]:
    y, p = float_pair(fn, y_true, y_pred)
    _check_axes(fn, axis, p.ndim)
    return y, _probabilities(fn, p)


def _sum(x: Any, axis: Any) -> Any:
    return em.reduce_sum(x, axis=None if axis is None else
                         list(axis) if isinstance(axis, (list, tuple)) else axis)


def dice(y_true: Any, y_pred: Any, axis: Any = None) -> Any:
    """Keras's ``keras.losses.dice``: ``1 - 2 sum(y_true y_pred) / (sum(y_true) +
    sum(y_pred) + 1e-7)``, the sums over ``axis`` (None: every axis, one number for the
    batch; ``(1, 2, 3)`` for images: one per example).

    Args:
        y_true: the target masks.
        y_pred: the predicted masks, probabilities (refused outside ``[0, 1]``).
        axis: None, an axis or a tuple of axes.

    Examples:
        >>> from ember import nn
        >>> y = [[[[1.0], [1.0]], [[0.0], [0.0]]], [[[1.0], [1.0]], [[0.0], [0.0]]]]
        >>> p = [[[[0.0], [1.0]], [[0.0], [1.0]]], [[[0.4], [0.0]], [[0.0], [0.9]]]]
        >>> nn.losses.dice(y, p, axis=(1, 2, 3)).numpy().round(6)
        array([0.5     , 0.757576], dtype=float32)
    """
    ax = _axes("dice", axis)
    y, p = _segmentation_pair("dice", y_true, y_pred, ax)
    intersection = _sum(em.multiply(y, p), ax)
    denom = em.add(em.add(_sum(y, ax), _sum(p, ax)), _EPSILON)
    return em.subtract(1.0, em.divide(em.multiply(intersection, 2.0), denom))


def tversky(y_true: Any, y_pred: Any, alpha: float = 0.5, beta: float = 0.5,
            axis: Any = None) -> Any:
    """Keras's ``keras.losses.tversky``, computed as Keras 3 computes it: ``1 - TP / (TP +
    alpha A + beta B + 1e-7)`` with ``TP = sum(y_pred y_true)``, ``A = sum((1 - y_pred)
    y_true)`` (the false negatives) and ``B = sum(y_pred (1 - y_true))`` (the false
    positives) over ``axis`` (None: every axis). Keras's docstring and Salehi et al. call
    ``alpha`` the false positives' weight, but its code weighs the false negatives by it;
    ember gives Keras's numbers, so a model ported from Keras trains the same. To weigh
    false positives by ``a`` and false negatives by ``b``, pass ``alpha=b, beta=a``.
    ``alpha = beta = 0.5`` is the Dice loss (without its epsilon's factor 2).

    Args:
        y_true: the target masks.
        y_pred: the predicted masks, probabilities (refused outside ``[0, 1]``).
        alpha: the weight of ``sum((1 - y_pred) y_true)`` (Keras's ``fp``).
        beta: the weight of ``sum(y_pred (1 - y_true))`` (Keras's ``fn``).
        axis: None, an axis or a tuple of axes.

    Examples:
        >>> from ember import nn
        >>> round(float(nn.losses.tversky([[1.0, 0.0]], [[0.5, 0.5]], alpha=0.3,
        ...                               beta=0.7)), 6)
        0.5
    """
    fn = "tversky"
    a, b = _number(fn, "alpha", alpha), _number(fn, "beta", beta)
    ax = _axes(fn, axis)
    y, p = _segmentation_pair(fn, y_true, y_pred, ax)
    tp = _sum(em.multiply(p, y), ax)
    missed = _sum(em.multiply(em.subtract(1.0, p), y), ax)  # Keras's fp, weighed by alpha
    extra = _sum(em.multiply(p, em.subtract(1.0, y)), ax)  # Keras's fn, weighed by beta
    denom = em.add(em.add(em.add(tp, em.multiply(missed, a)), em.multiply(extra, b)), _EPSILON)
    return em.subtract(1.0, em.divide(tp, denom))


def _labels(fn: str, arg: str, labels: Any) -> Any:
    t = labels if isinstance(labels, em.Tensor) else em.convert_to_tensor(labels)
    if t.ndim == 2 and t.shape[-1] == 1:
        t = em.reshape(t, (-1,))
    if t.ndim != 1:
        raise ValueError(f"{fn}: {arg} must be integer labels of shape (batch_size,) or "
                         f"(batch_size, 1), got shape {tuple(t.shape)}")
    return em.cast(t, em.int32)


def circle(y_true: Any, y_pred: Any, ref_labels: Any = None, ref_embeddings: Any = None,
           remove_diagonal: bool = True, gamma: float = 80, margin: float = 0.4) -> Any:
    """Keras's ``keras.losses.circle``: the Circle loss (Sun et al., 2020) of each
    embedding against the reference embeddings, on cosine distances ``d = max(1 -
    y_pred @ ref_embeddings^T, 0)``: ``softplus(logsumexp(-gamma a_p (margin - d)) +
    logsumexp(gamma a_n (1 - margin - d)))`` over the positives (same label; itself left
    out with ``remove_diagonal``) and the negatives, with the weights ``a_p = max(margin +
    d, 0)`` and ``a_n = max(1 + margin - d, 0)``.

    The values carry a mask, as Keras's: ``value > 0``, so that a row without a positive
    or a negative (its value 0) is left out of the mean a ``Circle`` loss takes.

    Args:
        y_true: integer labels, ``(batch_size,)`` or ``(batch_size, 1)``.
        y_pred: L2-normalized embeddings, ``(batch_size, dim)`` (not normalized here).
        ref_labels: the reference embeddings' labels (default: ``y_true``).
        ref_embeddings: the reference embeddings (default: ``y_pred``).
        remove_diagonal: leave the pairs ``(i, i)`` out of the positives.
        gamma: the scale of the similarities.
        margin: the relaxation factor.

    Returns:
        A tensor of shape ``(batch_size,)``.
    """
    fn = "circle"
    g, m = _number(fn, "gamma", gamma), _number(fn, "margin", margin)
    diagonal = _flag(fn, "remove_diagonal", remove_diagonal)
    p = _float(y_pred if isinstance(y_pred, em.Tensor) else em.convert_to_tensor(y_pred))
    if p.ndim != 2:
        raise ValueError(f"{fn}: y_pred must be embeddings of shape (batch_size, dim), got "
                         f"shape {tuple(p.shape)}")
    y = _labels(fn, "y_true", y_true)
    ref = p if ref_embeddings is None else _float(em.convert_to_tensor(ref_embeddings), p)
    ref_y = y if ref_labels is None else _labels(fn, "ref_labels", ref_labels)
    if ref.ndim != 2 or ref.shape[1] != p.shape[1]:
        raise ValueError(f"{fn}: ref_embeddings of shape {tuple(ref.shape)} do not match "
                         f"y_pred's embeddings of shape {tuple(p.shape)}")
    if y.shape[0] != p.shape[0] or ref_y.shape[0] != ref.shape[0]:
        raise ValueError(f"{fn}: {y.shape[0]} labels for {p.shape[0]} embeddings, "
                         f"{ref_y.shape[0]} reference labels for {ref.shape[0]} reference "
                         f"embeddings")
    distances = em.maximum(em.subtract(1.0, em.matmul(p, em.transpose(ref))), 0.0)
    positive = em.equal(em.reshape(y, (-1, 1)), em.reshape(ref_y, (1, -1)))
    negative = em.logical_not(positive)
    if diagonal:
        with em.device(p.device):
            eye = em.eye(p.shape[0], ref.shape[0], dtype=em.bool)
        positive = em.logical_and(positive, em.logical_not(eye))
    pos_weights = em.maximum(em.multiply(em.add(distances, m),
                                         em.cast(positive, distances.dtype)), 0.0)
    neg_weights = em.maximum(em.multiply(em.subtract(1.0 + m, distances),
                                         em.cast(negative, distances.dtype)), 0.0)
    pos = em.multiply(em.multiply(pos_weights, em.subtract(m, distances)), -g)
    neg = em.multiply(em.multiply(neg_weights, em.subtract(1.0 - m, distances)), g)
    # Keras puts -inf where a pair is not a positive (a negative); a finite floor gives
    # the same values (an empty row's softplus is 0) without inf - inf in logsumexp
    floor = -1e30 if distances.dtype.itemsize >= 4 else -1e4
    p_loss = em.reduce_logsumexp(em.where(positive, pos, floor), axis=1)
    n_loss = em.reduce_logsumexp(em.where(negative, neg, floor), axis=1)
    values = em.softplus(em.add(p_loss, n_loss))
    set_mask(values, em.greater(values, 0.0))
    return values


def categorical_generalized_cross_entropy(y_true: Any, y_pred: Any, q: float) -> Any:
    """Keras's ``keras.losses.categorical_generalized_cross_entropy`` (Zhang and Sabuncu,
    2018): ``(1 - p^q) / q``, ``p`` the probability given to the true class.

    Args:
        y_true: integer labels, ``(batch_size,)`` or ``(batch_size, 1)`` (Keras's
            ``(batch_size, 1)`` would broadcast against the classes; here it is taken as
            ``(batch_size,)``), each in ``[0, num_classes)``.
        y_pred: probabilities ``(batch_size, num_classes)`` (refused outside ``[0, 1]``).
        q: the noise parameter, ``> 0`` (towards 0: the crossentropy; 1: the mean
            absolute error).

    Examples:
        >>> from ember import nn
        >>> nn.losses.categorical_generalized_cross_entropy(
        ...     [0, 1], [[0.25, 0.75], [0.36, 0.64]], q=0.5).numpy().round(6)
        array([1. , 0.4], dtype=float32)
    """
    fn = "categorical_generalized_cross_entropy"
    qv = _number(fn, "q", q)
    if qv <= 0.0:
        raise ValueError(f"{fn}: q must be > 0, got q={q!r}")
    p = _float(y_pred if isinstance(y_pred, em.Tensor) else em.convert_to_tensor(y_pred))
    if p.ndim != 2:
        raise ValueError(f"{fn}: y_pred must be probabilities of shape (batch_size, "
                         f"num_classes), got shape {tuple(p.shape)}")
    y = _labels(fn, "y_true", y_true)
    if y.shape[0] != p.shape[0]:
        raise ValueError(f"{fn}: {y.shape[0]} labels for {p.shape[0]} predictions")
    classes = p.shape[-1]
    y = em.debugging.check_range(y, 0, classes - 1, f"{fn}: y_true holds class indices of "
                                 f"{classes} classes, so it")
    probability = em.reduce_sum(em.multiply(_probabilities(fn, p), em.one_hot(y, classes,
                                                                          dtype=p.dtype)),
                                axis=-1)
    return em.divide(em.subtract(1.0, em.pow(probability, qv)), qv)


# --- Loss classes -------------------------------------------------------------------------
class BinaryFocalCrossentropy(Loss):
    """Keras's ``BinaryFocalCrossentropy``: ``binary_focal_crossentropy`` reduced over
    the examples (arguments as there).

    Examples:
        >>> from ember import nn
        >>> loss = nn.losses.BinaryFocalCrossentropy(gamma=2, from_logits=True)
        >>> round(float(loss([0, 1, 0, 0], [-18.6, 0.51, 2.94, -12.8])), 3)
        0.691
    """

    def __init__(self, apply_class_balancing: bool = False, alpha: float = 0.25,
                 gamma: float = 2.0, from_logits: bool = False, label_smoothing: float = 0.0,
                 axis: int = -1, reduction: str | None = "sum_over_batch_size",
                 name: str | None = "binary_focal_crossentropy", dtype: Any = None) -> None:
        super().__init__(reduction, name, dtype)
        fn = type(self).__name__
        self.apply_class_balancing = _flag(fn, "apply_class_balancing", apply_class_balancing)
        self.alpha = _number(fn, "alpha", alpha, 0.0, 1.0)
        if not self.apply_class_balancing and self.alpha != 0.25:
            raise ValueError(f"{fn}: alpha={alpha!r} weighs the classes only with "
                             f"apply_class_balancing=True (Keras would ignore it)")
        self.gamma = _number(fn, "gamma", gamma, 0.0)
        self.from_logits = _flag(fn, "from_logits", from_logits)
        self.label_smoothing = _smoothing(fn, label_smoothing)
        self.axis = _int_axis(fn, axis)

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return binary_focal_crossentropy(y_true, y_pred, self.apply_class_balancing,
                                         self.alpha, self.gamma, self.from_logits,
                                         self.label_smoothing, self.axis)


class CategoricalFocalCrossentropy(Loss):
    """Keras's ``CategoricalFocalCrossentropy``: ``categorical_focal_crossentropy``
    reduced over the examples (arguments as there; ``alpha`` a number or a list of one
    weight per class).

    Examples:
        >>> from ember import nn
        >>> loss = nn.losses.CategoricalFocalCrossentropy()
        >>> round(float(loss([[0., 1., 0.], [0., 0., 1.]],
        ...                  [[0.05, 0.95, 0], [0.1, 0.8, 0.1]])), 5)
        0.23315
    """

    def __init__(self, alpha: Any = 0.25, gamma: float = 2.0, from_logits: bool = False,
                 label_smoothing: float = 0.0, axis: int = -1,
                 reduction: str | None = "sum_over_batch_size",
                 name: str | None = "categorical_focal_crossentropy",
                 dtype: Any = None) -> None:
        super().__init__(reduction, name, dtype)
        fn = type(self).__name__
        self.alpha = _alpha_list(fn, alpha)
        self.gamma = _number(fn, "gamma", gamma, 0.0)
        self.from_logits = _flag(fn, "from_logits", from_logits)
        self.label_smoothing = _smoothing(fn, label_smoothing)
        self.axis = _int_axis(fn, axis)

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return categorical_focal_crossentropy(y_true, y_pred, self.alpha, self.gamma,
                                              self.from_logits, self.label_smoothing,
                                              self.axis)


class _Plain(Loss):
    """A loss of a per-example function without arguments, ``_fn``."""

    _fn: Any = None

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return type(self)._fn(y_true, y_pred)


class Hinge(_Plain):
    """Keras's ``Hinge``: ``hinge`` (``mean(max(1 - y_true y_pred, 0))`` over the last
    axis; labels all 0 or 1 are taken as -1 and 1) reduced over the examples.

    Args:
        reduction: see ``Loss``.
        name: default ``"hinge"``.
        dtype: see ``Loss``.
    """

    _fn = staticmethod(hinge)

    def __init__(self, reduction: str | None = "sum_over_batch_size",
                 name: str | None = "hinge", dtype: Any = None) -> None:
        super().__init__(reduction, name, dtype)


class SquaredHinge(_Plain):
    """Keras's ``SquaredHinge``: ``squared_hinge`` (``mean(max(1 - y_true y_pred, 0)^2)``
    over the last axis; 0/1 labels as -1/1) reduced over the examples."""

    _fn = staticmethod(squared_hinge)

    def __init__(self, reduction: str | None = "sum_over_batch_size",
                 name: str | None = "squared_hinge", dtype: Any = None) -> None:
        super().__init__(reduction, name, dtype)


class CategoricalHinge(_Plain):
    """Keras's ``CategoricalHinge``: ``categorical_hinge`` (``max(max((1 - y_true)
    y_pred) - sum(y_true y_pred) + 1, 0)``, one-hot labels) reduced over the examples."""

    _fn = staticmethod(categorical_hinge)

    def __init__(self, reduction: str | None = "sum_over_batch_size",
                 name: str | None = "categorical_hinge", dtype: Any = None) -> None:
        super().__init__(reduction, name, dtype)


class LogCosh(_Plain):
    """Keras's ``LogCosh``: ``log_cosh`` (``mean(log(cosh(y_pred - y_true)))`` over the
    last axis) reduced over the examples."""

    _fn = staticmethod(log_cosh)

    def __init__(self, reduction: str | None = "sum_over_batch_size",
                 name: str | None = "log_cosh", dtype: Any = None) -> None:
        super().__init__(reduction, name, dtype)


class MeanAbsolutePercentageError(_Plain):
    """Keras's ``MeanAbsolutePercentageError``: ``mean_absolute_percentage_error``
    (``100 mean(|y_true - y_pred| / max(|y_true|, 1e-7))`` over the last axis) reduced
    over the examples."""

    _fn = staticmethod(mean_absolute_percentage_error)

    def __init__(self, reduction: str | None = "sum_over_batch_size",
                 name: str | None = "mean_absolute_percentage_error",
                 dtype: Any = None) -> None:
        super().__init__(reduction, name, dtype)


class MeanSquaredLogarithmicError(_Plain):
    """Keras's ``MeanSquaredLogarithmicError``: ``mean_squared_logarithmic_error``
    (``mean((log(max(y_pred, 1e-7) + 1) - log(max(y_true, 1e-7) + 1))^2)`` over the last
    axis) reduced over the examples."""

    _fn = staticmethod(mean_squared_logarithmic_error)

    def __init__(self, reduction: str | None = "sum_over_batch_size",
                 name: str | None = "mean_squared_logarithmic_error",
                 dtype: Any = None) -> None:
        super().__init__(reduction, name, dtype)


class Poisson(_Plain):
    """Keras's ``Poisson``: ``poisson`` (``mean(y_pred - y_true log(y_pred + 1e-7))`` over
    the last axis) reduced over the examples."""

    _fn = staticmethod(poisson)

    def __init__(self, reduction: str | None = "sum_over_batch_size",
                 name: str | None = "poisson", dtype: Any = None) -> None:
        super().__init__(reduction, name, dtype)


class CosineSimilarity(Loss):
    """Keras's ``CosineSimilarity``: ``cosine_similarity`` (minus the cosine along
    ``axis``) reduced over the examples.

    Args:
        axis: the features' axis (default -1).
        reduction, name, dtype: see ``Loss`` (name default ``"cosine_similarity"``).
    """

    def __init__(self, axis: int = -1, reduction: str | None = "sum_over_batch_size",
                 name: str | None = "cosine_similarity", dtype: Any = None) -> None:
        super().__init__(reduction, name, dtype)
        self.axis = _int_axis(type(self).__name__, axis)

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return cosine_similarity(y_true, y_pred, self.axis)


class Dice(Loss):
    """Keras's ``Dice``: ``dice`` over ``axis`` (None: one value for the whole batch,
    which a ``sample_weight`` per example cannot weigh: refused), reduced.

    Args:
        reduction, name, dtype: see ``Loss`` (name default ``"dice"``).
        axis: None, an axis or a tuple of axes (Keras's order: after ``name``).
    """

    def __init__(self, reduction: str | None = "sum_over_batch_size",
                 name: str | None = "dice", axis: Any = None, dtype: Any = None) -> None:
        super().__init__(reduction, name, dtype)
        self.axis = _axes(type(self).__name__, axis)

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return dice(y_true, y_pred, self.axis)


class Tversky(Loss):
    """Keras's ``Tversky``: ``tversky`` over ``axis`` (None: one value for the batch),
    reduced.

    Args:
        alpha: the weight of ``sum((1 - y_pred) y_true)`` (default 0.5; Keras's ``fp``:
            see ``tversky`` for why it counts the false negatives).
        beta: the weight of ``sum(y_pred (1 - y_true))`` (default 0.5; Keras's ``fn``).
        reduction, name, dtype: see ``Loss`` (name default ``"tversky"``).
        axis: None, an axis or a tuple of axes.
    """

    def __init__(self, alpha: float = 0.5, beta: float = 0.5,
                 reduction: str | None = "sum_over_batch_size", name: str | None = "tversky",
                 axis: Any = None, dtype: Any = None) -> None:
        super().__init__(reduction, name, dtype)
        fn = type(self).__name__
        self.alpha, self.beta = _number(fn, "alpha", alpha), _number(fn, "beta", beta)
        self.axis = _axes(fn, axis)

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return tversky(y_true, y_pred, self.alpha, self.beta, self.axis)


class Circle(Loss):
    """Keras's ``Circle``: ``circle`` of each embedding against the batch's, reduced over
    the rows that have both a positive and a negative (the values' mask, which Keras 3's
    ``Loss`` combines with the predictions' own).

    Args:
        gamma: the scale of the similarities (default 80).
        margin: the relaxation factor (default 0.4).
        remove_diagonal: leave each embedding out of its own positives (default True).
        reduction, name, dtype: see ``Loss`` (name default ``"circle"``).
    """

    def __init__(self, gamma: float = 80.0, margin: float = 0.4, remove_diagonal: bool = True,
                 reduction: str | None = "sum_over_batch_size", name: str | None = "circle",
                 dtype: Any = None) -> None:
        super().__init__(reduction, name, dtype)
        fn = type(self).__name__
        self.gamma, self.margin = _number(fn, "gamma", gamma), _number(fn, "margin", margin)
        self.remove_diagonal = _flag(fn, "remove_diagonal", remove_diagonal)

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return circle(y_true, y_pred, remove_diagonal=self.remove_diagonal, gamma=self.gamma,
                      margin=self.margin)

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        """The reduced loss, over the values' mask and the predictions' (as Keras 3's
        ``Loss.__call__``: ``in_mask & out_mask``)."""
        in_mask = _mask_of(y_pred)
        truth = self._cast(y_true)
        if truth.dtype.kind in "biu" and _users_call(type(self)):
            truth = em.cast(truth, self._dtype)
        per = self.call(truth, self._cast(y_pred))
        out_mask = get_mask(per) if isinstance(per, em.Tensor) else None
        masks = [em.cast(m, em.bool) for m in (in_mask, out_mask) if m is not None]
        if masks:
            mask = masks[0] if len(masks) == 1 else em.logical_and(masks[0], masks[1])
            sample_weight = apply_mask(sample_weight, mask, self.reduction, per)
        return reduce_weighted(per, sample_weight, self.reduction)


class CategoricalGeneralizedCrossEntropy(Loss):
    """Keras's ``CategoricalGeneralizedCrossEntropy``:
    ``categorical_generalized_cross_entropy`` (integer labels, probabilities) reduced over
    the examples.

    Args:
        q: the noise parameter, in ``(0, 1)`` (default 0.5).
        reduction, name, dtype: see ``Loss`` (name default
            ``"categorical_generalized_cross_entropy"``).

    Examples:
        >>> from ember import nn
        >>> loss = nn.losses.CategoricalGeneralizedCrossEntropy()
        >>> round(float(loss([0, 1], [[0.25, 0.75], [0.36, 0.64]])), 6)
        0.7
    """

    def __init__(self, q: float = 0.5, reduction: str | None = "sum_over_batch_size",
                 name: str | None = "categorical_generalized_cross_entropy",
                 dtype: Any = None) -> None:
        fn = type(self).__name__
        value = _number(fn, "q", q)
        if not 0.0 < value < 1.0:
            raise ValueError(f"{fn}: q must be in the interval (0, 1), got q={q!r}")
        super().__init__(reduction, name, dtype)
        self.q = value

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return categorical_generalized_cross_entropy(y_true, y_pred, self.q)
