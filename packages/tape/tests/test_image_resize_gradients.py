"""Gradients of ``em.image.resize`` (linear in the image: the transposed resampling) against
PyTorch's ``interpolate`` and against finite differences, for every method."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em
from ember import tape

RNG = np.random.default_rng(1)
X = RNG.random((2, 5, 6, 2))
V = RNG.random((2, 3, 8, 2))  # the cotangent: d sum(V * resize(x)) / dx


def _grad(method, antialias, x=X):
    xe = em.constant(x)
    with tape.GradientTape() as t:
        t.watch(xe)
        y = em.reduce_sum(em.constant(V) * em.image.resize(xe, (3, 8), method=method,
                                                          antialias=antialias))
    return t.gradient(y, xe).numpy()


@pytest.mark.parametrize("method", ["bilinear", "bicubic", "area", "lanczos3", "gaussian",
                                    "mitchellcubic", "nearest"])
def test_gradient_matches_finite_differences(method):
    got = _grad(method, True)
    eps = 1e-6
    for idx in [(0, 0, 0, 0), (1, 4, 5, 1), (0, 2, 3, 1), (1, 1, 0, 0)]:
        d = np.zeros_like(X)
        d[idx] = eps
        up = em.image.resize(X + d, (3, 8), method=method, antialias=True).numpy()
        down = em.image.resize(X - d, (3, 8), method=method, antialias=True).numpy()
        want = float(np.sum(V * (up - down)) / (2 * eps))
        assert got[idx] == pytest.approx(want, rel=1e-6, abs=1e-9), (method, idx)


def test_bilinear_gradient_matches_torch():
    torch = pytest.importorskip("torch")
    for aa in (False, True):
        tx = torch.tensor(X).permute(0, 3, 1, 2).requires_grad_(True)
        out = torch.nn.functional.interpolate(tx, size=(3, 8), mode="bilinear",
                                              align_corners=False, antialias=aa)
        (out.permute(0, 2, 3, 1) * torch.tensor(V)).sum().backward()
        np.testing.assert_allclose(_grad("bilinear", aa),
                                   tx.grad.permute(0, 2, 3, 1).numpy(), rtol=1e-10, atol=1e-12)
