"""Element-wise fusion (``_fuse``): on a GPU backend, runs of element-wise ops replay as one
generated kernel with the eager results, bit for bit; on the CPU nothing is fused."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember import graph
from ember.core import extend

rng = np.random.default_rng(0)


def _plan(f):
    (key,) = f._cache.values()
    return key.entries[0].plan


def _fused_sources(plan):
    return [s for s in plan.names if s.startswith("fused[")]


def _x(*shape, dtype=np.float32):
    return em.constant(rng.standard_normal(shape).astype(dtype))


def test_a_layer_and_its_activation_replay_as_one_kernel_on_a_gpu(device):
    w = em.Variable(rng.standard_normal((4, 3)).astype(np.float32))
    b = em.Variable(rng.standard_normal(3).astype(np.float32))

    @graph.function
    def f(x):
        h = em.nn_ops.relu(em.matmul(x, w) + b)
        return em.reduce_sum(em.exp(h) * 2.0 - em.sqrt(em.abs(h))), h

    for _ in range(3):
        x = _x(5, 4)
        x = em.where(x > 1.5, em.constant(np.nan, dtype=em.float32), x)  # NaN propagates
        s, h = f(x)
        s_eager, h_eager = f.python_function(x)
        assert_array_equal(h.numpy(), h_eager.numpy())
        assert_array_equal(s.numpy(), s_eager.numpy())
    plan = _plan(f)
    if device.startswith("/gpu"):
        # h is a result, so the kernel returns it beside the run's last value
        assert _fused_sources(plan) == ["fused[add+relu+exp+multiply+abs+sqrt+subtract]"]
        assert plan.fusion_skipped == []
    else:
        assert plan.ops_fused == 0 and "relu" in plan.names


def test_runs_break_at_a_dtype_or_shape_change(device):
    @graph.function
    def f(x, y):
        a = em.tanh(x * x)  # float32, (3, 4)
        b = em.cast(a, em.float64) + y  # the cast breaks the run
        return em.reduce_sum(b * b - b, axis=0) + em.log1p(em.exp(y[0]))

    x, y = _x(3, 4), _x(3, 4, dtype=np.float64)
    got = f(x, y)
    got = f(x, y)
    assert_array_equal(got.numpy(), f.python_function(x, y).numpy())
    if device.startswith("/gpu"):
        assert _fused_sources(_plan(f)) == ["fused[multiply+tanh]", "fused[add+multiply+subtract]",
                                            "fused[exp+log1p+add]"]


def _register(name, forward, cuda):
    op = extend.REGISTRY.get(name)
    if op is None:  # not differentiable: it lives on in the one op table, which tape's
        # coverage test (every differentiable op has a rule) reads in a combined run
        op = extend.register_op(name, forward, family="math", cuda=cuda,
                                differentiable=False)
    return lambda x: extend.run_op(op, (x,))


def test_a_kernel_that_gives_other_values_is_left_unfused(device):
    # a forward and a CUDA expression that disagree: the check on the traced values
    # catches it, and the ops run as they are
    wrong = _register("test_fuse_twice_but_cuda_thrice", lambda be, x: x * 2, "{0} * 3")

    @graph.function
    def f(x):
        return em.exp(wrong(em.exp(x)))

    x = _x(6)
    f(x)
    got = f(x)
    assert_array_equal(got.numpy(), f.python_function(x).numpy())
    plan = _plan(f)
    assert plan.ops_fused == 0
    if device.startswith("/gpu"):
        assert len(plan.fusion_skipped) == 1
        assert "differs from the traced one" in plan.fusion_skipped[0]
        assert "test_fuse_twice_but_cuda_thrice" in plan.fusion_skipped[0]


def test_an_expression_the_compiler_rejects_is_left_unfused(device):
    bad_c = _register("test_fuse_bad_c", lambda be, x: x + 1, "expf({0}) +")

    @graph.function
    def f(x):
        return bad_c(em.exp(x))

    x = _x(6)
    f(x)
    assert_array_equal(f(x).numpy(), f.python_function(x).numpy())
    if device.startswith("/gpu"):
        # one line naming the run, the reason and the C (cupy's CompileException is nvrtc's
        # whole log; its first error line is the reason, whatever the compiler's words)
        (why,) = _plan(f).fusion_skipped
        assert why.startswith("exp+test_fuse_bad_c: left unfused, its kernel did not compile "
                              "(error: ")
        assert why.endswith("kernel: T t0 = exp(i0); T t1 = expf(t0) +; o0 = t1;")
        assert "\n" not in why


@pytest.mark.parametrize("bad", [3, "exp(x)", ""])
def test_register_op_checks_the_cuda_expression(bad):
    with pytest.raises(TypeError, match="cuda must be a CUDA C expression"):
        extend.register_op("test_fuse_never", lambda be, x: x, family="math", cuda=bad)
    assert "test_fuse_never" not in extend.REGISTRY


def test_steps_of_constants_fold_into_constants_on_a_gpu(device):
    """A loss's seed gradient and its mean's ``1 / n`` over the batch are the same at every
    replay: on a GPU they are constants of the plan (no launches), with the eager results;
    a result stays a step (a buffer of its own), and so do random draws."""
    w = em.Variable(rng.standard_normal((4, 3)).astype(np.float32))

    @graph.function
    def f(x):
        y = em.matmul(x, w)
        ones = em.ones_like(y)  # folds: its input's shape only
        scale = em.divide(em.constant(1.0), 5.0)  # folds: constant inputs
        kept = em.multiply(em.constant(2.0), 3.0)  # a result: stays a step
        noise = em.random.uniform((5, 3), seed=1)  # stateful: stays a step
        return em.reduce_sum(y * ones * scale + noise * 0), kept

    for _ in range(3):
        x = _x(5, 4)
        got, kept = f(x)
        want, _ = f.python_function(x)
        assert_array_equal(got.numpy(), want.numpy())
        assert float(kept) == 6.0
    plan = _plan(f)
    if device.startswith("/gpu"):
        assert "ones_like" not in plan.names and "divide" not in plan.names
        assert "multiply" in plan.names  # the result's
        assert any(n.startswith("random") for n in plan.names), plan.names
    else:
        assert "ones_like" in plan.names and "divide" in plan.names
