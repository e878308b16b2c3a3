"""The double's kernel-launch model: what one cupy 14 call launches on the device.

``kernels(qual, args, kwargs, out)`` is called after each ``xp`` call of the strict double
(and for the calls that do not go through ``xp``: operators in place, ``astype``, indexing,
``scatter_add``, ``erf``, ``ElementwiseKernel``) and its count added to
``backend.counters.launches``. It counts what a GPU's profiler lists per call: kernels, and
memsets and device-to-device copies (each a launch from the host, as a kernel is). Host
transfers are not launches: the double counts them in ``from_host`` and ``to_host``.

The rules follow cupy 14.2's code paths (``cupy/_core``): an element-wise ufunc is one
kernel and none for an empty result; views (reshape, transpose, basic slices) launch
nothing; ``zeros`` and ``fill(0)`` are a memset; reductions go to CUB (one kernel, two
for a full reduction beyond one tile) or cupy's own reduction kernel; a float matrix
product is one cuBLAS GEMM plus a split-K reduction kernel where cuBLAS splits ``k``
(``_splits_k``), and a batched product that broadcasts builds pointer arrays
(``cupy_mat_ptrs``) first; integer products are cupy's own kernels; advanced indexing
wraps its indices with ``cupy_prepare_array_indexing`` and gathers with ``cupy_take``.
They were calibrated against what an H200 ran for each case of the op table
(``/work/shared/gpu-runs/2026-11-27-h200-op-kernels.json``, see
``packages/core/tests/test_launch_counter.py``); the cuSOLVER routines are counted from
those measurements, as cupy cannot show their internals.

``names`` gives the launches by (cupy-like) name, with the host transfers cupy makes
inside a call (``DTOH``, ``HTOD``: not launches); ``recording()`` collects them per call,
for tests and for finding where a step's launches go.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterator
from typing import Any

import numpy as np

MEMSET = "Memset (Device)"
DTOD = "Memcpy DtoD"
DTOH = "Memcpy DtoH"  # a read-back cupy makes inside the call (it synchronizes)
HTOD = "Memcpy HtoD"  # an upload cupy makes inside the call
TRANSFERS = frozenset({DTOH, HTOD})  # host transfers: not launches

_recorders: list[list[tuple[str, list[str]]]] = []


def kernels(qual: str, args: Any, kwargs: Any, out: Any, owner: Any = None) -> int:
    """Launches (kernels, memsets, device copies) of ``cupy.<qual>(*args, **kwargs)``
    giving ``out``; ``owner`` is the array when ``qual`` is an ``ndarray`` method."""
    found = names(qual, args, kwargs, out, owner)
    if _recorders:
        for rec in _recorders:
            rec.append((qual if owner is None else "ndarray." + qual.rsplit(".", 1)[-1],
                        found))
    return sum(1 for n in found if n not in TRANSFERS)


@contextlib.contextmanager
def recording() -> Iterator[list[tuple[str, list[str]]]]:
    """Collect ``(qual, names)`` for each call counted inside the block."""
    rec: list[tuple[str, list[str]]] = []
    _recorders.append(rec)
    try:
        yield rec
    finally:
        _recorders.remove(rec)


def names(qual: str, args: Any, kwargs: Any, out: Any, owner: Any = None) -> list[str]:
    """What ``cupy.<qual>(*args, **kwargs)`` launches, by name, in order."""
    creation = qual in _CREATION
    args = tuple(_device(x, creation) for x in (
        args if isinstance(args, (tuple, list)) else (args,)))
    kwargs = {key: _device(v, creation) for key, v in (kwargs or {}).items()}
    if owner is not None:
        qual = "ndarray." + qual.rsplit(".", 1)[-1]
        args = (owner, *args)
    rule = _RULES.get(qual)
    if rule is not None:
        return rule(args, kwargs, out)
    base = qual.rsplit(".", 1)[-1]
    if qual.startswith("lib.stride_tricks.") and base in _RULES:  # arrays made there
        return _RULES[base](args, kwargs, out)
    if isinstance(getattr(np, qual, None), np.ufunc):
        return _ufunc(qual)(args, kwargs, out)
    if qual.startswith("linalg."):
        return _linalg(qual[len("linalg."):], args, kwargs, out)
    return _fresh_copies(args, kwargs, out)


# --- helpers ------------------------------------------------------------------------
_CREATION = frozenset({"array", "asarray", "asanyarray", "ascontiguousarray"})


class _Host:
    """A host array given to a creation function (uploaded: a transfer, not a launch)."""

    def __init__(self, a: np.ndarray) -> None:
        self.a = a


def _device(x: Any, creation: bool) -> Any:
    """The double's arrays as numpy arrays (device arrays); a numpy array given to a
    creation function is host data."""
    if hasattr(x, "_ns") and hasattr(x, "_a"):  # a StrictArray
        return x._a
    if type(x) is tuple or type(x) is list:
        return type(x)(_device(v, creation) for v in x)
    if creation and isinstance(x, np.ndarray):
        return _Host(x)
    return x


def _arrays(x: Any) -> list[np.ndarray]:
    if isinstance(x, np.ndarray):
        return [x]
    if isinstance(x, (tuple, list)):
        return [a for v in x for a in _arrays(v)]
    if isinstance(x, dict):
        return [a for v in x.values() for a in _arrays(v)]
    return []


def _shares(a: np.ndarray, others: list[np.ndarray]) -> bool:
    return any(np.may_share_memory(a, o) for o in others)


def _fresh_copies(args: Any, kwargs: Any, out: Any) -> list[str]:
    """The default: one copy kernel per non-empty result that is not a view of an input
    (views, and results that are not arrays, launch nothing)."""
    ins = _arrays(args) + _arrays(kwargs)
    return ["cupy_copy" for o in _arrays(out) if o.size and not _shares(o, ins)]


def _first(args: Any, kwargs: Any, key: str = "a") -> Any:
    return args[0] if args else kwargs.get(key)


def _ufunc(name: str) -> Any:
    def rule(args: Any, kwargs: Any, out: Any) -> list[str]:
        outs = _arrays(out)
        return ["cupy_" + name] if outs and outs[0].size else []
    return rule


def _one(name: str) -> Any:
    """One kernel when the result is not empty."""
    def rule(args: Any, kwargs: Any, out: Any) -> list[str]:
        outs = _arrays(out)
        return [name] if outs and outs[0].size else []
    return rule


def _none(args: Any, kwargs: Any, out: Any) -> list[str]:
    return []


# --- creation -------------------------------------------------------------------------
def _zeros(args: Any, kwargs: Any, out: Any) -> list[str]:
    o = _arrays(out)
    return [MEMSET] if o and o[0].nbytes else []


def _fill(args: Any, kwargs: Any, out: Any) -> list[str]:
    o = _arrays(out)
    return ["cupy_fill"] if o and o[0].size else []


def _full(args: Any, kwargs: Any, out: Any) -> list[str]:
    # cupy.full: empty + copyto(a, fill_value): an element-wise copy (cupy_copy)
    o = _arrays(out)
    return ["cupy_copy"] if o and o[0].size else []


def _creation(args: Any, kwargs: Any, out: Any) -> list[str]:
    """array/asarray/ascontiguousarray: host data is uploaded (a transfer, counted by
    the double as ``from_host`` for numpy arrays); a device array is returned as it is
    or copied (a kernel) when its dtype or layout must change."""
    src = _first(args, kwargs)
    if isinstance(src, _Host):
        return []
    if not isinstance(src, np.ndarray):
        return [HTOD] if _arrays(out) and _arrays(out)[0].size else []
    return _fresh_copies(args, kwargs, out)


def _arange(args: Any, kwargs: Any, out: Any) -> list[str]:
    o = _arrays(out)
    return ["cupy_arange"] if o and o[0].size else []


def _linspace(args: Any, kwargs: Any, out: Any) -> list[str]:
    o = _arrays(out)
    if not o or not o[0].size:
        return []
    # scalar start/stop: a float64 ramp kernel (or a fill for one point), then a cast
    head = ["cupy_linspace"] if o[0].size > 1 else ["cupy_fill"]
    return head + ["cupy_fill"] * (o[0].size > 1 and False) + ["cupy_copy"]


def _eye(args: Any, kwargs: Any, out: Any) -> list[str]:
    o = _arrays(out)
    if not o or not o[0].size:
        return []
    return [MEMSET, "cupy_fill"]  # zeros, then the diagonal's fill(1)


def _tri(args: Any, kwargs: Any, out: Any) -> list[str]:
    o = _arrays(out)
    return ["cupy_tri"] if o and o[0].size else []


def _tril(args: Any, kwargs: Any, out: Any) -> list[str]:
    o = _arrays(out)
    return ["cupy_tril"] if o and o[0].size else []


# --- copies and layout ----------------------------------------------------------------
def _copy(args: Any, kwargs: Any, out: Any) -> list[str]:
    o = _arrays(out)
    return ["cupy_copy"] if o and o[0].size else []


def _astype(args: Any, kwargs: Any, out: Any) -> list[str]:
    a = args[0]
    copy = kwargs.get("copy", args[4] if len(args) > 4 else True)
    o = _arrays(out)
    if not o or not o[0].size:
        return []
    if not copy and o[0] is a:
        return []
    return ["cupy_copy"]


def _copyto(args: Any, kwargs: Any, out: Any) -> list[str]:
    dst = _first(args, kwargs, "dst")
    src = args[1] if len(args) > 1 else kwargs.get("src")
    if not isinstance(dst, np.ndarray) or not dst.size:
        return []
    where = kwargs.get("where", args[3] if len(args) > 3 else None)
    if where is None and isinstance(src, np.ndarray) and src.ndim > 0 and _can_memcpy(
            dst, src):
        return [DTOD]
    return ["cupy_copy"]


def _can_memcpy(dst: np.ndarray, src: np.ndarray) -> bool:
    """cupy's ``_can_memcpy``: same dtype and size, both contiguous the same way."""
    if dst.dtype != src.dtype or dst.size != src.size:
        return False
    return bool((dst.flags.c_contiguous and src.flags.c_contiguous)
                or (dst.flags.f_contiguous and src.flags.f_contiguous))


