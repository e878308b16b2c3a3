"""Specs for ``em.linalg`` (matrix functions and decompositions) and einsum's diagonals and
ellipsis.

Inputs are drawn where each function is smooth and well conditioned: matrices a distance
from singular, symmetric ones with separated eigenvalues, and spectra with separated
singular values. qr, svd and eigh give factors defined only up to the signs of their
columns (the gauge), and backends may choose differently; their specs therefore check
the factors with the signs fixed (a function that does not depend on the choice, so its
gradient is well defined, as TensorFlow's and PyTorch's tests do).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import linalg as la
from .._ops import linalg as _la
from .._ops import math as m
from .._ops.array import concat, expand_dims
from ._spec import F32, F64, FLOATS, OpSpec, args, arr, case

Sampler = Callable[[np.random.Generator, np.dtype], np.ndarray]
_TOL = {"tol": {F32: (1e-4, 1e-5), F64: (1e-9, 1e-11)}}


# --- samplers -----------------------------------------------------------------------------
def _eye_for(shape: tuple[int, ...]) -> np.ndarray:
    return np.broadcast_to(np.eye(shape[-2], shape[-1]), shape)


def wellcond(*shape: int, flip: bool = False) -> Sampler:
    """Square matrices uniform in [-1, 1) plus 3 I: far from singular (a row swap if flip)."""
    def make(rng: np.random.Generator, dt: np.dtype) -> np.ndarray:
        a = rng.uniform(-1.0, 1.0, shape) + 3.0 * _eye_for(shape)
        if flip:
            a = a[..., ::-1, :]  # determinant changes sign
        return np.ascontiguousarray(a).astype(dt)

    return make


def spd(*shape: int) -> Sampler:
    """Symmetric positive definite matrices: B B^T + n I."""
    def make(rng: np.random.Generator, dt: np.dtype) -> np.ndarray:
        b = rng.uniform(-1.0, 1.0, shape)
        return (b @ np.swapaxes(b, -1, -2) + shape[-1] * _eye_for(shape)).astype(dt)

    return make


def _orthogonal(rng: np.random.Generator, batch: tuple[int, ...], n: int) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=batch + (n, n)))
    return q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]


def spectrum(*shape: int) -> Sampler:
    """U diag(s) V^T with singular values about 3, 2.2, 1.4, ... (well separated)."""
    def make(rng: np.random.Generator, dt: np.dtype) -> np.ndarray:
        *batch, rows, cols = shape
        k = min(rows, cols)
        s = 3.0 - 0.8 * np.arange(k) + rng.uniform(0.0, 0.1, tuple(batch) + (k,))
        u = _orthogonal(rng, tuple(batch), rows)[..., :k]
        v = _orthogonal(rng, tuple(batch), cols)[..., :k]
        return ((u * s[..., None, :]) @ np.swapaxes(v, -1, -2)).astype(dt)

    return make


def symmetric(*shape: int) -> Sampler:
    """Q diag(e) Q^T with eigenvalues about -2, -0.7, 0.6, 1.9, ... (well separated)."""
    def make(rng: np.random.Generator, dt: np.dtype) -> np.ndarray:
        *batch, n, _ = shape
        e = -2.0 + 1.3 * np.arange(n) + rng.uniform(0.0, 0.1, tuple(batch) + (n,))
        q = _orthogonal(rng, tuple(batch), n)
        a = (q * e[..., None, :]) @ np.swapaxes(q, -1, -2)
        return (0.5 * (a + np.swapaxes(a, -1, -2))).astype(dt)

    return make


def triangular(*shape: int) -> Sampler:
    """Square matrices with a dominant diagonal: either triangle is well conditioned."""
    return wellcond(*shape)


# --- references -----------------------------------------------------------------------------
def _sw(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


def _np_inv(a: np.ndarray, adjoint: bool = False) -> np.ndarray:
    return np.linalg.inv(_sw(a) if adjoint else a)


def _np_solve(a: np.ndarray, b: np.ndarray, adjoint: bool = False) -> np.ndarray:
    return np.linalg.solve(_sw(a) if adjoint else a, b)


def _np_trisolve(a: np.ndarray, b: np.ndarray, lower: bool = True,
                 adjoint: bool = False) -> np.ndarray:
    t = np.tril(a) if lower else np.triu(a)
    return np.linalg.solve(_sw(t) if adjoint else t, b)


def _np_sym_lower(a: np.ndarray) -> np.ndarray:
    return np.tril(a) + _sw(np.tril(a, -1))


def _np_band(a: np.ndarray, lo: int, hi: int) -> np.ndarray:
    i = np.arange(a.shape[-2])[:, None]
    j = np.arange(a.shape[-1])[None, :]
    keep = ((lo < 0) | (i - j <= lo)) & ((hi < 0) | (j - i <= hi))
    return np.where(keep, a, np.zeros((), a.dtype))


def _np_norm(x: np.ndarray, ord: Any = "euclidean", axis: Any = None,
             keepdims: bool = False) -> np.ndarray:
    ax = tuple(axis) if isinstance(axis, list) else axis
    if axis is None:
        x, ax = x.reshape(-1), 0
    o = 2 if ord == "euclidean" and not isinstance(ax, tuple) else ord
    o = "fro" if o == "euclidean" else o
    return np.asarray(np.linalg.norm(x, o, ax, keepdims)).astype(x.dtype)


# --- sign-fixed decompositions (the gauge removed), in ember, numpy and torch -----------------
def _sign_row0(xp: Any, u: Any) -> Any:
    """The sign of each column's first entry, shaped to scale the columns."""
    return xp.sign(u[..., 0:1, :])


