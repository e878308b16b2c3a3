"""``keras.ops``' neural-network functions (``keras.ops.nn``) over ``em.nn_ops`` and ember
ops: activations, softmax, one-hot encodings, cross-entropies, moments and normalisation,
pooling and convolution (1-D and 2-D, channels last or first), attention.

The formulas are Keras 3's (its NumPy backend's, the reference its other backends are
tested against); integer inputs of float-valued functions compute in float32.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import ember.core as em

from .. import _logits
from ._core import as_float, axes_of, host_ints, on_device_of, reject, tensor

nn_ops = em.nn_ops
_EPSILON = 1e-7  # Keras's backend.epsilon()


# --- activations -------------------------------------------------------------------------
def relu(x: Any) -> em.Tensor:
    return em.relu(tensor(x))


def relu6(x: Any) -> em.Tensor:
    """min(max(x, 0), 6); its gradient is 0 at both kinks, 0 and 6 (TensorFlow's
    Relu6Grad, ``dy * (x > 0) * (x < 6)``; torch's and JAX's too).

    Examples:
        >>> import ember.core as em
        >>> from ember import tape
        >>> from ember.nn import ops
        >>> x = em.constant([0.0, 3.0, 6.0, 7.0])
        >>> with tape.GradientTape() as t:
        ...     t.watch(x)
        ...     y = ops.relu6(x)
        >>> t.gradient(y, x)
        ember.Tensor([0. 1. 0. 0.], shape=(4,), dtype=float32)
    """
    return nn_ops.relu6(tensor(x))


def sigmoid(x: Any) -> em.Tensor:
    """The logistic function; its output remembers ``x`` for the cross-entropies (see
    ``ember.nn._logits``)."""
    z = as_float(x)
    return _logits.remember(em.sigmoid(z), z, "sigmoid")


def softplus(x: Any) -> em.Tensor:
    return em.softplus(as_float(x))


def softsign(x: Any) -> em.Tensor:
    t = as_float(x)
    return em.divide(t, em.add(em.abs(t), 1))


def silu(x: Any) -> em.Tensor:
    return nn_ops.swish(as_float(x))


swish = silu


def log_sigmoid(x: Any) -> em.Tensor:
    return em.negative(em.softplus(em.negative(as_float(x))))


def leaky_relu(x: Any, negative_slope: float = 0.2) -> em.Tensor:
    return nn_ops.leaky_relu(as_float(x), negative_slope)


def hard_sigmoid(x: Any) -> em.Tensor:
    """clip(x / 6 + 1/2, 0, 1). Its gradient at the kinks x = -3 and x = 3 is 0: Keras's
    TensorFlow backend computes ``relu6(x + 3) / 6`` (Relu6Grad is 0 at both ends), and
    torch's hardsigmoid and JAX's agree."""
    t = as_float(x)
    # the constant first: maximum and minimum pass a tie's gradient to their first operand
    return em.minimum(1, em.maximum(0, em.add(em.divide(t, 6), 0.5)))


def hard_silu(x: Any) -> em.Tensor:
    """x * hard_sigmoid(x). Its gradient at the kinks is the product rule's with
    ``hard_sigmoid``'s 0 there: 0 at x = -3 and 1 at x = 3, as Keras's TensorFlow backend
    (``x * relu6(x + 3) / 6``), torch's hardswish and JAX give."""
    t = as_float(x)
    return em.multiply(t, hard_sigmoid(t))


hard_swish = hard_silu


def elu(x: Any, alpha: float = 1.0) -> em.Tensor:
    """x for x > 0, else alpha * (exp(x) - 1); the gradient at 0 is ``alpha`` (the left
    one), as Keras's TensorFlow backend (``where(x > 0, elu(x), alpha * elu(x))``) and
    torch give."""
    t = as_float(x)
    return em.where(em.greater(t, 0), t, em.multiply(em.expm1(em.minimum(t, 0)), alpha))


def selu(x: Any) -> em.Tensor:
    """scale * elu(x, alpha) with the self-normalising constants; the gradient at 0 is
    ``scale`` (TensorFlow's SeluGrad; ``ember.core.nn_ops.selu``)."""
    return nn_ops.selu(as_float(x))


