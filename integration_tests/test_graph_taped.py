"""A gradient tape around a traced call: the call is one op on the tape, its gradient the
traced backward (ember-graph's ``_taped``, through core's ``recording.Differentiator``,
which ember-tape installs). Every op of the gradient table is checked this way in
test_graph_gradients.py; these tests check what a training program does around it."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import ember.core as em
from ember import graph, nn, tape
from ember.core.testing import recorded_op_names

rng = np.random.default_rng(0)


def _f32(*shape):
    return em.constant(rng.standard_normal(shape).astype(np.float32))


def test_a_traced_model_call_trains_like_the_eager_one():
    """Keras-style: the model's forward traced, loss and optimizer eager around it."""
    x, y = _f32(8, 5), em.constant(rng.integers(0, 4, 8))

    def build():
        model = nn.Sequential([nn.layers.Dense(16, activation="relu"),
                               nn.layers.Dropout(0.3), nn.layers.Dense(4)])
        em.random.set_seed(3)
        model(x)  # builds: the same initial weights for both
        return model

    traced_model, eager_model = build(), build()
    forward = graph.function(lambda x: traced_model(x, training=True))
    loss_fn = nn.losses.SparseCategoricalCrossentropy(from_logits=True)
    opt_t, opt_e = nn.optimizers.Adam(1e-2), nn.optimizers.Adam(1e-2)
    for step in range(6):
        em.random.set_seed(step)
        with tape.GradientTape() as t:
            with recorded_op_names() as names:
                logits = forward(x)
            loss_t = loss_fn(y, logits)
        opt_t.apply_gradients(zip(t.gradient(loss_t, traced_model.trainable_variables),
                                  traced_model.trainable_variables))
        em.random.set_seed(step)
        with tape.GradientTape() as t:
            loss_e = loss_fn(y, eager_model(x, training=True))
        opt_e.apply_gradients(zip(t.gradient(loss_e, eager_model.trainable_variables),
                                  eager_model.trainable_variables))
        assert_array_equal(loss_t.numpy(), loss_e.numpy())
        if step > 0:  # replays: one op on the tape
            assert names == ["custom_gradient"]
    assert forward.experimental_get_tracing_count() == 1
    for a, b in zip(traced_model.variables, eager_model.variables):
        assert_array_equal(a.numpy(), b.numpy())


def test_second_order_replays_the_backward_op_by_op():
    @graph.function
    def cube(x):
        return x * x * x

    for v in (2.0, 3.0, -1.5):
        x = em.constant(v, dtype=em.float64)
        with tape.GradientTape() as outer:
            outer.watch(x)
            with tape.GradientTape() as inner:
                inner.watch(x)
                y = cube(x)
            g = inner.gradient(y, x)
        assert float(g) == 3 * v * v
        assert float(outer.gradient(g, x)) == 6 * v  # the backward, recorded op by op
    assert cube.experimental_get_tracing_count() == 1


def test_side_effects_run_once_per_call_not_again_in_the_backward():
    counter = em.Variable(0.0, trainable=False)
    w = em.Variable(2.0)

    @graph.function
    def f(x):
        counter.assign_add(1.0)
        return x * w * counter

    x = em.constant(3.0)
    for k in range(1, 5):
        with tape.GradientTape() as t:
            t.watch(x)
            y = f(x)
        gx, gw = t.gradient(y, [x, w])
        assert float(counter) == k
        assert float(y) == 3.0 * 2.0 * k
        assert float(gx) == 2.0 * k and float(gw) == 3.0 * k


def test_the_gradient_uses_the_forward_calls_random_draws():
    @graph.function
    def drop(x):
        return em.nn_ops.dropout(x, rate=0.5)

    x = em.constant(np.arange(1, 201, dtype=np.float32))
    seen = set()
    for _ in range(4):
        with tape.GradientTape() as t:
            t.watch(x)
            y = drop(x)
            total = em.reduce_sum(y)
        g = t.gradient(total, x).numpy()
        assert_allclose(g, y.numpy() / x.numpy())  # 2 where kept, 0 where dropped
        seen.add(tuple(g))
    assert len(seen) == 4  # a new mask each call


def test_a_value_read_on_the_host_still_picks_the_branch():
    @graph.function
    def f(x):
        if float(em.reduce_sum(x)) > 0:
            return x * x
        return -x

    with pytest.warns(UserWarning, match="changes from call to call"):  # then eager
        for v in (1.0, 2.0, -1.0, 3.0, -2.0, 5.0):
            x = em.constant([v, v])
            with tape.GradientTape() as t:
                t.watch(x)
                y = em.reduce_sum(f(x))
            want = 2 * v if v > 0 else -1.0
            assert_array_equal(t.gradient(y, x).numpy(), [want, want])


