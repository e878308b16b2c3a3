"""Every differentiable op in core's spec table, at complex inputs: gradients against finite
differences (first and second order) and values and gradients against PyTorch autograd.

The convention is TensorFlow's and PyTorch's: the gradient of a real loss ``L`` with respect
to ``z`` is ``dL/d re(z) + i dL/d im(z)`` (finite differences perturb the real and the
imaginary parts separately). Each case's differentiated arguments become complex (the
table's real values plus small imaginary parts, so that domains such as log's stay clear of
branch cuts); the op then falls in one of three classes:

- its forward refuses complex tensors: nothing to differentiate (skipped, saying so);
- one of the ops it records has a rule for real tensors only (``COMPLEX_REAL_ONLY``): the
  gradient raises a TypeError naming that op, never a number;
- otherwise (holomorphic rules, which the tape applies as ``conj(rule(conj(dy)))``, and
  rules that handle complex tensors themselves, ``COMPLEX_OWN``): the gradient is checked.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em
from ember import tape
from ember.core.testing import OP_SPECS, recorded_op_names
from ember.tape._rules import COMPLEX_OWN, COMPLEX_REAL_ONLY, RULES

# spec name -> why it is not checked here
SKIP = {
    "stop_gradient": "its gradient is zero by definition, not its numerical derivative",
    "cast": "casts to and from complex: test_cast_between_real_and_complex below (a cast to "
            "float16 or an integer has no usable finite differences)",
    "nn_ops.dropout": "random: a new mask on every call",
}
# (spec name, case name) -> why finite differences cannot check it
FD_EXEMPT = {
    ("reduce_std", "scalar"): "std of one element is sqrt(0): the gradient is 0 * inf = nan "
                              "(as for real inputs, test_gradient_table.py's FD_EXEMPT)",
    ("reduce_logsumexp", "neg_inf"): "all inputs -inf: no neighbourhood to differentiate in",
}
# specs whose cases have ties (or near ties) in the real parts, where the complex order
# (numpy's: real parts first) and so the selection flips under a perturbation
UNTIE = {"reduce_max", "reduce_min", "sort", "top_k", "nn_ops.max_pool2d", "max_pool_tiled",
         "nn_ops.max_pool3d", "maximum", "minimum",
         "math.unsorted_segment_max", "math.unsorted_segment_min"}

SPECS = [s for s in OP_SPECS if s.differentiable and s.grad_args and s.ref is not None
         and s.name not in SKIP]


def _untie(x):
    """``x`` with the same ordering (ties broken by position) but distinct values, 4/n apart."""
    rank = np.argsort(np.argsort(x.reshape(-1), kind="stable"), kind="stable")
    spread = (rank - (x.size - 1) / 2) * (4.0 / max(x.size, 1))
    return spread.reshape(x.shape).astype(x.dtype)


def _complex_args(spec, case, dtype, seed=0):
    """The case's arguments with the differentiated ones complex; their positions."""
    rng = np.random.default_rng(seed)
    args = list(case.make(rng, np.dtype(np.float64)))
    pos = [i for i in spec.grad_args if i < len(args) and isinstance(args[i], np.ndarray)
           and args[i].dtype.kind == "f" and args[i].size > 0]
    for p in pos:
        re = _untie(args[p]) if spec.name in UNTIE and p == 0 else args[p]
        args[p] = np.asarray(re + 1j * rng.uniform(-0.3, 0.3, re.shape), dtype)
    return args, dict(spec.kwargs, **case.kwargs), pos


def _to_ember(v):
    if isinstance(v, np.ndarray):
        return em.constant(v)
    if isinstance(v, (list, tuple)) and any(isinstance(e, np.ndarray) for e in v):
        return type(v)(_to_ember(e) for e in v)
    return v


def _outputs(out):
    return [o for o in (out if isinstance(out, (list, tuple)) else [out])
            if o.dtype.kind in "fc"]


def _weights(outs, seed=3):
    rng = np.random.default_rng(seed)
    return [(rng.uniform(0.5, 1.5, o.shape), rng.uniform(0.5, 1.5, o.shape)) for o in outs]


def _real_loss(outs, w):
    """sum(re(o) * w1 + im(o) * w2) over the outputs: a real function of complex values."""
    total = None
    for o, (w1, w2) in zip(outs, w):
        t = em.reduce_sum(em.multiply(em.math.real(o), em.constant(w1)))
        if o.dtype.kind == "c":
            t = em.add(t, em.reduce_sum(em.multiply(em.math.imag(o), em.constant(w2))))
        total = t if total is None else em.add(total, t)
    return total


