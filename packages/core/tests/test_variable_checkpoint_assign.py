"""``Variable.__checkpoint_assign__``: the checkpoint restore's fast path (duck-typed; core
does not import ember-checkpoint). The restored array is kept without a copy on the host
and uploaded once on a GPU; the rollback puts back the previous tensor itself, and a
tensor read before the restore keeps its value."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember.core import InvalidArgumentError


def test_the_restored_array_becomes_the_value_and_the_rollback_puts_the_old_one_back(device):
    v = em.Variable(np.zeros((2, 3), np.float32))
    before = v.value()
    restored = np.arange(6, dtype=np.float32).reshape(2, 3)
    undo = v.__checkpoint_assign__(restored)
    assert_array_equal(v.numpy(), restored)
    assert v.device == device
    if device == "/cpu:0":
        assert np.shares_memory(v.numpy(), restored), "copied on the host"
    assert_array_equal(before.numpy(), np.zeros((2, 3)))  # an earlier read keeps its value
    undo()
    assert v.value() is before


@pytest.mark.parametrize(("dtype", "shape"), [(np.float64, (2, 3)), (np.float32, (3, 2))])
def test_a_value_of_another_dtype_or_shape_is_refused_and_changes_nothing(dtype, shape):
    v = em.Variable(np.ones((2, 3), np.float32), name="kernel")
    with pytest.raises(InvalidArgumentError, match=r"variable 'kernel:0' is float32\[2, 3\], "
                                                   r"the restored value"):
        v.__checkpoint_assign__(np.zeros(shape, dtype))
    assert_array_equal(v.numpy(), np.ones((2, 3)))
