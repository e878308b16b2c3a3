"""Gradients of ``nn.ops``' piecewise activations at their joins.

Each op's gradient at a kink is a decision, written in its docstring: TensorFlow's kernel
where TensorFlow has the op (Relu6Grad, SeluGrad, EluGrad, LeakyReluGrad), else what
Keras's TensorFlow backend computes (``hard_sigmoid`` is ``relu6(x + 3) / 6`` there,
``hard_tanh`` ``clip_by_value``), else torch. Where the function is smooth (``celu``,
``sparse_plus``) the gradient is the derivative, not a sum of two halves that each take
a tie's whole gradient (``max(x, 0) + alpha * expm1(min(x, 0) / alpha)`` gave 2 at 0).

Away from the kinks every gradient is checked against central differences (first order,
and second order where the op is twice differentiable), and against torch.nn.functional
where torch has the op.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember import nn, tape
from ember.nn import ops

SCALE, ALPHA = 1.0507009873554805, 1.6732632423543772


def _act_relu(max_value: float) -> object:
    return lambda x: nn.activations.relu(x, max_value=max_value)


# name, function, points, gradient there, why (the decision)
KINKS = [
    ("relu6", ops.relu6, [0.0, 6.0], [0.0, 0.0], "TF Relu6Grad: dy * (x > 0) * (x < 6)"),
    ("core relu6", em.nn_ops.relu6, [0.0, 6.0], [0.0, 0.0], "TF Relu6Grad"),
    ("relu", ops.relu, [0.0], [0.0], "TF ReluGrad"),
    ("leaky_relu", ops.leaky_relu, [0.0], [0.2], "TF LeakyReluGrad: x > 0 ? dy : alpha dy"),
    ("hard_sigmoid", ops.hard_sigmoid, [-3.0, 3.0], [0.0, 0.0],
     "Keras-TF relu6(x + 3) / 6; torch hardsigmoid"),
    ("hard_silu", ops.hard_silu, [-3.0, 3.0], [0.0, 1.0],
     "product rule with hard_sigmoid's 0 (Keras-TF, torch, JAX)"),
    ("hard_swish", ops.hard_swish, [-3.0, 3.0], [0.0, 1.0], "hard_silu"),
    ("hard_tanh", ops.hard_tanh, [-1.0, 1.0], [1.0, 1.0],
     "Keras-TF clip_by_value (as ops.clip; torch hardtanh gives 0)"),
    ("clip", lambda x: ops.clip(x, -1.0, 1.0), [-1.0, 1.0], [1.0, 1.0], "TF clip_by_value"),
    ("sparse_sigmoid", ops.sparse_sigmoid, [-1.0, 1.0], [0.0, 0.0],
     "Keras-TF where(x <= -1, 0, where(x >= 1, 1, ...))"),
    ("celu", ops.celu, [0.0], [1.0], "smooth: the derivative"),
    ("celu a=0.5", lambda x: ops.celu(x, alpha=0.5), [0.0], [1.0], "smooth"),
    ("celu a=2", lambda x: ops.celu(x, alpha=2.0), [0.0], [1.0], "smooth"),
    ("elu", ops.elu, [0.0], [1.0], "smooth for alpha = 1"),
    ("elu a=0.5", lambda x: ops.elu(x, alpha=0.5), [0.0], [0.5],
     "Keras-TF where(x > 0, elu, alpha elu): alpha; torch alike"),
    ("selu", ops.selu, [0.0], [SCALE], "TF SeluGrad: x < 0 ? ... : dy * scale"),
    ("core selu", em.nn_ops.selu, [0.0], [SCALE], "TF SeluGrad"),
    ("sparse_plus", ops.sparse_plus, [-1.0, 1.0], [0.0, 1.0], "smooth"),
    ("soft_shrink", ops.soft_shrink, [-0.5, 0.5], [0.0, 0.0], "Keras-TF where; torch"),
    ("hard_shrink", ops.hard_shrink, [-0.5, 0.5], [0.0, 0.0], "Keras-TF where; torch"),
    ("threshold", lambda x: ops.threshold(x, 0.5, -1.0), [0.5], [0.0], "where(x > t, ...)"),
    ("activations.relu max 6", _act_relu(6.0), [0.0, 6.0], [0.0, 0.0], "Keras: relu6"),
    ("activations.relu max 5", _act_relu(5.0), [0.0, 5.0], [0.0, 1.0], "Keras: clip"),
]


def _grad(f, x):
    t = em.constant(np.asarray(x, np.float64))
    with tape.GradientTape() as g:
        g.watch(t)
        y = em.reduce_sum(f(t))
    return g.gradient(y, t)


def _grad2(f, x):
    t = em.constant(np.asarray(x, np.float64))
    with tape.GradientTape() as outer:
        outer.watch(t)
        with tape.GradientTape() as inner:
            inner.watch(t)
            y = em.reduce_sum(f(t))
        g = inner.gradient(y, t)
    g2 = outer.gradient(g, t)
    # piecewise linear: the first gradient may not depend on x at all (None, as TF's tape)
    return em.zeros_like(t) if g2 is None else g2


@pytest.mark.parametrize("name,f,points,want,why", KINKS, ids=[k[0] for k in KINKS])
def test_gradient_at_the_kinks(name, f, points, want, why, backend):
    for dtype in (np.float32, np.float64):
        t = em.constant(np.asarray(points, dtype))
        with tape.GradientTape() as g:
            g.watch(t)
            y = em.reduce_sum(f(t))
        got = g.gradient(y, t)
        assert got.dtype == dtype and got.device == backend
        assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-7,
                        err_msg=f"{name} at {points} ({np.dtype(dtype).name}): {why}")


# name, function, torch's (None: torch has none), the kinks, twice differentiable between
SMOOTH = [
    ("relu6", ops.relu6, "relu6", [0, 6], True),
    ("hard_sigmoid", ops.hard_sigmoid, "hardsigmoid", [-3, 3], True),
    ("hard_silu", ops.hard_silu, "hardswish", [-3, 3], True),
    ("hard_tanh", ops.hard_tanh, "hardtanh", [-1, 1], True),
    ("sparse_sigmoid", ops.sparse_sigmoid, None, [-1, 1], True),
    ("sparse_plus", ops.sparse_plus, None, [-1, 1], True),
    ("celu", ops.celu, "celu", [0], True),
    ("celu a=0.5", lambda x: ops.celu(x, alpha=0.5), ("celu", {"alpha": 0.5}), [0], True),
    ("elu a=0.5", lambda x: ops.elu(x, alpha=0.5), ("elu", {"alpha": 0.5}), [0], True),
    ("selu", ops.selu, "selu", [0], True),
    ("leaky_relu", ops.leaky_relu, ("leaky_relu", {"negative_slope": 0.2}), [0], True),
    ("soft_shrink", ops.soft_shrink, "softshrink", [-0.5, 0.5], True),
    ("softsign", ops.softsign, "softsign", [], False),  # |x|: no second derivative at 0
]


def _away_from(kinks, n=40, seed=0):
    """Points in [-8, 8] at least 0.05 from every kink (and the kinks themselves apart)."""
    x = np.random.default_rng(seed).uniform(-8, 8, n)
    for k in kinks:
        x = np.where(np.abs(x - k) < 0.05, x + 0.1, x)
    return x


def _fd(f, x, h=1e-5):
    def at(v):
        return f(em.constant(v)).numpy()
    return (at(x + h) - at(x - h)) / (2 * h)


@pytest.mark.parametrize("name,f,torch_name,kinks,twice", SMOOTH, ids=[s[0] for s in SMOOTH])
def test_gradients_between_the_kinks(name, f, torch_name, kinks, twice, backend):
    x = _away_from(kinks)
    assert_allclose(_grad(f, x).numpy(), _fd(f, x), rtol=1e-6, atol=1e-7, err_msg=name)
    if twice:
        first = lambda t: _grad(f, t)  # noqa: E731
        assert_allclose(_grad2(f, x).numpy(), _fd(lambda t: first(t), x), rtol=1e-5,
                        atol=1e-6, err_msg=f"{name}: second order")


TORCH_AGREES = {  # at the kinks too; elsewhere the decision is in KINKS' why
    "relu6", "hard_sigmoid", "hard_silu", "celu", "celu a=0.5", "elu a=0.5", "leaky_relu",
    "soft_shrink", "softsign",
}


@pytest.mark.parametrize("name,f,torch_name,kinks,twice",
                         [s for s in SMOOTH if s[2] is not None],
                         ids=[s[0] for s in SMOOTH if s[2] is not None])
def test_gradients_match_torch(name, f, torch_name, kinks, twice, backend):
    torch = pytest.importorskip("torch")
    fn_name, kw = torch_name if isinstance(torch_name, tuple) else (torch_name, {})
    fn = getattr(torch.nn.functional, fn_name)
    x = _away_from(kinks)
    if name in TORCH_AGREES:
        x = np.concatenate([x, np.asarray(kinks, np.float64)])
    xt = torch.tensor(x, requires_grad=True)
    fn(xt, **kw).sum().backward()
    assert_allclose(_grad(f, x).numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-7, err_msg=name)


def test_celu_is_smooth_at_zero_in_every_order_it_has(backend):
    """celu's first derivative is continuous at 0 (1 on both sides); the second jumps from
    1 / alpha to 0, and the tape gives the right-hand one there (``where``'s branch)."""
    for alpha in (0.5, 1.0, 2.0):
        f = lambda t, a=alpha: ops.celu(t, alpha=a)  # noqa: E731
        x = np.array([-1e-4, 0.0, 1e-4])
        assert_allclose(_grad(f, x).numpy(), [math.exp(-1e-4 / alpha), 1.0, 1.0], rtol=1e-9)
        assert_allclose(_grad2(f, np.array([-0.3, 0.3])).numpy(),
                        [math.exp(-0.3 / alpha) / alpha, 0.0], rtol=1e-9)
