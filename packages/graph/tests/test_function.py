"""graph.function: signatures, retracing, arguments, results, eager fallbacks."""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import ember.core as em
from ember import graph
from ember.core import extend


def test_replay_computes_new_values_without_running_python():
    calls = []

    @graph.function
    def f(x, y):
        calls.append(1)  # a Python side effect: happens only while tracing
        return em.reduce_sum(x * y + x)

    for k in range(4):
        x = em.constant(np.arange(3.0, dtype=np.float32) + k)
        y = em.constant(np.full(3, 2.0 + k, np.float32))
        assert_allclose(f(x, y).numpy(), float(np.sum(x.numpy() * y.numpy() + x.numpy())))
    assert len(calls) == 1
    assert f.experimental_get_tracing_count() == 1


@pytest.mark.filterwarnings("ignore:graph.function")
def test_new_shape_dtype_or_python_value_retraces():
    @graph.function
    def f(x, scale):
        return x * scale

    f(em.constant([1.0, 2.0]), 2.0)
    f(em.constant([3.0, 4.0]), 2.0)
    assert f.experimental_get_tracing_count() == 1
    assert_array_equal(f(em.constant([1.0, 2.0, 3.0]), 2.0).numpy(), [2, 4, 6])
    assert_array_equal(f(em.constant([1.0, 2.0], dtype=em.float64), 2.0).numpy(), [2, 4])
    assert_array_equal(f(em.constant([1.0, 2.0]), 3.0).numpy(), [3, 6])
    assert f.experimental_get_tracing_count() == 4
    assert f(em.constant([1.0, 2.0]), 3).dtype == em.float32  # int 3 != float 3.0: traced


def test_numpy_arrays_are_tensor_arguments():
    @graph.function
    def f(x):
        return x + 1

    assert_array_equal(f(np.array([1.0, 2.0], np.float32)).numpy(), [2, 3])
    assert_array_equal(f(np.array([5.0, 6.0], np.float32)).numpy(), [6, 7])
    assert f.experimental_get_tracing_count() == 1


def test_the_same_tensor_twice_is_part_of_the_signature():
    @graph.function
    def f(a, b):
        return a - b

    x = em.constant([1.0, 2.0])
    assert_array_equal(f(x, x).numpy(), [0, 0])
    assert_array_equal(f(x, em.constant([1.0, 1.0])).numpy(), [0, 1])


def test_unhashable_argument_is_named():
    @graph.function
    def f(x, opts):
        return x

    with pytest.raises(TypeError, match=r"argument 1.*set.*not hashable"):
        f(em.constant(1.0), {1, 2})


def test_nested_arguments_and_results():
    Pair = collections.namedtuple("Pair", ["a", "b"])

    @graph.function
    def f(inputs):
        return {"sum": inputs["x"][0] + inputs["x"][1], "pair": Pair(inputs["y"] * 2, 7)}

    def call(k):
        return f({"x": [em.constant(1.0 + k), em.constant(2.0)], "y": em.constant(k)})

    call(0.0)
    out = call(5.0)
    assert float(out["sum"]) == 8.0 and float(out["pair"].a) == 10.0 and out["pair"].b == 7
    assert isinstance(out["pair"], Pair)
    assert f.experimental_get_tracing_count() == 1


def test_results_of_two_calls_are_independent():
    @graph.function
    def f(x):
        return x * 2

    a = f(em.constant([1.0]))
    b = f(em.constant([2.0]))
    c = f(em.constant([3.0]))
    assert (float(a), float(b), float(c)) == (2.0, 4.0, 6.0)


def test_max_traces_keeps_the_most_recent():
    @graph.function(max_traces=2)
    def f(x):
        return x + 1

    for n in (1, 2, 3):
        f(em.zeros([n]))
    assert f.cache_size() == 2
    f(em.zeros([3]))  # kept
    assert f.experimental_get_tracing_count() == 3
    f(em.zeros([1]))  # evicted: traced again
    assert f.experimental_get_tracing_count() == 4


def test_retrace_warning_names_the_argument():
    @graph.function
    def f(x, n):
        return x * n

    with pytest.warns(UserWarning, match=r"traced 5 times.*argument 1"):
        for n in range(6):
            f(em.constant(1.0), float(n))


def test_reduce_retracing_runs_new_shapes_eagerly():
    @graph.function(reduce_retracing=True)
    def f(x):
        return em.reduce_sum(x)

    for n in range(1, 7):
        assert float(f(em.ones([n]))) == n
    assert f.experimental_get_tracing_count() == 2


def test_bad_arguments_are_rejected_by_name():
    with pytest.raises(ValueError, match="max_traces"):
        graph.function(lambda x: x, max_traces=0)
    with pytest.raises(TypeError, match="max_traces"):
        graph.function(lambda x: x, max_traces=2.0)
    with pytest.raises(TypeError, match="reduce_retracing"):
        graph.function(lambda x: x, reduce_retracing="yes")
    with pytest.raises(TypeError, match="callable"):
        graph.function(3)
    with pytest.raises(TypeError, match="run_eagerly"):
        graph.run_functions_eagerly(1)
    with pytest.raises(ValueError, match="jit_compile=True asks for XLA"):
        graph.function(lambda x: x, jit_compile=True)


