"""``lstm_sequence`` and its backward on a GPU: each step's cell is one kernel.

On the host the steps run as numpy passes over gate-major blocks (``recurrent_sequence``);
on a GPU each pass is a kernel launch, and a small LSTM's step costs what its launches
cost (LSTM(128) over 28 steps launched about 1,060 a training step). Here, as Chainer's
``functions/activation/lstm.py`` does on cupy, every step is one recurrent matmul and one
``ElementwiseKernel`` that computes the four gates, the cell and the output (forward) or
all four gates' pre-activation gradients and the cell's gradient (backward), reading the
gates where the whole sequence's input projection left them; the input projection and the
weights' gradients are one matmul each for the whole sequence.

The saved outputs are those of the host path (gate activations gate-major, time-major
cell states and their ``tanh``), so the rules and the second-order backward (which runs
the host path's passes) read them alike.
"""

from __future__ import annotations

from typing import Any

from .._nvmath_products import unsplit_matmul
from . import _fused


def _cell_source(use_bias: bool, masked: bool, last: bool) -> tuple[str, str, str]:
    b = ("bi", "bf", "bg", "bo") if use_bias else ("", "", "", "")
    z = [f"x{k} + {bk} + h{k}" if use_bias else f"x{k} + h{k}"
         for k, bk in zip("ifgo", b)]
    ins = "T xi, T xf, T xg, T xo, T hi, T hf, T hg, T ho, T c"
    ins += ", T bi, T bf, T bg, T bo" if use_bias else ""
    ins += ", bool keep, T h" if masked else ""
    outs = "T gi, T gf, T gg, T go, T c2, T tc, T h2" + (", T cl, T hl" if last else "")
    body = (f"gi = 1 / (1 + exp(-({z[0]}))); gf = 1 / (1 + exp(-({z[1]}))); "
            f"gg = tanh({z[2]}); go = 1 / (1 + exp(-({z[3]}))); "
            "T cn = gf * c + gi * gg; tc = tanh(cn); T hn = go * tc; ")
    body += "c2 = keep ? cn : c; h2 = keep ? hn : h" if masked else "c2 = cn; h2 = hn"
    if last:  # the final states as arrays of their own, not copies of the last step's
        body += "; cl = c2; hl = h2"
    return ins, outs, body


def lstm_forward(be: Any, x: Any, h0: Any, c0: Any, k: Any, rk: Any, *rest: Any,
                 use_bias: bool, masked: bool) -> tuple[Any, ...]:
    """``recurrent_sequence._lstm_seq``'s results, each step one matmul and one kernel."""
    xp = be.xp
    n, steps, f = x.shape
    u = h0.shape[1]
    dt = h0.dtype
    proj = xp.matmul(x.reshape(n * steps, f), k).reshape(n, steps, 4 * u)
    cells = [_fused.kernel(xp, f"lstm_cell_{int(use_bias)}{int(masked)}{int(last)}",
                           *_cell_source(use_bias, masked, last)) for last in (False, True)]
    bias = tuple(rest[0][j * u:(j + 1) * u] for j in range(4)) if use_bias else ()
    mask = rest[-1] if masked else None
    gates = xp.empty((steps, 4, n, u), dtype=dt)
    cs = xp.empty((steps, n, u), dtype=dt)
    tcs = xp.empty((steps, n, u), dtype=dt)
    hs = xp.empty((steps, n, u), dtype=dt)
    h, c = h0, c0
    h_last, c_last = xp.empty((n, u), dtype=dt), xp.empty((n, u), dtype=dt)
    step_matmul = unsplit_matmul(xp)
    for t in range(steps):
        hu = step_matmul(h, rk)
        z = proj[:, t]
        args = [z[:, j * u:(j + 1) * u] for j in range(4)]
        args += [hu[:, j * u:(j + 1) * u] for j in range(4)]
        args += [c, *bias]
        if mask is not None:
            args += [mask[:, t:t + 1], h]
        g = gates[t]
        last = t == steps - 1
        cells[last](*args, g[0], g[1], g[2], g[3], cs[t], tcs[t], hs[t],
                    *((c_last, h_last) if last else ()))
        h, c = hs[t], cs[t]
    return hs.transpose(1, 0, 2), h_last, c_last, gates, cs, tcs


def _cell_grad_source(sequence: bool, masked: bool) -> tuple[str, str, str]:
    ins = "T dh, T dc, T gi, T gf, T gg, T go, T tc, T cp"
    ins += ", T dhs" if sequence else ""
    ins += ", bool keep" if masked else ""
    outs = "T zi, T zf, T zg, T zo, T dc2" + (", T dhp" if masked else "")
    body = "T dht = dh + dhs; " if sequence else "T dht = dh; "
    if masked:  # a masked step passes the state gradients through
        body += ("dhp = keep ? 0 : dht; T dcp = keep ? 0 : dc; T dhm = keep ? dht : 0; "
                 "T dcm = keep ? dc : 0; ")
    else:
        body += "T dhm = dht; T dcm = dc; "
    # the host path's passes, in their order: dct = dh * o * (1 - tc^2) + dc, then each
    # gate's product times its activation's derivative
    body += ("T dct = dhm * go * (1 - tc * tc) + dcm; "
             "zi = dct * gg * ((1 - gi) * gi); zf = dct * cp * ((1 - gf) * gf); "
             "zg = dct * gi * (1 - gg * gg); zo = dhm * tc * ((1 - go) * go); ")
    body += "dc2 = dct * gf + dcp" if masked else "dc2 = dct * gf"
    return ins, outs, body


