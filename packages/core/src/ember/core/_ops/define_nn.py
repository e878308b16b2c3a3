"""Primitive nn ops registered as ops (for speed: one op instead of a composite).

``relu``, and ``sparse_softmax_xent``: the softmax cross-entropy of logits against integer
labels in one pass over the logits. Besides the per-example loss it returns the softmax
probabilities, which its gradient rule in ember-tape reuses (``dlogits = dloss * (p -
onehot)``, the closed form); as they are an output, a second-order gradient flows back
through them into the same rule, so every order stays exact.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._device_errors import check_range
from .._registry import execute, register
from . import _fused
from ._define import to_float, unary

relu = unary("relu", lambda be, x: be.xp.maximum(x, 0), "nn", "max(x, 0), element-wise.",
             cuda="({0} > 0 || isnan({0})) ? {0} : 0")


def _leaky_relu(be: Any, x: Any, *, alpha: float) -> Any:
    return be.xp.where(x > 0, x, x * x.dtype.type(alpha))


def _leaky_relu_grad(be: Any, dy: Any, x: Any, *, alpha: float) -> Any:
    return be.xp.where(x > 0, dy, dy * dy.dtype.type(alpha))


# an op, with its gradient an op, for the second order: the gradient's own gradient with
# respect to ``x`` is zeros (connected: piecewise linear), as TensorFlow's LeakyReluGrad
# and PyTorch's leaky_relu_backward give; ``where(x > 0, x, alpha * x)`` gave None there
_leaky_relu_op = register("leaky_relu", _leaky_relu, family="nn")
_leaky_relu_grad_op = register("leaky_relu_grad", _leaky_relu_grad, family="nn",
                               promote="all")


def leaky_relu(x: Any, alpha: float) -> Any:
    """``x`` where ``x > 0``, else ``alpha * x``, for a floating tensor ``x``."""
    return execute(_leaky_relu_op, (x,), {"alpha": float(alpha)})


def leaky_relu_grad(dy: Any, x: Any, alpha: float) -> Any:
    """``dy`` where ``x > 0``, else ``alpha * dy``: the gradient of ``leaky_relu``."""
    return execute(_leaky_relu_grad_op, (dy, x), {"alpha": float(alpha)})


def _sparse_xent(be: Any, logits: Any, labels: Any) -> tuple[Any, Any]:
    """(loss, softmax): ``logsumexp(x) - x[label]`` per example, NaN where a label is out
    of range, and ``softmax(x)``. Labels in host memory are checked by the caller first;
    on a GPU the op checks them there, and the next read raises (``_device_errors``)."""
    xp = be.xp
    n = logits.shape[-1]
    if xp is not np:
        check_range(be, labels, 0, n, "sparse_softmax_cross_entropy_with_logits", "labels")
    x = to_float(logits)
    low = x.dtype.itemsize < 4  # float16/bfloat16 compute in float32, as numpy's reductions
    if low:
        x = x.astype(np.float32)
    if xp is np and x.ndim == 2 and x.size and labels.min() >= 0 and labels.max() < n:
        return _sparse_xent_host(x, labels, logits.dtype if low else None)
    if x.size and _fused.fusable(xp):
        loss, p = _sparse_xent_fused(be, x, labels)
        if low:
            return loss.astype(logits.dtype), p.astype(logits.dtype)
        return loss, p
    ok = (labels >= 0) & (labels < n)
    safe = xp.where(ok, labels, 0)[..., None]
    shifted = x - x.max(-1, keepdims=True) if x.size else x.copy()
    picked = xp.take_along_axis(shifted, safe, -1) if x.size else shifted[..., :1]
    xp.exp(shifted, out=shifted)
    total = shifted.sum(-1, keepdims=True)
    loss = (xp.log(total) - picked)[..., 0]
    loss = xp.where(ok, loss, x.dtype.type(np.nan))
    shifted /= total
    if low:
        return loss.astype(logits.dtype), shifted.astype(logits.dtype)
    return loss, shifted


def _sparse_xent_host(x: Any, labels: Any, low: Any) -> tuple[Any, Any]:
    """``_sparse_xent`` for a (batch, classes) numpy array and labels all in range: the
    same arithmetic in fewer calls (a training step's loss is dozens of small ops' worth of
    Python otherwise)."""
    shifted = x - x.max(-1, keepdims=True)
    picked = shifted[np.arange(len(labels)), labels]
    np.exp(shifted, out=shifted)
    total = shifted.sum(-1, keepdims=True)
    loss = np.log(total[:, 0])
    loss -= picked
    shifted /= total
    if low is not None:
        return loss.astype(low), shifted.astype(low)
    return loss, shifted


def _sparse_xent_fused(be: Any, x: Any, labels: Any) -> tuple[Any, Any]:
    """``_sparse_xent`` on a GPU in four kernels (the row maxima; the row sums of
    ``exp(x - max)``, one reduction kernel; then the softmax and each example's loss as the
    sum of a row that holds it at the label's column) where the host's passes and
    ``take_along_axis`` launched 17."""
    xp, dt = be.xp, x.dtype
    n = x.shape[-1]
    lab = labels[..., None]
    m = x.max(-1, keepdims=True)
    s = _fused.reduction(xp, "xent_sum_exp", "T x, T m", "T s", "exp(x - m)", "a + b",
                         "s = a", "0")(x, m, axis=-1, keepdims=True)
    p, t = _fused.kernel(
        xp, "xent_out", "T x, T m, T s, T nan, L lab, L j, L n", "T p, T t",
        "p = exp(x - m) / s; bool ok = lab >= 0 && lab < n; "
        "T d = j == lab ? log(s) - (x - m) : 0; t = ok ? d : nan")(
        x, m, s, dt.type(np.nan), lab, _fused.columns(be, labels, n),
        labels.dtype.type(n))
    return t.sum(-1), p


def _sparse_xent_grad(be: Any, dloss: Any, p: Any, labels: Any) -> Any:
    """``dloss * (p - onehot(labels))`` per example, 0 where a label is out of range (its
    loss is NaN and comes from no logit): the closed-form gradient of ``_sparse_xent``'s
    loss, one kernel on a GPU (the composite launched nine)."""
    xp = be.xp
    n = p.shape[-1]
    lab = labels[..., None]
    if _fused.fusable(xp) and p.size:
        one = p.dtype.type(1)
        return _fused.kernel(
            xp, "xent_grad", "T dl, T p, T one, L lab, L j, L n", "T g",
            "T q = j == lab ? p - one : p; g = lab >= 0 && lab < n ? dl * q : 0")(
            dloss[..., None], p, one, lab, _fused.columns(be, labels, n),
            labels.dtype.type(n))
    g = p - (lab == xp.arange(n)).astype(p.dtype)
    g *= dloss[..., None]
    ok = (lab >= 0) & (lab < n)
    if xp is not np or not ok.all():  # (no read of a device array)
        g = xp.where(ok, g, p.dtype.type(0))
    return g


_sparse_xent_op = register("sparse_softmax_xent", _sparse_xent, family="nn")
_sparse_xent_grad_op = register("sparse_softmax_xent_grad", _sparse_xent_grad, family="nn",
                                promote="into_first")


def sparse_softmax_xent(logits: Any, labels: Any) -> tuple[Any, Any]:
    """(loss, softmax(logits)) for tensors ``logits`` (..., classes) and integer ``labels``
    (...): the fused op behind ``nn_ops.sparse_softmax_cross_entropy_with_logits``, which
    checks the arguments."""
    return execute(_sparse_xent_op, (logits, labels))  # type: ignore[no-any-return]


def sparse_softmax_xent_grad(dloss: Any, probs: Any, labels: Any) -> Any:
    """The gradient of ``sparse_softmax_xent``'s loss with respect to the logits, from its
    softmax ``probs`` (for its rule and the op table): ``dloss[..., None] * (probs -
    onehot(labels))``, zero for an example whose label is out of range."""
    return execute(_sparse_xent_grad_op, (dloss, probs, labels))
