"""Neural-network functions: activations, softmax, convolution, pooling, normalisation, losses.

Convolutions and pools are NHWC (channels last), with TensorFlow's SAME/VALID padding.

Examples:
    >>> import ember.core as em
    >>> em.nn_ops.relu(em.constant([-1., 2.]))
    ember.Tensor([0. 2.], shape=(2,), dtype=float32)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._errors import InvalidArgumentError
from ._ops import _args
from ._ops import math as m
from ._ops import reduce as r
from ._ops.array import expand_dims, reshape, squeeze, take_along_axis
from ._ops.conv import _pair, extract_patches, padding_amounts, patches_to_image
from ._ops.define_nn import relu
from ._ops.linalg import matmul, tensordot

sigmoid = m.sigmoid
tanh = m.tanh
softplus = m.softplus

__all__ = [
    "avg_pool2d", "batch_normalization", "bias_add", "conv1d", "conv2d", "conv2d_transpose",
    "dropout", "elu", "gelu", "l2_loss", "leaky_relu", "log_softmax", "max_pool2d", "moments",
    "relu", "relu6", "selu", "sigmoid", "sigmoid_cross_entropy_with_logits", "softmax",
    "softmax_cross_entropy_with_logits", "softplus", "sparse_softmax_cross_entropy_with_logits",
    "swish", "tanh", "max_pool", "avg_pool",
]


# --- activations ------------------------------------------------------------------------
def relu6(features: Any, name: str | None = None) -> Any:
    """min(max(x, 0), 6)."""
    return m.minimum(relu(features), 6)


def leaky_relu(features: Any, alpha: float = 0.2, name: str | None = None) -> Any:
    """x where x > 0, else alpha * x."""
    x = _args.tensor(features)
    return m.where(m.greater(x, 0), x, m.multiply(x, alpha))


def elu(features: Any, name: str | None = None) -> Any:
    """x where x > 0, else exp(x) - 1."""
    x = _args.tensor(features)
    return m.where(m.greater(x, 0), x, m.expm1(m.minimum(x, 0)))


def selu(features: Any, name: str | None = None) -> Any:
    """Scaled ELU with the self-normalising constants."""
    a, s = 1.6732632423543772, 1.0507009873554805
    x = _args.tensor(features)
    return m.multiply(m.where(m.greater(x, 0), x, m.multiply(m.expm1(m.minimum(x, 0)), a)), s)


def gelu(features: Any, approximate: bool = False, name: str | None = None) -> Any:
    """x * Phi(x); ``approximate=True`` uses the tanh form."""
    x = _args.tensor(features)
    if approximate:
        c = math.sqrt(2 / math.pi)
        inner = m.multiply(m.add(x, m.multiply(m.pow(x, 3), 0.044715)), c)
        return m.multiply(m.multiply(x, 0.5), m.add(m.tanh(inner), 1))
    return m.multiply(m.multiply(x, 0.5), m.add(m.erf(m.multiply(x, 1 / math.sqrt(2))), 1))


def swish(features: Any, name: str | None = None) -> Any:
    """x * sigmoid(x) (also called SiLU)."""
    x = _args.tensor(features)
    return m.multiply(x, m.sigmoid(x))


silu = swish


def softmax(logits: Any, axis: int = -1, name: str | None = None) -> Any:
    """exp(x) / sum(exp(x)) along ``axis``, computed without overflow."""
    x = _args.tensor(logits)
    e = m.exp(m.subtract(x, m.stop_gradient(r.reduce_max(x, axis, keepdims=True))))
    return m.divide(e, r.reduce_sum(e, axis, keepdims=True))


def log_softmax(logits: Any, axis: int = -1, name: str | None = None) -> Any:
    """x - logsumexp(x) along ``axis``."""
    x = _args.tensor(logits)
    # Shift first: x - logsumexp(x) cancels catastrophically for large |x| in float32.
    z = m.subtract(x, m.stop_gradient(r.reduce_max(x, axis, keepdims=True)))
    return m.subtract(z, m.log(r.reduce_sum(m.exp(z), axis, keepdims=True)))


def bias_add(value: Any, bias: Any, data_format: str = "NHWC", name: str | None = None) -> Any:
    """``value + bias`` with ``bias`` along the channel (last) axis."""
    v, b = _args.tensor(value), _args.tensor(bias)
    if b.ndim != 1 or v.shape[-1] != b.shape[0]:
        raise InvalidArgumentError(f"bias_add: bias of shape {b.shape} does not match the last "
                                   f"axis of value {v.shape}")
    return m.add(v, b)


# --- convolution and pooling ------------------------------------------------------------
def conv2d(input: Any, filters: Any, strides: Any = 1, padding: Any = "VALID",
           data_format: str = "NHWC", dilations: Any = 1, name: str | None = None) -> Any:
    """2-D convolution of an NHWC batch with filters of shape (KH, KW, C_in, C_out)."""
    x, w = _args.tensor(input), _args.tensor(filters)
    if data_format != "NHWC":
        raise InvalidArgumentError("conv2d: only data_format='NHWC' is supported")
    if x.ndim != 4 or w.ndim != 4:
        raise InvalidArgumentError(f"conv2d: expected input (N, H, W, C) and filters "
                                   f"(KH, KW, C_in, C_out), got {x.shape} and {w.shape}")
    if x.shape[3] != w.shape[2]:
        raise InvalidArgumentError(f"conv2d: input has {x.shape[3]} channels but filters "
                                   f"{w.shape} expect {w.shape[2]}")
    kh, kw, c, o = w.shape
    padding_amounts("conv2d", padding, x.shape[1:3], (kh, kw),  # errors name conv2d
                    _pair("conv2d", strides, "strides"), _pair("conv2d", dilations, "dilations"))
    p = extract_patches(x, (kh, kw), strides, dilations, padding)
    n, oh, ow = p.shape[:3]
    out = matmul(reshape(p, (n * oh * ow, kh * kw * c)), reshape(w, (kh * kw * c, o)))
    return reshape(out, (n, oh, ow, o))


def conv1d(input: Any, filters: Any, stride: Any = 1, padding: Any = "VALID",
           data_format: str = "NWC", dilations: Any = 1, name: str | None = None) -> Any:
    """1-D convolution of an NWC batch with filters of shape (K, C_in, C_out)."""
    x, w = _args.tensor(input), _args.tensor(filters)
    if x.ndim != 3 or w.ndim != 3:
        raise InvalidArgumentError(f"conv1d: expected input (N, W, C) and filters (K, C_in, "
                                   f"C_out), got {x.shape} and {w.shape}")
    s = stride if isinstance(stride, int) else int(list(stride)[-2 if len(stride) == 3 else 0])
    d = dilations if isinstance(dilations, int) else int(list(dilations)[0])
    pad = padding if isinstance(padding, str) else [(0, 0), tuple(padding[0])]
    y = conv2d(expand_dims(x, 1), expand_dims(w, 0), (1, s), pad, dilations=(1, d))
    return squeeze(y, 1)


def conv2d_transpose(input: Any, filters: Any, output_shape: Any, strides: Any = 1,
                     padding: Any = "SAME", data_format: str = "NHWC", dilations: Any = 1,
                     name: str | None = None) -> Any:
    """The gradient of conv2d with respect to its input ("deconvolution").

    ``filters`` has shape (KH, KW, C_out, C_in) as in TensorFlow; ``output_shape`` is the
    NHWC shape of the result.
    """
    x, w = _args.tensor(input), _args.tensor(filters)
    out_shape = _args.shape("conv2d_transpose", output_shape)
    if x.ndim != 4 or w.ndim != 4 or len(out_shape) != 4:
        raise InvalidArgumentError(f"conv2d_transpose: expected rank-4 input, filters and "
                                   f"output_shape, got {x.shape}, {w.shape}, {out_shape}")
    kh, kw, oc, ic = w.shape
    if x.shape[3] != ic or out_shape[3] != oc:
        raise InvalidArgumentError(f"conv2d_transpose: filters {w.shape} need input channels "
                                   f"{ic} and output channels {oc}; got input {x.shape}, "
                                   f"output_shape {out_shape}")
    s = _pair("conv2d_transpose", strides, "strides")
    d = _pair("conv2d_transpose", dilations, "dilations")
    pads = padding_amounts("conv2d_transpose", padding, out_shape[1:3], (kh, kw), s, d)
    exp_hw = tuple((n + p0 + p1 - (k - 1) * dd - 1) // ss + 1 for n, (p0, p1), k, dd, ss in
                   zip(out_shape[1:3], pads, (kh, kw), d, s))
    if exp_hw != x.shape[1:3]:
        raise InvalidArgumentError(f"conv2d_transpose: output_shape {out_shape} convolved gives "
                                   f"spatial size {exp_hw}, but input has {x.shape[1:3]}")
    p = tensordot(x, w, [[3], [3]])  # (N, H, W, KH, KW, C_out)
    return patches_to_image(p, out_shape, s, d, pads)


def _pool_args(op: str, x: Any, ksize: Any, strides: Any) -> tuple[Any, Any]:
    if x.ndim != 4:
        raise InvalidArgumentError(f"{op}: expected NHWC input of rank 4, got shape {x.shape}")
    k = _pair(op, ksize, "ksize")
    s = _pair(op, k if strides is None else strides, "strides")
    return k, s


def max_pool2d(input: Any, ksize: Any, strides: Any = None, padding: Any = "VALID",
               data_format: str = "NHWC", name: str | None = None) -> Any:
    """Maximum over each window of an NHWC batch."""
    x = _args.tensor(input)
    k, s = _pool_args("max_pool2d", x, ksize, strides)
    padding_amounts("max_pool2d", padding, x.shape[1:3], k, s, (1, 1))  # errors name the op
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    p = extract_patches(x, k, s, 1, padding, pad_value=low)
    return r.reduce_max(p, axis=(3, 4))


def avg_pool2d(input: Any, ksize: Any, strides: Any = None, padding: Any = "VALID",
               data_format: str = "NHWC", name: str | None = None) -> Any:
    """Mean over each window of an NHWC batch (SAME padding averages real elements only)."""
    x = _args.tensor(input)
    k, s = _pool_args("avg_pool2d", x, ksize, strides)
    pads = padding_amounts("avg_pool2d", padding, x.shape[1:3], k, s, (1, 1))
    total = r.reduce_sum(extract_patches(x, k, s, 1, padding), axis=(3, 4))
    if pads == ((0, 0), (0, 0)):
        return m.divide(total, k[0] * k[1])
    ones = np.ones((1, x.shape[1], x.shape[2], 1), dtype=x.dtype)
    count = r.reduce_sum(extract_patches(ones, k, s, 1, padding), axis=(3, 4))
    return m.divide(total, count)


max_pool = max_pool2d
avg_pool = avg_pool2d


# --- regularisation and normalisation ---------------------------------------------------
def dropout(x: Any, rate: float, noise_shape: Any = None, seed: Any = None,
            name: str | None = None) -> Any:
    """Zero each element with probability ``rate`` and scale the rest by 1 / (1 - rate)."""
    from . import random

    t = _args.tensor(x)
    if not 0 <= rate < 1:
        raise InvalidArgumentError(f"dropout: rate must be in [0, 1), got {rate}")
    if rate == 0:
        return t
    shape = t.shape if noise_shape is None else _args.shape("dropout", noise_shape)
    keep = m.greater_equal(random.uniform(shape, dtype=t.dtype, seed=seed), rate)
    return m.multiply(t, m.multiply(m.cast(keep, t.dtype), 1 / (1 - rate)))


def moments(x: Any, axes: Any, keepdims: bool = False, name: str | None = None) -> tuple[Any, Any]:
    """(mean, variance) over ``axes``."""
    t = _args.tensor(x)
    mean = r.reduce_mean(t, axes, keepdims=True)
    var = r.reduce_mean(m.squared_difference(t, mean), axes, keepdims=True)
    if not keepdims:
        ax = _args.axes("moments", axes, t.ndim)
        mean, var = squeeze(mean, ax), squeeze(var, ax)
    return mean, var


def batch_normalization(x: Any, mean: Any, variance: Any, offset: Any, scale: Any,
                        variance_epsilon: float, name: str | None = None) -> Any:
    """(x - mean) / sqrt(variance + eps) * scale + offset (offset/scale may be None)."""
    inv = m.rsqrt(m.add(variance, variance_epsilon))
    if scale is not None:
        inv = m.multiply(inv, scale)
    shift = m.negative(m.multiply(mean, inv))
    if offset is not None:
        shift = m.add(shift, offset)
    return m.add(m.multiply(x, inv), shift)


# --- losses -----------------------------------------------------------------------------
def softmax_cross_entropy_with_logits(labels: Any, logits: Any, axis: int = -1,
                                      name: str | None = None) -> Any:
    """-sum(labels * log_softmax(logits)) along ``axis``, per example."""
    x, y = _args.tensor(logits), _args.tensor(labels)
    if x.shape != y.shape:
        raise InvalidArgumentError(f"softmax_cross_entropy_with_logits: labels {y.shape} and "
                                   f"logits {x.shape} must have the same shape")
    return m.negative(r.reduce_sum(m.multiply(y, log_softmax(x, axis)), axis))


def sparse_softmax_cross_entropy_with_logits(labels: Any, logits: Any,
                                             name: str | None = None) -> Any:
    """logsumexp(logits) - logits[label] per example, for integer class ``labels``."""
    x, y = _args.tensor(logits), _args.tensor(labels)
    if y.dtype.kind not in "iu":
        raise InvalidArgumentError(f"sparse_softmax_cross_entropy_with_logits: labels must be "
                                   f"integers, got {y.dtype}")
    if y.shape != x.shape[:-1]:
        raise InvalidArgumentError(f"sparse_softmax_cross_entropy_with_logits: labels {y.shape} "
                                   f"must have the shape of logits {x.shape} without its last axis")
    ln = y.numpy()
    if ln.size and (ln.min() < 0 or ln.max() >= x.shape[-1]):
        raise InvalidArgumentError(f"sparse_softmax_cross_entropy_with_logits: labels must be in "
                                   f"[0, {x.shape[-1]}), got values from {ln.min()} to {ln.max()}")
    picked = squeeze(take_along_axis(x, expand_dims(y, -1), -1), -1)
    return m.subtract(r.reduce_logsumexp(x, -1), picked)


def sigmoid_cross_entropy_with_logits(labels: Any, logits: Any, name: str | None = None) -> Any:
    """Binary cross entropy from logits: max(x, 0) - x * z + log1p(exp(-|x|))."""
    x, z = _args.tensor(logits), _args.tensor(labels)
    if x.shape != z.shape:
        raise InvalidArgumentError(f"sigmoid_cross_entropy_with_logits: labels {z.shape} and "
                                   f"logits {x.shape} must have the same shape")
    return m.add(m.subtract(relu(x), m.multiply(x, z)), m.log1p(m.exp(m.negative(m.abs(x)))))


def l2_loss(t: Any, name: str | None = None) -> Any:
    """sum(t ** 2) / 2."""
    return m.multiply(r.reduce_sum(m.square(_args.tensor(t))), 0.5)
