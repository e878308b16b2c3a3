"""Categorical encodings shared by CategoryEncoding, Discretization, Hashing and the lookup
layers: Keras's ``"int"``, ``"one_hot"``, ``"multi_hot"`` and ``"count"`` output modes.

The encodings are ember ops, so they run on the device that holds the indices.
"""

from __future__ import annotations

from typing import Any

import ember.core as em

MODES = ("int", "one_hot", "multi_hot", "count")


def check_mode(layer: str, output_mode: Any, allowed: tuple[str, ...] = MODES) -> str:
    if output_mode not in allowed:
        raise ValueError(f"{layer}: output_mode must be one of {list(allowed)}, got "
                         f"output_mode={output_mode!r}")
    return str(output_mode)


def reject_sparse(layer: str, sparse: Any) -> None:
    if sparse:
        raise ValueError(f"{layer}: sparse=True is not supported: ember has no sparse "
                         f"tensors (Keras offers it on the TensorFlow backend only)")


def encode(indices: Any, output_mode: str, depth: int, dtype: Any,
           count_weights: Any = None) -> Any:
    """``indices`` (an int tensor) encoded as Keras encodes them.

    ``"one_hot"`` encodes each element (a last axis of size 1 is replaced); ``"multi_hot"``
    and ``"count"`` reduce axis 1 of a batch (axis 0 of a single sample), as Keras's
    ``multi_hot`` does. Indices outside ``[0, depth)`` encode to zeros (the lookup layers
    drop their mask token this way).
    """
    x = em.convert_to_tensor(indices)
    if output_mode == "int":
        return em.cast(x, dtype)
    if x.ndim == 0:
        x = em.reshape(x, (1,))
    if output_mode == "one_hot":
        if x.ndim > 1 and x.shape[-1] == 1:
            x = em.squeeze(x, -1)
        return em.one_hot(x, depth, dtype=dtype)
    axis = 1 if x.ndim > 1 else 0
    if output_mode == "multi_hot":
        return em.reduce_max(em.one_hot(x, depth, dtype=dtype), axis=axis)
    hot = em.one_hot(x, depth, dtype=dtype if count_weights is None else count_weights.dtype)
    if count_weights is not None:
        hot = hot * em.expand_dims(count_weights, -1)
    return em.reduce_sum(hot, axis=axis)


def check_range(layer: str, x: Any, depth: int) -> Any:
    """``x`` as a tensor, checked to lie in ``[0, depth)`` by an op (``em.debugging.
    check_range``): no host read, so a traced step stays one trace whatever ids come (a
    read of the minimum and maximum became a guard that failed at each new extreme), and
    a GPU checks without a sync."""
    t = em.convert_to_tensor(x)
    if t.dtype.kind not in "iu":
        raise TypeError(f"{layer}: expected integer inputs, got dtype {t.dtype}")
    return em.debugging.check_range(
        t, 0, depth - 1, f"{layer}: input values (0 <= values < {depth}, num_tokens)")