def _numeric(f, xs, eps=1e-6):
    """dL/d re + i dL/d im of the real scalar ``f(*xs)`` at the complex arrays ``xs``."""
    grads = []
    for k, a in enumerate(xs):
        g = np.zeros(a.shape, np.complex128)
        for j in range(a.size):
            for step in (1.0, 1j):
                vals = []
                for sgn in (1, -1):
                    b = a.copy().reshape(-1)
                    b[j] += sgn * eps * step
                    moved = list(xs)
                    moved[k] = b.reshape(a.shape)
                    vals.append(float(f(*[em.constant(v) for v in moved]).numpy()))
                g.reshape(-1)[j] += step * (vals[0] - vals[1]) / (2 * eps)
        grads.append(g)
    return grads


def _tape_gradient(f, xs):
    ts = [em.constant(a) for a in xs]
    with tape.GradientTape() as t:
        t.watch(ts)
        y = f(*ts)
    return [np.zeros(a.shape, a.dtype) if g is None else g.numpy()
            for a, g in zip(xs, t.gradient(y, ts))]


def _assert_close(got, want, what, rtol=1e-4, atol=1e-6):
    for k, (g, n) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, n, rtol=rtol, atol=atol, err_msg=f"{what}, argument {k}")


def _loss_fn(spec, args, kwargs, pos, w):
    def f(*zs):
        full = [_to_ember(a) for a in args]
        for p, z in zip(pos, zs):
            full[p] = z
        return _real_loss(_outputs(spec.fn(*full, **kwargs)), w)
    return f


def _prepare(spec, case, dtype, seed=0):
    """(loss, arguments, positions), or a skip / the expected refusal."""
    args, kwargs, pos = _complex_args(spec, case, dtype, seed)
    if not pos:
        pytest.skip("no float input of nonzero size to differentiate in this case")
    try:
        with recorded_op_names() as names:
            out = spec.fn(*[_to_ember(a) for a in args], **kwargs)
    except Exception as e:  # the forward's refusal, whatever its type
        pytest.skip(f"the forward refuses complex inputs: {type(e).__name__}: {e}")
    outs = _outputs(out)
    if not outs:
        pytest.skip("no floating or complex output")
    refused = sorted({n for n in names if n in COMPLEX_REAL_ONLY})
    return _loss_fn(spec, args, kwargs, pos, _weights(outs)), args, pos, refused


# Each spec's first case runs in every CI session (first and second order); the others,
# the same rules on other shapes (finite differences over the conv cases take minutes on
# the GPU double), run in `nox -s slow`.
PARAMS = [pytest.param(s, c, id=f"{s.name}-{c.name}",
                       marks=() if c is s.cases[0] else pytest.mark.slow)
          for s in SPECS for c in s.cases]


@pytest.mark.parametrize("spec,case", PARAMS)
def test_complex_gradient_matches_finite_differences(spec, case):
    why = FD_EXEMPT.get((spec.name, case.name))
    if why:
        pytest.skip(why)
    f, args, pos, refused = _prepare(spec, case, np.complex128)
    xs = [args[p] for p in pos]
    if refused:  # a rule for real tensors only: a clear error, never a number
        with pytest.raises(TypeError, match=f"op '({'|'.join(refused)})' has a gradient for "
                                            "real tensors only"):
            _tape_gradient(f, xs)
        return
    _assert_close(_tape_gradient(f, xs), _numeric(f, xs), f"{spec.name}: first order")
    if case is not spec.cases[0]:  # second order on each spec's first case (time: the
        return                     # real table checks every case; the rules are the same)

    # second order: a real function of the gradient, differentiated again (nested tapes)
    rng = np.random.default_rng(5)
    v = [(rng.uniform(0.5, 1.5, a.shape), rng.uniform(0.5, 1.5, a.shape)) for a in xs]

    def grad_loss(*zs):
        with tape.GradientTape() as inner:
            inner.watch(list(zs))
            y = f(*zs)
        gs = inner.gradient(y, list(zs), unconnected_gradients="zero")
        return _real_loss(gs, v)

    _assert_close(_tape_gradient(grad_loss, xs), _numeric(grad_loss, xs),
                  f"{spec.name}: second order")


TORCH_PARAMS = [pytest.param(s, c, dt, id=f"{s.name}-{c.name}-{np.dtype(dt).name}")
                for s in SPECS if s.torch is not None for c in s.cases
                for dt in (np.complex64, np.complex128)]


