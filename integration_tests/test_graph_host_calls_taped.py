"""Host calls deferred out of a traced replay (``defer_to_host``) under a GradientTape and
through a custom gradient: graph with tape, so an integration test (ember-graph's own tests
run without ember-tape)."""

from __future__ import annotations

import contextvars

import ember.core as em
from ember import graph, tape
from ember.core import recording

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
