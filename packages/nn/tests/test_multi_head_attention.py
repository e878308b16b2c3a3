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
