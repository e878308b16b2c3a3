"""Gradients of the fused recurrent ops (``lstm_cell``, ``gru_cell``, ``lstm_sequence``,
``gru_sequence``).

The forward ops return their gate activations as extra outputs, so a cell's rule reuses
them rather than recomputing them: the whole backward of a step is one fused op
(``lstm_cell_grad``, ``gru_cell_grad``: the element-wise part and the two matmuls). Because the activations
are outputs, a second-order gradient reaching them comes back into the same rule through
``dy``, and the rules add it in.

The fused backward ops get their own rule by differentiating the same element-wise
computation written in ember ops under a nested tape: slower than the fused op, but it
runs only for second and higher orders, and it is exact to every order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember.core as em
from ember.core import REGISTRY, Tensor
from ember.core.extend import run_op

from . import MISSING_AS_NONE, REAL, Gradients, OpContext
from . import register_gradient as _register


def reg(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The recurrent ops are for real tensors only (their forwards refuse complex ones)."""
    return _register(name, complex=REAL)


_LSTM_GRAD = REGISTRY["lstm_cell_grad"]
_GRU_GRAD = REGISTRY["gru_cell_grad"]
_LSTM_SEQ_GRAD = REGISTRY["lstm_sequence_grad"]
_GRU_SEQ_GRAD = REGISTRY["gru_sequence_grad"]


def _t(x: Tensor) -> Tensor:
    return em.transpose(x, (1, 0))


def _given(d: Any, like: Tensor) -> Tensor:
    return em.zeros_like(like) if d is None else d


def _extra(d1: Any, d2: Any, like1: Tensor, like2: Tensor) -> tuple[Tensor, ...]:
    """The saved outputs' gradients: none at first order, both (zeros filled) above."""
    if d1 is None and d2 is None:
        return ()
    return _given(d1, like1), _given(d2, like2)


@reg("lstm_cell")
def _lstm(op: OpContext, dy: Any) -> Gradients:
    dh, dc, dgates, dtc = dy
    _, h, c, u = op.inputs
    h_out, c_out, gates, tc = op.outputs
    _, nh, _, nu = op.needs
    dz, dh_prev, dc_prev, du = run_op(
        _LSTM_GRAD, (_given(dh, h_out), _given(dc, c_out), gates, tc, c, h, u,
                     *_extra(dgates, dtc, gates, tc)), {"need_h": nh, "need_u": nu})
    return dz, dh_prev if nh else None, dc_prev, du if nu else None


@reg("gru_cell")
def _gru(op: OpContext, dy: Any) -> Gradients:
    h_out, gates, hh = op.outputs
    dh = _given(dy[0], h_out)
    h, u = op.inputs[1], op.inputs[2]
    needs = op.needs
    bias = len(op.inputs) == 4
    if op.attrs["reset_after"]:
        g = run_op(_GRU_GRAD, (dh, gates, hh, h, u, *_extra(dy[1], dy[2], gates, hh)),
                   {"need_h": needs[1], "need_u": needs[2], "bias": bias})
        return (g[0], g[1] if needs[1] else None, g[2] if needs[2] else None, *g[3:])
    dgates, dhh = _given(dy[1], gates), _given(dy[2], hh)
    # reset_before: hh is r * h, and a matmul sits inside the element-wise chain
    n = h.shape[1]
    z, r, cand = em.split(gates, 3, axis=1)
    dgz, dgr, dgc = em.split(dgates, 3, axis=1)
    u_zr, u_h = em.split(u, [2 * n, n], axis=1)
    da = (dgc + dh * (1 - z)) * (1 - cand * cand)
    drh = dhh + em.matmul(da, _t(u_h))
    dzr = em.concat([(dgz + dh * (h - cand)) * (z * (1 - z)),
                     (dgr + drh * h) * (r * (1 - r))], 1)
    dh_prev = dh * z + drh * r + em.matmul(dzr, _t(u_zr)) if needs[1] else None
    du = em.concat([em.matmul(_t(h), dzr), em.matmul(_t(hh), da)], 1) if needs[2] else None
    return (em.concat([dzr, da], 1), dh_prev, du,
            *([em.concat([em.reduce_sum(dzr, 0), em.reduce_sum(da, 0)], 0)]
              if len(op.inputs) == 4 else []))


