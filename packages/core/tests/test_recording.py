"""The recorder seam: what a tape is told, when, and in which thread."""

from __future__ import annotations

import threading

import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember.core import recording
from ember.core.testing import simulated_gpus


class FakeRecorder:
    def __init__(self):
        self.ops = []
        self.reads = []

    def record_op(self, op, inputs, attrs, outputs):
        self.ops.append((op, inputs, attrs, outputs))

    def variable_read(self, variable, value):
        self.reads.append((variable, value))

    @property
    def names(self):
        return [op.name for op, *_ in self.ops]


@pytest.fixture
def rec():
    r = FakeRecorder()
    token = recording.push(r)
    yield r
    recording.pop(token)


def test_op_is_recorded_with_inputs_outputs(rec):
    x = em.constant([1.0, 2.0])
    y = em.constant([3.0, 4.0])
    z = x * y
    assert rec.names == ["multiply"]
    op, inputs, attrs, outputs = rec.ops[0]
    assert op is em.REGISTRY["multiply"] and isinstance(op, em.OpDef)
    assert inputs[0] is x and inputs[1] is y
    assert outputs == (z,)
    assert not attrs


def test_attrs_are_recorded(rec):
    x = em.ones([2, 3])
    rec.ops.clear()
    em.reduce_sum(x, axis=1, keepdims=True)
    em.transpose(x)
    em.cast(x, em.int32)
    (_, _, a_sum, _), (_, _, a_tr, _), (_, _, a_cast, _) = rec.ops
    assert a_sum == {"axis": (1,), "keepdims": True}
    assert a_tr == {"perm": (1, 0)}
    assert a_cast == {"dtype": em.int32}


def test_python_operands_are_recorded_as_tensors(rec):
    x = em.constant([1.0, 2.0])
    x + 1.5
    _, inputs, _, _ = rec.ops[0]
    assert inputs[0] is x and type(inputs[1]) is em.Tensor and float(inputs[1]) == 1.5


def test_multi_output_ops(rec):
    parts = em.split(em.ones([4, 2]), 2)
    op, _, attrs, outputs = rec.ops[-1]
    assert op.name == "split" and attrs["sizes"] == (2, 2)
    assert list(outputs) == parts


def test_composites_record_their_primitives(rec):
    em.nn_ops.softmax(em.constant([1.0, 2.0]))
    assert rec.names == ["reduce_max", "stop_gradient", "subtract", "exp", "reduce_sum",
                         "divide"]


def test_reshape_to_same_shape_is_recorded(rec):
    x = em.ones([2, 2])
    rec.ops.clear()
    y = em.reshape(x, [2, 2])
    assert rec.names == ["reshape"] and y is not x


def test_variable_reads(rec):
    v = em.Variable([1.0, 2.0], name="w")
    rec.reads.clear()
    out = v * 2.0
    assert len(rec.reads) == 1
    var, value = rec.reads[0]
    assert var is v and type(value) is em.Tensor
    assert_array_equal(value.numpy(), [1.0, 2.0])
    assert rec.ops[-1][1][0] is value  # the op saw the value that was read
    assert_array_equal(out.numpy(), [2.0, 4.0])
    v.read_value()
    assert len(rec.reads) == 2


def test_nothing_recorded_when_inactive():
    r = FakeRecorder()
    token = recording.push(r)
    recording.pop(token)
    em.constant([1.0]) + 1
    em.Variable(1.0).value()
    assert r.ops == [] and r.reads == []
    assert recording.active_recorders() == ()


def test_nested_recorders_both_see_ops():
    outer, inner = FakeRecorder(), FakeRecorder()
    with recording.active(outer):
        em.exp(em.constant(1.0))
        with recording.active(inner):
            assert recording.active_recorders() == (outer, inner)
            em.log(em.constant(1.0))
    assert outer.names == ["exp", "log"]
    assert inner.names == ["log"]


def test_exclude_and_paused(rec):
    other = FakeRecorder()
    with recording.active(other):
        token = recording.exclude(rec)
        em.sin(em.constant(1.0))
        recording.pop(token)
        with recording.paused():
            em.cos(em.constant(1.0))
            assert recording.active_recorders() == ()
        em.tan(em.constant(1.0))
    assert rec.names == ["tan"]
    assert other.names == ["sin", "tan"]


def test_recorders_are_per_thread(rec):
    def worker():
        em.exp(em.constant(2.0))

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert rec.ops == []


def test_fast_path_ops_record_when_active(rec):
    x = em.constant([1.0])
    -x
    x + x
    em.relu(x)
    assert rec.names == ["negative", "add", "relu"]


def test_copy_to_device_is_recorded(rec):
    with simulated_gpus(1):
        x = em.constant([1.0])
        y = x.cpu()
    op, inputs, attrs, outputs = rec.ops[-1]
    assert op.name == "copy_to_device" and inputs == (x,) and outputs == (y,)
    assert attrs == {"device": "/cpu:0"}


def test_set_differentiator_checks_the_protocol_and_can_be_removed():
    before = recording.differentiator()

    class Half:
        def differentiate(self, fn, sources):
            return fn(), [], lambda targets, dys: [None] * len(sources)

    with pytest.raises(TypeError, match="Half is not a Differentiator"):
        recording.set_differentiator(Half())
    try:
        recording.set_differentiator(None)
        assert recording.differentiator() is None
        Half.record_call = lambda self, inputs, outputs, grad_fn: None
        Half.watched = lambda self, tensors: [True] * len(tensors)
        d = Half()
        recording.set_differentiator(d)
        assert recording.differentiator() is d
    finally:
        recording.set_differentiator(before)
