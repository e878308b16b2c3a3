"""``input_signature`` with ``None`` dimensions under a GradientTape: a traced training step and
a traced forward under a tape differentiate like eager at every size (graph with tape, so
an integration test: ember-graph's own tests run without ember-tape)."""

from __future__ import annotations

import numpy as np
from numpy.testing import assert_array_equal

import ember.core as em
from ember import graph, tape

rng = np.random.default_rng(0)
X = graph.TensorSpec([None, 3], em.float32)


def _batch(n, cols=3):
    return rng.standard_normal((n, cols)).astype(np.float32)


def test_a_training_step_with_a_mean_loss_trains_like_eager_at_every_batch_size():
    """The gradient of a mean over the batch divides by the batch size (a Python integer
    in the tape's rule): a replay at another size would be wrong, so none happens."""

    def make():
        w = em.Variable(np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2))

        def step(x, y):
            with tape.GradientTape() as t:
                loss = em.reduce_mean(em.square(em.matmul(x, w) - y))
            (g,) = t.gradient(loss, [w])
            w.assign_sub(0.1 * g)
            return loss

        return step, w

    traced_step, w_traced = make()
    eager_step, w_eager = make()
    f = graph.function(traced_step, input_signature=[X, graph.TensorSpec([None, 2])])
    for n in [8, 8, 3, 8, 3, 5]:
        x, y = _batch(n), _batch(n, 2)
        assert_array_equal(f(x, y).numpy(), eager_step(em.constant(x), em.constant(y)).numpy())
        assert_array_equal(w_traced.numpy(), w_eager.numpy())
    assert f.experimental_get_tracing_count() == 3

def test_a_traced_forward_under_a_tape_differentiates_at_every_size():
    def fn(x):
        return em.reduce_mean(x * x)

    f = graph.function(fn, input_signature=[X])
    for n in [4, 2, 4, 2]:
        x = em.constant(_batch(n))
        grads = []
        for g in (f, fn):
            with tape.GradientTape() as t:
                t.watch(x)
                y = g(x)
            grads.append(t.gradient(y, [x])[0].numpy())
        assert_array_equal(grads[0], grads[1])
    assert f.experimental_get_tracing_count() == 2
