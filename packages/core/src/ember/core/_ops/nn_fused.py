"""Fused layer ops: batch normalisation in training, bias + activation, and max pooling
over windows that tile the input.

Each is one forward op and one backward op (``*_grad``) that ember-tape's rule runs, so a
layer's forward and backward are each one pass over the layer instead of a chain of small
element-wise ops, each with its own rule. The backward ops get their own rules in
ember-tape (the same maths in ember ops), so every order of derivative stays exact.

float16 and bfloat16 compute in float32 (as numpy's float16 reductions do), their results
cast back to the inputs' dtype; nothing is promoted to float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dtypes import bfloat16 as _BF16
from .._errors import InvalidArgumentError
from .._registry import execute, register
from . import _args, _fused
from .array import reshape

F = "nn"
ACTIVATIONS = ("linear", "relu")


def _in_float32(forward: Any) -> Any:
    """``forward`` computing float16/bfloat16 arrays in float32, results cast back."""

    def run(be: Any, *arrays: Any, **attrs: Any) -> Any:
        dt = arrays[0].dtype
        if dt.itemsize >= 4:
            return forward(be, *arrays, **attrs)
        out = forward(be, *(a.astype(np.float32) for a in arrays), **attrs)
        return tuple(o.astype(dt) for o in out)

    return run


# --- batch normalisation in training ------------------------------------------------------
def _bn(be: Any, x: Any, *params: Any, axes: tuple[int, ...], epsilon: float, scaled: bool,
        centered: bool) -> tuple[Any, Any, Any]:
    """(y, mean, variance): ``(x - mean) * rsqrt(variance + epsilon) * gamma + beta`` with
    the (biased) batch statistics over ``axes``, kept as size-1 axes."""
    xp = be.xp
    one = x.dtype.type(1)
    mean = x.mean(axes, keepdims=True)
    y = x - mean
    var = xp.square(y).mean(axes, keepdims=True)
    k = one / xp.sqrt(var + x.dtype.type(epsilon))
    if scaled:
        k = k * params[0]
    y *= k
    if centered:
        y += params[-1]
    return y, mean, var


def _bn_grad(be: Any, dy: Any, x: Any, mean: Any, var: Any, *gamma: Any,
             axes: tuple[int, ...], epsilon: float, scaled: bool, centered: bool
             ) -> tuple[Any, ...]:
    """(dx, [dgamma], [dbeta]) of ``_bn``'s ``y`` in closed form:
    ``dx = gamma * inv / N * (N dy - sum(dy) - xhat sum(dy xhat))``, ``dgamma = sum(dy
    xhat)``, ``dbeta = sum(dy)``; the parameters' gradients keep the statistics' shape."""
    xp = be.xp
    dt = x.dtype
    n = dt.type(x.size // max(mean.size, 1) if x.size else 1)
    inv = dt.type(1) / xp.sqrt(var + dt.type(epsilon))
    xhat = x - mean
    xhat *= inv
    sdy = dy.sum(axes, keepdims=True)
    sdyx = (dy * xhat).sum(axes, keepdims=True)
    k = inv * gamma[0] if scaled else inv
    xhat *= k * sdyx / n
    dx = dy * k
    dx -= xhat
    dx -= k * sdy / n
    return (dx,) + ((sdyx,) if scaled else ()) + ((sdy,) if centered else ())


_bn_op = register("batch_norm_training", _in_float32(_bn), family=F, promote="all")
_bn_grad_op = register("batch_norm_training_grad", _in_float32(_bn_grad), family=F,
                       promote="all")


def _floating(op: str, **named: Any) -> None:
    for k, v in named.items():
        if v.dtype.kind != "f" and v.dtype != _BF16:
            raise InvalidArgumentError(f"{op}: {k} must be floating, got dtype {v.dtype}")


def _param(op: str, what: str, p: Any, stats: tuple[int, ...], kept: tuple[int, ...]) -> Any:
    """``p`` (None, or the kept axes' shape, or the statistics' shape) in the statistics'
    shape."""
    if p is None:
        return None
    p = _args.tensor(p)
    if tuple(p.shape) == stats:
        return p
    if tuple(p.shape) == kept:
        return reshape(p, stats)
    raise InvalidArgumentError(f"{op}: {what} of shape {tuple(p.shape)} must have the shape "
                               f"of the kept axes {kept} or of the statistics {stats}")


def batch_norm_training(x: Any, scale: Any, offset: Any, axes: Any,
                        variance_epsilon: float = 1e-3, name: str | None = None
                        ) -> tuple[Any, Any, Any]:
    """Batch normalisation with the batch's statistics, fused: one op forward, one back.

    The same values as ``mean, var = moments(x, axes, keepdims=True)`` followed by
    ``batch_normalization(x, mean, var, offset, scale, variance_epsilon)``, in one pass
    over ``x`` each way (the gradient is the closed form PyTorch and cuDNN use).

    Args:
        x: a floating tensor.
        scale: ``gamma``, or None: shaped as the axes not in ``axes`` (``(C,)`` for
            channels-last ``x`` and ``axes=[0, 1, 2]``) or as the statistics.
        offset: ``beta``, or None; shaped as ``scale``.
        axes: the axes averaged over (all but the feature axes).
        variance_epsilon: added to the variance.
        name: ignored (TensorFlow's op name).

    Returns:
        ``(y, mean, variance)``: the normalised ``x``, and the batch mean and (biased)
        variance over ``axes``, kept as size-1 axes.

    Raises:
        InvalidArgumentError: ``x`` is not floating, an axis is out of range, or
            ``scale``/``offset`` has another shape.

    Examples:
        >>> import ember.core as em
        >>> y, mean, var = em.nn_ops.batch_norm_training(
        ...     em.constant([[1.0, 2.0], [3.0, 6.0]]), None, None, [0], 0.0)
        >>> y.numpy()
        array([[-1., -1.],
               [ 1.,  1.]], dtype=float32)
        >>> mean.numpy(), var.numpy()
        (array([[2., 4.]], dtype=float32), array([[1., 4.]], dtype=float32))
    """
    x = _args.tensor(x)
    op = "batch_norm_training"
    red = _args.axes(op, axes, x.ndim)
    if red is None:
        red = tuple(range(x.ndim))
    stats = tuple(1 if i in red else d for i, d in enumerate(x.shape))
    kept = tuple(d for i, d in enumerate(x.shape) if i not in red)
    params = {k: v for k, v in (("scale", _param(op, "scale", scale, stats, kept)),
                                ("offset", _param(op, "offset", offset, stats, kept)))
              if v is not None}
    _floating(op, x=x, **params)
    out = execute(_bn_op, (x, *params.values()),
                  {"axes": red, "epsilon": float(variance_epsilon),
                   "scaled": "scale" in params, "centered": "offset" in params})
    return out[0], out[1], out[2]


def batch_norm_training_grad(dy: Any, x: Any, mean: Any, variance: Any, scale: Any,
                             axes: Any, variance_epsilon: float, centered: bool = True
                             ) -> tuple[Any, ...]:
    """The backward of ``batch_norm_training``'s ``y`` (for its rule and the op table):
    ``(dx, [dscale], [doffset])``, ``dscale`` with ``scale`` given, ``doffset`` with
    ``centered``; ``scale`` has the statistics' shape."""
    ts = [_args.tensor(v) for v in (dy, x, mean, variance)]
    if scale is not None:
        ts.append(_args.tensor(scale))
    red = _args.axes("batch_norm_training_grad", axes, ts[1].ndim)
    return tuple(execute(_bn_grad_op, tuple(ts), {
        "axes": red, "epsilon": float(variance_epsilon), "scaled": scale is not None,
        "centered": bool(centered)}))


# --- bias + activation --------------------------------------------------------------------
def _bias_act(be: Any, x: Any, b: Any, *, activation: str) -> Any:
    if activation == "relu" and _fused.fusable(be.xp):  # one kernel on a GPU, not two
        return _fused.kernel(be.xp, "bias_relu", "T x, T b", "T y",
                             "T z = x + b; y = (z > 0 || isnan(z)) ? z : (T)0")(x, b)
    y = _add_rows(be.xp, x, b)
    if activation == "relu":
        be.xp.maximum(y, y.dtype.type(0), out=y)
    return y


def _add_rows(xp: Any, x: Any, b: Any) -> Any:
    """``x + b`` for ``b`` along the last axis. numpy runs a broadcast sum as one inner
    loop per row of ``x``, short for a convolution's channels (32 in LeNet's first layer):
    on the host, rows are taken together, ``b`` repeated to their length, so that each
    inner loop runs about 16k elements (1.6x faster there, the same sums)."""
    c = b.shape[0]
    if (xp is not np or x.ndim < 2 or not x.flags.c_contiguous or not 0 < c < 256
            or x.size < 4 * _LONG_ROW):  # long rows already, or too small to matter
        return x + b
    rows = x.size // c
    # rows taken together: the largest power of two that divides their count (a batch of
    # 64 gives at least 64), up to about _LONG_ROW elements
    k = min(rows & -rows, 1 << ((_LONG_ROW // c).bit_length() - 1))
    if k < 16:
        return x + b
    return xp.add(x.reshape(rows // k, k * c), xp.tile(b, k)).reshape(x.shape)


_LONG_ROW = 1 << 14


def _activation_grad(be: Any, dy: Any, y: Any, *, activation: str) -> Any:
    """d(pre-activation) from the output ``y``: ``dy`` where ``y > 0`` for relu, ``dy``
    itself for linear."""
    if activation != "relu":
        return dy
    if _fused.fusable(be.xp):  # a GPU: one kernel
        return _fused.kernel(be.xp, "relu_grad", "T dy, T y", "T dz",
                             "dz = y > 0 ? dy : (T)0")(dy, y)
    # where(y > 0, dy, 0) as a bitwise AND: the same bits, 10x faster
    ints = _INTS[dy.dtype.itemsize]
    # all ones where y > 0; into an array of its own (2x faster than numpy's dtype=)
    dz = be.xp.empty(dy.shape, dtype=ints)
    be.xp.negative((y > 0).view(np.int8), out=dz)
    dz &= dy.view(ints)
    return dz.view(dy.dtype)


def _bias_act_grad(be: Any, dy: Any, y: Any, *, activation: str) -> tuple[Any, Any]:
    """(d(pre-activation), d(bias)) from the output ``y``: the bias's gradient is the
    pre-activation's summed over all but the last axis (on a GPU one reduction)."""
    dz = _activation_grad(be, dy, y, activation=activation)
    if _fused.fusable(be.xp):
        return dz, dz.sum(tuple(range(dz.ndim - 1)))
    return dz, _sum_rows(be.xp, dz)


def _sum_rows(xp: Any, a: Any) -> Any:
    """``a`` summed over all but its last axis. float32/float64 go through BLAS as
    ``ones @ a`` (5x faster than numpy's reduction over leading axes on a conv layer's
    activations, measured); other dtypes through ``sum``."""
    if a.dtype not in _BLAS_DTYPES or a.ndim < 2 or a.size == 0:
        return a.sum(tuple(range(a.ndim - 1)))
    rows = a.reshape(-1, a.shape[-1])
    return xp.matmul(xp.ones(rows.shape[0], dtype=a.dtype), rows)


_BLAS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


_INTS = {2: np.int16, 4: np.int32, 8: np.int64}


_bias_act_op = register("bias_activation", _bias_act, family=F, promote="all")
_bias_act_grad_op = register("bias_activation_grad", _bias_act_grad, family=F,
                             promote="into_first")


def bias_activation(value: Any, bias: Any, activation: str = "relu",
                    name: str | None = None) -> Any:
    """``activation(value + bias)`` with ``bias`` along the last axis, fused: one op
    forward and one backward, which gives the bias's gradient as the reduction of the
    pre-activation's.

    Args:
        value: a floating tensor, channels last.
        bias: a vector of ``value``'s last dimension.
        activation: ``"relu"`` or ``"linear"`` (Dense and the convolutions use this op for
            these; other activations compose ``bias_add`` and the activation).
        name: ignored (TensorFlow's op name).

    Returns:
        The activation of ``value + bias``.

    Raises:
        InvalidArgumentError: another activation, a bias that does not fit, or a tensor
            that is not floating.

    Examples:
        >>> import ember.core as em
        >>> em.nn_ops.bias_activation(em.constant([[-1.0, 2.0]]), em.constant([0.5, -3.0]))
        ember.Tensor([[0. 0.]], shape=(1, 2), dtype=float32)
    """
    if activation not in ACTIVATIONS:
        raise InvalidArgumentError(f"bias_activation: activation must be one of "
                                   f"{ACTIVATIONS}, got {activation!r}")
    v, b = _args.tensor(value), _args.tensor(bias)
    if b.ndim != 1 or v.ndim < 1 or v.shape[-1] != b.shape[0]:
        raise InvalidArgumentError(f"bias_activation: bias of shape {b.shape} does not match "
                                   f"the last axis of value {v.shape}")
    _floating("bias_activation", value=v, bias=b)
    return execute(_bias_act_op, (v, b), {"activation": activation})


def bias_activation_grad(dy: Any, y: Any, activation: str = "relu") -> tuple[Any, Any]:
    """The backward of ``bias_activation`` from its output ``y`` (for its rule and the op
    table): ``(d(value), d(bias))``."""
    out = execute(_bias_act_grad_op, (_args.tensor(dy), _args.tensor(y)),
                  {"activation": activation})
    return out[0], out[1]


# --- max pooling over windows that tile the input ---------------------------------------
def _window_views(x: Any, ksize: tuple[int, int]) -> list[Any]:
    """The strided views of an NHWC ``x`` whose ``ksize`` windows tile it: view (i, j)
    holds element (i, j) of every window."""
    kh, kw = ksize
    return [x[:, i::kh, j::kw, :] for i in range(kh) for j in range(kw)]


def _pool_sources(k: int, floating: bool = True) -> tuple[str, str, str, str]:
    """(inputs, the forward's body, the backward's outputs and body) of the fused kernels
    for windows of ``k`` elements: ``a0..`` the window's elements, ``y`` its maximum.
    Constants are written ``(T)1``: nvrtc finds ``c ? h : 1`` ambiguous for a float16
    ``h``, and ``isnan`` of an integer too (both seen on the H200)."""
    ins = ", ".join(f"T a{j}" for j in range(k))
    nan = (lambda j: f" || isnan(m{j - 1})") if floating else (lambda j: "")
    fwd = "T m0 = a0; " + "".join(
        f"T m{j} = (m{j - 1} > a{j}{nan(j)}) ? m{j - 1} : a{j}; "
        for j in range(1, k)) + f"y = m{k - 1}"  # NaN propagates, as in reduce_max
    outs = ", ".join(f"T d{j}" for j in range(k))
    # the host path's rule: the window's first element (row-major) equal to its maximum
    # takes the whole gradient, as TensorFlow's MaxPoolGrad and PyTorch's
    # (in T arithmetic and ternaries, as the forward; a non-finite dy reaches the whole
    # window, mask times dy, as the host path's product does)
    bwd = "T e0 = a0 == y ? (T)1 : (T)0; T taken = e0; "
    for j in range(1, k):
        bwd += (f"T e{j} = taken > (T)0 ? (T)0 : (a{j} == y ? (T)1 : (T)0); "
                f"taken = taken + e{j}; ")
    bwd += "; ".join(f"d{j} = e{j} * dy" for j in range(k))
    return ins, fwd, outs, bwd


def _max_pool_tiled(be: Any, x: Any, *, ksize: tuple[int, int]) -> Any:
    views = _window_views(x, ksize)
    if _fused.fusable(be.xp) and len(views) <= 16:  # a GPU: one kernel
        floating = x.dtype.kind == "f"
        ins, fwd, _, _ = _pool_sources(len(views), floating)
        name = f"max_pool_{len(views)}" + ("" if floating else "_int")
        return _fused.kernel(be.xp, name, ins, "T y", fwd)(*views)
    y = be.xp.array(views[0], copy=True)
    for v in views[1:]:
        be.xp.maximum(y, v, out=y)  # NaN propagates, as in reduce_max
    return y


def _max_pool_tiled_grad(be: Any, x: Any, y: Any, dy: Any, *,
                         ksize: tuple[int, int]) -> Any:
    """Each window's gradient goes to its first element (row-major) equal to its maximum,
    as TensorFlow's MaxPoolGrad and PyTorch's (an equal share among ties, reduce_max's
    rule, differed from both where windows tie: a black background); a window whose
    maximum is NaN gets none."""
    xp = be.xp
    k = ksize[0] * ksize[1]
    if _fused.fusable(xp) and k <= 16:  # a GPU: one kernel writes every window's share
        ins, _, outs, bwd = _pool_sources(k)
        dx = xp.empty(x.shape, dtype=dy.dtype)
        _fused.kernel(xp, f"max_pool_grad_first_{k}", ins + ", T y, T dy", outs, bwd)(
            *_window_views(x, ksize), y, dy, *_window_views(dx, ksize))
        return dx
    n, h, w, c = x.shape
    kh, kw = ksize
    # the windows as axes 2 and 4 of a view: one comparison in memory order
    masks = x.reshape(n, h // kh, kh, w // kw, kw, c) == y[:, :, None, :, None, :]
    taken = xp.zeros((n, h // kh, w // kw, c), dtype=bool)
    for i in range(kh):  # the window's elements in row-major order: the first equal wins
        for j in range(kw):
            m = masks[:, :, i, :, j, :]
            xp.logical_and(m, xp.logical_not(taken), out=m)
            xp.logical_or(taken, m, out=taken)
    return xp.multiply(masks, dy[:, :, None, :, None, :]).reshape(x.shape)


_max_pool_op = register("max_pool_tiled", _max_pool_tiled, family=F)
_max_pool_grad_op = register("max_pool_tiled_grad", _max_pool_tiled_grad, family=F,
                             promote="into_first")


def max_pool_tiled(x: Any, ksize: Any) -> Any:
    """Max pooling of an NHWC ``x`` over ``ksize`` windows that tile it (stride = window,
    no padding, sizes divisible): ``nn_ops.max_pool2d``'s fast path, one pass per window
    element instead of a reduction over a strided view, and a backward op of its own."""
    t = _args.tensor(x)
    k = (int(ksize[0]), int(ksize[1]))
    if t.ndim != 4 or k[0] < 1 or k[1] < 1 or t.shape[1] % k[0] or t.shape[2] % k[1]:
        raise InvalidArgumentError(f"max_pool_tiled: windows {k} do not tile an NHWC input "
                                   f"of shape {t.shape}")
    return execute(_max_pool_op, (t,), {"ksize": k})


def max_pool_tiled_grad(x: Any, y: Any, dy: Any, ksize: Any) -> Any:
    """The backward of ``max_pool_tiled`` (for its rule and the op table)."""
    k = (int(ksize[0]), int(ksize[1]))
    return execute(_max_pool_grad_op, (_args.tensor(x), _args.tensor(y), _args.tensor(dy)),
                   {"ksize": k})
