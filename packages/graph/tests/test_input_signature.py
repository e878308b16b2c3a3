"""graph.function(input_signature=[graph.TensorSpec(...)]): calls are checked against the
specs (errors name the argument, the spec and what was given), Python values are refused,
and a ``None`` size accepts every size. A trace is made at one concrete shape (Python
integers taken from shapes are part of it), so each size is traced once and replayed
after; ops whose results depend on the batch size compute what eager execution does at
every size, bit for bit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember import graph

rng = np.random.default_rng(0)
X = graph.TensorSpec([None, 3], em.float32)


def _batch(n, cols=3):
    return rng.standard_normal((n, cols)).astype(np.float32)


# --- TensorSpec ------------------------------------------------------------------------
def test_tensor_spec_fields_equality_and_compatibility():
    spec = graph.TensorSpec([None, 3], em.float32, name="x")
    assert spec.shape == (None, 3) and spec.dtype == em.float32 and spec.name == "x"
    assert repr(spec) == "TensorSpec(shape=(None, 3), dtype=float32, name='x')"
    assert spec == graph.TensorSpec((None, 3), "float32", "x")
    assert spec != graph.TensorSpec((None, 3), em.float32)
    assert len({spec, graph.TensorSpec((None, 3), em.float32, "x")}) == 1
    assert graph.TensorSpec([]).dtype == em.float32  # the default dtype, as TensorFlow's
    assert spec.is_compatible_with(em.zeros([7, 3]))
    assert spec.is_compatible_with(np.zeros((0, 3), np.float32))
    assert spec.is_compatible_with(graph.TensorSpec([2, 3]))
    assert not spec.is_compatible_with(em.zeros([7, 4]))
    assert not spec.is_compatible_with(em.zeros([7, 3, 1]))
    assert not spec.is_compatible_with(em.zeros([7, 3], dtype=em.float64))
    assert not spec.is_compatible_with([[1.0, 2.0, 3.0]])
    anything = graph.TensorSpec(None, em.int32)
    assert anything.shape is None and repr(anything).startswith("TensorSpec(shape=None")
    assert anything.is_compatible_with(em.zeros([2, 2, 2], dtype=em.int32))
    t = em.zeros([4, 2], dtype=em.int64)
    assert graph.TensorSpec.from_tensor(t, "t") == graph.TensorSpec([4, 2], em.int64, "t")


@pytest.mark.parametrize("shape, error, match", [
    ([2.5], TypeError, "whole number or None"),
    ([True], TypeError, "whole number or None"),
    ("ab", TypeError, "sequence of sizes"),
    (3, TypeError, "sequence of sizes"),
    ([-1, 3], ValueError, "non-negative"),
])
def test_tensor_spec_refuses_bad_shapes(shape, error, match):
    with pytest.raises(error, match=match):
        graph.TensorSpec(shape)


def test_tensor_spec_refuses_bad_dtype_and_name():
    with pytest.raises(TypeError, match="dtype must be a dtype"):
        graph.TensorSpec([2], dtype="no-such-dtype")
    with pytest.raises(TypeError, match="name must be a string"):
        graph.TensorSpec([2], name=3)
    with pytest.raises(TypeError, match="expected a tensor"):
        graph.TensorSpec.from_tensor([1.0])


def test_input_signature_itself_is_checked():
    with pytest.raises(TypeError, match="input_signature must be a list or tuple"):
        graph.function(lambda x: x, input_signature=X)
    with pytest.raises(TypeError, match=r"input_signature\[1\] must be a graph.TensorSpec"):
        graph.function(lambda x, y: x, input_signature=[X, 3])
    with pytest.raises(TypeError, match=r"takes \*\*kw; with an input_signature"):
        graph.function(lambda x, **kw: x, input_signature=[X])
    f = graph.function(lambda x: x, input_signature=(X,))
    assert f.input_signature == (X,)
    assert graph.function(lambda x: x).input_signature is None


# --- one trace per size, never a plan of another size ----------------------------------
def _batch_dependent(x):
    """Ops whose results depend on the batch size: a mean over the batch, a reshape with
    -1 (resolved to a size while tracing), and a sum divided by the batch size read from
    the shape in Python."""
    centered = x - em.reduce_mean(x, axis=0)
    flat = em.reshape(centered, (-1,))
    per_example = em.reduce_sum(x * x) / x.shape[0]
    return flat, per_example, em.reduce_mean(x)


def test_each_size_is_traced_once_and_every_call_is_computed_as_eagerly():
    f = graph.function(_batch_dependent, input_signature=[X])
    sizes = [4, 2, 4, 7, 2, 7, 4, 1]
    for n in sizes:
        x = em.constant(_batch(n))
        for got, want in zip(f(x), _batch_dependent(x)):
            assert got.shape == want.shape
            assert_array_equal(got.numpy(), want.numpy())
    assert f.experimental_get_tracing_count() == len(set(sizes))  # the rest replayed


def test_new_sizes_do_not_warn_about_retracing():
    f = graph.function(lambda x: x * 2.0, input_signature=[graph.TensorSpec([None])])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in range(1, 8):
            f(em.ones([n]))
    assert f.experimental_get_tracing_count() == 7


def test_each_size_gets_its_own_plan(device):
    f = graph.function(lambda x: em.reduce_sum(x * 3.0 + 1.0, axis=0),
                       input_signature=[graph.TensorSpec([None, 2])])
    for n in [3, 5] * 4:
        x = em.constant(_batch(n, 2))
        assert_array_equal(f(x).numpy(), em.reduce_sum(x * 3.0 + 1.0, axis=0).numpy())
    status = f.cuda_graph_status()
    assert len(status) == 2  # one plan per size, each replayed three times
    if device.startswith("/gpu"):
        assert status == ["call: captured (launched 2 times)"] * 2
    else:
        assert all("its device cannot capture graphs" in s for s in status)


def _per_size(x):
    """Everything a trace takes from the batch size: a product and a softmax over it, a
    mean over the batch, a reshape's -1 and the size read in Python."""
    w = em.constant(np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4))
    h = em.nn_ops.softmax(em.matmul(x, w))
    centered = h - em.reduce_mean(h, axis=0)
    return em.reshape(centered, (-1,)), em.reduce_sum(h * h) / x.shape[0]


