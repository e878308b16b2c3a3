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

from . import _dtypes, random
from ._errors import InvalidArgumentError
from ._nn_ctc import ctc_beam_search_decoder, ctc_greedy_decoder, ctc_loss
from ._ops import _args
from ._ops import conv_3d as _conv3d
from ._ops import conv_depthwise as _depthwise
from ._ops import conv_select as _conv
from ._ops import math as m
from ._ops import reduce as r
from ._ops.array import (
    concat,
    expand_dims,
    gather,
    reshape,
    split,
    squeeze,
    transpose,
)
from ._ops.conv import _pair, extract_patches, padding_amounts
from ._ops.creation import range as _range
from ._ops.creation import zeros_like
from ._ops.define_nn import leaky_relu as _leaky_relu
from ._ops.define_nn import relu, sparse_softmax_xent
from ._ops.linalg import _abs_square, clip_by_norm
from ._ops.math_complex import real as _real
from ._ops.nn_dense import dense
from ._ops.nn_fused import batch_norm_training, bias_activation, max_pool_tiled
from ._ops.recurrent import gru_cell, lstm_cell
from ._ops.recurrent_gru_sequence import gru_sequence
from ._ops.recurrent_sequence import lstm_sequence

sigmoid = m.sigmoid
tanh = m.tanh
softplus = m.softplus

__all__ = [
    "avg_pool2d", "batch_normalization", "bias_add", "conv1d", "conv2d", "conv2d_transpose",
    "depthwise_conv2d", "separable_conv2d",
    "conv3d", "conv3d_transpose", "max_pool3d", "avg_pool3d",
    "dropout", "elu", "gelu", "l2_loss", "leaky_relu", "log_softmax", "max_pool2d", "moments",
    "relu", "relu6", "selu", "sigmoid", "sigmoid_cross_entropy_with_logits", "softmax",
    "softmax_cross_entropy_with_logits", "softplus", "sparse_softmax_cross_entropy_with_logits",
    "swish", "tanh", "max_pool", "avg_pool", "embedding_lookup", "flatten",
    "lstm_cell", "gru_cell", "lstm_sequence", "gru_sequence", "batch_norm_training",
    "bias_activation", "dense", "xw_plus_b", "relu_layer", "depth_to_space", "space_to_depth",
    "ctc_loss", "ctc_greedy_decoder", "ctc_beam_search_decoder",
]


# --- activations ------------------------------------------------------------------------
def relu6(features: Any, name: str | None = None) -> Any:
    """min(max(x, 0), 6). The gradient is 0 at both kinks, 0 and 6, as TensorFlow's
    Relu6Grad (``dy * (x > 0) * (x < 6)``) and torch's."""
    # 6 first: minimum passes a tie's gradient to its first operand (relu's is 0 at 0)
    return m.minimum(6, relu(features))


def leaky_relu(features: Any, alpha: float = 0.2, name: str | None = None) -> Any:
    """x where x > 0, else alpha * x."""
    x = _args.tensor(features)
    if _dtypes.is_floating(x.dtype) and isinstance(alpha, (int, float)):
        return _leaky_relu(x, alpha)
    return m.where(m.greater(x, 0), x, m.multiply(x, alpha))


def elu(features: Any, name: str | None = None) -> Any:
    """x where x > 0, else exp(x) - 1."""
    x = _args.tensor(features)
    return m.where(m.greater(x, 0), x, m.expm1(m.minimum(x, 0)))


def selu(features: Any, name: str | None = None) -> Any:
    """Scaled ELU with the self-normalising constants: scale * x for x >= 0, else
    scale * alpha * (exp(x) - 1). The gradient at 0 is ``scale``, as TensorFlow's SeluGrad
    (``x < 0 ? dy * (y + scale * alpha) : dy * scale``; torch and JAX take the left one,
    scale * alpha)."""
    a, s = 1.6732632423543772, 1.0507009873554805
    x = _args.tensor(features)
    return m.multiply(m.where(m.less(x, 0), m.multiply(m.expm1(m.minimum(x, 0)), a), x), s)


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


def _channels_first(op: str, data_format: Any, last: tuple[str, ...],
                    first: tuple[str, ...]) -> bool:
    """Whether ``data_format`` puts channels first; an unknown format raises naming it."""
    if data_format is None or data_format in last:
        return False
    if data_format in first:
        return True
    raise InvalidArgumentError(f"{op}: data_format must be one of {last + first}, "
                               f"got {data_format!r}")


def _to_last(x: Any) -> Any:
    """NC... -> N...C."""
    return transpose(x, [0] + list(range(2, x.ndim)) + [1])


def _to_first(x: Any) -> Any:
    """N...C -> NC..."""
    return transpose(x, [0, x.ndim - 1] + list(range(1, x.ndim - 1)))


def bias_add(value: Any, bias: Any, data_format: str | None = None,
             name: str | None = None) -> Any:
    """``value + bias`` with ``bias`` along the channel axis: the last one, or axis 1 with
    ``data_format="NCHW"`` (or ``"NC..."``), as TensorFlow.

    Examples:
        >>> import ember.core as em
        >>> em.nn_ops.bias_add(em.zeros([1, 2, 1]), [1., 2.], data_format="NCHW").numpy()[0, :, 0]
        array([1., 2.], dtype=float32)
    """
    v, b = _args.tensor(value), _args.tensor(bias)
    first = _channels_first("bias_add", data_format, ("NHWC", "NWC", "NDHWC", "N...C"),
                            ("NCHW", "NCW", "NCDHW", "NC..."))
    axis = 1 if first else -1
    if b.ndim != 1 or v.ndim < (2 if first else 1) or v.shape[axis] != b.shape[0]:
        where = "channel axis 1" if first else "last axis"
        raise InvalidArgumentError(f"bias_add: bias of shape {b.shape} does not match the "
                                   f"{where} of value {v.shape} (data_format={data_format!r})")
    if first:
        b = reshape(b, [-1] + [1] * (v.ndim - 2))
    return m.add(v, b)


