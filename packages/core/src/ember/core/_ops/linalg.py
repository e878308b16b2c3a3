"""Linear algebra: matmul (batched, broadcasting), einsum, tensordot, norm, and the matrix
functions and decompositions behind ``em.linalg`` (inv, det, slogdet, cholesky, solve, qr,
svd, eigh), each batched over leading dimensions as in TensorFlow.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from .._dtypes import bfloat16 as _BF16
from .._errors import InvalidArgumentError
from .._registry import execute, notify, register
from .._tensor import Tensor
from ..recording import _active
from . import _args
from . import math as m
from . import reduce as r
from .array import expand_dims, getitem, reshape, squeeze, transpose

F = "linalg"
_new = object.__new__
def _matmul_forward(be: Any, x: Any, y: Any) -> Any:
    out = be.xp.matmul(x, y)
    # numpy's bfloat16 (ml_dtypes) product returns float32: the result keeps the operands'
    # dtype, as every other op's does (a bfloat16 layer computing on stays bfloat16)
    return out if out.dtype == x.dtype or x.dtype != y.dtype else out.astype(x.dtype)


_BLAS_WORK = 1 << 14  # multiply-adds from which numpy's einsum is asked to use BLAS
_optimize_cache: dict[tuple[Any, ...], bool] = {}


def _optimize(be: Any, equation: str, xs: tuple[Any, ...]) -> bool:
    """Whether numpy's einsum should plan its contraction (``optimize=True``: pairwise
    tensordots, so BLAS): its own loop is 5-25x slower on attention's products (6.5 ms
    against 0.28 ms for "aecd,abcd->acbe" of two (32, 64, 4, 16)), but planning costs
    ~8 us, more than a small product takes. Only numpy's einsum, two operands or more."""
    if be.name != "numpy" or len(xs) < 2:
        return False
    key = (equation, *(x.shape for x in xs))
    hit = _optimize_cache.get(key)
    if hit is None:
        sizes: dict[str, int] = {}
        terms = equation.split("->")[0].split(",")
        if "." in equation or len(terms) != len(xs):
            hit = False
        else:
            for term, x in zip(terms, xs):
                for letter, n in zip(term.strip(), x.shape):
                    sizes[letter] = int(n)
            hit = math.prod(sizes.values()) >= _BLAS_WORK
        if len(_optimize_cache) > 4096:
            _optimize_cache.clear()
        _optimize_cache[key] = hit
    return hit


def _einsum_forward(be: Any, *xs: Any, equation: str) -> Any:
    if xs and all(x.dtype == _BF16 for x in xs):  # numpy's einsum has no bfloat16 loop
        wide = [x.astype(np.float32) for x in xs]
        return be.xp.einsum(equation, *wide, optimize=_optimize(be, equation, xs)
                            ).astype(_BF16)
    if _optimize(be, equation, xs):
        return be.xp.einsum(equation, *xs, optimize=True)
    return be.xp.einsum(equation, *xs)


_matmul = register("matmul", _matmul_forward, family=F)
_einsum = register("einsum", _einsum_forward, family=F)


def _swap(x: Any) -> Any:
    p = list(range(x.ndim))
    p[-1], p[-2] = p[-2], p[-1]
    return transpose(x, p)


