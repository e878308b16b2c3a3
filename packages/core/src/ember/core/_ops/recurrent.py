"""Fused recurrent cells: one LSTM or GRU time step as one op.

A cell step is one recurrent matmul (all gates at once) and one element-wise pass. The
op also returns the gate activations (and ``tanh(c)`` for the LSTM, the recurrent
candidate term for the GRU) as extra outputs: the gradient rule in ember-tape reads them
instead of recomputing them, and since they are outputs, a second-order gradient flows
back through them into the same rule.

The backward of a step is a second fused op (``lstm_cell_grad``, ``gru_cell_grad``:
the element-wise part and the two matmuls); its own rule in ember-tape differentiates
the same computation written in ember ops, so every order of derivative stays exact.

Weights follow Keras: gates ``i, f, c, o`` for the LSTM and ``z, r, h`` for the GRU.
"""

from __future__ import annotations

from typing import Any

from .._dtypes import bfloat16 as _BF16
from .._errors import InvalidArgumentError
from .._registry import execute, register
from . import _args

F = "recurrent"


def _sigmoid_(xp: Any, x: Any) -> Any:
    """sigmoid(x) written into x (a float32 or float64 view).

    ``1 / (1 + exp(-x))`` (one exp: numpy's float32 tanh is about twice as slow), with x
    kept above -log(max float) so exp cannot overflow; where that floor applies, sigmoid
    is below the smallest normal float. The passes run on a new contiguous array
    (numpy's exp is slower in place on a strided view).
    """
    dt = x.dtype
    one = dt.type(1)
    t = xp.maximum(x, dt.type(_EXP_FLOOR[dt.itemsize]))
    xp.negative(t, out=t)
    xp.exp(t, out=t)
    t += one
    return xp.divide(one, t, out=x)  # numpy's reciprocal is not vectorised


_EXP_FLOOR = {4: -87.0, 8: -708.0}  # exp(87) and exp(708) are finite in float32, float64


def _in_float32(forward: Any) -> Any:
    """``forward`` computing float16/bfloat16 inputs in float32 (numpy's bfloat16 matmul
    gives float32 anyway), its results cast back to the inputs' dtype."""

    def run(be: Any, *arrays: Any, **attrs: Any) -> Any:
        dt = arrays[0].dtype
        if dt.itemsize >= 4:
            return forward(be, *arrays, **attrs)
        out = forward(be, *(a.astype("float32") for a in arrays), **attrs)
        return tuple(o.astype(dt) for o in out)

    return run


# --- LSTM ---------------------------------------------------------------------------------
def _lstm(be: Any, xw: Any, h: Any, c: Any, u: Any) -> tuple[Any, Any, Any, Any]:
    xp = be.xp
    n = h.shape[-1]
    z = xp.matmul(h, u)  # (batch, 4 units): every gate in one product
    z += xw
    # numpy's tanh is slow in place on a strided view: write it from a new array
    g = xp.tanh(z[:, 2 * n:3 * n])
    _sigmoid_(xp, z[:, :2 * n])
    _sigmoid_(xp, z[:, 3 * n:])
    z[:, 2 * n:3 * n] = g
    i, f, o = z[:, :n], z[:, n:2 * n], z[:, 3 * n:]
    c_new = f * c
    c_new += i * g
    tc = xp.tanh(c_new)
    return o * tc, c_new, z, tc


