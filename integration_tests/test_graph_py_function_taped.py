"""em.py_function, em.numpy_function and em.init_scope under a gradient tape (ember-graph's own tests run
without ember-tape installed): a traced py_function under a tape runs eagerly so that the
tape sees its ops; init_scope's block is not taped and may make variables once."""

import numpy as np

import ember.core as em
from ember import graph, tape


def test_py_function_under_a_tape_is_differentiated_through_its_ops():
    x = em.Variable(3.0)

    @graph.function
    def f(v):
        return em.py_function(lambda a: a * a, [v], Tout=em.float32)

    for fn in (f, lambda v: em.py_function(lambda a: a * a, [v], Tout=em.float32)):
        with tape.GradientTape() as t:
            y = fn(x)
        assert float(t.gradient(y, x)) == 6.0


def test_numpy_function_has_no_gradient_and_its_trace_replays_under_a_tape():
    # TF's actor-critic tutorial steps its environment with tf.numpy_function inside a
    # tf.function that a GradientTape records: one trace, the function called every call
    import warnings

    v = em.Variable(1.0)
    seen = []

    def env_step(a):
        assert isinstance(a, np.ndarray)  # numpy values, not tensors
        seen.append(float(a))
        return (a * 2).astype(np.float32), np.int32(len(seen))

    @graph.function
    def f(x):
        with tape.GradientTape() as t:
            doubled, count = em.numpy_function(env_step, [x], [em.float32, em.int32])
            y = doubled * v
        return t.gradient(y, v), count

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "runs eagerly" warning
        got = [f(em.constant(float(i))) for i in range(4)]
    assert [float(g) for g, _ in got] == [0.0, 2.0, 4.0, 6.0]
    assert [int(c) for _, c in got] == [1, 2, 3, 4] and seen == [0.0, 1.0, 2.0, 3.0]
    assert f.experimental_get_tracing_count() == 1
    x = em.Variable(2.0)
    with tape.GradientTape() as t:
        y = em.numpy_function(lambda a: a * 3, [x], em.float32)
    assert float(y) == 6.0 and t.gradient(y, x) is None  # TF: no gradient


def test_init_scope_may_make_variables_and_is_not_taped():
    holder = {}

    @graph.function
    def f(x):
        if "w" not in holder:
            with em.init_scope():
                holder["w"] = em.Variable(np.full(2, 3.0, np.float32))
        return x * holder["w"]

    np.testing.assert_array_equal(f(em.constant([1.0, 2.0])).numpy(), [3.0, 6.0])
    np.testing.assert_array_equal(f(em.constant([2.0, 2.0])).numpy(), [6.0, 6.0])
    x = em.Variable(2.0)
    with tape.GradientTape(persistent=True) as t:
        with em.init_scope():
            y = x * x
        z = x * 3.0
    assert t.gradient(y, x) is None and float(t.gradient(z, x)) == 3.0
