"""Host reads of traced values become guards: a replay never takes the wrong branch."""

from __future__ import annotations

import pytest

import ember.core as em
from ember import graph


def test_python_if_on_a_tensor_takes_the_right_branch():
    @graph.function
    def f(x):
        if em.reduce_sum(x) > 0:
            return x * 2
        return x * -1

    assert float(f(em.constant([1.0]))) == 2.0
    assert float(f(em.constant([3.0]))) == 6.0  # same branch: replayed
    assert f.experimental_get_tracing_count() == 1
    assert float(f(em.constant([-4.0]))) == 4.0  # other branch: eager, then traced
    assert f.experimental_get_tracing_count() == 2
    assert float(f(em.constant([-1.0]))) == 1.0  # both paths are now replayed
    assert float(f(em.constant([5.0]))) == 10.0
    assert f.experimental_get_tracing_count() == 2


def test_python_loop_bound_read_from_a_tensor():
    @graph.function
    def f(x, n):
        for _ in range(int(n)):
            x = x * 2
        return x

    assert float(f(em.constant(1.0), em.constant(3))) == 8.0
    assert float(f(em.constant(1.0), em.constant(4))) == 16.0
    assert float(f(em.constant(2.0), em.constant(4))) == 32.0


def test_a_value_that_always_changes_ends_in_eager_execution_with_a_warning():
    @graph.function
    def f(x):
        return x * float(x)  # reads its own (changing) value on the host

    with pytest.warns(UserWarning, match="changes from call to call"):
        for k in range(1, 8):
            assert float(f(em.constant(float(k)))) == k * k


def test_a_failed_guard_changes_no_variable():
    v = em.Variable(0.0)

    @graph.function
    def f(x):
        v.assign_add(x)
        if x > 0:
            return v * 1
        return v * -1

    f(em.constant(1.0))  # traced: v = 1
    assert float(f(em.constant(-2.0))) == 1.0  # guard fails; eager: v = -1, returns 1
    assert float(v) == -1.0