def matmul(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False,
           name: str | None = None) -> Any:
    """Matrix product over the last two axes, batching and broadcasting the rest.

    Examples:
        >>> import ember.core as em
        >>> em.matmul([[2.]], [[2.]])
        ember.Tensor([[4.]], shape=(1, 1), dtype=float32)
    """
    if type(a) is Tensor and type(b) is Tensor and a._device is b._device and not transpose_a \
            and not transpose_b and a._data.ndim >= 2 and b._data.ndim >= 2 \
            and a._data.dtype == b._data.dtype:
        d = a._device  # the fast path: execute's work, minus the checks that hold here
        try:
            data = _matmul.forward(d.backend, a._data, b._data)
        except (ValueError, TypeError):
            pass  # e.g. inner dimensions differ: the checked path below names the op
        else:
            out = _new(Tensor)  # as _tensor.wrap, inline: this is matmul's overhead
            out._data = data
            out._device = d
            recs = _active.get()
            if recs:
                notify(recs, _matmul, (a, b), None, (out,))
            return out
    x = _args.tensor(a)
    y = _args.tensor(b)
    if x.ndim >= 2 and y.ndim >= 2 and not transpose_a and not transpose_b:
        if x.shape[-1] != y.shape[-2]:
            raise InvalidArgumentError(f"matmul: inner dimensions differ: {x.shape} @ {y.shape}")
        return execute(_matmul, (x, y))
    if x.ndim == 0 or y.ndim == 0:
        raise InvalidArgumentError(f"matmul: scalars are not matrices: {x.shape} @ {y.shape}")
    if transpose_a:
        x = _swap(x)
    if transpose_b:
        y = _swap(y)
    xv, yv = x.ndim == 1, y.ndim == 1
    if xv:
        x = expand_dims(x, 0)
    if yv:
        y = expand_dims(y, -1)
    if x.shape[-1] != y.shape[-2]:
        raise InvalidArgumentError(f"matmul: inner dimensions differ: {x.shape} @ {y.shape}")
    out = execute(_matmul, (x, y))
    if xv:
        out = squeeze(out, -2)
    if yv:
        out = squeeze(out, -1)
    return out


def einsum(equation: str, *inputs: Any, name: str | None = None) -> Any:
    """Einstein summation, e.g. ``einsum('bij,bjk->bik', x, y)``. Without ``->`` the output
    is numpy's (and TensorFlow's) implicit one: the letters that appear once, in
    alphabetical order, after any ``...`` (``'ij,jk'`` is ``'ij,jk->ik'``)."""
    eq = equation.replace(" ", "")
    if "->" not in eq:
        letters = [c for c in eq if c.isalpha()]
        once = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
        eq = f"{eq}->{'...' if '...' in eq else ''}{once}"
    ins = eq.split("->")[0].split(",")
    if len(ins) != len(inputs):
        raise InvalidArgumentError(f"einsum: {equation!r} names {len(ins)} operands, "
                                   f"got {len(inputs)}")
    return execute(_einsum, tuple(_args.tensor(t) for t in inputs), {"equation": eq})


def tensordot(a: Any, b: Any, axes: Any, name: str | None = None) -> Any:
    """Sum products over ``axes`` of ``a`` and ``b`` (an int: the last/first that many)."""
    x, y = _args.tensor(a), _args.tensor(b)
    ax = _tensordot_axes(axes, x.ndim, y.ndim)
    for i, j in zip(*ax):
        if x.shape[i] != y.shape[j]:
            raise InvalidArgumentError(f"tensordot: axis {i} of {x.shape} does not match "
                                       f"axis {j} of {y.shape}")
    fx = [i for i in range(x.ndim) if i not in ax[0]]
    fy = [j for j in range(y.ndim) if j not in ax[1]]
    k = 1
    for i in ax[0]:
        k *= x.shape[i]
    x2 = reshape(transpose(x, fx + ax[0]), (-1, k))
    y2 = reshape(transpose(y, ax[1] + fy), (k, -1))
    return reshape(matmul(x2, y2), [x.shape[i] for i in fx] + [y.shape[j] for j in fy])


def _tensordot_axes(axes: Any, xnd: int, ynd: int) -> tuple[list[int], list[int]]:
    """tensordot's ``axes`` as (axes of a, axes of b): an int n (a's last n with b's first
    n), a pair of ints (one axis each, as TensorFlow and numpy read ``[1, 1]``), or a pair
    of lists of equal length."""
    if hasattr(axes, "numpy"):
        axes = axes.numpy().tolist()
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool):
        n = int(axes)
        if not 0 <= n <= builtins.min(xnd, ynd):
            raise InvalidArgumentError(f"tensordot: axes={n} must be in [0, {builtins.min(xnd, ynd)}] "
                                       f"for ranks {xnd} and {ynd}")
        return list(range(xnd - n, xnd)), list(range(n))
    try:
        first, second = axes
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"tensordot: axes must be an int or a pair (axes of a, axes "
                                   f"of b), got {axes!r}") from None
    pair = [[v] if isinstance(v, (int, np.integer)) else list(v) for v in (first, second)]
    if len(pair[0]) != len(pair[1]):
        raise InvalidArgumentError(f"tensordot: axes {axes!r} pair {len(pair[0])} axes of a "
                                   f"with {len(pair[1])} of b")
    out = []
    for side, nd in zip(pair, (xnd, ynd)):
        for i in side:
            if not -nd <= int(i) < nd:
                raise InvalidArgumentError(f"tensordot: axis {int(i)} is out of range for "
                                           f"rank {nd}")
        out.append([int(i) % nd for i in side])
    return out[0], out[1]


