"""Keras-style losses: functions ``f(y_true, y_pred, ...)`` giving per-example values, and
classes ``Loss(reduction=..., name=...)`` called as ``loss(y_true, y_pred, sample_weight)``.

As Keras, ``from_logits=False`` by default: ``y_pred`` holds probabilities. Predictions
outside ``[0, 1]`` are then an error naming ``from_logits`` (Keras would clip them
silently, which trains a logits model wrongly). Re-exported by ``ember.nn.losses``.

Examples:
    >>> import ember.core as em
    >>> from ember import nn
    >>> loss = nn.losses.SparseCategoricalCrossentropy(from_logits=True)
    >>> round(float(loss(em.constant([0]), em.constant([[0.0, 0.0]]))), 6)
    0.693147
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import ember.core as em

from . import _logits
from .layers._masks import get_mask

__all__ = ["BinaryCrossentropy", "CategoricalCrossentropy", "Huber", "KLDivergence", "Loss",
           "MeanAbsoluteError", "MeanSquaredError", "SparseCategoricalCrossentropy",
           "binary_crossentropy", "categorical_crossentropy", "huber", "kl_divergence",
           "sparse_categorical_crossentropy"]

_EPS = 1e-7
REDUCTIONS = ("sum_over_batch_size", "auto", "mean", "mean_with_sample_weight", "sum",
              "none", None)
# nn.losses.Reduction's values are tf.losses' (TF 1): Reduction.SUM is "weighted_sum", which
# tf.keras code passes to a loss object (tf.keras.losses.Reduction.SUM is "sum")
_FROM_TF1 = {"weighted_sum": "sum", "weighted_sum_over_batch_size": "sum_over_batch_size",
             "weighted_mean": "mean_with_sample_weight"}


def _float(x: Any, like: Any = None) -> Any:
    t = em.convert_to_tensor(x)
    dt = like.dtype if like is not None else (t.dtype if t.dtype.kind == "f" else em.float32)
    return t if t.dtype == dt else em.cast(t, dt)


def match_ranks(fn: str, y: Any, p: Any) -> Any:
    """``y_true`` made to ``y_pred``'s shape as Keras does for a trailing axis of one
    ((N,) against (N, 1)); any other difference is an error, never a silent broadcast."""
    if y.ndim == p.ndim - 1 and p.shape[-1] == 1:
        y = em.expand_dims(y, -1)
    elif y.ndim == p.ndim + 1 and y.shape[-1] == 1:
        y = em.squeeze(y, -1)
    if tuple(y.shape) != tuple(p.shape):
        raise ValueError(f"{fn}: y_true of shape {tuple(y.shape)} does not match y_pred of "
                         f"shape {tuple(p.shape)}")
    return y


def _in_range(fn: str, p: Any) -> Any:
    """``p``, refused where a value lies outside [0, 1]: Keras would rescale logits or a
    linear layer's outputs into numbers that train nothing sensible, silently. The check is
    an op (graph mode replays it); it raises InvalidArgumentError, a ValueError."""
    return em.debugging.check_range(
        p, 0.0, 1.0, f"{fn}: y_pred holds probabilities (from_logits=False; pass "
        "from_logits=True for logits), so it")


def _probabilities(fn: str, p: Any) -> Any:
    return em.clip_by_value(_in_range(fn, p), _EPS, 1.0 - _EPS)


def _cached_logits(fn: str, y_pred: Any, from_logits: bool, kind: str) -> tuple[Any, bool]:
    """``(logits, True)`` when ``y_pred`` is the output of a ``kind`` activation, as
    TensorFlow's Keras computes the cross-entropy (see ``ember.nn._logits``); else
    ``(y_pred, from_logits)``."""
    cached = _logits.logits_of(y_pred, kind)
    if cached is None:
        return y_pred, from_logits
    if from_logits:
        warnings.warn(f"{fn} received from_logits=True, but y_pred was produced by a {kind} "
                      f"activation and so does not hold logits; the logits that activation "
                      f"was given are used", stacklevel=4)
    return cached, True


def _check_axis(fn: str, axis: int, p: Any) -> None:
    if axis not in (-1, p.ndim - 1):
        raise ValueError(f"{fn}: only axis=-1 (the last axis) is supported, got axis={axis}")


def categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False,
                             label_smoothing: float = 0.0, axis: int = -1) -> Any:
    """Per-example cross entropy of one-hot (or soft) labels, as Keras; from the logits
    when ``y_pred`` is a softmax's output (as tf.keras)."""
    y_pred, from_logits = _cached_logits("categorical_crossentropy", y_pred, from_logits,
                                         "softmax")
    p = _float(y_pred)
    _check_axis("categorical_crossentropy", axis, p)
    y = match_ranks("categorical_crossentropy", _float(y_true, p), p)
    if label_smoothing:
        y = em.add(em.multiply(y, 1.0 - label_smoothing), label_smoothing / p.shape[-1])
    if from_logits:
        return em.nn_ops.softmax_cross_entropy_with_logits(labels=y, logits=p)
    p = _in_range("categorical_crossentropy", p)  # then Keras's order: scaled, clipped
    p = em.clip_by_value(em.divide(p, em.reduce_sum(p, axis=-1, keepdims=True)), _EPS,
                         1.0 - _EPS)
    return em.negative(em.reduce_sum(em.multiply(y, em.log(p)), axis=-1))


