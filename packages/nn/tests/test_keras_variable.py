"""nn.Variable: Keras 3's ``keras.Variable`` arguments over an ember variable."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em
from ember import nn, tape


def test_a_value_becomes_a_floatx_variable_unless_a_dtype_is_given():
    v = nn.Variable(0.0, trainable=False, dtype="float32")
    assert isinstance(v, em.Variable) and not v.trainable and v.dtype == em.float32
    assert nn.Variable(np.arange(3)).dtype == em.float32  # Keras: dtype defaults to floatx
    assert nn.Variable(np.arange(3), dtype="int32").dtype == em.int32
    np.testing.assert_array_equal(nn.Variable([1, 2], name="w").numpy(), [1.0, 2.0])


def test_an_initializer_needs_a_shape_and_draws_it():
    v = nn.Variable(nn.initializers.GlorotUniform(seed=3), shape=(4, 2))
    want = nn.initializers.GlorotUniform(seed=3)((4, 2), dtype="float32")
    np.testing.assert_array_equal(v.numpy(), np.asarray(want))
    np.testing.assert_array_equal(nn.Variable("ones", shape=(2,)).numpy(), [1.0, 1.0])
    with pytest.raises(ValueError, match=r"needs shape="):
        nn.Variable("zeros")
    with pytest.raises(ValueError, match=r"the initial value has shape \(2,\), but shape=\(3,\)"):
        nn.Variable([1.0, 2.0], shape=(3,))


def test_keras_arguments_are_checked_and_kept():
    v = nn.Variable(1.0, aggregation="sum", synchronization="on_read")
    assert (v.aggregation, v.synchronization, v.autocast) == ("sum", "on_read", True)
    with pytest.raises(ValueError, match="aggregation must be one of"):
        nn.Variable(1.0, aggregation="max")
    with pytest.raises(ValueError, match="synchronization must be one of"):
        nn.Variable(1.0, synchronization="always")


def test_it_trains_like_any_variable():
    v = nn.Variable(3.0)
    with tape.GradientTape() as t:
        loss = v * v
    nn.optimizers.SGD(0.25).apply_gradients([(t.gradient(loss, v), v)])
    assert float(v) == 1.5


def test_autocast_false_keeps_its_dtype_inside_a_mixed_precision_layer():
    seen = []

    class Probe(nn.layers.Layer):
        def __init__(self, var):
            super().__init__(dtype="mixed_float16")
            self.var = var

        def call(self, x):
            seen.append(em.convert_to_tensor(self.var).dtype)
            return x

    Probe(nn.Variable(2.0))(em.ones((1,)))
    Probe(nn.Variable(2.0, autocast=False))(em.ones((1,)))
    assert seen == [em.float16, em.float32]
