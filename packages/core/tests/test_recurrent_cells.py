"""nn_ops.lstm_cell / gru_cell beyond the op table: argument errors, saturated gates,
low-precision dtypes, and PyTorch's LSTMCell/GRUCell modules with Keras's gate order."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember.core.testing import get_spec

lstm_cell, gru_cell = em.nn_ops.lstm_cell, em.nn_ops.gru_cell
rng = np.random.default_rng(0)


@pytest.mark.parametrize(("call", "match"), [
    (lambda: lstm_cell(np.zeros((2, 8)), np.zeros((2, 2)), np.zeros((2, 3)), np.zeros((2, 8))),
     r"lstm_cell: c has shape \(2, 3\), expected \(2, 2\)"),
    (lambda: lstm_cell(np.zeros((2, 6)), np.zeros((2, 2)), np.zeros((2, 2)), np.zeros((2, 8))),
     r"lstm_cell: inputs has shape \(2, 6\), expected \(2, 8\)"),
    (lambda: lstm_cell(np.zeros((2, 8)), np.zeros(2), np.zeros(2), np.zeros((2, 8))),
     "lstm_cell: h must be a matrix"),
    (lambda: gru_cell(np.zeros((2, 6)), np.zeros((2, 2)), np.zeros((2, 6)), np.zeros(5)),
     r"gru_cell: recurrent_bias has shape \(5,\), expected \(6,\)"),
    (lambda: gru_cell(np.zeros((2, 6), np.int32), np.zeros((2, 2)), np.zeros((2, 6))),
     "gru_cell: inputs must be floating, got dtype int32"),
    (lambda: gru_cell(np.zeros((2, 6)), np.zeros((2, 2)), np.zeros((2, 6)), reset_after=1),
     "gru_cell: reset_after must be a bool"),
])
def test_bad_arguments_are_rejected_by_name(call, match):
    with pytest.raises(em.InvalidArgumentError, match=match):
        call()


def test_saturated_gates_give_exact_limits_without_overflow_warnings(device):
    # |z| of 200 overflows exp in float32: the sigmoid must still be exactly 0 or 1
    n = 3
    xw = np.concatenate([np.full((1, n), -200.0), np.full((1, n), 200.0),
                         np.full((1, n), 200.0), np.full((1, n), 200.0)], 1).astype(np.float32)
    c = np.full((1, n), 0.5, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        h2, c2 = lstm_cell(xw, np.zeros((1, n), np.float32), c, np.zeros((n, 4 * n), np.float32))
    assert_allclose(c2.numpy(), c)  # i = 0, f = 1
    assert_allclose(h2.numpy(), np.tanh(c))  # o = 1


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_matches_float32(dtype):
    spec = get_spec("nn_ops.lstm_cell")
    args = spec.cases[0].make(rng, np.dtype(np.float32))
    want = [t.numpy() for t in lstm_cell(*args)]
    got = lstm_cell(*[em.cast(em.constant(a), dtype) for a in args])
    for g, w in zip(got, want):
        assert g.dtype == dtype
        assert_allclose(g.numpy().astype(np.float32), w, rtol=3e-2, atol=3e-2)


def test_lstm_cell_matches_torch_lstmcell_module_with_keras_gate_order():
    torch = pytest.importorskip("torch")
    b, f, n = 4, 5, 3
    x, h, c = rng.normal(size=(b, f)), rng.normal(size=(b, n)), rng.normal(size=(b, n))
    mod = torch.nn.LSTMCell(f, n).double()
    w_ih, w_hh = mod.weight_ih.detach().numpy(), mod.weight_hh.detach().numpy()
    bias = (mod.bias_ih + mod.bias_hh).detach().numpy()
    # PyTorch's gates i, f, g, o are Keras's i, f, c, o: the same column blocks
    th, tc = mod(torch.tensor(x), (torch.tensor(h), torch.tensor(c)))
    eh, ec = lstm_cell(x @ w_ih.T + bias, h, c, w_hh.T)
    assert_allclose(eh.numpy(), th.detach().numpy(), rtol=1e-12)
    assert_allclose(ec.numpy(), tc.detach().numpy(), rtol=1e-12)


def test_gru_cell_matches_torch_grucell_module_with_keras_gate_order():
    torch = pytest.importorskip("torch")
    b, f, n = 4, 5, 3
    x, h = rng.normal(size=(b, f)), rng.normal(size=(b, n))
    mod = torch.nn.GRUCell(f, n).double()
    # PyTorch's r, z, n blocks -> Keras's z, r, h
    order = np.r_[n:2 * n, 0:n, 2 * n:3 * n]
    w_ih = mod.weight_ih.detach().numpy()[order]
    w_hh = mod.weight_hh.detach().numpy()[order]
    b_ih, b_hh = mod.bias_ih.detach().numpy()[order], mod.bias_hh.detach().numpy()[order]
    want = mod(torch.tensor(x), torch.tensor(h)).detach().numpy()
    got = gru_cell(x @ w_ih.T + b_ih, h, w_hh.T, b_hh, reset_after=True)
    assert_allclose(got.numpy(), want, rtol=1e-12)