def qr_fixed(a: Any, full_matrices: bool = False) -> tuple[Any, Any]:
    """em.linalg.qr with r's diagonal made positive (q's columns and r's rows scaled to
    match); extra columns of a full q get a positive first entry."""
    q, r = la.qr(a, full_matrices=full_matrices)
    d = m.sign(la.diag_part(r))
    if q.shape[-1] > d.shape[-1]:
        d = concat([d, m.sign(q[..., 0, d.shape[-1]:])], -1)
    return m.multiply(q, expand_dims(d, -2)), m.multiply(r, expand_dims(d, -1))


def _np_qr_fixed(a: np.ndarray, full_matrices: bool = False) -> tuple[np.ndarray, np.ndarray]:
    q, r = np.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    d = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
    if q.shape[-1] > d.shape[-1]:
        d = np.concatenate([d, np.sign(q[..., 0, d.shape[-1]:])], -1)
    return q * d[..., None, :], r * d[..., :, None]


def _torch_qr_fixed(T: Any, a: Any, full_matrices: bool = False) -> Any:
    if full_matrices and a.shape[-2] > a.shape[-1]:
        return None  # not differentiable, in PyTorch as here
    q, r = T.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    d = T.sign(T.diagonal(r, dim1=-2, dim2=-1))
    return q * d[..., None, :], r * d[..., :, None]


def svd_fixed(a: Any, full_matrices: bool = False, compute_uv: bool = True) -> Any:
    """em.linalg.svd with each pair (u_j, v_j) signed so that u's first row is positive."""
    if not compute_uv:
        return la.svd(a, full_matrices=full_matrices, compute_uv=False)
    s, u, v = la.svd(a, full_matrices=full_matrices)
    sg = m.sign(u[..., 0:1, :])
    return s, m.multiply(u, sg), m.multiply(v, sg)


def _np_svd_fixed(a: np.ndarray, full_matrices: bool = False, compute_uv: bool = True) -> Any:
    if not compute_uv:
        return np.linalg.svd(a, full_matrices=full_matrices, compute_uv=False)
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    sg = np.sign(u[..., 0:1, :])
    return s, u * sg, _sw(vh) * sg


