"""The seeds' advice, "write code that runs both eagerly and as a graph": their
walkthroughs' steps under graph.function give the eager results, bit for bit (the linear
regression walkthrough runs both ways in test_seed_walkthroughs.py)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember import graph, tape

pytestmark = pytest.mark.usefixtures("backend")


def test_higher_order_gradients_traced():
    def square(x):
        return em.multiply(x, x)

    grad = tape.gradients_function(square)
    gradgrad = graph.function(tape.gradients_function(lambda x: grad(x)[0]))
    for v in (3.0, 5.0):
        assert float(gradgrad(em.constant(v))[0]) == 2.0
    assert float(graph.function(grad)(em.constant(4.0))[0]) == 8.0


def test_dynamic_model_python_control_flow_traced():
    """The guides' caveat: a dynamic model whose Python control flow depends on values.
    Traced, each path is guarded, so every call takes the branch eager execution takes."""

    def collatz_steps(n):
        count = em.constant(0)
        while int(n) != 1:  # a host read: a guard in each trace
            n = n // 2 if int(n) % 2 == 0 else 3 * n + 1
            count = count + 1
        return count

    traced = graph.function(collatz_steps)
    for start in (6, 7, 6, 12, 7):
        x = em.constant(start)
        assert int(traced(x)) == int(collatz_steps(x))


def test_model_call_traced_matches_eager():
    from ember import nn

    em.random.set_seed(0)
    model = nn.Sequential([nn.layers.Dense(8, activation="relu"), nn.layers.Dense(3)])
    x = em.constant(np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32))
    call = graph.function(lambda t: model(t))
    call(x)
    for k in range(3):
        xk = x * float(k + 1)
        assert_array_equal(call(xk).numpy(), model(xk).numpy())
