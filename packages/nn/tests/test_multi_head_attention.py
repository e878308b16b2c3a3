"""MultiHeadAttention's regularizers as Keras 3 applies them."""

import numpy as np
import pytest

from ember import nn


def test_activity_regularizer_is_on_the_four_projections():
    """Keras 3 hands ``activity_regularizer`` to the query, key, value and output
    projections (four losses, each the L1 of that projection's output over the batch
    size; Keras 3.15.1 gave 14.0729, 23.8905, 23.6531, 2.9214 where these weights were
    its), not to the layer's own output."""
    rng = np.random.default_rng(0)
    q = rng.standard_normal((2, 3, 4)).astype(np.float32)
    v = rng.standard_normal((2, 5, 4)).astype(np.float32)
    layer = nn.layers.MultiHeadAttention(2, 4, activity_regularizer=nn.regularizers.L1(1.0))
    out = layer(q, v)
    got = [float(x) for x in layer.losses]
    projections = [layer.query_dense(q), layer.key_dense(v), layer.value_dense(v)]
    want = [float(np.abs(p.numpy()).sum()) / 2 for p in projections]
    assert len(got) == 4
    np.testing.assert_allclose(got[:3], want, rtol=1e-5)
    assert got[3] == pytest.approx(float(np.abs(out.numpy()).sum()) / 2, rel=1e-5)


def test_build_takes_keras_3s_query_and_value_shapes():
    """Keras 3's ``build(query_shape, value_shape, key_shape=None)`` (KerasHub's encoders
    call it so) makes every projection's weights, in Keras's order; the call agrees."""
    layer = nn.layers.MultiHeadAttention(num_heads=2, key_dim=4)
    layer.build(query_shape=(None, 5, 8), value_shape=(None, 6, 3))
    assert [tuple(w.shape) for w in layer.weights] == [(8, 8), (8,), (3, 8), (8,), (3, 8),
                                                         (8,), (8, 8), (8,)]
    before = [w.numpy().copy() for w in layer.weights]
    q, v = np.ones((2, 5, 8), np.float32), np.ones((2, 6, 3), np.float32)
    assert layer(q, v).shape == (2, 5, 8)
    assert len(layer.weights) == 8  # built once: the call made no others
    for w, b in zip(layer.weights, before):
        np.testing.assert_array_equal(w.numpy(), b)