def test_tensorflow_s_jit_compile_false_and_relax_shapes_are_honoured():
    f = graph.function(lambda x: x * 2, jit_compile=False)
    assert float(f(em.constant(2.0))) == 4.0
    g = graph.function(lambda x: x * 2, experimental_relax_shapes=True)
    for n in (1, 2, 3, 4):
        g(em.ones((n,)))
    assert g.experimental_get_tracing_count() == 2  # reduce_retracing's rule


def test_run_functions_eagerly_runs_python_every_call():
    calls = []

    @graph.function
    def f(x):
        calls.append(1)
        return x + 1

    graph.run_functions_eagerly(True)
    try:
        assert graph.functions_run_eagerly()
        f(em.constant(1.0))
        f(em.constant(2.0))
    finally:
        graph.run_functions_eagerly(False)
    assert len(calls) == 2 and f.experimental_get_tracing_count() == 0


def test_methods_are_traced_per_instance():
    class Scale:
        def __init__(self, k):
            self.k = em.Variable(k)

        @graph.function
        def __call__(self, x):
            return x * self.k

    a, b = Scale(2.0), Scale(3.0)
    assert float(a(em.constant(1.0))) == 2.0
    assert float(b(em.constant(1.0))) == 3.0
    assert float(a(em.constant(5.0))) == 10.0


def test_a_function_made_of_untraced_tensors_runs_eagerly_with_a_warning():
    @graph.function
    def f(x):
        a = extend.array_of(x)
        return extend.tensor_from_array(a * 2, extend.device_of(x))

    assert float(f(em.constant(1.0))) == 2.0
    with pytest.warns(UserWarning, match="tensor_from_array"):
        assert float(f(em.constant(2.0))) == 4.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(f(em.constant(3.0))) == 6.0  # eager from now on, warned once


def test_nested_functions_are_inlined():
    @graph.function
    def inner(x):
        return x * 3

    @graph.function
    def outer(x):
        return inner(x) + 1

    outer(em.constant(1.0))
    assert float(outer(em.constant(2.0))) == 7.0
    assert inner.experimental_get_tracing_count() == 0  # ran eagerly inside the trace


def test_dead_ops_are_not_replayed():
    @graph.function
    def f(x):
        unused = em.exp(x) * 5  # noqa: F841
        return x + 1

    f(em.constant([1.0]))
    plan = f._cache[next(iter(f._cache))].entries[0].plan
    assert plan.ops_recorded == 3 and plan.ops_kept == 1


def test_an_attribute_holding_a_traced_array_is_refused_by_name():
    op = extend.register_op("graph_test_add_attr", lambda be, x, *, w: x + w, family="math")
    try:
        @graph.function
        def f(x, y):
            z = y * 2.0  # a traced value, passed as an attribute below
            return extend.run_op(op, (x,), {"w": extend.array_of(z)})

        assert float(f(em.constant(1.0), em.constant(1.0))) == 3.0
        with pytest.warns(UserWarning, match="'graph_test_add_attr' took a traced value as its "
                                             "attribute 'w'"):
            assert float(f(em.constant(1.0), em.constant(2.0))) == 5.0
        assert float(f(em.constant(1.0), em.constant(3.0))) == 7.0  # eager: not frozen
    finally:
        del extend.REGISTRY[op.name]


def test_evicting_traces_past_a_signature_marked_eager_ends():
    # the oldest signature ran eagerly (its replays kept failing a guard) and held no
    # trace: evicting for later sizes looped forever on it (TF's pandas tutorial hung)
    def scale(x):
        return x * float(x[0])  # a host read: each new value fails the guard

    f = graph.function(scale, max_traces=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for v in range(1, 7):
            f(em.constant([float(v)]))
        for n in range(2, 6):
            np.testing.assert_array_equal(f(em.constant([2.0] * n)).numpy(), [4.0] * n)
            assert f.cache_size() <= 2


def test_its_warnings_point_at_the_users_call():
    f = graph.function(lambda x: x * float(x[0]))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for v in range(1, 8):
            f(em.constant([float(v)]))  # the line the warnings must name
    assert seen and all(w.filename == __file__ for w in seen), [
        (w.filename, w.lineno) for w in seen]


def test_a_numpy_scalar_argument_is_a_tensor_traced_once():
    """A numpy scalar (``Dataset.enumerate()``'s step, an np.int64) is taken as a 0-d
    tensor, as TensorFlow's function takes NumPy inputs: one trace for every value (ember
    keyed it by value, one trace a step: TensorFlow's pix2pix tutorial traced 300 times)."""
    @graph.function
    def scaled(x, step):
        return x * em.cast(step, em.float32)

    for i in range(6):
        out = scaled(em.constant(2.0), np.int64(i))
        assert float(out) == 2.0 * i
    assert scaled.experimental_get_tracing_count() == 1

    @graph.function
    def branch(flag):  # a numpy bool read in Python is a guard: each value its own path
        return em.constant(1.0) if flag else em.constant(0.0)

    assert float(branch(np.bool_(True))) == 1.0 and float(branch(np.bool_(False))) == 0.0
    assert float(branch(np.bool_(True))) == 1.0
