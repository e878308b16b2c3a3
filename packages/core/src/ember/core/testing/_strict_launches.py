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
wraps its indices with ``cupy_prepare_array_indexing`` and gathers with ``cupy_take``
(library calls: ``_strict_launches_libs``). They were calibrated against what an H200 ran
for each case of the op table (``packages/core/tests/data/h200_op_kernels.json``, tested
in ``test_launch_counter.py``): 97% of the cases agree, the others' ember code changed.

``names`` gives the launches by (cupy-like) name, with the host transfers cupy makes
inside a call (``DTOH``, ``HTOD``: not launches); ``recording()`` collects them per call,
for tests and for finding where a step's launches go.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from ._strict_cuda import _arrays

MEMSET = "Memset (Device)"
DTOD = "Memcpy DtoD"
DTOH = "Memcpy DtoH"  # a read-back cupy makes inside the call (it synchronizes)
HTOD = "Memcpy HtoD"  # an upload cupy makes inside the call
# memsets and copies inside cuSOLVER and thrust, of a kind their names do not show
LIBRARY_MEMOPS = "Memcpy/Memset (library)"
# a 0-d array made from host data: cupy 14 fills it on the device instead of copying
# (the double still counts the upload in ``from_host``)
FILL_0D, MEMSET_0D = "cupy_fill (0-d from host)", "Memset (0-d from host)"
NO_COPY = "(empty from host: nothing copied)"  # counted in from_host, copies nothing
TRANSFERS = frozenset({DTOH, HTOD, LIBRARY_MEMOPS, NO_COPY})  # not counted as launches

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
        return _strict_launches_libs.linalg(qual[len("linalg."):], args, kwargs, out)
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
        if not outs or not outs[0].size:
            return []
        return _overlap_copies(args, kwargs.get("out")) + [_typed("cupy_" + name, args,
                                                                     outs[:1])]
    return rule


def _typed(name: str, ins: Any, outs: Any) -> str:
    """cupy's kernel name: the op, its operands' C types (a Python scalar is ``float`` or
    ``int``), then its result's, as a profiler lists them (``cupy_add__float32_float_float32``).
    Spelled out only while ``recording()``: counting needs none of it."""
    if not _recorders:
        return name
    def kind(x: Any) -> str:
        if isinstance(x, np.ndarray):
            return x.dtype.name
        if isinstance(x, bool):
            return "bool"
        if isinstance(x, int):
            return "int"
        if isinstance(x, float):
            return "float"
        if isinstance(x, np.generic):
            return np.dtype(type(x)).name
        return type(x).__name__
    parts = [kind(x) for x in ins if not isinstance(x, (str, type, np.dtype))]
    parts += [o.dtype.name for o in outs]
    return name + "__" + "_".join(parts)


def _overlap_copies(inputs: Any, given: Any) -> list[str]:
    """cupy's ``_copy_in_args_if_needed``: an input that overlaps a given output without
    being that very array is copied first (one kernel each)."""
    outs = _arrays(given)
    return ["cupy_copy" for x in inputs if isinstance(x, np.ndarray) and x.size and any(
        x is not o and np.may_share_memory(x, o) for o in outs)]


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


def _creation(args: Any, kwargs: Any, out: Any) -> list[str]:
    """array/asarray/ascontiguousarray: host data is uploaded (a transfer, counted by
    the double as ``from_host`` for numpy arrays), except a 0-d value, which cupy 14
    fills in on the device (``_array_default``); a device array is returned as it is or
    copied (a kernel) when its dtype or layout must change."""
    src = _first(args, kwargs)
    if not isinstance(src, np.ndarray):  # host data (numpy or Python)
        data = np.asarray(src.a if isinstance(src, _Host) else src)
        if data.ndim == 0:  # cupy 14 fills a 0-d array instead of copying it over
            if isinstance(src, _Host):
                return [MEMSET_0D] if data == 0 else [FILL_0D]
            return [MEMSET] if data == 0 else ["cupy_fill"]
        if not data.size:
            return [NO_COPY] if isinstance(src, _Host) else []
        if isinstance(src, _Host):
            return []  # an upload: the double counts it (from_host)
        return [HTOD]
    return _fresh_copies(args, kwargs, out)


