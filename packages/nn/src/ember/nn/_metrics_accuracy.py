"""Keras 3's accuracy functions (``binary_accuracy``, ``categorical_accuracy``,
``sparse_categorical_accuracy``, ``top_k_categorical_accuracy``,
``sparse_top_k_categorical_accuracy``: one value per example, 1.0 for a hit) and the
top-k metrics ``TopKCategoricalAccuracy`` and ``SparseTopKCategoricalAccuracy`` (their
means; ``nn.metrics`` holds them all).

A label is in the top ``k`` when fewer than ``k`` scores are strictly above its own (ties
count for it, as Keras's ``in_top_k``), so ``k`` at or above the number of classes makes
every valid label a hit (Keras on TensorFlow and JAX; on PyTorch it fails). A class id
outside ``[0, classes)`` and a NaN score of the label are never a hit. Computed on the
device of the scores, one pass over them (no sort).
"""

from __future__ import annotations

from typing import Any

import ember.core as em

from ._metrics_wrapper import MeanMetricWrapper
from .keras_losses import match_ranks
from .metrics import _class_ids, _same_class, _tensor

_FLOATX = em.float32  # Keras's floatx: what the accuracy functions return


def _check_k(name: str, k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"{name}: k must be a positive integer, got {k!r}")
    return k


def in_top_k(ids: Any, scores: Any, k: int) -> Any:
    """Whether each class id is among the ``k`` largest of its row of ``scores`` (bool,
    ``ids``' shape, which is ``scores.shape[:-1]``)."""
    hot = em.one_hot(ids, scores.shape[-1], dtype=em.bool)  # out of range: all False
    own = em.reduce_sum(em.where(hot, scores, em.zeros_like(scores)), axis=-1,
                        keepdims=True)
    above = em.reduce_sum(em.cast(em.greater(scores, own), em.int32), axis=-1)
    valid = em.logical_and(em.reduce_any(hot, axis=-1),
                           em.logical_not(em.isnan(em.squeeze(own, -1))))
    return em.logical_and(em.less(above, k), valid)


def _integer_ids(y: Any) -> Any:
    return y if y.dtype.kind in "iu" else em.cast(y, em.int64)


def binary_accuracy(y_true: Any, y_pred: Any, threshold: float = 0.5) -> Any:
    """1.0 where ``y_true`` equals ``y_pred > threshold`` (taken in ``y_true``'s dtype, as
    Keras: a label of 0.7 matches neither), element-wise.

    Examples:
        >>> from ember import nn
        >>> nn.metrics.binary_accuracy([[1.0], [0.0]], [[0.7], [0.6]]).numpy().tolist()
        [[1.0], [0.0]]
    """
    p = _tensor(y_pred)
    y = match_ranks("binary_accuracy", _tensor(y_true), p)
    return em.cast(em.equal(y, em.cast(em.greater(p, threshold), y.dtype)), _FLOATX)


def categorical_accuracy(y_true: Any, y_pred: Any) -> Any:
    """1.0 where ``argmax(y_pred, -1)`` is ``argmax(y_true, -1)`` (one-hot labels), per
    example."""
    y, p = _tensor(y_true), _tensor(y_pred)
    if tuple(y.shape) != tuple(p.shape):
        raise ValueError(f"categorical_accuracy: y_true {tuple(y.shape)} (one-hot) and "
                         f"y_pred {tuple(p.shape)} must have one shape (integer labels take "
                         f"sparse_categorical_accuracy)")
    return em.cast(em.equal(em.argmax(y, -1), em.argmax(p, -1)), _FLOATX)


def sparse_categorical_accuracy(y_true: Any, y_pred: Any) -> Any:
    """1.0 where ``argmax(y_pred, -1)`` is the class id ``y_true`` (shape ``(N,)`` or
    ``(N, 1)``), per example."""
    y, p = _tensor(y_true), _tensor(y_pred)
    ids = _class_ids("sparse_categorical_accuracy", y, p)
    return em.cast(_same_class(em.argmax(p, -1), ids), _FLOATX)