def gelu(x: Any, approximate: bool = True) -> em.Tensor:
    """x * Phi(x); the tanh approximation by default, as ``keras.ops.gelu``."""
    return nn_ops.gelu(as_float(x), approximate=bool(approximate))


def celu(x: Any, alpha: float = 1.0) -> em.Tensor:
    """x for x > 0, else alpha * (exp(x / alpha) - 1). Smooth at 0, where its gradient is
    1 (torch's; Keras's ``max(x, 0) + alpha * expm1(min(x, 0) / alpha)`` gives 2 on its
    TensorFlow backend, where both halves take a tie's whole gradient)."""
    t = as_float(x)
    neg = em.multiply(em.expm1(em.divide(em.minimum(t, 0), alpha)), alpha)
    return em.where(em.greater(t, 0), t, neg)


def glu(x: Any, axis: int = -1) -> em.Tensor:
    """a * sigmoid(b) for the two halves a, b of ``x`` along ``axis``."""
    t = as_float(x)
    a = axes_of("glu", axis, t.ndim)[0]
    if t.shape[a] % 2:
        raise em.InvalidArgumentError(f"ember.nn.ops.glu: axis {a} of shape {t.shape} must "
                                      "have an even length")
    first, second = em.split(t, 2, a)
    return em.multiply(first, em.sigmoid(second))


def tanh_shrink(x: Any) -> em.Tensor:
    t = as_float(x)
    return em.subtract(t, em.tanh(t))


def hard_tanh(x: Any) -> em.Tensor:
    """clip(x, -1, 1). Its gradient at -1 and 1 is 1, as ``clip``'s: Keras's TensorFlow
    backend computes ``clip_by_value``, whose gradient passes at the bounds, and JAX's
    ``where`` form agrees (torch's hardtanh gives 0 there)."""
    t = tensor(x)
    return em.minimum(em.maximum(t, -1), 1)


def hard_shrink(x: Any, threshold: float = 0.5) -> em.Tensor:
    t = as_float(x)
    return em.where(em.greater(em.abs(t), threshold), t, em.zeros_like(t))


def soft_shrink(x: Any, threshold: float = 0.5) -> em.Tensor:
    t = as_float(x)
    return em.where(em.greater(t, threshold), em.subtract(t, threshold),
                    em.where(em.less(t, -threshold), em.add(t, threshold), em.zeros_like(t)))


def squareplus(x: Any, b: float = 4) -> em.Tensor:
    t = as_float(x)
    return em.multiply(em.add(t, em.sqrt(em.add(em.square(t), b))), 0.5)


def sparse_plus(x: Any) -> em.Tensor:
    """0 for x <= -1, (x + 1)^2 / 4 for -1 < x < 1, x for x >= 1."""
    t = as_float(x)
    mid = em.multiply(em.square(em.add(t, 1)), 0.25)
    return em.where(em.less_equal(t, -1), em.zeros_like(t), em.where(em.less(t, 1), mid, t))


def sparse_sigmoid(x: Any) -> em.Tensor:
    """0 for x <= -1, (x + 1) / 2 for -1 < x < 1, 1 for x >= 1. Its gradient at -1 and 1
    is 0, as Keras's TensorFlow backend's ``where(x <= -1, 0, where(x >= 1, 1, ...))``
    gives (torch has no such function)."""
    t = as_float(x)
    # the constant first: maximum and minimum pass a tie's gradient to their first operand
    return em.minimum(1, em.maximum(0, em.multiply(em.add(t, 1), 0.5)))


def threshold(x: Any, threshold: float, default_value: float) -> em.Tensor:
    """x where x > threshold, else ``default_value``."""
    t = tensor(x)
    return em.where(em.greater(t, threshold), t, em.cast(default_value, t.dtype))


def softmax(x: Any, axis: Any = -1) -> em.Tensor:
    """Softmax over ``axis``; its output remembers ``x`` for the cross-entropies (see
    ``ember.nn._logits``)."""
    z = as_float(x)
    out = nn_ops.softmax(z, axis)
    return _logits.remember(out, z, "softmax", axis) if isinstance(axis, int) else out


def log_softmax(x: Any, axis: Any = -1) -> em.Tensor:
    return nn_ops.log_softmax(as_float(x), axis)


