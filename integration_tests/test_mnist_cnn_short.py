"""The short version of the slow CNN + LSTM test that the default run keeps.

``packages/nn/tests/test_mnist.py`` trains the CNN + LSTM to 98.5% in six epochs (``nox -s
slow``). Here the main job's ``CNNLSTM`` (with a narrower LSTM) trains 150 steps and must
be far above chance: broken convolution, pooling or LSTM gradients leave it near 10%.
"""

from __future__ import annotations

import os
import pathlib
import sys

import pytest

import ember.core as em
from ember import data, nn, tape

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cnnlstm():
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from mnist import CNNLSTM
    finally:
        sys.path.remove(str(ROOT / "examples"))
    return CNNLSTM


def _mnist_dir() -> str:
    for cand in (os.environ.get("EMBER_DATA"), ROOT.parent / "shared" / "datasets" / "mnist"):
        if cand and (pathlib.Path(cand) / "train-images-idx3-ubyte.gz").exists():
            return str(cand)
    pytest.skip("real MNIST not found ($EMBER_DATA or ../shared/datasets/mnist)")


def test_cnn_lstm_learns_in_150_steps(cnnlstm):
    d = _mnist_dir()
    em.random.set_seed(0)
    model = cnnlstm(hidden_units=32)
    opt = nn.optimizers.Adam(3e-3)
    train = data.datasets.mnist("train", data_dir=d).shuffle(10000, seed=0).batch(32).take(150)
    for x, y in train:
        with tape.GradientTape() as t:
            loss = nn.losses.sparse_softmax_cross_entropy(y, model(x, training=True))
        vs = model.trainable_variables
        opt.apply_gradients(zip(t.gradient(loss, vs), vs))
    acc = nn.metrics.SparseCategoricalAccuracy()
    for x, y in data.datasets.mnist("test", data_dir=d).take(2000).batch(500):
        acc(y, model(x))
    # measured 58.5-71% (seeds 0-2; float32 rounding alone moves a seed's result by 10
    # points in 150 steps), chance is 10%; the full six epochs reach 98.5% in nox -s slow
    assert float(acc.result()) >= 0.5
