"""Training traced by graph.function trains exactly as eager training does."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember import graph, nn, tape

RNG = np.random.default_rng(0)
X = RNG.standard_normal((32, 20)).astype(np.float32)
Y = RNG.integers(0, 10, 32)


def _model():
    em.random.set_seed(0)
    return nn.Sequential([nn.layers.Dense(64, activation="relu"), nn.layers.Dropout(0.5),
                          nn.layers.BatchNormalization(), nn.layers.Dense(10)])


def _step(model, opt, x, y):
    loss_fn = nn.losses.SparseCategoricalCrossentropy(from_logits=True)
    with tape.GradientTape() as t:
        loss = loss_fn(y, model(x, training=True))
    grads = t.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss


@pytest.mark.parametrize("make_opt", [lambda: nn.optimizers.Adam(1e-3),
                                      lambda: nn.optimizers.SGD(0.05, momentum=0.9,
                                                                nesterov=True),
                                      lambda: nn.optimizers.RMSprop(1e-3)],
                         ids=["adam", "sgd_nesterov", "rmsprop"])
def test_traced_step_trains_bit_for_bit_like_eager(make_opt):
    """tape + optimizer + batch norm + dropout, 20 steps, different batches each step."""
    batches = [(em.constant(RNG.standard_normal((32, 20)).astype(np.float32)),
                em.constant(RNG.integers(0, 10, 32))) for _ in range(20)]
    runs = []
    for traced in (False, True):
        model, opt = _model(), make_opt()
        model(em.constant(X))
        step = graph.function(_step) if traced else _step
        em.random.set_seed(3)
        losses = [float(step(model, opt, x, y)) for x, y in batches]
        runs.append((losses, [v.numpy() for v in model.variables + opt.variables]))
        if traced:
            assert step.experimental_get_tracing_count() <= 2  # slots made on call 1
    assert runs[0][0] == runs[1][0]
    for a, b in zip(runs[0][1], runs[1][1]):
        assert_array_equal(a, b)


def test_learning_rate_assigned_between_steps_is_honoured():
    batches = [(em.constant(X), em.constant(Y))] * 6
    finals = []
    for traced in (False, True):
        model, opt = _model(), nn.optimizers.SGD(0.1)
        model(em.constant(X))
        step = graph.function(_step) if traced else _step
        for i, (x, y) in enumerate(batches):
            if i == 3:
                opt.learning_rate.assign(0.0)  # as a LearningRateScheduler callback does
            step(model, opt, x, y)
        finals.append([v.numpy() for v in model.trainable_variables])
        if traced:
            frozen = [v.numpy() for v in model.trainable_variables]
            step(model, opt, em.constant(X), em.constant(Y))
            for a, b in zip(frozen, model.trainable_variables):
                assert_array_equal(a, b.numpy())  # lr 0: nothing moves
    for a, b in zip(*finals):
        assert_array_equal(a, b)


def _fit(run_eagerly, **compile_kw):
    em.random.set_seed(1)
    m = nn.Sequential([nn.layers.Dense(16, activation="relu", input_shape=(20,)),
                       nn.layers.Dropout(0.2), nn.layers.Dense(10)])
    m.compile(nn.optimizers.Adam(1e-2),
              nn.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"], run_eagerly=run_eagerly, **compile_kw)
    h = m.fit(X, Y, batch_size=8, epochs=2, verbose=0, shuffle=False)
    ev = m.evaluate(X, Y, batch_size=5, return_dict=True)
    return m, h.history, ev, m.predict(X, batch_size=6)


def test_fit_evaluate_predict_trace_by_default_and_match_run_eagerly():
    m_eager, *eager = _fit(True)
    m_graph, *traced = _fit(False)
    assert not m_graph.run_eagerly and m_eager.run_eagerly
    assert eager[0] == traced[0] and eager[1] == traced[1]
    assert_array_equal(eager[2], traced[2])
    steps = m_graph._ember.extra["traced_steps"]
    assert {"train_step", "test_step", "predict"} <= set(steps)
    assert steps["train_step"][1].experimental_get_tracing_count() <= 2


def test_freezing_a_layer_between_fits_retraces():
    m, *_ = _fit(False)
    first = m.layers[0]
    before = [v.numpy() for v in first.variables]
    first.trainable = False
    m.fit(X, Y, batch_size=8, epochs=1, verbose=0)
    for a, v in zip(before, first.variables):
        assert_array_equal(a, v.numpy())


def test_run_eagerly_must_be_a_bool():
    m = nn.Sequential([nn.layers.Dense(2)])
    with pytest.raises(TypeError, match="run_eagerly"):
        m.compile("sgd", "mse", run_eagerly="yes")