# --- encodings ---------------------------------------------------------------------------
def one_hot(x: Any, num_classes: int, axis: int = -1, dtype: Any = None,
            sparse: bool = False) -> em.Tensor:
    """One-hot vectors of length ``num_classes`` (float32); -1 and out-of-range indices
    give zeros."""
    if sparse:
        raise reject("one_hot", "sparse", sparse, "ember has no sparse tensors")
    i = tensor(x)
    if i.dtype.kind not in "iu":
        i = em.cast(i, em.int32)
    return em.one_hot(i, int(num_classes), axis=int(axis),
                      dtype=em.float32 if dtype is None else dtype)


def multi_hot(inputs: Any, num_classes: Any = None, axis: int = -1, dtype: Any = None,
              sparse: bool = False, **kwargs: Any) -> em.Tensor:
    """The union of the one-hot vectors of each row of ``inputs`` (``num_tokens`` is the
    old spelling of ``num_classes``)."""
    if num_classes is None and "num_tokens" in kwargs:
        num_classes = kwargs.pop("num_tokens")
    for k, v in kwargs.items():
        raise reject("multi_hot", k, v, "not an argument of keras.ops.multi_hot")
    if num_classes is None:
        raise em.InvalidArgumentError("ember.nn.ops.multi_hot: num_classes must be given")
    if sparse:
        raise reject("multi_hot", "sparse", sparse, "ember has no sparse tensors")
    i = tensor(inputs)
    hot = one_hot(i, num_classes, axis=axis, dtype=dtype)
    return em.reduce_max(hot, 1 if i.ndim > 1 else 0)


# --- losses ------------------------------------------------------------------------------
def _same_shape(fn: str, target: em.Tensor, output: em.Tensor) -> None:
    if target.shape != output.shape:
        raise em.InvalidArgumentError(f"ember.nn.ops.{fn}: target {target.shape} and output "
                                      f"{output.shape} must have the same shape")


def binary_crossentropy(target: Any, output: Any, from_logits: bool = False) -> em.Tensor:
    """-(t log(p) + (1 - t) log(1 - p)) element-wise, p clipped to [1e-7, 1 - 1e-7];
    from logits, the stable form."""
    o = as_float(output)
    t = tensor(target, o.dtype)
    _same_shape("binary_crossentropy", t, o)
    if from_logits:
        return nn_ops.sigmoid_cross_entropy_with_logits(t, o)
    p = em.clip_by_value(o, _EPSILON, 1 - _EPSILON)
    return em.negative(em.add(em.multiply(t, em.log(p)),
                              em.multiply(em.subtract(1, t), em.log(em.subtract(1, p)))))


def _log_probs(output: em.Tensor, from_logits: bool, axis: int) -> em.Tensor:
    if from_logits:
        return nn_ops.log_softmax(output, axis)
    p = em.divide(output, em.reduce_sum(output, axis, keepdims=True))
    return em.log(em.clip_by_value(p, _EPSILON, 1 - _EPSILON))


def categorical_crossentropy(target: Any, output: Any, from_logits: bool = False,
                             axis: int = -1) -> em.Tensor:
    """-sum(t log(p)) along ``axis``; ``output`` probabilities are renormalised and clipped."""
    o = as_float(output)
    t = tensor(target, o.dtype)
    _same_shape("categorical_crossentropy", t, o)
    if o.ndim < 1:
        raise em.InvalidArgumentError("ember.nn.ops.categorical_crossentropy: target and "
                                      "output must have rank >= 1")
    return em.negative(em.reduce_sum(em.multiply(t, _log_probs(o, from_logits, axis)), axis))


def sparse_categorical_crossentropy(target: Any, output: Any, from_logits: bool = False,
                                    axis: int = -1) -> em.Tensor:
    """-log(p[target]) along ``axis`` for integer ``target`` (a trailing axis of 1 is
    dropped); a target outside the classes contributes 0, as Keras's one-hot does."""
    o = as_float(output)
    t = tensor(target, em.int32)
    if t.ndim == o.ndim and t.shape[-1] == 1:
        t = em.squeeze(t, -1)
    if o.ndim < 1 or t.shape != o.shape[:-1]:
        raise em.InvalidArgumentError(f"ember.nn.ops.sparse_categorical_crossentropy: target "
                                      f"{t.shape} must have the shape of output {o.shape} "
                                      "without its last axis")
    a = axes_of("sparse_categorical_crossentropy", axis, o.ndim)[0]
    hot = em.cast(em.one_hot(t, o.shape[a], axis=a, dtype=em.bool_), em.bool_)
    logp = _log_probs(o, from_logits, a)
    return em.negative(em.reduce_sum(em.where(hot, logp, em.zeros_like(logp)), a))


