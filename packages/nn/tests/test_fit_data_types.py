"""What ``fit`` hands a ``train_step``: Tensors in both modes (TensorFlow's EagerTensors),
float64 arrays as float32 (Keras feeds floating arrays in floatx), and a Keras-style
``super().train_step(data)`` unpacks ``data``."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em
from ember import nn


class Recording(nn.Model):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seen, self.evaluated = [], 0

    def train_step(self, data):
        x, y = data
        self.seen.append((type(x), np.dtype(x.dtype), np.dtype(y.dtype)))
        return super().train_step(data)  # Keras's way: the base unpacks data


def _evaluate_step_via_super(self, data):
    """Keras's ``test_step(self, data)`` override, calling the base with ``data``."""
    self.evaluated += 1
    return nn.Model.test_step(self, data)


Recording.test_step = _evaluate_step_via_super  # (a method pytest would not collect)


def _model():
    inputs = nn.Input(shape=(3,))
    return Recording(inputs, nn.layers.Dense(1)(inputs))


@pytest.mark.parametrize("run_eagerly", [True, False])
def test_train_step_gets_float32_tensors_from_float64_arrays(run_eagerly):
    model = _model()
    model.compile(optimizer="sgd", loss="mse", run_eagerly=run_eagerly)
    x = np.random.default_rng(0).standard_normal((8, 3))  # float64, numpy's default
    history = model.fit(x, x.sum(1, keepdims=True), batch_size=4, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
    assert set(model.seen) == {(em.Tensor, np.dtype(np.float32), np.dtype(np.float32))}
    assert np.isfinite(model.evaluate(x, x.sum(1, keepdims=True), batch_size=4, verbose=0))
    # the override ran, its data unpacked by the base: per batch eagerly, once traced
    assert model.evaluated == (2 if run_eagerly else 1)


def test_a_float64_policy_keeps_float64_data():
    nn.dtype_policies.set_dtype_policy("float64")
    try:
        model = _model()
        model.compile(optimizer="sgd", loss="mse", run_eagerly=True)
        x = np.ones((4, 3))
        model.fit(x, np.ones((4, 1)), batch_size=4, verbose=0)
    finally:
        nn.dtype_policies.set_dtype_policy("float32")
    assert model.seen == [(em.Tensor, np.dtype(np.float64), np.dtype(np.float64))]
