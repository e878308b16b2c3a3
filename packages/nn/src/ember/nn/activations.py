"""Activation functions by name (``"relu"``, ``"softmax"``, ...) or callable."""

from __future__ import annotations

from typing import Any

import ember.core as em

nn_ops = em.nn_ops


def linear(x: Any) -> Any:
    return x


_NAMES: dict[str, Any] = {
    "linear": linear, "relu": nn_ops.relu, "relu6": nn_ops.relu6, "sigmoid": em.sigmoid,
    "tanh": em.tanh, "softmax": nn_ops.softmax, "log_softmax": nn_ops.log_softmax,
    "elu": nn_ops.elu, "selu": nn_ops.selu, "gelu": nn_ops.gelu, "swish": nn_ops.swish,
    "silu": nn_ops.swish, "softplus": em.softplus, "leaky_relu": nn_ops.leaky_relu,
}


def get(identifier: Any) -> Any:
    """The activation function for a name, a callable, or None (linear)."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        key = identifier.lower()
        if key not in _NAMES:
            raise ValueError(f"unknown activation {identifier!r}; known: {sorted(_NAMES)}")
        return _NAMES[key]
    if callable(identifier):
        return identifier
    raise ValueError(f"cannot interpret {identifier!r} as an activation")


def serialize(fn: Any) -> str:
    for k, v in _NAMES.items():
        if v is fn:
            return k
    return getattr(fn, "__name__", repr(fn))
