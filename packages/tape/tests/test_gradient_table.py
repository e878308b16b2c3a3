"""Every differentiable op in core's spec table: gradients against finite differences to
second order (through nested tapes), and values and gradients against PyTorch autograd.

A few cases of the table do not suit one of these checks as they stand; the override
tables below say which and why (they are for the table's owner to fix at the source).
"""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em
from ember import tape
from ember.core.testing import OP_SPECS

# stop_gradient's gradient is zero by definition, not its numerical derivative (1):
# test_stop_gradient_blocks_the_gradient checks it instead.
NOT_NUMERICAL = {"stop_gradient"}
# Specs with no float argument to differentiate (pow.int: integer base and exponent) have
# nothing to check here.
GRAD_SPECS = [s for s in OP_SPECS
              if s.differentiable and s.grad_args and s.name not in NOT_NUMERICAL]


def test_stop_gradient_blocks_the_gradient():
    x = em.constant([1.0, 2.0])
    with tape.GradientTape() as t:
        t.watch(x)
        y = em.stop_gradient(x * x) + x
    np.testing.assert_array_equal(t.gradient(y, x).numpy(), [1.0, 1.0])


# --- overrides of the table's data, for both checks ----------------------------------------
def _untie(args, rng):
    """args[0] with the same ordering (ties broken by position) but distinct values, 4/n apart."""
    x = args[0]
    rank = np.argsort(np.argsort(x.reshape(-1), kind="stable"), kind="stable")
    spread = (rank - (x.size - 1) / 2) * (4.0 / max(x.size, 1))
    return [spread.reshape(x.shape).astype(x.dtype), *args[1:]]


def _off_integer_quotients(args, rng):
    """args[0] redrawn until every x / y (broadcast) is at least 0.05 from an integer."""
    x, y = args[0], np.asarray(args[1])
    for _ in range(10_000):
        new = rng.uniform(-2.0, 2.0, x.shape).astype(x.dtype)
        q = new / y
        if np.all(np.abs(q - np.round(q)) > 0.05):
            return [new, *args[1:]]
    raise AssertionError("no x with x / y away from integers")


_TIES = ("the data has ties, where the derivative is undefined: TF-style tie splitting, "
         "PyTorch's first-max routing and central differences all differ there. Use tie-free "
         "data (the lattice sampler ties within one array, and 'grid' ties on purpose)")
# (spec name, case name) -> (transform of the arguments the case made, why).
DATA_OVERRIDES = {
    **{("floormod", c): (_off_integer_quotients,
                         "lattice_a / lattice_b data puts x / y exactly on integers (e.g. "
                         "-0.95 / 0.95), the jumps of floormod; draw x away from them")
       for c in ("same", "broadcast", "rank", "scalar", "python_scalar")},
    **{("reduce_min", c): (_untie, _TIES) for c in ("all", "axes_keepdims", "negative")},
    ("sort", "descending"): (_untie, _TIES),
    ("top_k", "k2"): (_untie, _TIES),
    **{("nn_ops.max_pool2d", c): (_untie, _TIES) for c in ("valid", "same", "overlap")},
}

