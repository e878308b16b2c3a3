"""Fused kernels for the GPU paths of ops: one ``cupy.ElementwiseKernel`` where the host
path runs a chain of numpy passes, one ``cupy.ReductionKernel`` where it maps, reduces and
maps again (a mean: the sum and its division).

On a GPU a small model's step costs what its kernel launches cost, so an op's GPU path
folds its element-wise passes into one kernel (the strict double evaluates the same C, so
CI runs these paths). The host keeps numpy's passes, which cannot be fused there.

Kernels are compiled once per device namespace and name, on first use.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

_KERNELS: dict[tuple[int, str, tuple[str, ...]], tuple[Any, Any]] = {}
_lock = threading.Lock()


def fusable(xp: Any) -> bool:
    """Whether ``xp`` (a backend's array namespace) runs fused kernels: cupy and the
    strict double, not numpy."""
    return xp is not np and hasattr(xp, "ElementwiseKernel")


def kernel(xp: Any, name: str, in_params: str, out_params: str, operation: str,
           options: tuple[str, ...] = ()) -> Any:
    """The ``ElementwiseKernel`` ``name`` of ``xp``, made from the C on first use (one per
    namespace: the strict double has one per simulated device), compiled with nvrtc's
    ``options`` (``extend.elementwise_kernel`` is its public name)."""
    key = (id(xp), name, options)
    hit = _KERNELS.get(key)
    if hit is not None and hit[0] is xp:
        return hit[1]
    k = xp.ElementwiseKernel(in_params, out_params, operation, "ember_" + name,
                             **({"options": options} if options else {}))
    with _lock:
        _KERNELS[key] = (xp, k)
    return k


def reduction(xp: Any, name: str, in_params: str, out_params: str, map_expr: str,
              reduce_expr: str, post_map_expr: str, identity: str) -> Any:
    """The ``ReductionKernel`` ``name`` of ``xp`` (one kernel: map, reduce, post map),
    made on first use and kept as ``kernel`` keeps element-wise kernels."""
    key = (id(xp), "reduction " + name, ())
    hit = _KERNELS.get(key)
    if hit is not None and hit[0] is xp:
        return hit[1]
    k = xp.ReductionKernel(in_params, out_params, map_expr, reduce_expr, post_map_expr,
                           identity, "ember_" + name)
    with _lock:
        _KERNELS[key] = (xp, k)
    return k


_COLUMNS: dict[tuple[int, int, Any, int], tuple[Any, Any]] = {}


def columns(be: Any, like: Any, n: int) -> Any:
    """``arange(n)`` in ``like``'s integer dtype on ``like``'s device: the column index a
    kernel compares with a label (``ElementwiseKernel`` has no portable index of its own).
    Kept per device once made, so a step launches nothing for it; made afresh while the
    stream captures a graph (an array allocated in a capture holds nothing until then)."""
    xp = be.xp
    dev = getattr(be, "index", None)
    if dev is None:
        dev = like.device.id
    key = (id(xp), int(dev), like.dtype, n)
    hit = _COLUMNS.get(key)
    if hit is not None and hit[0] is xp:
        return hit[1]
    j = xp.arange(n, dtype=like.dtype)
    if not xp.cuda.get_current_stream().is_capturing():
        with _lock:
            _COLUMNS[key] = (xp, j)
    return j
