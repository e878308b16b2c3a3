"""A metric written as Keras 3's guides write one: state from ``add_variable`` (or
``add_weight``), its own ``reset_state``, which ``fit`` and ``evaluate`` must call (they
called ``reset_states``, so such a metric counted on across epochs and into evaluate)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember import checkpoint, nn


class SeenExamples(nn.metrics.Metric):
    """How many examples this epoch: counts the batch sizes (the guide's shape of metric)."""

    def __init__(self, name="seen_examples", **kwargs):
        super().__init__(name=name, **kwargs)
        self.seen = self.add_variable(shape=(), name="seen", initializer="zeros")
        self.resets = 0

    def update_state(self, y_true, y_pred, sample_weight=None):
        self.seen.assign_add(em.cast(em.shape(y_pred)[0], self.seen.dtype))

    def result(self):
        return self.seen.value()

    def reset_state(self):
        self.resets += 1
        self.seen.assign(0.0)


def _model(metric):
    model = nn.Sequential([nn.layers.Input((3,)), nn.layers.Dense(2)])
    model.compile("sgd", "mse", metrics=[metric])
    return model


def test_fit_and_evaluate_reset_a_metric_through_its_own_reset_state():
    x, y = np.ones((64, 3), np.float32), np.zeros((64, 2), np.float32)
    metric = SeenExamples()
    model = _model(metric)
    history = model.fit(x, y, batch_size=32, epochs=3, verbose=0)
    assert history.history["seen_examples"] == [64.0, 64.0, 64.0]
    assert metric.resets >= 3
    logs = model.evaluate(x[:16], y[:16], batch_size=8, verbose=0, return_dict=True)
    assert logs["seen_examples"] == 16.0
    model.reset_metrics()
    assert float(metric.result()) == 0.0


def test_add_variable_and_add_weight_make_state_variables():
    m = SeenExamples()
    assert m.seen.dtype == em.float32 and not m.seen.trainable
    assert m.seen.name == "seen_examples/seen:0"
    w = m.add_weight(shape=(2, 3), name="table", initializer="ones", dtype="float64")
    assert w.dtype == em.float64
    assert_array_equal(w.numpy(), np.ones((2, 3)))
    z = m.add_weight()  # Keras's defaults: a scalar of zeros
    assert z.shape == () and float(z) == 0.0
    assert [id(v) for v in m.variables][-3:] == [id(m.seen), id(w), id(z)]
    m.reset_states()  # TensorFlow 2's name calls the override
    assert m.resets == 1
    nn.metrics.Metric.reset_state(m)  # the base's: every variable to zeros
    assert_array_equal(w.numpy(), np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"aggregation='mean'.*not supported"):
        m.add_variable((), "zeros", aggregation="mean")


def test_added_variables_are_saved_and_restored(tmp_path):
    m = SeenExamples()
    m.seen.assign(5.0)
    path = checkpoint.Checkpoint(metric=m).write(str(tmp_path / "ckpt"))
    other = SeenExamples()
    checkpoint.Checkpoint(metric=other).read(path).assert_consumed()
    assert float(other.seen) == 5.0