# --- statistics and normalisation --------------------------------------------------------
def moments(x: Any, axes: Any, keepdims: bool = False, synchronized: bool = False
            ) -> tuple[em.Tensor, em.Tensor]:
    """(mean, variance) over ``axes``; float16 computes in float32."""
    if synchronized:
        raise reject("moments", "synchronized", synchronized,
                     "ember computes on one device; there is nothing to synchronize")
    t = as_float(x)
    ax = axes_of("moments", axes, t.ndim)
    low = t.dtype == em.float16
    mean, variance = nn_ops.moments(em.cast(t, em.float32) if low else t, list(ax),
                                    keepdims=bool(keepdims))
    if low:
        big = float(np.finfo(np.float16).max)
        mean, variance = (em.cast(em.clip_by_value(v, -big, big), em.float16)
                          for v in (mean, variance))
    return mean, variance


def normalize(x: Any, axis: int = -1, order: int = 2, epsilon: Any = None) -> em.Tensor:
    """``x`` divided by its ``order``-norm along ``axis`` (at least ``epsilon``)."""
    if isinstance(order, bool) or not isinstance(order, int) or order < 1:
        raise em.InvalidArgumentError(f"ember.nn.ops.normalize: order must be an int >= 1, "
                                      f"got order={order!r}")
    t = as_float(x)
    if t.ndim == 0:
        t = em.reshape(t, (1,))
    eps = _EPSILON if epsilon is None else epsilon
    if order == 2:
        inv = em.rsqrt(em.reduce_sum(em.square(t), axis, keepdims=True))
        return em.multiply(t, em.minimum(inv, 1.0 / eps))
    return em.divide(t, em.maximum(em.norm(t, ord=order, axis=axis, keepdims=True), eps))


def batch_normalization(x: Any, mean: Any, variance: Any, axis: int, offset: Any = None,
                        scale: Any = None, epsilon: float = 1e-3) -> em.Tensor:
    """(x - mean) / sqrt(variance + epsilon) * scale + offset, the 1-D statistics along
    ``axis``."""
    t = tensor(x)
    a = axes_of("batch_normalization", axis, t.ndim)[0]

    def along(v: Any) -> Any:
        if v is None:
            return None
        s = tensor(v)
        return em.reshape(s, [-1 if i == a else 1 for i in range(t.ndim)]) if s.ndim == 1 else s

    return nn_ops.batch_normalization(t, along(mean), along(variance), along(offset),
                                      along(scale), epsilon)


# --- pooling and convolution -------------------------------------------------------------
def _first(fn: str, data_format: Any) -> bool:
    if data_format in (None, "channels_last"):
        return False
    if data_format == "channels_first":
        return True
    raise em.InvalidArgumentError(f"ember.nn.ops.{fn}: data_format must be 'channels_last' or "
                                  f"'channels_first', got {data_format!r}")


def _padding(fn: str, padding: Any) -> str:
    p = str(padding).lower()
    if p not in ("valid", "same"):
        raise reject(fn, "padding", padding, "use 'valid' or 'same'")
    return p.upper()


def _tuple(fn: str, name: str, v: Any, n: int) -> tuple[int, ...]:
    vals = host_ints(v)
    if len(vals) == 1:
        vals = vals * n
    if len(vals) != n:
        raise em.InvalidArgumentError(f"ember.nn.ops.{fn}: {name}={v!r} must be an int or "
                                      f"{n} ints")
    return tuple(vals)


def _spatial(fn: str, x: em.Tensor) -> int:
    nd = x.ndim - 2
    if nd == 3 and fn not in _HAS_3D:
        raise reject(fn, "inputs", f"<rank-5 tensor of shape {x.shape}>",
                     "ember has 1-D and 2-D windows, not 3-D")
    if nd not in (1, 2, 3):
        raise em.InvalidArgumentError(f"ember.nn.ops.{fn}: inputs must have rank 3, 4 or 5 "
                                      f"(batch, spatial..., channels), got shape {x.shape}")
    return nd


