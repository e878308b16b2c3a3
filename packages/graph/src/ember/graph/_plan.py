"""A plan: a trace with dead steps removed, slots renumbered, and memory freed early.

``Plan.run`` is the replay: one loop over pre-bound ``(forward, backend, inputs, outputs,
attrs)`` tuples on backend arrays, with no Tensor wrapping, no recorder and no tape.
Variable writes are committed only after every step (guards included) has passed, so a
replay that fails a guard changes nothing but the random generators it drew from, and
those are put back.
"""

from __future__ import annotations

from typing import Any

import ember.core as em
from ember.core.extend import array_of, read_without_recording, tensor_from_array

from ._trace import GuardFailed, Trace

_Tensor = em.Tensor


class Plan:
    """The replayable form of a ``Trace`` whose results are ``output_slots``."""

    def __init__(self, trace: Trace, output_slots: list[int]) -> None:
        needed = set(output_slots)
        needed.update(k for _, k in trace.var_writes.values())
        kept = []
        for step in reversed(trace.steps):
            if step.stateful or any(o in needed for o in step.outs):
                kept.append(step)
                needed.update(step.ins)
        kept.reverse()
        self.ops_recorded = len(trace.steps)
        self.ops_kept = len(kept)

        # Renumber the slots that are used, so the environment is a short list.
        used = set(needed) | {o for s in kept for o in s.outs}
        used.update(trace.inputs)
        number = {k: i for i, k in enumerate(sorted(used))}
        self.n = len(number)
        self.inputs = [number.get(k, -1) for k in trace.inputs]
        template: list[Any] = [None] * self.n
        for k, a in trace.constants.items():
            if k in number:
                template[number[k]] = a
        self.template = template

        # Variables: read at the start (the first read of each), written at the end.
        defined = set(self.inputs) | {number[k] for k in trace.constants if k in number}
        self.var_loads: list[tuple[Any, int]] = []
        self.var_checks: list[tuple[Any, int]] = []
        for v, k in trace.var_reads:
            if k not in number:
                continue
            i = number[k]
            if i in defined:
                self.var_checks.append((v, i))
            else:
                self.var_loads.append((v, i))
                defined.add(i)
        self.var_stores = [(v, number[k], trace.devices[k])
                           for v, k in trace.var_writes.values()]
        self.outputs = [(number[k], trace.devices[k]) for k in output_slots]
        self.generators = sorted({id(s.attrs["generator"]): s.attrs["generator"]
                                  for s in kept if s.attrs and "generator" in s.attrs}.items())

        # Free each intermediate after its last use (the high-water mark of a replay is
        # then no higher than the eager call's).
        keep_alive = {i for i, _ in self.outputs} | {i for _, i, _ in self.var_stores}
        last: dict[int, int] = {}
        for j, s in enumerate(kept):
            for k in s.ins:
                last[number[k]] = j
        frees: list[list[int]] = [[] for _ in kept]
        for i, j in last.items():
            if i not in keep_alive and template[i] is None:
                frees[j].append(i)
        self.steps = [(s.forward, s.backend, tuple(number[k] for k in s.ins),
                       tuple(number[k] for k in s.outs), s.attrs or {}, tuple(frees[j]),
                       s.shapes)
                      for j, s in enumerate(kept)]
        self.names = [s.name for s in kept]
        self.has_guards = trace.guards > 0

    def run(self, leaves: list[Any]) -> list[Any]:
        """Replay on the argument tensors ``leaves``; returns the output Tensors.

        Raises:
            GuardFailed: a guarded value differs from the traced call's (nothing was
                written; the caller runs the function eagerly instead).
        """
        env = self.template.copy()
        for i, t in zip(self.inputs, leaves):
            if i >= 0:
                env[i] = t._data
        for v, i in self.var_loads:
            env[i] = _var_array(v)
        for v, i in self.var_checks:
            if _var_array(v) is not env[i]:
                raise GuardFailed(f"variable {v.name!r} no longer holds the tensor it held "
                                  "when the function was traced")
        saved = [g.state for _, g in self.generators] if self.has_guards else None
        try:
            for fwd, be, ins, outs, attrs, free, shapes in self.steps:
                if len(ins) == 1:
                    r = fwd(be, env[ins[0]], **attrs)
                elif len(ins) == 2:
                    r = fwd(be, env[ins[0]], env[ins[1]], **attrs)
                else:
                    r = fwd(be, *[env[k] for k in ins], **attrs)
                if len(outs) == 1:
                    env[outs[0]] = r[0] if type(r) is tuple else r
                elif outs:
                    for k, a in zip(outs, r):
                        env[k] = a
                if shapes is not None and tuple(env[outs[0]].shape) != shapes[0]:
                    raise GuardFailed("an op whose result's shape depends on its inputs' "
                                      "values (a boolean mask, where) gave a new shape")
                for k in free:
                    env[k] = None
        except GuardFailed:
            if saved is not None:
                for (_, g), st in zip(self.generators, saved):
                    g.state = st
            raise
        for v, i, dev in self.var_stores:
            v.assign(tensor_from_array(env[i], dev), read_value=False)
        return [tensor_from_array(env[i], dev) for i, dev in self.outputs]


def _var_array(v: Any) -> Any:
    return array_of(read_without_recording(v))