# (spec name, case name) -> why finite differences cannot check it (cast: a test below does).
FD_EXEMPT = {
    ("cast", "to_float16"): "a 1e-6 step vanishes in float16 rounding, so the numerical "
                            "derivative is 0 or a rounding jump (test_cast_to_low_precision_*; "
                            "also checked against PyTorch)",
    ("cast", "to_bfloat16"): "as to_float16, in bfloat16",
    **{("cast", f"edges_to_{d}"): "a cast to an integer type has no gradient, and these "
                                  "inputs are NaN, infinities and the integer ranges' edges"
       for d in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")},
    ("floormod", "exact_multiples"): "x / y lies on floormod's jumps (x an exact multiple of "
                                     "y), where the derivative in x is undefined; PyTorch's "
                                     "gradients are compared there",
    ("floormod", "division_edges"): "infinities, NaN and zero divisors: no neighbourhood to "
                                    "take differences in",
    ("reduce_logsumexp", "neg_inf"): "all inputs -inf: the value is -inf in a whole "
                                     "neighbourhood, the derivative is nan (0/0) in TF and "
                                     "PyTorch too; not a point to differentiate at",
    ("linalg.qr", "full_tall"): "a complete QR of a tall matrix has extra columns of q that "
                                "are not unique: no gradient, in TF and PyTorch too "
                                "(test_linalg_rules.py checks the error)",
    ("reduce_std", "scalar"): "std of one element is sqrt(0): as in TF (sqrt of the "
                              "variance), the gradient is 0 * inf = nan; only PyTorch "
                              "special-cases it to 0",
}


# spec name -> why it has a first-order gradient only (the test checks that a second
# order raises, naming the op, rather than giving a wrong number)
FIRST_ORDER_ONLY = {
    "nn_ops.ctc_loss": "its gradient is computed with the loss, as TensorFlow's CTCLoss, "
                       "which has no second derivative either",
}


def test_every_override_names_a_case_of_the_table():
    known = {(s.name, c.name) for s in OP_SPECS for c in s.cases}
    stale = (set(DATA_OVERRIDES) | set(FD_EXEMPT) | set(TORCH_OVERRIDES)) - known
    assert not stale, f"overrides for cases the table no longer has: {sorted(stale)}"


def _cases(spec, exempt=None):
    for c in spec.cases:
        why = (exempt or {}).get((spec.name, c.name))
        marks = [pytest.mark.skip(reason=why)] if why else []
        yield pytest.param(spec, c, id=f"{spec.name}-{c.name}", marks=marks)


PARAMS = [p for s in GRAD_SPECS for p in _cases(s, FD_EXEMPT)]


def _make(spec, case, seed=0):
    rng = np.random.default_rng(seed)
    args = case.make(rng, np.dtype(np.float64))
    override = DATA_OVERRIDES.get((spec.name, case.name))
    if override is not None:
        args = override[0](args, rng)
    return args, dict(spec.kwargs, **case.kwargs)


def _diff_positions(spec, args):
    return [i for i in spec.grad_args if i < len(args) and isinstance(args[i], np.ndarray)
            and args[i].dtype.kind == "f" and args[i].size > 0]


def _to_ember(v):
    if isinstance(v, np.ndarray):
        return em.constant(v)
    if isinstance(v, (list, tuple)) and any(isinstance(e, np.ndarray) for e in v):
        return type(v)(_to_ember(e) for e in v)
    return v


def _call(spec, args, kwargs):
    if spec.ref is None:  # a random op: the same draw on every call, or nothing is a function
        em.random.set_seed(0)
    return spec.fn(*args, **kwargs)


def _scalar_fn(spec, args, kwargs, pos):
    def f(*diff):
        full = [_to_ember(a) for a in args]
        for p, d in zip(pos, diff):
            full[p] = d
        out = _call(spec, full, kwargs)
        if isinstance(out, (list, tuple)):  # multi-output ops: check them together
            out = em.concat([em.reshape(o, [-1]) for o in out if o.dtype.kind == "f"], 0)
        if out.dtype.kind == "c":  # a complex result (em.signal): check both parts
            out = em.stack([em.math.real(out), em.math.imag(out)])
        return out
    return f


@pytest.mark.parametrize("spec,case", PARAMS)
def test_gradient_matches_finite_differences_to_second_order(spec, case):
    args, kwargs = _make(spec, case)
    pos = _diff_positions(spec, args)
    if not pos:
        pytest.skip("no float input of nonzero size to differentiate in this case")
    f = _scalar_fn(spec, args, kwargs, pos)
    if spec.name in FIRST_ORDER_ONLY:
        tape.check_gradients(f, [args[p] for p in pos], order=1, eps=1e-6, rtol=1e-4,
                             atol=1e-6)
        xs = [em.constant(args[p]) for p in pos]
        with tape.GradientTape() as outer:
            outer.watch(xs)
            with tape.GradientTape() as inner:
                inner.watch(xs)
                y = em.reduce_sum(f(*xs))
            g = inner.gradient(y, xs)
            gsum = em.add_n([em.reduce_sum(em.square(gi)) for gi in g if gi is not None])
        with pytest.raises(LookupError, match=spec.name.split(".")[-1]):
            outer.gradient(gsum, xs)
        return
    tape.check_gradients(f, [args[p] for p in pos], order=2, eps=1e-6, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("dtype", [em.float16, em.bfloat16])
def test_cast_to_low_precision_passes_the_gradient_through(dtype):
    # TF's rule: d cast(x, low) = cast(dy, x.dtype); dy arrives in the low dtype.
    x = em.constant(np.random.default_rng(0).uniform(-2, 2, 5))
    w = np.random.default_rng(1).uniform(0.5, 1.5, 5)
    with tape.GradientTape() as t:
        t.watch(x)
        y = em.cast(x, dtype)
    g = t.gradient(y, x, output_gradients=em.cast(em.constant(w), dtype))
    assert g.dtype == np.float64
    np.testing.assert_array_equal(g.numpy(), w.astype(dtype).astype(np.float64))


# --- against PyTorch -----------------------------------------------------------------------
def _hw(v):
    """(h, w) from an int, a pair, or TF's 4-element [1, h, w, 1]."""
    if isinstance(v, int):
        return (v, v)
    v = list(v)
    return (v[1], v[2]) if len(v) == 4 else (v[0], v[-1])


def _tf_pad(T, x_nchw, padding, k, s, d=(1, 1), value=0.0):
    """x padded as TF pads: SAME puts total // 2 before and the rest after (PyTorch's own
    padding is symmetric, so it cannot express an odd total)."""
    if padding == "VALID":
        return x_nchw
    pads = []
    for n, kk, ss, dd in zip(x_nchw.shape[2:], k, s, d):
        total = max((-(-n // ss) - 1) * ss + (kk - 1) * dd + 1 - n, 0)
        pads.append((total // 2, total - total // 2))
    (t, b), (l, r) = pads
    return T.nn.functional.pad(x_nchw, (l, r, t, b), value=value)


def _torch_conv2d(T, x, w, strides=1, padding="VALID", dilations=1):
    s, d = _hw(strides), _hw(dilations)
    xp = _tf_pad(T, x.permute(0, 3, 1, 2), padding, w.shape[:2], s, d)
    y = T.nn.functional.conv2d(xp, w.permute(3, 2, 0, 1), stride=s, dilation=d,
                               groups=x.shape[3] // w.shape[2])
    return y.permute(0, 2, 3, 1)


def _torch_pool(kind):
    def call(T, x, ksize, strides=None, padding="VALID"):
        k, s = _hw(ksize), _hw(strides or ksize)
        F = T.nn.functional
        xc = x.permute(0, 3, 1, 2)
        if kind == "max":
            y = F.max_pool2d(_tf_pad(T, xc, padding, k, s, value=-np.inf), k, s)
        else:  # TF averages over the window's real elements only: sum / count
            total = F.avg_pool2d(_tf_pad(T, xc, padding, k, s), k, s, divisor_override=1)
            ones = T.ones_like(xc)
            y = total / F.avg_pool2d(_tf_pad(T, ones, padding, k, s), k, s, divisor_override=1)
        return y.permute(0, 2, 3, 1)

    return call


def _torch_cumsum(T, x, axis=0, exclusive=False, reverse=False):
    """tf.math.cumsum: exclusive shifts by one (starting at 0); reverse sums from the end."""
    y = T.flip(x, [axis]) if reverse else x
    c = T.cumsum(y, axis)
    if exclusive:
        n = c.shape[axis]
        c = T.cat([T.zeros_like(T.narrow(c, axis, 0, 1)), T.narrow(c, axis, 0, n - 1)], axis)
    return T.flip(c, [axis]) if reverse else c


def _torch_matmul(T, a, b, transpose_a=False, transpose_b=False):
    return T.matmul(a.mT if transpose_a else a, b.mT if transpose_b else b)


def _torch_numpy_index(T, x, k):
    """x[k] with numpy's semantics (negative steps too) as a gather of flat positions."""
    pos = np.ascontiguousarray(np.arange(x.numel()).reshape(tuple(x.shape))[k])
    return x.reshape(-1)[T.as_tensor(pos)]


# (spec name, case name) -> a PyTorch reference for a case the table's lambda gives None
# for (it could express it: TF SAME padding is an explicit asymmetric pad).
TORCH_OVERRIDES = {
    ("nn_ops.conv2d", "same_strided"): _torch_conv2d,
    ("nn_ops.conv2d", "groups_2_same"): _torch_conv2d,
    ("nn_ops.max_pool2d", "same"): _torch_pool("max"),
    ("nn_ops.avg_pool2d", "same"): _torch_pool("avg"),
    **{("cumsum", c): _torch_cumsum for c in ("exclusive", "reverse", "both")},
    **{("matmul", c): _torch_matmul for c in ("transpose_a", "transpose_b")},
    ("getitem", "negative_step"): _torch_numpy_index,
}

TORCH_PARAMS = [p for s in GRAD_SPECS if s.torch is not None for p in _cases(s)]


@pytest.mark.parametrize("spec,case", TORCH_PARAMS)
def test_values_and_gradients_match_pytorch(spec, case):
    torch = pytest.importorskip("torch", reason="PyTorch CPU (torch==2.13.0) is not installed")
    args, kwargs = _make(spec, case, seed=1)
    pos = _diff_positions(spec, args)
    if not pos:
        pytest.skip("no float input of nonzero size to differentiate in this case")
    targs = [torch.tensor(a, requires_grad=i in pos) if isinstance(a, np.ndarray) else a
             for i, a in enumerate(args)]
    tout = TORCH_OVERRIDES.get((spec.name, case.name), spec.torch)(torch, *targs, **kwargs)
    if tout is None:
        pytest.skip("the table has no PyTorch expression for this case")
    eargs = [_to_ember(a) for a in args]
    with tape.GradientTape() as t:
        for p in pos:
            t.watch(eargs[p])
        eout = spec.fn(*eargs, **kwargs)
        if isinstance(eout, (list, tuple)):
            eout = eout[0]
            tout = tout[0] if isinstance(tout, (list, tuple)) else tout
    sources = [eargs[p] for p in pos]
    if not tout.is_floating_point():  # an integer or bool result: values, and no gradient
        np.testing.assert_array_equal(eout.numpy(), tout.numpy())
        assert all(g is None for g in t.gradient(eout, sources)), "gradient through a non-float"
        return
    # Low-precision results (bfloat16 has no numpy dtype in torch) compare in float64.
    tout_np = tout.detach().to(torch.float64).numpy()
    np.testing.assert_allclose(eout.numpy().astype(np.float64), tout_np, rtol=1e-7, atol=1e-9)
    w = np.random.default_rng(2).uniform(0.5, 1.5, tout_np.shape)
    (tout * torch.tensor(w).to(tout.dtype)).sum().backward()
    grads = t.gradient(eout, sources, output_gradients=em.cast(em.constant(w), eout.dtype))
    for p, g in zip(pos, grads):
        tg = targs[p].grad
        expected = np.zeros_like(args[p]) if tg is None else tg.numpy()
        got = np.zeros_like(args[p]) if g is None else g.numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9,
                                   err_msg=f"gradient of {spec.name} w.r.t. argument {p}")
