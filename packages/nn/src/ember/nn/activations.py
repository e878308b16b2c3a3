"""Activation functions (Keras 3's ``keras.activations``): each by its name, with Keras's
arguments and defaults, and by name as a string (``"relu"``, ``"softmax"``, ...) for a
layer's ``activation=``. They compute with ``ember.nn.ops`` (Keras's own activations call
``keras.ops``), except ``gelu``, whose default here is the exact form, as Keras's."""

from __future__ import annotations

from typing import Any

import ember.core as em

from . import ops
from ._identifiers import resolve

nn_ops = em.nn_ops


def linear(x: Any) -> Any:
    """The identity."""
    return x


def relu(x: Any, negative_slope: float = 0.0, max_value: float | None = None,
         threshold: float = 0.0) -> Any:
    """Keras's ``relu``: ``x`` above ``threshold`` (else 0), capped at ``max_value``,
    less ``negative_slope * relu(threshold - x)``; with the defaults ``max(x, 0)``.

    Examples:
        >>> from ember import nn
        >>> nn.activations.relu([-2.0, 0.5, 9.0], negative_slope=0.1, max_value=6.0)
        ember.Tensor([-0.2  0.5  6. ], shape=(3,), dtype=float32)
    """
    x = em.convert_to_tensor(x)
    if max_value is None and not threshold:
        return nn_ops.relu(x) if not negative_slope else nn_ops.leaky_relu(x, negative_slope)
    if not threshold and max_value == 6:  # as Keras: relu6 (its gradient is 0 at 6)
        y, max_value = nn_ops.relu6(x), None
    else:
        y = em.where(em.greater(x, threshold), x, 0.0) if threshold else nn_ops.relu(x)
    if max_value is not None:  # Keras's clip: the gradient passes at max_value
        y = em.minimum(y, em.cast(max_value, y.dtype))
    if negative_slope:
        y = em.subtract(y, em.multiply(nn_ops.relu(em.subtract(threshold, x)), negative_slope))
    return y


def leaky_relu(x: Any, negative_slope: float = 0.2) -> Any:
    return ops.leaky_relu(x, negative_slope=negative_slope)


def relu6(x: Any) -> Any:
    return ops.relu6(x)


def softmax(x: Any, axis: int = -1) -> Any:
    return ops.softmax(x, axis=axis)


def log_softmax(x: Any, axis: int = -1) -> Any:
    return ops.log_softmax(x, axis=axis)


def elu(x: Any, alpha: float = 1.0) -> Any:
    return ops.elu(x, alpha=alpha)


def celu(x: Any, alpha: float = 1.0) -> Any:
    return ops.celu(x, alpha=alpha)


def selu(x: Any) -> Any:
    return ops.selu(x)


def gelu(x: Any, approximate: bool = False) -> Any:
    """Keras's activation defaults to the exact form (``keras.ops.gelu``'s to tanh's)."""
    return ops.gelu(x, approximate=approximate)


def glu(x: Any, axis: int = -1) -> Any:
    return ops.glu(x, axis=axis)


def silu(x: Any) -> Any:
    return ops.silu(x)


def softplus(x: Any) -> Any:
    return ops.softplus(x)


def softsign(x: Any) -> Any:
    return ops.softsign(x)


def squareplus(x: Any, b: float = 4) -> Any:
    return ops.squareplus(x, b=b)


def soft_shrink(x: Any, threshold: float = 0.5) -> Any:
    return ops.soft_shrink(x, threshold=threshold)


def hard_shrink(x: Any, threshold: float = 0.5) -> Any:
    return ops.hard_shrink(x, threshold=threshold)


def sparse_plus(x: Any) -> Any:
    return ops.sparse_plus(x)


def sparse_sigmoid(x: Any) -> Any:
    return ops.sparse_sigmoid(x)


def tanh_shrink(x: Any) -> Any:
    return ops.tanh_shrink(x)


def hard_tanh(x: Any) -> Any:
    return ops.hard_tanh(x)


def threshold(x: Any, threshold: float, default_value: float) -> Any:
    return ops.threshold(x, threshold, default_value)


def exponential(x: Any) -> Any:
    return ops.exp(x)


def hard_sigmoid(x: Any) -> Any:
    return ops.hard_sigmoid(x)


def hard_silu(x: Any) -> Any:
    return ops.hard_silu(x)


def log_sigmoid(x: Any) -> Any:
    return ops.log_sigmoid(x)


def mish(x: Any) -> Any:
    """``x * tanh(softplus(x))``."""
    return em.multiply(x, em.tanh(em.softplus(x)))


def sigmoid(x: Any) -> Any:
    """The logistic function (its output remembers ``x``: see ``ember.nn._logits``); the
    recurrent layers' fused cells recognise this function."""
    return ops.sigmoid(x)


tanh = em.tanh  # core's own op, so that the recurrent layers' fused cells recognise it
swish = silu
hard_swish = hard_silu

_NAMES: dict[str, Any] = {f.__name__.rsplit(".", 1)[-1]: f for f in (
    linear, relu, leaky_relu, relu6, softmax, log_softmax, elu, celu, selu, gelu, glu, silu,
    sigmoid, tanh, softplus, softsign, squareplus, soft_shrink, hard_shrink, sparse_plus,
    sparse_sigmoid, tanh_shrink, hard_tanh, threshold, exponential, hard_sigmoid, hard_silu,
    log_sigmoid, mish)}
_NAMES.update({"swish": silu, "hard_swish": hard_silu})

# ember-core's functions that compute a named activation with its defaults: a layer given
# one (``activation=em.nn_ops.relu``) is saved under that name
_CORE_TWINS = ((nn_ops.relu, "relu"), (nn_ops.relu6, "relu6"), (nn_ops.softmax, "softmax"),
               (nn_ops.log_softmax, "log_softmax"), (nn_ops.elu, "elu"),
               (nn_ops.selu, "selu"), (nn_ops.gelu, "gelu"), (nn_ops.swish, "silu"),
               (nn_ops.silu, "silu"), (em.softplus, "softplus"),
               (nn_ops.leaky_relu, "leaky_relu"))


def name_of(fn: Any) -> str | None:
    """The name of a built-in activation (or of core's twin of one), else None."""
    for k, v in _NAMES.items():
        if v is fn:
            return k
    for f, k in _CORE_TWINS:
        if f is fn:
            return k
    return None


# Activations ``em.nn_ops.bias_activation`` applies in one op with the bias before them.
_FUSED_WITH_BIAS = {"relu": (relu, nn_ops.relu), "linear": (linear,)}


def fused_with_bias(fn: Any) -> str | None:
    """The name under which ``nn_ops.bias_activation`` fuses activation ``fn`` with a bias
    (``"relu"``, ``"linear"``), or None: that activation composes ``add`` and ``fn``."""
    for k, fns in _FUSED_WITH_BIAS.items():
        if any(f is fn for f in fns):
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
    """The name an activation is saved under: a built-in's, else the function's own."""
    return name_of(fn) or str(getattr(fn, "__name__", repr(fn)))
