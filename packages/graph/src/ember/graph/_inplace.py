"""Buffer reuse: a step writes its result into an input that dies there.

Eager execution allocates a new array for every result; a replay knows each value's last
use, so an op with an ``out=`` form (``extend.out_form``: core's element-wise ops, and any
op registered with one) whose input is an intermediate used for the last time, of the
result's shape and dtype, can write into that input's buffer (``xp.add(a, b, out=a)``).
Views are the danger: an input that shares memory with a value still needed (a reshape
or transpose of it, or of what it views) is never overwritten, so the traced arrays are
grouped by the buffer they live in, and a buffer is reused only when every value in it
is dead. Only host numpy arrays are analysed (their ``base`` tells which buffer a view
lives in); on other backends every step allocates, as eagerly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._trace import Step


def _root(a: Any) -> Any:
    while isinstance(a, np.ndarray) and a.base is not None:
        a = a.base
    return a


def _buffers(steps: list[Step], arrays: dict[int, Any], pinned: set[int]
             ) -> tuple[dict[int, int], dict[int, list[Any]]]:
    """Each slot's last use, and per buffer (id of the root array): [the last step any
    value in it is used, whether it may be written]."""
    last_use: dict[int, int] = {}
    for j, s in enumerate(steps):
        for k in s.ins:
            last_use[k] = j
    buffers: dict[int, list[Any]] = {}
    for k, a in arrays.items():
        entry = buffers.setdefault(id(_root(a)), [-1, True])
        entry[0] = max(entry[0], last_use.get(k, -1))
        if k in pinned or not isinstance(a, np.ndarray):
            entry[1] = False
    return last_use, buffers


def _fits(a: Any, out: Any) -> bool:
    return (isinstance(a, np.ndarray) and isinstance(out, np.ndarray) and a.base is None
            and a.flags.c_contiguous and a.flags.writeable and a.shape == out.shape
            and a.dtype == out.dtype)


def plan_inplace(steps: list[Step], arrays: dict[int, Any], pinned: set[int]
                 ) -> dict[int, int]:
    """For each step index that can run in place, the input slot it writes into.

    Args:
        steps: the kept steps, in order.
        arrays: slot -> the array it held while tracing.
        pinned: slots whose buffers must never be written: arguments, constants, variable
            values, results, variable writes.
    """
    last_use, buffers = _buffers(steps, arrays, pinned)
    chosen: dict[int, int] = {}
    for j, s in enumerate(steps):
        if s.out_form is None or len(s.outs) != 1:
            continue
        out = arrays.get(s.outs[0])
        for k in s.ins:
            a = arrays.get(k)
            if not _fits(a, out):
                continue
            last, writable = buffers[id(a)]
            if writable and last == j and last_use.get(k) == j:
                chosen[j] = k
                # k's buffer now holds the result; the result's own (traced) buffer group
                # stands for it from here on, so k's entry is never chosen again
                buffers[id(a)][1] = False
                break
    return chosen


def plan_variable_updates(steps: list[Step], arrays: dict[int, Any],
                          reads: dict[int, int], writes: dict[int, int],
                          pinned: set[int]) -> dict[int, int]:
    """Steps that compute a variable's new value from its old one element-wise (an
    optimizer's ``v - lr * g``), where the old value is not needed afterwards: step index
    -> the old value's slot, to write into.

    Whether the old array is the variable's alone (no tensor read earlier and kept, no
    numpy view) can only be known when a call starts: ``Plan.run`` checks that first.

    Args:
        reads: id(variable) -> the slot of its first read.
        writes: id(variable) -> the slot of its final value.
        pinned: the slots no element-wise step may write (see ``plan_inplace``); the old
            values in question are among them, and only they are exempted here.
    """
    producer = {s.outs[0]: j for j, s in enumerate(steps) if len(s.outs) == 1}
    chosen: dict[int, int] = {}
    for vid, final in writes.items():
        old = reads.get(vid)
        j = producer.get(final)
        if old is None or j is None:
            continue
        s = steps[j]
        if s.out_form is None or len(s.outs) != 1 or old not in s.ins:
            continue
        a = arrays.get(old)
        if not _fits(a, arrays.get(final)):
            continue
        last_use, buffers = _buffers(steps, arrays, pinned - {old})
        last, writable = buffers[id(a)]
        if writable and last == j:
            chosen[j] = old
    return chosen