def sparse_categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False,
                                    axis: int = -1) -> Any:
    """Per-example cross entropy of integer labels, as Keras; from the logits when
    ``y_pred`` is a softmax's output (as tf.keras)."""
    y_pred, from_logits = _cached_logits("sparse_categorical_crossentropy", y_pred,
                                         from_logits, "softmax")
    p = _float(y_pred)
    _check_axis("sparse_categorical_crossentropy", axis, p)
    y = em.convert_to_tensor(y_true)
    if y.ndim == p.ndim and y.shape[-1] == 1:  # Keras accepts labels shaped (N, 1)
        y = em.squeeze(y, -1)
    if y.dtype.kind not in "iu":
        y = em.cast(y, em.int64)
    if from_logits:
        return em.nn_ops.sparse_softmax_cross_entropy_with_logits(labels=y, logits=p)
    p = _in_range("sparse_categorical_crossentropy", p)
    p = em.clip_by_value(em.divide(p, em.reduce_sum(p, axis=-1, keepdims=True)), _EPS,
                         1.0 - _EPS)
    logp = em.log(p)
    onehot = em.one_hot(y, p.shape[-1], dtype=p.dtype)
    return em.negative(em.reduce_sum(em.multiply(onehot, logp), axis=-1))


def binary_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False,
                        label_smoothing: float = 0.0, axis: int = -1) -> Any:
    """Binary cross entropy averaged over the last axis, per example, as Keras; from the
    logits when ``y_pred`` is a sigmoid's output (as tf.keras)."""
    y_pred, from_logits = _cached_logits("binary_crossentropy", y_pred, from_logits,
                                         "sigmoid")
    p = _float(y_pred)
    _check_axis("binary_crossentropy", axis, p)
    y = match_ranks("binary_crossentropy", _float(y_true, p), p)
    if label_smoothing:
        y = em.add(em.multiply(y, 1.0 - label_smoothing), 0.5 * label_smoothing)
    if from_logits:
        per = em.nn_ops.sigmoid_cross_entropy_with_logits(labels=y, logits=p)
    else:
        p = _probabilities("binary_crossentropy", p)
        per = em.negative(em.add(em.multiply(y, em.log(p)),
                                 em.multiply(em.subtract(1.0, y), em.log(em.subtract(1.0, p)))))
    return em.reduce_mean(per, axis=-1)


def kl_divergence(y_true: Any, y_pred: Any) -> Any:
    """Per-example Kullback-Leibler divergence ``sum(y_true * log(y_true / y_pred))`` over
    the last axis, as Keras: both are distributions, clipped to ``[1e-7, 1]`` (so a zero
    in ``y_true`` adds nothing and a zero in ``y_pred`` stays finite).

    Args:
        y_true: the target distribution, values in ``[0, 1]``.
        y_pred: the predicted distribution, same shape, values in ``[0, 1]``.

    Returns:
        A tensor of shape ``y_pred.shape[:-1]``.

    Raises:
        ValueError: the shapes differ, or a value is outside ``[0, 1]`` (logits given for
            a distribution).

    Examples:
        >>> from ember import nn
        >>> round(float(nn.losses.kl_divergence([[0.5, 0.5]], [[0.25, 0.75]])[0]), 6)
        0.143841
    """
    p = _float(y_pred)
    y = match_ranks("kl_divergence", _float(y_true, p), p)
    y, p = (em.clip_by_value(em.debugging.check_range(
        t, 0.0, 1.0, f"kl_divergence: {name} holds probabilities, so it"), _EPS, 1.0)
        for name, t in (("y_true", y), ("y_pred", p)))
    return em.reduce_sum(em.multiply(y, em.log(em.divide(y, p))), axis=-1)


