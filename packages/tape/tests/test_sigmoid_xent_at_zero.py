"""``sigmoid_cross_entropy_with_logits``'s gradient is ``sigmoid(x) - z`` everywhere, at
``x = 0`` too, as TensorFlow's and PyTorch's (ember's ``relu(x)`` and ``|x|`` gave ``-z``
there: a zero-initialized logistic regression took a wrong first step; found porting
TensorFlow's "Logistic regression with Core APIs")."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em
from ember import tape


def _grads(x, z):
    xv, zv = em.Variable(x), em.Variable(z)
    with tape.GradientTape() as t:
        loss = em.reduce_sum(em.nn_ops.sigmoid_cross_entropy_with_logits(labels=zv,
                                                                          logits=xv))
    return loss, t.gradient(loss, [xv, zv])


def test_gradient_at_zero_logits_is_one_half_minus_the_label(backend):
    z = np.array([1.0, 0.0, 1.0, 0.3], np.float32)
    _, (gx, gz) = _grads(np.zeros(4, np.float32), z)
    np.testing.assert_allclose(gx.numpy(), 0.5 - z, rtol=1e-7)
    np.testing.assert_allclose(gz.numpy(), np.zeros(4), atol=0)  # d/dz = -x = 0


def test_values_and_gradients_against_torch(backend):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(20) * 5, [0.0, -0.0, 30.0, -30.0, 90.0, -90.0]])
    x = x.astype(np.float64)
    z = rng.random(x.shape)
    loss, (gx, gz) = _grads(x, z)
    tx = torch.tensor(x, requires_grad=True)
    tz = torch.tensor(z, requires_grad=True)
    tl = torch.nn.functional.binary_cross_entropy_with_logits(tx, tz, reduction="sum")
    tl.backward()
    np.testing.assert_allclose(float(loss), tl.item(), rtol=1e-12)
    np.testing.assert_allclose(gx.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(gz.numpy(), tz.grad.numpy(), rtol=1e-12)


def test_second_order_at_zero_is_sigmoid_prime(backend):
    x = em.Variable(np.zeros(3))
    z = em.constant([0.0, 1.0, 0.5], dtype=em.float64)
    with tape.GradientTape() as outer:
        with tape.GradientTape() as inner:
            loss = em.reduce_sum(em.nn_ops.sigmoid_cross_entropy_with_logits(z, x))
        g = inner.gradient(loss, x)
    np.testing.assert_allclose(outer.gradient(g, x).numpy(), [0.25] * 3, rtol=1e-12)