@reg("lstm_sequence")
def _lstm_seq(op: OpContext, dy: Any) -> Gradients:
    dhs, dh, dc, dgates, dcs, dtcs = dy
    hs, h_out, c_out, gates, cs, tcs = op.outputs
    masked = op.attrs["masked"]
    mask = op.inputs[-1:] if masked else ()
    extra: tuple[Any, ...] = ()
    if not (dgates is None and dcs is None and dtcs is None):
        extra = (_given(dgates, gates), _given(dcs, cs), _given(dtcs, tcs))
    need_x = op.needs[0]
    seq = () if dhs is None else (dhs,)  # no zeros to make and add when it has none
    g = run_op(_LSTM_SEQ_GRAD, (_given(dh, h_out), _given(dc, c_out), gates, cs, tcs, hs,
                                *op.inputs[:5], *mask, *seq, *extra),
               {**op.attrs, "sequence_gradient": dhs is not None, "need_inputs": need_x})
    return (g[0] if need_x else None, *g[1:], *((None,) if masked else ()))


@reg("gru_sequence")
def _gru_seq(op: OpContext, dy: Any) -> Gradients:
    dhs, dh, dgates, dhhs = dy
    hs, h_out, gates, hhs = op.outputs
    masked = op.attrs["masked"]
    mask = op.inputs[-1:] if masked else ()
    extra: tuple[Any, ...] = ()
    if not (dgates is None and dhhs is None):
        extra = (_given(dgates, gates), _given(dhhs, hhs))
    need_x = op.needs[0]
    seq = () if dhs is None else (dhs,)
    g = run_op(_GRU_SEQ_GRAD, (_given(dh, h_out), gates, hhs, hs, *op.inputs[:4], *mask,
                               *seq, *extra),
               {**op.attrs, "sequence_gradient": dhs is not None, "need_inputs": need_x})
    return (g[0] if need_x else None, *g[1:], *((None,) if masked else ()))


# --- the fused backward ops, differentiated as compositions -------------------------------
def _lstm_backward(dh: Any, dc: Any, gates: Any, tc: Any, c: Any, h: Any, u: Any,
                   *extra: Any, need_h: bool, need_u: bool) -> tuple[Any, ...]:
    i, f, g, o = em.split(gates, 4, axis=1)
    dct = dh * o if not extra else extra[1] + dh * o
    dct = dc + dct * (1 - tc * tc)
    dz = em.concat([dct * g * (i * (1 - i)), dct * c * (f * (1 - f)),
                    dct * i * (1 - g * g), dh * tc * (o * (1 - o))], 1)
    if extra:
        dz = dz + extra[0] * em.concat([i * (1 - i), f * (1 - f), 1 - g * g, o * (1 - o)], 1)
    return (dz, em.matmul(dz, _t(u)) if need_h else em.zeros_like(h), dct * f,
            em.matmul(_t(h), dz) if need_u else em.zeros_like(u))


def _gru_backward(dh: Any, gates: Any, hh: Any, h: Any, u: Any, *extra: Any,
                  need_h: bool, need_u: bool, bias: bool) -> tuple[Any, ...]:
    z, r, cand = em.split(gates, 3, axis=1)
    dgz, dgr, dgc = em.split(extra[0], 3, axis=1) if extra else (0, 0, 0)
    da = (dgc + dh * (1 - z)) * (1 - cand * cand)
    dzr = em.concat([(dgz + dh * (h - cand)) * (z * (1 - z)),
                     (dgr + da * hh) * (r * (1 - r))], 1)
    dhu = em.concat([dzr, (extra[1] if extra else 0) + da * r], 1)
    out = (em.concat([dzr, da], 1),
           dh * z + em.matmul(dhu, _t(u)) if need_h else em.zeros_like(h),
           em.matmul(_t(h), dhu) if need_u else em.zeros_like(u))
    return (*out, em.reduce_sum(dhu, 0)) if bias else out


