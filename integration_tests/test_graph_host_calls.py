"""Host calls (``Tracer.defer_to_host``): what a library hands to the host from inside a
traced function (a summary writer does) runs after each call with that call's values,
as they were where it was handed on, without a host read in the replay (no guard, no
retrace, a CUDA graph stays captured); under a GradientTape and through a custom gradient
too (graph with tape: an integration test, since ember-graph's own tests run without
ember-tape)."""

from __future__ import annotations

import contextvars

import numpy as np
from numpy.testing import assert_array_equal

import ember.core as em
from ember import graph, tape
from ember.core import recording
from ember.core.testing import simulated_gpus

marker = contextvars.ContextVar("test_host_calls_marker", default=None)


class Log:
    """A stand-in for a library that needs values on the host (as ember.summary does):
    inside a traced function it hands its work to the tracer, else it does it now."""

    def __init__(self):
        self.seen = []

    def write(self, tag, *values):
        for tracer in reversed(recording.tracers()):
            if tracer.defer_to_host(lambda *v: self._record(tag, v), values):
                return
        self._record(tag, values)

    def _record(self, tag, values):
        self.seen.append((tag, [_host(v) for v in values]))


def _host(v):
    if isinstance(v, em.Tensor):
        return v.numpy().tolist()
    if isinstance(v, (list, tuple)):
        return [_host(x) for x in v]
    return v


def test_values_are_those_of_each_call_where_they_were_handed_on():
    log = Log()
    count = em.Variable(0)

    @graph.function
    def step(x):
        y = x * 2.0
        log.write("y", y, count, "python", [x, 7])
        count.assign_add(1)  # after the hand-off: the host call sees the value before
        log.write("after", count)
        return y + 1.0

    for k in range(4):
        out = step(em.constant([float(k)]))
        assert_array_equal(out.numpy(), [2.0 * k + 1.0])
    assert step.experimental_get_tracing_count() == 1
    assert log.seen == [entry for k in range(4) for entry in (
        ("y", [[2.0 * k], k, "python", [[float(k)], 7]]), ("after", [k + 1]))]
    assert int(count) == 4


def test_the_first_call_that_is_not_kept_still_makes_its_host_calls():
    log = Log()
    made = []

    @graph.function
    def step(x):
        if not made:
            made.append(em.Variable(1.0))  # variables are made on the first call only
        log.write("x", x * made[0])
        return x

    for k in range(3):
        step(em.constant(float(k)))
    assert [v for _, (v,) in log.seen] == [0.0, 1.0, 2.0]
    assert step.experimental_get_tracing_count() == 2  # the first call was not kept


def test_the_tracer_knows_the_context_the_call_began_in():
    seen = []

    @graph.function
    def f(x):
        (tracer,) = recording.tracers()
        seen.append(tracer.entry_context.get(marker))
        return x

    token = marker.set("outside")
    try:
        f(em.constant(1.0))
    finally:
        marker.reset(token)
    assert seen == ["outside"]


def test_a_captured_replay_makes_host_calls_without_syncs():
    log = Log()
    with simulated_gpus(1, strict=True) as (gpu,), em.device("/gpu:0"):
        f = graph.function(lambda x: log.write("x", x * 3.0 + 1.0) or x * 2.0)
        xs = [em.constant(np.full(4, k, np.float32)) for k in range(5)]
        values = []
        for x in xs:
            counters = gpu.backend.counters
            counters.reset()
            f(x)
            values.append(log.seen.pop()[1][0])  # the host read: after the call
        assert counters.syncs == 1  # the log's own read of its value
        assert f.cuda_graph_status() == ["call: captured (launched 3 times)"]
    assert values == [[3.0 * k + 1.0] * 4 for k in range(5)]


def test_a_replay_under_a_tape_makes_its_host_calls():
    log = Log()
    w = em.Variable(3.0)

    @graph.function
    def forward(x):
        y = x * w
        log.write("y", y)
        return y

    for k in range(3):
        x = em.constant(float(k + 1))
        with tape.GradientTape() as t:
            y = forward(x)
        (g,) = t.gradient(y, [w])
        assert float(g) == k + 1
    assert [v for _, (v,) in log.seen] == [3.0, 6.0, 9.0]
    assert forward.experimental_get_tracing_count() == 1


def test_a_gradient_trace_takes_no_host_calls():
    """A host call handed on while a replay's gradient is traced could not be made after
    each gradient: that tracer refuses it, and the library does its work now."""
    log = Log()

    @tape.custom_gradient
    def noted(x):
        def grad(dy):
            log.write("dy", dy)
            return dy * 2.0
        return x * 2.0, grad

    f = graph.function(lambda x: noted(x))
    x = em.constant(1.0)
    with tape.GradientTape() as t:
        t.watch(x)
        y = f(x)
    assert float(t.gradient(y, [x])[0]) == 2.0
    assert log.seen[0] == ("dy", [1.0])  # written while the gradient was traced
