"""Keras's averaging rules: the loss of fit/evaluate weights each batch by its size, metric
results are float32, sparse labels must be class ids (shape (N,) or (N, 1))."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from ember import nn


def _ones_model():
    model = nn.Sequential([nn.layers.Dense(1, kernel_initializer="ones",
                                           bias_initializer="zeros", input_shape=(1,))])
    model.compile(optimizer=nn.optimizers.SGD(0.0), loss="mse", metrics=["mae"])
    return model


X = np.arange(5, dtype="float32")[:, None]
Y = np.zeros((5, 1), "float32")


@pytest.mark.parametrize("batch_size", [1, 2, 4, 5])
def test_evaluate_loss_is_the_mean_over_examples_whatever_the_batches(batch_size):
    loss, mae = _ones_model().evaluate(X, Y, batch_size=batch_size)
    assert_allclose(loss, 6.0, rtol=1e-6)  # mean of 0, 1, 4, 9, 16 (per batch: 9.75 at 4)
    assert_allclose(mae, 2.0, rtol=1e-6)


def test_fit_history_loss_is_the_mean_over_examples():
    history = _ones_model().fit(X, Y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    assert_allclose(history.history["loss"], [6.0], rtol=1e-6)


def test_custom_test_step_with_compiled_loss_weights_batches_by_size():
    class Custom(nn.Sequential):
        def evaluate_batch(self, data):
            x, y = data
            y_pred = self(x, training=False)
            self.compiled_loss(y, y_pred, regularization_losses=self.losses)
            self.compiled_metrics.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

        test_step = evaluate_batch  # Keras's override (a name pytest does not collect)

    model = Custom([nn.layers.Dense(1, kernel_initializer="ones", bias_initializer="zeros",
                                    input_shape=(1,))])
    model.compile(loss="mse")
    assert_allclose(model.evaluate(X, Y, batch_size=2), 6.0, rtol=1e-6)


@pytest.mark.parametrize("metric, args", [
    (nn.metrics.Mean, ([1.0, 2.0],)),
    (nn.metrics.Sum, ([1.0, 2.0],)),
    (nn.metrics.Accuracy, ([1, 2], [1, 3])),
    (nn.metrics.SparseCategoricalAccuracy, ([0, 1], [[0.9, 0.1], [0.8, 0.2]])),
    (nn.metrics.CategoricalAccuracy, ([[1, 0], [0, 1]], [[0.9, 0.1], [0.8, 0.2]])),
    (nn.metrics.BinaryAccuracy, ([1, 0], [0.9, 0.8])),
    (nn.metrics.MeanAbsoluteError, ([1.0, 0.0], [0.5, 0.5])),
    (nn.metrics.MeanSquaredError, ([1.0, 0.0], [0.5, 0.5])),
])
def test_metric_results_are_float32_as_keras(metric, args):
    m = metric()
    assert np.dtype(m.result().dtype) == np.float32  # before any update too
    m.update_state(*args)
    assert np.dtype(m.result().dtype) == np.float32
    assert np.dtype(m.dtype) == np.float32


def test_metric_dtype_argument_is_honoured():
    m = nn.metrics.Mean(dtype="float64")
    m.update_state([1.0, 2.0])
    assert np.dtype(m.result().dtype) == np.float64


def test_mean_counts_exactly_past_float32_integers():
    # 2**24 + 1 is not a float32: the state accumulates in float64, the result is float32
    m = nn.metrics.Mean()
    m.update_state(1.0, sample_weight=2.0 ** 24)
    m.update_state(3.0)
    assert_allclose(float(m.total.value()), 2.0 ** 24 + 3.0)
    assert_allclose(float(m.count.value()), 2.0 ** 24 + 1.0)


def test_sparse_categorical_accuracy_rejects_one_hot_labels():
    m = nn.metrics.SparseCategoricalAccuracy()
    with pytest.raises(ValueError, match=r"y_true.*\(3, 3\).*\(3, 3\)"):
        m.update_state(np.eye(3), np.eye(3) * 5)


@pytest.mark.parametrize("labels", [[0, 2, 1], [[0], [2], [1]]])
def test_sparse_categorical_accuracy_takes_n_or_n_by_1_labels(labels):
    m = nn.metrics.SparseCategoricalAccuracy()
    m.update_state(np.asarray(labels), np.eye(3)[[0, 1, 1]])
    assert_allclose(float(m.result()), 2 / 3, rtol=1e-6)


def test_metric_rejects_an_integer_dtype_by_name():
    with pytest.raises(ValueError, match="dtype must be a floating dtype.*int32"):
        nn.metrics.Mean(dtype="int32")