def _mse(y_true: Any, y_pred: Any) -> Any:
    p = _float(y_pred)
    y = match_ranks("mean_squared_error", _float(y_true, p), p)
    return em.reduce_mean(em.squared_difference(p, y), axis=-1)


def _mae(y_true: Any, y_pred: Any) -> Any:
    p = _float(y_pred)
    y = match_ranks("mean_absolute_error", _float(y_true, p), p)
    return em.reduce_mean(em.abs(em.subtract(p, y)), axis=-1)


def _huber(y_true: Any, y_pred: Any, delta: float) -> Any:
    p = _float(y_pred)
    err = em.abs(em.subtract(p, match_ranks("huber", _float(y_true, p), p)))
    quad = em.minimum(err, delta)
    return em.reduce_mean(em.add(em.multiply(em.square(quad), 0.5),
                                 em.multiply(em.subtract(err, quad), delta)), axis=-1)


def huber(y_true: Any, y_pred: Any, delta: float = 1.0) -> Any:
    """Keras's ``keras.losses.huber``: per example, the mean over the last axis of
    ``0.5 * e**2`` where ``|e| <= delta`` and ``delta * (|e| - 0.5 * delta)`` beyond.

    Examples:
        >>> from ember import nn
        >>> [round(float(v), 4) for v in nn.losses.huber([[0.0, 0.0]], [[0.5, 3.0]])]
        [1.3125]
    """
    return _huber(y_true, y_pred, float(delta))


def _same_rank(per: Any, w: Any) -> tuple[Any, Any]:
    """Keras 3's ``squeeze_or_expand_to_same_rank``: ranks one apart with a last axis of 1
    meet by expanding a rank-1 side (``(B,)`` losses with ``(B, 1)`` weights give ``(B, 1)``)
    or by squeezing that axis; further extra axes of size 1 on the weights are squeezed."""
    while w.ndim > per.ndim + 1 and w.shape[-1] == 1:
        w = em.squeeze(w, -1)
    if w.ndim == per.ndim + 1 and w.shape[-1] == 1:
        return (em.expand_dims(per, -1), w) if per.ndim == 1 else (per, em.squeeze(w, -1))
    if per.ndim == w.ndim + 1 and per.shape[-1] == 1:
        return (per, em.expand_dims(w, -1)) if w.ndim == 1 else (em.squeeze(per, -1), w)
    return per, w


def reduce_weighted(per: Any, sample_weight: Any, reduction: str | None) -> Any:
    """Keras 3's reductions: ``sum_over_batch_size`` (= ``auto`` = ``mean``) divides the
    weighted sum by the number of values, ``mean_with_sample_weight`` by the sum of the
    weights (by the number of values without weights), ``sum`` adds them, ``none`` (or
    None) keeps them."""
    w = None
    if sample_weight is not None:
        w = _float(sample_weight, per)
        per, w = _same_rank(per, w)
        try:
            fits = np.broadcast_shapes(tuple(w.shape), tuple(per.shape)) == tuple(per.shape)
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"sample_weight of shape {tuple(w.shape)} does not broadcast to "
                             f"the per-example losses' shape {tuple(per.shape)}")
        per = em.multiply(per, w)
    if reduction in ("none", None):
        return per
    total = em.reduce_sum(per)
    if reduction == "sum":
        return total
    if reduction == "mean_with_sample_weight" and w is not None:
        weights = em.reduce_sum(w)  # Keras's divide_no_nan: no weight at all gives 0
        return em.where(em.equal(weights, 0.0), em.zeros_like(total),
                        em.divide(total, em.where(em.equal(weights, 0.0), 1.0, weights)))
    return em.divide(total, float(max(int(np.prod(per.shape)), 1)))


