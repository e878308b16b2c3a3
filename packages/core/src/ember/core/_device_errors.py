"""Checks an op makes on a GPU, raised at the next read: each GPU's error flag.

On the CPU a check reads its values at once (they are in host memory: no cost) and raises
there. On a GPU, reading them would make the host wait for the device at every step, so an
op *records* a failed check instead: a few kernels update a small array on the device, the
flag, and nothing is read back. That also works inside a captured CUDA graph (no host
transfer) and in graph mode's replays (the check is part of the op's forward).

The next read of a result on that device (``Tensor.numpy()``, hence ``float()``, ``int()``,
``bool()``, printing, ``fit``'s logs) copies the flag together with the result and raises
``InvalidArgumentError``, naming the op and what was wrong: the first failure since the last
read, and how many checks failed since. Nothing is dropped between reads; the flag is
cleared when it is reported. Copying it costs no extra sync: the copy is enqueued (into
pinned host memory) before the read's own blocking copy, which waits for it.

The flag, per GPU (per backend object and device index): int64 ``[failures, code of the
first, its smallest value, its largest value]``. A code names a check registered on the
host (op, what, bounds), so a replayed or captured check writes the same code. Values are
the device's integers, exactly. ``check_range`` checks integers against bounds,
``check_nonzero`` that no value is 0 (integer division's divisor; its report counts the
zeros).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import numpy as np

from ._errors import InvalidArgumentError, LeakedTensorError, LeakedValue

_lock = threading.Lock()
_CODES: dict[tuple[str, str, int, int], int] = {}
_CHECKS: list[tuple[str, str, int, int]] = []  # code - 1 -> (op, what, low, high)
_NONZERO: set[int] = set()  # the codes of check_nonzero's checks (low = high = 0)


class _Flag:
    """One GPU's flag (``array``) and its four elements as one-element views (a check's
    kernel updates them in place, one thread all four), the host buffer its copy lands in
    and the check kernels, by source."""

    __slots__ = ("array", "host", "kernels", "parts")

    def __init__(self, be: Any, index: int) -> None:
        # an upload: outside a capture (graph mode traces eagerly before it captures)
        self.array = be.from_host(np.zeros(4, np.int64), index)
        self.parts = tuple(self.array[k:k + 1] for k in range(4))
        self.host = _host_buffer(be.xp)
        self.kernels: dict[str, Any] = {}


_FLAGS: weakref.WeakKeyDictionary[Any, dict[int, _Flag]] = weakref.WeakKeyDictionary()


def _host_buffer(xp: Any) -> np.ndarray:
    """Four int64 in pinned host memory (an asynchronous copy needs it), as
    ``cupyx.empty_pinned`` makes them; host memory where the backend has no pinned memory
    (the strict double's arrays are host memory)."""
    alloc = getattr(xp.cuda, "alloc_pinned_memory", None)
    if alloc is None:
        return np.zeros(4, np.int64)
    buf: np.ndarray = np.ndarray((4,), dtype=np.int64, buffer=alloc(32))
    buf[...] = 0
    return buf


def _device_index(be: Any, a: Any) -> int:
    """The device ``a`` is on: the strict double has one backend object per device (its
    ``index``); cupy's shared backend asks the array."""
    index = getattr(be, "index", None)
    return int(index if index is not None else a.device.id)


def _code(op: str, what: str, low: int, high: int) -> int:
    key = (op, what, low, high)
    code = _CODES.get(key)
    if code is None:
        with _lock:
            code = _CODES.setdefault(key, len(_CHECKS) + 1)
            if code == len(_CHECKS) + 1:
                _CHECKS.append(key)
    return code


def _flag(be: Any, values: Any) -> _Flag:
    index = _device_index(be, values)
    with _lock:
        flags = _FLAGS.setdefault(be, {})
        flag = flags.get(index)
        if flag is None:
            flag = flags[index] = _Flag(be, index)
    return flag


def _record(be: Any, flag: _Flag, code: int, bad: str, lo: Any, hi: Any) -> None:
    """One kernel, one thread: the flag's four elements updated in place (one-element
    views, each an output) from the 0-d device values ``lo`` and ``hi`` and the C
    condition ``bad`` on them: the count of failures, then this check's code, ``lo`` and
    ``hi`` if it is the first failure since the last read."""
    source = (f"bool bad = {bad}; bool first = bad && n == 0; "
              f"n = n + bad; c = first ? {code} : c; vlo = first ? lo : vlo; "
              "vhi = first ? hi : vhi")
    kernel = flag.kernels.get(source)
    if kernel is None:
        kernel = flag.kernels[source] = be.xp.ElementwiseKernel(
            "L lo, L hi", "T n, T c, T vlo, T vhi", source, f"ember_check_{code}")
    kernel(lo, hi, *flag.parts)


def check_range(be: Any, values: Any, low: int, high: int, op: str, what: str) -> None:
    """Record on ``values``' GPU whether any of ``values`` (an integer array there) lies
    outside ``[low, high)``; the next read on that device raises (see the module).

    Three kernels (the smallest and largest value, the flag's update in place), no sync,
    no host transfer. Empty ``values`` pass.
    """
    if values.size == 0:
        return
    flag = _flag(be, values)
    code = _code(op, what, low, high)
    _record(be, flag, code, f"lo < {low} || hi >= {high}", values.min(), values.max())


def check_nonzero(be: Any, values: Any, op: str, what: str) -> None:
    """Record on ``values``' GPU whether any of ``values`` (an array there) is 0; the next
    read on that device raises ``InvalidArgumentError("{op}: {what} ...")`` with the
    count of zeros (see the module). Three kernels (the comparison, its count, the flag's
    update), no sync, no host transfer. Empty ``values`` pass."""
    if values.size == 0:
        return
    flag = _flag(be, values)
    code = _code(op, what, 0, 0)
    _NONZERO.add(code)
    zeros = (values == 0).sum(dtype=np.int64)
    _record(be, flag, code, "lo > 0", zeros, zeros)


def to_host(device: Any, a: Any) -> np.ndarray:
    """``a`` (an array on ``device``) as a host array, raising first a check that failed
    on the device since its last read (see the module)."""
    be = device.backend
    if device.kind == "cpu":
        return be.to_host(a)  # type: ignore[no-any-return]
    if type(a) is LeakedValue:  # (numpy's conversion raises it on the CPU)
        raise LeakedTensorError(a.why)
    flags = _FLAGS.get(be)
    flag = flags.get(device.index) if flags else None
    if flag is None or a.size == 0:  # an empty read copies nothing: no sync to ride on
        return be.to_host(a)  # type: ignore[no-any-return]
    flag.array.get(out=flag.host, blocking=False)  # complete once the read below is
    host = be.to_host(a)
    if flag.host[0]:
        _report(flag, device)
    return host  # type: ignore[no-any-return]


def _report(flag: _Flag, device: Any) -> None:
    failures, code, lo, hi = (int(v) for v in flag.host)
    flag.array.fill(0)  # reported: the next read starts afresh
    flag.host[...] = 0
    op, what, low, high = _CHECKS[code - 1]
    when = ("checked on the device without a sync and reported at this read of a result "
            f"on {device.name}")
    if failures > 1:
        when = (f"the first of {failures} failed checks on {device.name} since its last read: "
                "checked without a sync and reported at this read")
    if code in _NONZERO:
        raise InvalidArgumentError(f"{op}: {what} ({lo} zero{'s' if lo != 1 else ''}; "
                                   f"{when})")
    raise InvalidArgumentError(f"{op}: {what} must be in [{low}, {high}), got values from "
                               f"{lo} to {hi} ({when})")
