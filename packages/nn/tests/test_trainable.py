"""``trainable`` as Keras has it: setting it on a layer sets it on every sub-layer, a
frozen BatchNormalization runs in inference mode, and layers are named as Keras names
them (found by porting keras-io's transfer-learning guide)."""

from __future__ import annotations

import re

import numpy as np
from numpy.testing import assert_allclose, assert_array_equal

import ember.core as em
from ember import nn

L = nn.layers


def _nested():
    inner = nn.Sequential([nn.Input(shape=(3,)), L.Dense(3), L.BatchNormalization()])
    outer = nn.Sequential([nn.Input(shape=(3,)), inner, L.Dense(2)])
    return inner, outer


def test_trainable_is_set_on_every_sub_layer():
    inner, outer = _nested()
    outer.trainable = False
    assert not inner.trainable and not any(layer.trainable for layer in inner.layers)
    assert outer.trainable_weights == [] and len(outer.non_trainable_weights) == 8
    outer.trainable = True  # unfreezes everything in it, as Keras
    assert inner.trainable and all(layer.trainable for layer in inner.layers)
    assert len(outer.trainable_weights) == 6
    inner.layers[0].trainable = False  # a child alone leaves its parent as it was
    assert inner.trainable and len(outer.trainable_weights) == 4


def test_batch_norm_in_a_frozen_model_runs_in_inference_mode():
    inner, outer = _nested()
    bn = inner.layers[1]
    x = em.constant(np.random.default_rng(0).normal(3.0, 2.0, (16, 3)).astype(np.float32))
    outer(x, training=True)
    moved = bn.moving_mean.numpy().copy()
    assert np.abs(moved).max() > 0  # trainable: training mode updates the statistics
    outer.trainable = False
    y = inner(x, training=True)
    assert_array_equal(bn.moving_mean.numpy(), moved)  # frozen: no update
    h = inner.layers[0](x).numpy()
    want = (h - moved) / np.sqrt(bn.moving_variance.numpy() + bn.epsilon) \
        * bn.gamma.numpy() + bn.beta.numpy()
    assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-5)  # normalized by the moving stats


def test_default_layer_names_are_keras_names():
    names = {L.Conv2D(2, 3): "conv2d", L.GlobalAveragePooling2D(): "global_average_pooling2d",
             L.MaxPooling2D(): "max_pooling2d", L.LSTMCell(2): "lstm_cell",
             L.SimpleRNN(2): "simple_rnn", L.Conv2DTranspose(2, 3): "conv2d_transpose",
             L.BatchNormalization(): "batch_normalization", L.GRU(2): "gru"}
    for layer, want in names.items():  # (a suffix counts the instances, as in Keras)
        assert re.fullmatch(rf"{want}(_\d+)?", layer.name), (layer.name, want)
