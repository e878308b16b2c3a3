import numpy as np
import pytest
from ember_data_testutil import as_list

from ember import data
from ember.data import Dataset, TensorSpec


class FakeTensor:
    """Stands in for an ember tensor: converts through __array__."""

    def __init__(self, a):
        self._a = np.asarray(a)

    def __array__(self, dtype=None, copy=None):
        return self._a if dtype is None else self._a.astype(dtype)


def test_from_tensor_slices_nested_tuple_and_dict():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = np.arange(6, dtype=np.int32)
    ds = Dataset.from_tensor_slices((x, {"label": y, "w": y * 2}))
    first = next(iter(ds))
    assert isinstance(first, tuple) and set(first[1]) == {"label", "w"}
    np.testing.assert_array_equal(first[0], x[0])
    assert len(ds) == 6
    assert ds.element_spec == (TensorSpec((2,), np.dtype(np.float32)),
                               {"label": TensorSpec((), np.dtype(np.int32)),
                                "w": TensorSpec((), np.dtype(np.int32))})


def test_from_tensor_slices_accepts_array_likes():
    ds = Dataset.from_tensor_slices(FakeTensor([[1, 2], [3, 4]]))
    assert as_list(ds) == [[1, 2], [3, 4]]
    assert as_list(Dataset.from_tensor_slices([1, 2, 3])) == [1, 2, 3]


def test_from_tensor_slices_mismatched_lengths_names_shapes():
    with pytest.raises(ValueError, match=r"\(3,\).*\(4,\)"):
        Dataset.from_tensor_slices((np.zeros(3), np.zeros(4)))


def test_from_tensors_is_one_element():
    ds = Dataset.from_tensors((np.zeros((2, 3)), 1))
    (el,) = list(ds)
    assert el[0].shape == (2, 3)
    assert len(ds) == 1


def test_range_forms():
    assert as_list(Dataset.range(4)) == [0, 1, 2, 3]
    assert as_list(Dataset.range(2, 8, 3)) == [2, 5]
    assert as_list(Dataset.range(5, 0, -2)) == [5, 3, 1]
    assert len(Dataset.range(2, 8, 3)) == 2
    assert next(iter(Dataset.range(3))).dtype == np.int64


def test_zip_and_concatenate():
    a, b = Dataset.range(3), Dataset.range(10, 15)
    assert as_list(Dataset.zip(a, b)) == [(0, 10), (1, 11), (2, 12)]
    assert as_list(Dataset.zip({"a": a, "b": b}).take(1)) == [{"a": 0, "b": 10}]
    assert as_list(a.concatenate(b)) == [0, 1, 2, 10, 11, 12, 13, 14]
    assert len(a.concatenate(b)) == 8
    assert len(Dataset.zip(a, b)) == 3


def test_from_generator_declared_types_and_shapes():
    def gen():
        for i in range(3):
            yield [i, i], i

    ds = Dataset.from_generator(gen, output_types=(np.float32, np.int32),
                                output_shapes=((2,), ()))
    els = list(ds)
    assert els[0][0].dtype == np.float32 and els[0][1].dtype == np.int32
    assert ds.element_spec == (TensorSpec((2,), np.dtype(np.float32)),
                               TensorSpec((), np.dtype(np.int32)))
    # generators are called afresh for each iteration
    assert len(list(ds)) == 3


def test_from_generator_splits_a_yielded_value_only_as_deep_as_its_signature():
    # the tf.data performance guide yields (sample_idx,) for one TensorSpec of shape (1,)
    ds = Dataset.from_generator(lambda: iter([(0,), (1,)]),
                                output_signature=TensorSpec((1,), np.dtype(np.int64)))
    assert [e.tolist() for e in ds] == [[0], [1]]
    pair = (TensorSpec((), np.dtype(np.int64)), TensorSpec((2,), np.dtype(np.int64)))
    (a, b), = list(Dataset.from_generator(lambda: iter([[3, (4, 5)]]), output_signature=pair))
    assert a.tolist() == 3 and b.tolist() == [4, 5]
    with pytest.raises(ValueError, match="element 0 has 3 components, the declared output "
                                         "has 2"):
        list(Dataset.from_generator(lambda: iter([(1, 2, 3)]), output_signature=pair))
    with pytest.raises(ValueError, match="element 0 has one int value, the declared output has 2"):
        list(Dataset.from_generator(lambda: iter([7]), output_signature=pair))
    named = {"x": TensorSpec((), np.dtype(np.int64))}
    with pytest.raises(ValueError, match=r"element 0 is \['y'\].*keys \['x'\]"):
        list(Dataset.from_generator(lambda: iter([{"y": 1}]), output_signature=named))


def test_from_generator_shape_mismatch_names_element():
    def gen():
        yield np.zeros(2)
        yield np.zeros(3)

    ds = Dataset.from_generator(gen, output_types=np.float32, output_shapes=(2,))
    with pytest.raises(ValueError, match=r"element 1.*\(3,\).*\(2,\)"):
        list(ds)


def test_generator_exception_reaches_caller_with_traceback():
    def gen():
        yield 1
        raise KeyError("boom in generator")

    it = iter(Dataset.from_generator(gen).batch(4))
    with pytest.raises(KeyError, match="boom in generator") as info:
        next(it)
    assert any(entry.name == "gen" for entry in info.traceback)


def test_len_unknown_and_infinite():
    with pytest.raises(TypeError, match="infinite"):
        len(Dataset.range(3).repeat())
    with pytest.raises(TypeError, match="unknown"):
        len(Dataset.range(3).filter(lambda x: x > 0))
    assert Dataset.range(3).repeat().cardinality() == data.INFINITE_CARDINALITY


def test_python_numbers_take_tensorflows_dtypes_numpy_arrays_keep_theirs():
    """numpy made Python floats float64 and ints int64: a float64 pipeline nobody asked for
    (a port of the tf.data guide found it). TensorFlow's: float32, and int32 where it fits."""
    spec = lambda ds: ds.element_spec.dtype  # noqa: E731
    assert spec(Dataset.from_tensor_slices([8, 3])) == np.int32
    assert spec(Dataset.from_tensor_slices([[1.0, 2.0], [3.0, 4.0]])) == np.float32
    assert spec(Dataset.from_tensor_slices([2**40, 1])) == np.int64  # does not fit int32
    assert spec(Dataset.from_tensors(1.5)) == np.float32
    assert spec(Dataset.range(3).map(lambda x: 0.5)) == np.float32
    assert spec(Dataset.from_tensor_slices([True, False])) == np.bool_
    assert spec(Dataset.from_tensor_slices(np.array([1.0, 2.0]))) == np.float64  # asked for
    assert spec(Dataset.from_tensor_slices([np.float64(1.0)])) == np.float64


def test_from_generator_hands_its_args_over_as_tensorflow_does():
    # TF converts args to tensors and passes their numpy values: bytes for a string
    seen = []

    def gen(n, name, xs):
        seen.append((n, name, xs))
        for i in range(n):
            yield name.decode() == "abc" and i

    assert as_list(Dataset.from_generator(gen, args=(3, "abc", [1.5, 2.0]))) == [0, 1, 2]
    n, name, xs = seen[0]
    assert type(n) is np.int32 and name == b"abc" and xs.dtype == np.float32
