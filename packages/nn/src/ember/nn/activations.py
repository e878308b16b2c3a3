"""Activation functions by name (``"relu"``, ``"softmax"``, ...) or callable."""

from __future__ import annotations

from typing import Any

import ember.core as em

from ._identifiers import resolve

nn_ops = em.nn_ops


def linear(x: Any) -> Any:
    return x


_NAMES: dict[str, Any] = {
    "linear": linear, "relu": nn_ops.relu, "relu6": nn_ops.relu6, "sigmoid": em.sigmoid,
    "tanh": em.tanh, "softmax": nn_ops.softmax, "log_softmax": nn_ops.log_softmax,
    "elu": nn_ops.elu, "selu": nn_ops.selu, "gelu": nn_ops.gelu, "swish": nn_ops.swish,
    "silu": nn_ops.swish, "softplus": em.softplus, "leaky_relu": nn_ops.leaky_relu,
}


# Activations ``em.nn_ops.bias_activation`` applies in one op with the bias before them.
_FUSED_WITH_BIAS = {"relu": nn_ops.relu, "linear": linear}


def fused_with_bias(fn: Any) -> str | None:
    """The name under which ``nn_ops.bias_activation`` fuses activation ``fn`` with a bias
    (``"relu"``, ``"linear"``), or None: that activation composes ``add`` and ``fn``."""
    for k, v in _FUSED_WITH_BIAS.items():
        if v is fn:
            return k
    return None


def bias_then(fn: Any, y: Any, bias: Any) -> Any:
    """``fn(y + bias)``, bias along the last axis: one fused op for relu and linear."""
    name = fused_with_bias(fn)
    if name is not None:
        return nn_ops.bias_activation(y, bias, name)
    return fn(em.add(y, bias))


def get(identifier: Any) -> Any:
    """The activation function for a name, a callable, or None (linear)."""
    return resolve(identifier, _NAMES, "activation", none=linear)


def serialize(fn: Any) -> str:
    for k, v in _NAMES.items():
        if v is fn:
            return k
    return getattr(fn, "__name__", repr(fn))
