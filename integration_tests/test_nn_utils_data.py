"""ember.nn meets ember.data through public names only: nn.utils.split_dataset splits an
ember.data Dataset into two Datasets, and fit's class_weight weighs a Dataset's batches
(ember-nn does not depend on ember-data, so its own tests use stand-ins)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import ember.core as em
from ember import data, nn

pytestmark = pytest.mark.usefixtures("backend")


def test_split_dataset_of_an_ember_dataset():
    x, y = np.arange(20, dtype=np.float32).reshape(10, 2), np.arange(10)
    ds = data.Dataset.from_tensor_slices((x, y))
    left, right = nn.utils.split_dataset(ds, left_size=0.7, shuffle=True, seed=3)
    assert isinstance(left, data.Dataset) and isinstance(right, data.Dataset)
    assert left.cardinality() == 7 and right.cardinality() == 3
    order = list(range(10))
    random.Random(3).shuffle(order)
    got = [(e[0], int(e[1])) for e in left] + [(e[0], int(e[1])) for e in right]
    assert [i for _, i in got] == order
    for features, i in got:
        assert_array_equal(features, x[i])
    named = data.Dataset.from_tensor_slices({"a": x, "b": y})
    left, _ = nn.utils.split_dataset(named, right_size=2)
    assert [int(e["b"]) for e in left] == list(range(8))


def test_split_dataset_refuses_batched_and_infinite_datasets():
    ds = data.Dataset.from_tensor_slices(np.arange(10))
    with pytest.raises(ValueError, match="looks batched"):
        nn.utils.split_dataset(ds.batch(4), left_size=0.5)
    with pytest.raises(ValueError, match="infinite"):
        nn.utils.split_dataset(ds.repeat(), left_size=0.5)


def test_class_weight_weighs_the_batches_of_a_dataset():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((24, 4)).astype(np.float32)
    y = rng.integers(0, 3, 24)
    model = nn.Sequential([nn.layers.Dense(3, input_shape=(4,))])
    model.compile(nn.optimizers.SGD(0.0),
                  nn.losses.SparseCategoricalCrossentropy(from_logits=True))
    cw = {0: 1.0, 1: 3.0, 2: 0.25}
    logits = model.predict(x)
    z = logits - logits.max(-1, keepdims=True)
    per = np.log(np.exp(z).sum(-1)) - z[np.arange(24), y]
    want = float((per * np.array([cw[c] for c in y])).sum() / 24)
    ds = data.Dataset.from_tensor_slices((x, y)).batch(8)
    hist = model.fit(ds, epochs=2, verbose=0, class_weight=cw)
    assert_allclose(hist.history["loss"], [want, want], rtol=1e-5)


def test_a_random_layer_in_a_prefetched_map_repeats_under_set_seed():
    # a random layer keeps a stream of its own (Keras 3's seed_generator): behind prefetch
    # its draws do not interleave with the training thread's
    x = np.random.default_rng(0).uniform(0, 255, (32, 6, 6, 1)).astype(np.float32)

    def epoch_losses():
        em.random.set_seed(21)
        augment = nn.Sequential([nn.layers.RandomFlip(), nn.layers.RandomRotation(0.2)])
        ds = data.Dataset.from_tensor_slices(x).batch(4).map(
            lambda b: augment(b)).prefetch(2)
        out = []
        for b in ds:
            out.append(b.numpy())
            em.random.normal([3])  # the main thread draws from the global generator
        return np.stack(out)

    np.testing.assert_array_equal(epoch_losses(), epoch_losses())


# --- timeseries_dataset_from_array: Keras 3's windows -------------------------------------
def test_timeseries_windows_and_targets_as_keras_docstring_example():
    # Keras's example: data [0..99], sequence_length=10, sampling_rate=2, targets
    # data[10:]: the first window is [0, 2, ..., 18] and its target 10
    series = np.arange(100)
    ds = nn.utils.timeseries_dataset_from_array(series[:-10], series[10:], sequence_length=10,
                                                sampling_rate=2, batch_size=64)
    batches = list(ds)
    x0, y0 = batches[0]
    assert_array_equal(x0[0], np.arange(0, 20, 2))
    assert int(y0[0]) == 10
    # windows fit in the 90 rows: start <= 90 - 1 - 18 = 71, one per start, as Keras
    xs = np.concatenate([b[0] for b in batches])
    ys = np.concatenate([b[1] for b in batches])
    assert xs.shape == (72, 10) and [len(b[0]) for b in batches] == [64, 8]
    assert_array_equal(xs[:, 0], np.arange(72))
    assert_array_equal(ys, np.arange(10, 82))
    assert xs.dtype == series.dtype  # the data's dtype, as Keras


def test_timeseries_strides_indices_and_no_targets():
    series = np.arange(30, dtype=np.float32).reshape(15, 2)
    ds = nn.utils.timeseries_dataset_from_array(series, None, sequence_length=3,
                                                sequence_stride=4, start_index=2,
                                                end_index=14, batch_size=None)
    got = list(ds)
    assert [w.shape for w in got] == [(3, 2)] * 3
    assert [int(w[0, 0]) for w in got] == [4, 12, 20]  # rows 2, 6, 10 (the next, 14, ends at 16)


def test_timeseries_shuffle_is_keras_s_seeded_order_and_repeats():
    series = np.arange(50)
    make = lambda: nn.utils.timeseries_dataset_from_array(  # noqa: E731
        series, series, sequence_length=5, batch_size=8, shuffle=True, seed=7)
    a = np.concatenate([b[1] for b in make()])
    assert sorted(a) == list(range(46)) and not np.array_equal(a, np.arange(46))
    assert_array_equal(a, np.concatenate([b[1] for b in make()]))  # same seed, same order
    ds = make()
    first, second = [np.concatenate([b[1] for b in ds]) for _ in range(2)]
    assert sorted(first) == sorted(second) and not np.array_equal(first, second)


@pytest.mark.parametrize("kwargs, match", [
    ({"sequence_length": 0}, "sequence_length must be a whole number >= 1"),
    ({"sampling_rate": 20}, "sampling_rate must be below the number of rows"),
    ({"start_index": 20}, "start_index must be below"),
    ({"end_index": 1, "start_index": 3}, r"end_index must be in \(3, 20\)"),
    ({"batch_size": 0}, "batch_size must be a whole number >= 1"),
])
def test_timeseries_arguments_out_of_range_are_named(kwargs, match):
    args = {"sequence_length": 3, **kwargs}
    with pytest.raises(ValueError, match=match):
        nn.utils.timeseries_dataset_from_array(np.arange(20), None, **args)


def test_timeseries_of_python_lists_takes_tensorflow_s_dtypes():
    # Keras builds the windows with tf.data, where Python floats are float32 and ints
    # int32; numpy would make float64 and int64, a float64 model nobody asked for
    ds = nn.utils.timeseries_dataset_from_array([[0.5], [1.5], [2.5], [3.5]], [1, 2, 3, 4],
                                                sequence_length=2, batch_size=2)
    x, y = next(iter(ds))
    assert x.dtype == np.float32 and y.dtype == np.int32
    assert_array_equal(x, [[[0.5], [1.5]], [[1.5], [2.5]]])
    kept = nn.utils.timeseries_dataset_from_array(np.zeros((4, 1)), None, sequence_length=2)
    assert next(iter(kept)).dtype == np.float64  # a numpy array keeps its dtype
