"""``nn.random`` is ``keras.random``: Keras 3's seeds (None: the global generator; an int:
the same numbers at every call; a SeedGenerator: advancing), shapes and dtypes."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember import nn

R = nn.random


@pytest.mark.parametrize("draw", [
    lambda s: R.normal((3, 4), seed=s), lambda s: R.uniform((5,), -1.0, 2.0, seed=s),
    lambda s: R.truncated_normal((6,), seed=s), lambda s: R.randint((7,), 0, 9, seed=s),
    lambda s: R.categorical(em.zeros((2, 5)), 4, seed=s),
    lambda s: R.shuffle(em.range(10), seed=s), lambda s: R.dropout(em.ones((20,)), 0.5, seed=s),
])
def test_seeds_as_keras_3_takes_them(draw, backend):
    a, b = draw(3).numpy(), draw(3).numpy()
    assert_array_equal(a, b)  # an int seed: the same numbers at every call
    gen = R.SeedGenerator(11)
    c, d = draw(gen).numpy(), draw(gen).numpy()
    assert not np.array_equal(c, d)  # the generator advanced
    again = R.SeedGenerator(11)
    assert_array_equal(draw(again).numpy(), c)  # ... from its seed, repeatably
    em.random.set_seed(5)
    e = draw(None).numpy()
    em.random.set_seed(5)
    assert_array_equal(draw(None).numpy(), e)  # None: the global generator
    assert draw(3).device == backend


def test_shapes_dtypes_and_ranges():
    assert R.normal((2, 3)).dtype == em.float32
    assert R.normal((2,), dtype="float64").dtype == em.float64
    ints = R.randint((1000,), 3, 7, seed=1).numpy()
    assert ints.dtype == np.int32 and ints.min() >= 3 and ints.max() <= 6
    u = R.uniform((1000,), 2.0, 3.0, seed=1).numpy()
    assert u.min() >= 2.0 and u.max() < 3.0
    x = em.constant(np.arange(12.0, dtype=np.float32).reshape(3, 4))
    s = R.shuffle(x, axis=1, seed=2).numpy()
    assert sorted(s[0].tolist()) == [0.0, 1.0, 2.0, 3.0]
    assert_array_equal(s - s[:, :1], np.broadcast_to(s[0] - s[0, 0], (3, 4)))  # columns
    kept = R.dropout(em.ones((4000,)), 0.25, seed=3).numpy()
    assert set(np.unique(kept)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((kept == 0).mean() - 0.25) < 0.03
    rows = R.dropout(em.ones((50, 6)), 0.5, noise_shape=(None, 1), seed=4).numpy()
    assert all(len(set(r)) == 1 for r in rows)  # one draw per row


def test_what_is_refused_is_named():
    with pytest.raises(TypeError, match="seed must be None, an int or a SeedGenerator"):
        R.normal((2,), seed=1.5)
    with pytest.raises(ValueError, match="randint: dtype must be an integer"):
        R.randint((2,), 0, 3, dtype="float32")
    with pytest.raises(ValueError, match="rate must be in"):
        R.dropout(em.ones((2,)), 1.0)
    with pytest.raises(AttributeError, match=r"no binomial \(keras.random.binomial\)"):
        R.binomial


def test_gamma_and_beta_are_keras_random_s():
    # Keras draws beta as X / (X + Y) of two gamma draws; keras-io's MixUp mixes with it
    gen = R.SeedGenerator(2)
    g = R.gamma((30000,), 2.5, seed=gen).numpy()
    assert g.dtype == np.float32
    np.testing.assert_allclose([g.mean(), g.var()], [2.5, 2.5], rtol=0.05)
    assert not np.array_equal(R.gamma((4,), 2.5, seed=gen).numpy(), g[:4])  # it advanced
    assert np.array_equal(R.gamma((4,), 1.0, seed=7).numpy(), R.gamma((4,), 1.0, seed=7).numpy())
    b = R.beta((30000,), 0.2, 0.5, seed=3).numpy()
    a_, b_ = 0.2, 0.5
    np.testing.assert_allclose(b.mean(), a_ / (a_ + b_), rtol=0.03)
    np.testing.assert_allclose(b.var(), a_ * b_ / ((a_ + b_) ** 2 * (a_ + b_ + 1)), rtol=0.06)
    assert ((b >= 0) & (b <= 1)).all()
