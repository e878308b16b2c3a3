"""A whole LSTM sequence as one op: the time loop runs inside the forward.

``lstm_sequence`` projects the inputs of every step in one matmul up front, then runs
the steps (one recurrent matmul and the gate arithmetic each) in one forward call. Its
backward, ``lstm_sequence_grad``, is the hand-written backpropagation through time: the
element-wise factors the loop needs are computed for all steps at once from the saved
gate activations, each step is then a few passes and one matmul, and the kernel, the
recurrent kernel and the bias get their gradients as single matmuls (sums) over all
steps at the end.

Saved activations are extra outputs (time-major): ``gates`` (steps, batch, 4 units)
with the activations ``i, f, c, o``; ``cs``, the cell state after each step; ``tcs``,
``tanh`` of the cell's new state at each step. A second-order gradient that reaches them
comes back into the rule as output gradients, which ``lstm_sequence_grad`` takes as
optional inputs, so every order stays exact (its own rule in ember-tape differentiates
the same computation written in ember ops).

Masks follow Keras: at a masked step (``mask[b, t]`` False) the states ``h, c`` keep
their previous values and the output repeats the previous output.
"""

from __future__ import annotations

from typing import Any

from .._dtypes import bfloat16 as _BF16
from .._errors import InvalidArgumentError
from .._registry import execute, register
from . import _args
from .recurrent import _sigmoid_

F = "recurrent"


def _in_float32(forward: Any) -> Any:
    """``forward`` computing float16/bfloat16 inputs in float32, its results cast back
    (a bool mask passes as it is)."""

    def run(be: Any, *arrays: Any, **attrs: Any) -> Any:
        dt = arrays[0].dtype
        if dt.itemsize >= 4:
            return forward(be, *arrays, **attrs)
        out = forward(be, *(a if a.dtype.kind == "b" else a.astype("float32")
                            for a in arrays), **attrs)
        return tuple(o.astype(dt) for o in out)

    return run


def _time_major(xp: Any, x: Any) -> Any:
    """(batch, steps, features) as contiguous (steps * batch, features) rows."""
    n, t, f = x.shape
    return xp.ascontiguousarray(x.transpose(1, 0, 2)).reshape(t * n, f)


def _lstm_seq(be: Any, x: Any, h0: Any, c0: Any, k: Any, rk: Any, *rest: Any,
              use_bias: bool, masked: bool) -> tuple[Any, ...]:
    xp = be.xp
    n, steps, _ = x.shape
    u = h0.shape[1]
    dt = h0.dtype
    xw = xp.matmul(_time_major(xp, x), k)  # every step's input projection at once
    if use_bias:
        xw += rest[0]
    xw = xw.reshape(steps, n, 4 * u)
    carry = ~rest[-1].T[..., None] if masked else None  # (steps, batch, 1)
    gates = xp.empty((steps, n, 4 * u), dtype=dt)
    cs = xp.empty((steps, n, u), dtype=dt)
    tcs = xp.empty((steps, n, u), dtype=dt)
    hs = xp.empty((steps, n, u), dtype=dt)
    h, c = h0, c0
    for t in range(steps):
        z = gates[t]
        xp.matmul(h, rk, out=z)
        z += xw[t]
        g = xp.tanh(z[:, 2 * u:3 * u])  # numpy's tanh is slow on a strided view
        _sigmoid_(xp, z[:, :2 * u])
        _sigmoid_(xp, z[:, 3 * u:])
        z[:, 2 * u:3 * u] = g
        cn, tc, hn = cs[t], tcs[t], hs[t]
        xp.multiply(z[:, u:2 * u], c, out=cn)
        g *= z[:, :u]
        cn += g
        xp.tanh(cn, out=tc)
        xp.multiply(z[:, 3 * u:], tc, out=hn)
        if carry is not None:  # masked steps keep the previous states
            xp.copyto(cn, c, where=carry[t])
            xp.copyto(hn, h, where=carry[t])
        h, c = hn, cn
    return hs.transpose(1, 0, 2), hs[-1].copy(), cs[-1].copy(), gates, cs, tcs