def _lstm_seq_step(dh: Any, dc: Any, gates: Any, tc: Any, c_prev: Any, dg: Any, dtc: Any
                   ) -> tuple[Any, Any]:
    """One step of ``_lstm_seq_backward``: d(pre-activations) and d(c) into the cell;
    ``gates`` and ``dg`` are gate-major (4, batch, units)."""
    i, f, g, o = em.unstack(gates, axis=0)
    dtanh = 1 - tc * tc
    dct = dc + dh * o * dtanh if dtc is None else dc + (dh * o + dtc) * dtanh
    dz = em.concat([dct * g, dct * c_prev, dct * i, dh * tc], 1)
    if dg is not None:
        dz = dz + em.concat(em.unstack(dg, axis=0), 1)
    return dz * em.concat([i * (1 - i), f * (1 - f), 1 - g * g, o * (1 - o)], 1), dct * f


def _optional(rest: Any, masked: bool, sequence_gradient: bool
              ) -> tuple[Any, Any, tuple[Any, ...]]:
    """(mask, dhs, (dgates, dcs, dtcs) or ()): ``lstm_sequence_grad``'s optional inputs."""
    rest = list(rest)
    mask = rest.pop(0) if masked else None
    dhs = rest.pop(0) if sequence_gradient else None
    return mask, dhs, tuple(rest)


def _lstm_seq_backward(dh: Any, dc: Any, gates: Any, cs: Any, tcs: Any, hs: Any, x: Any,
                       h0: Any, c0: Any, k: Any, rk: Any, *rest: Any, use_bias: bool,
                       masked: bool, sequence_gradient: bool, need_inputs: bool
                       ) -> tuple[Any, ...]:
    """``lstm_sequence_grad`` in ember ops: the time loop, step by step."""
    steps, _, n, u = gates.shape
    u4 = 4 * u
    mask, dhs, extra = _optional(rest, masked, sequence_gradient)
    keep = None if mask is None else em.cast(mask, gates.dtype)
    dzs: list[Any] = [None] * steps
    rk_t = _t(rk)
    for t in range(steps - 1, -1, -1):
        if dhs is not None:
            dh = dh + dhs[:, t]
        if extra:
            dc = dc + extra[1][t]
        if keep is not None:
            m = keep[:, t:t + 1]
            dh_pass, dc_pass = dh * (1 - m), dc * (1 - m)
            dh, dc = dh * m, dc * m
        dzs[t], dc = _lstm_seq_step(dh, dc, gates[t], tcs[t], c0 if t == 0 else cs[t - 1],
                                    extra[0][t] if extra else None,
                                    extra[2][t] if extra else None)
        dh = em.matmul(dzs[t], rk_t)
        if keep is not None:
            dh, dc = dh + dh_pass, dc + dc_pass
    dz = em.reshape(em.stack(dzs, 0), (steps * n, u4))
    xt = em.reshape(em.transpose(x, (1, 0, 2)), (steps * n, x.shape[2]))
    h_prev = em.concat([em.expand_dims(h0, 0), em.transpose(hs, (1, 0, 2))[:-1]], 0)
    h_prev = em.reshape(h_prev, (steps * n, h0.shape[1]))
    dx = (em.transpose(em.reshape(em.matmul(dz, _t(k)), (steps, n, x.shape[2])), (1, 0, 2))
          if need_inputs else em.zeros_like(x))
    out = (dx, dh, dc, em.matmul(_t(xt), dz), em.matmul(_t(h_prev), dz))
    return (*out, em.reduce_sum(dz, 0)) if use_bias else out


