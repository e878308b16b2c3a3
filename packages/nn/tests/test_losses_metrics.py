import numpy as np
import pytest

import ember.core as em
from ember import nn, tape

R = nn.losses.Reduction


def _np_log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def test_mse_mae_huber_against_numpy():
    rng = np.random.default_rng(0)
    y, p = rng.normal(size=(4, 3)).astype(np.float32), rng.normal(size=(4, 3)).astype(np.float32)
    np.testing.assert_allclose(float(nn.losses.mean_squared_error(y, p)), ((p - y) ** 2).mean(),
                               rtol=1e-6)
    np.testing.assert_allclose(float(nn.losses.absolute_difference(y, p)), np.abs(p - y).mean(),
                               rtol=1e-6)
    # Keras's function names are per example (the mean over the last axis): the
    # autoencoder tutorial thresholds tf.keras.losses.mae per example; ember's
    # mean_absolute_error was TF 1's one reduced number, with no error
    for fn in (nn.losses.mean_absolute_error, nn.losses.mae, nn.losses.MAE):
        np.testing.assert_allclose(fn(y, p).numpy(), np.abs(p - y).mean(-1), rtol=1e-6)
    for fn in (nn.losses.mse, nn.losses.MSE):
        np.testing.assert_allclose(fn(y, p).numpy(), ((p - y) ** 2).mean(-1), rtol=1e-6)
    e = np.abs(p - y)
    h = np.where(e <= 0.5, 0.5 * e ** 2, 0.5 * (e - 0.25))
    np.testing.assert_allclose(float(nn.losses.huber_loss(y, p, delta=0.5)), h.mean(), rtol=1e-6)


def test_weights_and_reductions_like_tf_losses():
    y = np.zeros((2, 3), np.float32)
    p = np.arange(6, dtype=np.float32).reshape(2, 3)
    w = np.array([[1.0], [0.0]], np.float32)
    se = p ** 2
    f = nn.losses.mean_squared_error
    np.testing.assert_allclose(float(f(y, p, weights=w)), (se * w).sum() / 3)  # nonzero weights
    np.testing.assert_allclose(float(f(y, p, weights=w, reduction=R.SUM)), (se * w).sum())
    np.testing.assert_allclose(float(f(y, p, weights=w, reduction=R.MEAN)), (se * w).sum() / 3)
    np.testing.assert_allclose(float(f(y, p, weights=w, reduction=R.SUM_OVER_BATCH_SIZE)),
                               (se * w).sum() / 6)
    np.testing.assert_allclose(f(y, p, weights=2.0, reduction=R.NONE).numpy(), 2 * se)
    assert float(f(y, p, weights=0.0)) == 0.0
    with pytest.raises(ValueError, match="broadcast"):
        f(y, p, weights=np.ones(4, np.float32))


def test_cross_entropies_against_numpy_and_stable_for_huge_logits():
    logits = np.array([[1000.0, -1000.0, 0.0], [1.0, 2.0, 3.0]], np.float32)
    labels = np.array([1, 2])
    ref = -_np_log_softmax(logits.astype(np.float64))[np.arange(2), labels]
    sparse = nn.losses.sparse_softmax_cross_entropy(labels, logits, reduction=R.NONE)
    np.testing.assert_allclose(sparse.numpy(), ref, rtol=1e-6)
    onehot = np.eye(3, dtype=np.float32)[labels]
    dense = nn.losses.softmax_cross_entropy(onehot, logits)
    np.testing.assert_allclose(float(dense), ref.mean(), rtol=1e-6)
    z = np.array([1.0, 0.0, 1.0], np.float32)
    x = np.array([500.0, 500.0, -500.0], np.float32)
    bce = nn.losses.sigmoid_cross_entropy(z, x, reduction=R.NONE).numpy()
    np.testing.assert_allclose(bce, [0.0, 500.0, 500.0], rtol=1e-6)
    assert np.all(np.isfinite(bce))


def test_label_smoothing():
    logits = np.array([[2.0, 0.0]], np.float32)
    smooth = nn.losses.softmax_cross_entropy(np.array([[1.0, 0.0]], np.float32), logits,
                                             label_smoothing=0.2)
    y = np.array([[0.9, 0.1]])
    np.testing.assert_allclose(float(smooth), -(y * _np_log_softmax(logits)).sum(), rtol=1e-6)


def test_seed_mean_metric():
    m = nn.metrics.Mean("loss")
    m(0)
    m(5)
    assert float(m.result()) == 2.5
    m([8, 9])
    assert float(m.result()) == 5.5
    m.reset_states()
    assert float(m.result()) == 0.0
    assert set(m.__checkpoint_children__()) == {"total", "count"}


def test_sum_and_accuracy_metrics():
    s = nn.metrics.Sum()
    s([1, 2])
    s(3, sample_weight=2)
    assert float(s.result()) == 9.0
    acc = nn.metrics.Accuracy()
    acc(labels=em.constant([1, 2, 3]), predictions=em.constant([1, 0, 3]))
    np.testing.assert_allclose(float(acc.result()), 2 / 3)
    sca = nn.metrics.SparseCategoricalAccuracy()
    sca.update_state([0, 1], np.array([[0.9, 0.1], [0.8, 0.2]]))
    assert float(sca.result()) == 0.5
    ca = nn.metrics.CategoricalAccuracy()
    ca.update_state(np.eye(3)[[0, 2]], np.array([[5.0, 1, 0], [0, 1, 5]]))
    assert float(ca.result()) == 1.0
    with pytest.raises(ValueError, match="shape"):
        acc([1, 2], [1, 2, 3])


