"""Keras 3's 3-D layers (Conv3D, Conv3DTranspose, MaxPooling3D, AveragePooling3D,
GlobalMaxPooling3D, GlobalAveragePooling3D, UpSampling3D, ZeroPadding3D, Cropping3D and
their aliases) against Keras itself.

``data/keras_conv3d.json`` holds Keras 3.15.1's outputs (torch backend, CPU), weight
names and shapes, configs and input gradients for the cases of
``keras_conv3d_reference.py`` (which wrote it, in Keras's interpreter); the inputs and
weights are that script's sines.
"""

from __future__ import annotations

import inspect
import json
import pathlib

import numpy as np
import pytest
from keras_conv3d_reference import CASES, GRADIENTS, arr
from numpy.testing import assert_allclose

import ember.core as em
from ember import nn, tape

L = nn.layers
KERAS = json.loads((pathlib.Path(__file__).parent / "data" / "keras_conv3d.json").read_text())
# config entries compared with Keras's (initializers, regularizers and activations are
# ember's own objects; their round trip is checked elsewhere)
CONFIG_KEYS = ("filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate",
               "use_bias", "output_padding", "pool_size", "keepdims", "cropping", "size")


def _listed(v):
    return [_listed(i) for i in v] if isinstance(v, (list, tuple)) else v


def _built(cid):
    cls, kwargs, shape = CASES[cid]
    layer = getattr(L, cls)(**kwargs)
    x = em.constant(arr(shape, 1))
    layer(x)
    layer.set_weights([arr(tuple(w.shape), 10 + i, 0.5) for i, w in enumerate(layer.weights)])
    return layer, x


def test_reference_is_keras_3_15():
    assert KERAS["keras_version"] == "3.15.1"
    assert set(KERAS["cases"]) == set(CASES)


@pytest.mark.parametrize("cid", list(CASES))
def test_layer_matches_keras(cid):
    want = KERAS["cases"][cid]
    layer, x = _built(cid)
    names = [w.name.split("/")[-1].split(":")[0] for w in layer.weights]
    assert [[n, list(w.shape)] for n, w in zip(names, layer.weights)] == want["weights"]
    y = layer(x)
    assert_allclose(y.numpy(), np.array(want["output"], np.float32), rtol=1e-5, atol=1e-5)
    config = layer.get_config()
    for key in CONFIG_KEYS:
        if key in want["config"]:
            assert _listed(config[key]) == want["config"][key], key


@pytest.mark.parametrize("cid", [c for c in CASES if CASES[c][0] in GRADIENTS])
def test_input_gradient_matches_keras(cid):
    layer, x = _built(cid)
    with tape.GradientTape() as t:
        t.watch(x)
        y = layer(x)
        loss = em.reduce_sum(y * em.constant(arr(tuple(y.shape), 3)))
    g = t.gradient(loss, x)
    assert_allclose(g.numpy(), np.array(KERAS["cases"][cid]["input_gradient"], np.float32),
                    rtol=1e-5, atol=1e-5)


def test_conv3d_trains_its_kernel_and_bias():
    layer = L.Conv3D(2, 2, padding="same", activation="tanh")
    x = em.constant(arr((2, 3, 4, 4, 2), 5))
    with tape.GradientTape() as t:
        loss = em.reduce_sum(layer(x) ** 2)
    gk, gb = t.gradient(loss, [layer.kernel, layer.bias])
    assert gk.shape == (2, 2, 2, 2, 2) and gb.shape == (2,)
    assert float(em.reduce_sum(em.abs(gk))) > 0 and float(em.reduce_sum(em.abs(gb))) > 0


def test_keras_argument_order():
    """Keras's positional order: data_format comes right after padding (Conv3D), and
    before output_padding (Conv3DTranspose)."""
    for cls in (L.Conv3D, L.Conv3DTranspose):
        names = list(inspect.signature(cls.__init__).parameters)[1:6]
        assert names == ["filters", "kernel_size", "strides", "padding", "data_format"]
    y = L.Conv3D(2, 3, 1, "same", "channels_first")(em.ones((1, 3, 4, 4, 4)))
    assert y.shape == (1, 2, 4, 4, 4)
    assert list(inspect.signature(L.Conv3DTranspose.__init__).parameters)[6] == "output_padding"


def test_aliases_are_keras_names():
    assert L.MaxPool3D is L.MaxPooling3D and L.AvgPool3D is L.AveragePooling3D
    assert L.GlobalMaxPool3D is L.GlobalMaxPooling3D
    assert L.GlobalAvgPool3D is L.GlobalAveragePooling3D
    assert L.Convolution3D is L.Conv3D and L.Convolution3DTranspose is L.Conv3DTranspose
    assert L.Conv3D(1, 1).name.startswith("conv3d")
    assert L.MaxPool3D().name.startswith("max_pooling3d")


@pytest.mark.parametrize("make, match", [
    (lambda: L.Conv3D(3, 3, groups=2), "filters must be divisible by groups"),
    (lambda: L.Conv3D(2, (3, 3)), "kernel_size"),
    (lambda: L.Conv3D(2, 3, padding="causal"), "padding"),
    (lambda: L.Conv3DTranspose(2, 3, strides=2, dilation_rate=2), "dilation_rate"),
    (lambda: L.Conv3DTranspose(2, 3, strides=2, output_padding=2), "output_padding"),
    (lambda: L.MaxPooling3D(data_format="NDHWC"), "data_format"),
    (lambda: L.ZeroPadding3D((1, 2)), "padding"),
    (lambda: L.ZeroPadding3D((1, 2, -1)), "padding"),
    (lambda: L.Cropping3D(((1, 2, 3), 1, 1)), "cropping"),
    (lambda: L.UpSampling3D((2, 0, 1)), "size"),
    (lambda: L.UpSampling3D(2, data_format="nchw"), "data_format"),
])
def test_bad_arguments_are_refused_by_name(make, match):
    with pytest.raises((ValueError, TypeError, em.InvalidArgumentError), match=match):
        make()


