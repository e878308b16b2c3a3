"""``out[key] += updates`` with the same bits on every run (``em.config.deterministic``).

A GPU's scatter-add (``cupyx.scatter_add``) adds the updates of a repeated index with
atomic additions, in whatever order the threads reach them: float sums then differ in
their last bits from run to run, and training drifts apart. Here the updates are sorted by
where they land (a stable sort: ties keep their order), each run of equal targets is summed
pairwise in a fixed tree, and one scatter-add puts the sums in place: each target then
receives one sum and ``-0.0`` from every other update of its run, and ``x + -0.0`` is ``x``
in every order, so the atomics change nothing.

The work is ``ceil(log2(n))`` rounds of a few elementwise kernels for ``n`` updates, with no
read on the host (a captured CUDA graph stays valid).
"""

from __future__ import annotations

from typing import Any


def _rows(key: Any, out: Any) -> Any:
    """The index array when ``key`` picks whole rows (``out[ids]``, ``out[ids, :, ...]``,
    an embedding's gradient), else None."""
    if not isinstance(key, tuple):
        key = (key,)
    if not key or getattr(key[0], "dtype", None) is None or key[0].dtype.kind not in "iu":
        return None
    if any(not (type(k) is slice and k == slice(None)) for k in key[1:]):
        return None
    return key[0]


def scatter_add_sorted(xp: Any, scatter_add: Any, out: Any, key: Any, updates: Any) -> None:
    """``out[key] += updates`` (repeated targets accumulate), summing each target's updates
    pairwise in the order they come (``scatter_add(out, key, updates)``, the backend's,
    then adds only one nonzero term per target). ``out`` is C-contiguous."""
    ids = _rows(key, out)
    if out.size == 0 or (ids is not None and ids.size == 0):
        return  # nothing lands
    if ids is not None:  # targets are rows: sort rows, not elements
        n = out.shape[0]
        lin = ids.reshape(-1).astype(xp.int64)
        lin = xp.where(lin < 0, lin + n, lin)
        vals = xp.broadcast_to(updates, ids.shape + out.shape[1:]).reshape(
            lin.size, out.size // n)
        target = out.reshape(n, -1)
    else:  # any other key: number the elements, and index that as out would be
        where = xp.arange(out.size, dtype=xp.int64).reshape(out.shape)[key]
        lin = where.reshape(-1)
        vals = xp.broadcast_to(updates, where.shape).reshape(lin.size, 1)
        target = out.reshape(-1, 1)
    m = lin.size
    if m == 0:
        return
    order = xp.argsort(lin, kind="stable")
    lin = lin[order]
    vals = vals[order].astype(out.dtype, copy=False)  # (a new array: summed in place)
    pos = xp.arange(m, dtype=xp.int64)
    first = xp.ones(m, dtype=bool)
    first[1:] = lin[1:] != lin[:-1]
    start = xp.searchsorted(lin, lin, side="left")  # where each one's run begins
    end = xp.searchsorted(lin, lin, side="right")  # and one past where it ends
    offset = pos - start
    step = 1
    while step < m:  # round r adds the element 2**r along into each multiple of 2**(r+1)
        take = ((offset % (2 * step)) == 0) & (pos + step < end)
        partner = xp.minimum(pos + step, m - 1)
        vals += xp.where(take[:, None], vals[partner], 0)
        step *= 2
    neutral = xp.asarray(complex(-0.0, -0.0) if out.dtype.kind == "c" else -0.0, out.dtype)
    scatter_add(target, (lin,), xp.where(first[:, None], vals, neutral))
