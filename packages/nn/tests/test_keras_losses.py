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
    scce = L._for_compile("sparse_categorical_crossentropy")
    assert isinstance(scce, L.SparseCategoricalCrossentropy)
    assert not scce.from_logits
    assert isinstance(L._for_compile("mse"), L.MeanSquaredError)


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
    np.testing.assert_allclose(L._for_compile("kl_divergence")(p, q).numpy(), want.mean(),
                               rtol=1e-5)
    assert L._for_compile("kld").name == "kl_divergence"
    assert L.get("kld") is L.kl_divergence  # keras.losses.get: the function
    np.testing.assert_allclose(L.kl_divergence(p, p).numpy(), 0.0, atol=1e-6)
    with pytest.raises(ValueError, match="kl_divergence"):
        L.KLDivergence()(p, LOGITS)  # logits are not a distribution
    with pytest.raises(ValueError, match="kl_divergence"):
        L.kl_divergence(p, q[:, :3])


# --- Keras 3's loss dtype and reductions ---------------------------------------------------
LOSS_OBJECTS = [nn.losses.MeanSquaredError, nn.losses.MeanAbsoluteError, nn.losses.Huber,
                nn.losses.BinaryCrossentropy, nn.losses.CategoricalCrossentropy,
                nn.losses.KLDivergence]


@pytest.mark.parametrize("cls", LOSS_OBJECTS, ids=lambda c: c.__name__)
def test_a_loss_object_computes_in_float32_unless_given_a_dtype(cls):
    # Keras 3 converts y_true and y_pred to the loss's dtype (floatx): float64 arrays give
    # a float32 loss, not a float64 one nobody asked for
    rng = np.random.default_rng(0)
    y = rng.uniform(0.1, 0.9, (4, 3))
    p = rng.uniform(0.1, 0.9, (4, 3))
    loss = cls()
    assert loss.dtype == "float32"
    got = loss(y, p)
    assert got.dtype == em.float32
    wide = cls(dtype="float64")(y, p)
    assert wide.dtype == em.float64
    np.testing.assert_allclose(got.numpy(), wide.numpy(), rtol=1e-5)
    half = loss(em.constant(y, em.float16), em.constant(p, em.float16))
    assert half.dtype == em.float32  # mixed precision: the loss is float32
    assert cls.from_config(cls(dtype="float64").get_config()).dtype == "float64"
    with pytest.raises(ValueError, match="dtype must be a floating dtype"):
        cls(dtype="int32")


def test_sparse_labels_stay_integers_under_the_loss_dtype():
    loss = nn.losses.SparseCategoricalCrossentropy(from_logits=True)
    logits = np.array([[2.0, 0.0, -1.0], [0.0, 3.0, 0.0]])
    got = loss(np.array([0, 1]), logits)
    assert got.dtype == em.float32
    z = logits - logits.max(1, keepdims=True)
    want = -np.mean((z - np.log(np.exp(z).sum(1, keepdims=True)))[[0, 1], [0, 1]])
    np.testing.assert_allclose(float(got), want, rtol=1e-6)


def test_keras_3s_reductions():
    y, p = np.zeros((4, 2), np.float32), np.array([[1, 1], [2, 2], [3, 3], [4, 4]], np.float32)
    per = np.array([1.0, 4.0, 9.0, 16.0])
    w = np.array([1.0, 0.0, 2.0, 0.0], np.float32)
    mse = nn.losses.MeanSquaredError
    np.testing.assert_allclose(mse(reduction=None)(y, p).numpy(), per)
    np.testing.assert_allclose(float(mse(reduction="mean")(y, p)), per.mean())
    np.testing.assert_allclose(float(mse(reduction="mean")(y, p, w)), (per * w).sum() / 4)
    np.testing.assert_allclose(float(mse(reduction="mean_with_sample_weight")(y, p, w)),
                               (per * w).sum() / w.sum())
    np.testing.assert_allclose(float(mse(reduction="mean_with_sample_weight")(y, p)),
                               per.mean())
    assert float(mse(reduction="mean_with_sample_weight")(y, p, np.zeros(4))) == 0.0
    with pytest.raises(ValueError, match="unknown reduction 'average'"):
        mse(reduction="average")


