"""DepthwiseConv2D and SeparableConv2D against a loop over output positions in numpy, their
weights as Keras 3 names, shapes and files them, their configs, and their refusals. The
ops under them are in core's op table (against numpy, finite differences and PyTorch's
grouped conv2d); the contract every layer passes is test_layer_contract.py's."""

import io
import json

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import ember.core as em
from ember import nn

L = nn.layers
RNG = np.random.default_rng(3)


def _depthwise_ref(x, k, strides, dilation, padding):
    """NHWC ``x``, ``k`` (KH, KW, C, M): output channel c * M + m, by loops."""
    n, h, w, c = x.shape
    kh, kw, _, m = k.shape
    (sh, sw), (dh, dw) = strides, dilation
    ekh, ekw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    if padding == "same":
        oh, ow = -(-h // sh), -(-w // sw)
        ph, pw = max((oh - 1) * sh + ekh - h, 0), max((ow - 1) * sw + ekw - w, 0)
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    else:
        oh, ow = (h - ekh) // sh + 1, (w - ekw) // sw + 1
    y = np.zeros((n, oh, ow, c, m))
    for i in range(oh):
        for j in range(ow):
            win = x[:, i * sh: i * sh + ekh: dh, j * sw: j * sw + ekw: dw, :]
            y[:, i, j] = np.einsum("nabc,abcm->ncm", win, k)
    return y.reshape(n, oh, ow, c * m)


def _close(got, want):
    """float32 against a float64 reference: float32's rounding (a GPU's included, whose
    BACKEND_TOL for float32 is this)."""
    assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kw", [
    dict(kernel_size=3, depth_multiplier=2, padding="same"),
    dict(kernel_size=(2, 3), strides=(2, 1), dilation_rate=(1, 2)),
    dict(kernel_size=2, strides=2, dilation_rate=2, padding="same", depth_multiplier=3),
])
def test_depthwise_matches_the_loop(kw):
    x = RNG.standard_normal((2, 7, 8, 3)).astype(np.float32)
    layer = L.DepthwiseConv2D(**kw, activation="tanh", bias_initializer="ones")
    y = layer(em.constant(x))
    k = layer.kernel.numpy()
    assert k.shape == layer.kernel_size + (3, layer.depth_multiplier)
    want = np.tanh(_depthwise_ref(x, k, layer.strides, layer.dilation_rate,
                                  kw.get("padding", "valid")) + 1.0)
    _close(y, want)


def test_separable_is_depthwise_then_pointwise_then_bias():
    x = RNG.standard_normal((2, 6, 6, 3)).astype(np.float32)
    layer = L.SeparableConv2D(5, 3, strides=2, padding="same", depth_multiplier=2,
                              activation="relu", bias_initializer="random_normal")
    y = layer(em.constant(x))
    dk, pk, b = (v.numpy() for v in (layer.depthwise_kernel, layer.pointwise_kernel,
                                      layer.bias))
    assert (dk.shape, pk.shape, b.shape) == ((3, 3, 3, 2), (1, 1, 6, 5), (5,))
    d = _depthwise_ref(x, dk, (2, 2), (1, 1), "same")
    _close(y, np.maximum(d @ pk[0, 0] + b, 0.0))


def test_channels_first_transposes_around_the_same_computation():
    x = RNG.standard_normal((2, 6, 5, 4)).astype(np.float32)
    for cls, args in ((L.DepthwiseConv2D, (3,)), (L.SeparableConv2D, (3, 3))):
        last = cls(*args, depth_multiplier=2, padding="same")
        first = cls(*args, depth_multiplier=2, padding="same", data_format="channels_first")
        y_last = last(em.constant(x))
        first(em.constant(x.transpose(0, 3, 1, 2)))
        for a, b in zip(first.weights, last.weights):
            a.assign(b.numpy())
        y_first = first(em.constant(x.transpose(0, 3, 1, 2)))
        assert_allclose(y_first.numpy().transpose(0, 2, 3, 1), y_last.numpy(),
                        rtol=1e-6, atol=1e-6)