def _concatenate(args: Any, kwargs: Any, out: Any) -> list[str]:
    arrays = [a for a in (args[0] if args else kwargs.get("arrays", ())) if
              isinstance(a, np.ndarray)]
    o = _arrays(out)
    if not o:
        return []
    if len(arrays) > 8 and all(a.dtype == o[0].dtype for a in arrays) \
            and o[0].nbytes < 2 * 1024 * 1024 * len(arrays):
        # one kernel reading a device array of the inputs' pointers (uploaded)
        return [HTOD, "cupy_concatenate"] if o[0].size else [HTOD]
    return ["cupy_copy" for a in arrays if a.size]


def _stack(args: Any, kwargs: Any, out: Any) -> list[str]:
    return _concatenate(args, kwargs, out)  # expand_dims views, then concatenate


def _tile(args: Any, kwargs: Any, out: Any) -> list[str]:
    o = _arrays(out)
    return ["cupy_copy"] if o and o[0].size else []


def _pad(args: Any, kwargs: Any, out: Any) -> list[str]:
    a = args[0]
    o = _arrays(out)
    if not o or not o[0].size:
        return []
    mode = kwargs.get("mode", args[2] if len(args) > 2 else "constant")
    width = np.broadcast_to(np.asarray(kwargs.get("pad_width", args[1] if len(args) > 1
                                                  else 0)), (a.ndim, 2))
    value = kwargs.get("constant_values", 0)
    copy = ["cupy_copy"] if a.size else []
    if mode == "constant" and np.ndim(value) == 0 and value == 0 and (
            a.ndim == 1 or a.size < 4e6):
        return [MEMSET] + copy  # _pad_simple: fill(0) of a new C array, then a copy
    sides = int(np.count_nonzero(width))
    return copy + ["cupy_fill"] * sides


