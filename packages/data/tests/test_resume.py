"""Resumable iteration: save mid-stream, restore into a fresh iterator, get the same rest."""

import numpy as np
import pytest
from ember_data_testutil import as_list, json_roundtrip, to_py
from hypothesis import given, settings
from hypothesis import strategies as st

from ember.data import Dataset, TextLineDataset, TFRecordDataset, TFRecordWriter


def x_data():
    return np.arange(200)


PIPELINES = {
    "fused_shuffle_batch": lambda: Dataset.from_tensor_slices((x_data(), -x_data()))
    .shuffle(50, seed=1).repeat(3).batch(7),
    "fused_elements": lambda: Dataset.from_tensor_slices(x_data()).shuffle(30, seed=2).repeat(2),
    "generic_shuffle": lambda: Dataset.range(150).map(lambda x: x * 2).shuffle(40, seed=3)
    .repeat(2).batch(5),
    "parallel_map": lambda: Dataset.from_tensor_slices(x_data()).shuffle(64, seed=4)
    .map(lambda x: x + 1, num_parallel_calls=3).batch(4),
    "prefetch": lambda: Dataset.range(120).shuffle(20, seed=5).batch(3).prefetch(4),
    "prefetch_parallel": lambda: Dataset.from_tensor_slices(x_data()).repeat()
    .map(lambda x: x * 3, num_parallel_calls=2).prefetch(3).take(300),
    "filter_take_skip_shard": lambda: Dataset.range(400).filter(lambda x: x % 3 != 0)
    .skip(10).take(200).shard(3, 2),
    "unbatch_padded": lambda: Dataset.range(1, 40).map(lambda n: np.arange(n % 5))
    .padded_batch(4).unbatch(),
    "window": lambda: Dataset.range(60).window(5, shift=2).flat_map(lambda w: w.batch(5)),
    "window_stride": lambda: Dataset.range(60).window(4, shift=3, stride=2).flat_map(
        lambda w: w.batch(4)),
    "interleave": lambda: Dataset.range(8).interleave(
        lambda i: Dataset.range(i * 100, i * 100 + (i % 4) + 2).shuffle(3, seed=int(i)),
        cycle_length=3, block_length=2),
    "zip_concat_enumerate": lambda: Dataset.zip(Dataset.range(50), Dataset.range(50).shuffle(
        10, seed=9)).concatenate(Dataset.zip(Dataset.range(5), Dataset.range(5))).enumerate(),
    "parallel_interleave": lambda: Dataset.range(9).interleave(
        lambda i: Dataset.range(i * 100, i * 100 + (i % 4) + (i % 3 == 1) * 2).shuffle(
            3, seed=int(i)), cycle_length=3, block_length=2, num_parallel_calls=2),
    "zip_same_shuffle": lambda: (lambda d: Dataset.zip((d, d.map(lambda x: x * 10))).concatenate(
        Dataset.zip((d, d))))(Dataset.range(40).shuffle(40, seed=7)),
    "generator": lambda: Dataset.from_generator(lambda: iter(range(70))).shuffle(16, seed=1),
    "cache_repeat": lambda: Dataset.range(30).map(lambda x: x * x).cache().shuffle(
        8, seed=2).repeat(3),
    "sample_from_datasets": lambda: Dataset.sample_from_datasets(
        [Dataset.range(40), Dataset.range(100, 110).shuffle(5, seed=3)], [0.3, 0.7], seed=4)
    .repeat(2),
    "choose_from_datasets": lambda: Dataset.choose_from_datasets(
        [Dataset.range(30), Dataset.range(100, 130).map(lambda x: x + 1)],
        Dataset.range(90).map(lambda i: i % 3 % 2), stop_on_empty_dataset=False),
    "infinite_shuffle": lambda: Dataset.from_tensor_slices(x_data()).repeat().shuffle(
        300, seed=6).take(700).batch(9),
}


