"""Keras-style losses: per-example functions, Loss classes with reductions, and what a
string in compile() means (Keras: probabilities unless from_logits=True)."""

import numpy as np
import pytest

import ember.core as em
from ember import nn

L = nn.losses
RNG = np.random.default_rng(0)
LOGITS = RNG.standard_normal((6, 4)).astype(np.float32)
PROBS = np.exp(LOGITS) / np.exp(LOGITS).sum(-1, keepdims=True)
LABELS = np.array([0, 3, 1, 2, 2, 0])
ONEHOT = np.eye(4, dtype=np.float32)[LABELS]
SW = np.array([1.0, 0.0, 2.0, 0.5, 1.0, 3.0], np.float32)


def _ce(labels_onehot, probs):
    return -(labels_onehot * np.log(probs)).sum(-1)


def test_sparse_and_categorical_functions_per_example():
    want = _ce(ONEHOT, PROBS)
    np.testing.assert_allclose(L.sparse_categorical_crossentropy(LABELS, PROBS).numpy(), want,
                               rtol=1e-5)
    np.testing.assert_allclose(
        L.sparse_categorical_crossentropy(LABELS, LOGITS, from_logits=True).numpy(), want,
        rtol=1e-5)
    np.testing.assert_allclose(L.categorical_crossentropy(ONEHOT, PROBS).numpy(), want,
                               rtol=1e-5)
    np.testing.assert_allclose(
        L.categorical_crossentropy(ONEHOT, LOGITS, from_logits=True).numpy(), want, rtol=1e-5)
    smooth = ONEHOT * 0.8 + 0.2 / 4
    np.testing.assert_allclose(
        L.categorical_crossentropy(ONEHOT, PROBS, label_smoothing=0.2).numpy(),
        _ce(smooth, PROBS), rtol=1e-5)


def test_binary_crossentropy_probabilities_and_logits():
    y = (RNG.random((6, 3)) > 0.5).astype(np.float32)
    x = RNG.standard_normal((6, 3)).astype(np.float32)
    p = 1 / (1 + np.exp(-x))
    want = -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean(-1)
    np.testing.assert_allclose(L.binary_crossentropy(y, p).numpy(), want, rtol=1e-5)
    np.testing.assert_allclose(L.binary_crossentropy(y, x, from_logits=True).numpy(), want,
                               rtol=1e-5)


def test_logits_given_as_probabilities_is_an_error_naming_from_logits():
    with pytest.raises(ValueError, match="from_logits"):
        L.SparseCategoricalCrossentropy()(LABELS, LOGITS)
    with pytest.raises(ValueError, match="from_logits"):
        L.get("binary_crossentropy")(np.ones((2, 1)), np.array([[2.0], [-1.0]]))


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "auto", "sum", "none"])
def test_loss_class_reductions_with_sample_weight(reduction):
    per = _ce(ONEHOT, PROBS) * SW
    want = {"sum_over_batch_size": per.sum() / 6, "auto": per.sum() / 6, "sum": per.sum(),
            "none": per}[reduction]
    got = L.CategoricalCrossentropy(reduction=reduction)(ONEHOT, PROBS, sample_weight=SW)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
    with pytest.raises(ValueError, match="reduction"):
        L.MeanSquaredError(reduction="mean_of_squares")


def test_regression_classes():
    a = RNG.standard_normal((5, 3)).astype(np.float32)
    b = RNG.standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(float(L.MeanSquaredError()(a, b)), ((a - b) ** 2).mean(),
                               rtol=1e-5)
    np.testing.assert_allclose(float(L.MeanAbsoluteError()(a, b)), np.abs(a - b).mean(),
                               rtol=1e-5)
    e = np.abs(a - b)
    hub = np.where(e <= 0.5, 0.5 * e ** 2, 0.5 * (e - 0.25)).mean()
    np.testing.assert_allclose(float(L.Huber(delta=0.5)(a, b)), hub, rtol=1e-5)


def test_compile_strings_mean_what_keras_means():
    assert isinstance(L.get("sparse_categorical_crossentropy"), L.SparseCategoricalCrossentropy)
    assert not L.get("sparse_categorical_crossentropy").from_logits
    assert isinstance(L.get("mse"), L.MeanSquaredError)