def _lstm_grad(be: Any, dh: Any, dc: Any, gates: Any, tc: Any, c: Any, h: Any, u: Any,
               *extra: Any, need_h: bool, need_u: bool) -> tuple[Any, ...]:
    """The backward of one LSTM step from its output gradients and saved activations.

    ``extra``: the gradients of the ``gates`` and ``tc`` outputs, or nothing where they
    have none (first order: no zero arrays to make and add).

    Returns d(inputs) (the pre-activations), d(h_prev), d(c_prev) and d(recurrent_kernel);
    zeros for ``h_prev`` / the kernel where ``need_h`` / ``need_u`` is False.
    """
    xp = be.xp
    one = gates.dtype.type(1)
    n = tc.shape[-1]
    i, f, g, o = gates[:, :n], gates[:, n:2 * n], gates[:, 2 * n:3 * n], gates[:, 3 * n:]
    dct = dh * o
    if extra:
        dct += extra[1]
    dct *= one - tc * tc
    dct += dc
    dz = xp.empty_like(gates)  # whole-array passes: few numpy calls per step
    xp.multiply(dct, g, out=dz[:, :n])
    xp.multiply(dct, c, out=dz[:, n:2 * n])
    xp.multiply(dct, i, out=dz[:, 2 * n:3 * n])
    xp.multiply(dh, tc, out=dz[:, 3 * n:])
    if extra:
        dz += extra[0]
    d = one - gates  # the activations' derivatives: s (1 - s), and 1 - g^2 for tanh
    d *= gates
    dg = d[:, 2 * n:3 * n]
    xp.multiply(g, g, out=dg)
    xp.subtract(one, dg, out=dg)
    dz *= d
    dh_prev = xp.matmul(dz, u.T) if need_h else xp.zeros_like(h)
    du = xp.matmul(h.T, dz) if need_u else xp.zeros_like(u)
    return dz, dh_prev, dct * f, du


_lstm_op = register("lstm_cell", _in_float32(_lstm), family=F, promote="all")
_lstm_grad_op = register("lstm_cell_grad", _in_float32(_lstm_grad), family=F, promote="all")


# --- GRU ----------------------------------------------------------------------------------
def _gru(be: Any, xw: Any, h: Any, u: Any, *rb: Any, reset_after: bool
         ) -> tuple[Any, Any, Any]:
    xp = be.xp
    n = h.shape[-1]
    if reset_after:
        hu = xp.matmul(h, u)  # (batch, 3 units): every gate in one product
        if rb:
            hu += rb[0]
        zr = hu[:, :2 * n]
        hh = xp.ascontiguousarray(hu[:, 2 * n:])
    else:  # the reset gate scales h before its matmul: two products
        zr = xp.matmul(h, u[:, :2 * n])
        if rb:
            zr += rb[0][:2 * n]
    gates = xp.empty(h.shape[:1] + (3 * n,), dtype=h.dtype)
    xp.add(zr, xw[:, :2 * n], out=gates[:, :2 * n])
    _sigmoid_(xp, gates[:, :2 * n])
    z, r = gates[:, :n], gates[:, n:2 * n]
    if reset_after:
        a = r * hh
    else:
        hh = r * h
        a = xp.matmul(hh, u[:, 2 * n:])
        if rb:
            a += rb[0][2 * n:]
    a += xw[:, 2 * n:]
    cand = gates[:, 2 * n:]
    xp.tanh(a, out=cand)
    h_new = h - cand
    h_new *= z
    h_new += cand
    return h_new, gates, hh


def _gru_grad(be: Any, dh: Any, gates: Any, hh: Any, h: Any, u: Any, *extra: Any,
              need_h: bool, need_u: bool, bias: bool) -> tuple[Any, ...]:
    """The backward of one ``reset_after`` GRU step (see ``_gru`` for the names).

    ``extra``: the gradients of the ``gates`` and ``hh`` outputs, or nothing where they
    have none.

    Returns d(inputs), d(h_prev), d(recurrent_kernel) and, with ``bias``, d(recurrent
    bias); zeros where ``need_h`` / ``need_u`` is False.
    """
    xp = be.xp
    one = gates.dtype.type(1)
    n = h.shape[-1]
    z, r, cand = gates[:, :n], gates[:, n:2 * n], gates[:, 2 * n:]
    da = dh * (one - z)
    if extra:
        da += extra[0][:, 2 * n:]
    da *= one - cand * cand
    dhu = xp.empty_like(gates)  # d(h @ u + b): z and r as for the inputs, then d(hh)
    xp.multiply(dh, h - cand, out=dhu[:, :n])
    xp.multiply(da, hh, out=dhu[:, n:2 * n])
    if extra:
        dhu[:, :2 * n] += extra[0][:, :2 * n]
    dzr = dhu[:, :2 * n]
    d = one - gates[:, :2 * n]  # sigmoid' = s (1 - s)
    d *= gates[:, :2 * n]
    dzr *= d
    xp.multiply(da, r, out=dhu[:, 2 * n:])
    if extra:
        dhu[:, 2 * n:] += extra[1]
    dxw = dhu.copy()
    dxw[:, 2 * n:] = da
    if need_h:
        dh_prev = xp.matmul(dhu, u.T)
        dh_prev += dh * z
    else:
        dh_prev = xp.zeros_like(h)
    du = xp.matmul(h.T, dhu) if need_u else xp.zeros_like(u)
    return (dxw, dh_prev, du, dhu.sum(0)) if bias else (dxw, dh_prev, du)