def apply_mask(sample_weight: Any, mask: Any, reduction: str | None, like: Any) -> Any:
    """The weights a loss or metric reduces with when its predictions carry a Keras mask
    (``Embedding(mask_zero=True)``, ``Masking``, an RNN's sequences), as Keras 3's
    ``apply_mask``: for the mean reductions (``sum_over_batch_size``, ``auto``) a valid
    step weighs ``total / valid`` (the number of values over the number of real ones)
    and a padded one 0, so that dividing the weighted sum by the number of values gives
    ``sum(loss * sample_weight * mask) / valid``: the mean over the real steps (0 when
    none is). Other reductions take the mask as 0/1.

    ``sample_weight`` of fewer axes than the mask (one weight per sequence, ``(N,)``)
    weighs every step of its sequence (Keras would broadcast ``(N,)`` against the steps
    axis); a float dtype like ``like``'s."""
    if mask is None:
        return sample_weight
    m = em.cast(em.convert_to_tensor(mask), like.dtype)
    if tuple(m.shape) != tuple(like.shape)[:m.ndim]:
        raise ValueError(f"the predictions' mask of shape {tuple(m.shape)} does not match "
                         f"the values reduced, of shape {tuple(like.shape)} (a mask has the "
                         f"leading axes of what it masks)")
    while m.ndim < like.ndim:  # a step's mask covers its values on further axes
        m = em.expand_dims(m, -1)
    if reduction in ("sum_over_batch_size", "auto", "mean"):
        valid = em.reduce_sum(em.broadcast_to(m, like.shape))
        scale = em.where(em.greater(valid, 0.0),
                         em.divide(float(max(like.size, 1)), em.maximum(valid, 1.0)), 0.0)
        m = em.multiply(m, scale)
    if sample_weight is None:
        return m
    w = _float(sample_weight, like)
    while w.ndim > m.ndim and w.shape[-1] == 1:
        w = em.squeeze(w, -1)
    while w.ndim < m.ndim:
        w = em.expand_dims(w, -1)
    return em.multiply(w, m)


def _mask_of(y_pred: Any) -> Any:
    return get_mask(y_pred) if isinstance(y_pred, em.Tensor) else None


def _users_call(cls: type) -> bool:
    """Whether ``cls.call`` is the user's (ember's own losses take integer labels as they
    are: the sparse ones index by them)."""
    owner = next((k for k in cls.__mro__ if "call" in vars(k)), None)
    return owner is not None and not owner.__module__.startswith("ember.")


class Loss:
    """Base class of Keras-style loss objects.

    As Keras 3's, a loss object computes in its ``dtype`` (float32 unless given): its
    floating inputs are cast to it, so a float16 prediction (mixed precision) or a float64
    numpy array gives a float32 loss. The functions (``nn.losses.huber(y_true, y_pred)``
    ...) keep their inputs' dtype.

    Args:
        reduction: ``"sum_over_batch_size"`` (default; ``"auto"`` and ``"mean"`` are the
            same), ``"mean_with_sample_weight"`` (the weighted sum over the sum of the
            weights), ``"sum"``, or ``"none"`` / None.
        name: the loss's name.
        dtype: the dtype the loss computes in (default float32).
    """

    def __init__(self, reduction: str | None = "sum_over_batch_size", name: str | None = None,
                 dtype: Any = None) -> None:
        reduction = _FROM_TF1.get(reduction, reduction)  # type: ignore[arg-type]
        if reduction not in REDUCTIONS:
            raise ValueError(f"{type(self).__name__}: unknown reduction {reduction!r}; use one "
                             f"of {REDUCTIONS}")
        self.reduction = reduction
        self.name = name or _snake(type(self).__name__)
        if dtype is not None:
            dt = em.as_dtype(getattr(dtype, "name", dtype) if not isinstance(dtype, str)
                             else dtype)
            if dt.kind != "f":
                raise ValueError(f"{type(self).__name__}: dtype must be a floating dtype, "
                                 f"got dtype={dtype!r}")
        self._dtype = em.float32 if dtype is None else dt

    @property
    def dtype(self) -> str:
        """The dtype the loss computes in (Keras's: a name, ``"float32"``)."""
        return self._dtype.name

    def _cast(self, x: Any) -> Any:
        t = em.convert_to_tensor(x) if not isinstance(x, em.Tensor) else x
        if t.dtype.kind != "f" or t.dtype == self._dtype:
            return t
        return _logits.carry(t, em.cast(t, self._dtype))  # a softmax's output stays one

    def call(self, y_true: Any, y_pred: Any) -> Any:
        raise NotImplementedError

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        """The reduced loss; predictions that carry a mask weigh only their real steps
        (see ``apply_mask``), as Keras 3's ``Loss.__call__``."""
        mask = _mask_of(y_pred)
        truth = self._cast(y_true)
        if truth.dtype.kind in "biu" and _users_call(type(self)):
            truth = em.cast(truth, self._dtype)  # Keras 3 hands a call float labels
        per = self.call(truth, self._cast(y_pred))
        if mask is not None:
            sample_weight = apply_mask(sample_weight, mask, self.reduction, per)
        return reduce_weighted(per, sample_weight, self.reduction)

    def get_config(self) -> dict[str, Any]:
        """The constructor's arguments by name (each kept as an attribute of that
        name), so that ``cls(**config)`` makes an equal loss (``nn.saving`` saves it)."""
        import inspect

        params = inspect.signature(type(self).__init__).parameters
        dtype = {} if self._dtype == em.float32 else {"dtype": self.dtype}
        return {"reduction": self.reduction, "name": self.name, **dtype,
                **{p: self.__dict__[p] for p in params if p in self.__dict__}}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        return cls(**config)


