"""A plan: a trace with dead steps removed, slots renumbered, and memory freed early.

``Plan.run`` is the replay: one loop over pre-bound ``(forward, backend, inputs, outputs,
attrs)`` tuples on backend arrays, with no Tensor wrapping, no recorder and no tape.
Variable writes are committed only after every step (guards included) has passed, so a
replay that fails a guard changes nothing but the random generators it drew from, and
those are put back.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

import ember.core as em
from ember.core.extend import array_of, read_without_recording, tensor_from_array

from ._cuda_graph import REPLAY_FILE, Capturing, blocker
from ._fuse import fold_constants, fuse_elementwise
from ._inplace import plan_inplace, plan_variable_updates
from ._trace import GuardFailed, Step, Trace


class Plan:
    """The replayable form of a ``Trace`` whose results are ``output_slots``."""

    def __init__(self, trace: Trace, output_slots: list[int]) -> None:
        kept, needed = live_steps(trace, output_slots)
        # On a GPU, runs of element-wise ops become one generated kernel each (_fuse).
        keep = set(output_slots) | {k for _, k in trace.var_writes.values()}
        kept = fold_constants(kept, trace, keep)  # (on a GPU: no launches for constants)
        kept, self.fusion_skipped = fuse_elementwise(kept, trace, keep)
        self.ops_fused = sum(s.name.startswith("fused[") for s in kept)
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
        self.names = [s.name for s in kept]
        self.has_guards = trace.guards > 0
        pinned = set(trace.inputs) | set(trace.constants) | {k for _, k in trace.var_reads}
        pinned |= set(output_slots) | {k for _, k in trace.var_writes.values()}
        inplace = plan_inplace(kept, trace.arrays, trace.devices, pinned)
        self.ops_in_place = len(inplace)
        self.steps_in_place = [self.names[j] for j in sorted(inplace)]
        io = (self.inputs, [i for _, i in self.var_loads], template,
              [i for _, i, _ in self.var_stores], [i for i, _ in self.outputs])
        self.replay = _compile(kept, number, frees, inplace, *io)
        # Variables updated in their own buffers (an optimizer's step), where nothing else
        # can read the old value: only without guards (a failed replay must change nothing)
        # and, checked per call, only when the variable's array is its alone.
        first_read: dict[int, int] = {}
        for v, k in trace.var_reads:
            first_read.setdefault(id(v), k)
        # an old value the call returns (or hands to the host) keeps its own buffer
        results = set(output_slots)
        old_values = {vid: k for vid, k in first_read.items() if k not in results}
        updates = {} if trace.guards or any(st.shapes for st in kept) else \
            plan_variable_updates(kept, trace.arrays, trace.devices, old_values,
                                  {vid: k for vid, (_, k) in trace.var_writes.items()},
                                  pinned | set(output_slots))
        loaded = {id(v) for v, _ in self.var_loads}
        self.updated_in_place = [v for vid, (v, k) in trace.var_writes.items()
                                 if first_read.get(vid) in updates.values() and vid in loaded]
        self.replay_updating = _compile(kept, number, frees, {**inplace, **updates}, *io) \
            if updates and len(self.updated_in_place) == len(updates) else None
        # On a GPU, the replay is captured as a CUDA Graph (_cuda_graph).
        devices = [trace.devices[k] for k in trace.inputs if k in trace.devices]
        devices += [d for _, d in self.outputs] + [d for _, _, d in self.var_stores]
        self.cuda_graph_blocker = blocker(self, kept, devices)
        self.cuda_graph = Capturing(devices[0], [g for _, g in self.generators]) \
            if self.cuda_graph_blocker is None else None

    def cuda_graph_status(self) -> str:
        """Whether this plan replays as a CUDA Graph, and if not, why."""
        if self.cuda_graph is not None:
            return self.cuda_graph.status()
        return f"not captured: {self.cuda_graph_blocker}"

    def disable_cuda_graph(self, why: str) -> None:
        self.cuda_graph, self.cuda_graph_blocker = None, why

    def run(self, leaves: list[Any]) -> list[Any]:
        """Replay on the argument tensors ``leaves``; returns the output Tensors.

        Raises:
            GuardFailed: a guarded value differs from the traced call's (nothing was
                written; the caller runs the function eagerly instead).
        """
        replay = self.replay
        if self.replay_updating is not None and all(
                _alone(v) for v in self.updated_in_place):
            replay = self.replay_updating
        args = [array_of(t) for i, t in zip(self.inputs, leaves) if i >= 0]
        for v, _ in self.var_loads:
            args.append(_var_array(v))
        for v, i in self.var_checks:
            if _var_array(v) is not _defined(self, i, leaves):
                raise GuardFailed(f"variable {v.name!r} no longer holds the tensor it held "
                                  "when the function was traced")
        saved = [g.state for _, g in self.generators] if self.has_guards else None
        try:
            if self.cuda_graph is not None:  # no guards there: GuardFailed cannot happen
                stores, outs = self.cuda_graph.run(replay, args)
            else:
                stores, outs = replay(*args)
        except GuardFailed:
            if saved is not None:
                for (_, g), st in zip(self.generators, saved):
                    g.state = st
            raise
        for (v, _, dev), a in zip(self.var_stores, stores):
            v.assign(tensor_from_array(a, dev), read_value=False)
        return [tensor_from_array(a, dev) for (_, dev), a in zip(self.outputs, outs)]


def live_steps(trace: Trace, output_slots: list[int]) -> tuple[list[Step], set[int]]:
    """The steps a replay that returns ``output_slots`` must run (those whose results are
    used, the variable writes' and the stateful ones), and the slots they need."""
    needed = set(output_slots)
    needed.update(k for _, k in trace.var_writes.values())
    kept = []
    for step in reversed(trace.steps):
        if step.stateful or any(o in needed for o in step.outs):
            kept.append(step)
            needed.update(step.ins)
    kept.reverse()
    return kept, needed


def _counts(v: Any) -> tuple[int, int]:
    """References to a variable's value tensor and to its array, counted from here."""
    t = read_without_recording(v)
    a = array_of(t)
    return sys.getrefcount(t), sys.getrefcount(a)


# The counts for a variable whose value nobody else holds (made here, so nothing else can).
_ALONE = _counts(em.Variable(np.zeros(2, np.float32)))


def _alone(v: Any) -> bool:
    """True when nothing but ``v`` holds its value tensor and array (no tensor read earlier
    and kept, no numpy view, no earlier result): its array may be updated in place."""
    t, a = _counts(v)
    return t <= _ALONE[0] and a <= _ALONE[1]


def _defined(plan: Plan, i: int, leaves: list[Any]) -> Any:
    """The array slot ``i`` holds before any step runs (an argument or a constant)."""
    for k, t in zip(plan.inputs, leaves):
        if k == i:
            return array_of(t)
    for v, k in plan.var_loads:
        if k == i:
            return _var_array(v)
    return plan.template[i]


def _compile(steps: list[Step], number: dict[int, int], frees: list[list[int]],
             inplace: dict[int, int], inputs: list[int], var_loads: list[int],
             template: list[Any],
             stores: list[int], outputs: list[int]) -> Any:
    """The replay as one generated Python function: each step a line on local variables
    (no list indexing, no loop), each intermediate deleted after its last use."""
    ns: dict[str, Any] = {"GuardFailed": GuardFailed, "tuple": tuple, "type": type}
    params = [f"x{i}" for i in inputs if i >= 0] + [f"x{i}" for i in var_loads]
    lines = [f"def replay({', '.join(params)}):"]
    step_at: dict[int, str] = {}  # generated line -> the op it runs (a failure names it)
    for i, a in enumerate(template):
        if a is not None:
            ns[f"C{i}"] = a
            lines.append(f"    x{i} = C{i}")
    for j, s in enumerate(steps):
        ns[f"F{j}"], ns[f"B{j}"] = s.forward, s.backend
        call = [f"B{j}"] + [f"x{number[k]}" for k in s.ins]
        if j in inplace:  # the out= form, into a dead input's buffer (see _inplace)
            ns[f"F{j}"] = s.out_form
            call.append(f"out=x{number[inplace[j]]}")
        for key, value in (s.attrs or {}).items():
            ns[f"A{j}_{key}"] = value
            call.append(f"{key}=A{j}_{key}")
        expr = f"F{j}({', '.join(call)})"
        outs = [f"x{number[k]}" for k in s.outs]
        step_at[len(lines) + 1] = s.name  # the line that calls it, numbered from 1
        if not outs:
            lines.append(f"    {expr}")
        elif len(outs) == 1:
            o = outs[0]
            lines.append(f"    {o} = {expr}")
            lines.append(f"    if type({o}) is tuple: {o} = {o}[0]")
        else:
            lines.append(f"    {', '.join(outs)} = {expr}")
        if s.shapes is not None:
            for m, (o, shape) in enumerate(zip(outs, s.shapes)):
                ns[f"S{j}_{m}"] = shape
                lines.append(f"    if tuple({o}.shape) != S{j}_{m}: raise GuardFailed("
                             f"'an op whose result shape depends on values ({s.name}) gave "
                             "a new shape')")
        if frees[j]:
            lines.append(f"    del {', '.join(f'x{k}' for k in frees[j])}")
    lines.append(f"    return ({''.join(f'x{i}, ' for i in stores)}), "
                 f"({''.join(f'x{i}, ' for i in outputs)})")
    exec(compile("\n".join(lines), REPLAY_FILE, "exec"), ns)
    ns["replay"].step_at = step_at
    return ns["replay"]


def _var_array(v: Any) -> Any:
    return array_of(read_without_recording(v))
