"""A tensor computed while a function is traced, and kept outside it without being
returned, is refused when used (as TensorFlow's leaked graph tensors are): replays never
update it, so its value would be the first call's for ever."""

from __future__ import annotations

import pytest

import ember.core as em
from ember import graph


def test_a_leaked_tensor_is_refused_and_returned_values_are_fresh(device):
    kept = {}

    @graph.function
    def leaky(a):
        kept["x"] = a + 1  # leaked: never returned
        y = a * 2
        kept["y"] = y  # leaked too, though returned
        return y

    with em.device(device):
        first = leaky(em.constant(1.0))
        assert float(first) == 2.0  # the traced call's own result is a value
        for name in ("x", "y"):
            with pytest.raises(em.LeakedTensorError, match="graph.function .*leaky.* was "
                               "traced.*Return the value"):
                kept[name].numpy()
            with pytest.raises(TypeError, match="leaked out of a trace"):
                em.add(kept[name], 1.0)
            with pytest.raises(AttributeError):
                kept[name].numpy()
        assert kept["x"].shape == () and "leaked" in repr(kept["x"])
        assert float(leaky(em.constant(5.0))) == 10.0  # replays are unaffected
        assert float(first) == 2.0


def test_a_leaked_tensor_captured_by_another_function_is_refused(device):
    box = []

    @graph.function
    def leaky(a):
        box.append(a + 1)
        return a

    @graph.function
    def captures(b):
        return b + box[0]

    with em.device(device):
        leaky(em.constant(1.0))
        with pytest.raises(TypeError, match="leaked out of a trace"):
            captures(em.constant(2.0))


def test_what_the_call_did_not_make_stays_usable(device):
    with em.device(device):
        v = em.Variable(1.0)
        c = em.constant(3.0)
        seen = {}

        @graph.function
        def step(x):
            seen["x"], seen["c"], seen["read"] = x, c, v.value()
            v.assign_add(x * c)
            seen["v"] = v.value()  # the variable holds it: not expired
            return v.value()

        x = em.constant(1.0)
        assert float(step(x)) == 4.0
        assert float(seen["x"]) == 1.0 and float(seen["c"]) == 3.0
        assert float(v) == 4.0 and float(seen["read"]) == 1.0
        assert float(step(x)) == 7.0 and float(v) == 7.0


def test_a_function_that_runs_eagerly_leaks_nothing_stale(device):
    kept = []

    @graph.function
    def untraceable(a):
        em.Variable(0.0)  # made on every call: such a function runs eagerly
        kept.append(a + 1)
        return a

    with em.device(device), pytest.warns(UserWarning):
        for i in range(3):
            untraceable(em.constant(float(i)))
    # each call ran eagerly: what it kept is that call's value
    assert [float(k) for k in kept] == [1.0, 2.0, 3.0]


def test_host_calls_get_each_calls_values(device):
    import io

    out = io.StringIO()

    @graph.function
    def f(a):
        b = a * 3
        em.print(b, output_stream=out)  # a host call after each call: b is its output
        return b + 1

    with em.device(device):
        for i in range(3):
            assert float(f(em.constant(float(i)))) == 3.0 * i + 1
    assert out.getvalue().split() == ["0", "3", "6"]


def test_fill_with_a_tensor_value_replays_with_the_calls_value():
    # em.fill kept a tensor value as a constant of the op: a replay read the tracing
    # call's tensor, which had expired (LeakedTensorError), where TF's fill takes it
    # as an input
    @graph.function
    def filled(v):
        return em.fill([2, 2], v * 2.0)

    assert filled(em.constant(1.0)).numpy().tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert filled(em.constant(3.0)).numpy().tolist() == [[6.0, 6.0], [6.0, 6.0]]
    with pytest.raises(em.InvalidArgumentError, match=r"fill: value must be 0-d"):
        em.fill([2], em.constant([1.0, 2.0]))