def _snake(name: str) -> str:
    out = "".join("_" + c.lower() if c.isupper() else c for c in name)
    return out.lstrip("_")


class MeanSquaredError(Loss):
    """Mean over the last axis of ``(y_pred - y_true)^2``, reduced over examples."""

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return _mse(y_true, y_pred)


class MeanAbsoluteError(Loss):
    """Mean over the last axis of ``|y_pred - y_true|``, reduced over examples."""

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return _mae(y_true, y_pred)


class Huber(Loss):
    """Quadratic below ``delta``, linear above, averaged over the last axis."""

    def __init__(self, delta: float = 1.0, reduction: str | None = "sum_over_batch_size",
                 name: str | None = "huber_loss", dtype: Any = None) -> None:
        super().__init__(reduction, name, dtype)  # (Keras 3's default name)
        self.delta = float(delta)

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return _huber(y_true, y_pred, self.delta)


class KLDivergence(Loss):
    """Kullback-Leibler divergence of two distributions (see ``kl_divergence``), reduced
    over examples."""

    def __init__(self, reduction: str | None = "sum_over_batch_size",
                 name: str | None = "kl_divergence", dtype: Any = None) -> None:
        super().__init__(reduction, name, dtype)

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return kl_divergence(y_true, y_pred)


class _FromLogits(Loss):
    def __init__(self, from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1,
                 reduction: str | None = "sum_over_batch_size", name: str | None = None,
                 dtype: Any = None) -> None:
        super().__init__(reduction, name, dtype)
        self.from_logits, self.label_smoothing = bool(from_logits), float(label_smoothing)
        self.axis = int(axis)


class CategoricalCrossentropy(_FromLogits):
    """Cross entropy of one-hot labels (``from_logits=False``: probabilities)."""

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return categorical_crossentropy(y_true, y_pred, self.from_logits, self.label_smoothing,
                                        self.axis)


class BinaryCrossentropy(_FromLogits):
    """Binary cross entropy (``from_logits=False``: probabilities)."""

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return binary_crossentropy(y_true, y_pred, self.from_logits, self.label_smoothing,
                                   self.axis)


class _ShapedCrossentropy(Loss):
    """``compile(loss="crossentropy")`` (or ``"ce"``): Keras 3's compile picks the cross
    entropy of probabilities by the shapes, as for ``"accuracy"``: predictions of one
    column: binary; labels of fewer axes, or of one column against several: sparse
    categorical; else categorical."""

    def call(self, y_true: Any, y_pred: Any) -> Any:
        if y_pred.ndim and y_pred.shape[-1] == 1:
            return binary_crossentropy(y_true, y_pred)
        if y_true.ndim < y_pred.ndim or (y_true.ndim and y_true.shape[-1] == 1):
            return sparse_categorical_crossentropy(y_true, y_pred)
        return categorical_crossentropy(y_true, y_pred)


class SparseCategoricalCrossentropy(Loss):
    """Cross entropy of integer labels (``from_logits=False``: probabilities)."""

    def __init__(self, from_logits: bool = False, axis: int = -1,
                 reduction: str | None = "sum_over_batch_size", name: str | None = None,
                 dtype: Any = None) -> None:
        super().__init__(reduction, name, dtype)
        self.from_logits, self.axis = bool(from_logits), int(axis)

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return sparse_categorical_crossentropy(y_true, y_pred, self.from_logits, self.axis)