def test_fit_uses_keras_sample_weighting():
    x = RNG.standard_normal((6, 4)).astype(np.float32)
    model = nn.Sequential([nn.layers.Dense(4, activation="softmax", input_shape=(4,))])
    model.compile(nn.optimizers.SGD(0.0), "sparse_categorical_crossentropy")
    logs = model.train_step(x, LABELS, SW)
    probs = model(em.constant(x)).numpy()
    np.testing.assert_allclose(logs["loss"], (_ce(ONEHOT, probs) * SW).sum() / 6, rtol=1e-5)
    # a per-example function passed to compile is weighted the same way
    model.compile(nn.optimizers.SGD(0.0), L.sparse_categorical_crossentropy)
    np.testing.assert_allclose(model.train_step(x, LABELS, SW)["loss"],
                               (_ce(ONEHOT, probs) * SW).sum() / 6, rtol=1e-5)


def test_scalar_loss_without_weights_refuses_sample_weight():
    model = nn.Sequential([nn.layers.Dense(1, input_shape=(4,))])
    model.compile("sgd", lambda y, p: em.reduce_mean(em.square(p - y)))
    with pytest.raises(TypeError, match="sample_weight"):
        model.train_step(np.ones((2, 4), np.float32), np.ones((2, 1), np.float32),
                         np.ones(2, np.float32))


@pytest.mark.parametrize("fn", [L.binary_crossentropy, L.BinaryCrossentropy(),
                                L.MeanSquaredError(), L.MeanAbsoluteError(), L.Huber(),
                                L.mean_squared_error, L.sigmoid_cross_entropy,
                                L.absolute_difference, L.huber_loss])
def test_labels_of_shape_n_against_predictions_n_1_do_not_broadcast(fn):
    y = np.array([1.0, 0.0, 1.0, 0.0], np.float32)
    p = np.array([[0.9], [0.2], [0.6], [0.4]], np.float32)
    got = np.asarray(fn(y, p).numpy())
    want = np.asarray(fn(y[:, None], p).numpy())
    np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(ValueError, match="shape"):
        fn(np.ones((4, 2), np.float32), np.ones((4, 3), np.float32) * 0.5)


def test_fit_learns_a_sigmoid_classifier_with_flat_labels():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((128, 3)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.float32)          # (N,), as Keras programs pass them
    model = nn.Sequential([nn.layers.Dense(1, activation="sigmoid", input_shape=(3,))])
    model.compile(nn.optimizers.Adam(0.1), "binary_crossentropy", metrics=["accuracy"])
    hist = model.fit(x, y, batch_size=32, epochs=10, verbose=0)
    assert hist.history["accuracy"][-1] > 0.9


def test_kl_divergence_function_class_and_compile_string():
    q = np.exp(LOGITS[::-1]) / np.exp(LOGITS[::-1]).sum(-1, keepdims=True)
    p = PROBS.copy()
    p[0] = [1.0, 0.0, 0.0, 0.0]  # a zero in y_true: Keras clips it to epsilon, no NaN
    pc, qc = np.clip(p, 1e-7, 1), np.clip(q, 1e-7, 1)
    want = (pc * np.log(pc / qc)).sum(-1)
    np.testing.assert_allclose(L.kl_divergence(p, q).numpy(), want, rtol=1e-5)
    np.testing.assert_allclose(L.KLDivergence()(p, q, sample_weight=SW).numpy(),
                               (want * SW).sum() / 6, rtol=1e-5)
    np.testing.assert_allclose(L.get("kl_divergence")(p, q).numpy(), want.mean(), rtol=1e-5)
    assert L.get("kld").name == "kl_divergence"
    np.testing.assert_allclose(L.kl_divergence(p, p).numpy(), 0.0, atol=1e-6)
    with pytest.raises(ValueError, match="kl_divergence"):
        L.KLDivergence()(p, LOGITS)  # logits are not a distribution
    with pytest.raises(ValueError, match="kl_divergence"):
        L.kl_divergence(p, q[:, :3])