def _gru_seq_backward(dh: Any, gates: Any, hhs: Any, hs: Any, x: Any, h0: Any, k: Any,
                      rk: Any, *rest: Any, use_bias: bool, masked: bool,
                      sequence_gradient: bool, need_inputs: bool) -> tuple[Any, ...]:
    """``gru_sequence_grad`` in ember ops: the time loop, step by step."""
    steps, _, n, u = gates.shape
    mask, dhs, extra = _optional(rest, masked, sequence_gradient)
    keep = None if mask is None else em.cast(mask, gates.dtype)
    dxws: list[Any] = [None] * steps
    dhus: list[Any] = [None] * steps
    rk_t = _t(rk)
    for t in range(steps - 1, -1, -1):
        z, r, cand = em.unstack(gates[t], axis=0)
        h_prev = h0 if t == 0 else hs[:, t - 1]
        if dhs is not None:
            dh = dh + dhs[:, t]
        if keep is not None:
            m = keep[:, t:t + 1]
            dh_pass, dh = dh * (1 - m), dh * m
        dg = em.unstack(extra[0][t], axis=0) if extra else (0, 0, 0)
        da = (dg[2] + dh * (1 - z)) * (1 - cand * cand)
        dz = (dg[0] + dh * (h_prev - cand)) * (z * (1 - z))
        dr = (dg[1] + da * hhs[t]) * (r * (1 - r))
        dhh = da * r if not extra else extra[1][t] + da * r
        dxws[t] = em.concat([dz, dr, da], 1)
        dhus[t] = em.concat([dz, dr, dhh], 1)
        dh = em.matmul(dhus[t], rk_t) + dh * z
        if keep is not None:
            dh = dh + dh_pass
    dxw = em.reshape(em.stack(dxws, 0), (steps * n, 3 * u))
    dhu = em.reshape(em.stack(dhus, 0), (steps * n, 3 * u))
    xt = em.reshape(em.transpose(x, (1, 0, 2)), (steps * n, x.shape[2]))
    h_prev = em.concat([em.expand_dims(h0, 0), em.transpose(hs, (1, 0, 2))[:-1]], 0)
    h_prev = em.reshape(h_prev, (steps * n, u))
    dx = (em.transpose(em.reshape(em.matmul(dxw, _t(k)), (steps, n, x.shape[2])), (1, 0, 2))
          if need_inputs else em.zeros_like(x))
    out = (dx, dh, em.matmul(_t(xt), dxw), em.matmul(_t(h_prev), dhu))
    if use_bias:
        return (*out, em.stack([em.reduce_sum(dxw, 0), em.reduce_sum(dhu, 0)], 0))
    return out


def _vjp(fn: Callable[..., Any], op: OpContext, dy: Any) -> Gradients:
    """The vector-Jacobian product of ``fn`` (the fused op's maths in ember ops)."""
    from .._tape import GradientTape

    # fresh copies: an input given twice gets its two partial derivatives, not the total
    # derivative at each position (which the tape would then add up twice)
    xs = [em.identity(x) for x in op.inputs]
    floats = [x for x in xs if x.dtype.kind == "f" or x.dtype == em.bfloat16]
    with GradientTape() as t:
        for x in floats:
            t.watch(x)
        outs = fn(*xs, **op.attrs)
    g = iter(t.gradient(list(outs), floats, output_gradients=list(dy)))
    return [next(g) if x.dtype.kind == "f" or x.dtype == em.bfloat16 else None for x in xs]


reg("lstm_cell_grad")(lambda op, dy: _vjp(_lstm_backward, op, dy))
reg("gru_cell_grad")(lambda op, dy: _vjp(_gru_backward, op, dy))
reg("lstm_sequence_grad")(lambda op, dy: _vjp(_lstm_seq_backward, op, dy))
reg("gru_sequence_grad")(lambda op, dy: _vjp(_gru_seq_backward, op, dy))
MISSING_AS_NONE.update({"lstm_cell", "gru_cell", "lstm_sequence", "gru_sequence"})
