"""Dataset.sample_from_datasets, choose_from_datasets, list_files and reduce, with
TensorFlow's semantics and errors."""

import numpy as np
import pytest

from ember.data import Dataset


def ints(ds):
    return [int(x) for x in ds]


def test_sample_from_datasets_follows_its_weights_and_keeps_each_inputs_order():
    a, b = Dataset.range(0, 3000), Dataset.range(10000, 13000)
    out = ints(Dataset.sample_from_datasets([a, b], weights=[0.25, 0.75], seed=0).take(4000))
    from_a = [x for x in out if x < 10000]
    from_b = [x for x in out if x >= 10000]
    assert from_a == list(range(len(from_a))) and from_b == list(range(10000, 10000 + len(from_b)))
    assert abs(len(from_a) / 4000 - 0.25) < 0.03  # binomial sd 0.007


def test_sample_from_datasets_drains_every_input_unless_told_to_stop():
    a, b = Dataset.range(5), Dataset.range(100, 103)
    out = ints(Dataset.sample_from_datasets([a, b], seed=1))
    assert sorted(out) == [0, 1, 2, 3, 4, 100, 101, 102]
    short = ints(Dataset.sample_from_datasets([a, b], seed=1, stop_on_empty_dataset=True))
    assert len(short) < 8 and out[:len(short)] == short


def test_sample_from_datasets_repeats_with_a_seed_and_rerandomizes_when_asked():
    def make(**kw):
        return Dataset.sample_from_datasets([Dataset.range(50), Dataset.range(100, 150)],
                                            seed=7, **kw)
    ds = make()
    assert ints(ds) == ints(ds) == ints(make())  # TF's default: each pass draws the same
    ds = make(rerandomize_each_iteration=True)
    assert ints(ds) != ints(ds)


def test_choose_from_datasets_takes_the_chosen_inputs_in_turn():
    sources = [Dataset.from_tensor_slices(np.array(["a", "a", "a"])),
               Dataset.from_tensor_slices(np.array(["b", "b"]))]
    choices = Dataset.from_tensor_slices(np.array([0, 1, 1, 1, 0], np.int64))
    assert [str(x) for x in Dataset.choose_from_datasets(sources, choices)] == ["a", "b", "b"]
    assert [str(x) for x in Dataset.choose_from_datasets(
        sources, choices, stop_on_empty_dataset=False)] == ["a", "b", "b", "a"]


@pytest.mark.parametrize("make, error, match", [
    (lambda: Dataset.sample_from_datasets([Dataset.range(3)], weights=[0.5, 0.5]), ValueError,
     "one entry per dataset"),
    (lambda: Dataset.sample_from_datasets([Dataset.range(3), Dataset.range(2)],
                                          weights=[0.0, 0.0]), ValueError, "not all zero"),
    (lambda: Dataset.sample_from_datasets([Dataset.range(3), Dataset.from_tensor_slices(
        np.zeros(2, np.float32))]),
     TypeError, "differ in structure or dtype"),
    (lambda: Dataset.sample_from_datasets([]), ValueError, "at least one dataset"),
    (lambda: Dataset.choose_from_datasets([Dataset.range(3)], Dataset.range(2).map(
        lambda x: x * 1.5)), TypeError, "integer scalars"),
])
def test_bad_arguments_are_refused_by_name(make, error, match):
    with pytest.raises(error, match=match):
        ds = make()
        ints(ds)


def test_a_choice_out_of_range_is_an_error_naming_it():
    ds = Dataset.choose_from_datasets([Dataset.range(3)], Dataset.range(2))
    with pytest.raises(ValueError, match=r"gave 1, outside \[0, 1\)"):
        ints(ds)


def test_list_files_matches_sorts_and_shuffles_each_pass(tmp_path):
    names = [tmp_path / f"f{i}.txt" for i in range(8)]
    for p in names:
        p.write_text("x")
    (tmp_path / "other.csv").write_text("x")
    want = [str(p) for p in sorted(names)]
    assert [str(x) for x in Dataset.list_files(str(tmp_path / "*.txt"), shuffle=False)] == want
    ds = Dataset.list_files(str(tmp_path / "*.txt"), seed=1)
    passes = [[str(x) for x in ds] for _ in range(3)]
    assert all(sorted(p) == want for p in passes) and len({tuple(p) for p in passes}) > 1
    with pytest.raises(ValueError, match="no files matched pattern"):
        Dataset.list_files(str(tmp_path / "*.json"))


def test_reduce_folds_the_elements_and_keeps_the_states_dtype():
    ds = Dataset.from_tensor_slices([8, 3, 0, 8, 2, 1])
    total = ds.reduce(0, lambda state, value: state + value)
    assert total == 22 and total.dtype == np.int32
    count, s = Dataset.range(4).reduce((np.int64(0), np.int64(0)),
                                       lambda st, v: (st[0] + 1, st[1] + v))
    assert (count, s) == (4, 6)
    with pytest.raises(TypeError, match="must match"):
        Dataset.range(3).reduce(np.float32(0), lambda st, v: st + v)


def test_a_mapped_batchs_spec_leaves_the_batch_size_unknown():
    # TF traces map's function on the input's spec; the first element alone claimed its own
    # batch of 32 where the last batch has fewer (the time-series tutorial's w2.train)
    ds = Dataset.from_tensor_slices(np.zeros((100, 6, 19), np.float32)).batch(32)
    spec = ds.map(lambda x: (x[:, :5], x[:, -1:, 1:2])).element_spec
    assert [s.shape for s in spec] == [(None, 5, 19), (None, 1, 1)]
    assert ds.map(lambda x: x.reshape(-1, 19)).element_spec.shape == (None, 19)
    assert ds.map(lambda x: x.sum()).element_spec.shape == ()
    assert Dataset.range(5).map(lambda x: x * 2).element_spec.shape == ()
    rows = [b.shape[0] for b in ds.map(lambda x: x)]
    assert rows == [32, 32, 32, 4]  # what the spec must admit


def test_a_map_that_refuses_the_probe_still_marks_the_unknown_size():
    def strict(x):
        if x.shape[0] != 2:
            raise ValueError("pairs only")
        return x

    spec = Dataset.range(4).batch(2).map(strict).element_spec
    assert spec.shape == (None,)


def test_interleave_takes_tensorflows_order_when_an_input_ends():
    # TF's InterleaveDatasetOp: an ended input empties its slot and the cycle moves on (the
    # slot takes the next input when the cycle comes back); ember opened the next input in
    # the same slot at once, a different order (the CSV tutorial's font files)
    ds = Dataset.range(1, 5).interleave(
        lambda x: Dataset.from_tensors(x).repeat(int(x)), cycle_length=2)
    assert ints(ds) == [1, 2, 2, 3, 3, 4, 3, 4, 4, 4]
    # tf.data.Dataset.interleave's docstring example
    ds = Dataset.range(1, 6).interleave(
        lambda x: Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4)
    assert ints(ds) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3,
                        4, 4, 5, 5, 5, 5, 5, 5]
