"""assign_add and assign_sub write into the variable's own array where nobody could see
the write (nothing but the variable holds its tensor or its array, on the host, no tape
or tracer recording), and make a new array everywhere else, with the same bits."""

import threading

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember.core import _variable, extend
from ember.core.testing import OpLog

# host memory: tests without the device fixture run on /cpu:0 where a GPU is present
pytestmark = pytest.mark.usefixtures("host_unless_device")


def _address(v):
    """Where ``v``'s array lives: its host address, or its device pointer (``v.numpy()`` of
    a GPU variable is a new host copy, which malloc may put where the last one was: on the
    H200 every update looked in place)."""
    a = extend.array_of(v.value())
    return a.data.ptr if hasattr(a, "get") else a.__array_interface__["data"][0]


def _updated(v, method, delta):
    """Whether ``method`` of ``v`` kept its array (a new one is made while the old one is
    alive, so it cannot land at the same address)."""
    before = _address(v)
    getattr(v, method)(delta)
    return _address(v) == before


@pytest.mark.parametrize("method", ["assign_add", "assign_sub"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_an_update_nobody_sees_runs_in_place_with_the_same_bits(device, method, dtype):
    rng = np.random.default_rng(0)
    start = rng.standard_normal((3, 5)).astype(dtype)
    delta = rng.standard_normal((3, 5)).astype(dtype)
    v = em.Variable(start)
    in_place = _updated(v, method, em.constant(delta))
    assert in_place == (device == "/cpu:0")  # device memory: a new array, as before
    want = start + delta if method == "assign_add" else start - delta
    assert_array_equal(v.numpy(), want)
    assert v.dtype == dtype


def test_a_read_kept_keeps_its_value():
    v = em.Variable(np.ones(4, np.float32))
    kept = v.value()
    assert not _updated(v, "assign_sub", np.ones(4, np.float32))
    assert_array_equal(kept.numpy(), np.ones(4))
    assert_array_equal(v.numpy(), np.zeros(4))
    del kept
    view = np.asarray(v)[1:]  # a read-only view of its buffer (numpy() copies)
    assert not _updated(v, "assign_add", np.full(4, 2.0, np.float32))
    assert_array_equal(view, np.zeros(3)), "a numpy view changed"
    del view
    assert _updated(v, "assign_add", np.full(4, 2.0, np.float32))
    assert_array_equal(v.numpy(), np.full(4, 4.0))


def test_a_recorder_sees_the_update_as_an_op():
    # (with a tape: packages/tape/tests/test_variable_updates.py)
    v = em.Variable(np.full(3, 2.0, np.float32))
    log = OpLog()
    with em.recording.active(log):
        assert not _updated(v, "assign_sub", em.constant(np.ones(3, np.float32)))
    # and the value written starts anew for a recorder that is not a tracer (a tape: an
    # assign has no gradient, as TensorFlow's)
    assert [name for name, *_ in log.ops] == ["subtract", "stop_gradient"]
    assert_array_equal(v.numpy(), np.ones(3))


def test_a_variable_sharing_a_constant_leaves_the_constant_alone():
    x = em.constant(np.zeros(4, np.float32))
    v = em.Variable(np.ones(4, np.float32))
    v.assign(x)  # the variable now holds the constant's tensor
    assert not _updated(v, "assign_add", np.ones(4, np.float32))
    assert_array_equal(x.numpy(), np.zeros(4))
    assert_array_equal(v.numpy(), np.ones(4))


def test_its_own_value_as_the_delta():
    v = em.Variable(np.full(2, 3.0, np.float32))
    v.assign_sub(v)
    assert_array_equal(v.numpy(), np.zeros(2))
    v.assign_add(v.value() + 1.0)
    assert_array_equal(v.numpy(), np.ones(2))


@pytest.mark.parametrize("dtype", [np.int32, np.float16])
def test_other_dtypes_make_a_new_array(dtype):
    v = em.Variable(np.full(3, 5, dtype))
    assert not _updated(v, "assign_sub", em.constant(np.full(3, 2, dtype)))
    assert_array_equal(v.numpy(), np.full(3, 3, dtype))
    assert v.dtype == dtype


def test_a_read_only_array_is_not_written():
    a = np.ones(3, np.float32)
    a.flags.writeable = False
    v = em.Variable(np.zeros(3, np.float32))
    v.__checkpoint_assign__(a)  # kept without a copy, as a restore from a mapped file
    assert np.shares_memory(np.asarray(v), a)
    del a  # the variable alone holds it
    assert not _updated(v, "assign_add", np.ones(3, np.float32))
    assert_array_equal(v.numpy(), np.full(3, 2.0))


@pytest.mark.parametrize("n", [7, 4096, 4097, 2 * _variable._BLOCK + 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("tensor_scale", [False, True])
def test_sub_scaled_keeps_the_array_and_the_ops_bits_across_blocks(n, dtype, tensor_scale):
    # an optimizer's ``var -= lr * grad`` (SGD's), a block at a time through one scratch
    rng = np.random.default_rng(n)
    start = rng.standard_normal(n).astype(dtype)
    delta = rng.standard_normal(n).astype(dtype)
    scale = em.constant(0.37, dtype=dtype) if tensor_scale else 0.37
    v = em.Variable(start)
    before = _address(v)
    assert v._sub_scaled_in_place(em.constant(delta), scale)
    assert _address(v) == before
    assert_array_equal(v.numpy(), start - delta * dtype(0.37))


def test_sub_scaled_reuses_one_scratch_buffer_and_threads_take_their_own():
    n = 3 * _variable._BLOCK
    v = em.Variable(np.zeros(n, np.float32))
    d = em.constant(np.ones(n, np.float32))
    _variable._SCRATCH.pop(np.dtype(np.float32), None)
    assert v._sub_scaled_in_place(d, 1.0)
    pool = _variable._SCRATCH[np.dtype(np.float32)]
    assert len(pool) == 1
    first = pool[0]
    assert v._sub_scaled_in_place(d, 1.0)
    assert pool == [first]  # no second buffer made
    vs = [em.Variable(np.zeros(n, np.float32)) for _ in range(4)]
    errors = []

    def update(var):
        try:
            for _ in range(20):
                assert var._sub_scaled_in_place(d, 0.5)
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=update, args=(var,)) for var in vs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for var in vs:  # a buffer shared by two threads would mix their blocks
        assert_array_equal(var.numpy(), np.full(n, -10.0, np.float32))
    assert_array_equal(v.numpy(), np.full(n, -2.0, np.float32))
