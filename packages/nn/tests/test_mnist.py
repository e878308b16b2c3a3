"""Real MNIST: an MLP (784-128-10, Adam) >= 97% and the seed's CNN+LSTM >= 98.5% test accuracy."""

import time

import numpy as np
import pytest
from mnist_data import find_dir, load
from test_models import MNIST_HighLevel

import ember.core as em
from ember import nn, tape

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def mnist():
    d = find_dir()
    if d is None:
        pytest.skip("MNIST not found: set $EMBER_DATA or put it in ../shared/datasets/mnist")
    return load("train", d), load("test", d)


def _train(model, opt, data, epochs, batch_size=128, seed=0):
    (x, y), _ = data
    rng = np.random.default_rng(seed)
    for _ in range(epochs):
        perm = rng.permutation(len(x))
        for i in range(0, len(x), batch_size):
            j = perm[i:i + batch_size]
            xb, yb = em.constant(x[j]), em.constant(y[j])
            with tape.GradientTape() as t:
                loss = nn.losses.sparse_softmax_cross_entropy(yb, model(xb, training=True))
            vs = model.trainable_variables
            opt.apply_gradients(zip(t.gradient(loss, vs), vs))


def _accuracy(model, data):
    _, (x, y) = data
    acc = nn.metrics.SparseCategoricalAccuracy()
    for i in range(0, len(x), 1000):
        acc.update_state(y[i:i + 1000], model(em.constant(x[i:i + 1000])))
    return float(acc.result())


def test_mlp_reaches_97_percent(mnist):
    em.random.set_seed(0)
    model = nn.Sequential([nn.layers.Dense(128, activation="relu", input_shape=(784,)),
                           nn.layers.Dense(10)])
    t0 = time.perf_counter()
    _train(model, nn.optimizers.Adam(1e-3), mnist, epochs=5)
    acc = _accuracy(model, mnist)
    print(f"MLP test accuracy {acc:.4f} in {time.perf_counter() - t0:.0f}s")
    assert acc >= 0.97


def test_seed_cnn_reaches_98_5_percent(mnist):
    em.random.set_seed(0)
    model = MNIST_HighLevel(hidden_units=64, n_cls=10)
    t0 = time.perf_counter()
    # 469 steps per epoch: 2e-3 for two epochs, then halved each epoch. Measured on this
    # data and seed: 96.7, 97.6, 98.2, 98.5% after epochs 1-4; six leave a margin.
    lr = nn.optimizers.PiecewiseConstantDecay([938, 1407, 1876, 2345],
                                              [2e-3, 1e-3, 5e-4, 2.5e-4, 1.25e-4])
    _train(model, nn.optimizers.Adam(lr), mnist, epochs=6)
    acc = _accuracy(model, mnist)
    print(f"seed CNN+LSTM test accuracy {acc:.4f} in {time.perf_counter() - t0:.0f}s")
    assert acc >= 0.985