def _abs_square(x: Any) -> Any:
    """``|x| ** 2`` element-wise in ``x``'s dtype: ``x * x`` for a real ``x``; for a complex
    one ``re ** 2 + im ** 2`` (TensorFlow's norms take ``x * conj(x)``, whose imaginary
    part is 0), not the holomorphic ``x * x``."""
    if x.dtype.kind != "c":
        return m.square(x)
    return m.cast(m.square(m.abs(x)), x.dtype)


def norm(tensor: Any, ord: Any = "euclidean", axis: Any = None, keepdims: Any = False,
         name: str | None = None) -> Any:
    """The vector or matrix norm of ``tensor``, as ``tf.norm``.

    With ``axis`` None or an int, a vector norm (over all elements when None): ``ord`` is
    'euclidean' (2), 1, ``inf`` or any positive real p. With two axes, a matrix norm:
    'euclidean'/'fro' (Frobenius), 1 (largest column sum), ``inf`` (largest row sum) or 2
    (largest singular value).

    Args:
        tensor: a float tensor.
        ord: the order of the norm.
        axis: None, an int, or two distinct ints (a matrix norm).
        keepdims: keep the reduced axes with length 1.
        name: unused (TensorFlow compatibility).

    Returns:
        The norm, reduced over ``axis``.

    Examples:
        >>> import ember.core as em
        >>> em.norm([[1., -2.], [3., 4.]], ord=1, axis=[-2, -1])
        ember.Tensor(6.0, shape=(), dtype=float32)
    """
    x = _args.tensor(tensor)
    keep = bool(keepdims)
    if isinstance(ord, bool):
        raise InvalidArgumentError(f"norm: unsupported ord {ord!r} (a bool)")
    ax = None if axis is None else _args.axes("norm", axis, x.ndim)
    if ax is not None and len(ax) == 2:
        a0, a1 = [int(a) % x.ndim for a in (axis.numpy().tolist() if hasattr(axis, "numpy")
                                             else axis)]
        return _matrix_norm(x, ord, a0, a1, keep)
    if ax is not None and len(ax) > 2 and ord not in ("euclidean", "fro", 2, 2.0):
        raise InvalidArgumentError(f"norm: axis must be None, an int or two ints for ord={ord!r}, "
                                   f"got {axis!r}")
    if ord in ("euclidean", "fro", 2, 2.0):
        return m.sqrt(r.reduce_sum(_abs_square(x), ax, keep))
    if ord in (1, 1.0):
        return r.reduce_sum(m.abs(x), ax, keep)
    if ord == float("inf"):
        return r.reduce_max(m.abs(x), ax, keep)
    if isinstance(ord, (int, float)) and not isinstance(ord, bool) and 0 < ord < float("inf"):
        p = float(ord)
        return m.pow(r.reduce_sum(m.pow(m.abs(x), p), ax, keep), 1.0 / p)
    raise InvalidArgumentError(f"norm: unsupported ord {ord!r} for a vector norm (use "
                               "'euclidean', 1, 2, inf or a positive real)")