def _linspace(args: Any, kwargs: Any, out: Any) -> list[str]:
    o = _arrays(out)
    if not o or not o[0].size:
        return []
    # scalar start/stop: a float64 ramp and the endpoint's fill (one point: the fill),
    # then a cast to the dtype asked for
    head = ["cupy_linspace", "cupy_fill"] if o[0].size > 1 else ["cupy_fill"]
    return head + (["cupy_copy"] if o[0].dtype != np.float64 else [])


def _eye(args: Any, kwargs: Any, out: Any) -> list[str]:
    o = _arrays(out)
    if not o or not o[0].size:
        return []
    return [MEMSET, "cupy_fill"]  # zeros, then the diagonal's fill(1)


# --- copies and layout ----------------------------------------------------------------
def _astype(args: Any, kwargs: Any, out: Any) -> list[str]:
    a = args[0]
    copy = kwargs.get("copy", args[4] if len(args) > 4 else True)
    o = _arrays(out)
    if not o or not o[0].size:
        return []
    if not copy and o[0] is a:
        return []
    return [f"cupy_copy__{a.dtype.name}_{o[0].dtype.name}"]


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


def _elementwise_kernel(args: Any, kwargs: Any, out: Any) -> list[str]:
    shape = np.broadcast_shapes(*(np.shape(a) for a in args)) if args else ()
    return ["ElementwiseKernel"] if math.prod(shape) else []


# --- reductions -----------------------------------------------------------------------
_CUB_ANY = frozenset("bBhHiIlLqQefdFD") - {"?"}
_CUB_SUM = frozenset("lLqQefdFD")  # sum/prod with dtype=None: no promotion in CUB


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    return tuple(sorted(int(a) % ndim for a in axis)) if ndim else ()


def _reduce_args(args: Any, kwargs: Any) -> tuple[np.ndarray, Any, Any, Any]:
    """(array, axis, dtype, out) of a reduction called as a function or a method."""
    rest = list(args[1:])
    axis = kwargs.get("axis", rest[0] if rest else None)
    dtype = kwargs.get("dtype", rest[1] if len(rest) > 1 else None)
    return args[0], axis, dtype, kwargs.get("out")


