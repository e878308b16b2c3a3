import os
import threading
import time

import numpy as np
import pytest
from ember_data_testutil import as_list
from hypothesis import given, settings
from hypothesis import strategies as st

from ember.data import AUTOTUNE, Dataset


def test_map_unpacks_tuples():
    ds = Dataset.from_tensor_slices((np.arange(4), np.arange(4) * 10)).map(lambda a, b: a + b)
    assert as_list(ds) == [0, 11, 22, 33]


@pytest.mark.parametrize("calls", [2, 4, AUTOTUNE])
def test_parallel_map_keeps_order(calls):
    def slow(x):
        time.sleep(0.001 * (int(x) % 3))
        return x * 2

    ds = Dataset.range(50).map(slow, num_parallel_calls=calls)
    assert as_list(ds) == [2 * i for i in range(50)]


def test_parallel_map_uses_threads():
    seen = set()

    def f(x):
        seen.add(threading.get_ident())
        time.sleep(0.002)
        return x

    list(Dataset.range(40).map(f, num_parallel_calls=4))
    assert len(seen) > 1


def test_parallel_map_and_prefetch_run_in_the_callers_context():
    """A device scope is a context variable: a map's calls on worker threads, and a
    prefetch thread, see the one the iterating code set."""
    import contextvars

    scope = contextvars.ContextVar("scope", default="none")

    def f(x):
        return scope.get()

    token = scope.set("outer")
    try:
        for ds in (Dataset.range(6).map(f, num_parallel_calls=3),
                   Dataset.range(6).map(f, num_parallel_calls=3).prefetch(2),
                   Dataset.range(6).map(f).prefetch(2)):
            assert as_list(ds) == ["outer"] * 6
    finally:
        scope.reset(token)


def test_parallel_map_nondeterministic_is_a_permutation():
    ds = Dataset.range(30).map(lambda x: x + 1, num_parallel_calls=3, deterministic=False)
    assert sorted(as_list(ds)) == list(range(1, 31))


@pytest.mark.parametrize("calls", [None, 3])
def test_map_exception_reaches_caller_with_traceback(calls):
    def bad(x):
        if x == 5:
            raise ZeroDivisionError("bad element 5")
        return x

    with pytest.raises(ZeroDivisionError, match="bad element 5") as info:
        list(Dataset.range(10).map(bad, num_parallel_calls=calls).prefetch(2))
    assert any(entry.name == "bad" for entry in info.traceback)


def test_filter():
    assert as_list(Dataset.range(10).filter(lambda x: x % 3 == 0)) == [0, 3, 6, 9]


def test_batch_drop_remainder_and_len():
    ds = Dataset.range(10).batch(4)
    assert [len(b) for b in ds] == [4, 4, 2] and len(ds) == 3
    ds = Dataset.range(10).batch(4, drop_remainder=True)
    assert [len(b) for b in ds] == [4, 4] and len(ds) == 2
    assert ds.element_spec.shape == (4,)


def test_batch_mismatched_shapes_names_shapes_and_position():
    def gen():
        yield np.zeros(2)
        yield np.zeros(2)
        yield np.zeros(2)
        yield np.zeros(3)

    ds = Dataset.from_generator(gen).batch(2)
    with pytest.raises(ValueError, match=r"batch 1.*element 1.*input element 3.*\(3,\).*\(2,\)"):
        list(ds)


def test_padded_batch():
    # the padding value has the elements' dtype (TensorFlow refuses a Python int, int32,
    # for int64 elements: test_tf_parity_fixes.py)
    ds = Dataset.range(1, 4).map(lambda n: np.arange(n)).padded_batch(
        3, padding_values=np.int64(-1))
    (b,) = list(ds)
    np.testing.assert_array_equal(b, [[0, -1, -1], [0, 1, -1], [0, 1, 2]])
    ds = Dataset.range(1, 3).map(lambda n: np.ones(n)).padded_batch(2, padded_shapes=(4,))
    assert next(iter(ds)).shape == (2, 4)


def test_unbatch_nested():
    x = np.arange(10).reshape(5, 2)
    ds = Dataset.from_tensor_slices((x, x[:, 0])).batch(2).unbatch()
    assert as_list(ds) == [([2 * i, 2 * i + 1], 2 * i) for i in range(5)]


