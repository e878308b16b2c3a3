"""Gradients through random draws: ``em.random.gamma`` has none to ``alpha`` (TensorFlow's
has an implicit one) and the scale's to ``beta``."""

from __future__ import annotations

import numpy as np

import ember.core as em
from ember import tape


def test_gamma_has_no_gradient_to_alpha_and_the_scales_to_beta():
    em.random.set_seed(3)  # (on each backend: the conftest's)
    a = em.constant([[0.5], [2.0]])
    b = em.constant([1.0, 4.0, 0.5])
    with tape.GradientTape(persistent=True) as t:
        t.watch([a, b])
        g = em.random.gamma([6], a, b)
    assert t.gradient(g, a) is None
    # g = G / b for a Gamma(a, 1) draw G: dg/db = -G / b**2 = -g / b, summed
    want = -(g.numpy() / b.numpy()).sum(axis=(0, 1))
    np.testing.assert_allclose(t.gradient(g, b).numpy(), want, rtol=1e-5)
