"""``input_signature`` with ``None`` dimensions under a GradientTape: a traced training step and
a traced forward under a tape differentiate like eager at every size (graph with tape, so
an integration test: ember-graph's own tests run without ember-tape)."""

from __future__ import annotations

import numpy as np
from numpy.testing import assert_array_equal

import ember.core as em
from ember import graph, nn, tape

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


def test_a_dense_model_trained_with_sgd_at_two_batch_sizes_trains_like_eager(backend):
    """The everyday case: a Dense model, a tape and SGD inside the traced step, batches of
    16 and a last batch of 6. One trace per batch size (the mean loss's gradient divides by
    it), then replays; losses and weights equal eager training's bit for bit."""
    x_all = rng.standard_normal((38, 3)).astype(np.float32)
    y_all = rng.integers(0, 4, 38).astype(np.int64)
    runs = []
    for traced in (False, True):
        em.random.set_seed(0)
        model = nn.Sequential([nn.layers.Dense(8, activation="relu"), nn.layers.Dense(4)])
        model(em.constant(x_all[:1]))  # built before the step (variables made eagerly)
        opt = nn.optimizers.SGD(0.1)
        loss_fn = nn.losses.SparseCategoricalCrossentropy(from_logits=True)

        def step(x, y, model=model, opt=opt, loss_fn=loss_fn):
            with tape.GradientTape() as t:
                loss = loss_fn(y, model(x, training=True))
            grads = t.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        if traced:
            step = graph.function(step, input_signature=[
                X, graph.TensorSpec([None], em.int64)])
        losses = []
        for _ in range(3):  # epochs: 16, 16, 6 each
            for i in range(0, 38, 16):
                loss = step(em.constant(x_all[i:i + 16]), em.constant(y_all[i:i + 16]))
                assert loss.device == backend
                losses.append(loss.numpy())
        runs.append((losses, [v.numpy() for v in model.variables]))
        if traced:
            assert step.experimental_get_tracing_count() == 2 and step.cache_size() == 2
    assert_array_equal(runs[0][0], runs[1][0])
    for a, b in zip(runs[0][1], runs[1][1]):
        assert_array_equal(a, b)
