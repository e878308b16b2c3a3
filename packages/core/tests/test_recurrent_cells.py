"""nn_ops.lstm_cell / gru_cell beyond the op table: argument errors, saturated gates,
low-precision dtypes, and PyTorch's LSTMCell/GRUCell modules with Keras's gate order."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import ember.core as em
from ember.core.testing import get_spec

lstm_cell, gru_cell = em.nn_ops.lstm_cell, em.nn_ops.gru_cell
rng = np.random.default_rng(0)
# bfloat16 cases run on /cpu:0 where a GPU is present: no GPU holds bfloat16
pytestmark = pytest.mark.usefixtures("bfloat16_on_host")


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
    # o = 1: h is exactly tanh(c) as the device computes tanh (a GPU's rounds otherwise)
    assert_array_equal(h2.numpy(), em.tanh(em.constant(c)).numpy())


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


# --- the whole-sequence LSTM ---------------------------------------------------------------
lstm_sequence = em.nn_ops.lstm_sequence


def _seq_args(b=2, t=3, f=4, n=2, dtype=np.float64):
    return [rng.uniform(-1, 1, s).astype(dtype)
            for s in ((b, t, f), (b, n), (b, n), (f, 4 * n), (n, 4 * n), (4 * n,))]


@pytest.mark.parametrize(("change", "match"), [
    ({0: np.zeros((2, 3))}, r"lstm_sequence: inputs must be \(batch, steps, features\)"),
    ({0: np.zeros((2, 0, 4))}, "lstm_sequence: inputs need at least one step"),
    ({3: np.zeros((5, 8))}, r"lstm_sequence: kernel has shape \(5, 8\), expected \(4, 8\)"),
    ({2: np.zeros((2, 3))}, r"lstm_sequence: c has shape \(2, 3\), expected \(2, 2\)"),
    ({5: np.zeros(6)}, r"lstm_sequence: bias has shape \(6,\), expected \(8,\)"),
    ({4: np.zeros((2, 8), np.float32)}, "lstm_sequence: every tensor must have one dtype"),
    ({"mask": np.ones((2, 4), bool)}, r"lstm_sequence: mask has shape \(2, 4\), expected"),
    ({"mask": np.ones((2, 3))}, "lstm_sequence: mask must be bool, got dtype float64"),
])
def test_lstm_sequence_rejects_bad_arguments_by_name(change, match):
    a = _seq_args()
    kw = {}
    for k, v in change.items():
        if k == "mask":
            kw["mask"] = v
        else:
            a[k] = v
    with pytest.raises(em.InvalidArgumentError, match=match):
        lstm_sequence(*a, **kw)


def _gru_seq_args(b=2, t=3, f=4, n=2, dtype=np.float64):
    return [rng.uniform(-1, 1, s).astype(dtype)
            for s in ((b, t, f), (b, n), (f, 3 * n), (n, 3 * n), (2, 3 * n))]


@pytest.mark.parametrize(("change", "match"), [
    ({0: np.zeros((2, 3))}, r"gru_sequence: inputs must be \(batch, steps, features\)"),
    ({0: np.zeros((2, 0, 4))}, "gru_sequence: inputs need at least one step"),
    ({2: np.zeros((5, 6))}, r"gru_sequence: kernel has shape \(5, 6\), expected \(4, 6\)"),
    ({3: np.zeros((2, 8))}, r"recurrent_kernel has shape \(2, 8\), expected \(2, 6\) .*3 gates"),
    ({4: np.zeros(6)}, r"gru_sequence: bias has shape \(6,\), expected \(2, 6\)"),
    ({3: np.zeros((2, 6), np.float32)}, "gru_sequence: every tensor must have one dtype"),
    ({"mask": np.ones((2, 4), bool)}, r"gru_sequence: mask has shape \(2, 4\), expected"),
    ({"mask": np.ones((2, 3))}, "gru_sequence: mask must be bool, got dtype float64"),
])
def test_gru_sequence_rejects_bad_arguments_by_name(change, match):
    a = _gru_seq_args()
    kw = {}
    for k, v in change.items():
        if k == "mask":
            kw["mask"] = v
        else:
            a[k] = v
    with pytest.raises(em.InvalidArgumentError, match=match):
        em.nn_ops.gru_sequence(*a, **kw)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gru_sequence_in_low_precision_matches_float32(dtype):
    a = _gru_seq_args(dtype=np.float32)
    mask = np.array([[True, False, True], [True, True, True]])
    want = em.nn_ops.gru_sequence(*a, mask=mask)
    low = [em.cast(v, dtype) for v in a]
    got = em.nn_ops.gru_sequence(*low, mask=mask)
    for g, w in zip(got, want):
        assert g.dtype == em.as_dtype(dtype)  # computed in float32, handed back as given
        assert_allclose(em.cast(g, "float32").numpy(), w.numpy(), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_lstm_sequence_in_low_precision_matches_float32(dtype):
    a = _seq_args(dtype=np.float32)
    mask = np.array([[True, False, True], [True, True, True]])
    want = [t.numpy() for t in lstm_sequence(*a, mask=mask)]
    got = lstm_sequence(*[em.cast(em.constant(v), dtype) for v in a], mask=mask)
    for g, w in zip(got, want):
        assert g.dtype == dtype
        assert_allclose(g.numpy().astype(np.float32), w, rtol=3e-2, atol=3e-2)


def test_lstm_sequence_matches_torch_nn_lstm():
    torch = pytest.importorskip("torch")
    b, t, f, n = 3, 5, 4, 2
    x, h, c = rng.normal(size=(b, t, f)), rng.normal(size=(b, n)), rng.normal(size=(b, n))
    mod = torch.nn.LSTM(f, n, batch_first=True).double()
    # PyTorch's gates i, f, g, o are Keras's i, f, c, o; its two biases add up
    w_ih, w_hh = mod.weight_ih_l0.detach().numpy(), mod.weight_hh_l0.detach().numpy()
    bias = (mod.bias_ih_l0 + mod.bias_hh_l0).detach().numpy()
    out, (th, tc) = mod(torch.tensor(x), (torch.tensor(h)[None], torch.tensor(c)[None]))
    eo, eh, ec = lstm_sequence(x, h, c, w_ih.T, w_hh.T, bias)
    assert_allclose(eo.numpy(), out.detach().numpy(), rtol=1e-12)
    assert_allclose(eh.numpy(), th[0].detach().numpy(), rtol=1e-12)
    assert_allclose(ec.numpy(), tc[0].detach().numpy(), rtol=1e-12)