def test_sample_weight_ranks_meet_as_keras_3s():
    """Keras 3's ``squeeze_or_expand_to_same_rank``: ``(B,)`` losses with ``(B, 1)`` weights
    are ``(B, 1)`` under ``reduction="none"`` (Keras 3.15.1's numbers); a ``(B, 1)`` loss
    of a custom function with ``(B,)`` weights is weighted per row, not broadcast to
    ``(B, B)``."""
    y, p = np.array([[1.0], [0.0]], np.float32), np.array([[0.8], [0.3]], np.float32)
    mse = nn.losses.MeanSquaredError
    col, flat = np.array([[1.0], [2.0]], np.float32), np.array([1.0, 2.0], np.float32)
    assert mse(reduction="none")(y, p, col).shape == (2, 1)
    np.testing.assert_allclose(mse(reduction="none")(y, p, col).numpy(), [[0.04], [0.18]],
                               rtol=1e-5)
    assert mse(reduction="none")(y, p, flat).shape == (2,)
    np.testing.assert_allclose(float(mse(reduction="mean_with_sample_weight")(y, p, col)),
                               0.22 / 3, rtol=1e-5)

    def per_row(t: object, q: object) -> object:  # a (B, 1) loss
        return em.square(em.subtract(q, t))
    from ember.nn.keras_losses import reduce_weighted
    got = reduce_weighted(per_row(em.constant(y), em.constant(p)), flat, "none")
    assert got.shape == (2, 1)
    np.testing.assert_allclose(got.numpy(), [[0.04], [0.18]], rtol=1e-5)


def test_get_gives_keras_3s_objects():
    """``keras.losses.get``: function names give the per-example function (Keras 3.15.1:
    ``get("mse")`` is ``mean_squared_error``), class names an instance; compile() takes
    either name as the loss object."""
    y, p = np.zeros((3, 2), np.float32), np.ones((3, 2), np.float32)
    for name in ("mse", "MSE", "mean_squared_error", "mae", "bce", "kld", "huber",
                 "categorical_crossentropy", "log_cosh", "poisson", "cosine_similarity"):
        assert nn.losses.get(name)(y, p).shape == (3,), name
    assert nn.losses.get("mean_squared_error") is nn.losses.mse
    assert isinstance(nn.losses.get("MeanSquaredError"), nn.losses.MeanSquaredError)
    assert nn.losses.get("dice")(y, p).shape == ()  # Keras's dice reduces itself
    model = nn.Sequential([nn.layers.Dense(2)])
    model.compile(loss="mse", optimizer="sgd")
    assert model.evaluate(y, p, verbose=0) > 0.0


def test_huber_function_is_keras_losses_huber():
    y, p = np.array([[0.0, 0.0, 1.0]]), np.array([[0.5, 3.0, -1.5]])
    err = np.abs(p - y)
    want = np.where(err <= 1.0, 0.5 * err ** 2, err - 0.5).mean(-1)
    np.testing.assert_allclose(nn.losses.huber(y, p).numpy(), want)
    np.testing.assert_allclose(nn.losses.huber(y, p, delta=2.0).numpy(),
                               np.where(err <= 2.0, 0.5 * err ** 2, 2.0 * (err - 1.0)).mean(-1))
    np.testing.assert_allclose(float(nn.losses.Huber()(y, p)), want.mean(), rtol=1e-6)


# --- cross-entropies from the logits a softmax or sigmoid was given (tf.keras's rule) ------
def _log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def test_a_softmax_outputs_cross_entropy_comes_from_its_logits():
    # a confidently wrong example: clipped probabilities would give 16.1 and no gradient
    from ember import tape

    z = np.array([[10.0, -10.0, 0.0], [0.5, 0.2, -0.1]], np.float32)
    y = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]], np.float32)
    x = em.constant(z)
    for loss, labels in ((nn.losses.CategoricalCrossentropy(), y),
                         (nn.losses.SparseCategoricalCrossentropy(), y.argmax(-1))):
        with tape.GradientTape() as t:
            t.watch(x)
            value = loss(labels, nn.activations.softmax(x))
        want = -(y * _log_softmax(z.astype(np.float64))).sum(-1).mean()
        np.testing.assert_allclose(float(value), want, rtol=1e-6)
        p = np.exp(_log_softmax(z.astype(np.float64)))
        np.testing.assert_allclose(t.gradient(value, x).numpy(), (p - y) / 2, atol=1e-6)


def test_a_sigmoid_outputs_binary_cross_entropy_comes_from_its_logits():
    from ember import tape

    z = np.array([[30.0, -30.0, 0.3]], np.float32)
    y = np.array([[0.0, 1.0, 1.0]], np.float32)
    x = em.constant(z)
    with tape.GradientTape() as t:
        t.watch(x)
        value = nn.losses.BinaryCrossentropy()(y, nn.layers.Activation("sigmoid")(x))
    zz = z.astype(np.float64)
    want = (np.maximum(zz, 0) - zz * y + np.log1p(np.exp(-np.abs(zz)))).mean()
    np.testing.assert_allclose(float(value), want, rtol=1e-6)
    np.testing.assert_allclose(t.gradient(value, x).numpy(),
                               (1 / (1 + np.exp(-zz)) - y) / 3, atol=1e-6)