def test_rank_4_inputs_are_refused():
    with pytest.raises(ValueError, match="rank"):
        L.Conv3D(2, 2)(em.ones((1, 4, 4, 3)))
    with pytest.raises(ValueError):
        L.MaxPooling3D()(em.ones((1, 4, 4, 3)))


def test_cropping_everything_is_refused():
    with pytest.raises(ValueError, match="Cropping3D.*leaves nothing"):
        L.Cropping3D(((1, 1), 0, 0))(em.ones((1, 2, 3, 3, 1)))


def test_config_round_trips():
    for cid, (cls, kwargs, _shape) in CASES.items():
        layer = getattr(L, cls)(**kwargs)
        again = type(layer).from_config(layer.get_config())
        assert again.get_config() == layer.get_config(), cid


# --- the core ops' argument checks ---------------------------------------------------------
@pytest.mark.parametrize("call, match", [
    (lambda: em.nn_ops.conv3d(em.ones((1, 3, 3, 3, 2)), em.ones((2, 2, 2, 3, 1))),
     r"conv3d: input has 2 channels but filters"),
    (lambda: em.nn_ops.conv3d(em.ones((1, 3, 3, 3)), em.ones((2, 2, 2, 3, 1))),
     r"conv3d: expected input \(N, D, H, W, C\)"),
    (lambda: em.nn_ops.conv3d(em.ones((1, 3, 3, 3, 1)), em.ones((2, 2, 2, 1, 1)),
                              [2, 1, 1, 1, 1]), r"conv3d: strides .* batch or channel"),
    (lambda: em.nn_ops.conv3d(em.ones((1, 3, 3, 3, 1)), em.ones((2, 2, 2, 1, 1)), (1, 1)),
     r"conv3d: strides must be"),
    (lambda: em.nn_ops.conv3d(em.ones((1, 3, 3, 3, 1)), em.ones((4, 2, 2, 1, 1))),
     r"conv3d: filters .* larger than the padded input"),
    (lambda: em.nn_ops.conv3d(em.ones((1, 3, 3, 3, 1)), em.ones((2, 2, 2, 1, 1)),
                              padding="FULL"), r"conv3d: padding must be"),
    (lambda: em.nn_ops.conv3d(em.ones((1, 3, 3, 3, 1)), em.ones((2, 2, 2, 1, 1)),
                              data_format="NHWC"), r"conv3d: data_format"),
    (lambda: em.nn_ops.max_pool3d(em.ones((1, 3, 3, 1)), 2), r"max_pool3d: expected NDHWC"),
    (lambda: em.nn_ops.avg_pool3d(em.ones((1, 1, 3, 3, 1)), 2),
     r"avg_pool3d: window \(2, 2, 2\) is larger"),
    (lambda: em.nn_ops.conv3d_transpose(em.ones((1, 2, 2, 2, 3)), em.ones((2, 2, 2, 4, 3)),
                                        (1, 7, 7, 7, 4), 2, "VALID"),
     r"conv3d_transpose: output_shape .* spatial size"),
])
def test_core_op_errors_name_the_op(call, match):
    with pytest.raises(em.InvalidArgumentError, match=match):
        call()


def test_max_pool3d_gradient_goes_to_the_first_maximum():
    """Ties: the first maximum in (depth, height, width) order takes the gradient, as
    TensorFlow's MaxPool3DGrad and PyTorch's max_pool3d."""
    x = em.constant(np.ones((1, 2, 2, 2, 1), np.float32))
    with tape.GradientTape() as t:
        t.watch(x)
        y = em.nn_ops.max_pool3d(x, 2)
    g = t.gradient(y, x).numpy().ravel()
    assert g.tolist() == [1.0] + [0.0] * 7


# --- keras.ops on volumes: the same ops as the layers --------------------------------------
def test_nn_ops_conv_and_pools_take_volumes():
    x = em.constant(arr((2, 3, 4, 5, 2), 1))
    k = em.constant(arr((2, 2, 2, 2, 3), 2))
    assert_allclose(nn.ops.conv(x, k, padding="same").numpy(),
                    em.nn_ops.conv3d(x, k, padding="SAME").numpy())
    first = nn.ops.conv(em.transpose(x, (0, 4, 1, 2, 3)), k, strides=(1, 2, 1),
                        data_format="channels_first")
    assert_allclose(em.transpose(first, (0, 2, 3, 4, 1)).numpy(),
                    em.nn_ops.conv3d(x, k, strides=(1, 2, 1)).numpy(), rtol=1e-6, atol=1e-6)
    assert_allclose(nn.ops.max_pool(x, 2, padding="same").numpy(),
                    L.MaxPooling3D(padding="same")(x).numpy())
    assert_allclose(nn.ops.average_pool(x, (1, 2, 2), 1).numpy(),
                    L.AveragePooling3D((1, 2, 2), 1)(x).numpy())
    grouped = nn.ops.conv(x, em.constant(arr((1, 1, 1, 1, 4), 3)))  # two groups
    assert grouped.shape == (2, 3, 4, 5, 4)