def _torch_svd_fixed(T: Any, a: Any, full_matrices: bool = False, compute_uv: bool = True) -> Any:
    if not compute_uv:
        return T.linalg.svdvals(a)
    u, s, vh = T.linalg.svd(a, full_matrices=full_matrices)
    sg = T.sign(u[..., 0:1, :])
    return s, u * sg, vh.mT * sg


def eigh_fixed(a: Any) -> tuple[Any, Any]:
    """em.linalg.eigh with each eigenvector signed so that its first entry is positive."""
    e, v = la.eigh(a)
    return e, m.multiply(v, m.sign(v[..., 0:1, :]))


def _np_eigh_fixed(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    e, v = np.linalg.eigh(a)
    return e, v * np.sign(v[..., 0:1, :])


def _torch_eigh_fixed(T: Any, a: Any) -> Any:
    # ember reads the lower triangle only (as TF); so does this reference
    e, v = T.linalg.eigh(T.tril(a) + T.tril(a, -1).mT)
    return e, v * T.sign(v[..., 0:1, :])


# --- torch references of the rest -------------------------------------------------------------
def _torch_band(T: Any, a: Any, lo: int, hi: int) -> Any:
    out = a if lo < 0 else T.triu(a, -lo)
    return out if hi < 0 else T.tril(out, hi)


def _torch_norm(T: Any, x: Any, ord: Any = "euclidean", axis: Any = None,
                keepdims: bool = False) -> Any:
    if isinstance(axis, list) and len(axis) == 2:
        o = "fro" if ord == "euclidean" else ord
        return T.linalg.matrix_norm(x, o, tuple(axis), keepdims)
    return T.linalg.vector_norm(x, 2 if ord == "euclidean" else ord, axis, keepdims)


def _torch_trisolve(T: Any, a: Any, b: Any, lower: bool = True, adjoint: bool = False) -> Any:
    if adjoint:  # the transpose of one triangle is the other
        return T.linalg.solve_triangular(a.mT, b, upper=lower)
    return T.linalg.solve_triangular(a, b, upper=not lower)


# --- the specs ------------------------------------------------------------------------------
def _matrix_functions() -> list[OpSpec]:
    return [
        OpSpec("linalg.inv", la.inv, _np_inv, (
            case("matrix", args(wellcond(3, 3))),
            case("batched", args(wellcond(2, 3, 3))),
            case("adjoint", args(wellcond(3, 3)), adjoint=True),
        ), FLOATS, True, (0,),
            lambda T, a, adjoint=False: T.linalg.inv(a.mT if adjoint else a), **_TOL),
        OpSpec("linalg.det", la.det, np.linalg.det, (
            case("matrix", args(wellcond(3, 3))),
            case("batched", args(wellcond(2, 3, 3))),
            case("negative", args(wellcond(3, 3, flip=True))),
        ), FLOATS, True, (0,), lambda T, a: T.linalg.det(a), **_TOL),
        OpSpec("linalg.slogdet", la.slogdet, lambda a: tuple(np.linalg.slogdet(a)), (
            case("matrix", args(wellcond(3, 3))),
            case("batched_negative", args(wellcond(2, 3, 3, flip=True))),
        ), FLOATS, True, (0,),
            # the sign has no gradient: + 0 * logdet lets the comparison run all the same
            lambda T, a: (lambda s, ld: (s + 0 * ld, ld))(*T.linalg.slogdet(a)), **_TOL),
        OpSpec("linalg.slogdet.log_abs_determinant", lambda a: la.slogdet(a)[1],
               lambda a: np.linalg.slogdet(a)[1], (
                   case("batched", args(wellcond(2, 3, 3))),
                   case("negative", args(wellcond(3, 3, flip=True))),
               ), FLOATS, True, (0,), lambda T, a: T.linalg.slogdet(a)[1], **_TOL),
        OpSpec("linalg.cholesky", la.cholesky, lambda a: np.linalg.cholesky(a), (
            case("matrix", args(spd(3, 3))),
            case("batched", args(spd(2, 3, 3))),
        ), FLOATS, True, (0,),
            # ember reads the lower triangle only (as TF); so does this reference
            lambda T, a: T.linalg.cholesky(T.tril(a) + T.tril(a, -1).mT), **_TOL),
        OpSpec("linalg.solve", la.solve, _np_solve, (
            case("matrix", args(wellcond(3, 3), arr(3, 2))),
            case("batched", args(wellcond(2, 3, 3), arr(2, 3, 1))),
            case("broadcast_rhs", args(wellcond(2, 3, 3), arr(3, 2))),
            case("adjoint", args(wellcond(3, 3), arr(3, 2)), adjoint=True),
        ), FLOATS, True, (0, 1),
            lambda T, a, b, adjoint=False: T.linalg.solve(a.mT if adjoint else a, b), **_TOL),
        OpSpec("linalg.triangular_solve", la.triangular_solve, _np_trisolve, (
            case("lower", args(triangular(3, 3), arr(3, 2))),
            case("upper", args(triangular(3, 3), arr(3, 2)), lower=False),
            case("lower_adjoint", args(triangular(2, 3, 3), arr(2, 3, 1)), adjoint=True),
            case("upper_adjoint", args(triangular(3, 3), arr(3, 2)), lower=False, adjoint=True),
        ), FLOATS, True, (0, 1), _torch_trisolve, **_TOL),
    ]


def _decompositions() -> list[OpSpec]:
    return [
        OpSpec("linalg.qr", qr_fixed, _np_qr_fixed, (
            case("tall", args(spectrum(4, 3))),
            case("square", args(spectrum(3, 3))),
            case("wide", args(spectrum(3, 4))),
            case("batched", args(spectrum(2, 4, 3))),
            case("full_square", args(spectrum(3, 3)), full_matrices=True),
            case("full_wide", args(spectrum(2, 3)), full_matrices=True),
            case("full_tall", args(spectrum(3, 2)), full_matrices=True),
        ), FLOATS, True, (0,), _torch_qr_fixed, **_TOL),
        OpSpec("linalg.svd", svd_fixed, _np_svd_fixed, (
            case("tall", args(spectrum(4, 3))),
            case("square", args(spectrum(3, 3))),
            case("wide", args(spectrum(2, 4))),
            case("batched", args(spectrum(2, 3, 2))),
            case("values_only", args(spectrum(4, 3)), compute_uv=False),
            case("full_square", args(spectrum(3, 3)), full_matrices=True),
        ), FLOATS, True, (0,), _torch_svd_fixed, **_TOL),
        OpSpec("linalg.eigh", eigh_fixed, _np_eigh_fixed, (
            case("matrix", args(symmetric(3, 3))),
            case("batched", args(symmetric(2, 4, 4))),
        ), FLOATS, True, (0,), _torch_eigh_fixed, **_TOL),
    ]


def _structure() -> list[OpSpec]:
    return [
        OpSpec("linalg.diag", la.diag, lambda v: v[..., :, None] * np.eye(v.shape[-1], dtype=v.dtype),
               (
            case("vector", args(arr(3))),
            case("batched", args(arr(2, 4))),
        ), FLOATS, True, (0,), lambda T, v: T.diag_embed(v)),
        OpSpec("linalg.diag_part", la.diag_part,
               lambda a: np.diagonal(a, axis1=-2, axis2=-1).copy(), (
                   case("square", args(arr(3, 3))),
                   case("tall_batched", args(arr(2, 4, 3))),
                   case("wide", args(arr(2, 5))),
               ), FLOATS, True, (0,), lambda T, a: T.diagonal(a, dim1=-2, dim2=-1)),
        OpSpec("linalg.band_part", la.band_part, _np_band, (
            case("lower", args(arr(3, 4), -1, 0)),
            case("upper", args(arr(4, 3), 0, -1)),
            case("tridiagonal", args(arr(2, 4, 4), 1, 1)),
            case("everything", args(arr(3, 3), -1, -1)),
        ), FLOATS, True, (0,), _torch_band),
        OpSpec("linalg.trace", la.trace, lambda a: np.trace(a, axis1=-2, axis2=-1), (
            case("square", args(arr(3, 3))),
            case("batched_wide", args(arr(2, 3, 4))),
        ), FLOATS, True, (0,), lambda T, a: T.diagonal(a, dim1=-2, dim2=-1).sum(-1)),
        OpSpec("linalg.adjoint", la.adjoint, _sw, (
            case("matrix", args(arr(2, 3))),
            case("batched", args(arr(2, 3, 4))),
        ), FLOATS, True, (0,), lambda T, a: a.mT),
        OpSpec("linalg.matrix_transpose", la.matrix_transpose, _sw, (
            case("batched", args(arr(2, 3, 4))),
        ), FLOATS, True, (0,), lambda T, a: a.mT),
        OpSpec("linalg.norm", la.norm, _np_norm, (
            case("euclidean", args(arr(3, 4))),
            case("p3_axis", args(arr(3, 4)), ord=3, axis=1),
            case("matrix_1", args(arr(2, 3, 4)), ord=1, axis=[1, 2]),
            case("matrix_1_swapped", args(arr(3, 4)), ord=1, axis=[-1, -2]),
            case("matrix_inf_keepdims", args(arr(2, 3, 4)), ord=np.inf, axis=[-2, -1],
                 keepdims=True),
            case("matrix_2", args(spectrum(2, 3, 4)), ord=2, axis=[1, 2]),
            case("matrix_fro", args(arr(3, 4)), ord="fro", axis=[0, 1]),
        ), FLOATS, True, (0,), _torch_norm, **_TOL),
    ]


def _einsum() -> list[OpSpec]:
    tol = {"tol": {F32: (1e-5, 1e-5)}}
    return [
        OpSpec("einsum.diagonal", _la.einsum, np.einsum, (
            case("diag", args("ii->i", arr(3, 3))),
            case("trace", args("ii->", arr(3, 3))),
            case("diag_then_sum", args("iij->j", arr(3, 3, 2))),
            case("ellipsis_sum", args("i...->...", arr(2, 3, 4))),
        ), FLOATS, True, (1,), lambda T, eq, *xs: T.einsum(eq, *xs), **tol),
        OpSpec("einsum.ellipsis", _la.einsum, np.einsum, (
            case("batch_matmul", args("...ij,...jk->...ik", arr(2, 3, 4), arr(4, 2))),
            case("broadcast_batch", args("...ij,...jk->...ik", arr(2, 1, 3, 2), arr(3, 2, 2))),
            case("batched_diagonal", args("bii,bi->b", arr(2, 3, 3), arr(2, 3))),
            case("broadcast_dim", args("ij,ij->i", arr(2, 3), arr(1, 3))),
        ), FLOATS, True, (1, 2), lambda T, eq, *xs: T.einsum(eq, *xs), **tol),
        # no '->': numpy's implicit output (letters seen once, sorted, after any ...)
        OpSpec("einsum.implicit", _la.einsum, np.einsum, (
            case("matmul", args("ij,jk", arr(2, 3), arr(3, 4))),
            case("transposed", args("ba,cb", arr(2, 3), arr(4, 2))),
            case("full_sum", args("ij,ij", arr(2, 3), arr(2, 3))),
            case("batched", args("...ij,jk", arr(2, 2, 3), arr(3, 2))),
        ), FLOATS, True, (1, 2), lambda T, eq, *xs: T.einsum(eq, *xs), **tol),
    ]


def specs() -> list[OpSpec]:
    return _matrix_functions() + _decompositions() + _structure() + _einsum()
