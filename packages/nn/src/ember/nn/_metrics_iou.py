"""Keras 3's intersection-over-union metrics: ``IoU``, ``MeanIoU``, ``BinaryIoU``,
``OneHotIoU`` and ``OneHotMeanIoU`` (``nn.metrics`` holds them).

What they count, as Keras's: a ``(num_classes, num_classes)`` confusion matrix of true
class (rows) against predicted class (columns), each pair weighted by ``sample_weight``;
pairs with a class outside ``[0, num_classes)`` on either side, or a true class equal to
``ignore_class``, are left out. A class's IoU is ``tp / (tp + fp + fn)`` (Keras adds 1e-7
to the denominator); the result is the mean over the target classes that occur at all
(in the labels or the predictions), 0 when none does.

Class ids are integers: float labels and predictions (of the sparse forms) are cut to
integers as Keras casts them; one-hot forms (``sparse_y_true=False`` /
``sparse_y_pred=False``) are turned into ids by ``argmax`` along ``axis``.

``dtype``: Keras keeps the matrix in integers by default (``dtype="int32"``), so that
fractional weights are cut to integers (it warns). ember keeps it in float64 whatever
``dtype`` says, so weights count as they are; an integer ``dtype`` cuts the weights to
integers as Keras's does (a config Keras saved says ``"int32"``). The result is float32,
or the float ``dtype`` given.

The matrix stays on the device of the predictions: an update adds the batch's pairs with
one matrix product of the one-hot classes and reads nothing back.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.core as em

from ._metrics_wrapper import _EPSILON
from .metrics import _STATE_DTYPE, Metric, _tensor


def _check_classes(name: str, num_classes: Any) -> int:
    if isinstance(num_classes, bool) or not isinstance(num_classes, (int, np.integer)) \
            or num_classes < 1:
        raise ValueError(f"{name}: num_classes must be a positive integer, got "
                         f"{num_classes!r}")
    return int(num_classes)


class IoU(Metric):
    """The mean intersection-over-union of the classes ``target_class_ids``.

    Args:
        num_classes: the number of classes.
        target_class_ids: the classes whose IoU is averaged (ids in
            ``[0, num_classes)``).
        name: the metric's name.
        dtype: see the module (an integer dtype cuts weights to integers, as Keras).
        ignore_class: a label to leave out (a "void" class), or None.
        sparse_y_true: ``y_true`` holds class ids (True) or scores per class (False,
            argmax along ``axis``).
        sparse_y_pred: the same for ``y_pred``.
        axis: the classes' axis of the non-sparse forms.

    Examples:
        >>> from ember import nn
        >>> m = nn.metrics.IoU(num_classes=2, target_class_ids=[0])
        >>> m.update_state([0, 0, 1, 1], [0, 1, 0, 1])
        >>> round(float(m.result()), 6)
        0.333333
    """

    def __init__(self, num_classes: int, target_class_ids: Any, name: str | None = None,
                 dtype: Any = None, ignore_class: int | None = None,
                 sparse_y_true: bool = True, sparse_y_pred: bool = True,
                 axis: int = -1) -> None:
        given = np.dtype(em.as_dtype(dtype)) if dtype is not None else None
        self._int_weights = given is not None and given.kind in "iu"
        self._named(name, None if self._int_weights else dtype)
        self._dtype_arg = str(given) if given is not None else None
        self.num_classes = _check_classes(self.name, num_classes)
        ids = [target_class_ids] if isinstance(target_class_ids, (int, np.integer)) \
            else list(target_class_ids)
        if not ids or any(isinstance(i, bool) or not isinstance(i, (int, np.integer))
                          or not 0 <= i < self.num_classes for i in ids):
            raise ValueError(f"{self.name}: target_class_ids must be class ids in "
                             f"[0, num_classes={self.num_classes}), got {target_class_ids!r}")
        self.target_class_ids = [int(i) for i in ids]
        if ignore_class is not None and (isinstance(ignore_class, bool)
                                         or not isinstance(ignore_class, (int, np.integer))):
            raise ValueError(f"{self.name}: ignore_class must be an integer or None, got "
                             f"{ignore_class!r}")
        for arg, value in (("sparse_y_true", sparse_y_true), ("sparse_y_pred", sparse_y_pred)):
            if not isinstance(value, bool):
                raise ValueError(f"{self.name}: {arg} must be True or False, got {value!r}")
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise ValueError(f"{self.name}: axis must be an integer, got {axis!r}")
        if axis != -1 and sparse_y_true and sparse_y_pred:
            raise ValueError(f"{self.name}: axis={axis} is the classes' axis of one-hot "
                             f"labels or scores, and both are class ids here (sparse_y_true "
                             f"and sparse_y_pred); give axis only with one of them False")
        self.ignore_class = None if ignore_class is None else int(ignore_class)
        self.sparse_y_true, self.sparse_y_pred, self.axis = sparse_y_true, sparse_y_pred, axis
        n = self.num_classes
        self.total_cm = em.Variable(np.zeros((n, n), _STATE_DTYPE),
                                    name=f"{self.name}/total_confusion_matrix",
                                    trainable=False)
        self._targets: dict[tuple[str, str], Any] = {}  # constants, by device

    def __checkpoint_children__(self) -> dict[str, Any]:
        return {"total_confusion_matrix": self.total_cm}

    @property
    def variables(self) -> list[Any]:
        return [self.total_cm]

    def _ids(self, x: Any, sparse: bool) -> Any:
        x = _tensor(x)
        if not sparse:
            x = em.argmax(x, axis=self.axis)
        return em.reshape(x if x.dtype.kind in "iu" else em.cast(x, em.int64), (-1,))

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y = self._ids(y_true, self.sparse_y_true)
        p = self._ids(y_pred, self.sparse_y_pred)
        if y.shape != p.shape:
            raise ValueError(f"{self.name}: y_true gives {y.shape[0]} class ids and y_pred "
                             f"{p.shape[0]} (read as sparse_y_true={self.sparse_y_true}, "
                             f"sparse_y_pred={self.sparse_y_pred}, axis={self.axis}); they "
                             f"must give one each per value")
        n = self.num_classes
        y, p = em.cast(y, em.int64), em.cast(p, em.int64)
        keep = em.logical_and(em.logical_and(em.greater_equal(y, 0), em.less(y, n)),
                              em.logical_and(em.greater_equal(p, 0), em.less(p, n)))
        if self.ignore_class is not None:
            keep = em.logical_and(keep, em.not_equal(y, self.ignore_class))
        w = em.cast(keep, _STATE_DTYPE)
        if sample_weight is not None:
            sw = _tensor(sample_weight)
            if self._int_weights:  # cut to integers, as Keras's integer matrix does
                sw = em.cast(sw, em.int64)
            sw = em.reshape(em.cast(sw, _STATE_DTYPE), (-1,))
            if sw.shape[0] not in (1, y.shape[0]):
                raise ValueError(f"{self.name}: sample_weight holds {sw.shape[0]} weights "
                                 f"for {y.shape[0]} class ids")
            w = em.multiply(w, em.broadcast_to(sw, tuple(y.shape)))
        # rows: one-hot labels; columns: one-hot predictions, weighted (a dropped pair
        # weighs 0); one product adds every pair (no scatter, which reads indices back)
        labels = em.one_hot(y, n, dtype=_STATE_DTYPE)
        predicted = em.multiply(em.one_hot(p, n, dtype=_STATE_DTYPE), em.expand_dims(w, -1))
        counts = em.matmul(labels, predicted, transpose_a=True)
        if counts.device != self.total_cm.device:
            counts = counts.to(self.total_cm.device)
        self.total_cm.assign_add(counts)

    def _constant(self, key: str, make: Any, device: str) -> Any:
        """``make()`` (a numpy array) as a constant on ``device``, made once there."""
        hit = self._targets.get((key, device))
        if hit is None:
            with em.device(device):
                hit = self._targets[key, device] = em.constant(make())
        return hit

    def result(self) -> Any:
        """The mean IoU over the target classes that occur (0 when none does)."""
        cm = self.total_cm.value()
        n, dev = self.num_classes, cm.device
        eye = self._constant("eye", lambda: np.eye(n, dtype=_STATE_DTYPE), dev)
        # how often each class is a target (Keras counts a repeated id again)
        times = self._constant("targets", lambda: np.bincount(
            self.target_class_ids, minlength=n).astype(np.float64), dev)
        tp = em.reduce_sum(em.multiply(cm, eye), axis=1)
        denominator = em.subtract(em.add(em.reduce_sum(cm, axis=0), em.reduce_sum(cm, axis=1)),
                                  tp)
        # Keras takes both to float32 here: so does ember (the same rounding)
        denominator, tp = em.cast(denominator, self.dtype), em.cast(tp, self.dtype)
        times = em.cast(times, self.dtype)
        valid = em.greater(denominator, 1e-9)
        iou = em.where(valid, em.divide(tp, em.add(denominator, _EPSILON)),
                       em.zeros_like(tp))
        count = em.reduce_sum(em.multiply(em.cast(valid, self.dtype), times))
        return em.divide(em.reduce_sum(em.multiply(iou, times)), em.add(count, _EPSILON))

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self._dtype_arg or str(self.dtype),
                "num_classes": self.num_classes, "target_class_ids": self.target_class_ids,
                "ignore_class": self.ignore_class, "sparse_y_true": self.sparse_y_true,
                "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


class MeanIoU(IoU):
    """The mean intersection-over-union of every class (``IoU`` with all of them as
    targets).

    Examples:
        >>> from ember import nn
        >>> m = nn.metrics.MeanIoU(num_classes=2)
        >>> m.update_state([0, 0, 1, 1], [0, 1, 0, 1])
        >>> round(float(m.result()), 6)
        0.333333
    """

    def __init__(self, num_classes: int, name: str | None = None, dtype: Any = None,
                 ignore_class: int | None = None, sparse_y_true: bool = True,
                 sparse_y_pred: bool = True, axis: int = -1) -> None:
        n = _check_classes(name or "mean_io_u", num_classes)
        super().__init__(n, list(range(n)), name, dtype, ignore_class, sparse_y_true,
                         sparse_y_pred, axis)

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        del config["target_class_ids"]
        return config


class BinaryIoU(IoU):
    """IoU of two classes from binary labels and probabilities: a prediction at or above
    ``threshold`` is class 1.

    Args:
        target_class_ids: the classes averaged, ``(0, 1)`` by default.
        threshold: predictions ``>= threshold`` are class 1.
        name: the metric's name.
        dtype: see the module.

    Examples:
        >>> from ember import nn
        >>> m = nn.metrics.BinaryIoU(target_class_ids=[0, 1], threshold=0.3)
        >>> m.update_state([0, 1, 0, 1], [0.1, 0.2, 0.4, 0.7])
        >>> round(float(m.result()), 6)
        0.333333
    """

    def __init__(self, target_class_ids: Any = (0, 1), threshold: float = 0.5,
                 name: str | None = None, dtype: Any = None) -> None:
        super().__init__(2, target_class_ids, name, dtype)
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise ValueError(f"{self.name}: threshold must be a number, got {threshold!r}")
        self.threshold = threshold

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        p = em.cast(_tensor(y_pred), em.float32)  # compared in float32, as Keras
        predicted = em.cast(em.greater_equal(p, self.threshold), em.int64)
        super().update_state(y_true, predicted, sample_weight)

    def get_config(self) -> dict[str, Any]:
        return {"target_class_ids": self.target_class_ids, "threshold": self.threshold,
                "name": self.name, "dtype": self._dtype_arg or str(self.dtype)}


class OneHotIoU(IoU):
    """``IoU`` with one-hot labels (``y_true`` is argmaxed along ``axis``); ``y_pred``
    holds scores per class unless ``sparse_y_pred``."""

    def __init__(self, num_classes: int, target_class_ids: Any, name: str | None = None,
                 dtype: Any = None, ignore_class: int | None = None,
                 sparse_y_pred: bool = False, axis: int = -1) -> None:
        super().__init__(num_classes, target_class_ids, name, dtype, ignore_class, False,
                         sparse_y_pred, axis)

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        del config["sparse_y_true"]
        return config


class OneHotMeanIoU(MeanIoU):
    """``MeanIoU`` with one-hot labels (``y_true`` is argmaxed along ``axis``); ``y_pred``
    holds scores per class unless ``sparse_y_pred``."""

    def __init__(self, num_classes: int, name: str | None = None, dtype: Any = None,
                 ignore_class: int | None = None, sparse_y_pred: bool = False,
                 axis: int = -1) -> None:
        super().__init__(num_classes, name, dtype, ignore_class, False, sparse_y_pred, axis)

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        del config["sparse_y_true"]
        return config