def xw_plus_b(x: Any, weights: Any, biases: Any, name: str | None = None) -> Any:
    """``matmul(x, weights) + biases`` for a matrix ``x`` (TensorFlow 1's
    ``tf.nn.xw_plus_b``), as one op (``dense``): on a GPU, one cuBLASLt product that
    adds the bias in its epilog.

    Examples:
        >>> import ember.core as em
        >>> em.nn_ops.xw_plus_b([[1.0, 2.0]], [[1.0], [1.0]], [0.5])
        ember.Tensor([[3.5]], shape=(1, 1), dtype=float32)
    """
    return dense(x, weights, biases, "linear")


def relu_layer(x: Any, weights: Any, biases: Any, name: str | None = None) -> Any:
    """``relu(matmul(x, weights) + biases)`` for a matrix ``x`` (TensorFlow 1's
    ``tf.nn.relu_layer``), as one op (``dense``).

    Examples:
        >>> import ember.core as em
        >>> em.nn_ops.relu_layer([[1.0, 2.0]], [[1.0, -1.0], [1.0, -1.0]], [0.5, 0.5])
        ember.Tensor([[3.5 0. ]], shape=(1, 2), dtype=float32)
    """
    return dense(x, weights, biases, "relu")


# --- convolution and pooling ------------------------------------------------------------
def _conv_groups(op: str, x_shape: Any, w_shape: Any) -> int:
    """The number of groups G of a channels-last convolution: filters (..., C_in / G,
    C_out) split the input's C_in channels into G groups of C_in / G, each convolved with
    its own C_out / G filters (output channels ``g * C_out / G ...``), as ``tf.nn.conv2d``
    and Keras's ``groups`` do. G = 1 when the channel counts are equal."""
    c, cg, co = int(x_shape[-1]), int(w_shape[-2]), int(w_shape[-1])
    if c == cg:
        return 1
    if cg < 1 or c < cg or c % cg:
        raise InvalidArgumentError(
            f"{op}: input has {c} channels but filters {tuple(w_shape)} expect {cg} (input "
            f"shape {tuple(x_shape)}); a grouped convolution needs the filters' {cg} input "
            f"channels to divide the input's {c}")
    g = c // cg
    if co % g:
        raise InvalidArgumentError(
            f"{op}: input {tuple(x_shape)} and filters {tuple(w_shape)} make {g} groups of "
            f"{cg} channels, but the filters' {co} output channels are not divisible by "
            f"{g} groups")
    return g


def _grouped(x: Any, w: Any, groups: int, conv: Any) -> Any:
    """``conv`` of each channel group of ``x`` with its slice of the output channels of
    ``w``, joined along the channels (every piece an op with its gradient rule)."""
    xs, ws = split(x, groups, axis=-1), split(w, groups, axis=-1)
    return concat([conv(a, b) for a, b in zip(xs, ws)], -1)


