"""Specs for the fused recurrent cells and their element-wise backward ops.

The numpy references are written independently (``1 / (1 + exp(-x))``, gate slices); the
PyTorch ones run ``torch.lstm_cell`` / ``torch.gru_cell`` with Keras's gate order mapped
to PyTorch's (LSTM ``i, f, c, o`` is PyTorch's ``i, f, g, o``; GRU ``z, r, h`` becomes
``r, z, n``) and an identity input weight, since the cells take projected inputs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import nn_ops as nn
from .._ops import recurrent as rec
from .._ops import recurrent_gru_sequence as gseq
from .._ops import recurrent_sequence as rseq
from ._spec import FLOATS, OpSpec, args, arr, case


def _sig(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _lstm_ref(xw: np.ndarray, h: np.ndarray, c: np.ndarray, u: np.ndarray) -> Any:
    n = h.shape[1]
    z = xw + h @ u
    i, f, o = _sig(z[:, :n]), _sig(z[:, n:2 * n]), _sig(z[:, 3 * n:])
    c2 = f * c + i * np.tanh(z[:, 2 * n:3 * n])
    return (o * np.tanh(c2)).astype(h.dtype), c2.astype(h.dtype)


def _gru_ref(xw: np.ndarray, h: np.ndarray, u: np.ndarray, rb: Any = None,
             reset_after: bool = True) -> np.ndarray:
    n = h.shape[1]
    rb = np.zeros(3 * n, h.dtype) if rb is None else rb
    zr = _sig(xw[:, :2 * n] + h @ u[:, :2 * n] + rb[:2 * n])
    z, r = zr[:, :n], zr[:, n:]
    if reset_after:
        rec_h = r * (h @ u[:, 2 * n:] + rb[2 * n:])
    else:
        rec_h = (r * h) @ u[:, 2 * n:] + rb[2 * n:]
    cand = np.tanh(xw[:, 2 * n:] + rec_h)
    return (z * h + (1 - z) * cand).astype(h.dtype)


def _lstm_torch(T: Any, xw: Any, h: Any, c: Any, u: Any) -> Any:
    eye = T.eye(xw.shape[1], dtype=xw.dtype)
    return T.lstm_cell(xw, (h, c), eye, u.T)


def _gru_torch(T: Any, xw: Any, h: Any, u: Any, rb: Any = None,
               reset_after: bool = True) -> Any:
    if not reset_after:
        return None  # PyTorch's GRU applies the reset gate after the matmul only
    n = h.shape[1]
    perm = T.cat([T.arange(n, 2 * n), T.arange(n), T.arange(2 * n, 3 * n)])
    eye = T.eye(3 * n, dtype=xw.dtype)
    return T.gru_cell(xw[:, perm], h, eye, u[:, perm].T, None,
                      None if rb is None else rb[perm])


def _lstm_grad_ref(dh: Any, dc: Any, g: Any, tc: Any, c: Any, h: Any, u: Any,
                   dg: Any = None, dtc: Any = None, need_h: bool = True,
                   need_u: bool = True) -> Any:
    n = tc.shape[1]
    dg = np.zeros_like(g) if dg is None else dg
    dtc = np.zeros_like(tc) if dtc is None else dtc
    i, f, gg, o = (g[:, k * n:(k + 1) * n] for k in range(4))
    dct = dc + (dtc + dh * o) * (1 - tc ** 2)
    dz = np.concatenate([(dg[:, :n] + dct * gg) * i * (1 - i),
                         (dg[:, n:2 * n] + dct * c) * f * (1 - f),
                         (dg[:, 2 * n:3 * n] + dct * i) * (1 - gg ** 2),
                         (dg[:, 3 * n:] + dh * tc) * o * (1 - o)], 1)
    out = (dz, dz @ u.T if need_h else 0 * h, dct * f, h.T @ dz if need_u else 0 * u)
    return tuple(v.astype(c.dtype) for v in out)


def _gru_grad_ref(dh: Any, g: Any, hh: Any, h: Any, u: Any, dg: Any = None, dhh: Any = None,
                  need_h: bool = True, need_u: bool = True, bias: bool = True) -> Any:
    n = h.shape[1]
    dg = np.zeros_like(g) if dg is None else dg
    dhh = np.zeros_like(hh) if dhh is None else dhh
    z, r, cand = g[:, :n], g[:, n:2 * n], g[:, 2 * n:]
    da = (dg[:, 2 * n:] + dh * (1 - z)) * (1 - cand ** 2)
    dzr = np.concatenate([(dg[:, :n] + dh * (h - cand)) * z * (1 - z),
                          (dg[:, n:2 * n] + da * hh) * r * (1 - r)], 1)
    dhu = np.concatenate([dzr, dhh + da * r], 1)
    out = (np.concatenate([dzr, da], 1), dh * z + dhu @ u.T if need_h else 0 * h,
           h.T @ dhu if need_u else 0 * u) + ((dhu.sum(0),) if bias else ())
    return tuple(v.astype(h.dtype) for v in out)


def _lstm_seq_ref(x: Any, h: Any, c: Any, k: Any, rk: Any, b: Any = None,
                 mask: Any = None) -> Any:
    outs = []
    for t in range(x.shape[1]):
        h2, c2 = _lstm_ref(x[:, t] @ k + (0 if b is None else b), h, c, rk)
        if mask is not None:
            m = mask[:, t:t + 1]
            h2, c2 = np.where(m, h2, h), np.where(m, c2, c)
        h, c = h2, c2
        outs.append(h)
    return np.stack(outs, 1).astype(x.dtype), h.astype(x.dtype), c.astype(x.dtype)


def _lstm_seq_torch(T: Any, x: Any, h: Any, c: Any, k: Any, rk: Any, b: Any = None,
                    mask: Any = None) -> Any:
    eye = T.eye(k.shape[1], dtype=x.dtype)
    outs = []
    for t in range(x.shape[1]):
        h2, c2 = T.lstm_cell(x[:, t] @ k + (0 if b is None else b), (h, c), eye, rk.T)
        if mask is not None:
            m = mask[:, t:t + 1]
            h2, c2 = T.where(m, h2, h), T.where(m, c2, c)
        h, c = h2, c2
        outs.append(h)
    return T.stack(outs, 1), h, c


def _lstm_seq_grad_ref(dh: Any, dc: Any, gates: Any, cs: Any, tcs: Any, hs: Any,
                       x: Any, h0: Any, c0: Any, k: Any, rk: Any, mask: Any = None,
                       dhs: Any = None, dgates: Any = None, dcs: Any = None,
                       dtcs: Any = None, use_bias: bool = True,
                       need_inputs: bool = True) -> Any:
    """Backpropagation through time, one step at a time, through ``_lstm_grad_ref``."""
    steps, _, n, u = gates.shape
    dz = np.zeros((steps, n, 4 * u), gates.dtype)

    def keras(g: Any) -> Any:  # (4, batch, units) -> (batch, 4 units)
        return g.transpose(1, 0, 2).reshape(n, 4 * u)

    for t in range(steps - 1, -1, -1):
        dh = dh + (0 if dhs is None else dhs[:, t])
        dc = dc + (0 if dcs is None else dcs[t])
        m = np.ones((n, 1)) if mask is None else mask[:, t:t + 1].astype(dh.dtype)
        extra = (None, None) if dgates is None else (keras(dgates[t]), dtcs[t])
        c_prev = c0 if t == 0 else cs[t - 1]
        h_prev = h0 if t == 0 else hs[:, t - 1]
        dz[t], dhp, dcp, _ = _lstm_grad_ref(dh * m, dc * m, keras(gates[t]), tcs[t], c_prev,
                                            h_prev, rk, *extra)
        dh, dc = dhp + dh * (1 - m), dcp + dc * (1 - m)
    h_prev = np.concatenate([h0[None], hs.transpose(1, 0, 2)[:-1]])
    dx = np.einsum("tnk,fk->ntf", dz, k) * need_inputs
    out = (dx, dh, dc, np.einsum("ntf,tnk->fk", x, dz), np.einsum("tnu,tnk->uk", h_prev, dz))
    out += (dz.sum((0, 1)),) if use_bias else ()
    return tuple(v.astype(x.dtype) for v in out)


def _gru_seq_ref(x: Any, h: Any, k: Any, rk: Any, b: Any = None, mask: Any = None) -> Any:
    outs = []
    for t in range(x.shape[1]):
        h2 = _gru_ref(x[:, t] @ k + (0 if b is None else b[0]), h, rk,
                      None if b is None else b[1])
        if mask is not None:
            h2 = np.where(mask[:, t:t + 1], h2, h)
        h = h2
        outs.append(h)
    return np.stack(outs, 1).astype(x.dtype), h.astype(x.dtype)


def _gru_seq_torch(T: Any, x: Any, h: Any, k: Any, rk: Any, b: Any = None,
                   mask: Any = None) -> Any:
    outs = []
    for t in range(x.shape[1]):
        h2 = _gru_torch(T, x[:, t] @ k + (0 if b is None else b[0]), h, rk,
                        None if b is None else b[1])
        if mask is not None:
            h2 = T.where(mask[:, t:t + 1], h2, h)
        h = h2
        outs.append(h)
    return T.stack(outs, 1), h


def _gru_seq_grad_ref(dh: Any, gates: Any, hhs: Any, hs: Any, x: Any, h0: Any, k: Any,
                      rk: Any, mask: Any = None, dhs: Any = None, dgates: Any = None,
                      dhhs: Any = None, use_bias: bool = True,
                      need_inputs: bool = True) -> Any:
    """Backpropagation through time, one step at a time, through ``_gru_grad_ref``."""
    steps, _, n, u = gates.shape
    dxw = np.zeros((steps, n, 3 * u), gates.dtype)
    drk, drb = np.zeros_like(rk), np.zeros(3 * u, gates.dtype)

    def keras(g: Any) -> Any:  # (3, batch, units) -> (batch, 3 units)
        return g.transpose(1, 0, 2).reshape(n, 3 * u)

    for t in range(steps - 1, -1, -1):
        dh = dh + (0 if dhs is None else dhs[:, t])
        m = np.ones((n, 1)) if mask is None else mask[:, t:t + 1].astype(dh.dtype)
        extra = (None, None) if dgates is None else (keras(dgates[t]), dhhs[t])
        h_prev = h0 if t == 0 else hs[:, t - 1]
        dxw[t], dhp, du, db = _gru_grad_ref(dh * m, keras(gates[t]), hhs[t], h_prev, rk,
                                            *extra)
        drk, drb = drk + du, drb + db
        dh = dhp + dh * (1 - m)
    dx = np.einsum("tnk,fk->ntf", dxw, k) * need_inputs
    out = (dx, dh, np.einsum("ntf,tnk->fk", x, dxw), drk)
    out += (np.stack([dxw.sum((0, 1)), drb]),) if use_bias else ()
    return tuple(v.astype(x.dtype) for v in out)


def _gru_seq_args(bias: bool, mask: bool) -> Any:
    return args(arr(2, 3, 3, domain="any"), arr(2, 2, domain="unit"),
                arr(3, 6, domain="unit"), arr(2, 6, domain="unit"),
                arr(2, 6, domain="unit") if bias else None, _bools(2, 3) if mask else None)


def _gru_seq_grad_args(mask: bool, extra: bool, dhs: bool = True) -> Any:
    """Batch 2, 2 steps, 2 features, 2 units."""
    ex = (_gates(2, 3, 2, 2), arr(2, 2, 2)) if extra else (None, None)
    return args(arr(2, 2), _gates(2, 3, 2, 2), arr(2, 2, 2), _gates(2, 2, 2),
                arr(2, 2, 2, domain="any"), _gates(2, 2), arr(2, 6, domain="unit"),
                arr(2, 6, domain="unit"),
                np.array([[True, False], [True, True]]) if mask else None,
                arr(2, 2, 2) if dhs else None, *ex)


def _bools(*shape: int) -> Any:
    return lambda rng, dt: rng.random(shape) < 0.6


def _lstm_seq_args(bias: bool, mask: bool) -> Any:
    return args(arr(2, 3, 3, domain="any"), arr(2, 2, domain="unit"), arr(2, 2, domain="any"),
                arr(3, 8, domain="unit"), arr(2, 8, domain="unit"),
                arr(8, domain="unit") if bias else None, _bools(2, 3) if mask else None)


def _lstm_seq_grad_args(mask: bool, extra: bool, dhs: bool = True) -> Any:
    """Batch 2, 2 steps, 2 features, 2 units (second-order differences of 15 inputs)."""
    ex = (_gates(2, 4, 2, 2), arr(2, 2, 2), arr(2, 2, 2)) if extra else (None, None, None)
    return args(arr(2, 2), arr(2, 2), _gates(2, 4, 2, 2),
                arr(2, 2, 2, domain="any"), _gates(2, 2, 2), _gates(2, 2, 2),
                arr(2, 2, 2, domain="any"), _gates(2, 2), arr(2, 2, domain="any"),
                arr(2, 8, domain="unit"), arr(2, 8, domain="unit"),
                np.array([[True, False], [True, True]]) if mask else None,
                arr(2, 2, 2) if dhs else None, *ex)


def _gates(b: int, *k: int) -> Any:
    return arr(b, *k, domain="unit")  # activations: sigmoids in (0, 1), tanh in (-1, 1)


_lstm_grad_args = args(arr(3, 2), arr(3, 2), _gates(3, 8), _gates(3, 2),
                       arr(3, 2, domain="any"), arr(3, 2, domain="unit"), arr(2, 8, domain="unit"),
                       None, None)
_lstm_grad_extra = args(arr(3, 2), arr(3, 2), _gates(3, 8), _gates(3, 2),
                        arr(3, 2, domain="any"), arr(3, 2, domain="unit"),
                        arr(2, 8, domain="unit"), arr(3, 8), arr(3, 2))
_gru_grad_args = args(arr(3, 2), _gates(3, 6), arr(3, 2), arr(3, 2, domain="unit"),
                      arr(2, 6, domain="unit"), None, None)
_gru_grad_extra = args(arr(3, 2), _gates(3, 6), arr(3, 2), arr(3, 2, domain="unit"),
                       arr(2, 6, domain="unit"), arr(3, 6), arr(3, 2))


def specs() -> list[OpSpec]:
    lstm = (("batch3", 3, 2), ("one_unit", 2, 1))
    gru = [(f"{'after' if ra else 'before'}_{'bias' if bias else 'nobias'}", ra, bias)
           for ra in (True, False) for bias in (True, False)]
    return [
        OpSpec("nn_ops.lstm_cell", nn.lstm_cell, _lstm_ref, tuple(
            case(name, args(arr(b, 4 * n, domain="any"), arr(b, n, domain="unit"),
                            arr(b, n, domain="any"), arr(n, 4 * n, domain="unit")))
            for name, b, n in lstm), FLOATS, True, (0, 1, 2, 3), _lstm_torch),
        OpSpec("nn_ops.gru_cell", nn.gru_cell, _gru_ref, tuple(
            case(name, args(arr(3, 6, domain="any"), arr(3, 2, domain="unit"),
                            arr(2, 6, domain="unit"),
                            arr(6, domain="unit") if bias else None), reset_after=ra)
            for name, ra, bias in gru), FLOATS, True, (0, 1, 2, 3), _gru_torch),
        OpSpec("lstm_cell_grad", rec.lstm_cell_grad, _lstm_grad_ref, (
            case("first_order", _lstm_grad_args),
            case("saved_gradients", _lstm_grad_extra),
            case("no_h_no_u", _lstm_grad_extra, need_h=False, need_u=False),
        ), FLOATS, True, tuple(range(9))),
        OpSpec("gru_cell_grad", rec.gru_cell_grad, _gru_grad_ref, (
            case("first_order", _gru_grad_args),
            case("saved_gradients", _gru_grad_extra),
            case("no_h_no_bias", _gru_grad_extra, need_h=False, bias=False),
            case("no_u", _gru_grad_args, need_u=False),
        ), FLOATS, True, tuple(range(7))),
        OpSpec("nn_ops.lstm_sequence", nn.lstm_sequence, _lstm_seq_ref, (
            case("bias", _lstm_seq_args(True, False)),
            case("no_bias", _lstm_seq_args(False, False)),
            case("masked", _lstm_seq_args(True, True)),
        ), FLOATS, True, tuple(range(6)), _lstm_seq_torch),
        OpSpec("lstm_sequence_grad", rseq.lstm_sequence_grad, _lstm_seq_grad_ref, (
            case("first_order", _lstm_seq_grad_args(False, False)),
            case("masked_final_states_no_bias", _lstm_seq_grad_args(True, False, dhs=False),
                 use_bias=False),
            case("no_inputs", _lstm_seq_grad_args(False, False), need_inputs=False),
            case("masked_saved_gradients", _lstm_seq_grad_args(True, True)),
        ), FLOATS, True, tuple(i for i in range(16) if i != 11)),
        OpSpec("nn_ops.gru_sequence", nn.gru_sequence, _gru_seq_ref, (
            case("bias", _gru_seq_args(True, False)),
            case("no_bias", _gru_seq_args(False, False)),
            case("masked", _gru_seq_args(True, True)),
        ), FLOATS, True, tuple(range(5)), _gru_seq_torch),
        OpSpec("gru_sequence_grad", gseq.gru_sequence_grad, _gru_seq_grad_ref, (
            case("first_order", _gru_seq_grad_args(False, False)),
            case("masked_final_state_no_bias", _gru_seq_grad_args(True, False, dhs=False),
                 use_bias=False),
            case("no_inputs", _gru_seq_grad_args(False, False), need_inputs=False),
            case("masked_saved_gradients", _gru_seq_grad_args(True, True)),
        ), FLOATS, True, tuple(i for i in range(12) if i != 8)),
    ]
