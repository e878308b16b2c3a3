"""Tensors that leak out of a trace.

A traced call runs the function eagerly, so every tensor it makes holds a real value. Kept
outside the function without being returned (``global x; x = a + 1``, ``self.last = h``),
such a tensor would hold the traced call's value for ever: replays compute new values in
the plan's buffers and never touch it. TensorFlow's leaked tensors are graph tensors that
raise when used; ember's do the same: after a trace, each tensor the call made is expired
(``extend.expire``), and the call returns new tensors of its results, as a replay does.

What a trace did not make is left alone: the arguments, captured values, and the values
variables held or were given (a variable holds its tensor). So are the values handed to
host calls (``_host_calls``), which a host function may keep.
"""

from __future__ import annotations

from typing import Any

from ember.core.extend import array_of, device_of, expire, tensor_from_array

from ._outputs import rebuild
from ._trace import Tracer


def hand_out(tracer: Tracer, nest: Any, slots: list[int], n_results: int, name: str) -> Any:
    """The traced call's result (``nest`` over the first ``n_results`` of ``slots``), as new
    tensors; then every other tensor the call made is expired (see the module docstring)."""
    tensors = tracer.tensors()
    result = rebuild(nest, [tensor_from_array(array_of(tensors[k]), device_of(tensors[k]))
                            for k in slots[:n_results]])
    trace = tracer.trace
    keep = set(trace.inputs) | set(trace.constants) | set(slots[n_results:])
    keep.update(k for _, k in trace.var_reads)
    keep.update(k for _, k in trace.var_writes.values())
    why = _why(name)
    made_by = {k: step.name for step in trace.steps for k in step.outs}
    for k, t in enumerate(tensors):
        if k not in keep:
            expire(t, f"a {t.dtype} tensor of shape {t.shape} (made by op "
                      f"{made_by.get(k, '?')!r}) was used after it leaked out of a trace: {why}")
    return result


def _why(name: str) -> str:
    return (f"it was computed while graph.function {name} was traced, and kept "
            "outside the function without being returned from it (in a global, an "
            "attribute, a list, ...): later calls replay the trace and do not update it, so "
            "its value would be the first call's. Return the value from the function and "
            "use what the call returns (TensorFlow refuses a leaked tensor too)")