@pytest.mark.parametrize("spec,case,dtype", TORCH_PARAMS)
def test_complex_values_and_gradients_match_pytorch(spec, case, dtype):
    torch = pytest.importorskip("torch", reason="PyTorch CPU (torch==2.13.0) is not installed")
    f, args, pos, refused = _prepare(spec, case, dtype, seed=1)
    if refused:
        pytest.skip(f"refused for complex tensors by {refused} (the other test checks it)")
    kwargs = dict(spec.kwargs, **case.kwargs)
    targs = [torch.tensor(a, requires_grad=i in pos) if isinstance(a, np.ndarray) else a
             for i, a in enumerate(args)]
    try:
        tout = spec.torch(torch, *targs, **kwargs)
    except (RuntimeError, TypeError, NotImplementedError) as e:
        pytest.skip(f"PyTorch has no complex version: {e}")
    if tout is None:
        pytest.skip("the table has no PyTorch expression for this case")
    eargs = [_to_ember(a) for a in args]
    eouts = _outputs(spec.fn(*eargs, **kwargs))
    touts = [o for o in (tout if isinstance(tout, (list, tuple)) else [tout])
             if o.is_floating_point() or o.is_complex()]
    rtol, atol = (1e-4, 1e-5) if dtype == np.complex64 else (1e-9, 1e-11)
    for e, t in zip(eouts, touts):
        np.testing.assert_allclose(e.numpy(), t.detach().numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"value of {spec.name}")
    w = _weights(eouts)
    total = 0
    for t, (w1, w2) in zip(touts, w):
        total = total + (t.real * torch.tensor(w1)).sum()
        if t.is_complex():
            total = total + (t.imag * torch.tensor(w2)).sum()
    total.backward()
    want = [np.zeros(args[p].shape) if targs[p].grad is None
            else targs[p].grad.resolve_conj().numpy() for p in pos]
    _assert_close(_tape_gradient(f, [args[p] for p in pos]), want,
                  f"{spec.name} against PyTorch", rtol=10 * rtol, atol=10 * atol)


# --- the classification itself ------------------------------------------------------------
def test_every_rule_is_classified_once():
    assert not COMPLEX_OWN & COMPLEX_REAL_ONLY
    assert (COMPLEX_OWN | COMPLEX_REAL_ONLY) <= set(RULES)


# --- mixed real and complex operands, casts, and PyTorch's second order ---------------------
def _torch_grad(torch, fn, *vals, create_graph=False):
    ts = [torch.tensor(v, requires_grad=True) for v in vals]
    out = fn(*ts)
    loss = (2 * out.real + out.imag).sum() if out.is_complex() else (2 * out).sum()
    return ts, torch.autograd.grad(loss, ts, create_graph=create_graph)


def _ember_loss(out):
    if out.dtype.kind == "c":
        return em.reduce_sum(2 * em.math.real(out) + em.math.imag(out))
    return em.reduce_sum(2 * out)


MIXED = {
    "multiply": (lambda m, a, b: m.multiply(a, b), lambda T, a, b: a * b),
    "divide": (lambda m, a, b: m.divide(a, b), lambda T, a, b: a / b),
    "add": (lambda m, a, b: m.add(a, b), lambda T, a, b: a + b),
    # PyTorch's product wants one dtype: the real operand made complex there
    "matmul": (lambda m, a, b: m.matmul(a, b),
               lambda T, a, b: a.to(T.complex128) @ b.to(T.complex128)),
    "pow": (lambda m, a, b: m.pow(a, b), lambda T, a, b: a ** b),
}


@pytest.mark.parametrize("name", sorted(MIXED))
@pytest.mark.parametrize("real_side", [0, 1])
def test_a_real_operand_of_a_complex_op_gets_the_real_part(name, real_side):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    vals = [rng.uniform(0.5, 1.5, (2, 2)) + 1j * rng.uniform(-0.5, 0.5, (2, 2))
            for _ in range(2)]
    vals[real_side] = vals[real_side].real.copy()
    ours, theirs = MIXED[name]
    ts, want = _torch_grad(torch, lambda *a: theirs(torch, *a), *vals)
    xs = [em.constant(v) for v in vals]
    with tape.GradientTape() as t:
        t.watch(xs)
        loss = _ember_loss(ours(em, *xs))
    got = t.gradient(loss, xs)
    assert got[real_side].dtype == np.float64
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.resolve_conj().numpy(), rtol=1e-10,
                                   atol=1e-12)


def test_the_issue_example():
    # x / y at x = 1+2j, y = 3-1j: [0.5+0.5j, 0.3-0.4j] before; PyTorch's numbers now
    x, y = em.constant(np.complex128(1 + 2j)), em.constant(np.complex128(3 - 1j))
    with tape.GradientTape() as t:
        t.watch([x, y])
        loss = _ember_loss(x / y)
    gx, gy = t.gradient(loss, [x, y])
    np.testing.assert_allclose([gx.numpy(), gy.numpy()], [0.7 + 0.1j, -0.14 + 0.48j])