def test_three_sizes_are_each_traced_once_and_replayed_as_eager_computes_them(device):
    """A trace holds the sizes it was made at (``_per_size``), so each size of a None
    dimension has its own trace and plan, kept and replayed; every call, traced or
    replayed, equals the eager call at its size bit for bit."""
    f = graph.function(_per_size, input_signature=[X])
    sizes = [5, 2, 9]
    for _ in range(3):  # a round of traces, then two of replays
        for n in sizes:
            x = em.constant(_batch(n))
            got, want = f(x), _per_size(x)
            for g, w in zip(got, want):
                assert g.shape == w.shape and g.device == w.device == device
                assert_array_equal(g.numpy(), w.numpy())
        assert f.experimental_get_tracing_count() == len(sizes)  # rounds 2, 3: replays
    assert f.cache_size() == len(sizes)
    assert len(f.cuda_graph_status()) == len(sizes)  # one plan per size


def test_a_call_that_does_not_fit_names_the_function_argument_spec_and_shape():
    @graph.function(input_signature=[graph.TensorSpec([None, 784], em.float32)])
    def embed(x):
        return x

    spec = r"TensorSpec\(shape=\(None, 784\), dtype=float32, name=None\)"
    for bad, got in [(em.zeros([2, 783]), r"a tensor of shape \(2, 783\) and dtype float32"),
                     (em.zeros([784]), r"a tensor of shape \(784,\) and dtype float32"),
                     (em.zeros([2, 784], dtype=em.float64),
                      r"a tensor of shape \(2, 784\) and dtype float64")]:
        with pytest.raises(ValueError, match=r"\.embed: argument 'x' does not match its "
                           rf"input_signature: expected {spec}, got {got}$"):
            embed(bad)
    assert embed.experimental_get_tracing_count() == 0
    assert embed(em.zeros([0, 784])).shape == (0, 784)  # an empty batch is a size too


def test_reduce_retracing_does_not_make_signature_sizes_eager():
    calls = []

    def fn(x):
        calls.append(1)
        return x + 1.0

    f = graph.function(fn, input_signature=[graph.TensorSpec([None])], reduce_retracing=True)
    for n in [1, 2, 3, 4, 3, 4]:
        f(em.ones([n]))
    assert f.experimental_get_tracing_count() == 4 and len(calls) == 4


