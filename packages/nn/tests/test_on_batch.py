"""``train_on_batch`` / ``test_on_batch`` (Keras's): one step on one batch, the same step
``fit`` and ``evaluate`` take, the metrics reset at each call (as Keras 3.15's)."""

import numpy as np
import pytest

from ember import nn

RNG = np.random.default_rng(0)
X = RNG.random((16, 4), dtype=np.float32)
Y = RNG.integers(0, 3, 16)


def _model():
    nn.utils.set_random_seed(1)
    model = nn.Sequential([nn.layers.Dense(3, activation="softmax", input_shape=(4,))])
    model.compile(nn.optimizers.SGD(0.5), "sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def test_train_on_batch_takes_fits_step():
    a, b = _model(), _model()
    for _ in range(3):
        out = a.train_on_batch(X, Y)
    b.fit(X, Y, batch_size=16, epochs=3, shuffle=False, verbose=0)
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_allclose(wa, wb, rtol=1e-6)
    assert isinstance(out, list) and len(out) == 2  # [loss, accuracy]: metrics_names' order
    logs = a.test_on_batch(X, Y, return_dict=True)
    assert list(logs) == ["accuracy", "loss"]
    fresh = a.test_on_batch(X, Y, return_dict=True)  # (no reset_metrics() needed)
    assert fresh == pytest.approx(a.evaluate(X, Y, batch_size=16, verbose=0,
                                             return_dict=True))


def test_weights_and_refusals():
    model = _model()
    before = [w.copy() for w in model.get_weights()]
    model.test_on_batch(X, Y)
    assert all(np.array_equal(u, v) for u, v in zip(before, model.get_weights()))
    zero = model.train_on_batch(X, Y, sample_weight=np.zeros(16, np.float32))
    assert zero[0] == 0.0  # every example weighted 0: no loss
    assert all(np.array_equal(u, v) for u, v in zip(before, model.get_weights()))
    model.train_on_batch(X, Y, class_weight={0: 1.0, 1: 2.0, 2: 0.5})
    with pytest.raises(ValueError, match="class_weight and sample_weight"):
        model.train_on_batch(X, Y, sample_weight=np.ones(16), class_weight={0: 1.0})
    with pytest.raises(ValueError, match="not a dataset"):
        model.train_on_batch(iter([(X, Y)]))
    with pytest.raises(RuntimeError, match="compile"):
        nn.Sequential([nn.layers.Dense(1)]).train_on_batch(X, Y)


def test_each_call_reports_its_own_batch_as_keras_3_15():
    # keras 3.15.1 calls reset_metrics() at the start of train_on_batch and test_on_batch
    model = nn.Sequential([nn.layers.Input((1,)), nn.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(optimizer=nn.optimizers.SGD(0.0), loss="mse")
    x = np.ones((2, 1), np.float32)
    got = [model.train_on_batch(x, np.zeros((2, 1))), model.train_on_batch(x, np.full((2, 1), 2.0)),
           model.test_on_batch(x, np.zeros((2, 1))), model.test_on_batch(x, np.full((2, 1), 2.0))]
    assert got == [0.0, 4.0, 0.0, 4.0]