def test_repeat_take_skip():
    assert as_list(Dataset.range(3).repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert as_list(Dataset.range(3).repeat().take(7)) == [0, 1, 2, 0, 1, 2, 0]
    assert as_list(Dataset.range(5).skip(2)) == [2, 3, 4]
    assert as_list(Dataset.range(5).skip(-1)) == []
    assert as_list(Dataset.range(5).take(-1)) == [0, 1, 2, 3, 4]
    assert as_list(Dataset.range(0).repeat()) == []
    ds = Dataset.from_tensor_slices(np.arange(5))
    assert as_list(ds.repeat(2).skip(3).take(4)) == [3, 4, 0, 1]
    assert len(ds.repeat(2).skip(3).take(4)) == 4


def test_shard_and_enumerate():
    assert as_list(Dataset.range(10).shard(3, 1)) == [1, 4, 7]
    assert as_list(Dataset.from_tensor_slices(np.arange(10)).shard(3, 1)) == [1, 4, 7]
    assert len(Dataset.range(10).shard(3, 1)) == 3
    assert as_list(Dataset.range(3).map(lambda x: x * 2).enumerate(5)) == [(5, 0), (6, 2), (7, 4)]


def test_window_and_flat_map():
    ds = Dataset.range(5).window(3, shift=1)
    assert [as_list(w) for w in ds] == [[0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4], [4]]
    ds = Dataset.range(7).window(3, drop_remainder=True).flat_map(lambda w: w.batch(3))
    assert as_list(ds) == [[0, 1, 2], [3, 4, 5]]
    # a window takes every stride-th input over (size - 1) * stride + 1 of them (TF's);
    # this asserted [[0], [3]], the stride taken within only `size` inputs
    ds = Dataset.range(6).window(2, shift=3, stride=2)
    assert [as_list(w) for w in ds] == [[0, 2], [3, 5]]
    ds = Dataset.range(7).window(3, 1, 2)
    assert [as_list(w) for w in ds] == [[0, 2, 4], [1, 3, 5], [2, 4, 6], [3, 5], [4, 6], [5],
                                        [6]]
    ds = Dataset.range(7).window(3, 1, 2, drop_remainder=True)
    assert [as_list(w) for w in ds] == [[0, 2, 4], [1, 3, 5], [2, 4, 6]]


def test_interleave():
    ds = Dataset.range(3).interleave(lambda x: Dataset.range(x * 10, x * 10 + 3), cycle_length=2,
                                     block_length=2)
    assert as_list(ds) == [0, 1, 10, 11, 2, 12, 20, 21, 22]


@settings(max_examples=60, deadline=None)
@given(lengths=st.lists(st.integers(0, 4), min_size=0, max_size=10),
       cycle=st.integers(1, 4), block=st.integers(1, 3), workers=st.sampled_from([1, 2, AUTOTUNE]))
def test_parallel_interleave_gives_the_sequential_order(lengths, cycle, block, workers):
    def child(i):
        i = int(i)
        return Dataset.range(i * 100, i * 100 + lengths[i])

    src = Dataset.range(len(lengths))
    want = as_list(src.interleave(child, cycle_length=cycle, block_length=block))
    got = as_list(src.interleave(child, cycle_length=cycle, block_length=block,
                                 num_parallel_calls=workers))
    assert got == want


def test_parallel_interleave_reads_its_inputs_at_the_same_time():
    # each input waits at a barrier for the other: read one at a time, this times out
    barrier = threading.Barrier(2, timeout=20)

    def child(i):
        def gen():
            barrier.wait()
            yield int(i)
        return Dataset.from_generator(gen, output_types=np.int64, output_shapes=())

    ds = Dataset.range(2).interleave(child, cycle_length=2, num_parallel_calls=2)
    assert as_list(ds) == [0, 1]
    with pytest.raises(ValueError, match="num_parallel_calls must be a positive int"):
        Dataset.range(2).interleave(child, num_parallel_calls=0)


def test_parallel_interleave_raises_the_functions_error():
    def child(i):
        if int(i) == 2:
            raise KeyError("no file for 2")
        return Dataset.range(3)

    it = iter(Dataset.range(4).interleave(child, cycle_length=2, num_parallel_calls=2))
    with pytest.raises(KeyError, match="no file for 2"):
        list(it)


def test_cache_memory_reads_input_once():
    calls = []

    def f(x):
        calls.append(int(x))
        return x

    ds = Dataset.range(4).map(f).cache()
    assert as_list(ds) == [0, 1, 2, 3]
    assert as_list(ds) == [0, 1, 2, 3]
    assert calls == [0, 1, 2, 3]


def test_cache_file(tmp_path):
    path = str(tmp_path / "cache")
    calls = []

    def f(x):
        calls.append(int(x))
        return (x, np.full(2, x, np.float32))

    ds = Dataset.range(3).map(f).cache(path)
    first = as_list(ds)
    assert os.path.exists(path)
    ds2 = Dataset.range(3).map(f).cache(path)
    assert as_list(ds2) == first
    # the second pipeline only peeks for element_spec (a map's: its first two elements)
    assert calls == [0, 1, 2, 0, 1]


def test_prefetch_yields_everything_in_order():
    ds = Dataset.range(100).map(lambda x: x * 3).prefetch(4)
    assert as_list(ds) == [3 * i for i in range(100)]
    ds = Dataset.from_tensor_slices(np.arange(10)).batch(3).prefetch(AUTOTUNE)
    assert as_list(ds) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]


def test_prefetch_to_device_without_core_says_install():
    try:
        import ember.core  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install ember-core"):
            Dataset.range(3).prefetch_to_device("/cpu:0")
    else:
        pytest.skip("ember.core is installed; see test_prefetch_to_device")


def test_prefetch_to_device():
    em = pytest.importorskip("ember.core", reason="ember-core not installed")
    ds = Dataset.from_tensor_slices(np.arange(6, dtype=np.float32)).batch(2)
    out = list(ds.prefetch_to_device("/cpu:0"))
    assert len(out) == 3
    np.testing.assert_array_equal(np.asarray(out[0]), [0, 1])
    assert not isinstance(out[0], np.ndarray)
    assert em is not None


def test_element_spec_of_map_and_batch():
    ds = Dataset.range(4).map(lambda x: (np.zeros(3, np.float32), x)).batch(2)
    spec = ds.element_spec
    assert spec[0].shape == (None, 3) and spec[0].dtype == np.float32


def test_seed_pipeline_shape_arithmetic():
    n = 1001
    images = np.zeros((n, 784), np.float32)
    labels = np.arange(n, dtype=np.int32)
    ds = Dataset.from_tensor_slices((images, labels)).shuffle(60000).repeat(4).batch(32)
    batches = list(ds)
    assert len(batches) == len(ds) == -(-4 * n // 32)
    assert batches[0][0].shape == (32, 784) and batches[-1][0].shape == (4 * n % 32, 784)
    counts = np.bincount(np.concatenate([b[1] for b in batches]), minlength=n)
    assert (counts == 4).all()
