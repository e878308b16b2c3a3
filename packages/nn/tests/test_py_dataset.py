"""``nn.utils.PyDataset``: Keras 3's batches made in Python, in fit, evaluate and predict."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from numpy.testing import assert_allclose

from ember import nn

RNG = np.random.default_rng(0)
X = RNG.standard_normal((40, 3)).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)


class Rows(nn.utils.PyDataset):
    def __init__(self, batch_size=8, delays=False, **kwargs):
        super().__init__(**kwargs)
        self.batch_size, self.delays = batch_size, delays
        self.ends, self.threads = 0, set()

    def __len__(self):
        return int(np.ceil(len(X) / self.batch_size))

    def __getitem__(self, i):
        self.threads.add(threading.get_ident())
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
    ha = a.fit(data, epochs=3, verbose=0).history["loss"]
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
