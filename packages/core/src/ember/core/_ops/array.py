"""Array ops: shape changes, joining and splitting, indexing, scatter, padding, sorting."""

from __future__ import annotations

import builtins
from collections import namedtuple
from typing import Any

import numpy as np

from .. import _dtypes, _tensor
from .._config import DETERMINISTIC
from .._convert import convert_array
from .._device import Device, get_device
from .._errors import DTypeError, InvalidArgumentError
from .._registry import OpDef, execute, notify, register
from .._tensor import Tensor, as_tensor, is_variable, wrap
from ..recording import _active
from . import _args
from . import math as m
from ._index_keys import KeyInput, check_distinct_targets, host_indices, resolve_key
from ._scatter_sorted import scatter_add_sorted

F = "array"
_slice = builtins.slice

# --- shape ------------------------------------------------------------------------------
_reshape = register("reshape", lambda be, x, shape: x.reshape(shape), family=F)
_transpose = register("transpose", lambda be, x, perm: be.xp.transpose(x, perm), family=F)
def _broadcast_to(be: Any, x: Any, shape: tuple[int, ...]) -> Any:
    if x.ndim == 0:  # numpy's broadcast_to is slow Python; a scalar fills directly
        out = be.xp.empty(shape, dtype=x.dtype)  # (xp.full is Python around this: 3x
        out[...] = x  # the cost on small arrays; the same one copy kernel on a GPU)
        return out
    return be.xp.broadcast_to(x, shape)


_broadcast = register("broadcast_to", _broadcast_to, family=F)


def reshape(tensor: Any, shape: Any, name: str | None = None) -> Any:
    """The same elements in a new shape (one dimension may be -1)."""
    x = _args.tensor(tensor)
    s = _args.shape("reshape", shape)
    if -1 in s:
        known = 1
        for d in s:
            known *= d if d != -1 else 1
        if s.count(-1) > 1 or known == 0 or x.size % known:
            raise InvalidArgumentError(f"reshape: cannot reshape {x.shape} into {s}")
        s = tuple(x.size // known if d == -1 else d for d in s)
    if x.shape == s:
        return x if not _recording() else execute(_reshape, (x,), {"shape": s})
    n = 1
    for d in s:
        n *= d
    if n != x.size:
        raise InvalidArgumentError(
            f"reshape: cannot reshape a tensor of shape {x.shape} ({x.size} elements) into {s}")
    return execute(_reshape, (x,), {"shape": s})


def _recording() -> bool:
    return bool(_active.get())


def transpose(a: Any, perm: Any = None, conjugate: bool = False, name: str | None = None) -> Any:
    """Permute the axes (reverse them when ``perm`` is None).

    ``conjugate=True`` also conjugates complex values (a no-op for real dtypes, as TF);
    complex conjugation is not implemented and raises.
    """
    x = _args.tensor(a)
    if conjugate and x.dtype.kind == "c":
        raise InvalidArgumentError("transpose: conjugate=True on a complex tensor is not "
                                   "supported")
    p = tuple(range(x.ndim))[::-1] if perm is None else tuple(int(i) % max(x.ndim, 1) for i in perm)
    if sorted(p) != list(range(x.ndim)):
        raise InvalidArgumentError(f"transpose: perm {perm!r} is not a permutation of "
                                   f"the {x.ndim} axes of a tensor of shape {x.shape}")
    return execute(_transpose, (x,), {"perm": p})


def expand_dims(input: Any, axis: int, name: str | None = None) -> Any:
    """Insert a length-1 axis at ``axis``."""
    x = _args.tensor(input)
    a = _args.axis1("expand_dims", axis, x.ndim + 1)
    s = x.shape
    return reshape(x, s[:a] + (1,) + s[a:])


def squeeze(input: Any, axis: Any = None, name: str | None = None) -> Any:
    """Remove length-1 axes (all of them, or those in ``axis``)."""
    x = _args.tensor(input)
    ax = _args.axes("squeeze", axis, x.ndim)
    if ax is None:
        ax = tuple(i for i, d in enumerate(x.shape) if d == 1)
    for a in ax:
        if x.shape[a] != 1:
            raise InvalidArgumentError(f"squeeze: axis {a} of shape {x.shape} is not 1")
    return reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in ax))


def broadcast_to(input: Any, shape: Any, name: str | None = None) -> Any:
    """Broadcast ``input`` to ``shape`` by numpy's rules."""
    x = _args.tensor(input)
    return execute(_broadcast, (x,), {"shape": _args.shape("broadcast_to", shape)})


def shape(input: Any, out_type: Any = np.int32, name: str | None = None) -> Any:
    """The shape as a 1-D integer tensor (on the input's device)."""
    x = _args.tensor(input)
    return _on_device(np.array(x.shape, dtype=out_type), x._device)


def rank(input: Any, name: str | None = None) -> Any:
    """The number of axes as an int32 scalar tensor (on the input's device)."""
    x = _args.tensor(input)
    return _on_device(np.array(x.ndim, dtype=np.int32), x._device)


