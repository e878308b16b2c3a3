"""Every differentiable op in core's spec table: gradients against finite differences to
second order (through nested tapes), and values and gradients against PyTorch autograd."""

from __future__ import annotations

import ember.core as em
import numpy as np
import pytest
from ember import tape
from ember.core.testing import OP_SPECS

GRAD_SPECS = [s for s in OP_SPECS if s.differentiable]


def _cases(spec):
    for c in spec.cases:
        yield pytest.param(spec, c, id=f"{spec.name}-{c.name}")


PARAMS = [p for s in GRAD_SPECS for p in _cases(s)]


def _make(spec, case, seed=0):
    rng = np.random.default_rng(seed)
    args = case.make(rng, np.dtype(np.float64))
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


def _scalar_fn(spec, args, kwargs, pos):
    def f(*diff):
        full = [_to_ember(a) for a in args]
        for p, d in zip(pos, diff):
            full[p] = d
        out = spec.fn(*full, **kwargs)
        if isinstance(out, (list, tuple)):  # multi-output ops: check them together
            out = em.concat([em.reshape(o, [-1]) for o in out if o.dtype.kind == "f"], 0)
        return out
    return f


@pytest.mark.parametrize("spec,case", PARAMS)
def test_gradient_matches_finite_differences_to_second_order(spec, case):
    args, kwargs = _make(spec, case)
    pos = _diff_positions(spec, args)
    if not pos:
        pytest.skip("no float input of nonzero size to differentiate in this case")
    f = _scalar_fn(spec, args, kwargs, pos)
    tape.check_gradients(f, [args[p] for p in pos], order=2, eps=1e-6, rtol=1e-4, atol=1e-6)


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
    tout = spec.torch(torch, *targs, **kwargs)
    eargs = [_to_ember(a) for a in args]
    with tape.GradientTape() as t:
        for p in pos:
            t.watch(eargs[p])
        eout = spec.fn(*eargs, **kwargs)
        if isinstance(eout, (list, tuple)):
            eout = eout[0]
            tout = tout[0] if isinstance(tout, (list, tuple)) else tout
    tout_np = tout.detach().numpy()
    np.testing.assert_allclose(eout.numpy(), tout_np, rtol=1e-7, atol=1e-9)
    w = np.random.default_rng(2).uniform(0.5, 1.5, tout_np.shape)
    (tout * torch.tensor(w)).sum().backward()
    grads = t.gradient(eout, [eargs[p] for p in pos], output_gradients=em.constant(w))
    for p, g in zip(pos, grads):
        tg = targs[p].grad
        expected = np.zeros_like(args[p]) if tg is None else tg.numpy()
        got = np.zeros_like(args[p]) if g is None else g.numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9,
                                   err_msg=f"gradient of {spec.name} w.r.t. argument {p}")
