"""A whole GRU sequence as one op (``reset_after``, Keras 2+'s and PyTorch's GRU).

``gru_sequence`` projects the inputs of every step in one matmul up front, then runs the
steps (one recurrent matmul and the gate arithmetic each) in one forward call, as
``lstm_sequence`` does. Its backward, ``gru_sequence_grad``, is backpropagation through
time from the saved activations; the kernels and biases get their gradients as single
matmuls (sums) over all steps at the end.

Saved activations are extra outputs (time-major): ``gates`` (steps, 3, batch, units), the
update gate ``z``, the reset gate ``r`` and the candidate ``tanh(...)`` as one block each,
and ``hhs`` (steps, batch, units), each step's ``h @ U_h + b_h`` (what the reset gate
scales). A second-order gradient that reaches them comes back into the rule as output
gradients, which ``gru_sequence_grad`` takes as optional inputs, so every order stays exact.

Masks follow Keras: at a masked step the state keeps its value and the output repeats
the previous output.
"""

from __future__ import annotations

from typing import Any

from .._errors import InvalidArgumentError
from .._nvmath_products import unsplit_matmul
from .._registry import execute, register
from . import _args
from .recurrent import _sigmoid_
from .recurrent_sequence import _in_float32, _time_major, check_sequence, unpack_grad_inputs

F = "recurrent"


def _gru_seq(be: Any, x: Any, h0: Any, k: Any, rk: Any, *rest: Any, use_bias: bool,
             masked: bool) -> tuple[Any, ...]:
    xp = be.xp
    n, steps, f = x.shape
    u = h0.shape[1]
    dt = h0.dtype
    xt = x.transpose(1, 0, 2)
    if use_bias:  # [x, 1] @ [kernel; input bias]: the bias rides in the matmul
        xt = xp.concatenate([xt, xp.ones((steps, n, 1), dtype=dt)], axis=2)
        k = xp.concatenate([k, rest[0][0][None]])
        f += 1
    # gate-major blocks (steps, 3, batch, units): numpy's passes are faster on contiguous
    # (batch, units) blocks than on column slices; the array then holds the activations
    gates = xp.matmul(xt[:, None], k.reshape(f, 3, u).transpose(1, 0, 2))
    rk3 = xp.ascontiguousarray(rk.reshape(u, 3, u).transpose(1, 0, 2))
    rb = rest[0][1].reshape(3, 1, u) if use_bias else None
    carry = ~rest[-1].T[..., None] if masked else None  # (steps, batch, 1)
    hhs = xp.empty((steps, n, u), dtype=dt)
    hs = xp.empty((steps, n, u), dtype=dt)
    hu = xp.empty((3, n, u), dtype=dt)
    h = h0
    for t in range(steps):
        g = gates[t]
        xp.matmul(h, rk3, out=hu)
        if rb is not None:
            hu += rb
        g[:2] += hu[:2]
        _sigmoid_(xp, g[:2])
        z, r, cand = g
        hh = hhs[t]
        hh[...] = hu[2]
        a = r * hh
        a += cand
        xp.tanh(a, out=cand)
        hn = hs[t]
        xp.subtract(h, cand, out=hn)  # h' = cand + z (h - cand)
        hn *= z
        hn += cand
        if carry is not None:  # masked steps keep the previous state
            xp.copyto(hn, h, where=carry[t])
        h = hn
    return hs.transpose(1, 0, 2), hs[-1].copy(), gates, hhs


