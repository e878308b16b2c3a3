"""``nn.utils.PyDataset``: Keras 3's batches made in Python, in fit, evaluate and predict."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember import nn

RNG = np.random.default_rng(0)
X = RNG.standard_normal((40, 3)).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)


class Rows(nn.utils.PyDataset):
    def __init__(self, batch_size=8, delays=False, **kwargs):
        super().__init__(**kwargs)
        self.batch_size, self.delays = batch_size, delays
        self.ends, self.threads, self.order = 0, set(), []

    def __len__(self):
        return int(np.ceil(len(X) / self.batch_size))

    def __getitem__(self, i):
        self.threads.add(threading.get_ident())
        self.order.append(i)
        if self.delays:  # later batches finish first: the order must still hold
            time.sleep(0.002 * (len(self) - i))
        s = slice(i * self.batch_size, (i + 1) * self.batch_size)
        return X[s], Y[s]

    def on_epoch_end(self):
        self.ends += 1


def _model():
    model = nn.Sequential([nn.Input((3,)), nn.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(nn.optimizers.SGD(0.1), "mse")
    return model


@pytest.mark.parametrize("workers", [1, 3])
def test_fit_on_a_py_dataset_trains_as_on_the_arrays_in_order(workers):
    data = Rows(workers=workers, delays=workers > 1)
    a, b = _model(), _model()
    ha = a.fit(data, epochs=3, shuffle=False, verbose=0).history["loss"]
    hb = b.fit(X, Y, batch_size=8, epochs=3, shuffle=False, verbose=0).history["loss"]
    assert_allclose(ha, hb, rtol=1e-6)
    assert data.ends == 3  # on_epoch_end after each pass
    assert (len(data.threads) > 1) == (workers > 1)
    assert_allclose(a.evaluate(data, verbose=0), b.evaluate(X, Y, verbose=0), rtol=1e-6)
    assert a.predict(data, verbose=0).shape == (40, 1)


def test_what_a_py_dataset_refuses_is_named():
    with pytest.raises(ValueError, match="use_multiprocessing=True is not supported"):
        Rows(use_multiprocessing=True)
    with pytest.raises(ValueError, match="workers must be"):
        Rows(workers=0)

    class NoLen(nn.utils.PyDataset):
        pass

    with pytest.raises(NotImplementedError, match="must define __len__"):
        list(NoLen())


def test_fit_shuffles_the_batch_order_each_epoch_by_default_as_keras():
    data = Rows()
    model = _model()
    em.random.set_seed(1)
    model.fit(data, epochs=2, verbose=0)
    first, second = data.order[:5], data.order[5:]
    assert sorted(first) == sorted(second) == list(range(5))
    assert first != list(range(5)) or second != list(range(5))  # 1 in 120 each by chance
    again = Rows()
    em.random.set_seed(1)
    _model().fit(again, epochs=2, verbose=0)
    assert again.order == data.order  # the global seed repeats it
    data.order.clear()
    model.evaluate(data, verbose=0)
    model.predict(data, verbose=0)
    assert data.order == list(range(5)) * 2  # evaluate and predict keep the order
    with pytest.raises(ValueError, match="batch_size=64 applies to arrays"):
        model.fit(data, batch_size=64, verbose=0)  # Keras ignores it; ember says so


def test_a_plain_loop_is_no_epoch_as_keras_sequence():
    # Keras's Sequence.__iter__ yields the batches and calls no hooks: a dataset that
    # reshuffles in on_epoch_end is not reshuffled by a loop over it (ember did, silently)
    data = Rows()
    assert [int(i) for i in range(len(data))] == list(range(5))
    for _ in range(2):
        assert len(list(data)) == 5
    assert data.ends == 0 and data.order == list(range(5)) * 2
    _model().evaluate(data, verbose=0)  # evaluate's pass is an epoch: hooks called
    assert data.ends == 1
