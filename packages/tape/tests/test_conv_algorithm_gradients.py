"""The convolution specs of core's op table, differentiated under every algorithm of
``em.config.conv_algorithm``: finite differences to second order, and the first and
second derivatives equal to im2col's (itself checked against PyTorch by the gradient
table)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import ember.core as em
from ember import tape
from ember.core.testing import OP_SPECS

CONV_SPECS = [s for s in OP_SPECS if s.name in (
    "nn_ops.conv2d", "nn_ops.conv1d", "nn_ops.conv2d_transpose", "conv2d_backprop_input",
    "conv2d_backprop_filter")]
PARAMS = [pytest.param(s, c, id=f"{s.name}-{c.name}") for s in CONV_SPECS for c in s.cases]
# the cases of stride 1 and dilation 1 with filters of 2 to 5 taps a side (or 1 x 2 to
# 5), where Winograd applies
WINOGRAD_CASES = {("nn_ops.conv2d", "valid"), ("nn_ops.conv2d", "same_3x3"),
                  ("nn_ops.conv2d", "same_5x5"), ("nn_ops.conv1d", "valid"),
                  ("nn_ops.conv2d_transpose", "valid"),
                  *((op, c) for op in ("conv2d_backprop_input", "conv2d_backprop_filter")
                    for c in ("valid_3x3", "same_3x3", "same_5x5", "wide_pads_2x3"))}
# im2col's finite-difference checks are the gradient table's (the default "auto" runs
# im2col on these small shapes); here the other two, where they apply.
FD_PARAMS = [pytest.param(s, c, algo, id=f"{algo}-{s.name}-{c.name}") for s in CONV_SPECS
             for c in s.cases for algo in ("fft", "winograd")
             if algo == "fft" or (s.name, c.name) in WINOGRAD_CASES]


@pytest.fixture(params=["im2col", "fft", "winograd"])
def conv_algorithm(request: pytest.FixtureRequest):
    with em.config.using(conv_algorithm=request.param):
        yield request.param


def _function(spec, case):
    args = case.make(np.random.default_rng(0), np.dtype(np.float64))
    kwargs = dict(spec.kwargs, **case.kwargs)
    pos = [i for i in spec.grad_args if isinstance(args[i], np.ndarray)]

    def f(*diff):
        full = [em.constant(a) if isinstance(a, np.ndarray) else a for a in args]
        for p, d in zip(pos, diff):
            full[p] = d
        return spec.fn(*full, **kwargs)

    return f, [args[p] for p in pos]


@pytest.mark.parametrize("spec,case,algorithm", FD_PARAMS)
def test_gradients_match_finite_differences_to_second_order(spec, case, algorithm, backend):
    if backend != "/cpu:0":
        pytest.skip("finite differences run on the CPU; on this backend, "
                    "test_derivatives_equal_im2col compares both orders with im2col's")
    f, sources = _function(spec, case)
    with em.config.using(conv_algorithm=algorithm):
        tape.check_gradients(f, sources, order=2, eps=1e-6, rtol=1e-4, atol=1e-6)


def _first_and_second(f, sources):
    xs = [em.constant(s) for s in sources]
    rng = np.random.default_rng(3)
    with tape.GradientTape(persistent=True) as outer:
        for x in xs:
            outer.watch(x)
        with tape.GradientTape() as inner:
            for x in xs:
                inner.watch(x)
            y = f(*xs)
        w = em.constant(rng.uniform(0.5, 1.5, y.shape))
        g = inner.gradient(y, xs, output_gradients=w)
        s = functools.reduce(em.add, [em.reduce_sum(em.multiply(
            gi, em.constant(rng.uniform(0.5, 1.5, gi.shape)))) for gi in g])
    gg = outer.gradient(s, xs)
    return [y.numpy()] + [a.numpy() for a in g] + [np.zeros(x.shape) if a is None else a.numpy()
                                                  for a, x in zip(gg, xs)]


@pytest.mark.parametrize("spec,case", PARAMS)
def test_derivatives_equal_im2col(spec, case, conv_algorithm):
    f, sources = _function(spec, case)
    got = _first_and_second(f, sources)
    with em.config.using(conv_algorithm="im2col"):
        want = _first_and_second(f, sources)
    for i, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"derivative {i}")
