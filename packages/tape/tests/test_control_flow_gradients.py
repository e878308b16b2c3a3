"""Gradients through em.map_fn, scan, foldl, while_loop, cond, case and switch_case: the
tape records the ops the bodies and the chosen branches ran, so gradients are those of the
unrolled computation (checked against numpy's derivatives and finite differences)."""

import numpy as np

import ember.core as em
from ember import tape

RNG = np.random.default_rng(0)


def _grad(f, x):
    x = em.constant(x)
    with tape.GradientTape() as t:
        t.watch(x)
        y = f(x)
    return t.gradient(y, x)


def test_map_fn_gradient_is_the_per_row_derivative():
    x = RNG.uniform(-1, 1, size=(4, 3))
    g = _grad(lambda x: em.reduce_sum(em.map_fn(lambda r: r ** 3, x)), x)
    np.testing.assert_allclose(g.numpy(), 3 * x ** 2, rtol=1e-12)
    # a nested structure with a captured (shared) variable: its gradient sums over rows
    w = em.Variable(np.array([0.5, -2.0, 1.5]))
    with tape.GradientTape() as t:
        out = em.map_fn(lambda e: (em.reduce_sum(e[0] * w), e[1] * 2.0),
                        (em.constant(x), em.constant(x[:, 0])))
        y = em.reduce_sum(out[0]) + em.reduce_sum(out[1])
    np.testing.assert_allclose(t.gradient(y, w).numpy(), x.sum(axis=0), rtol=1e-12)


def test_map_fn_second_order():
    tape.check_gradients(
        lambda x: em.map_fn(lambda r: em.sin(r) * em.reduce_sum(r * r), x),
        [RNG.uniform(-1, 1, size=(3, 2))], order=2)


def test_map_fn_back_prop_false_cuts_the_gradient():
    x = em.constant([1.0, 2.0])
    with tape.GradientTape() as t:
        t.watch(x)
        y = em.reduce_sum(em.map_fn(lambda r: r * r, x, back_prop=False))
    assert t.gradient(y, x) is None


def test_scan_gradient_of_a_cumulative_product():
    x = RNG.uniform(0.5, 1.5, size=5)
    g = _grad(lambda x: em.reduce_sum(em.scan(lambda a, r: a * r, x)), x)
    # d/dx_i sum_k prod_{j<=k} x_j = sum_{k>=i} prod_{j<=k} x_j / x_i
    want = np.array([np.cumprod(x)[i:].sum() / x[i] for i in range(5)])
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-12)


def test_scan_second_order_with_initializer_and_reverse():
    def f(x, h0):
        return em.scan(lambda h, r: em.tanh(h * 0.7 + r), x, h0, reverse=True)

    tape.check_gradients(f, [RNG.uniform(-1, 1, size=(4, 2)), RNG.uniform(-1, 1, size=2)],
                         order=2)


def test_foldl_gradient():
    x = RNG.uniform(0.5, 1.5, size=4)
    # a * x_i + 1 from a = 0: the result is sum_i prod_{j>i} x_j
    g = _grad(lambda x: em.foldl(lambda a, r: a * r + 1.0, x, em.constant(0.0, em.float64)), x)
    want = [sum(np.prod(x[i + 1:k]) * np.prod(x[k + 1:]) for i in range(k)) for k in range(4)]
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-12)


def test_while_loop_gradient_of_repeated_squaring():
    x = RNG.uniform(0.5, 1.2, size=3)
    g = _grad(lambda x: em.reduce_sum(
        em.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * v), (0, x))[1]), x)
    np.testing.assert_allclose(g.numpy(), 8 * x ** 7, rtol=1e-12)  # (x^2)^2)^2 = x^8


def test_while_loop_second_order_and_data_dependent_trip_count():
    def f(x):
        # halve until every entry is below 1: the trip count depends on x, the gradient is
        # that of the iterations that ran
        return em.while_loop(lambda v: em.reduce_max(v) > 1.0, lambda v: em.sin(v) * 0.5 + v * 0.4,
                             [x])[0]

    x = np.array([2.5, 0.7, 1.8])
    tape.check_gradients(f, [x], order=2)
    v = em.Variable(3.0)
    with tape.GradientTape() as t:
        y = em.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s * v), (0, em.constant(1.0)))[1]
    np.testing.assert_allclose(t.gradient(y, v).numpy(), 4 * 3.0 ** 3, rtol=1e-6)  # d v^4
    with tape.GradientTape() as t:
        y = em.while_loop(lambda s: s < 10.0, lambda s: s * v, [em.constant(1.0)],
                          back_prop=False)[0]
    assert t.gradient(y, v) is None


def test_cond_gradient_flows_through_the_chosen_branch_only():
    def f(x):
        return em.cond(em.reduce_sum(x) > 0, lambda: x * x, lambda: em.sin(x))

    pos, neg = np.array([0.5, 1.5]), np.array([-0.5, -1.5])
    np.testing.assert_allclose(_grad(lambda x: em.reduce_sum(f(x)), pos).numpy(), 2 * pos)
    np.testing.assert_allclose(_grad(lambda x: em.reduce_sum(f(x)), neg).numpy(), np.cos(neg))
    tape.check_gradients(f, [pos], order=2)
    tape.check_gradients(f, [neg], order=2)


def test_case_and_switch_case_gradients():
    x = np.array([0.3, -0.8])

    def by_case(x):
        s = em.reduce_sum(x)
        return em.case([(s > 1.0, lambda: x * 3.0), (s < 0.0, lambda: x * x * x)],
                       default=lambda: em.exp(x))

    np.testing.assert_allclose(_grad(lambda x: em.reduce_sum(by_case(x)), x).numpy(), 3 * x ** 2)

    def by_switch(x):
        return em.switch_case(em.constant(1), [lambda: x * 2.0, lambda: em.exp(x)])

    np.testing.assert_allclose(_grad(lambda x: em.reduce_sum(by_switch(x)), x).numpy(), np.exp(x))
    tape.check_gradients(by_switch, [x], order=2)
