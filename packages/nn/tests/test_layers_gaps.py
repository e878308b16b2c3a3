"""Three arguments of Keras 3's layers that ember once refused: ``groups`` of Conv1D,
Conv2D and Conv3D (grouped convolutions: core's ``em.nn_ops.conv1d/2d/3d`` group when the
kernel has fewer input channels than the input), ``interpolation`` of UpSampling2D
(``em.image.resize``, as the Resizing layer) and ``rms_scaling`` of LayerNormalization.

``data/keras_layers_gaps.json`` holds Keras 3.15.1's outputs (torch backend, CPU), weight
names and shapes, configs and input gradients for the cases of
``keras_layers_gaps_reference.py`` (which wrote it, in Keras's interpreter); the inputs and
weights are that script's sines.
"""

from __future__ import annotations

import json
import pathlib
import warnings

import numpy as np
import pytest
from keras_layers_gaps_reference import CASES, arr
from numpy.testing import assert_allclose

import ember.core as em
from ember import nn, tape

L = nn.layers
KERAS = json.loads((pathlib.Path(__file__).parent / "data" /
                    "keras_layers_gaps.json").read_text())
# config entries compared with Keras's (initializers and the like are ember's own objects)
CONFIG_KEYS = ("filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate",
               "groups", "use_bias", "size", "interpolation", "axis", "epsilon", "center",
               "scale", "rms_scaling")


def _listed(v):
    return [_listed(i) for i in v] if isinstance(v, (list, tuple)) else v


def _built(cid):
    cls, kwargs, shape = CASES[cid]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rms_scaling's deprecation warning
        layer = getattr(L, cls)(**kwargs)
    layer.build(shape)
    layer.set_weights([arr(tuple(w.shape), 10 + i, 0.5) for i, w in enumerate(layer.weights)])
    return layer, em.constant(arr(shape, 1))


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
    # (ember's LayerNormalization config holds the arguments given; Keras's all of them)
    assert {"groups", "interpolation", "rms_scaling"} & set(CASES[cid][1]) <= set(config)
    for key in CONFIG_KEYS:
        if key in want["config"] and key in config:
            assert _listed(config[key]) == want["config"][key], key