# --- element-wise ---------------------------------------------------------------------
def _where(args: Any, kwargs: Any, out: Any) -> list[str]:
    if len(args) == 1:
        return _nonzero(args, kwargs, out)
    return _one("cupy_where")(args, kwargs, out)


def _clip(args: Any, kwargs: Any, out: Any) -> list[str]:
    return _one("cupy_clip")(args, kwargs, out)


def _elementwise_kernel(args: Any, kwargs: Any, out: Any) -> list[str]:
    shape = np.broadcast_shapes(*(np.shape(a) for a in args)) if args else ()
    return ["ElementwiseKernel"] if math.prod(shape) else []


def _erf(args: Any, kwargs: Any, out: Any) -> list[str]:
    return _one("cupyx_scipy_special_erf")(args, kwargs, out)


# --- reductions -----------------------------------------------------------------------
_CUB_ANY = frozenset("bBhHiIlLqQefdFD") - {"?"}
_CUB_SUM = frozenset("lLqQefdFD")  # sum/prod with dtype=None: no promotion in CUB


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    return tuple(sorted(int(a) % ndim for a in axis)) if ndim else ()


def _reduce_args(args: Any, kwargs: Any) -> tuple[np.ndarray, Any, Any, Any, bool]:
    a = args[0]
    rest = list(args[1:])
    axis = kwargs.get("axis", rest[0] if rest else None)
    dtype = kwargs.get("dtype", rest[1] if len(rest) > 1 else None)
    out = kwargs.get("out")
    keepdims = bool(kwargs.get("keepdims", False))
    return a, axis, dtype, out, keepdims


