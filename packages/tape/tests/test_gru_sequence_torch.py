"""gru_sequence against PyTorch's nn.GRU to second order (a Hessian-vector product through
the whole sequence), its weights mapped: PyTorch's gates r, z, n are ember's (Keras's)
z, r, h, and its two biases are ember's (2, 3 * units) bias."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember import tape


def _keras_order(w, n):
    """PyTorch's gate blocks r, z, n (rows) as Keras's z, r, h (columns)."""
    r, z, h = w[:n], w[n:2 * n], w[2 * n:]
    return np.concatenate([z, r, h]).T


def test_second_derivatives_match_torch_nn_gru():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    b, t, f, n = 2, 4, 3, 2
    x, h = rng.normal(size=(b, t, f)), rng.normal(size=(b, n))
    v = rng.normal(size=(f, 3 * n))
    mod = torch.nn.GRU(f, n, batch_first=True).double()
    w_ih, w_hh = mod.weight_ih_l0, mod.weight_hh_l0
    xt = torch.tensor(x, requires_grad=True)
    out, th = mod(xt, torch.tensor(h)[None])
    y = torch.sin(out).sum() + (th * th).sum()
    (g,) = torch.autograd.grad(y, w_ih, create_graph=True)  # (3 units, features)
    v_torch = torch.tensor(np.concatenate([v[:, n:2 * n], v[:, :n], v[:, 2 * n:]], 1).T)
    want_x, want_rk = torch.autograd.grad((g * v_torch).sum(), [xt, w_hh])

    xe = em.constant(x)
    k = em.constant(_keras_order(w_ih.detach().numpy(), n))
    rk = em.constant(_keras_order(w_hh.detach().numpy(), n))
    bias = em.constant(np.stack([_keras_order(mod.bias_ih_l0.detach().numpy()[:, None], n)[0],
                                 _keras_order(mod.bias_hh_l0.detach().numpy()[:, None], n)[0]]))
    with tape.GradientTape() as outer:
        outer.watch([xe, rk])
        with tape.GradientTape() as inner:
            inner.watch(k)
            o, he = em.nn_ops.gru_sequence(xe, h, k, rk, bias)
            ye = em.reduce_sum(em.sin(o)) + em.reduce_sum(he * he)
        gk = inner.gradient(ye, k)
        gv = em.reduce_sum(gk * em.constant(v))
    got_x, got_rk = outer.gradient(gv, [xe, rk])
    assert_allclose(o.numpy(), out.detach().numpy(), rtol=1e-12, atol=1e-14)
    assert_allclose(gk.numpy(), _keras_order(g.detach().numpy(), n), rtol=1e-10)
    assert_allclose(got_x.numpy(), want_x.numpy(), rtol=1e-9, atol=1e-12)
    assert_allclose(got_rk.numpy(), _keras_order(want_rk.numpy(), n), rtol=1e-9, atol=1e-12)