_HAS_3D = ("conv", "max_pool", "average_pool")  # nn_ops.conv3d, max_pool3d, avg_pool3d


def _as_2d(x: em.Tensor, first: bool) -> em.Tensor:
    """A 1-D batch (N, W, C) or (N, C, W) with a height axis of 1 added."""
    return em.expand_dims(x, 2 if first else 1)


def _from_2d(y: em.Tensor, first: bool) -> em.Tensor:
    return em.squeeze(y, 2 if first else 1)


def _pool(fn: str, inputs: Any, pool_size: Any, strides: Any, padding: Any,
          data_format: Any) -> em.Tensor:
    x = tensor(inputs)
    first, nd = _first(fn, data_format), _spatial(fn, x)
    k = _tuple(fn, "pool_size", pool_size, nd)
    s = k if strides is None else _tuple(fn, "strides", strides, nd)
    pad = _padding(fn, padding)
    if nd == 3:
        pool3 = nn_ops.max_pool3d if fn == "max_pool" else nn_ops.avg_pool3d
        return pool3(x, k, s, pad, "NCDHW" if first else "NDHWC")
    pool = nn_ops.max_pool2d if fn == "max_pool" else nn_ops.avg_pool2d
    layout = "NCHW" if first else "NHWC"
    if nd == 1:
        return _from_2d(pool(_as_2d(x, first), (1,) + k, (1,) + s, pad, layout), first)
    return pool(x, k, s, pad, layout)


def max_pool(inputs: Any, pool_size: Any, strides: Any = None, padding: str = "valid",
             data_format: Any = None) -> em.Tensor:
    """The maximum over each window (1-D, 2-D or 3-D; ``strides`` default to
    ``pool_size``)."""
    return _pool("max_pool", inputs, pool_size, strides, padding, data_format)


def average_pool(inputs: Any, pool_size: Any, strides: Any = None, padding: str = "valid",
                 data_format: Any = None) -> em.Tensor:
    """The mean over each window; with "same" padding only real elements count."""
    return _pool("average_pool", inputs, pool_size, strides, padding, data_format)


