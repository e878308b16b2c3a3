"""Host calls: work a traced function hands to the host after each call.

A summary written inside a traced training step needs its value on the host. Read there
(``float(loss)``), the value would be a guard that fails on every call whose loss
differs, and the step would end up running eagerly. Instead the summary op hands its
call to the tracer (``Tracer.defer_to_host``): the tensors it would read become extra
outputs of the replay, and after each call the function calls it again with the Tensors
of that call, as if the op had run just after the function returned, with the values it
saw where it ran. The replay itself reads nothing on the host, so it stays traced (and a
GPU replay stays captured as a CUDA graph); a writer that skips a step never reads its
value.

ember-graph knows nothing of summaries: any library can hand work to the host this way
(``recording.tracers()``, then ``defer_to_host`` where a tracer has it).
"""

from __future__ import annotations

from typing import Any

from ._outputs import rebuild, structure
from ._trace import Tracer


def host_structure(tracer: Tracer, slots: list[int]) -> list[tuple[Any, Any]]:
    """Each host call of ``tracer``'s trace as (fn, its arguments' structure), appending the
    slots of the tensors they take to ``slots`` (the replay's outputs)."""
    return [(fn, structure(values, tracer, slots))
            for fn, values in tracer.trace.host_calls]


def run_host_calls(calls: list[tuple[Any, Any]], outs: list[Any] | None = None) -> None:
    """Make the host calls of one call: with the traced call's own values (``outs`` None),
    or with a replay's outputs ``outs`` (``calls`` from ``host_structure``)."""
    for fn, values in calls:
        fn(*(values if outs is None else rebuild(values, outs)))
