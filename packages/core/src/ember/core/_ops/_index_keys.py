"""Indexing keys with tensor parts, and the bounds check that makes them safe on a GPU.

Index arrays that come from tensors are the op's inputs (after the tensor, and after the
updates for index_add/index_update), never attributes: graph mode replays an op on its
inputs, so an index computed in the traced function must be one. The key attribute holds
the static parts (ints, slices, None, Ellipsis) and a ``KeyInput`` where an input goes.

Every index input is checked against the length of the axis it indexes before it is
used. numpy raises for an index out of bounds, but cupy wraps it around (its documented
difference from numpy): without the check, ``gather(params, [5])`` on a GPU would
silently pick row ``5 % n``. The check reads each index array's extremes to the host in
one copy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._registry import IndexOutOfRangeError, InvalidArgumentError


class KeyInput:
    """The place of index input ``i`` in an indexing key: used as indices (``"index"``),
    as a boolean mask (``"mask"``: its nonzero positions), or as coordinates along the last
    axis (``"columns"``: one index array per column, as gather_nd and scatter_nd take).

    ``name`` is the op that errors name; with ``check``, negative indices raise too (as
    in TensorFlow's gather and scatter ops), otherwise they count from the end (numpy's
    meaning). ``bounds=False`` skips the bounds check, for indices ember made itself.
    ``host`` is the index as it was given on the host, where it was: its least and largest
    values are taken then (``extremes``), and the check reads nothing from the device.
    """

    __slots__ = ("_distinct", "_host", "bounds", "check", "extremes", "i", "kind", "name")

    def __init__(self, i: int, kind: str = "index", check: str | None = None,
                 name: str | None = None, bounds: bool = True, host: Any = None) -> None:
        self.i = i
        self.kind = kind
        self.check = check
        self.name = name or check or "getitem"
        self.bounds = bounds
        self.extremes = None if host is None or not host.size else _extremes(np, host, kind)
        self._host = host
        self._distinct: bool | None = None

    def distinct(self) -> bool:
        """Whether the index, as given on the host, picks no target twice (no repeats,
        nothing negative that could alias a positive index). False when that is not
        known there: the device is asked. Worked out when an update op first asks."""
        if self._distinct is None:
            h = self._host
            self._distinct = bool(h is not None and self.kind != "mask" and _distinct(h,
                                                                                   self.kind))
        return self._distinct

    def __repr__(self) -> str:
        return f"KeyInput({self.i}, {self.kind!r})"


def host_indices(indices: Any) -> np.ndarray | None:
    """``indices`` as a host array when they were given on the host (not a tensor)."""
    if hasattr(indices, "_data") or hasattr(indices, "_read"):  # a Tensor or a Variable
        return None
    try:
        arr = np.asarray(indices)
    except (TypeError, ValueError):
        return None
    return arr if arr.dtype.kind in "iu" else None


def _distinct(host: np.ndarray, kind: str) -> bool:
    if not host.size:
        return True
    if host.min() < 0:
        return False
    rows = host.reshape(-1, host.shape[-1]) if kind == "columns" and host.ndim else \
        host.reshape(-1, 1)
    return bool(np.unique(rows, axis=0).shape[0] == rows.shape[0])


def check_distinct_targets(be: Any, key: tuple[Any, ...], resolved: tuple[Any, ...],
                           shape: tuple[int, ...]) -> None:
    """Raise if the index arrays of ``resolved`` (``key`` after :func:`resolve_key`)
    pick some element of an array of ``shape`` more than once.

    Which of several updates to one element lands is numpy's last, but undefined on a
    GPU (cupy) and in TensorFlow's scatter updates, and a gradient would reach every one
    of them: an update op refuses repeats. Slices and ints never repeat a target, so only
    the index arrays (broadcast together, as numpy does) are checked: on the host when
    they were given there, else with one read of a flag from the device.
    """
    inputs = [k for k in key if type(k) is KeyInput]
    if not inputs or len(inputs) == 1 and (inputs[0].kind == "mask" or inputs[0].distinct()):
        return
    xp = be.xp
    explicit = sum(0 if p is None or p is Ellipsis else 1 for p in resolved)
    arrays, sizes, axis = [], [], 0
    for p in resolved:
        if p is Ellipsis:
            axis += len(shape) - explicit
            continue
        if p is None:
            continue
        if not isinstance(p, (int, slice, np.integer)):  # an index array
            arrays.append(p)
            sizes.append(shape[axis])
        axis += 1
    if not arrays:
        return
    arrays = list(xp.broadcast_arrays(*arrays))
    if arrays[0].size < 2:
        return
    lin = None
    for a, n in zip(arrays, sizes):
        part = xp.mod(a.astype(np.int64), n) if n else a.astype(np.int64)
        lin = part if lin is None else lin * n + part
    assert lin is not None
    s = xp.sort(lin.ravel())
    repeats = s[1:] == s[:-1]
    if not bool(be.to_host(repeats.any())):
        return
    first = int(be.to_host(s[1:][repeats][0]))
    where = np.unravel_index(first, sizes) if all(sizes) else (first,)
    name = inputs[0].name
    raise InvalidArgumentError(
        f"{name}: the indices pick the same element more than once (at "
        f"{tuple(int(i) for i in where)} along the indexed axes, of sizes {tuple(sizes)}; "
        f"{int(be.to_host(repeats.sum()))} repeat(s)); which update would land there is "
        "undefined on a GPU (and in TensorFlow's scatter updates), and a gradient would "
        "reach every one. Give each element one update, or add them with index_add / "
        "tensor_scatter_nd_add")


def _extremes(xp: Any, a: Any, kind: str) -> Any:
    """[[least], [largest]] of index array ``a`` (one column per coordinate for
    ``"columns"``)."""
    if kind == "columns":
        lead = tuple(range(a.ndim - 1))
        return xp.stack([a.min(axis=lead), a.max(axis=lead)])
    return xp.stack([a.min(), a.max()]).reshape(2, 1)


def _axes(k: Any, idx: tuple[Any, ...]) -> int:
    """How many axes of the indexed array key part ``k`` takes."""
    if k is None or k is Ellipsis:
        return 0
    if type(k) is KeyInput:
        a = idx[k.i]
        if k.kind == "mask":
            return int(a.ndim)
        if k.kind == "columns":
            return int(a.shape[-1])
    return 1


def resolve_key(be: Any, key: tuple[Any, ...], idx: tuple[Any, ...],
                shape: tuple[int, ...]) -> tuple[Any, ...]:
    """``key`` with each ``KeyInput`` replaced by the index arrays it stands for, after
    checking them against the axes of ``shape`` (the indexed array's) they index.

    Raises:
        IndexOutOfRangeError: an index is outside its axis.
    """
    if not idx:
        return key
    explicit = sum(_axes(k, idx) for k in key)
    out: list[Any] = []
    axis = 0
    for k in key:
        if k is Ellipsis:
            axis += len(shape) - explicit
        if type(k) is not KeyInput:
            out.append(k)
            axis += _axes(k, idx)
            continue
        a = idx[k.i]
        n = _axes(k, idx)
        if k.kind == "mask":
            out.extend(be.xp.nonzero(a))
        else:
            if k.bounds and a.size and a.dtype.kind in "iu":
                check_bounds(be, k, a, shape[axis:axis + n], axis)
            if k.kind == "index":
                out.append(a)
            else:
                out.extend(a[..., j] for j in range(n))
        axis += n
    return tuple(out)


def check_bounds(be: Any, k: KeyInput, a: Any, sizes: tuple[int, ...], axis: int) -> None:
    """Raise unless every index in ``a`` lies in its axis (``sizes``: the lengths of the
    axes it indexes, one per column for ``"columns"``)."""
    # the least and the largest index per axis: taken on the host when the index was
    # given there, else read back in one copy
    host = k.extremes if k.extremes is not None else be.to_host(_extremes(be.xp, a, k.kind))
    for j, n in enumerate(sizes):
        lo, hi = int(host[0, j]), int(host[1, j])
        least = 0 if k.check else -n
        if lo >= least and hi < n:
            continue
        where = f"axis {axis + j} of size {n}"
        if k.kind == "columns":
            where = f"column {j} of the index (axis {axis + j} of size {n})"
        if k.check and lo < 0:
            raise IndexOutOfRangeError(
                f"{k.name}: indices must not be negative, got values from {lo} to {hi} "
                f"for {where}; they must be in [0, {n}) (shape {tuple(a.shape)})")
        raise IndexOutOfRangeError(
            f"{k.name}: indices must be in [{least}, {n}) for {where}, got values from {lo} "
            f"to {hi} (shape {tuple(a.shape)})")
