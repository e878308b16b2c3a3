"""Buffer reuse: a step writes its result into an input that dies there.

Eager execution allocates a new array for every result; a replay knows each value's last
use, so an op with an ``out=`` form (``extend.out_form``: core's element-wise ops, and any
op registered with one) whose input is an intermediate used for the last time, of the
result's shape and dtype, can write into that input's buffer (``xp.add(a, b, out=a)``).
Views are the danger: an input that shares memory with a value still needed (a reshape
or transpose of it, or of what it views) is never overwritten, so the traced arrays are
grouped by the buffer they live in, and a buffer is reused only when every value in it
is dead, and only by a step that reads no other value in it. Which buffer an array
lives in, and whether it owns it, its device's backend says (``owns``, ``buffer_of``:
numpy's ``base``; cupy's ``base`` and ``data.mem``), so a replay runs in place on a GPU
as on the CPU; there a run of element-wise ops is one fused kernel (``_fuse``), which
writes into a dead input as an op's ``out=`` form does.
"""

from __future__ import annotations

from typing import Any

from ._trace import Step


def _key(devices: dict[int, Any], k: int, a: Any) -> tuple[str, int]:
    """The buffer slot ``k``'s array ``a`` lives in (addresses are per device)."""
    d = devices[k]
    return d.name, d.backend.buffer_of(a)


def _buffers(steps: list[Step], arrays: dict[int, Any], devices: dict[int, Any],
             pinned: set[int]) -> tuple[dict[int, int], dict[tuple[str, int], list[Any]]]:
    """Each slot's last use, and per buffer: [the last step any value in it is used,
    whether it may be written]."""
    last_use: dict[int, int] = {}
    for j, s in enumerate(steps):
        for k in s.ins:
            last_use[k] = j
    buffers: dict[tuple[str, int], list[Any]] = {}
    for k, a in arrays.items():
        entry = buffers.setdefault(_key(devices, k, a), [-1, True])
        entry[0] = max(entry[0], last_use.get(k, -1))
        if k in pinned:
            entry[1] = False
    return last_use, buffers


def _fits(be: Any, a: Any, out: Any) -> bool:
    """``a`` can take ``out``'s value: an array of the step's backend that owns its
    buffer, of ``out``'s type, shape and dtype."""
    return (a is not None and type(a) is type(out) and be.owns(a) and a.shape == out.shape
            and a.dtype == out.dtype)


def _sole_reader(s: Step, k: int, key: tuple[str, int], arrays: dict[int, Any],
                 devices: dict[int, Any]) -> bool:
    """No input of ``s`` but slot ``k`` lives in buffer ``key``: a fused kernel's thread
    would read another element of a view there (a transpose) that another thread has
    already overwritten (numpy and cupy's ufuncs copy such an input; a kernel does not)."""
    return all(i == k or arrays.get(i) is None or _key(devices, i, arrays[i]) != key
               for i in s.ins)


def plan_inplace(steps: list[Step], arrays: dict[int, Any], devices: dict[int, Any],
                 pinned: set[int]) -> dict[int, int]:
    """For each step index that can run in place, the input slot it writes into.

    Args:
        steps: the kept steps, in order.
        arrays: slot -> the array it held while tracing.
        devices: slot -> its device (whose backend says which buffer an array lives in).
        pinned: slots whose buffers must never be written: arguments, constants, variable
            values, results, variable writes.
    """
    last_use, buffers = _buffers(steps, arrays, devices, pinned)
    chosen: dict[int, int] = {}
    for j, s in enumerate(steps):
        if s.out_form is None or len(s.outs) != 1:
            continue
        out = arrays.get(s.outs[0])
        for k in s.ins:
            a = arrays.get(k)
            if not _fits(s.backend, a, out):
                continue
            key = _key(devices, k, a)
            entry = buffers[key]
            if entry[1] and entry[0] == j and last_use.get(k) == j \
                    and _sole_reader(s, k, key, arrays, devices):
                chosen[j] = k
                # k's buffer now holds the result; the result's own (traced) buffer group
                # stands for it from here on, so k's entry is never chosen again
                entry[1] = False
                break
    return chosen


def plan_variable_updates(steps: list[Step], arrays: dict[int, Any], devices: dict[int, Any],
                          reads: dict[int, int], writes: dict[int, int],
                          pinned: set[int]) -> dict[int, int]:
    """Steps that compute a variable's new value from its old one element-wise (an
    optimizer's ``v - lr * g``), where the old value is not needed afterwards: step index
    -> the old value's slot, to write into.

    Whether the old array is the variable's alone (no tensor read earlier and kept, no
    view) can only be known when a call starts: ``Plan.run`` checks that first.

    Args:
        reads: id(variable) -> the slot of its first read.
        writes: id(variable) -> the slot of its final value.
        pinned: the slots no element-wise step may write (see ``plan_inplace``); the old
            values in question are among them, and only they are exempted here.
    """
    producer = {s.outs[0]: j for j, s in enumerate(steps) if len(s.outs) == 1}
    # the buffers' last uses once, and which pinned slots each buffer holds: a buffer is
    # writable for a variable's update when no pinned slot but the variable's old value is
    # in it (what _buffers(..., pinned - {old}) says, without a pass over the trace per
    # variable: that made tracing a model of N variables cost N passes, 14 s at 463)
    _, buffers = _buffers(steps, arrays, devices, set())
    pinned_in: dict[tuple[str, int], set[int]] = {}
    for k in pinned:
        if k in arrays:
            pinned_in.setdefault(_key(devices, k, arrays[k]), set()).add(k)
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
        if not _fits(s.backend, a, arrays.get(final)):
            continue
        key = _key(devices, old, a)
        last, _ = buffers[key]
        writable = not (pinned_in.get(key, set()) - {old})
        if writable and last == j and _sole_reader(s, old, key, arrays, devices):
            chosen[j] = old
    return chosen
