"""Gradients of the primitive nn ops (forwards in ember-core's ``_ops/define_nn``)."""

from __future__ import annotations

from typing import Any

import ember.core as em
from ember.core import REGISTRY
from ember.core.extend import run_op

from . import MISSING_AS_NONE, REAL, Gradients, OpContext, reads_only
from . import register_gradient as reg
from .recurrent import _vjp

# Complex tensors: the activations (relu's kink, the fused layers built on it), the
# softmax cross-entropy and batch normalization are for real tensors only (REAL: a complex
# gradient reaching them raises); the products and max-pooling's routing are holomorphic.

# one fused pass over the output's sign (x > 0 where relu(x) > 0: the tape need not keep
# the input); its own gradient gives the output zeros, as TensorFlow's ReluGrad does
reg("relu", complex=REAL)(lambda op, dy: run_op(REGISTRY["activation_grad"], (dy, op.output),
                                            {"activation": "relu"}))


_LEAKY_GRAD = REGISTRY["leaky_relu_grad"]
reg("leaky_relu", complex=REAL)(lambda op, dy: run_op(_LEAKY_GRAD, (dy, op.inputs[0]), op.attrs))


@reg("leaky_relu_grad", complex=REAL)
def _leaky_relu_grad(op: OpContext, g: Any) -> Gradients:
    """Linear in ``dy``; piecewise constant in ``x``: zeros, connected (TensorFlow's
    LeakyReluGrad gives its features' gradient as zeros, not None)."""
    x = op.inputs[1]
    return run_op(_LEAKY_GRAD, (g, x), op.attrs), em.zeros_like(x)


@reg("sparse_softmax_xent", complex=REAL)
def _sparse_xent(op: OpContext, dy: Any) -> Gradients:
    """d(logits) = dloss * (softmax - onehot(labels)), from the saved softmax; a gradient
    reaching the softmax output (second order) adds its Jacobian product p * (dp - <dp, p>).
    Examples whose label is out of range (possible only off the host, where labels are not
    checked) get no gradient, as their NaN loss comes from no logit."""
    dloss, dp = dy
    labels = op.inputs[1]
    p = op.outputs[1]
    g = None
    if dloss is not None:  # one fused op (one kernel on a GPU), out-of-range labels masked
        g = run_op(_XENT_GRAD, (dloss, p, labels))
    if dp is not None:
        dot = em.reduce_sum(em.multiply(dp, p), -1, keepdims=True)
        jp = em.multiply(p, em.subtract(dp, dot))
        if labels.device != "/cpu:0":
            jp = _where_labels_in_range(labels, p.shape[-1], jp)
        g = jp if g is None else em.add(g, jp)
    return g, None


def _where_labels_in_range(labels: Any, n: int, g: Any) -> Any:
    ok = em.logical_and(em.greater_equal(labels, 0), em.less(labels, n))
    return em.where(em.expand_dims(ok, -1), g, em.zeros_like(g))


@reg("sparse_softmax_xent_grad", complex=REAL)
def _sparse_xent_grad(op: OpContext, gg: Any) -> Gradients:
    """``g = dloss[..., None] * (p - onehot) * ok`` is linear in ``dloss`` and in ``p``:
    d(dloss) = sum(gg * (p - onehot) * ok, -1), d(p) = gg * dloss[..., None] * ok."""
    dloss, p, labels = op.inputs
    ddl = em.reduce_sum(em.multiply(gg, run_op(_XENT_GRAD, (em.ones_like(dloss), p, labels))),
                        -1)
    dp = _where_labels_in_range(labels, p.shape[-1],
                                em.multiply(gg, em.expand_dims(dloss, -1)))
    return ddl, dp, None


MISSING_AS_NONE.add("sparse_softmax_xent")

_XENT_GRAD = REGISTRY["sparse_softmax_xent_grad"]


# --- fused layer ops (core's ``_ops/nn_fused``) --------------------------------------------
_BN_GRAD = REGISTRY["batch_norm_training_grad"]
_BIAS_ACT_GRAD = REGISTRY["bias_activation_grad"]
_MAX_POOL_GRAD = REGISTRY["max_pool_tiled_grad"]
_ACT_GRAD = REGISTRY["activation_grad"]
_DENSE_WEIGHT_GRAD = REGISTRY["dense_weight_grad"]


@reg("dense", complex=REAL)
def _dense(op: OpContext, dy: Any) -> Gradients:
    """d(x) by one product; d(kernel) and d(bias) by one op (one product on a GPU, which
    reduces the bias's inside its GEMM), only for what needs them."""
    x, w, _ = op.inputs
    nx, nw, nb = op.needs
    dz = run_op(_ACT_GRAD, (dy, op.output), op.attrs) if op.attrs["activation"] == "relu" else dy
    dx = em.matmul(dz, w, transpose_b=True) if nx else None
    dw = db = None
    if nw or nb:
        dw, db = run_op(_DENSE_WEIGHT_GRAD, (x, dz))
    return dx, dw if nw else None, db if nb else None


@reg("activation_grad", complex=REAL)
def _activation_grad(op: OpContext, g: Any) -> Gradients:
    """Linear in ``dy``, masked as the forward; the activation's derivative is constant
    between its kinks, so ``y``'s gradient is zeros (connected, as TensorFlow's ReluGrad
    gives its features: a second derivative through relu is 0, not None)."""
    y = op.inputs[1]
    if op.attrs["activation"] != "relu":
        return g, None
    return run_op(_ACT_GRAD, (g, y), op.attrs), em.zeros_like(y)