_gru_op = register("gru_cell", _in_float32(_gru), family=F, promote="all")
_gru_grad_op = register("gru_cell_grad", _in_float32(_gru_grad), family=F, promote="all")


# --- argument checks ----------------------------------------------------------------------
def _check(op: str, gates: int, **named: Any) -> None:
    """Ranks, dtypes and shapes: (batch, gates * units) inputs, (batch, units) states,
    a (units, gates * units) kernel and a (gates * units,) bias."""
    h = named["h"]
    if h.ndim != 2:
        raise InvalidArgumentError(f"{op}: h must be a matrix, got shape {h.shape}")
    b, n = h.shape
    want = {"inputs": (b, gates * n), "h": (b, n), "c": (b, n),
            "recurrent_kernel": (n, gates * n), "recurrent_bias": (gates * n,)}
    for k, v in named.items():
        if v.shape != want[k]:
            raise InvalidArgumentError(
                f"{op}: {k} has shape {v.shape}, expected {want[k]} for a state h of "
                f"shape {(b, n)} ({gates} gates of {n} units)")
        if v.dtype.kind != "f" and v.dtype != _BF16:
            raise InvalidArgumentError(f"{op}: {k} must be floating, got dtype {v.dtype}")


def lstm_cell(inputs: Any, h: Any, c: Any, recurrent_kernel: Any,
              name: str | None = None) -> tuple[Any, Any]:
    """One LSTM step, fused: ``z = inputs + h @ recurrent_kernel``, gates ``i, f, c, o``.

    ``inputs`` is the step's input already projected (``x @ kernel + bias``), so a layer
    projects every step of a sequence in one matmul. Then ``i, f, o = sigmoid(z_i, z_f,
    z_o)``, ``c' = f * c + i * tanh(z_c)`` and ``h' = o * tanh(c')`` (Keras's LSTMCell with
    its default activations; PyTorch's LSTMCell with gates reordered ``i, f, g, o``).

    Args:
        inputs: (batch, 4 * units), the projected input of this step.
        h: (batch, units), the previous output.
        c: (batch, units), the previous cell state.
        recurrent_kernel: (units, 4 * units).
        name: ignored (TensorFlow's op name).

    Returns:
        ``(h', c')``, each (batch, units).

    Raises:
        InvalidArgumentError: a shape does not fit, or a tensor is not floating.

    Examples:
        >>> import ember.core as em
        >>> h, c = em.nn_ops.lstm_cell(em.zeros((2, 8)), em.zeros((2, 2)), em.ones((2, 2)),
        ...                            em.zeros((2, 8)))
        >>> c  # f = i = sigmoid(0) = 0.5, tanh(0) = 0: c' = 0.5 * c
        ember.Tensor([[0.5 0.5]
         [0.5 0.5]], shape=(2, 2), dtype=float32)
    """
    xw, h, c, u = (_args.tensor(v) for v in (inputs, h, c, recurrent_kernel))
    _check("lstm_cell", 4, inputs=xw, h=h, c=c, recurrent_kernel=u)
    out = execute(_lstm_op, (xw, h, c, u))
    return out[0], out[1]