def conv2d(input: Any, filters: Any, strides: Any = 1, padding: Any = "VALID",
           data_format: str = "NHWC", dilations: Any = 1, name: str | None = None) -> Any:
    """2-D convolution of an NHWC (or ``data_format="NCHW"``) batch with filters of shape
    (KH, KW, C_in, C_out); ``strides`` and ``dilations`` are given for the spatial axes
    (an int, a pair, or TensorFlow's length-4 form in the layout of ``data_format``).

    Grouped, as ``tf.nn.conv2d``: filters (KH, KW, C_in / G, C_out) split the input's
    channels into G groups, group ``g`` convolved with output channels
    ``g * C_out / G`` to ``(g + 1) * C_out / G`` (Keras's and PyTorch's ``groups=G``;
    C_out must be divisible by G). One input channel per group is a depthwise convolution.

    Examples:
        >>> import ember.core as em
        >>> x = em.reshape(em.range(4.0), (1, 1, 1, 4))
        >>> em.nn_ops.conv2d(x, em.ones((1, 1, 2, 4))).numpy().ravel()  # two groups
        array([1., 1., 5., 5.], dtype=float32)
    """
    x, w = _args.tensor(input), _args.tensor(filters)
    if _channels_first("conv2d", data_format, ("NHWC",), ("NCHW",)):
        if x.ndim != 4:
            raise InvalidArgumentError(f"conv2d: expected NCHW input of rank 4, got {x.shape}")
        return _to_first(conv2d(_to_last(x), w, _nchw_pair(strides), _nchw_pair(padding),
                                "NHWC", _nchw_pair(dilations)))
    if x.ndim != 4 or w.ndim != 4:
        raise InvalidArgumentError(f"conv2d: expected input (N, H, W, C) and filters "
                                   f"(KH, KW, C_in, C_out), got {x.shape} and {w.shape}")
    groups = _conv_groups("conv2d", x.shape, w.shape)
    s, d = _pair("conv2d", strides, "strides"), _pair("conv2d", dilations, "dilations")
    pads = padding_amounts("conv2d", padding, x.shape[1:3], (w.shape[0], w.shape[1]), s, d)
    for ax, (n, k, dd, (p0, p1)) in enumerate(zip(x.shape[1:3], w.shape[:2], d, pads)):
        if n + p0 + p1 < (k - 1) * dd + 1:
            raise InvalidArgumentError(f"conv2d: filters {w.shape} (dilation {d}) are larger "
                                       f"than the padded input {x.shape} along axis {ax + 1}")
    if groups == 1:
        return _conv.conv2d(x, w, s, d, pads)
    if w.shape[2] == 1:  # one channel per group: output channel c * M + m is depthwise's
        kh, kw, _, co = w.shape
        return _depthwise.depthwise_conv2d_native(
            x, reshape(w, (kh, kw, groups, co // groups)), s, d, pads)
    return _grouped(x, w, groups, lambda a, b: _conv.conv2d(a, b, s, d, pads))


def depthwise_conv2d(input: Any, filter: Any, strides: Any, padding: Any,
                     data_format: str | None = None, dilations: Any = None,
                     name: str | None = None) -> Any:
    """Depthwise 2-D convolution, as ``tf.nn.depthwise_conv2d``: each of the C input
    channels is convolved with its own M filters, ``filter`` of shape (KH, KW, C, M), into
    C * M output channels (channel ``c * M + m`` from input channel ``c``); channels are
    never mixed. ``strides`` (an int, a pair, or TensorFlow's length-4 form in the layout
    of ``data_format``) and ``dilations`` (None, an int or a pair) may both exceed 1.

    Examples:
        >>> import ember.core as em
        >>> x = em.reshape(em.range(8.0), (1, 2, 2, 2))
        >>> em.nn_ops.depthwise_conv2d(x, em.ones((2, 2, 2, 1)), 1, "VALID").numpy().ravel()
        array([12., 16.], dtype=float32)
    """
    x, w = _args.tensor(input), _args.tensor(filter)
    op = "depthwise_conv2d"
    d = 1 if dilations is None else dilations
    if _channels_first(op, data_format, ("NHWC",), ("NCHW",)):
        if x.ndim != 4:
            raise InvalidArgumentError(f"{op}: expected NCHW input of rank 4, got {x.shape}")
        return _to_first(depthwise_conv2d(_to_last(x), w, _nchw_pair(strides),
                                          _nchw_pair(padding), "NHWC", _nchw_pair(d)))
    if x.ndim != 4 or w.ndim != 4:
        raise InvalidArgumentError(f"{op}: expected input (N, H, W, C) and filter "
                                   f"(KH, KW, C, multiplier), got {x.shape} and {w.shape}")
    if x.shape[3] != w.shape[2]:
        raise InvalidArgumentError(f"{op}: input has {x.shape[3]} channels but filter "
                                   f"{w.shape} expects {w.shape[2]}")
    s, dd = _pair(op, strides, "strides"), _pair(op, d, "dilations")
    pads = padding_amounts(op, padding, x.shape[1:3], (w.shape[0], w.shape[1]), s, dd)
    for ax, (n, k, di, (p0, p1)) in enumerate(zip(x.shape[1:3], w.shape[:2], dd, pads)):
        if n + p0 + p1 < (k - 1) * di + 1:
            raise InvalidArgumentError(f"{op}: filter {w.shape} (dilation {dd}) is larger "
                                       f"than the padded input {x.shape} along axis {ax + 1}")
    return _depthwise.depthwise_conv2d_native(x, w, s, dd, pads)


def separable_conv2d(input: Any, depthwise_filter: Any, pointwise_filter: Any, strides: Any,
                     padding: Any, data_format: str | None = None, dilations: Any = None,
                     name: str | None = None) -> Any:
    """Depthwise-separable 2-D convolution, as ``tf.nn.separable_conv2d``: a
    :func:`depthwise_conv2d` with ``depthwise_filter`` (KH, KW, C, M), then a 1x1
    convolution with ``pointwise_filter`` (1, 1, C * M, C_out) that mixes the channels.

    Examples:
        >>> import ember.core as em
        >>> y = em.nn_ops.separable_conv2d(em.ones((1, 4, 4, 3)), em.ones((3, 3, 3, 2)),
        ...                                em.ones((1, 1, 6, 5)), 1, "SAME")
        >>> y.shape, float(y[0, 1, 1, 0])
        ((1, 4, 4, 5), 54.0)
    """
    op = "separable_conv2d"
    dw, pw = _args.tensor(depthwise_filter), _args.tensor(pointwise_filter)
    if dw.ndim != 4 or pw.ndim != 4 or pw.shape[:2] != (1, 1) \
            or pw.shape[2] != dw.shape[2] * dw.shape[3]:
        raise InvalidArgumentError(f"{op}: expected depthwise_filter (KH, KW, C, M) and "
                                   f"pointwise_filter (1, 1, C * M, C_out), got {dw.shape} "
                                   f"and {pw.shape}")
    y = depthwise_conv2d(input, dw, strides, padding, data_format, dilations)
    return conv2d(y, pw, 1, "VALID", "NHWC" if data_format is None else data_format)


def _nchw_pair(v: Any) -> Any:
    """A length-4 NCHW strides/dilations/ksize/padding list in NHWC order; others unchanged."""
    if not isinstance(v, (int, str)) and hasattr(v, "__len__") and len(v) == 4:
        v = list(v)
        return [v[0], v[2], v[3], v[1]]
    return v


def conv1d(input: Any, filters: Any, stride: Any = 1, padding: Any = "VALID",
           data_format: str = "NWC", dilations: Any = 1, name: str | None = None) -> Any:
    """1-D convolution of an NWC (or ``data_format="NCW"``) batch with filters of shape
    (K, C_in, C_out); filters (K, C_in / G, C_out) make a grouped convolution, as
    :func:`conv2d`'s."""
    x, w = _args.tensor(input), _args.tensor(filters)
    if _channels_first("conv1d", data_format, ("NWC",), ("NCW",)):
        if x.ndim != 3:
            raise InvalidArgumentError(f"conv1d: expected NCW input of rank 3, got {x.shape}")
        if not isinstance(stride, int) and len(stride) == 3:
            stride = [stride[0], stride[2], stride[1]]
        return _to_first(conv1d(_to_last(x), w, stride, padding, "NWC", dilations))
    if x.ndim != 3 or w.ndim != 3:
        raise InvalidArgumentError(f"conv1d: expected input (N, W, C) and filters (K, C_in, "
                                   f"C_out), got {x.shape} and {w.shape}")
    _conv_groups("conv1d", x.shape, w.shape)  # (its errors in conv1d's shapes)
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
    shape of the result, NHWC (or NCHW with ``data_format="NCHW"``).
    """
    x, w = _args.tensor(input), _args.tensor(filters)
    out_shape = _args.shape("conv2d_transpose", output_shape)
    if _channels_first("conv2d_transpose", data_format, ("NHWC",), ("NCHW",)):
        if x.ndim != 4 or len(out_shape) != 4:
            raise InvalidArgumentError(f"conv2d_transpose: expected rank-4 NCHW input and "
                                       f"output_shape, got {x.shape} and {out_shape}")
        o = out_shape
        return _to_first(conv2d_transpose(_to_last(x), w, (o[0], o[2], o[3], o[1]),
                                          _nchw_pair(strides), _nchw_pair(padding), "NHWC",
                                          _nchw_pair(dilations)))
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
    return _conv.conv2d_backprop_input(x, w, out_shape, s, d, pads)


def _pool_args(op: str, x: Any, ksize: Any, strides: Any) -> tuple[Any, Any]:
    if x.ndim != 4:
        raise InvalidArgumentError(f"{op}: expected NHWC input of rank 4, got shape {x.shape}")
    k = _pair(op, ksize, "ksize")
    s = _pair(op, k if strides is None else strides, "strides")
    return k, s


def _tiles_exactly(x: Any, k: tuple[int, int], s: tuple[int, int], pads: Any) -> bool:
    """Whether the windows tile the input: no padding, stride = window, sizes divisible."""
    return (k == s and pads == ((0, 0), (0, 0)) and x.shape[1] % k[0] == 0
            and x.shape[2] % k[1] == 0)


def _blocks(x: Any, k: tuple[int, int]) -> Any:
    """(N, H, W, C) as (N, H / kh, kh, W / kw, kw, C): non-overlapping windows as a view,
    so a pool is one reduction and its gradient one broadcast (no window gathering)."""
    n, h, w, c = x.shape
    return reshape(x, (n, h // k[0], k[0], w // k[1], k[1], c))


def max_pool2d(input: Any, ksize: Any, strides: Any = None, padding: Any = "VALID",
               data_format: str = "NHWC", name: str | None = None) -> Any:
    """Maximum over each window of an NHWC (or ``data_format="NCHW"``) batch."""
    x = _args.tensor(input)
    if _channels_first("max_pool2d", data_format, ("NHWC",), ("NCHW",)):
        _pool_args("max_pool2d", x, _nchw_pair(ksize), _nchw_pair(strides))  # checks first
        return _to_first(max_pool2d(_to_last(x), _nchw_pair(ksize), _nchw_pair(strides),
                                    _nchw_pair(padding)))
    k, s = _pool_args("max_pool2d", x, ksize, strides)
    pads = padding_amounts("max_pool2d", padding, x.shape[1:3], k, s, (1, 1))
    if _tiles_exactly(x, k, s, pads):
        return max_pool_tiled(x, k)
    low = -np.inf if _dtypes.is_floating(x.dtype) else np.iinfo(x.dtype).min  # bfloat16 too
    p = extract_patches(x, k, s, 1, padding, pad_value=low)
    # each window's first element (row-major) holding its maximum, selected: the gradient
    # goes to it alone, as TensorFlow's MaxPoolGrad and PyTorch's (reduce_max shares it
    # among ties); argmax finds a NaN first, so a NaN window stays NaN
    n, oh, ow = p.shape[:3]
    flat = reshape(p, (n, oh, ow, k[0] * k[1], x.shape[-1]))
    first = m.equal(expand_dims(r.argmax(flat, axis=3), 3),
                    reshape(_range(k[0] * k[1], dtype=np.int64), (1, 1, 1, -1, 1)))
    return r.reduce_sum(m.where(first, flat, zeros_like(flat)), axis=3)


def avg_pool2d(input: Any, ksize: Any, strides: Any = None, padding: Any = "VALID",
               data_format: str = "NHWC", name: str | None = None) -> Any:
    """Mean over each window of an NHWC (or ``data_format="NCHW"``) batch; SAME padding
    averages real elements only."""
    x = _args.tensor(input)
    if _channels_first("avg_pool2d", data_format, ("NHWC",), ("NCHW",)):
        _pool_args("avg_pool2d", x, _nchw_pair(ksize), _nchw_pair(strides))
        return _to_first(avg_pool2d(_to_last(x), _nchw_pair(ksize), _nchw_pair(strides),
                                    _nchw_pair(padding)))
    k, s = _pool_args("avg_pool2d", x, ksize, strides)
    pads = padding_amounts("avg_pool2d", padding, x.shape[1:3], k, s, (1, 1))
    if _tiles_exactly(x, k, s, pads):
        return r.reduce_mean(_blocks(x, k), axis=(2, 4))
    total = r.reduce_sum(extract_patches(x, k, s, 1, padding), axis=(3, 4))
    if pads == ((0, 0), (0, 0)):
        return m.divide(total, k[0] * k[1])
    ones = np.ones((1, x.shape[1], x.shape[2], 1), dtype=x.dtype)
    count = r.reduce_sum(extract_patches(ones, k, s, 1, padding), axis=(3, 4))
    return m.divide(total, count)


max_pool = max_pool2d
avg_pool = avg_pool2d


# --- 3-D: NDHWC convolution and pooling ---------------------------------------------------
def _ncdhw(v: Any) -> Any:
    """A length-5 NCDHW strides/dilations/ksize/padding list in NDHWC order; others
    unchanged."""
    if not isinstance(v, (int, str)) and hasattr(v, "__len__") and len(v) == 5:
        v = list(v)
        return [v[0], v[2], v[3], v[4], v[1]]
    return v


def conv3d(input: Any, filters: Any, strides: Any = 1, padding: Any = "VALID",
           data_format: str = "NDHWC", dilations: Any = 1, name: str | None = None) -> Any:
    """3-D convolution of an NDHWC (or ``data_format="NCDHW"``) batch with filters of
    shape (KD, KH, KW, C_in, C_out), as ``tf.nn.conv3d``; ``strides`` and ``dilations``
    are an int, three ints (depth, height, width) or TensorFlow's length-5 form in the
    layout of ``data_format``; ``padding`` is ``"SAME"``, ``"VALID"`` or explicit
    ``[[front, back], [top, bottom], [left, right]]``. Computed as one 2-D convolution
    per depth tap of the filters (the 2-D engine's algorithms), added up. Filters
    (KD, KH, KW, C_in / G, C_out) make a grouped convolution, as :func:`conv2d`'s.

    Examples:
        >>> import ember.core as em
        >>> x = em.ones((1, 4, 5, 5, 2))
        >>> em.nn_ops.conv3d(x, em.ones((3, 3, 3, 2, 4)), strides=[1, 1, 2, 2, 1],
        ...                  padding="SAME").shape
        (1, 4, 3, 3, 4)
        >>> float(em.nn_ops.conv3d(x, em.ones((2, 2, 2, 2, 1)))[0, 0, 0, 0, 0])
        16.0
    """
    op = "conv3d"
    x, w = _args.tensor(input), _args.tensor(filters)
    if _channels_first(op, data_format, ("NDHWC",), ("NCDHW",)):
        if x.ndim != 5:
            raise InvalidArgumentError(f"conv3d: expected NCDHW input of rank 5, got {x.shape}")
        return _to_first(conv3d(_to_last(x), w, _ncdhw(strides), _ncdhw(padding), "NDHWC",
                                _ncdhw(dilations)))
    if x.ndim != 5 or w.ndim != 5:
        raise InvalidArgumentError(f"conv3d: expected input (N, D, H, W, C) and filters "
                                   f"(KD, KH, KW, C_in, C_out), got {x.shape} and {w.shape}")
    groups = _conv_groups(op, x.shape, w.shape)
    s, d = _conv3d.triple(op, strides, "strides"), _conv3d.triple(op, dilations, "dilations")
    pads = _conv3d.padding_amounts_3d(op, padding, x.shape[1:4], w.shape[:3], s, d)
    if groups == 1:
        return _conv3d.conv3d(x, w, s, d, pads)
    if any(_conv3d.out_size(n, k, ss, dd, p0, p1) < 1 for n, k, ss, dd, (p0, p1) in
           zip(x.shape[1:4], w.shape[:3], s, d, pads)):
        raise InvalidArgumentError(f"conv3d: filters {w.shape} (dilation {d}) are larger "
                                   f"than the padded input {x.shape} (padding {pads})")
    return _grouped(x, w, groups, lambda a, b: _conv3d.conv3d(a, b, s, d, pads))


def conv3d_transpose(input: Any, filters: Any, output_shape: Any, strides: Any = 1,
                     padding: Any = "SAME", data_format: str = "NDHWC", dilations: Any = 1,
                     name: str | None = None) -> Any:
    """The gradient of :func:`conv3d` with respect to its input, as
    ``tf.nn.conv3d_transpose``: ``filters`` (KD, KH, KW, C_out, C_in), ``output_shape``
    the result's shape, NDHWC (or NCDHW with ``data_format="NCDHW"``).

    Examples:
        >>> import ember.core as em
        >>> em.nn_ops.conv3d_transpose(em.ones((1, 2, 2, 2, 3)), em.ones((3, 3, 3, 4, 3)),
        ...                            (1, 4, 4, 4, 4), strides=2).shape
        (1, 4, 4, 4, 4)
    """
    op = "conv3d_transpose"
    x, w = _args.tensor(input), _args.tensor(filters)
    out_shape = _args.shape(op, output_shape)
    if _channels_first(op, data_format, ("NDHWC",), ("NCDHW",)):
        if x.ndim != 5 or len(out_shape) != 5:
            raise InvalidArgumentError(f"conv3d_transpose: expected rank-5 NCDHW input and "
                                       f"output_shape, got {x.shape} and {out_shape}")
        o = out_shape
        return _to_first(conv3d_transpose(_to_last(x), w, (o[0], o[2], o[3], o[4], o[1]),
                                          _ncdhw(strides), _ncdhw(padding), "NDHWC",
                                          _ncdhw(dilations)))
    if x.ndim != 5 or w.ndim != 5 or len(out_shape) != 5:
        raise InvalidArgumentError(f"conv3d_transpose: expected rank-5 input, filters and "
                                   f"output_shape, got {x.shape}, {w.shape}, {out_shape}")
    oc, ic = w.shape[3], w.shape[4]
    if x.shape[4] != ic or out_shape[4] != oc or out_shape[0] != x.shape[0]:
        raise InvalidArgumentError(f"conv3d_transpose: filters {w.shape} need input channels "
                                   f"{ic} and output channels {oc}; got input {x.shape}, "
                                   f"output_shape {out_shape}")
    s, d = _conv3d.triple(op, strides, "strides"), _conv3d.triple(op, dilations, "dilations")
    pads = _conv3d.padding_amounts_3d(op, padding, out_shape[1:4], w.shape[:3], s, d)
    exp = tuple(_conv3d.out_size(n, k, ss, dd, p0, p1) for n, k, ss, dd, (p0, p1) in
                zip(out_shape[1:4], w.shape[:3], s, d, pads))
    if exp != tuple(x.shape[1:4]):
        raise InvalidArgumentError(f"conv3d_transpose: output_shape {out_shape} convolved gives "
                                   f"spatial size {exp}, but input has {tuple(x.shape[1:4])}")
    return _conv3d.conv3d_backprop_input(x, w, out_shape, s, d, pads)


def _pool3d(op: str, input: Any, ksize: Any, strides: Any, padding: Any, data_format: str,
            pool2d: Any) -> Any:
    """A 3-D pool as two 2-D ones: over (KH, KW) in every frame, then over KD windows of
    the frames' results. Both maximum and mean (of the real elements: the count of a
    padded 3-D window is the product of its counts along each axis) separate so."""
    x = _args.tensor(input)
    if _channels_first(op, data_format, ("NDHWC",), ("NCDHW",)):
        if x.ndim != 5:
            raise InvalidArgumentError(f"{op}: expected NCDHW input of rank 5, got shape "
                                       f"{x.shape}")
        return _to_first(_pool3d(op, _to_last(x), _ncdhw(ksize), _ncdhw(strides),
                                 _ncdhw(padding), "NDHWC", pool2d))
    if x.ndim != 5:
        raise InvalidArgumentError(f"{op}: expected NDHWC input of rank 5, got shape {x.shape}")
    k = _conv3d.triple(op, ksize, "ksize")
    s = _conv3d.triple(op, k if strides is None else strides, "strides")
    pads = _conv3d.padding_amounts_3d(op, padding, x.shape[1:4], k, s, (1, 1, 1))
    n, d, h, w, c = x.shape
    for ax, (size, kk, (p0, p1)) in enumerate(zip((d, h, w), k, pads)):
        if size + p0 + p1 < kk:
            raise InvalidArgumentError(f"{op}: window {k} is larger than the padded input "
                                       f"{x.shape} along axis {ax + 1}")
    frames = pool2d(reshape(x, (n * d, h, w, c)), k[1:], s[1:], [(0, 0), *pads[1:], (0, 0)])
    oh, ow = frames.shape[1:3]
    y = pool2d(reshape(frames, (n, d, oh * ow, c)), (k[0], 1), (s[0], 1),
               [(0, 0), pads[0], (0, 0), (0, 0)])
    return reshape(y, (n, y.shape[1], oh, ow, c))


def max_pool3d(input: Any, ksize: Any, strides: Any = None, padding: Any = "VALID",
               data_format: str = "NDHWC", name: str | None = None) -> Any:
    """Maximum over each window of an NDHWC (or ``data_format="NCDHW"``) batch, as
    ``tf.nn.max_pool3d`` (``strides`` default to ``ksize``); the gradient goes to the
    first maximum of a window in (depth, height, width) order, as TensorFlow's and
    PyTorch's.

    Examples:
        >>> import ember.core as em
        >>> x = em.reshape(em.range(16.0), (1, 2, 2, 4, 1))
        >>> em.nn_ops.max_pool3d(x, 2).numpy().ravel()
        array([13., 15.], dtype=float32)
    """
    return _pool3d("max_pool3d", input, ksize, strides, padding, data_format, max_pool2d)


def avg_pool3d(input: Any, ksize: Any, strides: Any = None, padding: Any = "VALID",
               data_format: str = "NDHWC", name: str | None = None) -> Any:
    """Mean over each window of an NDHWC (or ``data_format="NCDHW"``) batch, as
    ``tf.nn.avg_pool3d`` (``strides`` default to ``ksize``); SAME padding averages real
    elements only.

    Examples:
        >>> import ember.core as em
        >>> x = em.reshape(em.range(16.0), (1, 2, 2, 4, 1))
        >>> em.nn_ops.avg_pool3d(x, 2).numpy().ravel()
        array([6.5, 8.5], dtype=float32)
    """
    return _pool3d("avg_pool3d", input, ksize, strides, padding, data_format, avg_pool2d)


# --- regularisation and normalisation ---------------------------------------------------
def dropout(x: Any, rate: float, noise_shape: Any = None, seed: Any = None,
            name: str | None = None) -> Any:
    """Zero each element with probability ``rate`` and scale the rest by 1 / (1 - rate)."""
    t = _args.tensor(x)
    if not 0 <= rate < 1:
        raise InvalidArgumentError(f"dropout: rate must be in [0, 1), got {rate}")
    if rate == 0:
        return t
    shape = t.shape if noise_shape is None else _args.shape("dropout", noise_shape)
    keep = m.greater_equal(random.uniform(shape, dtype=t.dtype, seed=seed), rate)
    return m.multiply(t, m.multiply(m.cast(keep, t.dtype), 1 / (1 - rate)))


def moments(x: Any, axes: Any, keepdims: Any = None, name: str | None = None,
            keep_dims: Any = None) -> tuple[Any, Any]:
    """(mean, variance) over ``axes`` (``keep_dims`` is TF 1.x's spelling of ``keepdims``)."""
    keepdims = _args.one_spelling("moments", "keepdims", keepdims, "keep_dims", keep_dims)
    t = _args.tensor(x)
    mean = r.reduce_mean(t, axes, keepdims=True)
    var = r.reduce_mean(m.squared_difference(t, mean), axes, keepdims=True)
    if not keepdims:
        ax = _args.axes("moments", axes, t.ndim)
        mean, var = squeeze(mean, ax), squeeze(var, ax)
    return mean, var


def batch_normalization(x: Any, mean: Any, variance: Any, offset: Any, scale: Any,
                        variance_epsilon: float, name: str | None = None) -> Any:
    """(x - mean) / sqrt(variance + eps) * scale + offset (offset/scale may be None).

    Python numbers among the statistics take ``x``'s dtype (weakly typed), so a float16
    ``x`` with ``mean=0.0`` stays float16.
    """
    x = _args.tensor(x)
    mean, variance, offset, scale = (m.cast(v, x.dtype) if type(v) in (int, float) else v
                                     for v in (mean, variance, offset, scale))
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
    """logsumexp(logits) - logits[label] per example, for integer class ``labels``.

    Labels must lie in ``[0, classes)``. On the CPU a label out of range raises
    ``InvalidArgumentError`` here. On a GPU, reading the labels back to check them would
    make every training step wait for the device: the op checks them on the device instead,
    and the error (naming this op, the bounds and the labels' smallest and largest value)
    is raised at the next read of a result on that GPU (``.numpy()``, ``float()``, printing,
    ``fit``'s logs); meanwhile the example's loss is NaN and has no gradient. Two bad
    batches before a read report the first and say how many failed.

    Raises:
        InvalidArgumentError: labels that are not integers, of the wrong shape, or (on the
            CPU here, on a GPU at the next read) out of range.

    Examples:
        >>> import ember.core as em
        >>> em.nn_ops.sparse_softmax_cross_entropy_with_logits([0], [[0.0, 0.0]])
        ember.Tensor([0.6931472], shape=(1,), dtype=float32)
    """
    x, y = _args.tensor(logits), _args.tensor(labels)
    if y.dtype.kind not in "iu":
        raise InvalidArgumentError(f"sparse_softmax_cross_entropy_with_logits: labels must be "
                                   f"integers, got {y.dtype}")
    if y.shape != x.shape[:-1]:
        raise InvalidArgumentError(f"sparse_softmax_cross_entropy_with_logits: labels {y.shape} "
                                   f"must have the shape of logits {x.shape} without its last axis")
    if y._device.backend.xp is np:  # labels in host memory: checking them costs no copy
        y = m.check_indices(y, x.shape[-1], "sparse_softmax_cross_entropy_with_logits: labels")
    # on a GPU the op itself checks them, on the device (ember.core._device_errors)
    return sparse_softmax_xent(x, y)[0]


def sigmoid_cross_entropy_with_logits(labels: Any, logits: Any, name: str | None = None) -> Any:
    """Binary cross entropy from logits: max(x, 0) - x * z + log1p(exp(-|x|)).

    As TensorFlow's, the max and the absolute value are selections on ``x >= 0``, so that
    the gradient is ``sigmoid(x) - z`` at ``x = 0`` too (``relu`` and ``abs`` have
    gradient 0 there, which gave ``-z``: a zero-initialized logistic regression took a
    wrong first step).
    """
    x, z = _args.tensor(logits), _args.tensor(labels)
    if x.shape != z.shape:
        raise InvalidArgumentError(f"sigmoid_cross_entropy_with_logits: labels {z.shape} and "
                                   f"logits {x.shape} must have the same shape")
    zeros = zeros_like(x)
    positive = m.greater_equal(x, zeros)
    relu_x = m.where(positive, x, zeros)
    neg_abs_x = m.where(positive, m.negative(x), x)
    return m.add(m.subtract(relu_x, m.multiply(x, z)), m.log1p(m.exp(neg_abs_x)))


def l2_loss(t: Any, name: str | None = None) -> Any:
    """sum(t ** 2) / 2."""
    return m.multiply(r.reduce_sum(m.square(_args.tensor(t))), 0.5)


def l2_normalize(x: Any, axis: Any = None, epsilon: float = 1e-12, name: str | None = None,
                 dim: Any = None) -> Any:
    """``x / sqrt(max(sum(x ** 2, axis), epsilon))``, as ``tf.math.l2_normalize`` (also
    ``tf.nn.l2_normalize``): unit L2 norm along ``axis`` (all axes when None; ``dim`` is
    TF 1.x's name for it), a vector of norm below ``sqrt(epsilon)`` scaled as if its norm
    were that.

    Examples:
        >>> import ember.core as em
        >>> em.nn_ops.l2_normalize(em.constant([[3.0, 4.0]]), axis=1)
        ember.Tensor([[0.6 0.8]], shape=(1, 2), dtype=float32)
    """
    axis = _args.one_spelling("l2_normalize", "axis", axis, "dim", dim)
    t = _args.tensor(x)
    squares = r.reduce_sum(_abs_square(t), axis=axis, keepdims=True)
    if squares.dtype.kind == "c":  # as TensorFlow: the norm of a complex x is real
        inv = m.rsqrt(m.maximum(_real(squares), epsilon))
        return m.multiply(t, m.cast(inv, t.dtype))
    return m.multiply(t, m.rsqrt(m.maximum(squares, epsilon)))


# --- embeddings and flattening ----------------------------------------------------------
def embedding_lookup(params: Any, ids: Any, max_norm: Any = None, name: str | None = None,
                     partition_strategy: Any = None) -> Any:
    """Rows of ``params`` at ``ids``: ``gather(params, ids, axis=0)``, differentiable in
    ``params``, as TensorFlow 2's ``tf.nn.embedding_lookup``.

    Args:
        params: the embedding table ``(vocabulary, *dims)``, or a list of shards of it
            split along axis 0 as TensorFlow 2 splits it ("div"): contiguous ranges of
            ids, the first ``vocabulary % n`` of the ``n`` shards one row longer (id ``i``
            is row ``i`` of the shards concatenated). Shards of other sizes are refused.
        ids: integer ids of any shape, each in ``[0, vocabulary)``.
        max_norm: if given, embeddings whose L2 norm exceeds it are scaled down to it.
        name: unused (TensorFlow compatibility).
        partition_strategy: TensorFlow 1's argument, which TensorFlow 2 dropped: "div"
            (the only strategy) is taken, "mod" (TensorFlow 1's default) is refused.

    Returns:
        A tensor of shape ``ids.shape + params.shape[1:]``.

    Examples:
        >>> import ember.core as em
        >>> table = em.constant([[0., 0.], [1., 1.], [2., 2.]])
        >>> em.nn_ops.embedding_lookup(table, [[2, 0]])
        ember.Tensor([[[2. 2.]
          [0. 0.]]], shape=(1, 2, 2), dtype=float32)
    """
    if partition_strategy not in (None, "div"):
        raise InvalidArgumentError(
            f"embedding_lookup: partition_strategy={partition_strategy!r} is TensorFlow 1's; "
            f"TensorFlow 2 (and ember) shard by 'div' only (contiguous ranges of ids)")
    idx = _args.tensor(ids)
    if idx.dtype.kind not in "iu":
        raise InvalidArgumentError(f"embedding_lookup: ids must be integers, got {idx.dtype}")
    if isinstance(params, (list, tuple)):
        shards = [_args.tensor(p) for p in params]
        if not shards:
            raise InvalidArgumentError("embedding_lookup: params is an empty list")
        if any(s.ndim < 1 for s in shards):
            raise InvalidArgumentError("embedding_lookup: params must have rank >= 1")
        sizes = [int(s.shape[0]) for s in shards]
        total, n = sum(sizes), len(sizes)
        div = [total // n + (1 if k < total % n else 0) for k in range(n)]
        if sizes != div:
            raise InvalidArgumentError(
                f"embedding_lookup: shards of sizes {sizes} are not TensorFlow's 'div' "
                f"split of {total} ids over {n} shards ({div}), the one TensorFlow 2 "
                f"reads them by")
        table = shards[0] if n == 1 else concat(shards, 0)
    else:
        table = _args.tensor(params)
    if table.ndim < 1:
        raise InvalidArgumentError("embedding_lookup: params must have rank >= 1")
    n = table.shape[0]
    idx = m.check_indices(idx, n, "embedding_lookup: ids")
    out = gather(table, idx, axis=0)
    if max_norm is not None:
        out = clip_by_norm(out, max_norm, axes=list(range(idx.ndim, out.ndim)))
    return out


def flatten(inputs: Any, data_format: str = "channels_last", name: str | None = None) -> Any:
    """``inputs`` reshaped to ``(batch, -1)``, keeping the first axis (as Keras ``Flatten``
    and ``tf.layers.flatten``). With ``data_format="channels_first"`` the channel axis 1 is
    moved last first, so the order of the features matches a channels-last model.

    Examples:
        >>> import ember.core as em
        >>> em.nn_ops.flatten(em.zeros([2, 3, 4])).shape
        (2, 12)
    """
    x = _args.tensor(inputs)
    if data_format not in ("channels_last", "channels_first"):
        raise InvalidArgumentError(f"flatten: data_format must be 'channels_last' or "
                                   f"'channels_first', got {data_format!r}")
    if x.ndim < 1:
        raise InvalidArgumentError("flatten: needs a batch axis; got a scalar")
    if data_format == "channels_first" and x.ndim > 2:
        x = _to_last(x)
    return reshape(x, (x.shape[0], -1))


def _blocks_of(op: str, input: Any, block_size: Any, data_format: str) -> tuple[Any, int]:
    x = _args.tensor(input)
    if data_format not in ("NHWC", "NCHW"):
        raise InvalidArgumentError(f"{op}: data_format must be 'NHWC' or 'NCHW', got "
                                   f"{data_format!r}")
    if x.ndim != 4:
        raise InvalidArgumentError(f"{op}: input must be 4-D (batch, height, width, "
                                   f"channels), got shape {x.shape}")
    bs = int(block_size)
    if bs < 2:
        raise InvalidArgumentError(f"{op}: block_size must be at least 2, got {block_size!r}")
    return (_to_last(x) if data_format == "NCHW" else x), bs


def depth_to_space(input: Any, block_size: int, data_format: str = "NHWC",
                   name: str | None = None) -> Any:
    """TensorFlow's ``tf.nn.depth_to_space``: each pixel's channels spread into a
    ``block_size`` x ``block_size`` block (output ``[b, h*bs + i, w*bs + j, c]`` is input
    ``[b, h, w, (i*bs + j)*C_out + c]``), for sub-pixel upsampling.

    Examples:
        >>> import ember.core as em
        >>> em.nn_ops.depth_to_space(em.reshape(em.range(4.), (1, 1, 1, 4)), 2)[0, ..., 0]
        ember.Tensor([[0. 1.]
         [2. 3.]], shape=(2, 2), dtype=float32)
    """
    x, bs = _blocks_of("depth_to_space", input, block_size, data_format)
    n, h, w, c = x.shape
    if c % (bs * bs):
        raise InvalidArgumentError(f"depth_to_space: channels ({c}) must be divisible by "
                                   f"block_size squared ({bs * bs})")
    out = reshape(transpose(reshape(x, (n, h, w, bs, bs, c // (bs * bs))), (0, 1, 3, 2, 4, 5)),
                  (n, h * bs, w * bs, c // (bs * bs)))
    return _to_first(out) if data_format == "NCHW" else out


def space_to_depth(input: Any, block_size: int, data_format: str = "NHWC",
                   name: str | None = None) -> Any:
    """TensorFlow's ``tf.nn.space_to_depth``, ``depth_to_space``'s inverse: each
    ``block_size`` x ``block_size`` block of pixels becomes one pixel's channels."""
    x, bs = _blocks_of("space_to_depth", input, block_size, data_format)
    n, h, w, c = x.shape
    if h % bs or w % bs:
        raise InvalidArgumentError(f"space_to_depth: height and width ({h}, {w}) must be "
                                   f"divisible by block_size ({bs})")
    out = reshape(transpose(reshape(x, (n, h // bs, bs, w // bs, bs, c)), (0, 1, 3, 2, 4, 5)),
                  (n, h // bs, w // bs, bs * bs * c))
    return _to_first(out) if data_format == "NCHW" else out