def top_k_categorical_accuracy(y_true: Any, y_pred: Any, k: int = 5) -> Any:
    """1.0 where the class of the one-hot ``y_true`` is among the ``k`` largest scores of
    ``y_pred``, per example.

    Examples:
        >>> from ember import nn
        >>> nn.metrics.top_k_categorical_accuracy(
        ...     [[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0.0]], k=1).numpy()
        array([0., 1.], dtype=float32)
    """
    k = _check_k("top_k_categorical_accuracy", k)
    y, p = _tensor(y_true), _tensor(y_pred)
    if tuple(y.shape) != tuple(p.shape):
        raise ValueError(f"top_k_categorical_accuracy: y_true {tuple(y.shape)} (one-hot) "
                         f"and y_pred {tuple(p.shape)} must have one shape (integer labels "
                         f"take sparse_top_k_categorical_accuracy)")
    return em.cast(in_top_k(em.argmax(y, -1), p, k), _FLOATX)


def sparse_top_k_categorical_accuracy(y_true: Any, y_pred: Any, k: int = 5,
                                      from_sorted_ids: bool = False) -> Any:
    """1.0 where the class id ``y_true`` is among the ``k`` largest scores of ``y_pred``,
    per example (in ``y_true``'s shape, ``(N,)`` or ``(N, 1)``).

    With ``from_sorted_ids=True``, ``y_pred`` holds class ids sorted from the highest
    score down (``(N, M)``, ``M >= k``), and a hit is ``y_true`` among its first ``k``.

    Examples:
        >>> from ember import nn
        >>> nn.metrics.sparse_top_k_categorical_accuracy(
        ...     [2, 1], [[0.1, 0.9, 0.8], [0.05, 0.95, 0.0]], k=2).numpy()
        array([1., 1.], dtype=float32)
    """
    fn = "sparse_top_k_categorical_accuracy"
    k = _check_k(fn, k)
    y, p = _tensor(y_true), _tensor(y_pred)
    shape = tuple(y.shape)
    if y.ndim == p.ndim and y.ndim and y.shape[-1] == 1:
        y = em.squeeze(y, -1)
    if tuple(y.shape) != tuple(p.shape[:-1]):
        raise ValueError(f"{fn}: y_true must hold one class id per example, shape "
                         f"{tuple(p.shape[:-1])} or {tuple(p.shape[:-1]) + (1,)} for y_pred "
                         f"of shape {tuple(p.shape)}; got y_true of shape {shape} (one-hot "
                         f"labels take top_k_categorical_accuracy)")
    if from_sorted_ids:
        first = p[..., :k]
        hits = em.reduce_any(em.equal(em.expand_dims(em.cast(y, p.dtype), -1), first), -1)
    else:
        hits = in_top_k(_integer_ids(y), p, k)
    return em.reshape(em.cast(hits, _FLOATX), shape)


class TopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the class of the one-hot labels is among the ``k`` largest predictions.

    Args:
        k: how many of the largest predictions count (5 by default, as Keras).
        name: the metric's name.
        dtype: the result's dtype (float32 by default).

    Examples:
        >>> from ember import nn
        >>> m = nn.metrics.TopKCategoricalAccuracy(k=1)
        >>> m.update_state([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]])
        >>> float(m.result())
        0.5
    """

    def __init__(self, k: int = 5, name: str | None = "top_k_categorical_accuracy",
                 dtype: Any = None) -> None:
        _check_k(name or "top_k_categorical_accuracy", k)
        super().__init__(top_k_categorical_accuracy, name, dtype, k=k)
        self.k = k


class SparseTopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the integer labels are among the ``k`` largest predictions.

    Args:
        k: how many of the largest predictions count (5 by default, as Keras).
        name: the metric's name.
        dtype: the result's dtype (float32 by default).
        from_sorted_ids: ``y_pred`` holds class ids sorted from the highest score down
            instead of a score per class (see ``sparse_top_k_categorical_accuracy``).

    Examples:
        >>> from ember import nn
        >>> m = nn.metrics.SparseTopKCategoricalAccuracy(k=1)
        >>> m.update_state([2, 1], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]])
        >>> float(m.result())
        0.5
    """

    def __init__(self, k: int = 5, name: str | None = "sparse_top_k_categorical_accuracy",
                 dtype: Any = None, from_sorted_ids: bool = False) -> None:
        _check_k(name or "sparse_top_k_categorical_accuracy", k)
        if not isinstance(from_sorted_ids, bool):
            raise ValueError(f"{name}: from_sorted_ids must be True or False, got "
                             f"{from_sorted_ids!r}")
        super().__init__(sparse_top_k_categorical_accuracy, name, dtype, k=k,
                         from_sorted_ids=from_sorted_ids)
        self.k, self.from_sorted_ids = k, from_sorted_ids