# --- what a call may pass ----------------------------------------------------------------
def test_calls_that_do_not_fit_name_the_argument_the_spec_and_what_was_given():
    f = graph.function(lambda x, y: x, input_signature=[X, graph.TensorSpec([], em.int32)])
    y = em.constant(1)
    with pytest.raises(ValueError, match=r"argument 'x' does not match its input_signature: "
                       r"expected TensorSpec\(shape=\(None, 3\), dtype=float32, name=None\), "
                       r"got a tensor of shape \(2, 4\) and dtype float32"):
        f(em.zeros([2, 4]), y)
    with pytest.raises(ValueError, match=r"argument 'x'.*got a numpy array of shape \(2, 3\) "
                       r"and dtype float64"):
        f(np.zeros((2, 3)), y)
    with pytest.raises(ValueError, match=r"argument 'x'.*got a tensor of shape \(3,\)"):
        f(em.zeros([3]), y)
    with pytest.raises(ValueError, match=r"argument 'y'.*dtype=int32.*got a tensor of shape "
                       r"\(\) and dtype int64"):
        f(em.zeros([1, 3]), em.constant(1, dtype=em.int64))
    with pytest.raises(TypeError, match=r"argument 'x' must be a tensor matching its "
                       r"input_signature TensorSpec\(shape=\(None, 3\).*got str 'a'"):
        f("a", y)
    assert f.experimental_get_tracing_count() == 0


def test_python_values_are_refused_and_numbers_become_tensors_of_the_spec():
    @graph.function(input_signature=[graph.TensorSpec([], em.float32),
                                     graph.TensorSpec([2], em.int32)])
    def f(x, n):
        return x * em.cast(em.reduce_sum(n), em.float32)

    assert float(f(2, [1, 2])) == 6.0  # TensorFlow converts them with the spec's dtype
    assert float(f(np.float32(0.5), np.array([3, 4], np.int32))) == 3.5
    with pytest.raises(ValueError, match=r"argument 'n'.*dtype=int32.*dtype float64"):
        f(1.0, [1.5, 2.0])  # not held by an int32 exactly
    with pytest.raises(TypeError, match=r"argument 'x' must be a tensor"):
        f(None, [1, 2])
    with pytest.raises(ValueError, match=r"argument 'x'.*dtype=float32.*dtype bool"):
        f(True, [1, 2])  # a bool is not a float
    with pytest.raises(TypeError, match=r"argument 'training' is not described by its "
                       r"input_signature"):
        f(1.0, [1, 2], training=True)
    with pytest.raises(TypeError, match=r"got 3 positional arguments, but its "
                       r"input_signature describes 2"):
        f(1.0, [1, 2], 3)
    with pytest.raises(TypeError, match=r"missing argument 'n', described by "
                       r"input_signature\[1\]"):
        f(1.0)
    with pytest.raises(TypeError, match=r"multiple values for argument 'x'"):
        f(1.0, [1, 2], x=2.0)
    assert float(f(n=[2, 2], x=1.0)) == 4.0  # keywords bind to the parameters they name


def test_nested_specs_and_their_errors():
    sig = [{"a": graph.TensorSpec([None]), "b": [graph.TensorSpec([2]), graph.TensorSpec([])]}]
    f = graph.function(lambda d: d["a"] * d["b"][1] + em.reduce_sum(d["b"][0]),
                       input_signature=sig)
    d = {"a": em.ones([3]), "b": [em.ones([2]), em.constant(2.0)]}
    assert_array_equal(f(d).numpy(), [4.0, 4.0, 4.0])
    with pytest.raises(ValueError, match=r"argument 'd'\['b'\]\[0\] does not match.*"
                       r"shape=\(2,\).*got a tensor of shape \(3,\)"):
        f({"a": em.ones([3]), "b": [em.ones([3]), em.constant(2.0)]})
    with pytest.raises(TypeError, match=r"argument 'd' must be a dict with keys \['a', 'b'\]"):
        f({"a": em.ones([3])})
    with pytest.raises(TypeError, match=r"argument 'd'\['b'\] must be a list or tuple of 2"):
        f({"a": em.ones([3]), "b": em.ones([2])})


def test_methods_take_the_instance_outside_the_signature():
    class Scaler:
        def __init__(self, k):
            self.k = em.Variable(k)

        @graph.function(input_signature=[graph.TensorSpec([None])])
        def __call__(self, x):
            return x * self.k

    s = Scaler(3.0)
    assert_array_equal(s(em.ones([2])).numpy(), [3.0, 3.0])
    assert_array_equal(s(x=np.ones(4, np.float32)).numpy(), [3.0] * 4)
    with pytest.raises(ValueError, match=r"argument 'x' does not match"):
        s(em.ones([2, 2]))


def test_variables_are_read_and_eager_runs_are_checked_too():
    f = graph.function(lambda x: x + 1.0, input_signature=[graph.TensorSpec([2])])
    v = em.Variable([1.0, 2.0])
    assert_array_equal(f(v).numpy(), [2.0, 3.0])
    graph.run_functions_eagerly(True)
    try:
        with pytest.raises(ValueError, match="does not match its input_signature"):
            f(em.ones([3]))
    finally:
        graph.run_functions_eagerly(False)