def test_weights_file_holds_keras_paths_shapes_and_order(tmp_path):
    h5py = pytest.importorskip("h5py")  # (the GPU machine has none)
    model = nn.Sequential([nn.Input((6, 6, 3)), L.DepthwiseConv2D(3, depth_multiplier=2),
                           L.SeparableConv2D(4, 2, use_bias=True),
                           L.SeparableConv2D(2, 2, use_bias=False)])
    model.save_weights(tmp_path / "m.weights.h5")
    shapes = {}
    with h5py.File(io.BytesIO((tmp_path / "m.weights.h5").read_bytes()), "r") as f:
        f.visititems(lambda n, o: shapes.__setitem__(n, o.shape)
                     if isinstance(o, h5py.Dataset) else None)
    assert shapes == {
        "layers/depthwise_conv2d/vars/0": (3, 3, 3, 2),
        "layers/depthwise_conv2d/vars/1": (6,),
        "layers/separable_conv2d/vars/0": (2, 2, 6, 1),
        "layers/separable_conv2d/vars/1": (1, 1, 6, 4),
        "layers/separable_conv2d/vars/2": (4,),
        "layers/separable_conv2d_1/vars/0": (2, 2, 4, 1),
        "layers/separable_conv2d_1/vars/1": (1, 1, 4, 2),
    }
    assert [w.name.split("/")[1] for w in model.weights] == [
        "kernel:0", "bias:0", "depthwise_kernel:0", "pointwise_kernel:0", "bias:0",
        "depthwise_kernel:0", "pointwise_kernel:0"]
    again = nn.Sequential([nn.Input((6, 6, 3)), L.DepthwiseConv2D(3, depth_multiplier=2),
                           L.SeparableConv2D(4, 2), L.SeparableConv2D(2, 2, use_bias=False)])
    again.load_weights(tmp_path / "m.weights.h5")
    x = RNG.standard_normal((2, 6, 6, 3)).astype(np.float32)
    assert_array_equal(again.predict(x, verbose=0), model.predict(x, verbose=0))


def test_config_round_trips_through_json_with_keras_names():
    layer = L.SeparableConv2D(4, (3, 2), strides=2, padding="SAME", dilation_rate=1,
                              depth_multiplier=3, activation="relu",
                              pointwise_initializer="ones", depthwise_regularizer="l2",
                              pointwise_constraint="non_neg")
    config = json.loads(json.dumps(layer.get_config()))
    assert {k: config[k] for k in ("filters", "kernel_size", "strides", "padding",
                                   "depth_multiplier", "data_format", "dilation_rate")} == {
        "filters": 4, "kernel_size": [3, 2], "strides": [2, 2], "padding": "same",
        "depth_multiplier": 3, "data_format": "channels_last", "dilation_rate": [1, 1]}
    again = L.SeparableConv2D.from_config(config)
    x = RNG.standard_normal((1, 7, 7, 2)).astype(np.float32)
    layer(em.constant(x))
    again(em.constant(x))
    for a, b in zip(again.weights, layer.weights):
        assert a.shape == b.shape
        a.assign(b.numpy())
    assert_array_equal(again(em.constant(x)).numpy(), layer(em.constant(x)).numpy())
    assert len(again.losses) == 1  # the depthwise regularizer came back
    assert L.SeparableConvolution2D is L.SeparableConv2D


@pytest.mark.parametrize("make, match", [
    (lambda: L.DepthwiseConv2D(3, depth_multiplier=0), "depth_multiplier"),
    (lambda: L.SeparableConv2D(0, 3), "filters"),
    (lambda: L.SeparableConv2D(2, 0), "kernel_size"),
    (lambda: L.DepthwiseConv2D(3, strides=0), "strides"),
    (lambda: L.DepthwiseConv2D(3, padding="causal"), "padding"),
    (lambda: L.SeparableConv2D(2, 3, data_format="NCHW"), "data_format"),
    (lambda: L.DepthwiseConv2D(3, groups=2), "groups"),
])
def test_bad_arguments_are_refused_by_name(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


def test_inputs_of_another_rank_or_channel_count_are_refused():
    layer = L.DepthwiseConv2D(2)
    with pytest.raises(ValueError, match="rank 4"):
        layer(em.ones((2, 5, 3)))
    layer(em.ones((1, 4, 4, 3)))
    with pytest.raises(ValueError, match="axis"):
        layer(em.ones((1, 4, 4, 2)))


def test_op_errors_name_the_op_and_the_shapes():
    with pytest.raises(em.InvalidArgumentError, match="depthwise_conv2d: input has 3 "
                                                      "channels"):
        em.nn_ops.depthwise_conv2d(em.ones((1, 4, 4, 3)), em.ones((2, 2, 2, 1)), 1, "VALID")
    with pytest.raises(em.InvalidArgumentError, match="separable_conv2d: .*pointwise"):
        em.nn_ops.separable_conv2d(em.ones((1, 4, 4, 3)), em.ones((2, 2, 3, 1)),
                                   em.ones((1, 1, 4, 2)), 1, "VALID")
    with pytest.raises(em.InvalidArgumentError, match="larger than the padded input"):
        em.nn_ops.depthwise_conv2d(em.ones((1, 2, 2, 1)), em.ones((3, 3, 1, 1)), 1, "VALID")
