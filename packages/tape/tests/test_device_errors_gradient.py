"""The gradient of sparse cross-entropy where its device-side label check runs (the GPU's
error flag, ``ember.core._device_errors``): a good batch's gradient is unchanged by it.
(It lives here because ember-core's tests run without ember-tape.)"""

from __future__ import annotations

import numpy as np

import ember.core as em
from ember import tape
from ember.core import nn_ops as nn

LOSS = nn.sparse_softmax_cross_entropy_with_logits


def test_the_gradient_of_a_good_batch_is_unchanged():
    # every test backend: cpu, and the strict GPU double where the flag is written
    x = em.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    with tape.GradientTape() as t:
        loss = em.reduce_sum(LOSS(em.constant([2, 0]), x))
    g = t.gradient(loss, x).numpy()
    p = np.exp(x.numpy()) / np.exp(x.numpy()).sum(1, keepdims=True)
    np.testing.assert_allclose(g, p - np.eye(3)[[2, 0]], rtol=1e-5)