def check_resume(make, k):
    """Consume k elements, save (through JSON), then compare the rest both ways."""
    full = as_list(make())
    it = iter(make())
    head = [to_py(next(it)) for _ in range(min(k, len(full)))]
    state = json_roundtrip(it.__checkpoint_state__())
    rest_same = as_list(it)
    fresh = iter(make())
    fresh.__checkpoint_restore_state__(state)
    rest_restored = as_list(fresh)
    assert head + rest_same == full
    assert rest_restored == rest_same
    return state


@pytest.mark.parametrize("name", sorted(PIPELINES))
@pytest.mark.parametrize("k", [0, 1, 13, 10**6])
def test_resume_equals_uninterrupted(name, k):
    check_resume(PIPELINES[name], k)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 400), buf=st.integers(1, 300), bs=st.integers(1, 40),
       reps=st.integers(1, 3), k=st.integers(0, 60), seed=st.integers(0, 2**31),
       fused=st.booleans())
def test_resume_property(n, buf, bs, reps, k, seed, fused):
    def make():
        ds = Dataset.from_tensor_slices(np.arange(n))
        if not fused:
            ds = ds.map(lambda x: x)
        return ds.shuffle(buf, seed=seed).repeat(reps).batch(bs)

    check_resume(make, k)


def test_state_is_small_for_the_seed_pipeline():
    images = np.zeros((6000, 784), np.float32)
    labels = np.zeros(6000, np.int32)
    ds = Dataset.from_tensor_slices((images, labels)).shuffle(6000, seed=0).repeat(4).batch(32)
    it = iter(ds)
    for _ in range(300):
        next(it)
    state = it.save_state()
    assert len(repr(state)) < 300
    again = iter(ds)
    again.restore_state(json_roundtrip(state))
    np.testing.assert_array_equal(next(again)[1], next(it)[1])


def test_restore_continues_reshuffling_past_the_restored_epoch():
    x = np.arange(100)
    ds = Dataset.from_tensor_slices(x).shuffle(100, seed=3)
    first = as_list(ds)  # iteration 0
    it = iter(ds)  # iteration 1
    next(it)
    state = it.save_state()
    ds2 = Dataset.from_tensor_slices(x).shuffle(100, seed=3)
    it2 = iter(ds2)
    it2.restore_state(state)
    assert as_list(it2) == as_list(it)
    assert as_list(ds2) not in (first,)  # the next pass is iteration 2, a new order


@pytest.mark.parametrize("fused", [True, False])
def test_unseeded_shuffle_resumes_with_its_saved_seed(fused):
    def make():
        ds = Dataset.from_tensor_slices(np.arange(300))
        ds = ds if fused else ds.map(lambda x: x)
        return ds.shuffle(100).repeat(2).batch(8)

    it = iter(make())
    for _ in range(30):
        next(it)
    state = json_roundtrip(it.save_state())
    resumed = iter(make())  # a new dataset draws a different seed
    resumed.restore_state(state)
    assert as_list(resumed) == as_list(it)


def test_file_readers_resume_by_offset(tmp_path):
    rec = str(tmp_path / "r.tfrecord")
    with TFRecordWriter(rec) as w:
        for i in range(20):
            w.write(bytes([i]) * (i + 1))
    txt = tmp_path / "t.txt"
    txt.write_text("".join(f"line {i}\n" for i in range(20)))
    state = check_resume(lambda: TFRecordDataset([rec, rec]), 25)
    assert state["state"]["file"] == 1
    check_resume(lambda: TextLineDataset(str(txt)).shuffle(4, seed=1), 7)


def test_nondeterministic_map_refuses_to_save():
    it = iter(Dataset.range(10).map(lambda x: x, num_parallel_calls=2, deterministic=False))
    next(it)
    with pytest.raises(ValueError, match="deterministic=True"):
        it.save_state()


def test_bad_state_is_rejected():
    with pytest.raises(ValueError, match="not an ember.data iterator state"):
        iter(Dataset.range(3)).restore_state({"foo": 1})
