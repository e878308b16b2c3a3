"""The logits behind a ``softmax`` or ``sigmoid`` activation's output, for the
cross-entropies (TensorFlow's Keras caches them as ``output._keras_logits``).

A model whose last layer is ``Dense(10, activation="softmax")`` hands its losses
probabilities. Computed from them, a cross-entropy must clip them (``log(0)``), and a
confidently wrong example, whose probability is clipped, gets no gradient at all. tf.keras,
and Keras 3 on TensorFlow, compute it from the logits the activation was given instead:
the same value where nothing is clipped, and a gradient everywhere. ember does the same:
``nn.activations.softmax`` / ``sigmoid`` (and ``nn.ops.softmax`` / ``sigmoid``) remember
which tensor each output came from, and ``categorical_crossentropy``,
``sparse_categorical_crossentropy`` and ``binary_crossentropy`` look it up.

An entry lives as long as the output tensor does (a weak reference). A traced step sees
the same tensors while it traces, so its replay computes from the logits too.
"""

from __future__ import annotations

import weakref
from typing import Any

import ember.core as em

_CACHE: dict[int, tuple[Any, Any, str, int]] = {}  # id(output) -> (ref, logits, kind, axis)


def remember(output: Any, logits: Any, kind: str, axis: int = -1) -> Any:
    """Note that ``output`` is ``kind`` ("softmax" over ``axis``, or "sigmoid") of
    ``logits``; returns ``output``."""
    if not isinstance(output, em.Tensor):
        return output
    key = id(output)

    def forget(ref: Any, key: int = key) -> None:
        entry = _CACHE.get(key)
        if entry is not None and entry[0] is ref:
            del _CACHE[key]

    axis = axis + output.ndim if axis < 0 else axis
    _CACHE[key] = (weakref.ref(output, forget), logits, kind, axis)
    return output


def logits_of(output: Any, kind: str) -> Any:
    """The logits ``output`` was computed from by ``kind`` (a softmax: over its last
    axis), or None."""
    entry = _CACHE.get(id(output))
    if entry is None or entry[0]() is not output or entry[2] != kind:
        return None
    if kind == "softmax" and entry[3] != output.ndim - 1:
        return None
    return entry[1]


def carry(source: Any, cast: Any) -> Any:
    """``cast`` (``source`` in another dtype) remembered as the same activation of the
    logits in that dtype."""
    if cast is source:
        return cast
    entry = _CACHE.get(id(source))
    if entry is None or entry[0]() is not source:
        return cast
    logits = entry[1] if entry[1].dtype == cast.dtype else em.cast(entry[1], cast.dtype)
    return remember(cast, logits, entry[2], entry[3])
