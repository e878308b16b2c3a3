"""The checkpoint restore's fast paths (duck-typed; core does not import ember-checkpoint).

``__checkpoint_buffer__``: the variable's own host array, written in place, only while
nothing else holds its tensor or array (as a traced step's in-place update). Otherwise
``__checkpoint_assign__``: the restored array is kept without a copy on the host and
uploaded once on a GPU; the rollback puts back the previous tensor itself, and a tensor
read before the restore keeps its value."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember.core import InvalidArgumentError
from ember.core.testing import OpLog

# host memory: tests without the device fixture run on /cpu:0 where a GPU is present
pytestmark = pytest.mark.usefixtures("host_unless_device")


def test_the_restored_array_becomes_the_value_and_the_rollback_puts_the_old_one_back(device):
    v = em.Variable(np.zeros((2, 3), np.float32))
    before = v.value()
    restored = np.arange(6, dtype=np.float32).reshape(2, 3)
    undo = v.__checkpoint_assign__(restored)
    assert_array_equal(v.numpy(), restored)
    assert v.device == device
    if device == "/cpu:0":
        assert np.shares_memory(np.asarray(v), restored), "copied on the host"
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


def test_the_buffer_is_offered_only_while_nothing_else_holds_the_value(device):
    v = em.Variable(np.ones(4, np.float32))
    if device != "/cpu:0":  # device memory: never written from the host
        assert v.__checkpoint_buffer__() is None
        return
    buffer = v.__checkpoint_buffer__()
    assert buffer is not None and np.shares_memory(buffer, np.asarray(v))
    buffer[:] = 7.0  # what a restore does, last, once every checksum matched
    assert_array_equal(v.numpy(), np.full(4, 7.0))
    del buffer
    kept = v.value()
    assert v.__checkpoint_buffer__() is None, "a tensor read and kept would change"
    del kept
    view = np.asarray(v)[1:]  # a read-only view (numpy() copies)
    assert v.__checkpoint_buffer__() is None, "a numpy view would change"
    del view
    log = OpLog()
    with em.recording.active(log):
        y = em.reduce_sum(v * v)
    assert v.__checkpoint_buffer__() is None, "a tape's recorded input would change"
    del log, y
    assert v.__checkpoint_buffer__() is not None
    x = em.constant(np.zeros(4, np.float32))
    v.assign(x)  # the variable now shares the constant's tensor
    assert v.__checkpoint_buffer__() is None