def _cub_tile(itemsize: int) -> int:
    """Items CUB's DeviceReduce takes in one tile (256 threads x 16 four-byte items):
    beyond it, a reduction is two kernels (per-block partials, then their reduction)."""
    return 256 * max(1, 64 // max(itemsize, 1))


def _reduction(name: str, kind: str) -> Any:
    """``kind``: "sum" (sum, prod: CUB without dtype promotion), "minmax", "arg"
    (argmax/argmin: CUB only for a full reduction), "plain" (cupy's kernel only),
    "mean" (CUB's sum, then a division)."""
    def rule(args: Any, kwargs: Any, out: Any) -> list[str]:
        a, axis, dtype, given = _reduce_args(args, kwargs)
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
    """cupy's ``cub.cub_reduction``: "full" (``cub::DeviceReduce``), "segmented" (the
    reduced axes contiguous and last in memory: ``cub::DeviceSegmentedReduce``), or None
    (cupy's own reduction kernel): a contiguous array of a dtype CUB reduces as is."""
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
    if kind == "arg":  # not segmented in cupy
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
    a, axis, _dtype, _given = _reduce_args(args, kwargs)
    res = _arrays(out)
    if not res or not res[0].size:
        return []
    if axis is None:
        return ["cupy_copy", "cub::DeviceScan"]
    ax = int(axis) % a.ndim
    # astype(order="C") copies; the axis moved last and rows flattened may copy again
    c = np.empty(a.shape, np.int8)
    rows = np.moveaxis(c, ax, -1).reshape(-1, a.shape[ax])
    again = ["cupy_copy"] if not np.shares_memory(rows, c) else []
    return ["cupy_copy"] + again + ["cupy_inclusive_batch_scan_kernel"]


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
    # a copy of the keys, then thrust's sort by key (CUB radix sort kernels; along rows
    # of a matrix, keyed by row); a vector's sort reads its temporary sizes back
    if res[0].ndim == 1:
        return ["cupy_copy"] + ["cub::DeviceRadixSort"] * 2 + [LIBRARY_MEMOPS] * 2
    return ["cupy_copy"] + ["cub::DeviceRadixSort"] * 3


def _sort(args: Any, kwargs: Any, out: Any) -> list[str]:
    res = _arrays(out)
    if not res or not res[0].size:
        return []
    if res[0].ndim == 1:
        return ["cupy_copy", "cub::DeviceRadixSort", LIBRARY_MEMOPS]
    return ["cupy_copy"] + ["cub::DeviceRadixSort"] * 3


# --- indexing -------------------------------------------------------------------------
def _index_parts(key: Any) -> list[Any]:
    return list(key) if type(key) is tuple else [key]


def _advanced(parts: list[Any]) -> list[Any]:
    """The index arrays of a key (basic indices: ints, slices, None, Ellipsis)."""
    return [p for p in parts if isinstance(p, (np.ndarray, list))]


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
        while v.ndim and v.shape[0] == 1:  # cupy drops the value's leading unit axes
            v = v[0]
        if v.shape == view.shape and v.strides == view.strides:
            if _address(v) == _address(view):
                return []  # the very view (a[k] += b): nothing to store
            if view.flags.c_contiguous and v.dtype == view.dtype:
                return [DTOD]
        # an element-wise copy; a value overlapping its target is copied first
        return (["cupy_copy"] if np.may_share_memory(v, view) else []) + ["cupy_copy"]
    head = [] if isinstance(value, np.ndarray) else [HTOD]  # the value made an array
    if len(arrays) == 1 and arrays[0].dtype == np.bool_:
        mask = arrays[0]
        if not mask.size:
            return []
        return head + _scan_names(mask.size) + [DTOH] + ["cupy_scatter_update_mask"]
    if len(arrays) == 1:
        return head + (["cupy_scatter_update"] if arrays[0].size else [])
    return head + _multiple_index(arrays, a) + ["cupy_scatter_update"]


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


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
    "zeros": _zeros, "zeros_like": _zeros, "ones": _one("cupy_fill"),
    "ones_like": _one("cupy_fill"),
    "full": _one("cupy_copy"), "full_like": _one("cupy_copy"),  # copyto(a, fill_value)
    "arange": _one("cupy_arange"), "linspace": _linspace, "eye": _eye, "identity": _eye,
    "tri": _one("cupy_tri"), "tril": _one("cupy_tril"), "triu": _one("cupy_triu"),
    "array": _creation, "asarray": _creation, "asanyarray": _creation,
    "ascontiguousarray": _creation,
    # copies
    "copy": _one("cupy_copy"), "ndarray.copy": _one("cupy_copy"),
    "ndarray.astype": _astype, "copyto": _copyto,
    "ndarray.fill": lambda args, kwargs, out: (
        [] if not args[0].size else [MEMSET] if (np.asarray(args[1]).reshape(()) == 0 and
                                                 args[0].flags.c_contiguous)
        else ["cupy_fill"]),
    "concatenate": _concatenate, "stack": _stack, "hstack": _stack, "vstack": _stack,
    "tile": _one("cupy_copy"), "repeat": _one("cupy_copy"), "pad": _pad,
    # element-wise beyond ufuncs
    "where": _where, "clip": _one("cupy_clip"), "ndarray.clip": _one("cupy_clip"),
    "round": _one("cupy_round"),
    "around": _one("cupy_round"), "ndarray.round": _one("cupy_round"),
    "ElementwiseKernel": _elementwise_kernel,
    "cupyx.scipy.special.erf": _one("cupyx_scipy_special_erf"),
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
}

# the rules of library calls (cuBLAS, cuSOLVER, cuFFT), which use the helpers above
from . import _strict_launches_libs  # noqa: E402

_RULES.update(_strict_launches_libs.RULES)
