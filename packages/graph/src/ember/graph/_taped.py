"""A traced function called under a gradient tape: one op on the tape, its gradient the
traced backward.

The first call with a signature runs the function eagerly (the tapes around it record it
op by op) while a tracer records it and the tape package's ``Differentiator`` watches the
float arguments the tapes watch (they are part of the cache key) and the trainable
variables the function reads. Then the differentiator's gradient
runs once more under a second tracer, seeded with ones: that trace is the *backward plan*.
Its inputs are the output gradients and the forward values it uses (saved values, as a
tape keeps them), so the *forward plan* returns those values beside the results.

Later calls replay the forward plan and tell the tapes around the call that one op ran,
from the float arguments and the variables' values to the float results; its gradient
replays the backward plan on the saved values. A replay never runs the function's Python
again, so its side effects (variable updates, random draws) happen once per call, as they
did in the forward pass.

When a recorder is active while the gradient is computed (a second-order gradient, or a
tracer), the replayed backward would be one untracked result, so the gradient instead runs
the function again eagerly, under a fresh differentiation that every active recorder sees
op by op. That is only the same computation for a *pure* function (no variable writes, no
random draws, the variables still holding what the call read): for other functions a call
under two or more tapes runs eagerly from the start, and a gradient that still needs it
raises an error that says so.
"""

from __future__ import annotations

from typing import Any

import ember.core as em
from ember.core import extend, recording

from ._host_calls import host_structure, run_host_calls
from ._outputs import rebuild, structure, tensors_in
from ._plan import Plan, live_steps
from ._signature import Signature
from ._trace import Tracer


class TapedEntry:
    """The forward and backward plans of one signature, called under a tape."""

    __slots__ = ("bwd", "dy_used", "fn", "fwd", "g_idx", "host", "n_outs", "n_results", "pure",
                 "src_idx", "structure", "t_idx", "unlisted", "variables")

    def __init__(self, fn: Any, fwd: Plan, bwd: Plan | None, structure: Any, n_results: int,
                 src_idx: list[int], t_idx: list[int], variables: list[Any],
                 unlisted: list[Any], dy_used: list[int], g_idx: list[int],
                 pure: bool, host: list[tuple[Any, Any]], n_outs: int) -> None:
        self.fn = fn
        self.fwd = fwd
        self.bwd = bwd
        self.structure = structure
        self.n_results = n_results
        self.src_idx = src_idx  # leaves that are sources (watched float arguments)
        self.t_idx = t_idx  # results that are targets (float results)
        self.variables = variables  # trainable variables read, as the tape watched them
        self.unlisted = unlisted  # the other variables read
        self.dy_used = dy_used  # targets whose output gradient the backward reads
        self.g_idx = g_idx  # sources and variables with a gradient (the backward's results)
        self.pure = pure  # no variable writes and no random draws
        self.host = host  # host calls (_host_calls), their values outputs n_results..n_outs
        self.n_outs = n_outs  # results and host values; the saved values follow

    def plans(self) -> list[tuple[str, Plan]]:
        return [("forward", self.fwd)] + ([("backward", self.bwd)] if self.bwd else [])

    def replayable(self) -> bool:
        """False when the call must run eagerly: an active tape watches a variable the
        function reads that this trace gives no gradient (a non-trainable or frozen one it
        was told to watch), or the function is not pure and two tapes are active (the
        outer one could differentiate the inner one's gradient, see the module)."""
        recs = recording.active_recorders()
        if not self.pure and sum(callable(getattr(r, "gradient", None)) for r in recs) > 1:
            return False
        if not self.unlisted:
            return True
        for r in recs:
            watched = getattr(r, "watched_variables", None)
            if callable(watched):
                ids = {id(v) for v in watched()}
                if any(id(v) in ids for v in self.unlisted):
                    return False
        return True

    def call(self, sig: Signature, d: Any) -> Any:
        """Replay forward and record the call on the active tapes as one op.

        Raises:
            GuardFailed: from the forward plan (nothing was written or recorded).
        """
        var_values = [v.value() for v in self.variables]  # the reads the tapes see
        outs = self.fwd.run(sig.leaves)
        n = self.n_results
        results, saved = outs[:n], outs[self.n_outs:]
        if self.host:
            run_host_calls(self.host, outs)
        bwd = self.bwd
        if bwd is not None:
            inputs = [sig.leaves[i] for i in self.src_idx] + var_values
            dy_used, g_idx, n_in = self.dy_used, self.g_idx, len(inputs)

            def grad_fn(dys: list[Any]) -> list[Any]:
                if recording.active_recorders():
                    return self._recompute(sig, d, var_values, dys)
                grads: list[Any] = [None] * n_in
                for j, g in zip(g_idx, bwd.run([dys[i] for i in dy_used] + saved)):
                    grads[j] = g
                return grads

            d.record_call(inputs, [results[r] for r in self.t_idx], grad_fn)
        return rebuild(self.structure, results)

    def _recompute(self, sig: Signature, d: Any, var_values: list[Any], dys: list[Any]
                   ) -> list[Any]:
        """The gradient computed again eagerly, so that the active recorders see it."""
        name = getattr(self.fn, "__qualname__", repr(self.fn))
        if not self.pure:
            raise RuntimeError(
                f"graph.function {name}: a tape records the gradient of a replayed call "
                "(a second-order gradient), and the function writes variables or draws "
                "random numbers, so it cannot be run again to record it. Call it under both "
                "tapes (it then runs eagerly), or use graph.run_functions_eagerly(True)")
        for v, value in zip(self.variables, var_values):
            if extend.array_of(extend.read_without_recording(v)) is not \
                    extend.array_of(value):
                raise RuntimeError(
                    f"graph.function {name}: variable {v.name!r} changed between the call "
                    "and the second-order gradient of it, which runs the function again")
        result, _, grad = d.differentiate(lambda: self.fn(*sig.args, **sig.kwargs),
                                          [sig.leaves[i] for i in self.src_idx])
        flat = tensors_in(result)
        return grad([flat[r] for r in self.t_idx], dys)


