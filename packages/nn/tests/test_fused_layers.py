"""Dense, Conv2D and BatchNormalization run the fused layer ops (em.nn_ops.bias_activation
with relu or no activation, em.nn_ops.batch_norm_training while training) and agree with
the ops composed by hand in values, gradients and second derivatives."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember import nn, tape
from ember.core.testing import recorded_op_names

L = nn.layers
RNG = np.random.default_rng(0)


def _x(*shape):
    return em.constant(RNG.uniform(-1, 1, shape))  # float64: tight comparisons


def _composed_dense(layer, x):
    y = em.add(em.matmul(x, layer.kernel.value()), layer.bias.value())
    return em.nn_ops.relu(y) if nn.activations.name_of(layer.activation) == "relu" else y


def _composed_dense_rows(layer, x):
    """What Dense did on (N, T, d) before it ran nn_ops.dense on the rows: a tensordot,
    then the bias and activation."""
    y = em.add(em.tensordot(x, layer.kernel.value(), [[x.ndim - 1], [0]]), layer.bias.value())
    return em.nn_ops.relu(y) if nn.activations.name_of(layer.activation) == "relu" else y


def _composed_conv(layer, x):
    y = em.add(em.nn_ops.conv2d(x, layer.kernel.value(), padding="SAME"), layer.bias.value())
    return em.nn_ops.relu(y) if nn.activations.name_of(layer.activation) == "relu" else y


# a Dense layer on a matrix is one op, its product included (nn_ops.dense); a convolution
# adds bias and activation in one op after its own
CASES = [
    (lambda: L.Dense(4, activation="relu", dtype="float64"), _composed_dense, (5, 3), "dense"),
    (lambda: L.Dense(4, dtype="float64"), _composed_dense, (5, 3), "dense"),
    # on (N, T, d) (an attention's projections, a Transformer's feed-forward layers): the
    # same op on the rows, between two reshapes
    (lambda: L.Dense(4, activation="relu", dtype="float64"), _composed_dense_rows,
     (2, 5, 3), "dense"),
    (lambda: L.Conv2D(3, 3, padding="same", activation="relu", dtype="float64"),
     _composed_conv, (2, 5, 5, 2), "bias_activation"),
]


@pytest.mark.parametrize(("make", "composed", "shape", "fused"), CASES,
                         ids=["dense_relu", "dense_linear", "dense_relu_rank3", "conv_relu"])
def test_bias_and_activation_are_one_op_and_match_the_composition(make, composed, shape,
                                                                  fused):
    layer, x = make(), _x(*shape)
    layer(x)
    with recorded_op_names() as names:
        layer(x)
    assert names.count(fused) == 1 and "add" not in names and "relu" not in names, names
    if fused == "dense":
        assert [n for n in names if n != "reshape"] == ["dense"], names
    results = []
    for fn in (layer, lambda x: composed(layer, x)):
        with tape.GradientTape() as outer:
            outer.watch(x)
            with tape.GradientTape() as inner:
                inner.watch(x)
                y = em.reduce_sum(em.sin(fn(x)))
            gx, gk, gb = inner.gradient(y, [x, layer.kernel, layer.bias])
            gv = em.reduce_sum(gx * x) + em.reduce_sum(gb * gb)
        hx, hk = outer.gradient(gv, [x, layer.kernel])
        results.append([v.numpy() for v in (y, gx, gk, gb, hx, hk)])
    for a, b in zip(*results):
        assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_other_activations_compose_bias_and_activation():
    layer, x = L.Dense(4, activation="tanh", dtype="float64"), _x(5, 3)
    with recorded_op_names() as names:
        layer(x)
    assert "bias_activation" not in names and "tanh" in names, names


@pytest.mark.parametrize("axis", [-1, 1])
def test_batch_norm_trains_with_one_fused_op_and_matches_the_composition(axis):
    layer = L.BatchNormalization(axis=axis, momentum=0.9, dtype="float64")
    x = _x(6, 3, 4, 2)
    layer(x, training=True)  # builds; moving statistics move once
    layer.gamma.assign(RNG.uniform(0.5, 1.5, layer.gamma.shape))
    layer.beta.assign(RNG.uniform(-1, 1, layer.beta.shape))
    before = layer.moving_mean.numpy(), layer.moving_variance.numpy()
    with recorded_op_names() as names:
        with tape.GradientTape() as t:
            t.watch(x)
            y = layer(x, training=True)
            loss = em.reduce_sum(em.sin(y))
    assert names.count("batch_norm_training") == 1 and "moments" not in names, names
    gx, gg, gb = t.gradient(loss, [x, layer.gamma, layer.beta])
    axes = tuple(i for i in range(4) if i != axis % 4)
    xs = x.numpy()
    mean, var = xs.mean(axes, keepdims=True), xs.var(axes, keepdims=True)
    shape = [1, 1, 1, 1]
    shape[axis % 4] = -1
    want = (xs - mean) / np.sqrt(var + layer.epsilon) * layer.gamma.numpy().reshape(shape) \
        + layer.beta.numpy().reshape(shape)
    assert_allclose(y.numpy(), want, rtol=1e-10, atol=1e-12)
    # Keras's moving averages: moving = moving * momentum + batch * (1 - momentum)
    assert_allclose(layer.moving_mean.numpy(), before[0] * 0.9 + mean.reshape(-1) * 0.1,
                    rtol=1e-12)
    assert_allclose(layer.moving_variance.numpy(), before[1] * 0.9 + var.reshape(-1) * 0.1,
                    rtol=1e-12)
    # the gradients of the composition (moments, then batch_normalization)
    xc = em.constant(xs)
    g_, b_ = layer.gamma.value(), layer.beta.value()
    with tape.GradientTape() as t2:
        t2.watch([xc, g_, b_])
        m, v = em.nn_ops.moments(xc, list(axes), keepdims=True)
        y2 = em.nn_ops.batch_normalization(xc, m, v, em.reshape(b_, shape),
                                           em.reshape(g_, shape), layer.epsilon)
        loss2 = em.reduce_sum(em.sin(y2))
    for a, b in zip((gx, gg, gb), t2.gradient(loss2, [xc, g_, b_])):
        assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-12)
