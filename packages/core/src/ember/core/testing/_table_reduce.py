"""Specs for reductions and linear algebra."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._ops import linalg as la
from .._ops import reduce as r
from ._spec import BOOL, F16, F32, F64, FLOATS, I32, NUMERIC, OpSpec, args, arr, case, lst


def _axis(a: Any) -> Any:
    return tuple(a) if isinstance(a, list) else a


def _reduction_cases(domain: str = "real", empty: bool = True) -> tuple:
    cs = [
        case("all", args(arr(2, 3, 4, domain=domain))),
        case("axis1", args(arr(2, 3, 4, domain=domain)), axis=1),
        case("axes_keepdims", args(arr(2, 3, 4, domain=domain)), axis=[0, 2], keepdims=True),
        case("negative", args(arr(3, 4, domain=domain)), axis=-1),
        case("scalar", args(arr(domain=domain))),
    ]
    if empty:
        cs.append(case("empty", args(arr(0, 3, domain=domain)), axis=1))
    return tuple(cs)


def _red(np_fn: Any, keep_int: bool = False) -> Any:
    def ref(x: np.ndarray, axis: Any = None, keepdims: bool = False) -> np.ndarray:
        kw = {"dtype": x.dtype} if keep_int and x.dtype.kind in "iu" else {}
        return np.asarray(np_fn(x, axis=_axis(axis), keepdims=keepdims, **kw))

    return ref


def _mean_ref(x: np.ndarray, axis: Any = None, keepdims: bool = False) -> np.ndarray:
    if x.dtype.kind in "iu":  # integer mean truncates toward zero (TensorFlow)
        return np.trunc(np.mean(x, axis=_axis(axis), keepdims=keepdims)).astype(x.dtype)
    return np.asarray(np.mean(x, axis=_axis(axis), keepdims=keepdims))


def _lse_ref(x: np.ndarray, axis: Any = None, keepdims: bool = False) -> np.ndarray:
    x64 = x.astype(np.float64)
    mx = np.max(x64, axis=_axis(axis), keepdims=True)
    mx = np.where(np.isfinite(mx), mx, 0)
    out = np.log(np.sum(np.exp(x64 - mx), axis=_axis(axis), keepdims=True)) + mx
    if not keepdims:
        out = out.reshape(np.sum(x64, axis=_axis(axis)).shape)
    return out.astype(x.dtype)


def _arg_ref(fn: Any) -> Any:
    def ref(x: np.ndarray, axis: Any = None, output_type: Any = np.int64) -> np.ndarray:
        return np.asarray(fn(x, axis=axis or 0)).astype(output_type)

    return ref


def _cumsum_ref(x: np.ndarray, axis: int = 0, exclusive: bool = False,
                reverse: bool = False) -> np.ndarray:
    y = np.flip(x, axis) if reverse else x
    out = np.cumsum(y, axis=axis, dtype=x.dtype)
    if exclusive:
        out = out - y
    return np.flip(out, axis) if reverse else out


def _reductions() -> list[OpSpec]:
    lat = "lattice_a"
    return [
        OpSpec("reduce_sum", r.reduce_sum, _red(np.sum, True), _reduction_cases(),
               NUMERIC + (F16,), torch=lambda T, x, axis=None, keepdims=False:
               T.sum(x, dim=axis, keepdim=keepdims) if axis is not None else T.sum(x)),
        OpSpec("reduce_mean", r.reduce_mean, _mean_ref, _reduction_cases(), NUMERIC),
        OpSpec("reduce_max", r.reduce_max, _red(np.max), _reduction_cases(lat, empty=False)
               + (case("empty_kept", args(arr(0, 3)), axis=1),), NUMERIC + (F16,)),
        OpSpec("reduce_min", r.reduce_min, _red(np.min), _reduction_cases(lat, empty=False),
               NUMERIC),
        OpSpec("reduce_prod", r.reduce_prod, _red(np.prod, True), _reduction_cases("positive"),
               NUMERIC, tol={F32: (1e-5, 1e-5)}),
        OpSpec("reduce_any", r.reduce_any, _red(np.any), _reduction_cases(), (BOOL,), False, ()),
        OpSpec("reduce_all", r.reduce_all, _red(np.all), _reduction_cases(), (BOOL,), False, ()),
        OpSpec("reduce_logsumexp", r.reduce_logsumexp, _lse_ref, _reduction_cases() + (
            case("large", args(lambda rng, dt: np.array([[1000.0, 999.0], [-1e3, -999.0]], dt)),
                 axis=1),
            case("neg_inf", args(lambda rng, dt: np.array([-np.inf, -np.inf], dt)))),
               FLOATS, tol={F64: (1e-10, 1e-10)}),
        OpSpec("reduce_variance", r.reduce_variance, _red(np.var), _reduction_cases(empty=False),
               FLOATS),
        OpSpec("reduce_std", r.reduce_std, _red(np.std), _reduction_cases(empty=False), FLOATS),
        OpSpec("count_nonzero", r.count_nonzero, lambda x, axis=None, keepdims=False:
               np.asarray(np.count_nonzero(x, axis=_axis(axis), keepdims=keepdims), np.int64),
               _reduction_cases("grid"), NUMERIC + (BOOL,), False, ()),
        OpSpec("argmax", r.argmax, _arg_ref(np.argmax), (
            case("default", args(arr(3, 4, domain=lat))),
            case("axis1", args(arr(3, 4, domain=lat)), axis=1),
            case("int32", args(arr(2, 3, 4, domain=lat)), axis=-1, output_type=I32),
        ), NUMERIC, False, ()),
        OpSpec("argmin", r.argmin, _arg_ref(np.argmin), (
            case("default", args(arr(3, 4, domain=lat))),
            case("axis1", args(arr(3, 4, domain=lat)), axis=1),
        ), NUMERIC, False, ()),
        OpSpec("cumsum", r.cumsum, _cumsum_ref, (
            case("axis0", args(arr(3, 4))),
            case("axis1", args(arr(3, 4), 1)),
            case("exclusive", args(arr(3, 4)), exclusive=True),
            case("reverse", args(arr(3, 4), 1), reverse=True),
            case("both", args(arr(5)), exclusive=True, reverse=True),
        ), NUMERIC, torch=lambda T, x, axis=0, **kw: None if kw else T.cumsum(x, axis)),
    ]


def _matmul_ref(a: np.ndarray, b: np.ndarray, transpose_a: bool = False,
                transpose_b: bool = False) -> np.ndarray:
    return np.matmul(np.swapaxes(a, -1, -2) if transpose_a else a,
                     np.swapaxes(b, -1, -2) if transpose_b else b)


def _norm_ref(x: np.ndarray, ord: Any = "euclidean", axis: Any = None,
              keepdims: bool = False) -> np.ndarray:
    ax = _axis(axis)
    if ord == 1:
        return np.sum(np.abs(x), ax, keepdims=keepdims)
    if ord == np.inf:
        return np.max(np.abs(x), ax, keepdims=keepdims)
    return np.sqrt(np.sum(np.square(x), ax, keepdims=keepdims))


def _clip_norm_ref(t: np.ndarray, clip: float, axes: Any = None) -> np.ndarray:
    n = np.sqrt(np.sum(np.square(t), _axis(axes), keepdims=True))
    return t * (clip / np.maximum(n, clip)).astype(t.dtype)


def _global_norm_ref(ts: list[np.ndarray]) -> np.ndarray:
    return np.sqrt(sum(np.sum(np.square(t)) for t in ts))


def _clip_global_ref(ts: list[np.ndarray], clip: float) -> tuple[list[np.ndarray], Any]:
    gn = _global_norm_ref(ts)
    return [t * (clip / np.maximum(gn, clip)) for t in ts], gn


def _linalg() -> list[OpSpec]:
    mm = {"tol": {F32: (1e-5, 1e-5)}}
    return [
        OpSpec("matmul", la.matmul, _matmul_ref, (
            case("matrix", args(arr(3, 4), arr(4, 5))),
            case("batched", args(arr(2, 3, 4), arr(4, 5))),
            case("broadcast_batch", args(arr(2, 1, 3, 4), arr(3, 4, 2))),
            case("vector_matrix", args(arr(4), arr(4, 5))),
            case("matrix_vector", args(arr(3, 4), arr(4))),
            case("transpose_a", args(arr(4, 3), arr(4, 5)), transpose_a=True),
            case("transpose_b", args(arr(2, 3, 4), arr(2, 5, 4)), transpose_b=True),
            case("empty", args(arr(0, 4), arr(4, 3))),
            case("inner_zero", args(arr(3, 0), arr(0, 2))),
        ), NUMERIC + (F16,), True, (0, 1),
            lambda T, a, b, **kw: None if kw else T.matmul(a, b), **mm),
        OpSpec("einsum", la.einsum, np.einsum, (
            case("matmul", args("ij,jk->ik", arr(3, 4), arr(4, 2))),
            case("batch", args("bij,bjk->bik", arr(2, 3, 4), arr(2, 4, 2))),
            case("dot", args("i,i->", arr(5), arr(5))),
            case("transpose", args("ij->ji", arr(2, 3))),
            case("outer", args("i, j -> ij", arr(2), arr(3))),
        ), FLOATS + (I32,), True, (1,), lambda T, eq, *xs: T.einsum(eq, *xs), **mm),
        OpSpec("tensordot", la.tensordot, lambda a, b, axes: np.tensordot(a, b, axes), (
            case("one", args(arr(3, 4), arr(4, 5), 1)),
            case("two", args(arr(2, 3, 4), arr(3, 4, 5), [[1, 2], [0, 1]])),
            case("outer", args(arr(2), arr(3), 0)),
            case("negative_axes", args(arr(3, 4), arr(2, 4), [[-1], [-1]])),
            case("pair_of_ints", args(arr(3, 4), arr(5, 4), [1, 1])),  # TF's and numpy's
        ), FLOATS + (I32,), True, (0, 1), lambda T, a, b, axes: T.tensordot(
            a, b, [[axes[0]], [axes[1]]] if isinstance(axes, list) and isinstance(
                axes[0], int) else axes), **mm),
        OpSpec("norm", la.norm, _norm_ref, (
            case("euclidean", args(arr(3, 4))),
            case("l1_axis", args(arr(3, 4)), ord=1, axis=0),
            case("inf_keepdims", args(arr(3, 4)), ord=np.inf, axis=-1, keepdims=True),
            case("fro_axes", args(arr(2, 3, 4)), ord="fro", axis=[1, 2]),
        ), FLOATS),
        OpSpec("clip_by_norm", la.clip_by_norm, _clip_norm_ref, (
            case("clipped", args(arr(3, 4), 1.0)),
            case("unclipped", args(arr(3), 100.0)),
            case("axes", args(arr(3, 4), 1.5, [1])),
        ), FLOATS),
        OpSpec("global_norm", la.global_norm, _global_norm_ref, (
            case("two", args(lst(arr(3, 4), arr(5)))),
            case("one", args(lst(arr(2, 2)))),
        ), FLOATS),
        OpSpec("clip_by_global_norm", la.clip_by_global_norm, _clip_global_ref, (
            case("clipped", args(lst(arr(3, 4), arr(5)), 1.0)),
            case("unclipped", args(lst(arr(2)), 50.0)),
        ), FLOATS),
    ]


def specs() -> list[OpSpec]:
    return _reductions() + _linalg()