def size(input: Any, out_type: Any = np.int32, name: str | None = None) -> Any:
    """The number of elements as a scalar tensor (on the input's device)."""
    x = _args.tensor(input)
    return _on_device(np.array(x.size, dtype=out_type), x._device)


def _on_device(host: np.ndarray, dev: Device) -> Tensor:
    return wrap(convert_array(host, None, dev), dev)


# --- devices ------------------------------------------------------------------------------
def copy_to_device(t: Tensor, dev: Device) -> Tensor:
    """Copy ``t`` to ``dev``. Recorded, so gradients flow back to the source device."""
    if t._device is dev:
        return t
    host = t._device.backend.to_host(t._data)
    out = wrap(dev.backend.from_host(host, dev.index), dev)
    recs = _active.get()
    if recs:
        notify(recs, _copy_to_device, (t,), {"device": dev.name}, (out,))
    return out


def _copy_forward(be: Any, x: Any, device: str) -> Any:
    """The copy itself (``be`` is the source's backend); graph mode replays it."""
    dev = get_device(device)
    return dev.backend.from_host(be.to_host(x), dev.index)


_copy_to_device = register("copy_to_device", _copy_forward, family=F)


# --- joining and splitting --------------------------------------------------------------
_concat = register("concat", lambda be, *xs, axis: be.xp.concatenate(xs, axis=axis), family=F)


def _split(be: Any, x: Any, axis: int, sizes: tuple[int, ...]) -> tuple[Any, ...]:
    idx = np.cumsum(sizes)[:-1].tolist()
    return tuple(be.xp.split(x, idx, axis=axis))


_split_op = register("split", _split, family=F)


def concat(values: Any, axis: int, name: str | None = None) -> Any:
    """Join tensors along an existing axis."""
    vals = [_args.tensor(v) for v in values]
    if not vals:
        raise InvalidArgumentError("concat: needs at least one tensor")
    nd = vals[0].ndim
    a = _args.axis1("concat", axis, nd)
    for i, v in enumerate(vals):
        if v.ndim != nd or v.shape[:a] + v.shape[a + 1:] != vals[0].shape[:a] + vals[0].shape[a + 1:]:
            raise InvalidArgumentError(
                f"concat: along axis {a}, tensor {i} has shape {v.shape} but tensor 0 has "
                f"{vals[0].shape}; all other dimensions must match")
    if len(vals) == 1:
        return identity_if_needed(vals[0])
    return execute(_concat, tuple(vals), {"axis": a})


def identity_if_needed(x: Any) -> Any:
    return m.identity(x) if _recording() else x