def _gru_seq_grad(be: Any, dh: Any, gates: Any, hhs: Any, hs: Any, x: Any, h0: Any, k: Any,
                  rk: Any, *rest: Any, use_bias: bool, masked: bool,
                  sequence_gradient: bool, need_inputs: bool) -> tuple[Any, ...]:
    """Backpropagation through time for ``gru_sequence`` (see the module docstring).

    ``rest``: the mask (with ``masked``), the gradient of every step's output (with
    ``sequence_gradient``; without, the final state's gradient alone), then optionally
    the gradients of the saved outputs ``gates`` and ``hhs`` (second and higher orders).

    Returns d(inputs) (zeros unless ``need_inputs``), d(h0), d(kernel),
    d(recurrent_kernel) and, with ``use_bias``, d(bias) of shape (2, 3 * units).
    """
    xp = be.xp
    steps, _, n, u = gates.shape
    one = gates.dtype.type(1)
    mask, dhs, extra = unpack_grad_inputs(rest, masked, sequence_gradient)
    keep = None if mask is None else mask.T[..., None].astype(gates.dtype)
    dhs_t = None if dhs is None else dhs.transpose(1, 0, 2)
    hs_t = hs.transpose(1, 0, 2)  # the forward's outputs are time-major underneath
    rk_t = xp.ascontiguousarray(rk.T)
    step_matmul = unsplit_matmul(xp)  # numpy: its matmul
    dxw = xp.empty((steps, n, 3 * u), dtype=gates.dtype)  # d(x @ kernel + b_in)
    dhu = xp.empty((steps, n, 3 * u), dtype=gates.dtype)  # d(h @ U + b_rec)
    blk = xp.empty((3, n, u), dtype=gates.dtype)  # one step's, gate-major
    for t in range(steps - 1, -1, -1):
        z, r, cand = gates[t]
        hh = hhs[t]
        h_prev = h0 if t == 0 else hs_t[t - 1]
        if dhs_t is not None:
            dh = dh + dhs_t[t]
        if keep is not None:  # a masked step passes the state's gradient through
            m = keep[t]
            dh_pass = dh * (one - m)
            dh = dh * m
        da = dh - dh * z  # d(cand) from h' = cand + z (h - cand)
        if extra:
            da += extra[0][t][2]
        c2 = cand * cand
        xp.subtract(one, c2, out=c2)
        da *= c2  # d(pre-activation of cand)
        xp.subtract(h_prev, cand, out=blk[0])
        blk[0] *= dh
        xp.multiply(da, hh, out=blk[1])
        if extra:
            blk[:2] += extra[0][t][:2]
        s = one - gates[t][:2]  # sigmoid' = s (1 - s)
        s *= gates[t][:2]
        blk[:2] *= s
        blk[2] = da  # d(x @ kernel + b_in): z, r as for h @ U, and d(cand)
        dxw[t].reshape(n, 3, u)[...] = blk.transpose(1, 0, 2)
        xp.multiply(da, r, out=blk[2])  # d(hh)
        if extra:
            blk[2] += extra[1][t]
        dht = dhu[t]
        dht.reshape(n, 3, u)[...] = blk.transpose(1, 0, 2)
        dh_new = step_matmul(dht, rk_t)  # a GPU: one GEMM, no split-K reduction
        dh_new += dh * z
        if keep is not None:
            dh_new += dh_pass
        dh = dh_new
    flat_x = dxw.reshape(steps * n, 3 * u)
    flat_h = dhu.reshape(steps * n, 3 * u)
    h_prev_all = hs_t[:-1].reshape((steps - 1) * n, u)
    drk = xp.matmul(h0.T, dhu[0])
    if steps > 1:
        drk += xp.matmul(h_prev_all.T, flat_h[n:])
    if need_inputs:
        dx = xp.matmul(flat_x, k.T).reshape(steps, n, -1).transpose(1, 0, 2)
    else:
        dx = xp.zeros_like(x)
    out = (dx, dh, xp.matmul(_time_major(xp, x).T, flat_x), drk)
    return (*out, xp.stack([flat_x.sum(0), flat_h.sum(0)])) if use_bias else out


_seq_op = register("gru_sequence", _in_float32(_gru_seq), family=F)
_seq_grad_op = register("gru_sequence_grad", _in_float32(_gru_seq_grad), family=F)


