"""Op specs of ``em.math``'s own functions (TensorFlow's ``tf.math`` names written from
ember ops; the names that are ember's own functions are checked under those)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import math as tm
from ._spec import FLOATS, Case, OpSpec, sample

_IDS = np.array([2, 0, 2, -1, 1, 2, 0], np.int64)  # 3 segments; -1 drops its row
_SORTED = np.array([0, 0, 1, 3, 3, 3], np.int64)   # segment 2 has no row


def _rows(n: int, *rest: int) -> Any:
    return lambda rng, dt: sample(rng, (n, *rest), dt, "any")


def _segment_ref(kind: str, lowest: bool = True) -> Any:
    def ref(data: np.ndarray, ids: np.ndarray, num: Any = None) -> np.ndarray:
        depth = np.asarray(ids).ndim
        ids = np.asarray(ids).reshape(-1)
        rows = data.reshape((ids.size,) + data.shape[depth:])
        count = int(num) if num is not None else int(ids.max()) + 1
        info = np.finfo(data.dtype)
        fill = {"max": info.min, "min": info.max}.get(kind, 0.0) if lowest else 0.0
        out = np.full((count,) + rows.shape[1:], fill, data.dtype)
        for s in range(count):
            part = rows[ids == s]
            if len(part):
                out[s] = {"sum": part.sum(0), "mean": part.mean(0),
                          "sqrt_n": part.sum(0) / np.sqrt(len(part)),
                          "max": part.max(0), "min": part.min(0)}[kind]
        return out
    return ref


def _torch_segment(reduce: str) -> Any:
    def run(T: Any, data: Any, ids: Any, num: int) -> Any:
        keep = ids >= 0
        rows, idx = data[keep], ids[keep]
        if reduce == "sum":
            return T.zeros((num,) + tuple(data.shape[1:]), dtype=data.dtype).index_add(
                0, idx, rows)
        fill = T.finfo(data.dtype).min if reduce == "amax" else T.finfo(data.dtype).max
        base = T.full((num,) + tuple(data.shape[1:]), fill, dtype=data.dtype)
        index = idx.reshape((-1,) + (1,) * (data.ndim - 1)).expand_as(rows)
        return base.scatter_reduce(0, index, rows, reduce, include_self=False)
    return run


def _segments() -> list[OpSpec]:
    cases = (
        Case("rows", lambda rng, dt: [_rows(7, 3)(rng, dt), _IDS, 3]),
        Case("vector", lambda rng, dt: [_rows(7)(rng, dt), _IDS, 3]),
        Case("ids_2d", lambda rng, dt: [_rows(2, 3, 2)(rng, dt),
                                        np.array([[1, 0, 1], [-1, 1, 0]], np.int64), 2]),
        Case("no_rows", lambda rng, dt: [np.zeros((0, 2), dt), np.zeros((0,), np.int64), 2]),
    )
    out = []
    for kind, torch in (("sum", _torch_segment("sum")), ("mean", None), ("sqrt_n", None),
                        ("max", _torch_segment("amax")), ("min", _torch_segment("amin"))):
        fn = getattr(tm, f"unsorted_segment_{kind}")
        out.append(OpSpec(f"math.unsorted_segment_{kind}", fn, _segment_ref(kind), cases,
                          FLOATS, True, (0,),
                          None if torch is None else
                          (lambda T, d, i, n, t=torch: t(T, d, i, n) if i.ndim == 1 else None)))
    sorted_case = (Case("sorted", lambda rng, dt: [_rows(6, 2)(rng, dt), _SORTED]),)
    for kind in ("sum", "mean", "max", "min"):
        out.append(OpSpec(f"math.segment_{kind}", getattr(tm, f"segment_{kind}"),
                          _segment_ref(kind, lowest=False), sorted_case, FLOATS, True,
                          (0,)))
    return out


def _with_zeros(rng: np.random.Generator, dt: np.dtype) -> list[Any]:
    x = sample(rng, (3, 4), dt, "positive")
    y = sample(rng, (3, 4), dt, "positive")
    x[0, :2] = 0
    y[1, 1:3] = 0
    return [x, y]


def _x_zeros(rng: np.random.Generator, dt: np.dtype) -> list[Any]:
    x, y = _safe(rng, dt)
    x[0, :2] = 0
    return [x, y]


def _xlogy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x == 0, 0, x * np.log(np.where(x == 0, 1, y))).astype(x.dtype)


def _safe(rng: np.random.Generator, dt: np.dtype) -> list[Any]:
    return [sample(rng, (3, 4), dt, "positive"), sample(rng, (3, 4), dt, "positive")]


def _pairs() -> list[OpSpec]:
    zeros = (Case("zeros", _with_zeros),)
    smooth = (Case("smooth", _safe),)
    return [
        OpSpec("math.divide_no_nan", tm.divide_no_nan,
               lambda x, y: np.where(y == 0, 0, x / np.where(y == 0, 1, y)).astype(x.dtype),
               zeros + smooth, FLOATS, True, (0,)),
        OpSpec("math.multiply_no_nan", tm.multiply_no_nan,
               lambda x, y: np.where(y == 0, 0, x * y).astype(x.dtype),
               zeros + smooth, FLOATS, True, (0, 1), lambda T, x, y: x * y),
        OpSpec("math.xlogy", tm.xlogy, _xlogy, (Case("x_zeros", _x_zeros),) + smooth, FLOATS, True, (1,),
               lambda T, x, y: T.xlogy(x, y)),
        OpSpec("math.xlog1py", tm.xlog1py,
               lambda x, y: np.where(x == 0, 0, x * np.log1p(y)).astype(x.dtype),
               zeros + smooth, FLOATS, True, (1,), lambda T, x, y: T.special.xlog1py(x, y)),
        OpSpec("math.xdivy", tm.xdivy,
               lambda x, y: np.where(x == 0, 0, x / np.where(y == 0, 1, y)).astype(x.dtype),
               smooth, FLOATS, True, (0, 1)),
        OpSpec("math.log_sigmoid", tm.log_sigmoid,
               lambda x: -np.logaddexp(0, -x).astype(x.dtype),
               (Case("wide", lambda rng, dt: [sample(rng, (4, 5), dt, "any") * 10]),),
               FLOATS, True, (0,), lambda T, x: T.nn.functional.logsigmoid(x)),
        OpSpec("math.softsign", tm.softsign, lambda x: x / (1 + np.abs(x)),
               (Case("real", lambda rng, dt: [sample(rng, (4, 5), dt, "real")]),),
               FLOATS, True, (0,), lambda T, x: T.nn.functional.softsign(x)),
        OpSpec("math.reduce_euclidean_norm", tm.reduce_euclidean_norm,
               lambda x, axis=None, keepdims=False: np.sqrt(
                   np.sum(x * x, axis=axis, keepdims=keepdims)),
               (Case("all", lambda rng, dt: [sample(rng, (3, 4), dt, "real")]),
                Case("axis", lambda rng, dt: [sample(rng, (3, 4), dt, "real")],
                     {"axis": 1, "keepdims": True})),
               FLOATS, True, (0,),
               lambda T, x, axis=None, keepdims=False: T.linalg.vector_norm(
                   x, dim=axis, keepdim=keepdims)),
        OpSpec("math.bincount", tm.bincount,
               lambda a, weights=None, minlength=None: np.bincount(
                   a.reshape(-1), minlength=minlength or 0).astype(np.int32),
               (Case("counts", lambda rng, dt: [rng.integers(0, 6, (4, 5)).astype(dt)]),
                Case("minlength", lambda rng, dt: [rng.integers(0, 3, (7,)).astype(dt)],
                     {"minlength": 5}),
                Case("empty", lambda rng, dt: [np.zeros((0,), dt)])),
               (np.dtype(np.int32), np.dtype(np.int64)), False, ()),
        OpSpec("math.confusion_matrix", tm.confusion_matrix, _confusion,
               (Case("inferred", lambda rng, dt: [rng.integers(0, 4, (9,)).astype(dt),
                                                  rng.integers(0, 5, (9,)).astype(dt)]),
                Case("num_classes", lambda rng, dt: [rng.integers(0, 3, (7,)).astype(dt),
                                                     rng.integers(0, 3, (7,)).astype(dt)],
                     {"num_classes": 6}),
                Case("weights", lambda rng, dt: [
                    rng.integers(0, 3, (8,)).astype(dt), rng.integers(0, 3, (8,)).astype(dt)],
                    {"weights": np.arange(8, dtype=np.float32) / 4, "dtype": np.float32})),
               (np.dtype(np.int32), np.dtype(np.int64)), False, ()),
    ]


def _confusion(y: Any, p: Any, num_classes: Any = None, weights: Any = None,
               dtype: Any = np.int32) -> Any:
    n = int(max(y.max(), p.max())) + 1 if num_classes is None else num_classes
    out = np.zeros((n, n), dtype)
    np.add.at(out, (y, p), 1 if weights is None else weights.astype(dtype))
    return out


def specs() -> list[OpSpec]:
    return _segments() + _pairs()
