"""Random numbers: seeds, op-level seeds, distributions, Generator state."""

from __future__ import annotations

import json

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember.core import random


def test_set_seed_repeats_the_program():
    def program():
        return [random.normal([3]).numpy(), random.uniform([2, 2]).numpy(),
                random.uniform([4], maxval=10, dtype=em.int32).numpy(),
                random.truncated_normal([3]).numpy(), random.shuffle(em.range(6)).numpy(),
                random.categorical([[0.0, 1.0]], 5).numpy()]

    random.set_seed(42)
    first = program()
    random.set_seed(42)
    second = program()
    for a, b in zip(first, second):
        assert_array_equal(a, b)
    random.set_seed(43)
    assert not np.array_equal(program()[0], first[0])


def test_successive_draws_differ():
    random.set_seed(0)
    assert not np.array_equal(random.normal([4]).numpy(), random.normal([4]).numpy())


def test_op_level_seed():
    random.set_seed(7)
    a1, a2 = random.normal([3], seed=1), random.normal([3], seed=1)
    b = random.normal([3], seed=2)
    assert not np.array_equal(a1.numpy(), a2.numpy())  # a sequence, not one value
    assert not np.array_equal(a1.numpy(), b.numpy())
    random.set_seed(7)
    random.normal([10])  # global draws do not disturb op-level streams
    assert_array_equal(random.normal([3], seed=1).numpy(), a1.numpy())
    assert_array_equal(random.normal([3], seed=1).numpy(), a2.numpy())
    random.set_seed(8)
    assert not np.array_equal(random.normal([3], seed=1).numpy(), a1.numpy())


def test_dtypes_and_shapes():
    assert random.normal([2, 3]).dtype == em.float32
    assert random.normal([2], dtype=em.float64).dtype == em.float64
    assert random.normal([2], dtype=em.bfloat16).dtype == em.bfloat16
    assert random.uniform((), dtype=em.float16).shape == ()
    assert random.uniform([5], maxval=255, dtype=em.int32).dtype == em.int32
    assert random.uniform(em.constant([2, 2])).shape == (2, 2)
    assert random.normal([0, 3]).shape == (0, 3)


def test_distributions():
    random.set_seed(3)
    n = random.normal([20000], mean=2.0, stddev=0.5).numpy()
    assert abs(n.mean() - 2.0) < 0.02 and abs(n.std() - 0.5) < 0.02
    u = random.uniform([20000], minval=-2.0, maxval=2.0).numpy()
    assert u.min() >= -2.0 and u.max() < 2.0 and abs(u.mean()) < 0.05
    t = random.truncated_normal([20000], mean=1.0, stddev=3.0).numpy()
    assert np.all(np.abs(t - 1.0) <= 6.0) and abs(t.mean() - 1.0) < 0.1
    assert abs(t.std() - 3.0 * 0.8796) < 0.1
    i = random.uniform([5000], minval=-3, maxval=4, dtype=em.int64).numpy()
    assert i.dtype == np.int64 and i.min() == -3 and i.max() == 3
    assert set(np.unique(i)) == set(range(-3, 4))


def test_uniform_errors():
    with pytest.raises(em.InvalidArgumentError, match="maxval is required for integer dtype"):
        random.uniform([2], dtype=em.int32)
    with pytest.raises(em.InvalidArgumentError, match="need minval < maxval, got 5, 5"):
        random.uniform([2], 5, 5, dtype=em.int32)
    with pytest.raises(em.InvalidArgumentError, match="normal: dtype must be floating"):
        random.normal([2], dtype=em.int32)
    with pytest.raises(em.InvalidArgumentError, match=r"categorical: logits must be \(batch"):
        random.categorical([0.0, 1.0], 3)


def test_generator_state_save_restore_continues_stream():
    g = random.Generator(5)
    g.normal([3])
    saved = g.state
    a = [g.normal([4]).numpy(), g.uniform([2]).numpy()]
    g.normal([100])
    g.state = saved
    b = [g.normal([4]).numpy(), g.uniform([2]).numpy()]
    for x, y in zip(a, b):
        assert_array_equal(x, y)


def test_generator_checkpoint_state_through_json():
    g = random.Generator.from_seed(11)
    g.uniform([7])
    blob = json.dumps(g.__checkpoint_state__())
    expected = g.normal([5]).numpy()
    h = random.Generator(0)
    h.__checkpoint_restore_state__(json.loads(blob))
    assert_array_equal(h.normal([5]).numpy(), expected)


def test_independent_generators():
    a, b = random.Generator(1), random.Generator(1)
    assert_array_equal(a.normal([3]).numpy(), b.normal([3]).numpy())
    assert random.get_global_generator() is random.get_global_generator()


def test_same_values_on_every_device(device):
    random.set_seed(9)
    ref = random.normal([4]).numpy()
    random.set_seed(9)
    with em.device(device):
        t = random.normal([4])
    assert t.device == device
    assert_array_equal(t.numpy(), ref)


def test_dropout():
    x = em.ones([10000])
    y = em.nn_ops.dropout(x, 0.25, seed=3).numpy()
    assert set(np.unique(y)) == {0.0, np.float32(1 / 0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.02
    assert em.nn_ops.dropout(x, 0.0) is x
    with pytest.raises(em.InvalidArgumentError, match=r"dropout: rate must be in \[0, 1\)"):
        em.nn_ops.dropout(x, 1.0)
    ns = em.nn_ops.dropout(em.ones([4, 6]), 0.5, noise_shape=[4, 1], seed=1).numpy()
    assert np.all(ns == ns[:, :1])  # one decision per row
