"""Keras's ``convolution_op`` seam of Conv1D/Conv2D: a subclass that overrides it changes
the layer's convolution (the layer then adds the bias and the activation), and a ``call``
may use it with a kernel of its own (keras-io's weight-standardized convolution)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember import nn

X = np.random.default_rng(0).standard_normal((2, 6, 6, 3)).astype(np.float32)


def _standardized(k):
    k = np.asarray(k, np.float64)
    return (k - k.mean((0, 1, 2))) / np.sqrt(k.var((0, 1, 2)) + 1e-10)


def _conv(x, k):
    return em.nn_ops.conv2d(x, k.astype(np.float32), padding="VALID").numpy()


class WithOverride(nn.layers.Conv2D):
    def convolution_op(self, inputs, kernel):
        mean, var = em.nn_ops.moments(kernel, axes=[0, 1, 2], keepdims=True)
        return em.nn_ops.conv2d(inputs, (kernel - mean) / em.sqrt(var + 1e-10),
                                padding="VALID", strides=list(self.strides))


class WithCall(nn.layers.Conv2D):
    def call(self, inputs):
        mean, var = em.nn_ops.moments(self.kernel, axes=[0, 1, 2], keepdims=True)
        return self.convolution_op(inputs, (self.kernel - mean) / em.sqrt(var + 1e-10))


def test_an_overridden_convolution_op_replaces_the_convolution():
    # ember's Conv2D called its own convolution, and the override was silently ignored
    layer = WithOverride(4, 3, activation="relu", bias_initializer="ones")
    y = layer(X).numpy()
    want = np.maximum(_conv(X, _standardized(layer.kernel.numpy())) + 1.0, 0.0)
    assert_allclose(y, want, rtol=1e-4, atol=1e-5)


def test_call_can_convolve_with_a_kernel_of_its_own_and_trains():
    layer = WithCall(4, 3)
    assert_allclose(layer(X).numpy(), _conv(X, _standardized(layer.kernel.numpy())),
                    rtol=1e-4, atol=1e-5)
    model = nn.Sequential([nn.Input((6, 6, 3)), WithOverride(2, 3), nn.layers.Flatten(),
                           nn.layers.Dense(1)])
    model.compile("adam", "mse")
    k0 = model.layers[0].kernel.numpy()
    model.fit(X, np.ones((2, 1), np.float32), epochs=2, verbose=0)
    assert not np.allclose(model.layers[0].kernel.numpy(), k0)  # gradients reach it


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_the_default_convolution_op_is_the_call_without_bias_and_activation(data_format):
    x = X if data_format == "channels_last" else np.transpose(X, (0, 3, 1, 2))
    layer = nn.layers.Conv2D(4, 3, activation="tanh", bias_initializer="ones",
                             data_format=data_format)
    y = layer(x).numpy()
    bias = np.ones((1, 1, 1, 4) if data_format == "channels_last" else (1, 4, 1, 1))
    assert_allclose(np.tanh(layer.convolution_op(x, layer.kernel).numpy() + bias), y,
                    rtol=1e-5, atol=1e-6)
    conv1d = nn.layers.Conv1D(2, 3, padding="causal")
    z = np.ones((1, 5, 3), np.float32)
    want = conv1d(z).numpy()
    assert_allclose(conv1d.convolution_op(z, conv1d.kernel).numpy() + conv1d.bias.numpy(),
                    want, rtol=1e-6)


def test_transposed_convolutions_have_none_as_in_keras():
    assert not hasattr(nn.layers.Conv2DTranspose(2, 3), "convolution_op")