def _lstm_seq_grad(be: Any, dhs: Any, dh_t: Any, dc_t: Any, gates: Any, cs: Any, tcs: Any,
                   hs: Any, x: Any, h0: Any, c0: Any, k: Any, rk: Any, *rest: Any,
                   use_bias: bool, masked: bool) -> tuple[Any, ...]:
    """Backpropagation through time for ``lstm_sequence`` (see the module docstring).

    ``rest``: the mask (with ``masked``), then optionally the gradients of the saved
    outputs ``gates``, ``cs`` and ``tcs`` (second and higher orders).

    Returns d(inputs), d(h0), d(c0), d(kernel), d(recurrent_kernel) and, with
    ``use_bias``, d(bias).
    """
    xp = be.xp
    steps, n, u4 = gates.shape
    u = u4 // 4
    one = gates.dtype.type(1)
    keep = rest[0].T[..., None].astype(gates.dtype) if masked else None
    extra = rest[1:] if masked else rest
    i, f, g, o = (gates[..., j * u:(j + 1) * u] for j in range(4))
    c_prev = xp.concatenate([c0[None], cs[:-1]])
    # the step's factors for every step at once: dz = [dct, dct, dct, dh] * p
    p = xp.empty_like(gates)
    d = one - gates  # the activations' derivatives: s (1 - s), and 1 - g^2 for tanh
    d *= gates
    xp.multiply(g, g, out=d[..., 2 * u:3 * u])
    xp.subtract(one, d[..., 2 * u:3 * u], out=d[..., 2 * u:3 * u])
    xp.multiply(d[..., :u], g, out=p[..., :u])
    xp.multiply(d[..., u:2 * u], c_prev, out=p[..., u:2 * u])
    xp.multiply(d[..., 2 * u:3 * u], i, out=p[..., 2 * u:3 * u])
    xp.multiply(d[..., 3 * u:], tcs, out=p[..., 3 * u:])
    tc2 = one - tcs * tcs
    a = o * tc2  # d(h) -> d(c) through h = o tanh(c)
    if extra:
        dgates, dcs, dtcs = extra
        e = dgates * d  # the saved activations' own gradients, into the pre-activations
        b = dtcs * tc2
    del d, c_prev
    dhs_t = dhs.transpose(1, 0, 2)
    rk_t = rk.T
    dh, dc = dh_t, dc_t
    p4 = p.reshape(steps, n, 4, u)
    for t in range(steps - 1, -1, -1):
        dh = dh + dhs_t[t]
        if extra:
            dc = dc + dcs[t]
        if keep is not None:
            m = keep[t]
            dh_pass, dc_pass = dh * (one - m), dc * (one - m)
            dh, dc = dh * m, dc * m
        dct = dh * a[t]
        dct += dc
        if extra:
            dct += b[t]
        zt = p4[t]
        zt[:, :3] *= dct[:, None, :]
        zt[:, 3] *= dh
        if extra:
            p[t] += e[t]
        dh = xp.matmul(p[t], rk_t)
        dc = dct * f[t]
        if keep is not None:
            dh += dh_pass
            dc += dc_pass
    dz = p.reshape(steps * n, u4)
    h_prev = xp.concatenate([h0[None], xp.ascontiguousarray(hs.transpose(1, 0, 2))[:-1]])
    xt = _time_major(xp, x)
    dx = xp.matmul(dz, k.T).reshape(steps, n, -1).transpose(1, 0, 2)
    out = (dx, dh, dc, xp.matmul(xt.T, dz), xp.matmul(h_prev.reshape(steps * n, u).T, dz))
    return (*out, dz.sum(0)) if use_bias else out


_seq_op = register("lstm_sequence", _in_float32(_lstm_seq), family=F)
_seq_grad_op = register("lstm_sequence_grad", _in_float32(_lstm_seq_grad), family=F)


# --- argument checks ----------------------------------------------------------------------
def _floating(op: str, named: dict[str, Any]) -> None:
    dts = {v.dtype for v in named.values()}
    for k, v in named.items():
        if v.dtype.kind != "f" and v.dtype != _BF16:
            raise InvalidArgumentError(f"{op}: {k} must be floating, got dtype {v.dtype}")
    if len(dts) > 1:
        raise InvalidArgumentError(
            f"{op}: every tensor must have one dtype, got "
            + ", ".join(f"{k} {v.dtype}" for k, v in named.items()))


def _check_sequence(op: str, x: Any, named: dict[str, Any], mask: Any) -> None:
    if x.ndim != 3:
        raise InvalidArgumentError(
            f"{op}: inputs must be (batch, steps, features), got shape {x.shape}")
    h = named["h"]
    if h.ndim != 2:
        raise InvalidArgumentError(f"{op}: h must be a matrix, got shape {h.shape}")
    b, steps, feat = x.shape
    n = h.shape[1]
    if steps == 0:
        raise InvalidArgumentError(f"{op}: inputs need at least one step, got shape {x.shape}")
    want = {"inputs": x.shape, "h": (b, n), "c": (b, n), "kernel": (feat, 4 * n),
            "recurrent_kernel": (n, 4 * n), "bias": (4 * n,)}
    for k, v in named.items():
        if v.shape != want[k]:
            raise InvalidArgumentError(
                f"{op}: {k} has shape {v.shape}, expected {want[k]} for inputs of shape "
                f"{x.shape} and a state h of shape {h.shape} (4 gates of {n} units)")
    _floating(op, named)
    if mask is not None:
        if mask.shape != (b, steps):
            raise InvalidArgumentError(
                f"{op}: mask has shape {mask.shape}, expected (batch, steps) = {(b, steps)}")
        if mask.dtype.kind != "b":
            raise InvalidArgumentError(f"{op}: mask must be bool, got dtype {mask.dtype}")


