"""The gradient of ``nn_ops.dense`` (one op for a Dense layer on a matrix): on the host the
bits of the separate ops it replaces (``matmul`` and ``bias_activation`` and their rules),
on a GPU (the strict double: cuBLASLt's BIAS and BGRADA epilogs through its fake nvmath)
numpy's numbers, and the same numbers the long way where nvmath is missing. Second-order
and PyTorch checks: the gradient table (``nn_ops.dense``, ``dense_weight_grad``)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import ember.core as em
from ember import tape
from ember.core.testing import simulated_gpus, without_nvmath

rng = np.random.default_rng(3)


def _f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def _grads(fn, x, w, b):
    x, w, b = (em.constant(v) for v in (x, w, b))
    with tape.GradientTape() as t:
        t.watch([x, w, b])
        y = fn(x, w, b)
        loss = em.reduce_sum(em.multiply(y, y))
    return [y, *t.gradient(loss, [x, w, b])]


def _composite(activation):
    return lambda x, w, b: em.nn_ops.bias_activation(em.matmul(x, w), b, activation)


def _fused(activation):
    return lambda x, w, b: em.nn_ops.dense(x, w, b, activation)


@pytest.mark.parametrize("activation", ["linear", "relu"])
def test_on_the_host_dense_gives_the_bits_of_the_ops_it_replaces(activation):
    x, w, b = _f32(16, 7), _f32(7, 5), _f32(5)
    with em.device("/cpu:0"):  # (a present GPU is the default device otherwise)
        got = _grads(_fused(activation), x, w, b)
        want = _grads(_composite(activation), x, w, b)
    for g, e in zip(got, want):
        assert_array_equal(g.numpy(), e.numpy())


@pytest.fixture
def gpu():
    with simulated_gpus(1, strict=True) as (gpu,), em.device("/gpu:0"):
        yield gpu


@pytest.mark.parametrize("activation", ["linear", "relu"])
def test_on_a_gpu_dense_and_its_gradients_match_numpy(gpu, activation):
    x, w, b = _f32(16, 7), _f32(7, 5), _f32(5)
    y, dx, dw, db = (t.numpy() for t in _grads(_fused(activation), x, w, b))
    z = x @ w + b
    want_y = np.maximum(z, 0) if activation == "relu" else z
    dz = 2 * want_y * (z > 0) if activation == "relu" else 2 * want_y
    assert_allclose(y, want_y, rtol=1e-5, atol=1e-5)
    assert_allclose(dx, dz @ w.T, rtol=1e-4, atol=1e-4)
    assert_allclose(dw, x.T @ dz, rtol=1e-4, atol=1e-4)
    assert_allclose(db, dz.sum(0), rtol=1e-4, atol=1e-4)




def test_without_nvmath_a_gpu_computes_the_same_numbers_the_long_way(gpu):
    x, w, b = _f32(16, 7), _f32(7, 5), _f32(5)
    fused = [t.numpy() for t in _grads(_fused("linear"), x, w, b)]
    with without_nvmath(gpu):
        plain = [t.numpy() for t in _grads(_fused("linear"), x, w, b)]
    for f, p in zip(fused, plain):
        assert_allclose(f, p, rtol=1e-5, atol=1e-5)
