"""A whole LSTM sequence as one op: the time loop runs inside the forward.

``lstm_sequence`` projects the inputs of every step in one matmul up front, then runs
the steps (one recurrent matmul and the gate arithmetic each) in one forward call. Its
backward, ``lstm_sequence_grad``, is the hand-written backpropagation through time: the
element-wise factors the loop needs are computed for all steps at once from the saved
gate activations, each step is then a few passes and one matmul, and the kernel, the
recurrent kernel and the bias get their gradients as single matmuls (sums) over all
steps at the end.

Saved activations are extra outputs (time-major): ``gates`` (steps, 4, batch, units),
the activations ``i, f, c, o`` as one block each; ``cs``, the cell state after each step; ``tcs``,
``tanh`` of the cell's new state at each step. A second-order gradient that reaches them
comes back into the rule as output gradients, which ``lstm_sequence_grad`` takes as
optional inputs, so every order stays exact (its own rule in ember-tape differentiates
the same computation written in ember ops).

Masks follow Keras: at a masked step (``mask[b, t]`` False) the states ``h, c`` keep
their previous values and the output repeats the previous output.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dtypes import bfloat16 as _BF16
from .._errors import InvalidArgumentError
from .._registry import execute, register
from . import _args, _fused, recurrent_fused

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


_SIGN = (-1.0, -1.0, 1.0, -1.0)  # gates i, f, c, o: the sigmoid gates' columns negated


def _lstm_seq(be: Any, x: Any, h0: Any, c0: Any, k: Any, rk: Any, *rest: Any,
              use_bias: bool, masked: bool) -> tuple[Any, ...]:
    xp = be.xp
    if _fused.fusable(xp):  # a GPU: each step one matmul and one kernel
        return recurrent_fused.lstm_forward(be, x, h0, c0, k, rk, *rest, use_bias=use_bias,
                                            masked=masked)
    n, steps, f = x.shape
    u = h0.shape[1]
    dt = h0.dtype
    # gate-major blocks (steps, 4, batch, units): every gate of a step is one contiguous
    # (batch, units) block, and numpy's element-wise passes are several times faster on
    # those than on column slices. Every step's input projection at once, into the array
    # that then holds the gates (fresh memory costs page faults on first touch). The
    # sigmoid gates' weights are negated (exactly: every product and sum changes sign
    # only), so their pre-activations arrive as -z and sigmoid is exp, +1 and a reciprocal
    # in place: no negation, no clamp (exp overflows to inf where sigmoid is 0).
    xt = x.transpose(1, 0, 2)
    if use_bias:  # [x, 1] @ [kernel; bias]: the bias rides in the matmul, no extra pass
        xt = xp.concatenate([xt, xp.ones((steps, n, 1), dtype=dt)], axis=2)
        k = xp.concatenate([k, rest[0][None]])
        f += 1
    sign = xp.asarray(_SIGN, dtype=dt)[:, None, None]
    gates = xp.matmul(xt[:, None], k.reshape(f, 4, u).transpose(1, 0, 2) * sign)
    rk4 = rk.reshape(u, 4, u).transpose(1, 0, 2) * sign  # (a new contiguous array)
    carry = ~rest[-1].T[..., None] if masked else None  # (steps, batch, 1)
    cs = xp.empty((steps, n, u), dtype=dt)
    tcs = xp.empty((steps, n, u), dtype=dt)
    hs = xp.empty((steps, n, u), dtype=dt)
    hu = xp.empty((4, n, u), dtype=dt)
    ig = xp.empty((n, u), dtype=dt)
    one = dt.type(1)
    h, c = h0, c0
    with np.errstate(over="ignore"):
        for t in range(steps):
            z = gates[t]
            z += xp.matmul(h, rk4, out=hu)
            for s in (z[:2], z[3]):  # sigmoid(-s) = 1 / (1 + exp(s)), in place
                xp.exp(s, out=s)
                s += one
                xp.divide(one, s, out=s)
            i, fg, g, o = z
            xp.tanh(g, out=g)
            cn, tc, hn = cs[t], tcs[t], hs[t]
            xp.multiply(fg, c, out=cn)
            cn += xp.multiply(i, g, out=ig)
            xp.tanh(cn, out=tc)
            xp.multiply(o, tc, out=hn)
            if carry is not None:  # masked steps keep the previous states
                xp.copyto(cn, c, where=carry[t])
                xp.copyto(hn, h, where=carry[t])
            h, c = hn, cn
    return hs.transpose(1, 0, 2), hs[-1].copy(), cs[-1].copy(), gates, cs, tcs


def unpack_grad_inputs(rest: Any, masked: bool, sequence_gradient: bool
                       ) -> tuple[Any, Any, tuple[Any, ...]]:
    """(mask, dhs, (dgates, dcs, dtcs) or ()) from the optional inputs of
    ``lstm_sequence_grad``, in that order."""
    rest = list(rest)
    mask = rest.pop(0) if masked else None
    dhs = rest.pop(0) if sequence_gradient else None
    return mask, dhs, tuple(rest)


def _lstm_seq_grad(be: Any, dh: Any, dc: Any, gates: Any, cs: Any, tcs: Any, hs: Any,
                   x: Any, h0: Any, c0: Any, k: Any, rk: Any, *rest: Any, use_bias: bool,
                   masked: bool, sequence_gradient: bool, need_inputs: bool
                   ) -> tuple[Any, ...]:
    """Backpropagation through time for ``lstm_sequence`` (see the module docstring).

    ``rest``: the mask (with ``masked``), the gradient of every step's output (with
    ``sequence_gradient``; without, the final states' gradients alone), then optionally
    the gradients of the saved outputs ``gates``, ``cs`` and ``tcs`` (second and higher
    orders).

    Returns d(inputs) (zeros unless ``need_inputs``: data needs none), d(h0), d(c0),
    d(kernel), d(recurrent_kernel) and, with ``use_bias``, d(bias).
    """
    xp = be.xp
    steps, _, n, u = gates.shape
    u4 = 4 * u
    one = gates.dtype.type(1)
    mask, dhs, extra = unpack_grad_inputs(rest, masked, sequence_gradient)
    if not extra and _fused.fusable(xp):  # a GPU: each step one kernel and one matmul
        return recurrent_fused.lstm_backward(
            be, dh, dc, gates, cs, tcs, hs, x, h0, c0, k, rk, mask, dhs,
            use_bias=use_bias, need_inputs=need_inputs)
    keep = None if mask is None else mask.T[..., None].astype(gates.dtype)
    dhs_t = None if dhs is None else dhs.transpose(1, 0, 2)
    rk_t = xp.ascontiguousarray(rk.T)  # a little faster in the 28 products than a view
    dz = xp.empty((steps, n, u4), dtype=gates.dtype)  # d(pre-activations), Keras's layout
    zs = xp.empty((4, n, u), dtype=gates.dtype)  # one step's, gate-major
    d = xp.empty((4, n, u), dtype=gates.dtype)  # the activations' derivatives at a step
    for t in range(steps - 1, -1, -1):
        gt, tc = gates[t], tcs[t]
        i, f, g, o = gt
        if dhs_t is not None:
            dh = dh + dhs_t[t]
        if extra:
            dc = dc + extra[1][t]
        if keep is not None:  # a masked step passes the state gradients through
            m = keep[t]
            dh_pass, dc_pass = dh * (one - m), dc * (one - m)
            dh, dc = dh * m, dc * m
        dct = dh * o
        if extra:
            dct += extra[2][t]
        tc2 = tc * tc
        xp.subtract(one, tc2, out=tc2)
        dct *= tc2
        dct += dc
        xp.multiply(dct, g, out=zs[0])
        xp.multiply(dct, c0 if t == 0 else cs[t - 1], out=zs[1])
        xp.multiply(dct, i, out=zs[2])
        xp.multiply(dh, tc, out=zs[3])
        if extra:
            zs += extra[0][t]
        xp.subtract(one, gt, out=d)  # s (1 - s) for the sigmoids, 1 - g^2 for tanh
        d *= gt
        xp.multiply(g, g, out=d[2])
        xp.subtract(one, d[2], out=d[2])
        zs *= d
        zt = dz[t]
        zt.reshape(n, 4, u)[...] = zs.transpose(1, 0, 2)
        dh = xp.matmul(zt, rk_t)
        dc = dct * f
        if keep is not None:
            dh += dh_pass
            dc += dc_pass
    # the weights' gradients: one matmul (sum) over every step
    flat = dz.reshape(steps * n, u4)
    h_prev = hs.transpose(1, 0, 2)[:-1]  # hs is time-major underneath: no copy
    drk = xp.matmul(h0.T, dz[0])
    if steps > 1:
        drk += xp.matmul(h_prev.reshape((steps - 1) * n, u).T, flat[n:])
    if need_inputs:
        dx = xp.matmul(flat, k.T).reshape(steps, n, -1).transpose(1, 0, 2)
    else:
        dx = xp.zeros_like(x)
    out = (dx, dh, dc, xp.matmul(_time_major(xp, x).T, flat), drk)
    # the bias's: the rows summed as one matrix-vector product (2x numpy's column sums)
    return (*out, xp.matmul(xp.ones(steps * n, dtype=flat.dtype), flat)) if use_bias else out


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


def check_sequence(op: str, x: Any, named: dict[str, Any], mask: Any, gates: int = 4,
                   bias_shape: tuple[int, ...] | None = None) -> None:
    """The checks of a whole-sequence op's arguments (``lstm_sequence``: 4 gates and a
    (4 units,) bias; ``gru_sequence``: 3 gates and a (2, 3 units) bias)."""
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
    want = {"inputs": x.shape, "h": (b, n), "c": (b, n), "kernel": (feat, gates * n),
            "recurrent_kernel": (n, gates * n),
            "bias": (gates * n,) if bias_shape is None else bias_shape}
    for k, v in named.items():
        if v.shape != want[k]:
            raise InvalidArgumentError(
                f"{op}: {k} has shape {v.shape}, expected {want[k]} for inputs of shape "
                f"{x.shape} and a state h of shape {h.shape} ({gates} gates of {n} units)")
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
    check_sequence("lstm_sequence", x, named, m)
    ins = tuple(named.values()) + (() if m is None else (m,))
    out = execute(_seq_op, ins, {"use_bias": bias is not None, "masked": m is not None})
    return out[0], out[1], out[2]


def lstm_sequence_grad(dh: Any, dc: Any, gates: Any, cs: Any, tcs: Any, hs: Any,
                       inputs: Any, h: Any, c: Any, kernel: Any, recurrent_kernel: Any,
                       mask: Any = None, dhs: Any = None, dgates: Any = None, dcs: Any = None,
                       dtcs: Any = None, use_bias: bool = True, need_inputs: bool = True
                       ) -> Any:
    """The backward of ``lstm_sequence`` (for its gradient rule and the op table).

    ``dh``, ``dc``: the gradients of the final states; ``dhs``: optionally, that of every
    step's output; ``gates``, ``cs``, ``tcs``: the saved activations (time-major);
    ``dgates``, ``dcs``, ``dtcs``: their gradients (all three or none). Returns
    d(inputs) (zeros unless ``need_inputs``), d(h), d(c), d(kernel), d(recurrent_kernel)
    and, with ``use_bias``, d(bias).
    """
    extra = (dgates, dcs, dtcs)
    if any(e is None for e in extra) and any(e is not None for e in extra):
        raise InvalidArgumentError("lstm_sequence_grad: give dgates, dcs and dtcs, or none")
    ins = [dh, dc, gates, cs, tcs, hs, inputs, h, c, kernel, recurrent_kernel]
    ins += [v for v in (mask, dhs) if v is not None]
    if dgates is not None:
        ins += extra
    return execute(_seq_grad_op, tuple(_args.tensor(v) for v in ins),
                   {"use_bias": use_bias, "masked": mask is not None,
                    "sequence_gradient": dhs is not None, "need_inputs": bool(need_inputs)})