def split(value: Any, num_or_size_splits: Any, axis: int = 0, num: Any = None,
          name: str | None = None) -> list[Any]:
    """Split along ``axis`` into equal parts (an int) or parts of the given sizes."""
    x = _args.tensor(value)
    a = _args.axis1("split", axis, x.ndim)
    n = x.shape[a]
    if isinstance(num_or_size_splits, (int, np.integer)) and \
            not isinstance(num_or_size_splits, bool):  # a count (numpy's integers too)
        k = int(num_or_size_splits)
        if k <= 0 or n % k:
            raise InvalidArgumentError(f"split: axis {a} of shape {x.shape} does not divide "
                                       f"into {k} equal parts")
        sizes = (n // k,) * k
    else:
        sizes = _args.shape("split", num_or_size_splits)
        if -1 in sizes:
            rest = n - builtins.sum(s for s in sizes if s != -1)
            sizes = tuple(rest if s == -1 else s for s in sizes)
        if builtins.sum(sizes) != n or builtins.min(sizes) < 0:
            raise InvalidArgumentError(f"split: sizes {sizes} do not add up to {n}, the size of "
                                       f"axis {a} of shape {x.shape}")
    if num is not None and int(num) != len(sizes):
        raise InvalidArgumentError(f"split: num={num} but the split gives {len(sizes)} parts")
    if len(sizes) == 1:  # one part is the tensor itself (as concat of one tensor)
        return [identity_if_needed(x)]
    return list(execute(_split_op, (x,), {"axis": a, "sizes": tuple(sizes)}))


def stack(values: Any, axis: int = 0, name: str | None = None) -> Any:
    """Join tensors of one shape along a new axis."""
    vals = [_args.tensor(v) for v in values]
    if not vals:
        raise InvalidArgumentError("stack: needs at least one tensor")
    for i, v in enumerate(vals):
        if v.shape != vals[0].shape:
            raise InvalidArgumentError(f"stack: tensor {i} has shape {v.shape} but tensor 0 "
                                       f"has {vals[0].shape}")
    a = _args.axis1("stack", axis, vals[0].ndim + 1)
    return concat([expand_dims(v, a) for v in vals], a)


def _pack(value: Any, dtype: Any, op: str) -> Any:
    """A (nested) list or tuple holding tensors as one tensor, stacked (see
    ``_tensor._PACK``). Its numbers and arrays take the dtype of its first tensor (or
    ``dtype``); tensors of another dtype are an error, as in TensorFlow."""
    if dtype is None:
        dtype = _first_dtype(value)
    parts = [_pack(v, dtype, op) if type(v) in (list, tuple) and _tensor.holds_tensor(v)
             else as_tensor(v, dtype, op) for v in value]
    if not parts:
        return as_tensor(value, dtype, op)
    for i, p in enumerate(parts):
        if p.shape != parts[0].shape:
            raise InvalidArgumentError(f"{op}: a list of tensors packs into one only when its "
                                       f"entries have one shape: entry {i} has shape {p.shape}, "
                                       f"entry 0 {parts[0].shape}")
    return stack(parts, 0)


def _first_dtype(value: Any) -> Any:
    for v in value:
        if type(v) is Tensor or is_variable(v):
            return as_tensor(v).dtype
        if type(v) in (list, tuple):
            found = _first_dtype(v)
            if found is not None:
                return found
    return None


_tensor._PACK.append(_pack)


def unstack(value: Any, num: Any = None, axis: int = 0, name: str | None = None) -> list[Any]:
    """Split along ``axis`` into tensors with that axis removed."""
    x = _args.tensor(value)
    a = _args.axis1("unstack", axis, x.ndim)
    if num is not None and int(num) != x.shape[a]:
        raise InvalidArgumentError(f"unstack: num={num} but axis {a} of shape {x.shape} has "
                                   f"{x.shape[a]} entries")
    if x.shape[a] == 0:
        return []
    return [squeeze(p, a) for p in split(x, x.shape[a], a)]


def _tile(be: Any, x: Any, multiples: tuple[int, ...]) -> Any:
    return be.xp.tile(x, multiples)


_tile_op = register("tile", _tile, family=F)


def tile(input: Any, multiples: Any, name: str | None = None) -> Any:
    """Repeat the whole tensor ``multiples[i]`` times along axis i."""
    x = _args.tensor(input)
    mult = _args.shape("tile", multiples)
    if len(mult) != x.ndim:
        raise InvalidArgumentError(f"tile: multiples {mult} must have one entry per axis of "
                                   f"shape {x.shape}")
    return execute(_tile_op, (x,), {"multiples": mult})


def repeat(input: Any, repeats: Any, axis: int | None = None, name: str | None = None) -> Any:
    """TensorFlow's ``tf.repeat`` (numpy's ``repeat``): each slice along ``axis`` repeated
    ``repeats`` times (one count for all, or one per slice); ``axis=None`` flattens first.
    Made of ``reshape``/``broadcast_to`` (one count) or ``getitem`` (a count per slice), so
    tapes differentiate it and graph mode traces it."""
    x = _args.tensor(input)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    a = _args.axis1("repeat", axis, x.ndim)
    if hasattr(repeats, "numpy"):
        repeats = repeats.numpy()
    reps = np.asarray(repeats)
    if reps.dtype.kind not in "iu" or reps.ndim > 1 or (reps.size and reps.min() < 0):
        raise InvalidArgumentError(f"repeat: repeats must be a count >= 0 or a list of them, "
                                   f"got {repeats!r}")
    n = x.shape[a]
    if reps.ndim == 0 or reps.size == 1:
        r = int(reps.reshape(-1)[0])
        e = broadcast_to(expand_dims(x, a + 1), x.shape[:a + 1] + (r,) + x.shape[a + 1:])
        return reshape(e, x.shape[:a] + (n * r,) + x.shape[a + 1:])
    if reps.size != n:
        raise InvalidArgumentError(f"repeat: {reps.size} repeats for axis {a} of length {n}")
    idx = np.repeat(np.arange(n), reps).astype(np.int32)
    return getitem(x, (builtins.slice(None),) * a + (idx,))


def _pad(be: Any, x: Any, paddings: tuple[tuple[int, int], ...], value: Any) -> Any:
    return be.xp.pad(x, paddings, mode="constant", constant_values=value)


_pad_op = register("pad", _pad, family=F)


def _check_pad_value(x: Any, value: Any) -> None:
    """A ``constant_values`` an integer or bool tensor cannot hold exactly (1.5 for an
    int32 tensor, 2 for a bool one) is refused, as TensorFlow refuses it, where numpy
    would truncate it silently (an exact float, 2.0, is taken)."""
    if isinstance(value, Tensor) or not (_dtypes.is_integer(x.dtype) or x.dtype.kind == "b"):
        return
    v = np.asarray(value)
    if v.dtype.kind not in "biufc":
        return
    with np.errstate(invalid="ignore"):
        whole = bool(np.all(np.isfinite(v) & (v == np.round(v.real))))
    if whole and x.dtype.kind == "b":
        whole = bool(np.all((v == 0) | (v == 1)))
    if not whole:
        raise DTypeError(f"pad: constant_values {value!r} cannot pad a {x.dtype} tensor: "
                         f"it does not hold it exactly (TensorFlow refuses it too; numpy "
                         f"would truncate it)")


def pad(tensor: Any, paddings: Any, mode: str = "CONSTANT", constant_values: Any = 0,
        name: str | None = None) -> Any:
    """Pad each axis by ``paddings[i] = (before, after)``; modes CONSTANT, REFLECT, SYMMETRIC.
    ``constant_values`` must be a value the tensor's dtype holds exactly: 1.5 for an
    integer tensor is refused (as TensorFlow refuses it), not truncated to 1."""
    x = _args.tensor(tensor)
    if hasattr(paddings, "numpy"):
        paddings = paddings.numpy()
    pads = tuple((int(b), int(a)) for b, a in paddings)
    if len(pads) != x.ndim or builtins.min((builtins.min(p) for p in pads), default=0) < 0:
        raise InvalidArgumentError(f"pad: paddings {pads} must give (before, after) >= 0 for "
                                   f"each axis of shape {x.shape}")
    mode = mode.upper()
    if mode == "CONSTANT":
        _check_pad_value(x, constant_values)
        return execute(_pad_op, (x,), {"paddings": pads, "value": constant_values})
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise InvalidArgumentError(f"pad: unknown mode {mode!r}")
    off = 1 if mode == "REFLECT" else 0
    for ax, (b, a) in enumerate(pads):
        n = x.shape[ax]
        if b + off > n or a + off > n:
            raise InvalidArgumentError(f"pad: {mode} padding {(b, a)} is too large for axis "
                                       f"{ax} of shape {x.shape}")
        parts = []
        if b:
            parts.append(reverse(_take(x, ax, _slice(off, off + b)), [ax]))
        parts.append(x)
        if a:
            parts.append(reverse(_take(x, ax, _slice(n - off - a, n - off)), [ax]))
        x = concat(parts, ax) if len(parts) > 1 else x
    return x


def _take(x: Any, axis: int, s: Any) -> Any:
    return getitem(x, (_slice(None),) * axis + (s,))


_reverse_op = register("reverse", lambda be, x, axis: be.xp.flip(x, axis), family=F)


def reverse(tensor: Any, axis: Any, name: str | None = None) -> Any:
    """Reverse the order of elements along the given axes."""
    x = _args.tensor(tensor)
    return execute(_reverse_op, (x,), {"axis": _args.axes("reverse", axis, x.ndim)})


_roll_op = register("roll", lambda be, x, shift, axis: be.xp.roll(x, shift, axis), family=F)


def roll(input: Any, shift: Any, axis: Any, name: str | None = None) -> Any:
    """Elements shifted by ``shift`` along ``axis``, wrapping around (``tf.roll``): both an
    int or lists of one length; shifts of one axis named twice add up.

    Examples:
        >>> import ember.core as em
        >>> em.roll([0, 1, 2, 3, 4], shift=2, axis=0)
        ember.Tensor([3 4 0 1 2], shape=(5,), dtype=int32)
    """
    x = _args.tensor(input)
    shifts, axes = _args.shape("roll", shift), _args.shape("roll", axis)
    if len(shifts) != len(axes):
        raise InvalidArgumentError(f"roll: shift and axis must be ints or 1-D lists of one "
                                   f"length, got shift={shift!r}, axis={axis!r}")
    for a in axes:
        if not -x.ndim <= a < x.ndim:
            raise InvalidArgumentError(f"roll: axis {a} is out of range for a tensor of "
                                       f"shape {x.shape}")
    total: dict[int, int] = {}
    for sh, a in zip(shifts, axes):
        a %= x.ndim
        total[a] = total.get(a, 0) + sh
    keep = {a: sh % x.shape[a] for a, sh in total.items() if x.shape[a] and sh % x.shape[a]}
    if not keep:
        return x
    return execute(_roll_op, (x,), {"shift": tuple(keep.values()), "axis": tuple(keep)})


# --- indexing ---------------------------------------------------------------------------
def _getitem(be: Any, x: Any, *idx: Any, key: tuple[Any, ...], basic: bool) -> Any:
    return x[resolve_key(be, key, idx, x.shape)]


def _index_add(be: Any, x: Any, u: Any, *idx: Any, key: tuple[Any, ...], basic: bool) -> Any:
    out = x.copy()
    k = resolve_key(be, key, idx, x.shape)
    if basic:
        out[k] += u
    elif DETERMINISTIC[0] and out.dtype.kind in "fc" and type(out) is not np.ndarray:
        scatter_add_sorted(be.xp, be.scatter_add, out, k, u)  # (numpy's add.at is serial)
    else:
        be.scatter_add(out, k, u)
    return out


def _index_update(be: Any, x: Any, u: Any, *idx: Any, key: tuple[Any, ...],
                  basic: bool) -> Any:
    resolved = resolve_key(be, key, idx, x.shape)
    if not basic:
        check_distinct_targets(be, key, resolved, x.shape)
    out = x.copy()
    out[resolved] = u
    return out


_getitem_op = register("getitem", _getitem, family=F)
_index_add_op = register("index_add", _index_add, family=F)
_index_update_op = register("index_update", _index_update, family=F)


def normalize_key(op: str, key: Any, device: Device
                  ) -> tuple[tuple[Any, ...], bool, tuple[Tensor, ...]]:
    """An indexing key split into its static parts and its index tensors.

    Returns ``(key, basic, indices)``: ``key`` holds ints, slices, None, Ellipsis and a
    ``KeyInput`` for each tensor in ``indices`` (tensors, and arrays or lists made
    tensors); ``basic`` is True when every element is selected at most once.
    """
    if not isinstance(key, tuple):
        key = (key,)
    out: list[Any] = []
    inputs: list[Tensor] = []
    basic = True
    for k in key:
        if k is None or k is Ellipsis or type(k) is int:
            out.append(k)
        elif type(k) is _slice:
            out.append(_slice(_int(k.start), _int(k.stop), _int(k.step)))
        elif isinstance(k, (np.integer,)):
            out.append(int(k))
        else:
            host = None  # the index as given on the host, when it was
            if is_variable(k):
                k = k._read()
            if type(k) is Tensor:
                if k._device is not device:
                    raise InvalidArgumentError(
                        f"{op}: index tensor on {k.device} but the tensor is on {device.name}")
            else:
                arr = np.asarray(k)
                if arr.dtype.kind == "f":
                    raise InvalidArgumentError(f"{op}: indices must be integers or bools, "
                                               f"got {arr.dtype}")
                host = arr
                k = wrap(device.backend.from_host(arr, device.index), device)
            dt = k._data.dtype
            if dt.kind == "b":
                out.append(KeyInput(len(inputs), "mask", name=op))
                basic = False
            elif dt.kind in "iu":
                out.append(KeyInput(len(inputs), name=op, host=host))
                if k._data.ndim != 0:
                    basic = False
            else:
                raise InvalidArgumentError(f"{op}: cannot index with a value of dtype {dt}")
            inputs.append(k)
    return tuple(out), basic, tuple(inputs)


def _int(v: Any) -> int | None:
    return None if v is None else int(v)


def getitem(tensor: Any, key: Any) -> Any:
    """numpy-style basic and advanced indexing (``t[1:, ::2]``, ``t[idx]``, ``t[mask]``)."""
    x = _args.tensor(tensor)
    k, basic, idx = normalize_key("getitem", key, x._device)
    return execute(_getitem_op, (x, *idx), {"key": k, "basic": basic})


def index_add(tensor: Any, key: Any, updates: Any) -> Any:
    """A copy of ``tensor`` with ``updates`` added at ``key`` (repeated indices accumulate)."""
    x = _args.tensor(tensor)
    k, basic, idx = normalize_key("index_add", key, x._device)
    return execute(_index_add_op, (x, updates, *idx), {"key": k, "basic": basic})


def index_update(tensor: Any, key: Any, updates: Any) -> Any:
    """A copy of ``tensor`` with the elements at ``key`` replaced by ``updates``.

    Raises:
        InvalidArgumentError: the key's index arrays pick an element more than once
            (which update lands would be undefined on a GPU; ``index_add`` adds them).
    """
    x = _args.tensor(tensor)
    k, basic, idx = normalize_key("index_update", key, x._device)
    return execute(_index_update_op, (x, updates, *idx), {"key": k, "basic": basic})


def slice(input_: Any, begin: Any, size: Any, name: str | None = None) -> Any:
    """The block starting at ``begin`` of extent ``size`` (-1: to the end)."""
    x = _args.tensor(input_)
    b = _args.shape("slice", begin)
    s = _args.shape("slice", size)
    dims = x.shape
    if len(b) != len(dims) or len(s) != len(dims):
        raise InvalidArgumentError(
            f"slice: begin and size need one entry per axis of the input, shape {dims}; got "
            f"begin={list(b)}, size={list(s)}")
    for axis, (i, n, d) in enumerate(zip(b, s, dims)):
        if not 0 <= i <= d:  # (TensorFlow's checks: no clipping, no negative begin)
            raise InvalidArgumentError(f"slice: begin[{axis}] must be in [0, {d}] for the "
                                       f"input's shape {dims}, got {i}")
        if n != -1 and not 0 <= n <= d - i:
            raise InvalidArgumentError(f"slice: size[{axis}] must be -1 or in [0, {d - i}] "
                                       f"(begin {i} of a size-{d} axis), got {n}")
    return getitem(x, tuple(_slice(i, None if n == -1 else i + n) for i, n in zip(b, s)))


def _index_tensor(x: Tensor, indices: Any, op: str) -> Tensor:
    """``indices`` as an integer tensor on ``x``'s device."""
    idx = _args.tensor(indices)
    if idx.dtype.kind not in "iu":
        raise InvalidArgumentError(f"{op}: indices must be integers, got {idx.dtype}")
    if idx._device is not x._device:
        raise InvalidArgumentError(f"{op}: indices on {idx.device} but params on {x.device}")
    return idx


def gather(params: Any, indices: Any, axis: Any = None, batch_dims: int = 0,
           name: str | None = None) -> Any:
    """Pick slices of ``params`` along ``axis`` at ``indices`` (like ``np.take``)."""
    x = _args.tensor(params)
    axis = batch_dims if axis is None else axis
    a = _args.axis1("gather", axis, x.ndim)
    idx = _index_tensor(x, indices, "gather")
    here = KeyInput(0, check="gather", host=host_indices(indices))
    if batch_dims:
        if a != batch_dims:
            raise InvalidArgumentError("gather: with batch_dims, axis must equal batch_dims")
        xp = x._device.xp
        key = tuple(xp.arange(x.shape[i]).reshape((-1,) + (1,) * (idx.ndim - 1 - i))
                    for i in range(batch_dims)) + (here,)
        return execute(_getitem_op, (x, idx), {"key": key, "basic": False})
    return execute(_getitem_op, (x, idx), {"key": (_slice(None),) * a + (here,),
                                           "basic": False})


def gather_nd(params: Any, indices: Any, batch_dims: int = 0, name: str | None = None) -> Any:
    """Pick elements or slices of ``params`` at the coordinates in ``indices[..., :]``."""
    if batch_dims:
        raise InvalidArgumentError("gather_nd: batch_dims > 0 is not supported yet")
    x = _args.tensor(params)
    idx = _index_tensor(x, indices, "gather_nd")
    if idx.ndim == 0:
        raise InvalidArgumentError("gather_nd: indices must have at least one axis (the last "
                                   "is the depth of each index)")
    if idx.shape[-1] > x.ndim:
        raise InvalidArgumentError(f"gather_nd: index depth {idx.shape[-1]} exceeds the rank "
                                   f"of params {x.shape}")
    if idx.shape[-1] == 0:  # an empty index picks all of params, once per index row
        lead = tuple(idx.shape[:-1])
        return broadcast_to(reshape(x, (1,) * len(lead) + x.shape), lead + x.shape)
    key = (KeyInput(0, "columns", "gather_nd", host=host_indices(indices)),)
    return execute(_getitem_op, (x, idx), {"key": key, "basic": False})


def _check_nd_updates(op: str, shape: tuple[int, ...], idx: Tensor, updates: Any) -> None:
    """``updates`` must have TensorFlow's shape, ``indices.shape[:-1] + shape[depth:]``:
    no broadcasting (``[5]`` for two indices was spread over both, silently)."""
    depth = idx.shape[-1] if idx.ndim else 0
    want = tuple(idx.shape[:-1]) + tuple(shape[depth:])
    got = tuple(np.shape(updates)) if not hasattr(updates, "shape") else tuple(updates.shape)
    if idx.ndim == 0 or depth > len(shape):
        raise InvalidArgumentError(f"{op}: indices of shape {tuple(idx.shape)} cannot index "
                                   f"a tensor of shape {shape} (the last axis of indices "
                                   f"is the depth, at most the rank)")
    if got != want:
        raise InvalidArgumentError(
            f"{op}: updates must have shape indices.shape[:-1] + shape[{depth}:] = {want} "
            f"(indices {tuple(idx.shape)}, shape {shape}), got {got}")


def _nd_key(op: str, indices: Any) -> dict[str, Any]:
    return {"key": (KeyInput(0, "columns", op, host=host_indices(indices)),), "basic": False}


def _tensor_scatter_nd(op: str, opdef: OpDef, tensor: Any, indices: Any, updates: Any,
                       negate: bool = False) -> Any:
    """The tensor_scatter_nd family: ``opdef`` (index_add or index_update) at the rows of
    ``indices``, after TensorFlow's checks of their shapes."""
    x = _args.tensor(tensor)
    idx = _index_tensor(x, indices, op)
    _check_nd_updates(op, x.shape, idx, updates)
    u = m.negative(_args.tensor(updates)) if negate else updates
    return execute(opdef, (x, u, idx), _nd_key(op, indices))


def tensor_scatter_nd_update(tensor: Any, indices: Any, updates: Any,
                             name: str | None = None) -> Any:
    """A copy of ``tensor`` with the elements at ``indices`` replaced by ``updates``.

    Raises:
        InvalidArgumentError: two rows of ``indices`` pick the same element (TensorFlow
            leaves the result undefined then; ``tensor_scatter_nd_add`` adds them).
    """
    return _tensor_scatter_nd("tensor_scatter_nd_update", _index_update_op, tensor, indices,
                              updates)


def tensor_scatter_nd_add(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Any:
    """A copy of ``tensor`` with ``updates`` added at ``indices`` (duplicates add)."""
    return _tensor_scatter_nd("tensor_scatter_nd_add", _index_add_op, tensor, indices, updates)


def tensor_scatter_nd_sub(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Any:
    """A copy of ``tensor`` with ``updates`` subtracted at ``indices`` (duplicates add up)."""
    return _tensor_scatter_nd("tensor_scatter_nd_sub", _index_add_op, tensor, indices, updates,
                              negate=True)


def boolean_mask(tensor: Any, mask: Any, axis: int = 0, name: str | None = None) -> Any:
    """The elements (or slices from ``axis`` on) where ``mask`` is true, flattened."""
    x = _args.tensor(tensor)
    mk = _args.tensor(mask)
    a = _args.axis1("boolean_mask", axis, x.ndim)
    if x.shape[a:a + mk.ndim] != mk.shape:
        raise InvalidArgumentError(f"boolean_mask: mask shape {mk.shape} does not match "
                                   f"shape {x.shape} from axis {a}")
    return getitem(x, (_slice(None),) * a + (m.cast(mk, _dtypes.bool_),))


def take_along_axis(arr: Any, indices: Any, axis: int) -> Any:
    """Pick values along ``axis`` at ``indices`` of the same rank (like numpy's)."""
    return _take_along(arr, indices, axis, bounds=True)


def _take_along(arr: Any, indices: Any, axis: int, bounds: bool) -> Any:
    """take_along_axis; ``bounds=False`` for indices ember made (sort's and top_k's)."""
    x = _args.tensor(arr)
    idx = _index_tensor(x, indices, "take_along_axis")
    a = _args.axis1("take_along_axis", axis, x.ndim)
    xp = x._device.xp
    key: list[Any] = []
    for i in range(x.ndim):
        if i == a:
            key.append(KeyInput(0, name="take_along_axis", bounds=bounds,
                                host=host_indices(indices)))
        else:
            shp = [1] * x.ndim
            shp[i] = x.shape[i]
            key.append(xp.arange(x.shape[i]).reshape(shp))
    return execute(_getitem_op, (x, idx), {"key": tuple(key), "basic": False})


# --- sorting ----------------------------------------------------------------------------
def _argsort(be: Any, x: Any, axis: int, descending: bool, stable: bool) -> Any:
    # always stable, as TensorFlow's (numpy's default quicksort is not; cupy's sort is
    # stable whatever it is asked, and takes kind="stable")
    kind = "stable"
    if descending:
        # stable descending: reverse, stable ascending sort of the negation would break ties
        # the wrong way for equal keys; flip/argsort/flip keeps the first occurrence first.
        n = x.shape[axis]
        r = be.xp.flip(x, axis)
        idx = be.xp.argsort(r, axis=axis, kind=kind)
        return be.xp.flip(n - 1 - idx, axis).astype(np.int32)
    return be.xp.argsort(x, axis=axis, kind=kind).astype(np.int32)


_argsort_op = register("argsort", _argsort, family=F, differentiable=False)


def argsort(values: Any, axis: int = -1, direction: str = "ASCENDING", stable: bool = False,
            name: str | None = None) -> Any:
    """Indices that sort ``values`` along ``axis`` (int32). The sort is always stable:
    equal values keep their order (in either direction), as TensorFlow's, whatever
    ``stable`` says (TensorFlow's argument, which it documents as always stable too).

    Examples:
        >>> import ember.core as em
        >>> em.argsort(em.constant([3., 1., 2., 1.]))
        ember.Tensor([1 3 2 0], shape=(4,), dtype=int32)
    """
    x = _args.tensor(values)
    if direction not in ("ASCENDING", "DESCENDING"):
        raise InvalidArgumentError(f"argsort: direction must be ASCENDING or DESCENDING, "
                                   f"got {direction!r}")
    if not isinstance(stable, (bool, np.bool_)):
        raise InvalidArgumentError(f"argsort: stable must be a bool, got {stable!r}")
    return execute(_argsort_op, (x,), {"axis": _args.axis1("argsort", axis, x.ndim),
                                       "descending": direction == "DESCENDING",
                                       "stable": True})


def sort(values: Any, axis: int = -1, direction: str = "ASCENDING", name: str | None = None) -> Any:
    """``values`` sorted along ``axis`` (differentiable: gradients follow the elements)."""
    x = _args.tensor(values)
    return _take_along(x, argsort(x, axis, direction, stable=True), axis, bounds=False)


TopK = namedtuple("TopK", ["values", "indices"])


def top_k(input: Any, k: int = 1, sorted: bool = True, name: str | None = None) -> TopK:
    """The ``k`` largest entries along the last axis and their indices."""
    x = _args.tensor(input)
    if not 0 <= k <= x.shape[-1]:
        raise InvalidArgumentError(f"top_k: k={k} is out of range for last axis of shape {x.shape}")
    idx = getitem(argsort(x, -1, "DESCENDING", stable=True), (Ellipsis, _slice(0, k)))
    return TopK(_take_along(x, idx, -1, bounds=False), idx)


# --- one_hot, meshgrid ------------------------------------------------------------------
def _one_hot(be: Any, i: Any, depth: int, on: Any, off: Any, axis: int, dtype: Any) -> Any:
    xp = be.xp
    eq = xp.expand_dims(i, -1) == xp.arange(depth)
    if on == 1 and off == 0:  # the common case: a cast of the mask, not a select
        out = eq.astype(dtype)
    else:
        out = xp.where(eq, xp.asarray(on, dtype=dtype), xp.asarray(off, dtype=dtype))
    return xp.moveaxis(out, -1, axis) if axis != -1 else out


_one_hot_op = register("one_hot", _one_hot, family=F, differentiable=False)


def one_hot(indices: Any, depth: int, on_value: Any = None, off_value: Any = None,
            axis: int = -1, dtype: Any = None, name: str | None = None) -> Any:
    """One-hot vectors of length ``depth`` for integer ``indices`` (-1 or out of range:
    zeros), ``on_value`` (default 1) where the index is, ``off_value`` (default 0)
    elsewhere.

    The dtype is TensorFlow's: ``dtype`` if given (a value must be of it, or a Python or
    numpy number it holds exactly), else the dtype of ``on_value`` or ``off_value`` (a
    Python int gives int32, a float float32, a bool bool; both given must agree), else
    float32. A tensor ``on_value`` / ``off_value`` (0-d) is read on the host.

    Examples:
        >>> import ember.core as em
        >>> em.one_hot([0, 2], 3, on_value=3, off_value=1)
        ember.Tensor([[3 1 1]
         [1 1 3]], shape=(2, 3), dtype=int32)
    """
    i = _args.tensor(indices)
    if i.dtype.kind not in "iu":
        raise InvalidArgumentError(f"one_hot: indices must be integers, got {i.dtype}")
    hint = None if dtype is None else _dtypes.as_dtype(dtype)
    on, on_dt = _hot_value("on_value", on_value, hint)
    off, off_dt = _hot_value("off_value", off_value, hint)
    if on_dt is not None and off_dt is not None and on_dt != off_dt:
        raise DTypeError(f"one_hot: on_value's dtype {on_dt} differs from off_value's "
                            f"{off_dt} (they must agree, as in TensorFlow)")
    for arg, dt in (("on_value", on_dt), ("off_value", off_dt)):
        if hint is not None and dt is not None and dt != hint:
            raise DTypeError(f"one_hot: {arg}'s dtype {dt} does not match dtype={hint} "
                                f"(as in TensorFlow: cast it, or leave dtype out)")
    out_dt = hint or on_dt or off_dt or np.dtype(np.float32)
    return execute(_one_hot_op, (i,), {"depth": int(depth), "on": 1 if on is None else on,
                                       "off": 0 if off is None else off, "axis": int(axis),
                                       "dtype": out_dt})


def _hot_value(arg: str, value: Any, hint: Any) -> tuple[Any, Any]:
    """(``one_hot``'s on/off value as a Python number, its dtype), (None, None) for None:
    a Python or numpy number takes ``hint`` where it holds it exactly (TensorFlow's
    ``dtype_hint``), else its own dtype (Python's: int32, float32, bool)."""
    if value is None:
        return None, None
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise InvalidArgumentError(f"one_hot: {arg} must be a scalar, got shape "
                                       f"{value.shape}")
        return value.numpy().item(), value.dtype
    a = np.asarray(value)
    if a.ndim != 0 or a.dtype.kind not in "biufc":
        raise InvalidArgumentError(f"one_hot: {arg} must be a number, got {value!r}")
    dt = _dtypes.infer_dtype(value) or a.dtype
    if hint is not None and dt != hint:
        k, h = a.dtype.kind, "f" if _dtypes.is_floating(hint) else hint.kind
        if k == "b":
            fits = h == "b"
        elif k in "iu":
            fits = h in "fc" or (h in "iu" and
                                 int(np.iinfo(hint).min) <= int(a) <= int(np.iinfo(hint).max))
        else:
            fits = h in ("fc" if k == "f" else "c")
        if fits:
            dt = hint
    return a.item(), dt


def meshgrid(*args: Any, indexing: str = "xy", name: str | None = None) -> list[Any]:
    """Coordinate grids from 1-D tensors (``indexing='xy'`` or ``'ij'``), differentiable."""
    vs = [reshape(_args.tensor(a), (-1,)) for a in args]
    n = len(vs)
    sizes = [v.shape[0] for v in vs]
    if indexing == "xy" and n >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, v in enumerate(vs):
        shp = [1] * n
        j = i
        if indexing == "xy" and n >= 2 and i < 2:
            j = 1 - i
        shp[j] = v.shape[0]
        out.append(broadcast_to(reshape(v, shp), sizes))
    return out