def _matrix_norm(x: Any, ord: Any, rows: int, cols: int, keep: bool) -> Any:
    """A norm of the matrices spanning axes (rows, cols), in that order (as TensorFlow)."""
    if ord in ("euclidean", "fro"):
        return m.sqrt(r.reduce_sum(_abs_square(x), [rows, cols], keep))
    if ord in (1, 1.0, float("inf")):
        # 1: the largest column sum; inf: the largest row sum
        summed, maxed = (rows, cols) if ord != float("inf") else (cols, rows)
        if keep:
            return r.reduce_max(r.reduce_sum(m.abs(x), summed, True), maxed, True)
        return r.reduce_max(r.reduce_sum(m.abs(x), summed), maxed - (maxed > summed))
    if ord in (2, 2.0):
        rest = [i for i in range(x.ndim) if i not in (rows, cols)]
        s = svd(transpose(x, rest + [rows, cols]), compute_uv=False)
        top = getitem(s, (Ellipsis, 0))
        if keep:
            lo, hi = sorted((rows, cols))
            return expand_dims(expand_dims(top, lo), hi)
        return top
    raise InvalidArgumentError(f"norm: unsupported ord {ord!r} for a matrix norm (use "
                               "'euclidean', 'fro', 1, 2 or inf)")


def clip_by_norm(t: Any, clip_norm: Any, axes: Any = None, name: str | None = None) -> Any:
    """Scale ``t`` down so its L2 norm over ``axes`` is at most ``clip_norm``."""
    x = _args.tensor(t)
    l2 = m.sqrt(r.reduce_sum(_abs_square(x), axes, keepdims=True))
    scale = m.divide(clip_norm, m.maximum(l2, clip_norm))
    return m.multiply(x, m.cast(scale, x.dtype) if scale.dtype != x.dtype else scale)


def global_norm(t_list: Any, name: str | None = None) -> Any:
    """sqrt(sum of squared L2 norms) of the tensors in ``t_list`` (None entries skipped)."""
    sq = [r.reduce_sum(_abs_square(_args.tensor(t))) for t in t_list if t is not None]
    total = sq[0]
    for s in sq[1:]:
        total = m.add(total, s)
    return m.sqrt(total)


def clip_by_global_norm(t_list: Any, clip_norm: Any, use_norm: Any = None,
                        name: str | None = None) -> tuple[list[Any], Any]:
    """Scale all tensors by one factor so their global norm is at most ``clip_norm``.
    A global norm that is inf or NaN makes every entry NaN, as TensorFlow's (its
    documented behaviour: the factor is ``clip_norm / max(norm, clip_norm) + (norm -
    norm)``)."""
    gn = global_norm(t_list) if use_norm is None else _args.tensor(use_norm)
    scale = m.divide(clip_norm, m.maximum(gn, clip_norm))
    scale = m.add(scale, m.subtract(gn, gn))  # NaN where the norm is not finite
    return [None if t is None else m.multiply(t, scale) for t in t_list], gn


# --- matrix functions and decompositions -------------------------------------------------
def _sym_lower(xp: Any, a: Any) -> Any:
    """The symmetric matrix that a's lower triangle defines (all that eigh and cholesky read)."""
    return xp.tril(a) + xp.swapaxes(xp.tril(a, -1), -1, -2)


def _svd(be: Any, a: Any, *, full_matrices: bool, compute_uv: bool) -> Any:
    if not compute_uv:
        return be.xp.linalg.svd(a, full_matrices=full_matrices, compute_uv=False)
    u, s, vh = be.xp.linalg.svd(a, full_matrices=full_matrices)
    return s, u, be.xp.swapaxes(vh, -1, -2)


def _factorized(be: Any, fn: Any, failure: str) -> Any:
    """``fn()``, a factorization-backed call, raising ``LinAlgError(failure)`` when it fails:
    numpy raises by itself; cupy gives garbage unless asked to check (one sync)."""
    with be.linalg_errors():
        try:
            return fn()
        except np.linalg.LinAlgError:
            raise np.linalg.LinAlgError(failure) from None


_inv = register("matrix_inverse", lambda be, a: _factorized(
    be, lambda: be.xp.linalg.inv(a), "Singular matrix"), family=F)
_det = register("matrix_determinant", lambda be, a: be.xp.linalg.det(a), family=F)
_slogdet = register("log_matrix_determinant",
                    lambda be, a: tuple(be.xp.linalg.slogdet(a)), family=F)
_cholesky = register("cholesky", lambda be, a: _factorized(
    be, lambda: be.xp.linalg.cholesky(_sym_lower(be.xp, a)),
    "Matrix is not positive definite"), family=F)