def gru_cell(inputs: Any, h: Any, recurrent_kernel: Any, recurrent_bias: Any = None,
             reset_after: bool = True, name: str | None = None) -> Any:
    """One GRU step, fused: gates ``z, r, h`` (Keras's GRUCell with default activations).

    With ``reset_after=True`` (Keras 2+ and PyTorch's GRUCell, gates reordered
    ``r, z, n``): ``hu = h @ recurrent_kernel + recurrent_bias`` in one matmul,
    ``z, r = sigmoid(inputs_zr + hu_zr)``, ``cand = tanh(inputs_h + r * hu_h)``. With
    ``reset_after=False`` (the original GRU): ``cand = tanh(inputs_h + (r * h) @ U_h + b_h)``.
    Then ``h' = z * h + (1 - z) * cand``.

    Args:
        inputs: (batch, 3 * units), the step's input projected (``x @ kernel + bias``).
        h: (batch, units), the previous state.
        recurrent_kernel: (units, 3 * units).
        recurrent_bias: optional (3 * units,), added to the recurrent product.
        reset_after: where the reset gate applies (see above).
        name: ignored (TensorFlow's op name).

    Returns:
        ``h'``, (batch, units).

    Raises:
        InvalidArgumentError: a shape does not fit, or a tensor is not floating.

    Examples:
        >>> import ember.core as em
        >>> em.nn_ops.gru_cell(em.zeros((1, 6)), em.ones((1, 2)), em.zeros((2, 6)))
        ember.Tensor([[0.5 0.5]], shape=(1, 2), dtype=float32)
    """
    if not isinstance(reset_after, bool):
        raise InvalidArgumentError(f"gru_cell: reset_after must be a bool, got {reset_after!r}")
    xw, h, u = (_args.tensor(v) for v in (inputs, h, recurrent_kernel))
    named = {"inputs": xw, "h": h, "recurrent_kernel": u}
    if recurrent_bias is not None:
        named["recurrent_bias"] = _args.tensor(recurrent_bias)
    _check("gru_cell", 3, **named)
    out = execute(_gru_op, tuple(named.values()), {"reset_after": reset_after})
    return out[0]


def _pair_or_none(op: str, a: Any, b: Any, names: str) -> tuple[Any, ...]:
    if (a is None) != (b is None):
        raise InvalidArgumentError(f"{op}: give both {names} or neither")
    return () if a is None else (_args.tensor(a), _args.tensor(b))


def lstm_cell_grad(dh: Any, dc: Any, gates: Any, tc: Any, c: Any, h: Any, u: Any,
                   dgates: Any = None, dtc: Any = None, need_h: bool = True,
                   need_u: bool = True) -> Any:
    """The backward of ``lstm_cell`` (for its gradient rule and the op table)."""
    extra = _pair_or_none("lstm_cell_grad", dgates, dtc, "dgates and dtc")
    return execute(_lstm_grad_op, tuple(_args.tensor(v) for v in (
        dh, dc, gates, tc, c, h, u)) + extra, {"need_h": need_h, "need_u": need_u})


def gru_cell_grad(dh: Any, gates: Any, hh: Any, h: Any, u: Any, dgates: Any = None,
                  dhh: Any = None, need_h: bool = True, need_u: bool = True,
                  bias: bool = True) -> Any:
    """The backward of ``gru_cell(reset_after=True)`` (for its rule and the op table);
    ``reset_after=False`` puts a matmul inside the element-wise chain, so its rule
    composes ops."""
    extra = _pair_or_none("gru_cell_grad", dgates, dhh, "dgates and dhh")
    return execute(_gru_grad_op, tuple(_args.tensor(v) for v in (dh, gates, hh, h, u)) + extra,
                   {"need_h": need_h, "need_u": need_u, "bias": bias})
