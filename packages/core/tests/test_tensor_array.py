"""em.TensorArray: TensorFlow's eager TensorArray (a list of tensors, written and read by
index), with its errors."""

import numpy as np
import pytest

import ember.core as em


def test_write_read_stack_concat_gather_against_numpy():
    rows = np.arange(12, dtype=np.float32).reshape(4, 3)
    ta = em.TensorArray(em.float32, size=4, clear_after_read=False)
    for i, row in enumerate(rows):
        assert ta.write(i, row) is ta  # TF's `ta = ta.write(i, x)` idiom
    np.testing.assert_array_equal(ta.stack().numpy(), rows)
    np.testing.assert_array_equal(ta.concat().numpy(), rows.reshape(-1))
    np.testing.assert_array_equal(ta.gather([3, 0, 3]).numpy(), rows[[3, 0, 3]])
    np.testing.assert_array_equal(ta.read(em.constant(2)).numpy(), rows[2])
    assert int(ta.size()) == 4 and ta.size().dtype == np.int32
    assert ta.element_shape == (3,)


def test_unstack_scatter_split_fill_the_elements():
    value = np.arange(6, dtype=np.float32).reshape(3, 2)
    ta = em.TensorArray(em.float32, size=3).unstack(value)
    np.testing.assert_array_equal(ta.stack().numpy(), value)
    ta = em.TensorArray(em.float32, size=3).scatter([2, 0, 1], value)
    np.testing.assert_array_equal(ta.stack().numpy(), value[[1, 2, 0]])
    ta = em.TensorArray(em.float32, size=2, infer_shape=False).split(value, [1, 2])
    np.testing.assert_array_equal(ta.read(1).numpy(), value[1:])


def test_dynamic_size_grows_and_unwritten_elements_read_as_zeros():
    ta = em.TensorArray(em.int32, size=0, dynamic_size=True, element_shape=(2,))
    ta = ta.write(2, [5, 6])
    np.testing.assert_array_equal(ta.stack().numpy(), [[0, 0], [0, 0], [5, 6]])
    empty = em.TensorArray(em.float32, size=0, element_shape=(3,))
    assert empty.stack().shape == (0, 3)


def test_python_values_take_the_arrays_dtype():
    ta = em.TensorArray(em.float32, size=1).write(0, 1)
    assert ta.read(0).dtype == np.float32


@pytest.mark.parametrize("action, error, match", [
    (lambda: em.TensorArray(em.float32, size=1).write(1, 1.0), em.IndexOutOfRangeError,
     "index 1 is past the end of an array of size 1"),
    (lambda: em.TensorArray(em.float32, size=1).write(-1, 1.0), em.IndexOutOfRangeError,
     "negative"),
    (lambda: em.TensorArray(em.float32, size=1).write(0, em.constant([1])), em.DTypeError,
     "holds float32, the value at index 0 is int32"),
    (lambda: em.TensorArray(em.float32, size=2).write(0, [1.0]).write(1, [1.0, 2.0]),
     em.InvalidArgumentError, r"has shape \(2,\), the array's elements have shape \(1,\)"),
    (lambda: em.TensorArray(em.float32, size=1).read(3), em.IndexOutOfRangeError,
     "outside an array of size 1"),
    (lambda: em.TensorArray(em.float32, size=1).stack(), em.InvalidArgumentError,
     "never written"),
    (lambda: em.TensorArray(em.float32), em.InvalidArgumentError, "give size"),
    (lambda: em.TensorArray(em.float32, size=1, handle=object()), TypeError, "graph-mode"),
])
def test_bad_use_is_refused_by_name(action, error, match):
    with pytest.raises(error, match=match):
        action()


def test_a_read_clears_the_element_unless_asked_not_to():
    ta = em.TensorArray(em.float32, size=1).write(0, 2.0)
    assert float(ta.read(0)) == 2.0
    with pytest.raises(em.InvalidArgumentError, match="cleared by an earlier read"):
        ta.read(0)
    keep = em.TensorArray(em.float32, size=1, clear_after_read=False).write(0, 2.0)
    assert float(keep.read(0)) == float(keep.read(0)) == 2.0


def test_names_and_gathers_element_shape_are_honoured():
    assert em.TensorArray(em.float32, size=1, tensor_array_name="steps").name == "steps"
    ta = em.TensorArray(em.float32, size=2).unstack([[1.0, 2.0], [3.0, 4.0]])
    assert ta.gather([1], element_shape=(None,)).shape == (1, 2)
    with pytest.raises(em.InvalidArgumentError, match=r"element 0 has shape \(2,\)"):
        ta.gather([0], element_shape=(3,))
    with pytest.raises(TypeError):
        em.TensorArray(em.float32, size=1, colocate_with_first_write_call=False)