SECOND = {
    "exp_times": lambda m, a, b: m.exp(a) * b,
    "divide": lambda m, a, b: a / b,
    "matmul_square": lambda m, a, b: m.square(m.matmul(a, b)),
    "sqrt_log": lambda m, a, b: m.sqrt(a) * m.log(b),
    "tanh_reciprocal": lambda m, a, b: m.tanh(a) * m.reciprocal(b),
    "abs_conj": lambda m, a, b: m.abs(a) * (m.conj(b) if m is not em else em.math.conj(b)),
}


@pytest.mark.parametrize("name", sorted(SECOND))
def test_second_order_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    vals = [rng.uniform(0.5, 1.5, (2, 2)) + 1j * rng.uniform(-0.5, 0.5, (2, 2))
            for _ in range(2)]
    fn = SECOND[name]
    ts, g = _torch_grad(torch, lambda *a: fn(torch, *a), *vals, create_graph=True)
    h = sum((gi.real * 1.5 - gi.imag * 0.5).sum() for gi in g)
    want = torch.autograd.grad(h, ts)
    xs = [em.constant(v) for v in vals]
    with tape.GradientTape() as outer:
        outer.watch(xs)
        with tape.GradientTape() as inner:
            inner.watch(xs)
            loss = _ember_loss(fn(em, *xs))
        gs = inner.gradient(loss, xs)
        h = em.add_n([em.reduce_sum(em.math.real(gi) * 1.5 - em.math.imag(gi) * 0.5)
                      for gi in gs])
    got = outer.gradient(h, xs)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), b.resolve_conj().numpy(), rtol=1e-9,
                                   atol=1e-11)


@pytest.mark.parametrize("src,dst", [(np.float64, np.complex128), (np.complex128, np.float64),
                                     (np.complex64, np.complex128),
                                     (np.float32, np.complex64)])
def test_cast_between_real_and_complex(src, dst):
    torch = pytest.importorskip("torch")
    v = np.array([1.0 + 2.0j, -0.5 + 0.25j])
    v = v if np.dtype(src).kind == "c" else v.real.copy()
    x = em.constant(v.astype(src))
    with tape.GradientTape() as t:
        t.watch(x)
        loss = _ember_loss(em.cast(x, dst))
    tx = torch.tensor(v.astype(src), requires_grad=True)
    tout = tx.to(getattr(torch, np.dtype(dst).name)) if np.dtype(dst).kind == "c" else tx.real.to(
        getattr(torch, np.dtype(dst).name))
    ((2 * tout.real + tout.imag).sum() if tout.is_complex() else (2 * tout).sum()).backward()
    g = t.gradient(loss, x)
    assert g.dtype == np.dtype(src)
    np.testing.assert_allclose(g.numpy(), tx.grad.resolve_conj().numpy(), rtol=1e-6)


def test_sign_of_complex_matches_pytorch_sgn():
    torch = pytest.importorskip("torch")
    v = np.array([1.0 + 2.0j, -0.5 + 0.25j, 0.0 + 0.0j, 3.0 - 1.0j])
    x = em.constant(v)
    with tape.GradientTape() as t:
        t.watch(x)
        loss = _ember_loss(em.sign(x))
    tx = torch.tensor(v, requires_grad=True)
    out = torch.sgn(tx)
    (2 * out.real + out.imag).sum().backward()
    np.testing.assert_allclose(t.gradient(loss, x).numpy(), tx.grad.resolve_conj().numpy(),
                               rtol=1e-12,
                               atol=1e-15)


def test_real_only_rule_names_the_op_and_the_dtypes():
    x = em.constant(np.array([1.0 + 1.0j, -2.0 + 0.5j], np.complex64))
    with tape.GradientTape() as t:
        t.watch(x)
        loss = _ember_loss(em.nn_ops.relu(x))
    with pytest.raises(TypeError, match=r"op 'relu' has a gradient for real tensors only.*"
                                        r"complex64 \(2,\)"):
        t.gradient(loss, x)


def test_a_real_tape_never_takes_the_complex_path(monkeypatch):
    from ember.tape import _tape

    def boom(*a):
        raise AssertionError("the complex path ran for real tensors")

    monkeypatch.setattr(_tape, "_complex_rule", boom)
    x = em.constant([1.0, 2.0])
    with tape.GradientTape() as t:
        t.watch(x)
        y = em.reduce_sum(em.exp(x) / (x + 1.0))
    assert t.gradient(y, x) is not None
