"""Keras's ways into a model's layers: ``get_layer``, ``Sequential.pop``, and each
layer's symbolic ``input``/``output`` in a functional graph (a Sequential becomes one once
its input shape is known), for feature extraction (found by porting keras-io's
"The Sequential model" guide)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember import nn

L = nn.layers


def _seq():
    return nn.Sequential([nn.Input(shape=(4,)), L.Dense(3, name="a"), L.Dense(2, name="b")])


def test_get_layer_by_name_or_index():
    m = _seq()
    assert m.get_layer("b") is m.layers[1] and m.get_layer(index=0) is m.layers[0]
    assert m.get_layer(index=-1) is m.layers[1]
    with pytest.raises(ValueError, match=r"no layer named 'c'; the layers are \['a', 'b'\]"):
        m.get_layer("c")
    with pytest.raises(ValueError, match="index 2 is out of range: the model has 2 layers"):
        m.get_layer(index=2)
    with pytest.raises(ValueError, match="give a layer name or an index"):
        m.get_layer()


def test_pop_removes_the_last_layer_and_rebuilds():
    m = _seq()
    top = m.pop()
    assert top.name == "b" and [layer.name for layer in m.layers] == ["a"]
    assert m.output_shape == (None, 3) and m(np.ones((5, 4), np.float32)).shape == (5, 3)
    assert m.outputs[0].shape == (None, 3)
    m.pop()
    assert not m.built  # as a new Sequential with only its nn.Input
    with pytest.raises(TypeError, match="pop: there are no layers in the model"):
        m.pop()
    m.add(L.Dense(5))  # the nn.Input it keeps builds it again
    assert m.built and m.output_shape == (None, 5) and m.outputs[0].shape == (None, 5)


def test_a_sequential_with_an_input_is_a_functional_graph():
    m = _seq()
    assert m.inputs[0].shape == (None, 4) and m.outputs[0].shape == (None, 2)
    a, b = m.layers
    assert b.input is a.output and a.input is m.inputs[0]
    extractor = nn.Model(m.inputs, [layer.output for layer in m.layers])
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    h, y = extractor(x)
    assert_allclose(h.numpy(), a(em.constant(x)).numpy(), rtol=1e-6)
    assert_allclose(y.numpy(), m(x).numpy(), rtol=1e-6)
    # from a first layer's input_shape too
    m2 = nn.Sequential([L.Dense(3, input_shape=(4,))])
    assert m2.inputs[0].shape == (None, 4) and m2.layers[0].output.shape == (None, 3)


def test_unbuilt_and_uncalled_say_so():
    m = nn.Sequential([L.Dense(3)])
    with pytest.raises(ValueError, match="not built yet, so it has no inputs or outputs"):
        m.inputs
    with pytest.raises(AttributeError, match="never been called on symbolic inputs"):
        L.Dense(2).output


def test_time_distributed_batch_normalization_normalizes_each_step_as_keras_3():
    """Keras 3 calls the wrapped layer once per step (its time_distributed.py): a batch
    normalization in training normalizes each step by that step's statistics and updates
    its moving statistics once per step. Keras 3.15.1 gives out[0, 0, 0] = -0.99988 and
    moving_mean[0] = 3.9616 here (ember folded the steps into the batch: -1.1977 and
    1.8803; found by a parity sweep against Keras)."""
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) ** 1.5 / 10
    bn = nn.layers.BatchNormalization(momentum=0.5)
    y = nn.layers.TimeDistributed(bn)(x, training=True).numpy()
    assert y.shape == (2, 3, 4)
    np.testing.assert_allclose(y[0, 0, 0], -0.99988, rtol=1e-4)
    np.testing.assert_allclose(bn.moving_mean.numpy()[0], 3.9616, rtol=1e-4)
    # each step on its own, by numpy: (x - mean) / sqrt(var + eps) over the batch
    mean, var = x.mean(0), x.var(0)
    np.testing.assert_allclose(y, (x - mean) / np.sqrt(var + 1e-3), rtol=1e-5, atol=1e-5)
    # inference (and a layer that does not depend on the batch) still folds the steps
    dense = nn.layers.TimeDistributed(nn.layers.Dense(2))
    np.testing.assert_allclose(dense(x, training=True).numpy()[:, 1],
                               dense.layer(x[:, 1]).numpy(), rtol=1e-6)


def test_dense_multiplies_by_a_tensor_assigned_as_its_kernel():
    """A hypernetwork assigns tensors to a Dense's kernel and bias (keras-io's "Introduction
    to Keras for researchers"); Keras's Dense multiplies by whatever they hold, and the
    gradient reaches the variables that made them (ember called ``.value()`` on them)."""
    from ember import tape

    d = nn.layers.Dense(2, activation="relu")
    d.build((None, 3))
    w = em.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) - 2.0)
    x = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], np.float32)
    with tape.GradientTape() as t:
        d.kernel, d.bias = w * 2.0, em.constant([0.5, -0.5])
        loss = em.reduce_sum(d(x))
    want = np.maximum(x @ (w.numpy() * 2) + [0.5, -0.5], 0)
    assert float(loss) == pytest.approx(want.sum())
    g = x.T @ (want > 0).astype(np.float32) * 2
    assert_allclose(t.gradient(loss, w).numpy(), g, rtol=1e-6)
    assert_allclose(d(x[:, None, :]).numpy()[:, 0], want, rtol=1e-6)  # rank 3 too
