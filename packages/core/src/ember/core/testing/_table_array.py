"""Specs for the array family: shapes, joining, indexing, scatter, sorting, creation."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._ops import array as a
from .._ops import creation as c
from .._ops.creation import constant, convert_to_tensor
from ._spec import (
    BOOL,
    F32,
    F64,
    FLOATS,
    I32,
    I64,
    NUMERIC,
    OpSpec,
    args,
    arr,
    case,
    lst,
    raw,
    sample,
)

_ALL = NUMERIC + (BOOL,)
_NF = (F32, I32, BOOL)  # pure data movement: one float, one int, bool is enough


def _i(*v: Any) -> Any:
    return np.array(v, dtype=np.int32)


def _add_at(x: np.ndarray, key: Any, u: Any) -> np.ndarray:
    out = x.copy()
    np.add.at(out, key, u)
    return out


def _set_at(x: np.ndarray, key: Any, u: Any) -> np.ndarray:
    out = x.copy()
    out[key] = u
    return out


def _nd(idx: np.ndarray) -> tuple[Any, ...]:
    return tuple(idx[..., i] for i in range(idx.shape[-1]))


def _mask(*shape: int) -> Any:
    return lambda rng, dt: sample(rng, shape, BOOL)


def _split_ref(x: np.ndarray, n: Any, axis: int = 0) -> list[np.ndarray]:
    if isinstance(n, int):
        return np.split(x, n, axis=axis)
    sizes = [x.shape[axis] - sum(s for s in n if s != -1) if s == -1 else s for s in n]
    return np.split(x, np.cumsum(sizes)[:-1], axis=axis)


def _pad_ref(x: np.ndarray, p: Any, mode: str = "CONSTANT", constant_values: Any = 0) -> Any:
    if mode == "CONSTANT":
        return np.pad(x, p, constant_values=constant_values)
    return np.pad(x, p, mode=mode.lower())


def _gather_ref(p: np.ndarray, idx: np.ndarray, axis: Any = None, batch_dims: int = 0) -> Any:
    if batch_dims:
        return np.stack([np.take(p[b], idx[b], axis=0) for b in range(p.shape[0])])
    return np.take(p, idx, axis=axis or 0)


def _argsort_ref(x: np.ndarray, axis: int = -1, direction: str = "ASCENDING",
                 stable: bool = False) -> np.ndarray:
    if direction == "DESCENDING":  # stable descending: equal keys keep their order
        n = x.shape[axis]
        return (n - 1 - np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)
                ).astype(np.int32)
    return np.argsort(x, axis=axis, kind="stable").astype(np.int32)


def _sort_ref(x: np.ndarray, axis: int = -1, direction: str = "ASCENDING") -> np.ndarray:
    return np.take_along_axis(x, _argsort_ref(x, axis, direction), axis)


def _top_k_ref(x: np.ndarray, k: int = 1) -> tuple[np.ndarray, np.ndarray]:
    idx = _argsort_ref(x, -1, "DESCENDING")[..., :k]
    return np.take_along_axis(x, idx, -1), idx


def _one_hot_ref(i: np.ndarray, depth: int, on_value: Any = 1, off_value: Any = 0,
                 axis: int = -1, dtype: Any = np.float32) -> np.ndarray:
    out = np.where(i[..., None] == np.arange(depth), on_value, off_value).astype(dtype)
    return np.moveaxis(out, -1, axis)


def _shapes() -> list[OpSpec]:
    return [
        OpSpec("reshape", a.reshape, np.reshape, (
            case("merge", args(arr(2, 3, 4), (6, 4))),
            case("infer", args(arr(2, 3), (-1,))),
            case("scalar", args(arr(), (1, 1))),
            case("empty", args(arr(0, 3), (3, 0))),
            case("same", args(arr(2, 3), [2, 3])),
        ), _ALL, torch=lambda T, x, s: T.reshape(x, tuple(s))),
        OpSpec("transpose", a.transpose, np.transpose, (
            case("reverse", args(arr(2, 3, 4))),
            case("perm", args(arr(2, 3, 4), (1, 0, 2))),
            case("vector", args(arr(4))),
            case("empty", args(arr(0, 3))),
        ), _NF + (F64,)),
        OpSpec("broadcast_to", a.broadcast_to, np.broadcast_to, (
            case("expand", args(arr(3, 1), (2, 3, 4))),
            case("scalar", args(arr(), (2, 2))),
            case("empty", args(arr(1, 3), (0, 3))),
        ), _NF + (F64,), torch=lambda T, x, s: T.broadcast_to(x, s)),
        OpSpec("expand_dims", a.expand_dims, np.expand_dims, (
            case("front", args(arr(3, 4), 0)),
            case("back", args(arr(3, 4), -1)),
            case("scalar", args(arr(), 0)),
        ), _NF + (F64,), torch=lambda T, x, ax: T.unsqueeze(x, ax)),
        OpSpec("squeeze", a.squeeze, lambda x, axis=None: np.squeeze(x, axis), (
            case("all", args(arr(1, 3, 1))),
            case("one", args(arr(1, 3, 1), 2)),
            case("none", args(arr(2, 3))),
        ), _NF + (F64,)),
        OpSpec("shape", a.shape, lambda x: np.array(x.shape, np.int32),
               (case("matrix", args(arr(2, 3))), case("scalar", args(arr()))), _NF, False, ()),
        OpSpec("rank", a.rank, lambda x: np.array(x.ndim, np.int32),
               (case("matrix", args(arr(2, 3))), case("scalar", args(arr()))), _NF, False, ()),
        OpSpec("size", a.size, lambda x: np.array(x.size, np.int32),
               (case("matrix", args(arr(2, 3))), case("empty", args(arr(0, 3)))), _NF, False, ()),
        OpSpec("tile", a.tile, np.tile, (
            case("rows", args(arr(2, 3), (2, 1))),
            case("both", args(arr(2, 3), [2, 3])),
        ), _NF + (F64,), torch=lambda T, x, mlt: T.tile(x, tuple(mlt))),
        OpSpec("repeat", a.repeat, lambda x, r, axis=None: np.repeat(x, r, axis), (
            case("flat", args(arr(2, 3), 2)),
            case("rows", args(arr(2, 3), 3), axis=0),
            case("per_column", args(arr(2, 3), [1, 0, 2]), axis=1),
            case("last", args(arr(2, 3), [2, 1, 1]), axis=-1),
        ), _NF + (F64, I32), torch=lambda T, x, r, axis=None: T.repeat_interleave(
            x, T.tensor(r) if isinstance(r, list) else r, dim=axis)),
        OpSpec("pad", a.pad, _pad_ref, (
            case("constant", args(arr(2, 3), ((1, 0), (2, 1)))),
            case("value", args(arr(2, 3), [[0, 1], [1, 1]]), constant_values=7),
            case("reflect", args(arr(3, 4), ((1, 2), (2, 3))), mode="REFLECT"),
            case("symmetric", args(arr(3, 4), ((2, 3), (1, 0))), mode="SYMMETRIC"),
        ), (F32, F64, I32)),
        OpSpec("reverse", a.reverse, lambda x, axis: np.flip(x, axis), (
            case("rows", args(arr(3, 4), [0])),
            case("both", args(arr(3, 4), [0, 1])),
            case("last", args(arr(2, 3, 4), -1)),
        ), _NF + (F64,), torch=lambda T, x, ax: T.flip(x, [ax] if isinstance(ax, int) else ax)),
        OpSpec("roll", a.roll, lambda x, shift, axis: np.roll(x, shift, axis), (
            case("one", args(arr(5), 2, 0)),
            case("negative", args(arr(3, 4), -1, 1)),
            case("two_axes", args(arr(2, 3, 4), [1, -5], [0, 2])),
            case("same_axis_twice", args(arr(3, 4), [1, 2], [1, -1])),
            case("whole_turn", args(arr(3, 4), 3, 0)),
        ), _NF + (F64, I32), torch=lambda T, x, sh, ax: T.roll(x, sh, ax)),
    ]


def _joins() -> list[OpSpec]:
    return [
        OpSpec("concat", a.concat, lambda vs, axis: np.concatenate(vs, axis), (
            case("rows", args(lst(arr(2, 3), arr(4, 3)), 0)),
            case("cols", args(lst(arr(2, 3), arr(2, 1), arr(2, 2)), -1)),
            case("single", args(lst(arr(2, 3)), 1)),
            case("empty", args(lst(arr(0, 3), arr(2, 3)), 0)),
        ), _ALL, True, (0,), lambda T, vs, ax: T.cat(vs, ax)),
        OpSpec("split", a.split, _split_ref, (
            case("equal", args(arr(6, 4), 3)),
            case("sizes", args(arr(3, 5), [1, -1, 2], 1)),
        ), _NF + (F64,)),
        OpSpec("stack", a.stack, lambda vs, axis=0: np.stack(vs, axis), (
            case("front", args(lst(arr(2, 3), arr(2, 3)))),
            case("back", args(lst(arr(2, 3), arr(2, 3), arr(2, 3)), -1)),
            case("scalars", args(lst(arr(), arr()))),
        ), _NF + (F64,), True, (0,), lambda T, vs, ax=0: T.stack(vs, ax)),
        OpSpec("unstack", a.unstack, lambda x, num=None, axis=0: list(np.moveaxis(x, axis, 0)), (
            case("rows", args(arr(3, 2))),
            case("cols", args(arr(3, 2)), axis=1),
            case("empty", args(arr(0, 2))),
        ), _NF + (F64,)),
        OpSpec("meshgrid", a.meshgrid, np.meshgrid, (
            case("xy", args(arr(3), arr(4))),
            case("ij", args(arr(3), arr(4), arr(2)), indexing="ij"),
        ), FLOATS + (I32,), True, (0, 1)),
    ]


def _indexing() -> list[OpSpec]:
    def key(*parts: Any) -> Any:
        return lambda rng, dt: tuple(p(rng, dt) if callable(p) else p for p in parts)

    s = slice
    return [
        OpSpec("getitem", a.getitem, lambda x, k: x[k], (
            case("basic", args(arr(4, 5), key(s(1, None), s(None, None, 2)))),
            case("int", args(arr(4, 5), 2)),
            case("negative_step", args(arr(4, 5), key(s(None, None, -2), -1))),
            case("newaxis", args(arr(2, 3, 4), key(Ellipsis, None, 1))),
            case("int_array", args(arr(4, 5), _i(3, 0, 3))),
            case("int_array_2d", args(arr(4, 5), key(s(1, 3), _i(4, 0)))),
            case("mask", args(arr(3, 4), _mask(3, 4))),
            case("row_mask", args(arr(3, 4), _mask(3))),
            case("empty", args(arr(4, 5), key(s(2, 2)))),
        ), _ALL, True, (0,), _getitem_torch),
        OpSpec("slice", a.slice, lambda x, b, n: x[tuple(
            s(i, None if k == -1 else i + k) for i, k in zip(b, n))], (
            case("block", args(arr(4, 5), [1, 2], [2, -1])),
            case("all", args(arr(3, 3), [0, 0], [-1, -1])),
        ), _NF + (F64,)),
        OpSpec("index_add", a.index_add, _add_at, (
            case("duplicates", args(arr(5, 3), _i(1, 3, 1), arr(3, 3))),
            case("basic", args(arr(4, 3), key(s(1, 3)), arr(2, 3))),
            case("broadcast", args(arr(4, 3), 2, arr(3))),
        ), NUMERIC, True, (0, 2)),
        OpSpec("index_update", a.index_update, _set_at, (
            case("rows", args(arr(5, 3), _i(4, 0), arr(2, 3))),
            case("basic", args(arr(4, 3), key(s(None), 1), arr(4))),
            case("scalar", args(arr(4, 3), key(s(1, 3)), 0)),
        ), NUMERIC + (BOOL,), True, (0, 2)),
        OpSpec("gather", a.gather, _gather_ref, (
            case("rows", args(arr(5, 3), _i(4, 0, 4))),
            case("cols", args(arr(5, 3), _i(2, 0)), axis=1),
            case("index_matrix", args(arr(5, 3), np.array([[1, 2], [0, 4]]))),
            case("batch", args(arr(2, 4, 3), np.array([[3, 0], [1, 1]])), axis=1, batch_dims=1),
            case("empty", args(arr(5, 3), _i())),
        ), _NF + (F64,), True, (0,)),
        OpSpec("gather_nd", a.gather_nd, lambda p, i: p[_nd(i)] if i.shape[-1] else
               np.broadcast_to(p, i.shape[:-1] + p.shape), (
            case("elements", args(arr(3, 4), np.array([[0, 1], [2, 3], [0, 1]]))),
            case("rows", args(arr(3, 4), np.array([[1], [0]]))),
            case("depth 0: all of params per index row",
                 args(arr(3, 2), np.zeros((2, 0), np.int64))),
        ), _NF + (F64,), True, (0,)),
        OpSpec("scatter_nd", c.scatter_nd,
               lambda i, u, shp: _add_at(np.zeros(shp, u.dtype), _nd(i), u), (
                   case("rows", args(np.array([[0], [2], [0]]), arr(3, 4), [4, 4])),
                   case("elements", args(np.array([[0, 1], [1, 1]]), arr(2), (2, 3))),
               ), NUMERIC, True, (1,)),
        OpSpec("tensor_scatter_nd_update", a.tensor_scatter_nd_update,
               lambda x, i, u: _set_at(x, _nd(i), u), (
                   case("rows", args(arr(4, 3), np.array([[1], [3]]), arr(2, 3))),
                   case("elements", args(arr(4, 3), np.array([[0, 2]]), arr(1))),
               ), NUMERIC + (BOOL,), True, (0, 2)),
        OpSpec("tensor_scatter_nd_add", a.tensor_scatter_nd_add,
               lambda x, i, u: _add_at(x, _nd(i), u), (
                   case("duplicates", args(arr(4, 3), np.array([[1], [3], [1]]), arr(3, 3))),
               ), NUMERIC, True, (0, 2)),
        OpSpec("tensor_scatter_nd_sub", a.tensor_scatter_nd_sub,
               lambda x, i, u: _add_at(x, _nd(i), -u), (
                   case("duplicates", args(arr(4, 3), np.array([[1], [3], [1]]), arr(3, 3))),
                   case("elements", args(arr(4, 3), np.array([[0, 2], [3, 1]]), arr(2))),
               ), NUMERIC, True, (0, 2)),
        OpSpec("boolean_mask", a.boolean_mask,
               lambda x, mk, axis=0: x[(s(None),) * axis + (mk,)], (
                   case("rows", args(arr(3, 4), _mask(3))),
                   case("full", args(arr(3, 4), _mask(3, 4))),
                   case("axis1", args(arr(2, 4, 3), _mask(4)), axis=1),
               ), _NF + (F64,), True, (0,)),
        OpSpec("take_along_axis", a.take_along_axis, np.take_along_axis, (
            case("last", args(arr(3, 4), np.array([[0, 3], [1, 1], [2, 0]]), 1)),
            case("first", args(arr(3, 4), np.array([[2, 0, 1, 1]]), 0)),
        ), _NF + (F64,), True, (0,), lambda T, x, i, ax: T.take_along_dim(x, i, ax)),
    ]


def _sorting() -> list[OpSpec]:
    g = "grid"  # whole numbers: ties, so the stable order is checked too
    return [
        OpSpec("argsort", a.argsort, _argsort_ref, (
            case("ascending", args(arr(3, 6, domain=g)), stable=True),
            case("descending", args(arr(3, 6, domain=g)), direction="DESCENDING"),
            case("axis0", args(arr(5, 2, domain=g), 0), stable=True),
        ), NUMERIC, False, ()),
        OpSpec("sort", a.sort, _sort_ref, (
            case("ascending", args(arr(3, 6))),
            case("descending", args(arr(3, 6, domain=g)), direction="DESCENDING"),
            case("axis0", args(arr(5, 2), 0)),
        ), NUMERIC, True, (0,), lambda T, x, axis=-1, direction="ASCENDING":
            T.sort(x, axis, descending=direction == "DESCENDING").values),
        OpSpec("top_k", a.top_k, _top_k_ref, (
            case("k2", args(arr(3, 5, domain=g)), k=2),
            case("vector", args(arr(6)), k=3),
            case("k0", args(arr(4)), k=0),
        ), NUMERIC, True, (0,)),
        OpSpec("one_hot", a.one_hot, _one_hot_ref, (
            case("vector", args(_i(0, 2, -1, 5), 3)),
            case("matrix_axis0", args(np.array([[0, 1], [2, 2]]), 3), axis=0),
            case("values", args(_i(1, 0), 2), on_value=5.0, off_value=-1.0, dtype=F64),
            case("int_dtype", args(_i(1, 0), 4), dtype=I32),
        ), (I32,), False, ()),
    ]


def _constant_ref(v: Any, dtype: Any = None, shape: Any = None) -> np.ndarray:
    a = np.asarray(v, dtype=dtype)
    if shape is None:
        return a
    return a.reshape(shape) if a.ndim and a.size == np.prod(shape) else np.broadcast_to(a, shape)


def _getitem_torch(T: Any, x: Any, k: Any) -> Any:
    parts = k if isinstance(k, tuple) else (k,)
    if any(isinstance(p, slice) and (p.step or 1) < 0 for p in parts):
        return None  # PyTorch has no negative steps
    return x[k]


def _range_py(*v: Any) -> np.ndarray:
    return np.arange(*v).astype(F32 if any(isinstance(x, float) for x in v) else I32)


def _creation() -> list[OpSpec]:
    def dt(rng: Any, d: Any) -> Any:
        return d

    def scalar(v: float) -> Any:
        return lambda rng, d: np.dtype(d).type(v)

    return [
        OpSpec("zeros", c.zeros, np.zeros, (
            case("matrix", args((2, 3), dt)), case("scalar", args((), dt)),
            case("empty", args([0, 2], dt))), _ALL, False, ()),
        OpSpec("ones", c.ones, np.ones, (
            case("matrix", args((2, 3), dt)), case("int_shape", args(4, dt))), _ALL, False, ()),
        OpSpec("zeros_like", c.zeros_like, np.zeros_like, (
            case("matrix", args(arr(2, 3))), case("float64", args(arr(3)), dtype=F64)),
            _ALL, False, ()),
        OpSpec("ones_like", c.ones_like, np.ones_like, (
            case("matrix", args(arr(2, 3))), case("int", args(arr(3)), dtype=I64)),
            _ALL, False, ()),
        OpSpec("fill", c.fill, lambda s, v: np.full(s, v), (
            case("matrix", args((2, 3), scalar(3))), case("scalar", args((), scalar(1)))),
            _ALL, False, ()),
        OpSpec("range", c.range, lambda start, limit=None, delta=1, dtype=None: np.arange(
            *((0, start) if limit is None else (start, limit)), delta, dtype=dtype), (
            case("count", args(5, None, 1, dt)),
            case("step", args(scalar(1), scalar(10), scalar(3), dt)),
            case("down", args(scalar(5), scalar(0), scalar(-2), dt)),
            case("empty", args(3, 3, 1, dt)),
        ), (F32, F64, I32, I64), False, ()),
        OpSpec("range.python", c.range, _range_py, (
            case("int", args(1, 7)), case("float", args(0.0, 1.0, 0.25)),
            case("one_arg", args(4))), (F32,), False, ()),
        OpSpec("linspace", c.linspace, lambda a, b, n, dtype: np.linspace(a, b, n, dtype=dtype), (
            case("five", args(0, 1, 5, dt)), case("one", args(2, 3, 1, dt)),
            case("zero", args(0, 1, 0, dt))), FLOATS, False, ()),
        OpSpec("eye", c.eye, lambda n, m=None, batch=None, dtype=F32: np.broadcast_to(
            np.eye(n, m, dtype=dtype), tuple(batch or ()) + (n, m or n)), (
            case("square", args(3, None, None, dt)), case("rect", args(2, 4, None, dt)),
            case("batch", args(2, 3, [2], dt))), _ALL, False, ()),
        OpSpec("constant", constant, _constant_ref, (
            case("numpy", args(raw(arr(2, 3)))),
            case("tensor", args(arr(2, 3))),
            case("cast", args(raw(arr(2, 3))), dtype=F64),
            case("broadcast", args(raw(arr())), shape=(2, 2)),
            case("reshape", args(arr(6)), shape=(2, 3)),
        ), _ALL, False, ()),
        OpSpec("convert_to_tensor", convert_to_tensor, np.asarray, (
            case("numpy", args(raw(arr(2, 3)))), case("scalar", args(raw(arr()))),
            case("tensor", args(arr(2, 3))), case("empty", args(raw(arr(0, 4))))),
            _ALL, False, ()),
    ]


def specs() -> list[OpSpec]:
    return _shapes() + _joins() + _indexing() + _sorting() + _creation()

