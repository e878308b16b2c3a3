"""LearningRateScheduler and ReduceLROnPlateau: the rates Keras 3 sets, per argument; the new
rate reaches a traced step (the optimizer's learning-rate variable, assigned between steps),
without tracing again; rates that cannot be set are refused by name."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from test_callbacks_early_stopping import Script, Weights

import ember.core as em
from ember import nn

X = np.random.default_rng(0).standard_normal((8, 3)).astype(np.float32)
Y = X.sum(1)


def _model(lr=0.1, run_eagerly=False):
    em.random.set_seed(0)
    model = nn.Sequential([nn.layers.Dense(2, input_shape=(3,)), nn.layers.Dense(1)])
    model.compile(nn.optimizers.SGD(lr), "mse")
    model.run_eagerly = run_eagerly
    return model


def _fit(model, callbacks, epochs):
    return model.fit(X, Y, batch_size=4, epochs=epochs, shuffle=False, verbose=0,
                     callbacks=callbacks)


def _train_step(model):
    return model._ember.extra["traced_steps"]["train_step"][1]


def test_scheduler_sets_each_epochs_rate_and_a_traced_step_uses_it():
    rates = [0.1, 0.05, 0.0, 0.02]
    weights = Weights()
    model = _model()
    _fit(model, [], 1)  # traced once, before any callback
    traces = _train_step(model).experimental_get_tracing_count()
    history = _fit(model, [nn.callbacks.LearningRateScheduler(lambda e, lr: rates[e]),
                           weights], 4)
    assert_allclose(history.history["learning_rate"], rates, rtol=1e-7)
    assert _train_step(model).experimental_get_tracing_count() == traces, "retraced"
    for a, b in zip(weights.seen[1], weights.seen[2]):  # epoch 2 trained at rate 0
        assert_array_equal(a, b)
    assert not np.array_equal(weights.seen[2][0], weights.seen[3][0])
    eager = _model(run_eagerly=True)
    _fit(eager, [], 1)
    _fit(eager, [nn.callbacks.LearningRateScheduler(lambda e, lr: rates[e])], 4)
    for a, b in zip(model.get_weights(), eager.get_weights()):
        assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_scheduler_takes_keras_older_one_argument_form_and_prints(capsys):
    model = _model()
    seen = []
    history = _fit(model, [nn.callbacks.LearningRateScheduler(
        lambda epoch: seen.append(epoch) or 0.01 * 0.5 ** epoch, verbose=1)], 3)
    assert seen == [0, 1, 2]
    assert_allclose(history.history["learning_rate"], [0.01, 0.005, 0.0025], rtol=1e-7)
    assert "Epoch 3: LearningRateScheduler setting learning rate to 0.0025." in \
        capsys.readouterr().out


def test_scheduler_gets_the_current_rate_and_its_errors_are_not_hidden():
    got = []

    def schedule(epoch, lr):
        got.append(round(lr, 6))
        if epoch == 2:
            raise TypeError("a bug in the schedule")
        return lr * 0.5

    with pytest.raises(TypeError, match="a bug in the schedule"):
        _fit(_model(0.4), [nn.callbacks.LearningRateScheduler(schedule)], 3)
    assert got == [0.4, 0.2, 0.1]


@pytest.mark.parametrize("value", ["0.1", None, True, np.ones(2)])
def test_scheduler_refuses_a_rate_that_is_not_a_number(value):
    with pytest.raises(ValueError, match="must return a float"):
        _fit(_model(), [nn.callbacks.LearningRateScheduler(lambda e, lr: value)], 1)


def test_scheduler_takes_a_one_element_tensor():
    history = _fit(_model(), [nn.callbacks.LearningRateScheduler(
        lambda e, lr: em.constant(0.25))], 1)
    assert history.history["learning_rate"] == [0.25]


def test_a_rate_the_callback_cannot_set_is_refused_by_name():
    schedule = nn.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5)
    model = _model()
    model.compile(nn.optimizers.SGD(schedule), "mse")
    with pytest.raises(TypeError, match="LearningRateScheduler: .*ExponentialDecay schedule"):
        _fit(model, [nn.callbacks.LearningRateScheduler(lambda e, lr: lr)], 1)
    model.compile(nn.optimizers.SGD(lambda: 0.1), "mse")
    with pytest.raises(TypeError, match="ReduceLROnPlateau: .*function"):
        _fit(model, [Script([1.0, 1.0]), nn.callbacks.ReduceLROnPlateau(
            "score", patience=0, mode="min")], 2)


def test_a_users_rate_variable_is_assigned_not_replaced():
    rate = em.Variable(np.float32(0.1), trainable=False)
    model = _model()
    model.compile(nn.optimizers.SGD(rate), "mse")
    _fit(model, [], 1)  # traced with the user's variable
    _fit(model, [nn.callbacks.LearningRateScheduler(lambda e, lr: 0.0)], 1)
    assert float(rate.numpy()) == 0.0
    before = model.get_weights()
    _fit(model, [], 1)  # the traced step reads the variable: rate 0, nothing moves
    for a, b in zip(before, model.get_weights()):
        assert_array_equal(a, b)


def _plateau(values, **kw):
    model = _model(1.0)  # a round rate to follow; zeros to learn from, so nothing diverges
    history = model.fit(X * 0, Y * 0, batch_size=4, epochs=len(values), verbose=0,
                        callbacks=[Script(values), nn.callbacks.ReduceLROnPlateau(
                            "score", **{"mode": "min", **kw})])
    return [round(r, 6) for r in history.history["learning_rate"]], model


@pytest.mark.parametrize("values,kw,rates", [
    ([1, 1, 1, 1, 1], dict(patience=1), [1, 1, 0.1, 0.01, 0.001]),
    ([1, 1, 1, 1, 1], dict(patience=1, factor=0.5), [1, 1, 0.5, 0.25, 0.125]),
    ([1, 1, 1, 1, 1], dict(patience=2), [1, 1, 1, 0.1, 0.1]),
    ([1, 1, 1, 1, 1, 1], dict(patience=1, cooldown=2), [1, 1, 0.1, 0.1, 0.01, 0.01]),
    ([1, 1, 1, 1, 1], dict(patience=1, min_lr=0.05), [1, 1, 0.1, 0.05, 0.05]),
    ([1, 0.99995, 0.99985, 0.9997], dict(patience=1), [1, 1, 0.1, 0.1]),  # min_delta 1e-4
    ([1, 0.99995, 0.99985, 0.9997], dict(patience=1, min_delta=0), [1, 1, 1, 1]),
    ([1, 2, 3, 4], dict(patience=1, mode="max"), [1, 1, 1, 1]),
    ([1, 2, 3, 4], dict(patience=1), [1, 1, 0.1, 0.01]),
])
def test_plateau_reduces_as_keras(values, kw, rates):
    assert _plateau(values, **kw)[0] == rates


def test_plateau_verbose_and_the_model_keeps_the_last_rate(capsys):
    rates, model = _plateau([1, 1, 1], patience=1, verbose=1)
    assert rates == [1, 1, 0.1]
    assert round(float(model.optimizer.learning_rate.numpy()), 6) == 0.01
    assert "Epoch 3: ReduceLROnPlateau reducing learning rate to 0.01" in capsys.readouterr().out


@pytest.mark.parametrize("kw,match", [
    (dict(factor=1.0), "factor"), (dict(factor="x"), "factor"), (dict(patience=-1), "patience"),
    (dict(cooldown=0.5), "cooldown"), (dict(min_lr=None), "min_lr"),
    (dict(min_delta=float("nan")), "min_delta"), (dict(mode="up"), "mode"),
    (dict(verbose=None), "verbose"),
])
def test_plateau_refuses_bad_arguments_by_name(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        nn.callbacks.ReduceLROnPlateau(**kw)


def test_scheduler_refuses_bad_arguments_by_name():
    with pytest.raises(TypeError, match="schedule must be callable"):
        nn.callbacks.LearningRateScheduler(0.1)
    with pytest.raises(ValueError, match="verbose"):
        nn.callbacks.LearningRateScheduler(lambda e: 0.1, verbose=-1)
