"""Gradients where a differential sweep against TensorFlow 2.21 found ember's differing.

TensorFlow's answers are written down beside each case (``tf_gradient_reference.py``, run
with an interpreter that has TensorFlow, prints them; TensorFlow is never imported here).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ember.core as em
from ember import tape

NAN, INF = math.nan, math.inf


def _grad(f, x, dtype=em.float32, **kw):
    x = em.constant(np.asarray(x), dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's sqrt(-1), 1 / 0
        with tape.GradientTape() as t:
            t.watch(x)
            y = f(x)
        g = t.gradient(y, x, **kw)
    return None if g is None else g.numpy()


def _second(f, x, dtype=em.float32):
    """d/dx sum(d/dx sum(f(x))) and the first derivative."""
    x = em.constant(np.asarray(x), dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with tape.GradientTape() as outer:
            outer.watch(x)
            with tape.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            d = inner.gradient(y, x)
        dd = outer.gradient(d, x)
    return d.numpy(), dd.numpy()


def _zero(x):
    return em.zeros_like(x)


# --- 1. the NaN-through-where idiom ------------------------------------------------------
# TensorFlow's SqrtGrad, RsqrtGrad and ReciprocalGrad kernels give 0 where the incoming
# gradient is 0 (where's unselected branch), however infinite or NaN dy/dx is there; its
# log, divide and pow gradients have no such guard (NaN in both).
WHERE_CASES = {  # name -> (f, x, TensorFlow's gradient)
    "sqrt": (lambda x: em.where(x > 0, em.sqrt(x), _zero(x)), [-1., 0., 4.], [0., 0., 0.25]),
    "sqrt_of_negated": (lambda x: em.where(x < 0, em.sqrt(-x), _zero(x)), [1., 0., -4.],
                        [0., 0., -0.25]),
    "rsqrt": (lambda x: em.where(x > 0, em.rsqrt(x), _zero(x)), [-1., 0., 4.],
              [0., 0., -0.0625]),
    "reciprocal": (lambda x: em.where(x > 0, em.reciprocal(x), _zero(x)), [-1., 0., 4.],
                   [0., 0., -0.0625]),
    "log": (lambda x: em.where(x > 0, em.log(x), _zero(x)), [-1., 0., 4.], [0., NAN, 0.25]),
    "divide": (lambda x: em.where(x > 0, 1.0 / x, _zero(x)), [-1., 0., 4.],
               [0., NAN, -0.0625]),
    "sqrt_unguarded": (lambda x: em.sqrt(x), [0., 4.], [INF, 0.25]),  # dy = 1: inf stays
}


@pytest.mark.parametrize("name", list(WHERE_CASES))
@pytest.mark.parametrize("dtype", [em.float32, em.float64])
def test_zero_gradient_through_where_matches_tensorflow(name, dtype):
    f, x, tf_grad = WHERE_CASES[name]
    np.testing.assert_array_equal(_grad(f, x, dtype), np.array(tf_grad))


def test_guard_keeps_the_second_derivative_through_a_zero_upstream_gradient():
    # (sqrt(x) - 1)^2 at x = 1: dy reaching sqrt is 2 (sqrt(x) - 1) = 0 exactly, but the
    # Hessian 2 (d sqrt/dx)^2 = 0.5 comes through d(dy)/dx; masking the rule's value with
    # where(dy == 0, 0, ...) would lose it (TensorFlow: 0.5).
    for f, want in ((lambda x: em.square(em.sqrt(x) - 1.0), 0.5),
                    (lambda x: em.square(em.rsqrt(x) - 1.0), 0.5),
                    (lambda x: em.square(em.reciprocal(x) - 1.0), 2.0)):
        d, dd = _second(f, [1.0], em.float64)
        np.testing.assert_array_equal(d, [0.0])
        np.testing.assert_allclose(dd, [want], rtol=1e-12)


def test_second_derivative_of_the_where_idiom_is_finite():
    # TensorFlow: d [0, 0, 0.25], d2 [nan, nan, -0.03125] (its SqrtGradGrad is unguarded);
    # ember takes the guarded points' coefficient at 1, so its d2 is 0 there.
    d, dd = _second(lambda x: em.where(x > 0, em.sqrt(x), _zero(x)), [-1., 0., 4.])
    np.testing.assert_array_equal(d, [0., 0., 0.25])
    np.testing.assert_array_equal(dd, [0., 0., -0.03125])


def test_guarded_rules_still_match_finite_differences():
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 2.0, (3, 4))
    for fn in (em.sqrt, em.rsqrt, em.reciprocal):
        tape.check_gradients(lambda a, fn=fn: fn(a) * em.constant(x), [x], order=2)


def test_guarded_rules_on_complex_inputs():
    z = em.constant(np.array([1 + 2j, -3 + 0.5j, 0j, 4j], np.complex128))
    w = em.constant(np.array([1.0, 1.0, 0.0, 2.0]))
    for fn, deriv in ((em.sqrt, lambda v: 0.5 / np.sqrt(v)),
                      (em.reciprocal, lambda v: -1 / v ** 2)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            with tape.GradientTape() as t:
                t.watch(z)
                y = em.reduce_sum(em.math.real(fn(z)) * w)
            g = t.gradient(y, z).numpy()
            v = z.numpy()
            want = w.numpy() * np.conj(deriv(v))  # dL/dz = dy * conj(f'(z))
        want[2] = 0  # dy = 0 at z = 0, where f' is infinite
        np.testing.assert_allclose(g, want, rtol=1e-12)


# --- 2. clip_by_norm at a zero norm ------------------------------------------------------
def test_clip_by_norm_gradient_at_a_zero_norm():
    # TensorFlow: [1, 1, 1], and 0 at second order (its forward guards the zero norm
    # with where; ember's sqrt rule now gives 0 for the zero gradient maximum passes it)
    d, dd = _second(lambda x: em.clip_by_norm(x, 1.0), [0., 0., 0.])
    np.testing.assert_array_equal(d, [1., 1., 1.])
    np.testing.assert_array_equal(dd, [0., 0., 0.])
    w = em.constant([[1., 2.], [3., 4.]])
    np.testing.assert_array_equal(  # TensorFlow: [[1, 2], [0, 0]]
        _grad(lambda x: em.clip_by_norm(x, 1.0, axes=[1]) * w, [[0., 0.], [3., 4.]]),
        [[1., 2.], [0., 0.]])
    np.testing.assert_allclose(  # TensorFlow: [0.031999990344047546, -0.024000003933906555]
        _grad(lambda x: em.clip_by_norm(x, 1.0), [3., 4.]), [0.032, -0.024], rtol=1e-5)


# --- 3. reduce_prod: the product of the others, not prod / x -----------------------------
PROD_CASES = {  # name -> (f, x, TensorFlow's gradient)
    "infinities": (lambda x: em.reduce_prod(x, axis=1), [[-INF, -INF], [-INF, 1.]],
                   [[-INF, -INF], [1., -INF]]),
    "zeros_inf_nan": (lambda x: em.reduce_prod(x, axis=1),
                      [[0., 2., 3.], [0., 0., 3.], [1., 2., 3.], [INF, 0., 2.], [NAN, 1., 2.]],
                      [[6., 0., 0.], [0., 0., 0.], [6., 3., 2.], [0., INF, NAN],
                       [2., NAN, NAN]]),
    "all_axes": (lambda x: em.reduce_prod(x), [[1., 0.], [3., 4.]], [[0., 12.], [0., 0.]]),
    "axis0_keepdims": (lambda x: em.reduce_prod(x, axis=0, keepdims=True)
                       * em.constant([[1., 2.]]), [[1., 0.], [3., 4.]], [[3., 8.], [1., 0.]]),
    "axes_0_2": (lambda x: em.reduce_prod(x, axis=[0, 2]) * em.constant([1., 2., 3.]),
                 (np.arange(12.).reshape(2, 3, 2) - 3).tolist(),
                 [[[-24., -36.], [0., -60.], [336., 168.]], [[24., 18.], [0., 0.], [48., 42.]]]),
    "negative_axis": (lambda x: em.reduce_prod(x, axis=-1), [[0., 2., 3.], [-INF, 0.5, 2.]],
                      [[6., 0., 0.], [1., -INF, -INF]]),
}


@pytest.mark.parametrize("name", list(PROD_CASES))
def test_reduce_prod_gradient_matches_tensorflow(name):
    f, x, tf_grad = PROD_CASES[name]
    np.testing.assert_array_equal(_grad(f, x), np.array(tf_grad))


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 37])
def test_reduce_prod_gradient_is_the_product_of_the_others(n):
    rng = np.random.default_rng(n)
    x = rng.uniform(0.5, 1.5, (3, n, 2)) * rng.choice([-1, 1], (3, n, 2))
    x[0, 0, 0] = 0.0
    if n > 1:
        x[1, :2, 1] = 0.0
    for axis in (1, (0, 1), (1, 2), None):
        g = _grad(lambda a, axis=axis: em.reduce_prod(a, axis=axis), x, em.float64)
        ax = tuple(range(3)) if axis is None else (axis,) if isinstance(axis, int) else axis
        want = np.empty_like(x)
        for idx in np.ndindex(x.shape):
            sel = tuple(slice(None) if i in ax else idx[i] for i in range(3))
            block = x[sel].copy()
            pos = tuple(idx[i] for i in range(3) if i in ax)
            block[pos] = 1.0
            want[idx] = np.prod(block)
        np.testing.assert_allclose(g, want, rtol=1e-12, atol=0)


def test_reduce_prod_gradient_second_order_and_empty():
    rng = np.random.default_rng(1)
    x = rng.uniform(0.5, 1.5, (3, 4, 2))
    for axis in (1, (0, 2), None):
        tape.check_gradients(lambda a, axis=axis: em.reduce_prod(a, axis=axis), [x], order=2)
    np.testing.assert_array_equal(
        _grad(lambda a: em.reduce_prod(a, axis=1), np.zeros((2, 0))), np.zeros((2, 0)))
    np.testing.assert_array_equal(_grad(lambda a: em.reduce_prod(a), 3.0), 1.0)


def test_reduce_prod_gradient_of_complex_input():
    z = np.array([[1 + 1j, 2 - 1j, 0j], [0.5j, -1 + 0j, 3 + 2j]])
    zt = em.constant(z)
    with tape.GradientTape() as t:
        t.watch(zt)
        y = em.reduce_sum(em.math.real(em.reduce_prod(zt, axis=1)))
    others = np.stack([np.prod(np.delete(z, i, axis=1), axis=1) for i in range(3)], axis=1)
    np.testing.assert_allclose(t.gradient(y, zt).numpy(), np.conj(others), rtol=1e-12)


# --- 4. round, floor and ceil have no gradient -------------------------------------------
@pytest.mark.parametrize("fn", [em.round, em.floor, em.ceil])
def test_rounding_has_no_gradient(fn):
    # TensorFlow: None (math_grad.py's Floor, Ceil and Round), zeros with
    # unconnected_gradients="zero"; another path still gets its own gradient.
    assert _grad(fn, [0.3, 1.7]) is None
    assert _grad(lambda x: em.round(x) + em.floor(x), [0.3, 1.7]) is None
    np.testing.assert_array_equal(_grad(fn, [0.3, 1.7], unconnected_gradients="zero"), [0, 0])
    np.testing.assert_array_equal(_grad(lambda x: fn(x) + x, [0.3, 1.7]), [1., 1.])
    # sign keeps its zeros, as TensorFlow's SignGrad
    np.testing.assert_array_equal(_grad(em.sign, [0.3, -1.7]), [0., 0.])