@reg("dense_weight_grad")
def _dense_weight_grad(op: OpContext, dy: Any) -> Gradients:
    """``(x.T @ dz, sum_rows(dz))`` is linear in each input: d(x) = dz @ gw.T, d(dz) =
    x @ gw + gb on every row."""
    gw, gb = dy
    x, dz = op.inputs
    nx, ndz = op.needs
    dx = em.matmul(dz, gw, transpose_b=True) if nx and gw is not None else None
    ddz = None
    if ndz:
        if gw is not None:
            ddz = em.matmul(x, gw)
        if gb is not None:
            ddz = em.broadcast_to(gb, dz.shape) if ddz is None else em.add(ddz, gb)
    return dx, ddz


MISSING_AS_NONE.add("dense_weight_grad")


@reg("batch_norm_training", complex=REAL)
def _bn(op: OpContext, dy: Any) -> Gradients:
    """The fused backward op for ``y``; a gradient reaching the batch mean or variance
    (second order, or a caller using them) adds ``dmean / N + dvar * 2 (x - mean) / N``."""
    dout, dmean, dvar = dy
    x, params = op.inputs[0], op.inputs[1:]
    _, mean, var = op.outputs
    scaled = op.attrs["scaled"]
    dx: Any = None
    dparams: list[Any] = [None] * len(params)
    if dout is not None:
        g = run_op(_BN_GRAD, (dout, x, mean, var, *params[:1 if scaled else 0]), op.attrs)
        dx, dparams = g[0], list(g[1:])
    if dmean is not None or dvar is not None:
        n = x.size // max(mean.size, 1) if x.size else 1
        d = em.zeros_like(x) if dx is None else dx
        if dmean is not None:
            d = em.add(d, em.divide(dmean, n))
        if dvar is not None:
            d = em.add(d, em.multiply(em.multiply(dvar, 2.0 / n), em.subtract(x, mean)))
        dx = d
    return (dx, *dparams)


def _bn_backward(dy: Any, x: Any, mean: Any, var: Any, *gamma: Any, axes: Any,
                 epsilon: float, scaled: bool, centered: bool) -> tuple[Any, ...]:
    """``batch_norm_training_grad`` in ember ops."""
    n = x.size // max(mean.size, 1) if x.size else 1
    inv = em.rsqrt(em.add(var, epsilon))
    xhat = em.multiply(em.subtract(x, mean), inv)
    sdy = em.reduce_sum(dy, axes, keepdims=True)
    sdyx = em.reduce_sum(em.multiply(dy, xhat), axes, keepdims=True)
    k = em.multiply(inv, gamma[0]) if scaled else inv
    dx = em.multiply(k, em.subtract(em.subtract(dy, em.divide(sdy, n)),
                                    em.multiply(xhat, em.divide(sdyx, n))))
    return (dx,) + ((sdyx,) if scaled else ()) + ((sdy,) if centered else ())


# (one output without scale and offset: dy is then one tensor, not a list)
reg("batch_norm_training_grad", complex=REAL)(lambda op, dy: _vjp(
    _bn_backward, op, dy if isinstance(dy, (list, tuple)) else [dy]))


@reg("bias_activation", complex=REAL)
def _bias_act(op: OpContext, dy: Any) -> Gradients:
    """d(value) and d(bias) from the output, in one fused op."""
    return run_op(_BIAS_ACT_GRAD, (dy, op.output), op.attrs)  # type: ignore[no-any-return]


@reg("bias_activation_grad", complex=REAL)
def _bias_act_grad(op: OpContext, dy: Any) -> Gradients:
    """Linear in its ``dy``: d(dy) is the two output gradients summed (the bias's along
    the last axis), masked as the forward; the activation's own derivative is constant
    between its kinks, so ``y`` gets none."""
    ddz, ddb = dy
    g = ddz if ddb is None else ddb if ddz is None else em.add(ddz, ddb)
    if g is None:
        return None, None
    if g.shape != op.inputs[0].shape:
        g = em.broadcast_to(g, op.inputs[0].shape)
    if op.attrs["activation"] != "relu":
        return g, None
    y = op.inputs[1]
    return run_op(_ACT_GRAD, (g, y), {"activation": "relu"}), em.zeros_like(y)  # (as above)


@reg("max_pool_tiled")
def _max_pool(op: OpContext, dy: Any) -> Gradients:
    """Each window's gradient to its maximum (shared among ties), in one fused op."""
    return run_op(_MAX_POOL_GRAD, (op.inputs[0], op.output, dy), op.attrs)  # type: ignore[no-any-return]


@reg("max_pool_tiled_grad")
def _max_pool_grad(op: OpContext, g: Any) -> Gradients:
    """Linear in its ``dy``: d(dy) gathers each window's gradient from the element that
    took it (the first, row-major, equal to the maximum, as forward); the routing is
    constant between ties, so ``x`` and ``y`` get none."""
    x, y = op.inputs[0], op.inputs[1]
    kh, kw = op.attrs["ksize"]
    total: Any = None
    taken: Any = None
    for i in range(kh):
        for j in range(kw):
            at = (slice(None), slice(i, None, kh), slice(j, None, kw), slice(None))
            m = em.equal(x[at], y)
            if taken is not None:
                m = em.logical_and(m, em.logical_not(taken))
            taken = m if taken is None else em.logical_or(taken, m)
            part = em.where(m, g[at], 0)
            total = part if total is None else em.add(total, part)
    return None, None, total


reads_only("bias_activation", inputs=False)  # its rule reads its output, not the sum
MISSING_AS_NONE.update({"batch_norm_training", "bias_activation_grad"})