def _solve_forward(be: Any, a: Any, b: Any) -> Any:
    """``a^-1 b``, batch dimensions broadcast here: cupy's ``solve`` refuses a ``b`` whose
    batch dimensions differ from ``a``'s (numpy broadcasts them). A broadcast view costs
    nothing; the gradient is summed back to each input's shape by the tape."""
    if a.shape[:-2] != b.shape[:-2]:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = be.xp.broadcast_to(a, batch + a.shape[-2:])
        b = be.xp.broadcast_to(b, batch + b.shape[-2:])
    return _factorized(be, lambda: be.xp.linalg.solve(a, b), "Singular matrix")


_solve = register("matrix_solve", _solve_forward, family=F)
_qr = register("qr", lambda be, a, *, full_matrices: tuple(
    be.xp.linalg.qr(a, mode="complete" if full_matrices else "reduced")), family=F)
_svd_op = register("svd", _svd, family=F)
_eigh = register("self_adjoint_eig",
                 lambda be, a: tuple(be.xp.linalg.eigh(_sym_lower(be.xp, a))), family=F)


def _matrices(op: str, x: Any, square: bool = True) -> Any:
    """``x`` as a float tensor of rank >= 2 (square in its last two axes if ``square``)."""
    t = _args.tensor(x)
    if t.dtype.kind != "f" or t.dtype.itemsize < 4:
        raise InvalidArgumentError(f"linalg.{op}: expected a float32 or float64 tensor, "
                                   f"got {t.dtype}")
    if t.ndim < 2:
        raise InvalidArgumentError(f"linalg.{op}: expected a matrix or a batch of them "
                                   f"(rank >= 2), got shape {t.shape}")
    if square and t.shape[-1] != t.shape[-2]:
        raise InvalidArgumentError(f"linalg.{op}: expected square matrices, got shape {t.shape}")
    return t


def inv(input: Any, adjoint: bool = False, name: str | None = None) -> Any:
    """The inverse of each square matrix in ``input`` (shape ``[..., M, M]``).

    Args:
        input: float32 or float64 tensor of shape ``[..., M, M]``.
        adjoint: invert the (conjugate) transpose instead.
        name: unused (TensorFlow compatibility).

    Returns:
        A tensor of the same shape. Singular matrices raise InvalidArgumentError.

    Examples:
        >>> import ember.core as em
        >>> em.linalg.inv([[2., 0.], [0., 4.]])
        ember.Tensor([[0.5  0.  ]
         [0.   0.25]], shape=(2, 2), dtype=float32)
    """
    x = _matrices("inv", input)
    return execute(_inv, (_swap(x) if adjoint else x,))


def det(input: Any, name: str | None = None) -> Any:
    """The determinant of each square matrix in ``input`` (shape ``[..., M, M]`` -> ``[...]``).

    Examples:
        >>> import ember.core as em
        >>> em.linalg.det([[2., 1.], [1., 3.]])
        ember.Tensor(5.0, shape=(), dtype=float32)
    """
    return execute(_det, (_matrices("det", input),))


def slogdet(input: Any, name: str | None = None) -> tuple[Any, Any]:
    """``(sign, log_abs_determinant)`` of each square matrix: stable where det over/underflows.

    Examples:
        >>> import ember.core as em
        >>> sign, logdet = em.linalg.slogdet([[-2., 0.], [0., 3.]])
        >>> float(sign), round(float(logdet), 4)
        (-1.0, 1.7918)
    """
    out: tuple[Any, Any] = execute(_slogdet, (_matrices("slogdet", input),))
    return out


def cholesky(input: Any, name: str | None = None) -> Any:
    """The lower-triangular Cholesky factor L (``input = L L^T``) of each matrix.

    Only the lower triangle of ``input`` is read (as TensorFlow); the gradient flows to it.

    Examples:
        >>> import ember.core as em
        >>> em.linalg.cholesky([[4., 2.], [2., 2.]])
        ember.Tensor([[2. 0.]
         [1. 1.]], shape=(2, 2), dtype=float32)
    """
    return execute(_cholesky, (_matrices("cholesky", input),))