def gru_sequence(inputs: Any, h: Any, kernel: Any, recurrent_kernel: Any, bias: Any = None,
                 mask: Any = None, name: str | None = None) -> tuple[Any, Any]:
    """A whole GRU over the steps of ``inputs``, fused into one op (gates ``z, r, h``,
    the reset gate applied after the recurrent matmul).

    At each step ``xz, xr, xh = x_t @ kernel + b_in``, ``hz, hr, hh = h @ recurrent_kernel
    + b_rec``, ``z, r = sigmoid(xz + hz), sigmoid(xr + hr)``, ``cand = tanh(xh + r * hh)``,
    ``h' = z * h + (1 - z) * cand``: Keras's GRU with ``reset_after=True`` and its default
    activations, and PyTorch's ``nn.GRU`` with its gates reordered.

    Args:
        inputs: (batch, steps, features).
        h: (batch, units), the initial state.
        kernel: (features, 3 * units).
        recurrent_kernel: (units, 3 * units).
        bias: optional (2, 3 * units): the input bias, then the recurrent bias (Keras's).
        mask: optional bool (batch, steps): at a False step the state keeps its value and
            the output repeats the previous output (Keras's masking).
        name: ignored (TensorFlow's op name).

    Returns:
        ``(outputs, h)``: every step's output (batch, steps, units) and the final state.

    Raises:
        InvalidArgumentError: a shape does not fit, a tensor is not floating, the float
            tensors' dtypes differ, or the mask is not bool.

    Examples:
        >>> import ember.core as em
        >>> out, h = em.nn_ops.gru_sequence(em.zeros((1, 2, 2)), em.ones((1, 1)),
        ...                                 em.zeros((2, 3)), em.zeros((1, 3)))
        >>> h  # z = 0.5 and cand = 0 at both steps: 1 * 0.5 ** 2
        ember.Tensor([[0.25]], shape=(1, 1), dtype=float32)
    """
    x, h, k, rk = (_args.tensor(v) for v in (inputs, h, kernel, recurrent_kernel))
    named = {"inputs": x, "h": h, "kernel": k, "recurrent_kernel": rk}
    if bias is not None:
        named["bias"] = _args.tensor(bias)
    m = None if mask is None else _args.tensor(mask)
    n = h.shape[-1] if h.ndim == 2 else 0
    check_sequence("gru_sequence", x, named, m, gates=3, bias_shape=(2, 3 * n))
    ins = tuple(named.values()) + (() if m is None else (m,))
    out = execute(_seq_op, ins, {"use_bias": bias is not None, "masked": m is not None})
    return out[0], out[1]


def gru_sequence_grad(dh: Any, gates: Any, hhs: Any, hs: Any, inputs: Any, h: Any,
                      kernel: Any, recurrent_kernel: Any, mask: Any = None, dhs: Any = None,
                      dgates: Any = None, dhhs: Any = None, use_bias: bool = True,
                      need_inputs: bool = True) -> Any:
    """The backward of ``gru_sequence`` (for its gradient rule and the op table).

    ``dh``: the gradient of the final state; ``dhs``: optionally, that of every step's
    output; ``gates``, ``hhs``: the saved activations (time-major); ``hs``: the outputs
    (batch, steps, units); ``dgates``, ``dhhs``: the saved activations' gradients (both or
    neither). Returns d(inputs) (zeros unless ``need_inputs``), d(h), d(kernel),
    d(recurrent_kernel) and, with ``use_bias``, d(bias).
    """
    if (dgates is None) != (dhhs is None):
        raise InvalidArgumentError("gru_sequence_grad: give dgates and dhhs, or neither")
    ins = [dh, gates, hhs, hs, inputs, h, kernel, recurrent_kernel]
    ins += [v for v in (mask, dhs) if v is not None]
    if dgates is not None:
        ins += [dgates, dhhs]
    return execute(_seq_grad_op, tuple(_args.tensor(v) for v in ins),
                   {"use_bias": use_bias, "masked": mask is not None,
                    "sequence_gradient": dhs is not None, "need_inputs": bool(need_inputs)})