def test_an_explicitly_watched_non_trainable_variable_gets_its_gradient():
    frozen = em.Variable(4.0, trainable=False)

    @graph.function
    def f(x):
        return x * frozen

    x = em.constant(1.5)
    for _ in range(3):
        with tape.GradientTape() as t:
            t.watch(frozen)
            y = f(x)
        assert float(t.gradient(y, frozen)) == 1.5
        with tape.GradientTape() as t:  # not watched: no gradient, as in eager
            y = f(x)
        assert t.gradient(y, frozen) is None


def test_a_gradient_that_fails_fails_as_it_does_eagerly():
    @graph.function
    def f(x):
        return em.linalg.qr(x, full_matrices=True)[0]

    x = _f32(3, 2)
    for _ in range(2):
        with tape.GradientTape() as t:
            t.watch(x)
            q = f(x)
        try:
            t.gradient(q, x)
        except NotImplementedError as e:
            assert "qr gradient" in str(e)
        else:
            raise AssertionError("the QR gradient of a tall full_matrices QR must raise")


def test_integer_results_and_unconnected_sources():
    @graph.function
    def f(x, z):
        return em.argmax(x), x * 2.0

    x, z = _f32(4), _f32(4)
    for _ in range(2):
        with tape.GradientTape() as t:
            t.watch([x, z])
            i, y = f(x, z)
        gx, gz = t.gradient(y, [x, z])
        assert int(i) == int(np.argmax(x.numpy()))
        assert_array_equal(gx.numpy(), np.full(4, 2.0, np.float32))
        assert gz is None


def test_a_second_order_gradient_of_an_impure_replay():
    @graph.function
    def noisy_square(x):
        return em.square(em.nn_ops.dropout(x, rate=0.5))

    x = em.constant(np.arange(1, 9, dtype=np.float64))
    for _ in range(3):  # under two tapes the call runs eagerly: the outer sees every op
        with tape.GradientTape() as outer:
            outer.watch(x)
            with tape.GradientTape() as inner:
                inner.watch(x)
                y = em.reduce_sum(noisy_square(x))
            g = inner.gradient(y, x)
        kept = (g.numpy() != 0).astype(np.float64)
        assert_allclose(outer.gradient(g, x).numpy(), 8.0 * kept)  # d2/dx2 (2x)^2 = 8
    with tape.GradientTape() as inner:  # under one tape: replayed
        inner.watch(x)
        y = em.reduce_sum(noisy_square(x))
    with tape.GradientTape() as late:  # a tape entered later records the gradient
        late.watch(x)
        try:
            inner.gradient(y, x)
        except RuntimeError as e:
            assert "noisy_square" in str(e) and "random" in str(e)
        else:
            raise AssertionError("the gradient of an impure replay cannot be recorded")


def test_a_first_call_that_builds_the_model_is_traced_again_then_replayed():
    net = nn.Sequential([nn.layers.Dense(8, activation="tanh"), nn.layers.Dense(2)])
    forward = graph.function(lambda x: net(x))
    x = _f32(4, 3)
    for _ in range(3):
        with tape.GradientTape() as t:
            with recorded_op_names() as names:
                y = forward(x)
            total = em.reduce_sum(y)
        grads = t.gradient(total, net.trainable_variables)
        assert all(g is not None for g in grads)
    assert forward.experimental_get_tracing_count() == 2  # built, then traced
    assert names == ["custom_gradient"]


def test_only_the_arguments_a_tape_watches_are_differentiated():
    w = em.Variable(rng.standard_normal((3, 2)).astype(np.float32))

    @graph.function
    def f(x):
        return em.reduce_sum(em.matmul(x, w))

    x = _f32(4, 3)
    for watch in (False, False, True, True, False):
        with tape.GradientTape() as t:
            if watch:
                t.watch(x)
            y = f(x)
        gx, gw = t.gradient(y, [x, w])
        assert (gx is not None) == watch
        assert_allclose(gw.numpy(), np.repeat(x.numpy().sum(0)[:, None], 2, 1), rtol=1e-6)
        if watch:
            assert_allclose(gx.numpy(), np.tile(w.numpy().sum(1), (4, 1)), rtol=1e-6)
    assert f.experimental_get_tracing_count() == 2  # one trace per set of watched arguments