def test_the_cached_logits_follow_the_loss_cast_and_only_the_last_axis():
    z = np.array([[3.0, -2.0, 0.5]], np.float32)
    y = np.array([[0.0, 0.0, 1.0]], np.float32)
    half = nn.activations.softmax(em.constant(z, em.float16))
    got = nn.losses.CategoricalCrossentropy()(y, half)  # float16 output, float32 loss
    want = -(y * _log_softmax(z.astype(np.float16).astype(np.float64))).sum()
    np.testing.assert_allclose(float(got), want, rtol=1e-3)
    with pytest.warns(UserWarning, match="from_logits=True, but y_pred was produced by a "
                                         "softmax"):
        both = nn.losses.categorical_crossentropy(y, nn.activations.softmax(em.constant(z)),
                                                  from_logits=True)
    np.testing.assert_allclose(float(both[0]), -_log_softmax(z.astype(np.float64))[0, 2],
                               rtol=1e-6)
    over_rows = nn.activations.softmax(em.constant(z.T), axis=0)  # not the classes' axis
    from ember.nn import _logits
    assert _logits.logits_of(over_rows.numpy(), "softmax") is None
    assert _logits.logits_of(over_rows, "softmax") is None
    assert _logits.logits_of(nn.activations.softmax(em.constant(z)), "sigmoid") is None


def test_a_softmax_models_loss_reads_nothing_back_on_a_gpu():
    # the [0, 1] check of probabilities reads the device; a softmax's output needs none,
    # so a training step with it stays capturable as a CUDA graph
    from ember.core.testing import simulated_gpus

    with simulated_gpus(1, strict=True) as (gpu,):
        with em.device(gpu.name):
            x = em.constant(np.array([[2.0, -1.0, 0.0]], np.float32))
            y = em.constant(np.array([[0.0, 1.0, 0.0]], np.float32))
            p = nn.activations.softmax(x)
            before = gpu.backend.counters.snapshot()
            nn.losses.CategoricalCrossentropy()(y, p)
            after = gpu.backend.counters.snapshot()
            assert after["to_host"] == before["to_host"]
            assert after["scalar_reads"] == before["scalar_reads"]
            plain = em.constant(np.array([[0.7, 0.2, 0.1]], np.float32))
            nn.losses.CategoricalCrossentropy()(y, plain)  # probabilities: checked, read
            assert gpu.backend.counters.snapshot() != after


def test_tf_keras_reduction_names_reach_a_loss_object():
    # tf.keras.losses.Reduction.SUM (TF's actor-critic tutorial) is nn.losses.Reduction.SUM,
    # whose value is tf.losses' "weighted_sum": a loss object takes it as Keras's "sum"
    y, p = np.zeros((2, 1), np.float32), np.array([[1.0], [3.0]], np.float32)
    summed = nn.losses.Huber(reduction=nn.losses.Reduction.SUM)
    assert summed.reduction == "sum" and float(summed(y, p)) == 0.5 + 2.5
    assert nn.losses.Huber(reduction=nn.losses.Reduction.AUTO).reduction == "auto"
    w = np.array([1.0, 3.0], np.float32)
    mean = nn.losses.MeanSquaredError(reduction=nn.losses.Reduction.MEAN)
    np.testing.assert_allclose(float(mean(y, p, w)), (1.0 + 27.0) / 4.0)
    with pytest.raises(ValueError, match="unknown reduction 'weighted_sum_by_nonzero"):
        nn.losses.Huber(reduction=nn.losses.Reduction.SUM_BY_NONZERO_WEIGHTS)


def test_a_users_loss_call_gets_float_labels_as_in_keras_3():
    # Keras 3's Loss.__call__ converts y_true to the loss's dtype before call; ember
    # handed a subclass's call the int64 labels (keras-io's NER loss reads them)
    seen = []

    class Scaled(nn.losses.Loss):
        def call(self, y_true, y_pred):
            seen.append(y_true.dtype)
            return em.reduce_sum(y_pred * (y_true / 2), axis=-1)

    got = Scaled()(np.array([[1, 2]]), np.array([[0.5, 0.5]], np.float32))
    assert seen == [em.float32] and got.dtype == em.float32  # int / 2 is not float64
    assert float(got) == 0.75
    # ember's own sparse losses still index by integer labels
    sparse = nn.losses.SparseCategoricalCrossentropy()
    want = -np.log(0.8)
    np.testing.assert_allclose(float(sparse(np.array([1]), np.array([[0.2, 0.8]], np.float32))),
                               want, rtol=1e-6)