def lstm_backward(be: Any, dh: Any, dc: Any, gates: Any, cs: Any, tcs: Any, hs: Any,
                  x: Any, h0: Any, c0: Any, k: Any, rk: Any, mask: Any, dhs: Any, *,
                  use_bias: bool, need_inputs: bool) -> tuple[Any, ...]:
    """``recurrent_sequence._lstm_seq_grad``'s results without the saved outputs'
    gradients: each step one kernel and one matmul (two launches more where masked)."""
    xp = be.xp
    steps, _, n, u = gates.shape
    ins, outs, body = _cell_grad_source(dhs is not None, mask is not None)
    cell = _fused.kernel(xp, f"lstm_cell_grad_{int(dhs is not None)}{int(mask is not None)}",
                         ins, outs, body)
    dz = xp.empty((steps, n, 4 * u), dtype=gates.dtype)  # Keras's layout, time-major
    rk_t = rk.T
    step_matmul = unsplit_matmul(xp)  # (cuBLASLt split the thin (batch, 4 units) @
    for t in range(steps - 1, -1, -1):  # (4 units, units) product: a reduction kernel)
        g = gates[t]
        args = [dh, dc, g[0], g[1], g[2], g[3], tcs[t], c0 if t == 0 else cs[t - 1]]
        if dhs is not None:
            args.append(dhs[:, t])
        if mask is not None:
            args.append(mask[:, t:t + 1])
        zt = dz[t]
        dc = xp.empty((n, u), dtype=gates.dtype)
        passed = () if mask is None else (xp.empty((n, u), dtype=gates.dtype),)
        cell(*args, *(zt[:, j * u:(j + 1) * u] for j in range(4)), dc, *passed)
        dh = step_matmul(zt, rk_t)
        if passed:
            dh += passed[0]
    flat = dz.reshape(steps * n, 4 * u)
    # the kernel's, the recurrent kernel's and the bias's gradients as one product: each
    # step's input beside the state it started from (and a one), time-major, against
    # every step's gradients
    f = x.shape[2]
    xh = _inputs_beside_states(xp, x, h0, hs, use_bias)
    dw = xp.matmul(xh.reshape(steps * n, xh.shape[2]).T, flat)
    if need_inputs:
        dx = xp.matmul(flat, k.T).reshape(steps, n, -1).transpose(1, 0, 2)
    else:
        dx = xp.zeros_like(x)
    out = (dx, dh, dc, dw[:f], dw[f:f + u])
    return (*out, dw[f + u]) if use_bias else out


_GATHER_XH = """
I w = F + U + B;
I j = (I)i % w; I r = (I)i / w;
I b = r % N; I t = r / N;
bool in_x = j < F; bool in_h = !in_x && j < F + U;
T xv = x[in_x ? (b * S + t) * F + j : 0];
T h0v = h0[in_h && t == 0 ? b * U + j - F : 0];
T hv = hs[in_h && t > 0 ? ((t - 1) * N + b) * U + j - F : 0];
xh = in_x ? xv : in_h ? (t == 0 ? h0v : hv) : (T)1
"""


def _inputs_beside_states(xp: Any, x: Any, h0: Any, hs: Any, use_bias: bool) -> Any:
    """``(steps, batch, features + units [+ 1])``: at step ``t``, ``x[:, t]`` beside the
    state the step started from (``h0``, then ``hs[:, t - 1]``) and, with ``use_bias``, a
    column of ones, gathered by one kernel (three copies and the bias's column sums
    before)."""
    n, steps, f = x.shape
    u = h0.shape[1]
    xs, h0s = xp.ascontiguousarray(x), xp.ascontiguousarray(h0)
    hs_t = xp.ascontiguousarray(hs.transpose(1, 0, 2))  # time-major underneath: no copy
    xh = xp.empty((steps, n, f + u + int(use_bias)), dtype=h0.dtype)
    index = "long long" if xh.size > 2 ** 31 - 1 else "int"
    gather = _fused.kernel(xp, f"lstm_inputs_beside_states_{index.replace(' ', '_')}",
                           "raw T x, raw T h0, raw T hs, int32 N, int32 S, int32 F, "
                           "int32 U, int32 B", "T xh",
                           _GATHER_XH.replace("I ", index + " ").replace("(I)", f"({index})"))
    gather(xs, h0s, hs_t, n, steps, f, u, int(use_bias), xh)
    return xh
