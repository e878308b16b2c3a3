"""tf.function's semantics that ports of TensorFlow's graph guides found missing: a Function
per instance, keyword calls sharing the positional call's trace, returned variables as
values, printing while tracing, em.print on every call, and the error class of a
signature mismatch."""

from __future__ import annotations

import gc
import io
import warnings
import weakref

import pytest

import ember.core as em
from ember import graph


def test_each_instance_of_a_class_has_its_own_traces_and_is_freed_with_them():
    class Model:
        @graph.function
        def f(self, x):
            return x * 2.0

    models = [Model() for _ in range(10)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # ten instances are no retracing to warn about
        for m in models:
            assert float(m.f(em.constant(1.0))) == 2.0
    assert [m.f.experimental_get_tracing_count() for m in models] == [1] * 10
    assert Model.f.experimental_get_tracing_count() == 0
    ref = weakref.ref(models[0])
    del models[0], m
    gc.collect()
    assert ref() is None


def test_keyword_and_positional_calls_share_one_trace():
    traced = []

    @graph.function
    def k(a, b=2.0):
        traced.append(1)
        return a * b

    x = em.constant(3.0)
    assert [float(k(x)), float(k(a=x)), float(k(x, b=4.0)), float(k(a=x, b=4.0))] == \
        [6.0, 6.0, 12.0, 12.0]
    assert len(traced) == 2 == k.experimental_get_tracing_count()


def test_a_returned_variable_is_its_value_at_the_end_of_each_call():
    v = em.Variable(0)
    g = graph.function(lambda: v.assign_add(1))
    r1, r2, r3 = g(), g(), g()
    assert [int(r1), int(r2), int(r3)] == [1, 2, 3]
    assert not isinstance(r1, em.Variable)


def test_printing_a_tensor_while_tracing_shows_it_symbolically_and_keeps_one_trace():
    seen = []

    @graph.function
    def p(a):
        seen.append(repr(a))
        return a + a

    assert [int(p(em.constant(i))) for i in (1, 2, 3)] == [2, 4, 6]
    assert seen == ["ember.Tensor(<traced>, shape=(), dtype=int32)"]
    assert p.experimental_get_tracing_count() == 1


def test_em_print_prints_on_every_call_replays_included():
    out = io.StringIO()

    @graph.function
    def f(a):
        em.print("Executed with", a, output_stream=out)
        return a + 1

    for i in (1, 2, 1):
        f(em.constant(i))
    assert out.getvalue() == "Executed with 1\nExecuted with 2\nExecuted with 1\n"
    assert f.experimental_get_tracing_count() == 1


def test_a_signature_mismatch_is_a_type_error_as_tensorflows_and_a_value_error():
    f = graph.function(lambda x: x, input_signature=[graph.TensorSpec([None], em.int32)])
    for cls in (TypeError, ValueError, graph.SignatureMismatchError):
        with pytest.raises(cls, match="does not match its input_signature"):
            f(em.constant([1.0]))


def test_python_numbers_returned_come_back_as_tensors():
    f = graph.function(lambda x: (0 if x < 0 else x, 2.5, True))
    for value in (-1, -2, 3):  # traced, replayed, traced again (the guard on x < 0)
        out = f(em.constant(value))
        assert all(isinstance(o, em.Tensor) for o in out)
        assert [o.numpy().item() for o in out] == [max(value, 0), 2.5, True]
        assert [o.dtype for o in out] == [em.int32, em.float32, em.bool]