def test_accuracy_string_follows_the_shapes_as_keras():
    binary = nn.metrics.get("accuracy")
    binary.update_state(np.array([[1.0], [0.0], [1.0]]), np.array([[0.9], [0.2], [0.3]]))
    np.testing.assert_allclose(float(binary.result()), 2 / 3)
    sparse = nn.metrics.get("acc")
    sparse.update_state(np.array([2, 0]), np.array([[0.1, 0.2, 0.7], [0.1, 0.8, 0.1]]))
    np.testing.assert_allclose(float(sparse.result()), 0.5)
    onehot = nn.metrics.get("accuracy")
    onehot.update_state(np.eye(3)[[2, 1]], np.array([[0.1, 0.2, 0.7], [0.1, 0.8, 0.1]]))
    np.testing.assert_allclose(float(onehot.result()), 1.0)


def test_regression_metrics_and_their_compile_names():
    y = np.array([[1.0, 2.0], [0.0, -1.0]])
    p = np.array([[1.5, 2.0], [1.0, -3.0]])
    mae, mse = nn.metrics.get("mae"), nn.metrics.get("mse")
    mae.update_state(y, p)
    mse.update_state(y, p)
    np.testing.assert_allclose(float(mae.result()), np.abs(p - y).mean())
    np.testing.assert_allclose(float(mse.result()), ((p - y) ** 2).mean())
    w = nn.metrics.MeanAbsoluteError()
    w.update_state(y, p, sample_weight=np.array([1.0, 0.0]))
    np.testing.assert_allclose(float(w.result()), 0.25)


def _keras_relu(x, max_value=None, negative_slope=0.0, threshold=0.0):
    """Keras 3's ``ReLU.static_call``, in numpy."""
    y = np.where(x > threshold, x, 0.0)
    if max_value is not None:
        y = np.clip(y, 0.0, max_value)
    return y - negative_slope * np.maximum(threshold - x, 0.0)


def test_relu_layer_is_keras_relu_and_differentiates():
    x = np.linspace(-3, 8, 23).astype(np.float32)
    x[:3] = [0.3, 1.0, 6.0]  # on the thresholds and caps used below
    for kw in ({}, {"max_value": 6.0}, {"negative_slope": 0.1}, {"threshold": 1.0},
               {"threshold": 0.3, "negative_slope": 0.2, "max_value": 5.0},
               {"max_value": 0.0}):
        got = nn.layers.ReLU(**kw)(em.constant(x)).numpy()
        np.testing.assert_allclose(got, _keras_relu(x, **kw), rtol=1e-6, err_msg=str(kw))
    layer = nn.layers.ReLU(max_value=5.0, negative_slope=0.2, threshold=0.3)
    v = em.Variable(np.array([-1.0, 0.5, 7.0], np.float32))
    with tape.GradientTape() as t:
        y = em.reduce_sum(layer(v.value()))
    np.testing.assert_allclose(t.gradient(y, v).numpy(), [0.2, 1.0, 0.0])
    for kw, arg in (({"max_value": -1.0}, "max_value"), ({"negative_slope": -0.1},
                    "negative_slope"), ({"threshold": None}, "threshold"),
                    ({"negative_slope": "0.1"}, "negative_slope")):
        with pytest.raises(ValueError, match=f"ReLU: {arg} must be a number >= 0"):
            nn.layers.ReLU(**kw)


def test_leaky_relu_and_softmax_layers():
    x = em.constant([[-2.0, 3.0]])
    np.testing.assert_allclose(nn.layers.LeakyReLU()(x).numpy(), [[-0.6, 3.0]], rtol=1e-6)
    np.testing.assert_allclose(nn.layers.LeakyReLU(alpha=0.1)(x).numpy(), [[-0.2, 3.0]],
                               rtol=1e-6)
    with pytest.raises(ValueError, match="alpha"):
        nn.layers.LeakyReLU(negative_slope=0.1, alpha=0.2)
    s = nn.layers.Softmax()(x).numpy()
    np.testing.assert_allclose(s, np.exp([[-2.0, 3.0]]) / np.exp([[-2.0, 3.0]]).sum(),
                               rtol=1e-6)


def test_crossentropies_scale_then_clip_as_keras():
    # Keras 3.15: [16.118095] for both (scaled to [0, 1], then clipped to [1e-7, 1 - 1e-7]);
    # clipping first gave 15.42 (the 0 became 1e-7 of a sum of 0.5)
    p = np.array([[0.0, 0.5]], np.float32)
    got = nn.losses.categorical_crossentropy(np.array([[1.0, 0.0]], np.float32), p)
    np.testing.assert_allclose(got.numpy(), [16.118095], rtol=1e-6)
    got = nn.losses.sparse_categorical_crossentropy(np.array([0]), p)
    np.testing.assert_allclose(got.numpy(), [16.118095], rtol=1e-6)
    with pytest.raises(ValueError, match=r"y_pred holds probabilities .* from -1.0 to 0.5"):
        nn.losses.categorical_crossentropy(np.eye(2, dtype=np.float32),
                                           np.array([[-1.0, 0.5]] * 2, np.float32))
