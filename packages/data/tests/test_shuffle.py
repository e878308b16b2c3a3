import numpy as np
import pytest
from ember_data_testutil import as_list
from hypothesis import given, settings
from hypothesis import strategies as st

from ember.data import Dataset

SETTINGS = settings(max_examples=60, deadline=None)


def generic(ds):
    """The same pipeline through the element-wise path (map blocks the index fast path)."""
    return ds.map(lambda *x: x if len(x) > 1 else x[0])


@SETTINGS
@given(n=st.integers(0, 300), buf=st.integers(1, 400), seed=st.integers(0, 2**32))
def test_shuffle_is_a_permutation(n, buf, seed):
    out = as_list(Dataset.range(n).shuffle(buf, seed=seed))
    assert sorted(out) == list(range(n))
    out = as_list(Dataset.from_tensor_slices(np.arange(n)).shuffle(buf, seed=seed))
    assert sorted(out) == list(range(n))


@SETTINGS
@given(n=st.integers(0, 300), buf=st.integers(1, 400), seed=st.integers(0, 2**32))
def test_shuffle_is_a_buffer_shuffle(n, buf, seed):
    # Input i >= buf enters the buffer after output i - buf, so it cannot come out earlier.
    out = as_list(Dataset.from_tensor_slices(np.arange(n)).shuffle(buf, seed=seed))
    pos = np.empty(n, dtype=np.int64)
    pos[out] = np.arange(n)
    late = np.arange(buf, n)
    assert (pos[late] >= late - buf + 1).all()


def test_buffer_of_one_keeps_order():
    assert as_list(Dataset.from_tensor_slices(np.arange(50)).shuffle(1, seed=3)) == list(range(50))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 9000), buf=st.integers(1, 5000), seed=st.integers(0, 2**32),
       reps=st.integers(1, 3), bs=st.integers(1, 70), drop=st.booleans())
def test_fused_fast_path_equals_elementwise_path(n, buf, seed, reps, bs, drop):
    x = np.arange(n)
    fast = Dataset.from_tensor_slices((x, -x)).shuffle(buf, seed=seed).repeat(reps)
    slow = generic(Dataset.from_tensor_slices((x, -x))).shuffle(buf, seed=seed).repeat(reps)
    assert as_list(fast.batch(bs, drop)) == as_list(slow.batch(bs, drop))
    assert as_list(fast.take(50)) == as_list(slow.take(50))


@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 500), buf=st.integers(1, 600), seed=st.integers(0, 2**16),
       take=st.integers(0, 400), skip=st.integers(0, 100), shards=st.integers(1, 4))
def test_fast_path_equals_elementwise_through_positional_ops(n, buf, seed, take, skip, shards):
    def pipe(ds):
        return ds.repeat(2).shuffle(buf, seed=seed).skip(skip).take(take).shard(shards, 0)

    x = np.arange(n)
    assert as_list(pipe(Dataset.from_tensor_slices(x)).batch(7)) == \
        as_list(pipe(generic(Dataset.from_tensor_slices(x))).batch(7))


def test_same_seed_same_order_across_pipelines():
    def make():
        x = np.arange(1000)
        return Dataset.from_tensor_slices(x).shuffle(100, seed=7).repeat(3).batch(10)

    assert as_list(make()) == as_list(make())


def test_reshuffle_each_iteration():
    x = np.arange(200)
    ds = Dataset.from_tensor_slices(x).shuffle(200, seed=1)
    a, b = as_list(ds), as_list(ds)
    assert a != b and sorted(a) == sorted(b)
    epochs = as_list(ds.repeat(2))
    assert epochs[:200] != epochs[200:]
    ds = Dataset.from_tensor_slices(x).shuffle(200, seed=1, reshuffle_each_iteration=False)
    assert as_list(ds) == as_list(ds)
    assert as_list(ds.repeat(2))[:200] == as_list(ds.repeat(2))[200:]


@pytest.mark.parametrize("indexed", [True, False])
def test_every_pass_over_anything_built_on_a_shuffle_reshuffles(indexed):
    """TensorFlow reshuffles for every iterator made over what is built on the shuffle.
    `for epoch ...: for b in ds.take(n)` made a new dataset each epoch whose passes were
    counted from 0: every epoch saw the same order (a port of the tf.data guide found it)."""
    src = Dataset.from_tensor_slices(np.arange(50)) if indexed else \
        Dataset.from_generator(lambda: iter(range(50)))
    ds = src.shuffle(50, seed=1)
    takes = [as_list(ds.take(50)) for _ in range(3)]
    maps = [as_list(ds.map(lambda x: x)) for _ in range(2)]
    orders = takes + maps + [as_list(ds)]
    assert all(sorted(o) == list(range(50)) for o in orders)
    assert len({tuple(o) for o in orders}) == len(orders)  # six passes, six orders
    # still repeatable: the same pipeline built again gives the same sequence of orders
    ds2 = src.shuffle(50, seed=1)
    assert [as_list(ds2.take(50)) for _ in range(3)] == takes


def test_unseeded_shuffles_differ_but_are_permutations():
    x = np.arange(500)
    a = as_list(Dataset.from_tensor_slices(x).shuffle(500))
    b = as_list(Dataset.from_tensor_slices(x).shuffle(500))
    assert a != b and sorted(a) == sorted(b) == list(range(500))


def test_the_same_shuffled_dataset_on_both_sides_of_a_zip_is_shuffled_independently():
    # TensorFlow makes an iterator per input: zip((d, d)) pairs two different orders
    # (keras-io's MixUp zips two shuffled copies of the training set)
    d = Dataset.range(64).shuffle(64, seed=1)
    pairs = as_list(Dataset.zip((d, d)))
    assert sorted(a for a, _ in pairs) == sorted(b for _, b in pairs) == list(range(64))
    assert sum(a == b for a, b in pairs) < 8
    assert [a for a, _ in pairs] == as_list(d)  # the first input keeps the dataset's order
    both = as_list(d.concatenate(d))
    assert sorted(both[:64]) == sorted(both[64:]) and both[:64] != both[64:]
    mixed = Dataset.sample_from_datasets([d, d], seed=3)
    firsts = as_list(mixed)
    assert sorted(firsts) == sorted(list(range(64)) * 2)
    fixed = Dataset.range(8).shuffle(8, seed=1, reshuffle_each_iteration=False)
    assert all(a == b for a, b in as_list(Dataset.zip((fixed, fixed))))  # one order, as TF



def test_two_shuffles_made_alike_zip_to_equal_pairs_as_tensorflow():
    # TensorFlow: each shuffle dataset draws its orders from its own seed; two made alike
    # (same data, same seed) give the same order at every pass, so zip pairs equal
    # elements (keras-io's SimSiam relies on it); one shuffle given twice gives each side
    # an order of its own (two iterators of one shuffle)
    a = Dataset.range(16).shuffle(16, seed=26)
    b = Dataset.range(16).shuffle(16, seed=26)
    zipped = Dataset.zip((a, b))
    for _ in range(2):  # every pass: a new order, the same on both sides
        pairs = [(int(x), int(y)) for x, y in zipped]
        assert all(x == y for x, y in pairs)
    assert [x for x, _ in pairs] != list(range(16))
    same = Dataset.zip((a, a))
    assert any(int(x) != int(y) for x, y in same)
    branches = Dataset.zip((a.map(lambda x: x), a.map(lambda x: x)))
    assert any(int(x) != int(y) for x, y in branches)
    twice = [int(v) for v in a.concatenate(b)]
    assert twice[:16] == twice[16:]
