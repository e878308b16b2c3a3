"""``fit(class_weight=...)``: one weight per class, applied as sample weights read from the
targets, as Keras 3 does.

A target's class is its value (class ids ``(N,)``, rounded), the id in a trailing axis of
one (``(N, 1)``), or the argmax of its last axis (one-hot ``(N, C)``, or per step
``(N, T, C)``, giving weights ``(N, T)``). Classes missing from the dict weigh 1.0.
Arrays are weighted once, before batching, on the host (numpy targets) or on the targets'
device (a Tensor); an iterable of batches is weighted batch by batch with ember ops on
each batch's device (no host read, so a GPU step stays asynchronous and traced).

Examples:
    >>> import numpy as np
    >>> from ember.nn import class_weights
    >>> table = class_weights.table({0: 1.0, 2: 5.0})
    >>> class_weights.sample_weights(np.array([0, 1, 2, 2]), table).tolist()
    [1.0, 1.0, 5.0, 5.0]
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

import ember.core as em


def table(class_weight: Any) -> np.ndarray:
    """``class_weight`` as a float32 array indexed by class id (1.0 for ids it leaves
    out); every key a class id (an integer, or a string of one, as Keras reads keys),
    every weight a finite number."""
    if not (hasattr(class_weight, "items") and hasattr(class_weight, "get")):
        raise ValueError(f"class_weight must be a dict of class index -> weight; got "
                         f"{type(class_weight).__name__}")
    if not class_weight:
        raise ValueError("class_weight is an empty dict: give a weight per class id")
    weights: dict[int, float] = {}
    for key, value in class_weight.items():
        cls = _class_id(key)
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or \
                not math.isfinite(float(value)):
            raise ValueError(f"class_weight[{key!r}] must be a finite number, got {value!r}")
        weights[cls] = float(value)
    out = np.ones(max(weights) + 1, np.float32)
    for cls, w in weights.items():
        out[cls] = w
    return out


def _class_id(key: Any) -> int:
    if isinstance(key, str) and key.strip().lstrip("+").isdigit():
        return int(key)
    if isinstance(key, numbers.Integral) and not isinstance(key, bool) and int(key) >= 0:
        return int(key)
    raise ValueError(f"class_weight's keys are class indices (integers >= 0); got {key!r}")


def sample_weights(y: Any, weights: np.ndarray) -> Any:
    """The weight of each target's class: a numpy array for numpy targets, else a Tensor on
    the targets' device."""
    on_host = not isinstance(y, em.Tensor)
    with em.device("/cpu:0" if on_host else y.device):
        classes = _classes(em.constant(np.asarray(y)) if on_host else y)
        k = int(weights.shape[0])
        known = em.logical_and(em.greater_equal(classes, 0), em.less(classes, k))
        found = em.gather(em.constant(weights), em.clip_by_value(classes, 0, k - 1))
        out = em.where(known, found, em.ones_like(found))
    return out.numpy() if on_host else out


def _classes(t: Any) -> Any:
    """One class id per example (or step): Keras's reading of the targets."""
    if t.ndim >= 2 and t.shape[-1] > 1:
        if t.dtype.kind in "iu":  # ids per step, which Keras's argmax would read as one-hot
            raise ValueError(
                f"class_weight: integer targets of shape {tuple(t.shape)} look like class "
                f"ids per step, which Keras reads as one-hot rows (their argmax); give "
                f"one-hot float targets, or sample_weight per step instead")
        return em.cast(em.argmax(t, -1), em.int32)
    if t.ndim >= 2:
        t = em.squeeze(t, -1)
    if t.dtype.kind == "f":
        t = em.round(t)
    return em.cast(t, em.int32)


class Weighted:
    """An iterable of ``(x, y)`` batches (or ``{"x": ..., "y": ...}`` dicts) yielding
    ``(x, y, class weights of y)``; its length is the data's."""

    def __init__(self, data: Any, weights: np.ndarray) -> None:
        self.data, self.weights = data, weights

    def __len__(self) -> int:
        return len(self.data)

    def __iter__(self) -> Any:
        for batch in self.data:
            yield with_weights(batch, self.weights)


def with_weights(batch: Any, weights: np.ndarray) -> Any:
    """``batch`` with the class weights of its targets as its sample weights."""
    if isinstance(batch, dict) and "x" in batch:
        x, y, sw = batch["x"], batch.get("y"), batch.get("sample_weight")
    elif isinstance(batch, (tuple, list)) and len(batch) in (2, 3):
        x, y, sw = batch[0], batch[1], batch[2] if len(batch) == 3 else None
    else:
        raise ValueError("class_weight reads the classes from the targets, but a batch has "
                         f"none: got {type(batch).__name__} (batches are (x, y) tuples)")
    if sw is not None:
        raise ValueError("cannot use class_weight and sample_weight at the same time: a "
                         "batch holds (x, y, sample_weight)")
    check_one_target(y)
    if y is None:
        raise ValueError("class_weight reads the classes from the targets, but a batch's "
                         "y is None")
    cw = sample_weights(y, weights)
    return {**batch, "sample_weight": cw} if isinstance(batch, dict) else (x, y, cw)


def check_one_target(y: Any, model: Any = None) -> None:
    """Refuse class_weight for several outputs, as Keras does."""
    names = getattr(model, "output_names", None)
    several = isinstance(names, list) and len(names) > 1
    parts = list(y.values()) if isinstance(y, dict) else list(y) \
        if isinstance(y, (list, tuple)) else []
    per_output = len(parts) > 1 and any(
        p is None or isinstance(p, (np.ndarray, em.Tensor)) for p in parts)
    if several or per_output:
        what = f" {names}" if several else ""
        raise ValueError(f"class_weight is only supported for models with a single output "
                         f"(as Keras); this one has several{what}: weigh each output's "
                         f"examples with sample_weight, a list or dict by output name")
