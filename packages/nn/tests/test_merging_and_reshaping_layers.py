"""Keras's merging layers (Add ... Dot, and add ... dot) and image reshaping layers
(ZeroPadding2D, Cropping2D, UpSampling2D): values against numpy, gradients against finite
differences, in functional models, their configs, and their errors."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember import nn, tape

L = nn.layers
rng = np.random.default_rng(0)


def _arrays(*shapes):
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def _f64(*shapes):
    return [rng.standard_normal(s) for s in shapes]


ELEMENTWISE = [
    (L.Add, lambda a, b, c: a + b + c),
    (L.Multiply, lambda a, b, c: a * b * c),
    (L.Average, lambda a, b, c: (a + b + c) / 3),
    (L.Maximum, lambda a, b, c: np.maximum(np.maximum(a, b), c)),
    (L.Minimum, lambda a, b, c: np.minimum(np.minimum(a, b), c)),
]


@pytest.mark.parametrize(("cls", "ref"), ELEMENTWISE, ids=lambda v: getattr(v, "__name__", ""))
def test_elementwise_merges_match_numpy_and_broadcast_ones_as_keras(cls, ref):
    a, b, c = _arrays((4, 3), (4, 3), (1, 3))
    assert_allclose(cls()([a, b, c]).numpy(), ref(a, b, c), rtol=1e-5, atol=1e-6)
    fn = getattr(L, cls.__name__.lower())
    assert_allclose(fn([a, b, c]).numpy(), ref(a, b, c), rtol=1e-5, atol=1e-6)


def test_subtract_takes_exactly_two():
    a, b = _arrays((2, 3), (2, 3))
    assert_allclose(L.subtract([a, b]).numpy(), a - b)
    with pytest.raises(ValueError, match=r"Subtract \('.*'\): expects 2 inputs, got 3"):
        L.Subtract()([a, b, a])


def test_concatenate_and_dot_match_numpy():
    a, b = _arrays((2, 3, 4), (2, 3, 1))
    assert_allclose(L.Concatenate()([a, b]).numpy(), np.concatenate([a, b], -1))
    assert_allclose(L.concatenate([a, a], axis=1).numpy(), np.concatenate([a, a], 1))
    x, y = _arrays((5, 4), (5, 4))
    assert_allclose(L.Dot(axes=1)([x, y]).numpy(), (x * y).sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
    cos = (x * y).sum(1) / np.linalg.norm(x, axis=1) / np.linalg.norm(y, axis=1)
    assert_allclose(L.dot([x, y], axes=1, normalize=True).numpy()[:, 0], cos, rtol=1e-5, atol=1e-6)
    p, q, r = _arrays((2, 3, 4), (2, 5, 4), (2, 3, 6))
    assert_allclose(L.Dot(axes=(2, 2))([p, q]).numpy(), np.einsum("nab,ncb->nac", p, q),
                    rtol=1e-5, atol=1e-6)  # Keras's batch_dot: attention scores
    assert_allclose(L.Dot(axes=(1, 1))([p, r]).numpy(), np.einsum("nab,nac->nbc", p, r),
                    rtol=1e-5, atol=1e-6)
    assert_allclose(L.Dot(axes=(-1, 2))([p, q]).numpy(), np.einsum("nab,ncb->nac", p, q),
                    rtol=1e-5, atol=1e-6)


F64 = {"dtype": "float64"}  # layers cast their inputs to their dtype, float32 by default


@pytest.mark.parametrize("layer", [
    L.Add(**F64), L.Subtract(**F64), L.Multiply(**F64), L.Average(**F64), L.Maximum(**F64),
    L.Minimum(**F64), L.Concatenate(axis=1, **F64), L.Dot(axes=1, **F64),
    L.Dot(axes=1, normalize=True, **F64),
], ids=lambda layer: type(layer).__name__ + ("-normalized" if getattr(layer, "normalize", 0)
                                             else ""))
def test_merge_gradients_match_finite_differences_to_second_order(layer):
    a, b = _f64((3, 4), (3, 4))
    b = b + np.sign(b - a) * 0.5  # Maximum/Minimum: no ties near the check's steps
    tape.check_gradients(lambda x, y: layer([x, y]), [a, b], order=2, eps=1e-6,
                         rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("layer", [
    L.ZeroPadding2D(((1, 0), (2, 1)), **F64), L.Cropping2D(((1, 0), (0, 2)), **F64),
    L.UpSampling2D((2, 3), **F64),
], ids=lambda layer: type(layer).__name__)
def test_reshaping_gradients_match_finite_differences_to_second_order(layer):
    (x,) = _f64((2, 3, 4, 2))
    tape.check_gradients(lambda v: em.square(layer(v)), [x], order=2, eps=1e-6, rtol=1e-4,
                         atol=1e-6)


def test_reshaping_layers_match_numpy_in_both_data_formats():
    (x,) = _arrays((2, 3, 4, 2))
    xc = x.transpose(0, 3, 1, 2)
    assert_allclose(L.ZeroPadding2D(1)(x).numpy(), np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0))))
    assert_allclose(L.ZeroPadding2D((1, 2), data_format="channels_first")(xc).numpy(),
                    np.pad(xc, ((0, 0), (0, 0), (1, 1), (2, 2))))
    assert_allclose(L.Cropping2D(((1, 0), (1, 2)))(x).numpy(), x[:, 1:, 1:2])
    assert_allclose(L.Cropping2D(1, data_format="channels_first")(xc).numpy(),
                    xc[:, :, 1:2, 1:3])
    assert_allclose(L.UpSampling2D((2, 3))(x).numpy(), x.repeat(2, 1).repeat(3, 2))
    assert_allclose(L.UpSampling2D(2, data_format="channels_first")(xc).numpy(),
                    xc.repeat(2, 2).repeat(2, 3))


def test_a_functional_residual_model_trains_with_add_and_concatenate():
    # keras-io's functional API guide, "a toy ResNet model", at MNIST's scale
    inputs = nn.Input(shape=(8, 8, 1))
    x = L.Conv2D(8, 3, activation="relu", padding="same")(inputs)
    block = L.Conv2D(8, 3, activation="relu", padding="same")(x)
    x = L.add([block, x])
    x = L.ZeroPadding2D(1)(x)
    x = L.Cropping2D(1)(x)
    up = L.UpSampling2D(2)(L.MaxPooling2D()(x))
    x = L.concatenate([x, up])
    outputs = L.Dense(3)(L.GlobalAveragePooling2D()(x))
    model = nn.Model(inputs, outputs)
    assert [type(layer).__name__ for layer in model.layers].count("Add") == 1
    data = rng.standard_normal((32, 8, 8, 1)).astype(np.float32)
    labels = (data.mean(axis=(1, 2, 3)) > 0).astype(np.int64)
    model.compile(optimizer=nn.optimizers.Adam(0.01),
                  loss=nn.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(data, labels, batch_size=8, epochs=5, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < losses[0]
    assert model(data).shape == (32, 3)


def test_configs_round_trip():
    for layer in (L.Concatenate(axis=1), L.Dot(axes=(1, 2), normalize=True),
                  L.ZeroPadding2D(((1, 0), (2, 1))), L.Cropping2D(2),
                  L.UpSampling2D((2, 3), data_format="channels_first")):
        again = type(layer).from_config(layer.get_config())
        assert again.get_config() == layer.get_config()


def test_bad_inputs_are_errors_by_name():
    a, b = _arrays((2, 3), (2, 4))
    with pytest.raises(ValueError, match=r"Add \('.*'\): expects a list of inputs"):
        L.Add()(a)
    with pytest.raises(ValueError, match=r"Add \('.*'\): expects at least 2 inputs, got 1"):
        L.Add()([a])
    with pytest.raises(ValueError, match=r"differ on axis 1"):
        L.Add()([a, b])
    # (N,) against (N, 1) would broadcast to (N, N): refused, not invented
    with pytest.raises(ValueError, match=r"inputs of different ranks \[\(2,\), \(2, 1\)\]"):
        L.Multiply()([np.ones(2), np.ones((2, 1))])
    with pytest.raises(ValueError, match=r"Concatenate \('.*'\): input shapes .* differ on "
                                         r"axis 0"):
        L.Concatenate()([a, np.ones((3, 1))])
    with pytest.raises(ValueError, match=r"Concatenate \('.*'\): axis 2 does not fit"):
        L.Concatenate(axis=2)([a, a])
    with pytest.raises(ValueError, match=r"Dot \('.*'\): axes \(1, 1\) do not fit"):
        L.Dot(axes=1)([a, b])
    with pytest.raises(TypeError, match="Dot: axes must be an int or a pair"):
        L.Dot(axes="last")
    with pytest.raises(ValueError, match="UpSampling2D: interpolation must be one of .* "
                                         "got interpolation='area'"):
        L.UpSampling2D(interpolation="area")
    with pytest.raises(ValueError, match="ZeroPadding2D: padding must be a non-negative"):
        L.ZeroPadding2D((1, -1))
    with pytest.raises(ValueError, match=r"Cropping2D \('.*'\): cropping .* leaves nothing"):
        L.Cropping2D(2)(np.ones((1, 4, 4, 1)))
