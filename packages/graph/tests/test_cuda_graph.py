"""CUDA Graphs (``_cuda_graph``): on a GPU a replay is captured on its second replay and
launched as one graph afterwards, with the eager results bit for bit; what a graph would
repeat wrongly (host reads) is never captured, and a capture that meets something CUDA or
cupy forbids (a host transfer, a cuBLAS call) leaves the plan replaying op by op, saying
why. Random draws: test_cuda_graph_random."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember import graph
from ember.core import extend
from ember.core.testing import simulated_gpus, without_nvmath

rng = np.random.default_rng(0)


def _softmax_regression(elementwise=False):
    """A training step with its gradient written out (ember-graph's tests use core only).

    With ``elementwise``, its products are broadcast multiplies and sums, which cupy runs
    with its own kernels; a float ``matmul`` calls cuBLAS, which cupy 14 refuses while a
    stream captures (cupy issue 6290)."""
    w = em.Variable(rng.standard_normal((5, 3)).astype(np.float32) * 0.1)
    b = em.Variable(np.zeros(3, np.float32))

    def product(x, m):  # x @ m: [n, k] x [k, j]
        if not elementwise:
            return em.matmul(x, m)
        return em.reduce_sum(em.expand_dims(x, 2) * em.expand_dims(m, 0), axis=1)

    def step(x, y):
        logits = product(x, w) + b
        p = em.nn_ops.softmax(logits)
        onehot = em.one_hot(y, 3, dtype=em.float32)
        loss = -em.reduce_mean(em.reduce_sum(onehot * em.log(p), axis=1))
        d = (p - onehot) / 8.0
        w.assign_sub(0.5 * product(em.transpose(x), d))
        b.assign_sub(0.5 * em.reduce_sum(d, axis=0))
        return loss, logits

    return step, (w, b)


def _batches(n):
    return [(em.constant(rng.standard_normal((8, 5)).astype(np.float32)),
             em.constant(rng.integers(0, 3, 8))) for _ in range(n)]


def _train_like_eager(elementwise):
    """Six steps traced and eager from the same start, bit for bit; the traced function."""
    traced_step, traced_vars = _softmax_regression(elementwise)
    eager_step, eager_vars = _softmax_regression(elementwise)
    for v, u in zip(eager_vars, traced_vars):
        v.assign(u)
    f = graph.function(traced_step)
    kept = []
    for x, y in _batches(6):
        loss, logits = f(x, y)
        eager_loss, eager_logits = eager_step(x, y)
        assert_array_equal(loss.numpy(), eager_loss.numpy())
        assert_array_equal(logits.numpy(), eager_logits.numpy())
        for v, u in zip(traced_vars, eager_vars):
            assert_array_equal(v.numpy(), u.numpy())
        kept.append((logits, logits.numpy()))
    # results are the caller's own: a later launch does not overwrite an earlier result
    for t, value in kept:
        assert_array_equal(t.numpy(), value)
    return f


def test_a_training_step_runs_as_a_graph_and_trains_bit_for_bit_like_eager(device):
    f = _train_like_eager(elementwise=True)
    (status,) = f.cuda_graph_status()
    if device.startswith("/gpu"):  # traced, replayed op by op, captured; 4 launches
        assert status == "call: captured (launched 4 times)"
    else:
        assert status.startswith("call: not captured: its device cannot capture graphs")


def test_a_step_with_a_float_matmul_captures_through_nvmath(device):
    """Its products go through nvmath-python's cuBLASLt (cupy 14 refuses cuBLAS during a
    capture), eagerly too: the captured step trains bit for bit like eager."""
    f = _train_like_eager(elementwise=False)
    (status,) = f.cuda_graph_status()
    if device.startswith("/gpu"):
        assert status == "call: captured (launched 4 times)"
    else:
        assert status.startswith("call: not captured: its device cannot capture graphs")


def test_without_nvmath_a_float_matmul_says_why_it_is_not_captured():
    with simulated_gpus(1, strict=True) as (gpu,), em.device("/gpu:0"), without_nvmath(gpu):
        f = _train_like_eager(elementwise=False)  # op by op, still bit for bit like eager
        (status,) = f.cuda_graph_status()
    assert status == ("call: not captured: matmul calls cuBLAS, which cupy refuses during "
                      "stream capture; nvmath-python is not installed (pip install "
                      "ember-core[cuda12], or ember-core[cuda13] on CUDA 13)")


def test_cuda_graphs_false_replays_op_by_op(device):
    step, _ = _softmax_regression()
    f = graph.function(step, cuda_graphs=False)
    for x, y in _batches(3):
        f(x, y)
    assert f.cuda_graph_status() == ["call: not captured: graph.function(cuda_graphs=False)"]
    with pytest.raises(TypeError, match="cuda_graphs must be a bool"):
        graph.function(step, cuda_graphs=1)


def test_what_a_graph_would_repeat_is_not_captured():
    with simulated_gpus(1, strict=True), em.device("/gpu:0"):
        @graph.function
        def branchy(x):
            return x * 2.0 if float(em.reduce_sum(x)) > 0 else x - 1.0

        for sign in (1.0, 1.0, 1.0, -1.0):
            got = branchy(em.fill([3], sign))
            assert_array_equal(got.numpy(), np.full(3, 2.0 if sign > 0 else -2.0, np.float32))
        assert set(branchy.cuda_graph_status()) == {
            "call: not captured: it reads device values on the host (guards)"}


def _uploading_op():
    """An op whose forward copies a host array to the device on every call (cupy forbids
    that during a capture)."""
    name = "test_cuda_graph.add_host_ones"
    op = extend.REGISTRY.get(name)
    if op is None:
        def forward(be, x):
            return x + be.xp.asarray(np.ones(x.shape, x.dtype))

        op = extend.register_op(name, forward, family="math", differentiable=False)
    return lambda x: extend.run_op(op, (x,))


def test_a_capture_that_meets_a_host_transfer_replays_op_by_op(device):
    add_ones = _uploading_op()
    f = graph.function(lambda x: add_ones(x * 3.0))
    for k in range(4):
        got = f(em.fill([2, 2], float(k)))
        assert_array_equal(got.numpy(), np.full((2, 2), 3.0 * k + 1.0, np.float32))
    (status,) = f.cuda_graph_status()
    if device.startswith("/gpu"):
        assert status == ("call: not captured: the capture failed: RuntimeError: the current "
                          "stream is capturing, so H2D transfers are disallowed")
    else:
        assert "cannot capture graphs" in status