def conv(inputs: Any, kernel: Any, strides: Any = 1, padding: str = "valid",
         data_format: Any = None, dilation_rate: Any = 1) -> em.Tensor:
    """N-D convolution (1-D, 2-D, 3-D) with ``kernel`` of shape (spatial..., in_channels /
    groups, out_channels): fewer kernel input channels than the input has make a grouped
    convolution, as in Keras."""
    x, w = tensor(inputs), tensor(kernel)
    first, nd = _first("conv", data_format), _spatial("conv", x)
    if w.ndim != nd + 2:
        raise em.InvalidArgumentError(f"ember.nn.ops.conv: kernel must have rank {nd + 2} for "
                                      f"inputs {x.shape}, got {w.shape}")
    s = _tuple("conv", "strides", strides, nd)
    d = _tuple("conv", "dilation_rate", dilation_rate, nd)
    pad = _padding("conv", padding)
    c = x.shape[1] if first else x.shape[-1]
    cin = w.shape[-2]
    if cin == 0 or c % cin or w.shape[-1] % (c // cin):
        raise em.InvalidArgumentError(f"ember.nn.ops.conv: inputs have {c} channels, which "
                                      f"kernel {w.shape} cannot group ({cin} per group)")
    return _conv_one(x, w, s, pad, first, nd, d)  # core's convolutions group themselves


def _conv_one(x: em.Tensor, w: em.Tensor, s: tuple[int, ...], pad: str, first: bool,
              nd: int, d: tuple[int, ...]) -> em.Tensor:
    if nd == 1:
        return nn_ops.conv1d(x, w, s[0], pad, "NCW" if first else "NWC", d[0])
    if nd == 3:
        return nn_ops.conv3d(x, w, s, pad, "NCDHW" if first else "NDHWC", d)
    return nn_ops.conv2d(x, w, s, pad, "NCHW" if first else "NHWC", d)


def depthwise_conv(inputs: Any, kernel: Any, strides: Any = 1, padding: str = "valid",
                   data_format: Any = None, dilation_rate: Any = 1) -> em.Tensor:
    """Each input channel convolved with its own ``kernel[..., c, :]`` filters (1-D, 2-D);
    kernel (spatial..., channels, multiplier)."""
    x, w = tensor(inputs), tensor(kernel)
    first, nd = _first("depthwise_conv", data_format), _spatial("depthwise_conv", x)
    if w.ndim != nd + 2:
        raise em.InvalidArgumentError(f"ember.nn.ops.depthwise_conv: kernel must have rank "
                                      f"{nd + 2} for inputs {x.shape}, got {w.shape}")
    s = _tuple("depthwise_conv", "strides", strides, nd)
    d = _tuple("depthwise_conv", "dilation_rate", dilation_rate, nd)
    pad = _padding("depthwise_conv", padding)
    layout = "NCHW" if first else "NHWC"
    if nd == 1:
        y = nn_ops.depthwise_conv2d(_as_2d(x, first), em.expand_dims(w, 0), (1,) + s, pad,
                                    layout, (1,) + d)
        return _from_2d(y, first)
    return nn_ops.depthwise_conv2d(x, w, s, pad, layout, d)


# --- attention ---------------------------------------------------------------------------
def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None,
                          scale: Any = None, is_causal: bool = False,
                          flash_attention: Any = None, attn_logits_soft_cap: Any = None
                          ) -> em.Tensor:
    """softmax(scale * Q K^T + bias, masked) V for (batch, length, heads, head_dim) inputs;
    keys and values with fewer heads (dividing the query's) are shared by groups of query
    heads (grouped-query attention). ``mask`` is True where a key is attended to;
    ``is_causal`` keeps the keys at or before each query's position."""
    if flash_attention:
        raise reject("dot_product_attention", "flash_attention", flash_attention,
                     "ember computes plain softmax attention; pass None or False")
    if attn_logits_soft_cap is not None:
        raise reject("dot_product_attention", "attn_logits_soft_cap", attn_logits_soft_cap,
                     "Keras has it on JAX with TPUs only")
    q, k, v = tensor(query), tensor(key), tensor(value)
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise em.InvalidArgumentError(f"ember.nn.ops.dot_product_attention: query, key and "
                                      f"value must be 4-D (batch, length, heads, head_dim), "
                                      f"got {q.shape}, {k.shape}, {v.shape}")
    dt = em.result_type(q.dtype, k.dtype, v.dtype)
    q, k, v = (t if t.dtype == dt else em.cast(t, dt) for t in (q, k, v))
    n, kv = q.shape[2], k.shape[2]
    if kv != n:
        if n % kv:
            raise em.InvalidArgumentError(f"ember.nn.ops.dot_product_attention: query has {n} "
                                          f"heads, which key's {kv} heads do not divide")
        k, v = (em.reshape(em.broadcast_to(em.expand_dims(t, 3), t.shape[:3] + (n // kv,)
                                           + t.shape[3:]), t.shape[:2] + (n,) + t.shape[3:])
                for t in (k, v))
    sc = 1.0 / math.sqrt(k.shape[-1]) if scale is None else scale
    logits_dt = em.float32 if dt in (em.float16, em.bfloat16) else dt
    logits = em.einsum("btnh,bsnh->bnts", q, k)
    logits = em.multiply(em.cast(logits, logits_dt) if logits.dtype != logits_dt else logits, sc)
    if bias is not None:
        logits = em.add(logits, tensor(bias, logits_dt))
    if mask is not None or is_causal:
        keep = None if mask is None else em.cast(tensor(mask), em.bool_)
        if is_causal:
            t_len, s_len = logits.shape[2], logits.shape[3]
            with on_device_of(logits):
                d = em.subtract(em.reshape(em.range(s_len), (1, s_len)),
                                em.reshape(em.range(t_len), (t_len, 1)))
            causal = em.less_equal(d, 0)
            keep = causal if keep is None else em.logical_and(keep, causal)
        big = 65500.0 if logits_dt == em.float16 else 3.38953e38
        with on_device_of(logits):
            low = em.constant(-0.7 * big, dtype=logits_dt)
        logits = em.where(keep, logits, low)
    probs = nn_ops.softmax(em.cast(logits, em.float32) if logits.dtype != em.float32 and
                           logits.dtype != em.float64 else logits)
    probs = em.cast(probs, dt) if probs.dtype != dt else probs
    return em.einsum("bnts,bsnh->btnh", probs, v)