def lstm_sequence(inputs: Any, h: Any, c: Any, kernel: Any, recurrent_kernel: Any,
                  bias: Any = None, mask: Any = None, name: str | None = None
                  ) -> tuple[Any, Any, Any]:
    """A whole LSTM over the steps of ``inputs``, fused into one op (gates ``i, f, c, o``).

    At each step ``z = x_t @ kernel + bias + h @ recurrent_kernel``, ``i, f, o =
    sigmoid(z_i, z_f, z_o)``, ``c' = f * c + i * tanh(z_c)``, ``h' = o * tanh(c')`` (Keras's
    LSTM with its default activations; PyTorch's nn.LSTM with gates ``i, f, g, o`` and one
    bias). The projection of every step is one matmul; the gradient is one
    backpropagation-through-time op that reuses the forward's gate activations.

    Args:
        inputs: (batch, steps, features).
        h: (batch, units), the initial output state.
        c: (batch, units), the initial cell state.
        kernel: (features, 4 * units).
        recurrent_kernel: (units, 4 * units).
        bias: optional (4 * units,).
        mask: optional bool (batch, steps): at a False step the states keep their values
            and the output repeats the previous output (Keras's masking).
        name: ignored (TensorFlow's op name).

    Returns:
        ``(outputs, h, c)``: every step's output (batch, steps, units) and the final
        states, each (batch, units).

    Raises:
        InvalidArgumentError: a shape does not fit, a tensor is not floating, the float
            tensors' dtypes differ, or the mask is not bool.

    Examples:
        >>> import ember.core as em
        >>> out, h, c = em.nn_ops.lstm_sequence(em.zeros((1, 3, 2)), em.zeros((1, 1)),
        ...                                     em.ones((1, 1)), em.zeros((2, 4)),
        ...                                     em.zeros((1, 4)))
        >>> c  # f = sigmoid(0) = 0.5 and tanh(0) = 0 at each of the 3 steps: 0.5 ** 3
        ember.Tensor([[0.125]], shape=(1, 1), dtype=float32)
        >>> out.shape
        (1, 3, 1)
    """
    x, h, c, k, rk = (_args.tensor(v) for v in (inputs, h, c, kernel, recurrent_kernel))
    named = {"inputs": x, "h": h, "c": c, "kernel": k, "recurrent_kernel": rk}
    if bias is not None:
        named["bias"] = _args.tensor(bias)
    m = None if mask is None else _args.tensor(mask)
    _check_sequence("lstm_sequence", x, named, m)
    ins = tuple(named.values()) + (() if m is None else (m,))
    out = execute(_seq_op, ins, {"use_bias": bias is not None, "masked": m is not None})
    return out[0], out[1], out[2]


def lstm_sequence_grad(dhs: Any, dh: Any, dc: Any, gates: Any, cs: Any, tcs: Any, hs: Any,
                       inputs: Any, h: Any, c: Any, kernel: Any, recurrent_kernel: Any,
                       mask: Any = None, dgates: Any = None, dcs: Any = None,
                       dtcs: Any = None, use_bias: bool = True) -> Any:
    """The backward of ``lstm_sequence`` (for its gradient rule and the op table).

    ``dhs``, ``dh``, ``dc``: the gradients of the outputs; ``gates``, ``cs``, ``tcs``:
    the saved activations (time-major); ``dgates``, ``dcs``, ``dtcs``: their gradients
    (all three or none). Returns d(inputs), d(h), d(c), d(kernel), d(recurrent_kernel)
    and, with ``use_bias``, d(bias).
    """
    extra = (dgates, dcs, dtcs)
    if any(e is None for e in extra) and any(e is not None for e in extra):
        raise InvalidArgumentError("lstm_sequence_grad: give dgates, dcs and dtcs, or none")
    ins = [dhs, dh, dc, gates, cs, tcs, hs, inputs, h, c, kernel, recurrent_kernel]
    if mask is not None:
        ins.append(mask)
    if dgates is not None:
        ins += extra
    return execute(_seq_grad_op, tuple(_args.tensor(v) for v in ins),
                   {"use_bias": use_bias, "masked": mask is not None})
