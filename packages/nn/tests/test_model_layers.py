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