def trace_taped(fn: Any, sig: Signature, d: recording.Differentiator, src_idx: list[int],
                tracer: Tracer) -> tuple[Any, Any, str | None, str | None]:
    """Trace one call under a tape into ``tracer`` (the call is eager: the tapes around it
    record it), differentiating with respect to the float arguments ``src_idx`` (those the
    tapes watch) and the trainable variables the function reads.

    Returns:
        The call's result; the ``TapedEntry`` to replay later calls with, or None; why
        this trace cannot be replayed (``Trace.untraceable``: a later call may trace
        again), or None; why no call with this signature can be replayed under a tape
        (its gradient cannot), or None.
    """
    leaves = sig.leaves
    token = recording.push(tracer)
    try:
        result, variables, grad = d.differentiate(
            lambda: fn(*sig.args, **sig.kwargs), [leaves[i] for i in src_idx])
    finally:
        recording.pop(token)
    trace = tracer.trace
    if trace.untraceable is not None:
        return result, None, trace.untraceable, None
    slots: list[int] = []
    nest = structure(result, tracer, slots)
    n_results = len(slots)
    host = host_structure(tracer, slots)  # host calls' values: outputs after the results
    fwd_tensors = tracer.tensors()
    t_idx = [r for r, k in enumerate(slots[:n_results])
             if extend.is_differentiable(fwd_tensors[k].dtype)]
    listed = {id(v) for v in variables}
    unlisted = list({id(v): v for v, _ in trace.var_reads if id(v) not in listed}.values())
    if not t_idx:  # no float result: nothing for a tape to differentiate
        entry = TapedEntry(fn, Plan(trace, slots), None, nest, n_results, src_idx, t_idx,
                           [], [], [], [], True, host, len(slots))
        return result, entry, None, None

    targets = [fwd_tensors[slots[r]] for r in t_idx]
    with extend.recording_to():
        dys = [em.ones_like(t) for t in targets]
    btracer = Tracer(dys + fwd_tensors, host_calls=False)  # a summary there reads now
    try:
        with extend.recording_to(btracer):
            grads = grad(targets, dys)
    except Exception as e:  # the tape raises it again when the gradient is asked for
        return result, None, None, f"its gradient raised {type(e).__name__}: {e}"
    bt = btracer.trace
    why = bt.untraceable or ("its gradient reads values on the host" if bt.guards else
                             "its gradient reads or writes variables"
                             if bt.var_reads or bt.var_writes else None)
    if why is not None:
        return result, None, None, why
    g_idx = [j for j, g in enumerate(grads) if g is not None]
    out_slots = [btracer.slot_of(grads[j]) for j in g_idx]
    _, needed = live_steps(bt, out_slots)
    n_t = len(dys)
    dy_used = [i for i in range(n_t) if i in needed]
    saved = [k for k in range(len(fwd_tensors)) if n_t + k in needed]
    bt.inputs = dy_used + [n_t + k for k in saved]  # leaf i has slot i
    bwd = Plan(bt, out_slots)
    fwd = Plan(trace, slots + saved)
    pure = not trace.var_writes and not any(
        st.attrs and "generator" in st.attrs for st in trace.steps)
    return result, TapedEntry(fn, fwd, bwd, nest, n_results, src_idx, t_idx, variables,
                              unlisted, dy_used, g_idx, pure, host, len(slots)), None, None