def _cub_tile(itemsize: int) -> int:
    """Items CUB's DeviceReduce takes in one tile (256 threads x 16 four-byte items):
    beyond it, a reduction is two kernels (per-block partials, then their reduction)."""
    return 256 * max(1, 64 // max(itemsize, 1))


def _reduction(name: str, kind: str) -> Any:
    """``kind``: "sum" (sum, prod: CUB without dtype promotion), "minmax", "arg"
    (argmax/argmin: CUB only for a full reduction), "plain" (cupy's kernel only),
    "mean" (CUB's sum, then a division)."""
    def rule(args: Any, kwargs: Any, out: Any) -> list[str]:
        a, axis, dtype, given, _keep = _reduce_args(args, kwargs)
        res = _arrays(out)
        if not isinstance(a, np.ndarray) or not res or not res[0].size:
            return []
        cub = _cub_route(a, axis, dtype, kind)
        if cub == "full":
            n = 1 if a.size <= _cub_tile(a.itemsize) else 2
            tail = ["cupy_copy"] if kind == "arg" else []  # the key cast to int64
            if given is not None:
                tail.append("cupy_copy")
            if kind == "mean":
                tail.append("cupy_true_divide")
            return ["cub::DeviceReduce"] * n + tail
        if cub == "segmented":
            if a.size == 0:
                return [MEMSET] if name == "sum" else ["cupy_fill"]
            tail = ["cupy_copy"] if given is not None else []
            if kind == "mean":
                tail.append("cupy_true_divide")
            return ["cub::DeviceSegmentedReduce"] + tail
        return ["cupy_" + name]
    return rule


def _cub_route(a: np.ndarray, axis: Any, dtype: Any, kind: str) -> str | None:
    if kind == "plain" or not (a.flags.c_contiguous or a.flags.f_contiguous):
        return None
    if kind == "arg" and dtype is not None:
        return None
    char = a.dtype.char
    if kind in ("sum", "mean") and dtype is None:
        ok = char in _CUB_SUM
    elif dtype is None or np.dtype(dtype) == a.dtype:
        ok = char in _CUB_ANY
    else:
        ok = False
    if not ok:
        return None
    red = _axes(axis, a.ndim)
    if len(red) == a.ndim:
        return "full"
    if kind == "arg" or a.size == 0 and False:
        return None
    contiguous = all(b - c == 1 for b, c in zip(red[1:], red))
    if not contiguous or not red:
        return None
    if a.flags.c_contiguous and red[-1] == a.ndim - 1:
        return "segmented"
    if not a.flags.c_contiguous and a.flags.f_contiguous and red[0] == 0:
        return "segmented"
    return None


def _ufunc_reduce(name: str) -> Any:
    base = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min"}.get(name)
    if base is None:
        return _one("cupy_" + name + "_reduce")
    return _reduction(base, "sum" if base in ("sum", "prod") else "minmax")


def _cumsum(args: Any, kwargs: Any, out: Any) -> list[str]:
    a, axis, dtype, given, _ = _reduce_args(args, kwargs)
    res = _arrays(out)
    if not res or not res[0].size:
        return []
    if axis is None:
        return ["cupy_copy", "cub::DeviceScan"]
    ax = int(axis) % a.ndim
    rolled = a.ndim > 1 and ax != a.ndim - 1 and a.shape[ax] > 1 and a.size // a.shape[ax] > 1
    # astype(order="C") copies; scanning along another axis than the last copies again
    return ["cupy_copy"] + ["cupy_copy"] * rolled + ["cupy_inclusive_batch_scan_kernel"]


def _scan_names(n: int) -> list[str]:
    """cupy's ``scan`` of ``n`` items (a cumulative sum in one block, or chunked)."""
    if n <= 512:
        return ["cupy_scan_naive"]
    return ["cupy_scan_blocks", "cupy_scan_naive", "cupy_add_scan_blocks"]


def _nonzero(args: Any, kwargs: Any, out: Any) -> list[str]:
    a = _first(args, kwargs)
    if not isinstance(a, np.ndarray) or a.size == 0:
        return []
    found = _arrays(out)
    count = found[0].size if found else 0
    head = [] if a.dtype == np.bool_ else ["cupy_not_equal"]
    return head + _scan_names(a.size) + [DTOH] + (["cupy_nonzero_kernel"] if count else [])


def _argsort(args: Any, kwargs: Any, out: Any) -> list[str]:
    res = _arrays(out)
    if not res or not res[0].size:
        return []
    # a contiguous copy, then CUB's segmented radix sort (three kernels at these sizes)
    return ["cupy_copy"] + ["cub::DeviceSegmentedRadixSort"] * 3


def _sort(args: Any, kwargs: Any, out: Any) -> list[str]:
    res = _arrays(out)
    if not res or not res[0].size:
        return []
    return ["cupy_copy"] + ["cub::DeviceSegmentedRadixSort"] * 3


# --- indexing -------------------------------------------------------------------------
def _index_parts(key: Any) -> list[Any]:
    return list(key) if type(key) is tuple else [key]


def _advanced(parts: list[Any]) -> list[np.ndarray]:
    return [p for p in parts if isinstance(p, np.ndarray) or isinstance(p, list)]


def _getitem(args: Any, kwargs: Any, out: Any) -> list[str]:
    a, key = args[0], args[1]
    parts = _index_parts(key)
    arrays = [np.asarray(p) for p in _advanced(parts)]
    if not arrays:
        return []  # a view
    res = _arrays(out)
    size = res[0].size if res else 0
    if len(arrays) == 1 and arrays[0].dtype == np.bool_:
        mask = arrays[0]
        if mask.size == 0:
            return []
        head = _scan_names(mask.size) + [DTOH]
        if mask.ndim != a.ndim:
            head = _scan_names(mask.size) + [DTOH] + _scan_names(a.size)
        return head + (["cupy_getitem_mask"] if size else [])
    if len(arrays) == 1:
        return ["cupy_take"] if size else []
    return _multiple_index(arrays, a) + (["cupy_take"] if size else [])


def _multiple_index(arrays: list[np.ndarray], a: np.ndarray) -> list[str]:
    """cupy's ``_prepare_multiple_array_indexing``: a zeroed int64 index (a memset), then
    one kernel per index array folding it in (boolean arrays become their nonzero())."""
    found: list[str] = []
    count = 0
    for p in arrays:
        if p.dtype == np.bool_:
            found += _nonzero((p,), {}, np.nonzero(p))
            count += p.ndim
        else:
            count += 1
    shape = np.broadcast_shapes(*(np.shape(p) if p.dtype != np.bool_ else
                                  (int(np.count_nonzero(p)),) for p in arrays))
    if math.prod(shape):
        found.append(MEMSET)
    found += ["cupy_prepare_array_indexing"] * count
    return found


def _setitem(args: Any, kwargs: Any, out: Any) -> list[str]:
    a, key, value = args[0], args[1], args[2]
    parts = _index_parts(key)
    arrays = [np.asarray(p) for p in _advanced(parts)]
    if not arrays:
        view = a[key]
        if not view.size:
            return []
        if not isinstance(value, np.ndarray):
            scalar = np.asarray(value)
            if scalar.size == 1 and scalar.reshape(()) == 0 and view.flags.c_contiguous:
                return [MEMSET]
            return ["cupy_fill"]
        v = value
        while v.ndim > 0 and v.shape[0] == 1 and v.ndim > view.ndim - 0 and v.ndim > 0:
            v = v[0]
        if v.shape == view.shape and v.strides == view.strides and (
                view.flags.c_contiguous and v.dtype == view.dtype):
            return [] if np.may_share_memory(v, view) and v.__array_interface__["data"] == \
                view.__array_interface__["data"] else [DTOD]
        return ["cupy_copy"]
    head = [] if isinstance(value, np.ndarray) else [HTOD]  # the value made an array
    if len(arrays) == 1 and arrays[0].dtype == np.bool_:
        mask = arrays[0]
        if not mask.size:
            return []
        return head + _scan_names(mask.size) + [DTOH] + ["cupy_scatter_update_mask"]
    if len(arrays) == 1:
        return head + (["cupy_scatter_update"] if arrays[0].size else [])
    return head + _multiple_index(arrays, a) + ["cupy_scatter_update"]


def _take(args: Any, kwargs: Any, out: Any) -> list[str]:
    return _one("cupy_take")(args, kwargs, out)


def _take_along_axis(args: Any, kwargs: Any, out: Any) -> list[str]:
    a, indices = args[0], args[1]
    axis = kwargs.get("axis", args[2] if len(args) > 2 else None)
    if axis is None:
        return ["cupy_take"] if _arrays(out) and _arrays(out)[0].size else []
    n = a.ndim
    aranges = ["cupy_arange" for i in range(n) if i != int(axis) % n and a.shape[i]]
    keys = [np.broadcast_to(indices, indices.shape)] + [np.zeros(1, np.intp)] * (n - 1)
    return aranges + _multiple_index(keys, a) + (
        ["cupy_take"] if _arrays(out) and _arrays(out)[0].size else [])


def _scatter_add(args: Any, kwargs: Any, out: Any) -> list[str]:
    target, key, updates = args[0], args[1], args[2]
    arrays = [np.asarray(p) for p in _advanced(_index_parts(key))]
    head = [] if isinstance(updates, np.ndarray) else [HTOD]
    if len(arrays) <= 1:
        return head + ["cupy_scatter_add"]
    return head + _multiple_index(arrays, target) + ["cupy_scatter_add"]


# --- matrix products ------------------------------------------------------------------
def _splits_k(r: int, c: int, k: int, a_trans: bool) -> bool:
    """Whether cuBLAS(Lt) on an H200 splits ``k`` for an ``(r, k) @ (k, c)`` float GEMM,
    which adds its ``splitKreduce_kernel``. The H200's runs show two regimes:

    - small products (``r * c <= 8192`` outputs) with ``a`` row-major and more than 16
      rows run a CUTLASS SIMT kernel with a split-K reduction, even for a small ``k``
      (16 rows or fewer: ``gemmSN`` kernels, no split; ``a`` transposed: xmma, no split);
    - otherwise ``k`` is split when it is long beside the output's 64x64 tiles
      (``k >= 64 * tiles``): e.g. the MLP's 784-deep first layer, the LSTM's 512-deep
      recurrent gradient.
    """
    tiles = math.ceil(r / 64) * math.ceil(c / 64)
    if k >= 64 * tiles:
        return True
    return not a_trans and r > 16 and r * c <= 8192


def _gemm(r: int, c: int, k: int, a_trans: bool) -> list[str]:
    if r == 1 and c == 1:
        return ["gemv", "splitKreduce_kernel"]
    if r == 1 or c == 1:
        return ["gemv"] + (["splitKreduce_kernel"] if k >= 4096 else [])
    return ["gemm"] + (["splitKreduce_kernel"] if _splits_k(r, c, k, a_trans) else [])


def _dot2(a: np.ndarray, b: np.ndarray, out_given: Any) -> list[str]:
    """cupy's ``dot`` of two arrays of at most two dimensions (``tensordot_core``)."""
    a2 = a.reshape(1, -1) if a.ndim == 1 else a
    b2 = b.reshape(-1, 1) if b.ndim == 1 else b
    r, k = a2.shape
    c = b2.shape[1]
    dtype = np.promote_types(a.dtype, b.dtype)
    if not a.size or not b.size:
        return [MEMSET] if r * c else []
    if r == 1 and c == 1:
        return ["cupy_multiply", "cub::DeviceReduce", "cupy_copy"]
    found = []
    if a.dtype != dtype:
        found.append("cupy_copy")
        a2 = np.ascontiguousarray(a2, dtype)
    if b.dtype != dtype:
        found.append("cupy_copy")
        b2 = np.ascontiguousarray(b2, dtype)
    a_trans = not a2.flags.c_contiguous
    if not (a2.flags.c_contiguous or a2.flags.f_contiguous):
        found.append("cupy_copy")
    if not (b2.flags.c_contiguous or b2.flags.f_contiguous):
        found.append("cupy_copy")
        b2 = np.ascontiguousarray(b2)
    if dtype.kind in "biu":
        if a2.flags.f_contiguous and not a2.flags.c_contiguous and r > 1 and k > 1:
            found.append("cupy_copy")  # transposed a: made C-contiguous
        if b2.flags.f_contiguous and not b2.flags.c_contiguous and c > 1 and k > 1:
            found.append("cupy_copy")
        found.append("_tensordot_core_int_kernel")
    else:
        found += _gemm(r, c, k, a_trans and r > 1 and k > 1)
    if out_given is not None and (np.may_share_memory(out_given, a)
                                  or np.may_share_memory(out_given, b)):
        found.append("cupy_copy")
    return found


def _matmul(args: Any, kwargs: Any, out: Any) -> list[str]:
    a, b = args[0], args[1]
    given = kwargs.get("out", args[2] if len(args) > 2 else None)
    if a.ndim == 0 or b.ndim == 0:
        return _one("cupy_multiply")(args, kwargs, out)
    if max(a.ndim, b.ndim) <= 2:
        found = _dot2(a, b, given)
        if given is not None and (not given.flags.c_contiguous
                                  or given.dtype != np.promote_types(a.dtype, b.dtype)):
            found.append("cupy_copy")
        return found
    return _batched(a, b, given)


def _batched(a: np.ndarray, b: np.ndarray, given: Any) -> list[str]:
    """cupy's ``matmul`` of more than two dimensions: contiguous copies, then one
    strided-batched GEMM, or, where a batch dimension broadcasts, pointer arrays
    (``cupy_mat_ptrs``: one kernel per batch dimension per operand) and a batched GEMM."""
    ndim = max(a.ndim, b.ndim)
    dtype = np.promote_types(a.dtype, b.dtype)
    a3 = a.reshape(1, -1) if a.ndim == 1 else a
    b3 = b.reshape(-1, 1) if b.ndim == 1 else b
    a3 = a3.reshape((1,) * (ndim - a3.ndim) + a3.shape)
    b3 = b3.reshape((1,) * (ndim - b3.ndim) + b3.shape)
    found = []
    for x in (a3, b3):
        if x.size and (x.dtype != dtype or not x.flags.c_contiguous):
            found.append("cupy_copy")
    batch = np.broadcast_shapes(a3.shape[:-2], b3.shape[:-2])
    broadcast = any(sa != sc or sb != sc for sa, sb, sc in
                    zip(a3.shape[:-2], b3.shape[:-2], batch) if sc > 1)
    r, k, c = a3.shape[-2], a3.shape[-1], b3.shape[-1]
    if not a.size or not b.size:
        return found + ([MEMSET] if math.prod(batch) * r * c else [])
    if broadcast:
        found += ["cupy_mat_ptrs"] * (3 * (ndim - 2))
    if dtype.kind in "biu":
        found.append("_tensordot_core_int_batched_kernel")
    else:
        found.append("gemmBatched")
    if given is not None and (given.dtype != dtype or not given.flags.c_contiguous
                              or np.may_share_memory(given, a)
                              or np.may_share_memory(given, b)):
        found.append("cupy_copy")
    return found


def _dot(args: Any, kwargs: Any, out: Any) -> list[str]:
    a, b = args[0], args[1]
    if a.ndim == 0 or b.ndim == 0:
        return _one("cupy_multiply")(args, kwargs, out)
    if max(a.ndim, b.ndim) <= 2:
        return _dot2(a, b, kwargs.get("out"))
    return ["cupy_copy"] * 2 + _gemm(int(np.prod(a.shape[:-1])), b.shape[-1], a.shape[-1],
                                     False)


_EINSUM_SPLIT = re.compile(r"\s*->\s*")


def _einsum(args: Any, kwargs: Any, out: Any) -> list[str]:
    spec = args[0] if isinstance(args[0], str) else None
    ops = [x for x in args[1:] if isinstance(x, np.ndarray)]
    res = _arrays(out)
    if spec is None or not res or not res[0].size:
        return []
    ins, _, right = spec.replace(" ", "").partition("->")
    subs = ins.split(",")
    if len(ops) == 1:
        return [] if _shares(res[0], ops) else ["cupy_sum"]
    if len(ops) != 2:
        return ["cupy_copy"] * len(ops) + ["gemm"] * (len(ops) - 1)
    s0, s1 = (s.replace("...", "") for s in subs[:2])
    out_sub = right.replace("...", "")
    contracted = (set(s0) & set(s1)) - set(out_sub)
    if not contracted:
        return ["cupy_multiply"]
    if not res[0].ndim or res[0].size == 1:
        if res[0].dtype.kind in "biu":
            return ["_tensordot_core_int_kernel"]
        return ["gemv", "splitKreduce_kernel"]
    kind = "_tensordot_core_int_kernel" if res[0].dtype.kind in "biu" else "gemm"
    return ["cupy_copy", "cupy_copy", kind]


# --- linear algebra (cuSOLVER and cuBLAS inside cupy.linalg) --------------------------
def _batch(a: np.ndarray) -> int:
    return int(np.prod(a.shape[:-2])) if a.ndim > 2 else 1


def _linalg(name: str, args: Any, kwargs: Any, out: Any) -> list[str]:
    """Kernel counts of cupy 14's ``cupy.linalg`` routines, as the H200 ran them for the
    op table's small float32 matrices (cuSOLVER picks its kernels internally: these are
    measured, with cupy's own copies and checks around them)."""
    a = args[0] if args and isinstance(args[0], np.ndarray) else None
    res = _arrays(out)
    if a is None or not res or not any(r.size for r in res):
        return []
    batch = _batch(a)
    n = a.shape[-1]
    if name == "norm":
        return _fresh_copies(args, kwargs, out)
    count = _LINALG.get(name)
    if count is None:
        return ["cusolver"] * max(1, len(res))
    return ["cusolver"] * count(a, n, batch, args, kwargs)


def _solve_count(a: np.ndarray, n: int, batch: int, args: Any, kwargs: Any) -> int:
    return 9 if batch == 1 else 10


_LINALG: dict[str, Any] = {
    "solve": _solve_count,
    "inv": lambda a, n, batch, args, kw: 8 if batch == 1 else 9,
    "cholesky": lambda a, n, batch, args, kw: 5 if batch == 1 else 9,
    "qr": lambda a, n, batch, args, kw: 10 * batch,
    "svd": lambda a, n, batch, args, kw: 12 * batch,
    "eigh": lambda a, n, batch, args, kw: 12 * batch,
    "det": lambda a, n, batch, args, kw: 6,
    "slogdet": lambda a, n, batch, args, kw: 7,
}


_RULES: dict[str, Any] = {
    # views and no-ops (a copy where numpy had to copy, as cupy then does)
    "reshape": _fresh_copies, "ndarray.reshape": _fresh_copies, "ravel": _fresh_copies,
    "ndarray.ravel": _fresh_copies, "transpose": _fresh_copies,
    "ndarray.transpose": _fresh_copies, "swapaxes": _fresh_copies,
    "ndarray.swapaxes": _fresh_copies, "moveaxis": _fresh_copies,
    "rollaxis": _fresh_copies, "expand_dims": _fresh_copies, "squeeze": _fresh_copies,
    "ndarray.squeeze": _fresh_copies, "broadcast_to": _fresh_copies,
    "broadcast_arrays": _fresh_copies, "flip": _fresh_copies, "fliplr": _fresh_copies,
    "flipud": _fresh_copies, "split": _fresh_copies, "array_split": _fresh_copies,
    "diagonal": _fresh_copies, "ndarray.diagonal": _fresh_copies,
    "ndarray.view": _fresh_copies, "lib.stride_tricks.as_strided": _fresh_copies,
    "lib.stride_tricks.sliding_window_view": _fresh_copies, "atleast_1d": _fresh_copies,
    "atleast_2d": _fresh_copies, "atleast_3d": _fresh_copies,
    "result_type": _none, "shape": _none, "ndim": _none, "can_cast": _none,
    "empty": _none, "empty_like": _none,
    # creation
    "zeros": _zeros, "zeros_like": _zeros, "ones": _fill, "ones_like": _fill,
    "full": _full, "full_like": _full, "arange": _arange, "linspace": _linspace,
    "eye": _eye, "identity": _eye, "tri": _tri, "tril": _tril, "triu": _tril,
    "array": _creation, "asarray": _creation, "asanyarray": _creation,
    "ascontiguousarray": _creation,
    # copies
    "copy": _copy, "ndarray.copy": _copy, "ndarray.astype": _astype, "copyto": _copyto,
    "ndarray.fill": lambda args, kwargs, out: (
        [] if not args[0].size else [MEMSET] if (np.asarray(args[1]).reshape(()) == 0 and
                                                 args[0].flags.c_contiguous)
        else ["cupy_fill"]),
    "concatenate": _concatenate, "stack": _stack, "hstack": _stack, "vstack": _stack,
    "tile": _tile, "repeat": _tile, "pad": _pad,
    # element-wise beyond ufuncs
    "where": _where, "clip": _clip, "ndarray.clip": _clip, "round": _one("cupy_round"),
    "around": _one("cupy_round"), "ndarray.round": _one("cupy_round"),
    "ElementwiseKernel": _elementwise_kernel, "cupyx.scipy.special.erf": _erf,
    "nan_to_num": _one("cupy_nan_to_num"),
    # reductions
    "sum": _reduction("sum", "sum"), "ndarray.sum": _reduction("sum", "sum"),
    "prod": _reduction("prod", "sum"), "ndarray.prod": _reduction("prod", "sum"),
    "max": _reduction("max", "minmax"), "ndarray.max": _reduction("max", "minmax"),
    "amax": _reduction("max", "minmax"), "min": _reduction("min", "minmax"),
    "ndarray.min": _reduction("min", "minmax"), "amin": _reduction("min", "minmax"),
    "argmax": _reduction("argmax", "arg"), "ndarray.argmax": _reduction("argmax", "arg"),
    "argmin": _reduction("argmin", "arg"), "ndarray.argmin": _reduction("argmin", "arg"),
    "mean": _reduction("mean", "mean"), "ndarray.mean": _reduction("mean", "mean"),
    "any": _reduction("any", "plain"), "ndarray.any": _reduction("any", "plain"),
    "all": _reduction("all", "plain"), "ndarray.all": _reduction("all", "plain"),
    "count_nonzero": _reduction("count_nonzero", "plain"),
    "add.reduce": _ufunc_reduce("add"), "multiply.reduce": _ufunc_reduce("multiply"),
    "maximum.reduce": _ufunc_reduce("maximum"), "minimum.reduce": _ufunc_reduce("minimum"),
    "cumsum": _cumsum, "ndarray.cumsum": _cumsum, "cumprod": _cumsum,
    "argsort": _argsort, "ndarray.argsort": _argsort, "sort": _sort,
    "nonzero": _nonzero, "ndarray.nonzero": _nonzero, "argwhere": _nonzero,
    "flatnonzero": _nonzero,
    # indexing
    "ndarray.__getitem__": _getitem, "ndarray.__setitem__": _setitem, "take": _take,
    "ndarray.take": _take, "take_along_axis": _take_along_axis,
    "cupyx.scatter_add": _scatter_add,
    # products
    "matmul": _matmul, "dot": _dot, "ndarray.dot": _dot, "einsum": _einsum,
}
