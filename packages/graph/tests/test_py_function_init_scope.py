"""em.py_function runs on every call of a traced function; em.init_scope runs once, while
tracing, and refuses the function's values (TensorFlow's semantics for both)."""

import pytest

import ember.core as em
from ember import graph


def test_py_function_runs_on_every_replay_with_that_calls_values():
    seen = []

    def record(x):
        seen.append(float(x))
        return x * 10.0

    @graph.function
    def f(x):
        return em.py_function(record, [x + 1.0], Tout=em.float32) + 1.0

    assert [float(f(em.constant(v))) for v in (1.0, 2.0, 3.0)] == [21.0, 31.0, 41.0]
    assert seen == [2.0, 3.0, 4.0]
    assert f.experimental_get_tracing_count() == 1


def test_an_unused_py_function_still_runs_and_result_shapes_are_checked():
    seen = []

    @graph.function
    def f(x):
        em.py_function(lambda v: seen.append(1), [x], Tout=[])
        a, b = em.py_function(lambda v: (v, v[: int(v[0])]), [x], Tout=[em.float32, em.float32])
        return em.reduce_sum(a) + em.reduce_sum(b)

    assert float(f(em.constant([1.0, 5.0]))) == 7.0
    assert float(f(em.constant([2.0, 5.0]))) == 14.0  # the second result grew: traced again
    assert seen == [1, 1]


def test_py_function_refuses_what_it_cannot_honour():
    with pytest.raises(em.InvalidArgumentError, match="give Tout"):
        em.py_function(lambda x: x, [1.0])
    with pytest.raises(em.DTypeError, match="result 0 is int32, Tout says float32"):
        em.py_function(lambda x: em.constant(1), [1.0], Tout=em.float32)
    with pytest.raises(em.InvalidArgumentError, match="returned 1 values for Tout's 2"):
        em.py_function(lambda x: [x], [1.0], Tout=[em.float32, em.float32])


def test_init_scope_runs_once_while_tracing():
    class Model:
        def __init__(self):
            self.v = em.Variable(0)
            self.counter = 0

        @graph.function
        def __call__(self):
            if self.counter == 0:
                with em.init_scope():
                    self.counter += 1
                    self.v.assign_add(1)
            return self.v

    m = Model()
    assert [int(m()) for _ in range(3)] == [1, 1, 1]


def test_init_scope_refuses_a_value_the_trace_computed():
    @graph.function
    def f(x):
        y = x * 2.0
        with em.init_scope():
            return y + 1.0

    with pytest.raises(em.InvalidArgumentError, match="init_scope: op 'add' took a value"):
        f(em.constant(1.0))


def test_a_generators_state_read_in_a_trace_is_live():
    # the state is Python numbers read on the host: a replay would have frozen it
    g = em.random.Generator.from_seed(1)

    @graph.function
    def counter():
        return g.state["counter"]

    seen = []
    with pytest.warns(UserWarning, match="random Generator's state"):
        for _ in range(3):
            seen.append(int(counter()))
            g.normal([])
    assert seen == [0, 1, 2]
