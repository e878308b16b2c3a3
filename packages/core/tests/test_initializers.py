"""TensorFlow 2's top-level initializers (``em.random_uniform_initializer`` ...)."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em


def test_each_initializer_makes_what_tensorflow_makes(device):
    with em.device(device):
        u = em.random_uniform_initializer(minval=-0.003, maxval=0.003, seed=4)([400, 5])
        assert u.shape == (400, 5) and u.dtype == em.float32 and u.device == device
        a = u.numpy()
        assert a.min() >= -0.003 and a.max() < 0.003 and a.std() > 0.0015
        n = em.random_normal_initializer(mean=1.0, stddev=2.0, seed=4)([20000]).numpy()
        np.testing.assert_allclose([n.mean(), n.std()], [1.0, 2.0], atol=0.05)
        assert em.zeros_initializer()([2, 3], em.float64).numpy().tolist() == [[0.0] * 3] * 2
        assert em.ones_initializer()([2]).numpy().tolist() == [1.0, 1.0]
        c = em.constant_initializer(0.25)([3], dtype=em.float16)
        assert c.dtype == em.float16 and c.numpy().tolist() == [0.25] * 3
    d = em.random_uniform_initializer()
    assert d.get_config() == {"minval": -0.05, "maxval": 0.05, "seed": None}  # TF's defaults
    assert em.random_normal_initializer().get_config() == {"mean": 0.0, "stddev": 0.05,
                                                          "seed": None}
    with pytest.raises(TypeError, match="constant_initializer: value must be a number"):
        em.constant_initializer([1, 2])


def test_a_seeded_initializer_repeats_after_set_seed():
    init = em.random_normal_initializer(seed=11)
    em.random.set_seed(2)
    first = init([4]).numpy()
    em.random.set_seed(2)
    np.testing.assert_array_equal(init([4]).numpy(), first)