def solve(matrix: Any, rhs: Any, adjoint: bool = False, name: str | None = None) -> Any:
    """X with ``matrix @ X = rhs`` (``matrix^T @ X = rhs`` if ``adjoint``).

    Args:
        matrix: ``[..., M, M]`` float tensor.
        rhs: ``[..., M, K]`` tensor of the same dtype (batch dimensions broadcast).
        adjoint: solve with the transpose of ``matrix``.
        name: unused (TensorFlow compatibility).

    Returns:
        ``[..., M, K]``.

    Examples:
        >>> import ember.core as em
        >>> em.linalg.solve([[2., 0.], [0., 4.]], [[2.], [2.]])
        ember.Tensor([[1. ]
         [0.5]], shape=(2, 1), dtype=float32)
    """
    a = _matrices("solve", matrix)
    b = _matrices("solve", rhs, square=False)
    if a.dtype != b.dtype:
        raise InvalidArgumentError(f"linalg.solve: matrix is {a.dtype} but rhs is {b.dtype}")
    if b.shape[-2] != a.shape[-1]:
        raise InvalidArgumentError(f"linalg.solve: rhs has {b.shape[-2]} rows for "
                                   f"{a.shape[-1]}x{a.shape[-1]} matrices (shapes {a.shape} "
                                   f"and {b.shape})")
    try:
        np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise InvalidArgumentError(f"linalg.solve: the batch dimensions of matrix {a.shape} "
                                   f"and rhs {b.shape} do not broadcast") from None
    return execute(_solve, (_swap(a) if adjoint else a, b))


def qr(input: Any, full_matrices: bool = False, name: str | None = None) -> tuple[Any, Any]:
    """``(q, r)`` with ``input = q @ r``, q orthonormal columns, r upper triangular.

    Args:
        input: ``[..., M, N]`` float tensor.
        full_matrices: q is ``[..., M, M]`` and r ``[..., M, N]``; otherwise (default) q is
            ``[..., M, P]`` and r ``[..., P, N]`` with ``P = min(M, N)``.
        name: unused (TensorFlow compatibility).

    Returns:
        The pair (q, r).

    Examples:
        >>> import ember.core as em
        >>> q, r = em.linalg.qr([[3., 1.], [4., 2.]])
        >>> em.matmul(q, r).numpy().round(4).tolist()
        [[3.0, 1.0], [4.0, 2.0]]
    """
    x = _matrices("qr", input, square=False)
    out: tuple[Any, Any] = execute(_qr, (x,), {"full_matrices": bool(full_matrices)})
    return out


def svd(tensor: Any, full_matrices: bool = False, compute_uv: bool = True,
        name: str | None = None) -> Any:
    """Singular values (descending), and vectors: ``tensor = u @ diag(s) @ v^T``.

    The order is TensorFlow's: ``s, u, v`` (v itself, not its transpose as numpy gives).

    Args:
        tensor: ``[..., M, N]`` float tensor.
        full_matrices: u is ``[..., M, M]`` and v ``[..., N, N]``; otherwise (default) both
            have ``P = min(M, N)`` columns.
        compute_uv: if False, return s only.
        name: unused (TensorFlow compatibility).

    Returns:
        ``s`` of shape ``[..., P]``, or ``(s, u, v)``.

    Examples:
        >>> import ember.core as em
        >>> em.linalg.svd([[3., 0.], [0., -4.]], compute_uv=False)
        ember.Tensor([4. 3.], shape=(2,), dtype=float32)
    """
    x = _matrices("svd", tensor, square=False)
    return execute(_svd_op, (x,), {"full_matrices": bool(full_matrices),
                                   "compute_uv": bool(compute_uv)})


def eigh(tensor: Any, name: str | None = None) -> tuple[Any, Any]:
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric matrices.

    Only the lower triangle of ``tensor`` is read (as TensorFlow); the gradient flows to it.
    Each eigenvector is defined up to its sign, so differentiate functions that do not
    depend on the sign (as in TensorFlow and PyTorch).

    Returns:
        ``(e, v)``: ``[..., M]`` and ``[..., M, M]``.

    Examples:
        >>> import ember.core as em
        >>> e, v = em.linalg.eigh([[2., 1.], [1., 2.]])
        >>> e
        ember.Tensor([1. 3.], shape=(2,), dtype=float32)
    """
    out: tuple[Any, Any] = execute(_eigh, (_matrices("eigh", tensor),))
    return out
