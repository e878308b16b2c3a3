"""EarlyStopping as Keras 3 decides: each argument changes when training stops (or which
weights it leaves), on scripted logged values; restore_best_weights puts back the best
epoch's weights bit for bit."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from ember import nn


class Script(nn.callbacks.Callback):
    """Logs ``score`` = values[epoch] (listed before the callback under test: it sees them)."""

    def __init__(self, values):
        super().__init__()
        self.values = values

    def on_epoch_end(self, epoch, logs=None):
        logs["score"] = self.values[epoch]


class Weights(nn.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.seen = []

    def on_epoch_end(self, epoch, logs=None):
        self.seen.append(self.model.get_weights())


def _model():
    model = nn.Sequential([nn.layers.Dense(2, input_shape=(3,)), nn.layers.Dense(1)])
    model.compile(nn.optimizers.SGD(0.05), "mse", metrics=["mae"])
    return model


def _run(values, **kw):
    x = np.random.default_rng(0).standard_normal((8, 3)).astype(np.float32)
    stop = nn.callbacks.EarlyStopping(monitor=kw.pop("monitor", "score"), **kw)
    model = _model()
    weights = Weights()
    history = model.fit(x, x.sum(1), batch_size=4, epochs=len(values), verbose=0,
                        callbacks=[Script(values), stop, weights])
    return len(history.history["loss"]), stop, model, weights.seen


@pytest.mark.parametrize("values,kw,default_kw,epochs,default_epochs", [
    ([1, 0.5, 0.6, 0.7, 0.4], dict(patience=2), {}, 4, 3),
    ([1, 0.95, 0.9, 0.85], dict(min_delta=0.1), {}, 2, 4),
    ([1, 0.95, 0.9, 0.85], dict(min_delta=-0.1), {}, 2, 4),  # its size counts (Keras's abs)
    # a baseline not beaten: patience counts on while the quantity improves (until then,
    # as Keras, an improving epoch never stops training)
    ([0.9, 0.8, 0.85, 0.86, 0.7], dict(baseline=0.75, patience=2), dict(patience=2), 3, 4),
    ([1, 2, 3, 4, 5, 6], dict(start_from_epoch=3), {}, 5, 2),
    ([1, 2, 3, 4, 5, 6], dict(mode="max"), {}, 6, 2),
    ([3, 2, 1], dict(mode="max"), {}, 2, 3),
])
def test_each_argument_changes_when_training_stops(values, kw, default_kw, epochs,
                                                   default_epochs):
    assert _run(values, **{"mode": "min", **kw})[0] == epochs
    assert _run(values, mode="min", **default_kw)[0] == default_epochs


def test_mode_auto_reads_the_quantity():
    x = np.ones((4, 3), np.float32)
    classify = nn.Sequential([nn.layers.Dense(2, input_shape=(3,))])
    classify.compile("sgd", nn.losses.SparseCategoricalCrossentropy(from_logits=True),
                     metrics=["accuracy"])
    for model, monitor, op in ((classify, "val_accuracy", np.greater),
                               (classify, "loss", np.less), (classify, "val_loss", np.less),
                               (_model(), "mae", np.less), (_model(), "val_mae", np.less)):
        stop = nn.callbacks.EarlyStopping(monitor=monitor)
        model.fit(x, np.zeros(4), epochs=1, verbose=0, callbacks=[stop],
                  validation_data=(x, np.zeros(4)))
        assert stop.monitor_op is op, monitor
    with pytest.raises(ValueError, match="'score'.*mode='max' or mode='min'"):
        _run([1, 2])  # mode="auto" on a quantity it cannot read
    with pytest.raises(ValueError, match="mode must be"):
        nn.callbacks.EarlyStopping(mode="maximum")


def test_mode_auto_knows_the_way_of_every_keras_metric_as_keras_3():
    """Keras 3 reads each metric's direction; ember knew only accuracies, MAE and MSE, and
    refused val_binary_crossentropy (the overfitting tutorial's monitor)."""
    x = np.ones((4, 3), np.float32)
    model = nn.Sequential([nn.layers.Dense(1, input_shape=(3,))])
    M = nn.metrics
    model.compile("sgd", nn.losses.BinaryCrossentropy(from_logits=True), metrics=[
        M.BinaryCrossentropy(from_logits=True, name="binary_crossentropy"),
        M.AUC(name="auc"), M.Precision(name="precision"), M.RootMeanSquaredError(name="rmse"),
        M.MeanAbsolutePercentageError(name="mape")])
    for monitor, op in (("val_binary_crossentropy", np.less), ("val_auc", np.greater),
                        ("precision", np.greater), ("val_rmse", np.less), ("mape", np.less)):
        stop = nn.callbacks.EarlyStopping(monitor=monitor)
        model.fit(x, np.zeros((4, 1)), epochs=1, verbose=0, callbacks=[stop],
                  validation_data=(x, np.zeros((4, 1))))
        assert stop.monitor_op is op, monitor


@pytest.mark.parametrize("restore", [True, False])
def test_restore_best_weights_puts_back_the_best_epochs_weights(restore):
    values = [3.0, 1.0, 2.0, 2.5, 4.0]  # best at epoch 1; never stops (patience 10)
    n, stop, model, seen = _run(values, mode="min", patience=10,
                                    restore_best_weights=restore)
    assert n == 5 and stop.best_epoch == 1
    want = seen[1] if restore else seen[4]
    for got, w in zip(model.get_weights(), want):
        assert_array_equal(got, w)
    assert any(not np.array_equal(a, b) for a, b in zip(seen[1], seen[4]))


def test_restore_best_weights_when_stopped_and_verbose(capsys):
    values = [3.0, 1.0, 2.0, 2.5, 4.0]
    n, stop, model, seen = _run(values, mode="min", patience=2,
                                    restore_best_weights=True, verbose=1)
    assert n == 4 and stop.stopped_epoch == 3
    for got, w in zip(model.get_weights(), seen[1]):
        assert_array_equal(got, w)
    assert capsys.readouterr().out.splitlines() == [
        "Epoch 4: early stopping", "Restoring model weights from the end of the best epoch: 2."]


def test_a_missing_quantity_warns_and_never_stops():
    x = np.ones((4, 3), np.float32)
    model = _model()
    with pytest.warns(UserWarning, match="'val_loss', which is not in the logs"):
        history = model.fit(x, np.zeros(4), epochs=3, verbose=0,
                            callbacks=[nn.callbacks.EarlyStopping(patience=0)])
    assert len(history.history["loss"]) == 3


@pytest.mark.parametrize("kw,match", [
    (dict(patience=-1), "patience"), (dict(patience=1.5), "patience"),
    (dict(start_from_epoch=-2), "start_from_epoch"), (dict(min_delta="0.1"), "min_delta"),
    (dict(baseline="low"), "baseline"), (dict(verbose=-1), "verbose"),
    (dict(monitor=3), "monitor"),
])
def test_bad_arguments_are_refused_by_name(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        nn.callbacks.EarlyStopping(**kw)
