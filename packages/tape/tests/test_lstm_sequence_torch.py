"""lstm_sequence against PyTorch's nn.LSTM to second order (a Hessian-vector product
through the whole sequence, with saved activations reached by the second derivative)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember import tape


def test_second_derivatives_match_torch_nn_lstm():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    b, t, f, n = 2, 4, 3, 2
    x, h, c = rng.normal(size=(b, t, f)), rng.normal(size=(b, n)), rng.normal(size=(b, n))
    v = rng.normal(size=(f, 4 * n))
    mod = torch.nn.LSTM(f, n, batch_first=True).double()
    w_ih, w_hh = mod.weight_ih_l0, mod.weight_hh_l0
    xt = torch.tensor(x, requires_grad=True)
    out, (th, tc) = mod(xt, (torch.tensor(h)[None], torch.tensor(c)[None]))
    y = torch.sin(out).sum() + (th * tc).sum()
    (g,) = torch.autograd.grad(y, w_ih, create_graph=True)  # (4 units, features)
    want_x, want_rk = torch.autograd.grad((g * torch.tensor(v.T)).sum(), [xt, w_hh])

    xe = em.constant(x)
    k = em.constant(w_ih.detach().numpy().T)  # PyTorch's gates i, f, g, o: Keras's order
    rk = em.constant(w_hh.detach().numpy().T)
    bias = em.constant((mod.bias_ih_l0 + mod.bias_hh_l0).detach().numpy())
    with tape.GradientTape() as outer:
        outer.watch([xe, rk])
        with tape.GradientTape() as inner:
            inner.watch(k)
            o, he, ce = em.nn_ops.lstm_sequence(xe, h, c, k, rk, bias)
            ye = em.reduce_sum(em.sin(o)) + em.reduce_sum(he * ce)
        gk = inner.gradient(ye, k)
        gv = em.reduce_sum(gk * em.constant(v))
    got_x, got_rk = outer.gradient(gv, [xe, rk])
    assert_allclose(gk.numpy(), g.detach().numpy().T, rtol=1e-10)
    assert_allclose(got_x.numpy(), want_x.numpy(), rtol=1e-9, atol=1e-12)
    assert_allclose(got_rk.numpy(), want_rk.numpy().T, rtol=1e-9, atol=1e-12)