@pytest.mark.parametrize("cid", list(CASES))
def test_input_gradient_matches_keras(cid):
    layer, x = _built(cid)
    with tape.GradientTape() as t:
        t.watch(x)
        y = layer(x)
        loss = em.reduce_sum(y * em.constant(arr(tuple(y.shape), 3)))
    g = t.gradient(loss, x)
    assert_allclose(g.numpy(), np.array(KERAS["cases"][cid]["input_gradient"], np.float32),
                    rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("cid", list(CASES))
def test_config_round_trip(cid):
    layer, x = _built(cid)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = type(layer).from_config(layer.get_config())
    again.build(x.shape)
    again.set_weights(layer.get_weights())
    assert_allclose(again(x).numpy(), layer(x).numpy(), rtol=0, atol=0)
    for key in CONFIG_KEYS:
        if key in layer.get_config():
            assert again.get_config()[key] == layer.get_config()[key], key


# --- groups ---------------------------------------------------------------------------------
def test_grouped_conv2d_is_each_group_convolved_alone():
    """Group g of the input channels with output channels g * F / G ... of the kernel."""
    x = em.constant(arr((2, 6, 7, 6), 4))
    layer = L.Conv2D(4, 3, groups=2, padding="same", use_bias=False)
    y = layer(x).numpy()
    k = layer.kernel.numpy()
    assert k.shape == (3, 3, 3, 4)
    for g in range(2):
        part = em.nn_ops.conv2d(x[..., 3 * g:3 * g + 3], k[..., 2 * g:2 * g + 2], 1, "SAME")
        assert_allclose(y[..., 2 * g:2 * g + 2], part.numpy(), rtol=1e-6, atol=1e-6)


def test_grouped_conv_trains_its_kernel_and_bias():
    layer = L.Conv2D(4, 2, groups=4, activation="tanh")  # one channel per group: depthwise
    x = em.constant(arr((2, 4, 4, 4), 2))
    with tape.GradientTape() as t:
        loss = em.reduce_sum(layer(x) ** 2)
    gk, gb = t.gradient(loss, [layer.kernel, layer.bias])
    assert gk.shape == (2, 2, 1, 4) and gb.shape == (4,)
    assert np.all(np.isfinite(gk.numpy())) and np.abs(gk.numpy()).sum() > 0


def test_grouped_conv_layers_to_second_order():
    """The grouped layer's input gradient of a gradient, against finite differences."""
    layer = L.Conv1D(4, 2, groups=2, dtype="float64")
    x0 = arr((1, 5, 2), 5).astype(np.float64)
    layer.build(x0.shape)

    def grad_norm(v):
        x = em.constant(v)
        with tape.GradientTape() as t:
            t.watch(x)
            s = em.reduce_sum(em.tanh(layer(x)))
        return t.gradient(s, x)

    x = em.constant(x0)
    with tape.GradientTape() as outer:
        outer.watch(x)
        with tape.GradientTape() as inner:
            inner.watch(x)
            s = em.reduce_sum(em.tanh(layer(x)))
        g = inner.gradient(s, x)
        q = em.reduce_sum(g * g)
    second = outer.gradient(q, x).numpy()
    eps, num = 1e-6, np.zeros_like(x0)
    for i in np.ndindex(x0.shape):
        d = np.zeros_like(x0)
        d[i] = eps
        gp, gm = grad_norm(x0 + d).numpy(), grad_norm(x0 - d).numpy()
        num[i] = ((gp * gp).sum() - (gm * gm).sum()) / (2 * eps)
    assert_allclose(second, num, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("make, shape, match", [
    (lambda: L.Conv2D(5, 3, groups=2), None, r"Conv2D: filters must be divisible by groups, "
                                             r"got filters=5, groups=2"),
    (lambda: L.Conv1D(4, 3, groups=0), None, "Conv1D: groups must be a positive int"),
    (lambda: L.Conv3D(4, 3, groups=True), None, "Conv3D: groups must be a positive int"),
    (lambda: L.Conv2D(4, 1, groups=4), (1, 3, 3, 6),
     r"Conv2D\): the input's 6 channels \(shape \(1, 3, 3, 6\)\) must be divisible by "
     r"groups=4"),
    (lambda: L.Conv1D(4, 1, groups=2, data_format="channels_first"), (1, 3, 5),
     r"Conv1D\): the input's 3 channels \(shape \(1, 3, 5\)\)"),
])
def test_groups_errors_name_the_layer_argument_and_shapes(make, shape, match):
    with pytest.raises(ValueError, match=match):
        layer = make()
        layer(em.ones(shape))


def test_core_conv_errors_name_the_op_and_shapes():
    with pytest.raises(em.InvalidArgumentError, match=r"conv2d: input has 6 channels but filters "
                                                      r"\(1, 1, 4, 2\) expect 4 \(input shape "
                                                      r"\(1, 4, 4, 6\)\)"):
        em.nn_ops.conv2d(em.ones((1, 4, 4, 6)), em.ones((1, 1, 4, 2)))
    with pytest.raises(em.InvalidArgumentError, match=r"conv3d: .* make 2 groups of 2 "
                                                      r"channels, but the filters' 3 output"):
        em.nn_ops.conv3d(em.ones((1, 2, 2, 2, 4)), em.ones((1, 1, 1, 2, 3)))
    with pytest.raises(em.InvalidArgumentError, match=r"conv1d: .*input shape \(1, 5, 3\)"):
        em.nn_ops.conv1d(em.ones((1, 5, 3)), em.ones((1, 2, 2)))


def test_transposed_convolutions_refuse_groups_by_name():
    """Keras 3's transposed convolutions take no groups; their configs hold none."""
    for cls in (L.Conv1DTranspose, L.Conv2DTranspose, L.Conv3DTranspose):
        with pytest.raises(TypeError, match="groups"):
            cls(2, 3, groups=2)
        assert "groups" not in cls(2, 3).get_config()
    assert L.Conv2D(2, 3).get_config()["groups"] == 1


# --- UpSampling2D interpolation ---------------------------------------------------------------
@pytest.mark.parametrize("method", ["bicubic", "lanczos3", "lanczos5", "BILINEAR"])
def test_upsampling2d_resizes_as_em_image_resize(method):
    """Keras's TensorFlow and JAX backends' kernels (its torch backend's bicubic is
    PyTorch's a = -0.75 cubic, and it refuses the Lanczos kernels)."""
    x = arr((2, 3, 4, 2), 6)
    layer = L.UpSampling2D((2, 3), interpolation=method)
    assert layer.interpolation == method.lower()
    want = em.image.resize(x, (6, 12), method=method.lower()).numpy()
    assert_allclose(layer(x).numpy(), want, rtol=1e-6, atol=1e-6)
    first = L.UpSampling2D((2, 3), data_format="channels_first", interpolation=method)
    assert_allclose(first(x.transpose(0, 3, 1, 2)).numpy(), want.transpose(0, 3, 1, 2),
                    rtol=1e-6, atol=1e-6)


def test_upsampling2d_refuses_other_interpolations_by_name():
    for bad in ("area", "trilinear", 3):
        with pytest.raises(ValueError, match=r"UpSampling2D: interpolation must be one of "
                                             r"'nearest', 'bilinear'"):
            L.UpSampling2D(interpolation=bad)


# --- LayerNormalization rms_scaling -------------------------------------------------------
def test_rms_scaling_is_keras_formula_and_warns():
    x = arr((3, 5), 7) * 2 + 0.5
    with pytest.warns(UserWarning, match="rms_scaling=True.*deprecates"):
        layer = L.LayerNormalization(rms_scaling=True, epsilon=0.1)
    y = layer(x).numpy()
    want = x / np.sqrt(x.var(axis=-1, keepdims=True) + 0.1)  # the mean not subtracted
    assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    assert layer.beta is None and layer.gamma is not None
    assert [v.name.split("/")[-1].split(":")[0] for v in layer.trainable_variables] == ["gamma"]


def test_rms_scaling_gradient_reaches_gamma():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer = L.LayerNormalization(rms_scaling=True, scale=False)
    x = em.constant(arr((2, 4), 3))
    with tape.GradientTape() as t:
        y = layer(x)
        loss = em.reduce_sum(y * em.constant(arr((2, 4), 9)))
    (gg,) = t.gradient(loss, [layer.gamma])
    xn = x.numpy() / np.sqrt(x.numpy().var(-1, keepdims=True) + 1e-3)
    assert_allclose(gg.numpy(), (xn * arr((2, 4), 9)).sum(0), rtol=1e-5, atol=1e-6)


def test_rms_scaling_false_does_not_warn():
    """Only rms_scaling=True warns (Keras's deprecation); the plain layer normalizes."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        x = np.array([[1.0, 2.0, 3.0]], np.float32)
        out = L.LayerNormalization()(x).numpy()
        config = L.LayerNormalization(rms_scaling=False).get_config()
    assert [str(w.message) for w in seen] == []
    np.testing.assert_allclose(out, (x - 2.0) / np.sqrt(2.0 / 3.0 + 1e-3), rtol=1e-5)
    assert config.get("rms_scaling", False) is False
