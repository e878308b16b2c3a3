"""``keras.ops``' numpy-like shape and indexing functions over ember ops: reshaping,
moving and flipping axes, joining and splitting, repeating and tiling, ``take`` and
``get_item``, sorting, diagonals, padding (numpy's semantics and pad modes).

Each computes on its input's device and is differentiable where Keras's is (index arrays
given on the host stay there: their bounds are checked without reading the device).
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

import ember.core as em

from ._core import axes_of, host_ints, reject, tensor
from ._numpy import _sum_dtype

_max, _min = builtins.max, builtins.min


def ndim(x: Any) -> int:
    return int(getattr(x, "ndim", np.ndim(x)))


def size(x: Any) -> int:
    """The number of elements (a Python int)."""
    return math.prod(int(d) for d in getattr(x, "shape", np.shape(x)))


def reshape(x: Any, newshape: Any) -> em.Tensor:
    return em.reshape(tensor(x), host_ints(newshape))


def ravel(x: Any) -> em.Tensor:
    return em.reshape(tensor(x), (-1,))


def transpose(x: Any, axes: Any = None) -> em.Tensor:
    return em.transpose(tensor(x), None if axes is None else host_ints(axes))


def swapaxes(x: Any, axis1: int, axis2: int) -> em.Tensor:
    t = tensor(x)
    a, b = axes_of("swapaxes", axis1, t.ndim)[0], axes_of("swapaxes", axis2, t.ndim)[0]
    perm = list(range(t.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return em.transpose(t, perm)


def moveaxis(x: Any, source: Any, destination: Any) -> em.Tensor:
    """``x`` with the axes ``source`` moved to ``destination``, the others in order."""
    t = tensor(x)
    src, dst = axes_of("moveaxis", source, t.ndim), axes_of("moveaxis", destination, t.ndim)
    if len(src) != len(dst):
        raise em.InvalidArgumentError(f"ember.nn.ops.moveaxis: source {source!r} and "
                                      f"destination {destination!r} differ in length")
    order = [i for i in range(t.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return em.transpose(t, order)


def expand_dims(x: Any, axis: Any) -> em.Tensor:
    """``x`` with length-1 axes inserted at ``axis`` (an int or a tuple, numpy's meaning)."""
    t = tensor(x)
    n = t.ndim + (1 if isinstance(axis, (int, np.integer)) else len(axis))
    new = axes_of("expand_dims", axis, n)
    dims = iter(t.shape)
    return em.reshape(t, [1 if i in new else next(dims) for i in range(n)])


def squeeze(x: Any, axis: Any = None) -> em.Tensor:
    t = tensor(x)
    return em.squeeze(t, None if axis is None else axes_of("squeeze", axis, t.ndim))


def broadcast_to(x: Any, shape: Any) -> em.Tensor:
    return em.broadcast_to(tensor(x), host_ints(shape))


def flip(x: Any, axis: Any = None) -> em.Tensor:
    t = tensor(x)
    return em.reverse(t, list(range(t.ndim)) if axis is None else axes_of("flip", axis, t.ndim))


def concatenate(xs: Any, axis: Any = 0) -> em.Tensor:
    """Join tensors along ``axis`` (flattened first when ``axis`` is None); dtypes promote."""
    ts = [tensor(v) for v in xs]
    if axis is None:
        ts, axis = [em.reshape(v, (-1,)) for v in ts], 0
    return em.concat(ts, int(axis))


def stack(x: Any, axis: int = 0) -> em.Tensor:
    return em.stack([tensor(v) for v in x], int(axis))


def hstack(xs: Any) -> em.Tensor:
    ts = [em.reshape(t, (1,)) if t.ndim == 0 else t for t in _map_tensor(xs)]
    return em.concat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(xs: Any) -> em.Tensor:
    ts = [em.reshape(t, (1, -1)) if t.ndim < 2 else t for t in _map_tensor(xs)]
    return em.concat(ts, 0)


def _map_tensor(xs: Any) -> list[em.Tensor]:
    return [tensor(v) for v in xs]


def tile(x: Any, repeats: Any) -> em.Tensor:
    """``x`` repeated ``repeats[i]`` times along axis i (numpy's rules when the lengths
    differ: the shorter of the two is padded with leading ones)."""
    t = tensor(x)
    reps = host_ints(repeats)
    if len(reps) > t.ndim:
        t = em.reshape(t, (1,) * (len(reps) - t.ndim) + t.shape)
    reps = [1] * (t.ndim - len(reps)) + reps
    return em.tile(t, reps)


def repeat(x: Any, repeats: Any, axis: Any = None) -> em.Tensor:
    """Each element (or slice along ``axis``) repeated ``repeats`` times; ``axis=None``
    flattens first. ``repeats`` may give one count per element (``em.repeat``)."""
    return em.repeat(tensor(x), repeats, axis)  # type: ignore[no-any-return]


def split(x: Any, indices_or_sections: Any, axis: int = 0) -> list[em.Tensor]:
    """numpy's split: an int cuts ``axis`` into that many equal parts, a list cuts it at
    those indices (``split(x, [3, 7])`` gives ``x[:3], x[3:7], x[7:]``)."""
    t = tensor(x)
    a = axes_of("split", axis, t.ndim)[0]
    n = t.shape[a]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0 or n % k:
            raise em.InvalidArgumentError(f"ember.nn.ops.split: axis {a} of length {n} does "
                                          f"not split into {k} equal sections")
        bounds = [i * (n // k) for i in range(k + 1)]
    else:
        bounds = [0] + host_ints(indices_or_sections) + [n]
    lead = (builtins.slice(None),) * a
    return [em.getitem(t, lead + (builtins.slice(lo, hi),)) for lo, hi in
            zip(bounds[:-1], bounds[1:])]


def get_item(x: Any, key: Any) -> em.Tensor:
    return em.getitem(tensor(x), key)


def _indices(fn: str, indices: Any) -> Any:
    """Indices as given (host values stay on the host), float tensors cast to int32."""
    if isinstance(indices, (em.Tensor, em.Variable)):
        i = tensor(indices)
        return i if i.dtype.kind in "iu" else em.cast(i, em.int32)
    arr = np.asarray(indices)
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind not in "fb":
            raise em.InvalidArgumentError(f"ember.nn.ops.{fn}: indices must be integers, got "
                                          f"{arr.dtype}")
        arr = arr.astype(np.int32)
    return arr


def take(x: Any, indices: Any, axis: Any = None) -> em.Tensor:
    """The entries of ``x`` at ``indices`` along ``axis`` (of the flattened ``x`` when None);
    negative indices count from the end."""
    t = tensor(x)
    if axis is None:
        t, axis = em.reshape(t, (-1,)), 0
    a = axes_of("take", axis, t.ndim)[0]
    return em.getitem(t, (builtins.slice(None),) * a + (_indices("take", indices),))


def take_along_axis(x: Any, indices: Any, axis: Any = None) -> em.Tensor:
    """The entries of ``x`` at ``indices`` along ``axis`` (numpy's; ``axis=None`` flattens x)."""
    t = tensor(x)
    i = _indices("take_along_axis", indices)
    if axis is None:
        t, axis = em.reshape(t, (-1,)), 0
    i = i if isinstance(i, em.Tensor) else em.convert_to_tensor(i, device=t.device)
    return em.take_along_axis(t, i, axes_of("take_along_axis", axis, t.ndim)[0])


def sort(x: Any, axis: Any = -1) -> em.Tensor:
    t = tensor(x)
    if axis is None:
        t, axis = em.reshape(t, (-1,)), 0
    return em.sort(t, axes_of("sort", axis, t.ndim)[0])


def argsort(x: Any, axis: Any = -1) -> em.Tensor:
    """The indices that sort ``x`` along ``axis`` (int32, stable)."""
    t = tensor(x)
    if axis is None:
        t, axis = em.reshape(t, (-1,)), 0
    if t.ndim == 0:
        return em.zeros((), em.int32)
    return em.argsort(t, axes_of("argsort", axis, t.ndim)[0], stable=True)


def meshgrid(*x: Any, indexing: str = "xy") -> list[em.Tensor]:
    if indexing not in ("xy", "ij"):
        raise em.InvalidArgumentError(f"ember.nn.ops.meshgrid: indexing must be 'xy' or 'ij', "
                                      f"got {indexing!r}")
    return list(em.meshgrid(*[tensor(v) for v in x], indexing=indexing))


def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> em.Tensor:
    """Diagonal ``offset`` of the matrices spanning ``axis1`` and ``axis2``, as a last axis."""
    t = tensor(x)
    if t.ndim < 2:
        raise em.InvalidArgumentError(f"ember.nn.ops.diagonal: x must have rank >= 2, got "
                                      f"shape {t.shape}")
    t = moveaxis(t, [axis1, axis2], [-2, -1])
    n, m = t.shape[-2:]
    k = int(offset)
    length = _max(0, _min(n, m - k) if k >= 0 else _min(n + k, m))
    rows = np.arange(length) + (0 if k >= 0 else -k)
    return em.getitem(t, (Ellipsis, rows, rows + k))


def diag(x: Any, k: int = 0) -> em.Tensor:
    """A 1-D ``x`` placed on diagonal ``k`` of a square matrix, or diagonal ``k`` of a 2-D ``x``."""
    t = tensor(x)
    k = int(k)
    if t.ndim == 2:
        return diagonal(t, k)
    if t.ndim != 1:
        raise em.InvalidArgumentError(f"ember.nn.ops.diag: x must be 1-D or 2-D, got shape "
                                      f"{t.shape}")
    d = em.linalg.diag(t)
    pads = [[0, k], [k, 0]] if k >= 0 else [[-k, 0], [0, -k]]
    return em.pad(d, pads) if k else d


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "circular")


def pad(x: Any, pad_width: Any, mode: str = "constant", constant_values: Any = None) -> em.Tensor:
    """numpy's pad: ``pad_width`` an int, ``(before, after)``, or one pair per axis; modes
    constant, edge, reflect, symmetric and wrap (``circular``), however wide."""
    t = tensor(x)
    if mode not in _PAD_MODES:
        raise reject("pad", "mode", mode, f"ember pads with {list(_PAD_MODES)}")
    if constant_values is not None and mode != "constant":
        raise em.InvalidArgumentError(f"ember.nn.ops.pad: constant_values can only be given "
                                      f"with mode='constant', got mode={mode!r}")
    if constant_values is not None and np.ndim(constant_values) != 0:
        raise reject("pad", "constant_values", constant_values, "give one number")
    try:
        widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (t.ndim, 2)).tolist()
    except ValueError as e:
        raise em.InvalidArgumentError(f"ember.nn.ops.pad: pad_width {pad_width!r} does not fit "
                                      f"a tensor of rank {t.ndim}") from e
    if mode == "constant":
        return em.pad(t, widths, "CONSTANT", 0 if constant_values is None else constant_values)
    for ax, (b, a) in enumerate(widths):
        n = t.shape[ax]
        if (b or a) and n == 0:
            raise em.InvalidArgumentError(f"ember.nn.ops.pad: mode={mode!r} cannot pad the "
                                          f"empty axis {ax} of shape {t.shape}")
        if b or a:
            idx = _pad_index(np.arange(-b, n + a), n, mode).astype(np.int32)
            t = em.getitem(t, (builtins.slice(None),) * ax + (idx,))
    return t


def _pad_index(p: Any, n: int, mode: str) -> Any:
    """The source index of each position ``p`` (``-before`` to ``n + after - 1``) of a
    padded axis of length ``n``: numpy's pad modes, however wide the padding."""
    if mode == "edge":
        return np.clip(p, 0, n - 1)
    if mode in ("wrap", "circular"):
        return p % n
    if mode == "reflect":  # d c b | a b c d | c b a: period 2n - 2
        if n == 1:
            return np.zeros_like(p)
        m = p % (2 * n - 2)
        return np.where(m < n, m, 2 * n - 2 - m)
    m = p % (2 * n)  # symmetric: c b a | a b c d | d c b: period 2n
    return np.where(m < n, m, 2 * n - 1 - m)


def trace(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> em.Tensor:
    """The sum along diagonal ``offset`` of the matrices spanning ``axis1`` and ``axis2``,
    in ``sum``'s dtypes: bool, int8 and int16 as int32, uint8 and uint16 as uint32 (as
    Keras's JAX, TensorFlow and NumPy backends; its torch backend, which has no uint32,
    gives int32 for those two)."""
    return em.reduce_sum(_sum_dtype(diagonal(x, offset, axis1, axis2)), -1)


def diff(a: Any, n: int = 1, axis: int = -1) -> em.Tensor:
    """The ``n``-th differences along ``axis`` (of bools: whether neighbours differ, as
    numpy's)."""
    t = tensor(a)
    ax = axes_of("diff", axis, t.ndim)[0]
    lead = (builtins.slice(None),) * ax
    step = em.not_equal if t.dtype == em.bool_ else em.subtract
    for _ in range(int(n)):
        t = step(t[lead + (builtins.slice(1, None),)], t[lead + (builtins.slice(None, -1),)])
    return t


def flipud(x: Any) -> em.Tensor:
    return flip(x, 0)


def fliplr(x: Any) -> em.Tensor:
    return flip(x, 1)


def roll(x: Any, shift: Any, axis: Any = None) -> em.Tensor:
    """Elements shifted by ``shift`` along ``axis`` (of the flattened tensor when None),
    wrapping around: ``em.roll``, with one shift for every axis when ``shift`` is one
    number."""
    t = tensor(x)
    if axis is None:
        return em.reshape(roll(em.reshape(t, (-1,)), shift, 0), t.shape)
    shifts, axes = host_ints(shift), axes_of("roll", axis, t.ndim)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    return em.roll(t, list(shifts), list(axes))
