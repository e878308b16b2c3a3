"""Replays write element-wise results into dead intermediates, never into a live buffer.

With no device fixture, these run on the default device: the CPU, or the GPU where one is
present (``EMBER_TEST_BACKENDS=present-gpu`` makes the strict double that GPU), where the
buffers are device memory and runs of element-wise ops are one fused kernel (``_fuse``).
"""

from __future__ import annotations

import numpy as np
from numpy.testing import assert_array_equal

import ember.core as em
from ember import graph
from ember.core.extend import array_of, device_of

RNG = np.random.default_rng(0)


def _plan(f):
    return f._cache[next(iter(f._cache))].entries[0].plan


def _assert_replays_like_eager(body, *shapes, in_place_at_least=0):
    f = graph.function(body)
    first = [em.constant(RNG.standard_normal(s).astype(np.float32)) for s in shapes]
    f(*first)
    kept = []
    for _ in range(3):
        args = [em.constant(RNG.standard_normal(s).astype(np.float32)) for s in shapes]
        got = f(*args)
        kept.append((got, body(*args)))
    for got, want in kept:  # earlier results are not overwritten by later replays
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            assert_array_equal(g.numpy(), w.numpy())
    assert _plan(f).ops_in_place >= in_place_at_least
    return _plan(f)


def _buffer(t):
    """The buffer a tensor's array lives in (an address on a GPU, an id on the CPU)."""
    return device_of(t).backend.buffer_of(array_of(t))


def test_a_chain_reuses_its_buffers():
    # The product dies in the element-wise chain after it: on the CPU each of the 4 ops
    # writes into its buffer in turn; on a GPU they are one fused kernel, which does.
    plan = _assert_replays_like_eager(
        lambda x, w: (em.matmul(x, w) * 2.0 + 1.0) * 3.0 - 1.0, (64, 32), (32, 16),
        in_place_at_least=1)
    assert plan.names[0] == "matmul"
    assert plan.steps_in_place == plan.names[1:]
    assert plan.ops_in_place == (1 if plan.ops_fused else 4)


def test_a_step_never_writes_a_buffer_another_of_its_inputs_views():
    def body(x):
        y = x * 2.0
        return (y + em.transpose(y)) * 1.0  # y dies here, read with its own transpose

    plan = _assert_replays_like_eager(body, (16, 16))
    # a fused kernel writing into y would read elements of y.T other threads overwrote
    assert not [n for n in plan.steps_in_place if n.startswith(("add", "fused[add"))]


def test_a_view_of_a_dying_value_keeps_it_alive():
    def body(x):
        y = x * 2.0
        t = em.transpose(y)  # a view of y's buffer
        z = y + 1.0  # y's last use, but t still needs the buffer
        return z, t * 1.0

    _assert_replays_like_eager(body, (8, 8))


def test_reshape_views_and_inputs_are_never_written():
    def body(x, w):
        r = em.reshape(x, (4, 16)) * 1.0  # x is an argument: never written
        s = em.reshape(r, (8, 8))  # a view of r
        u = r + 3.0  # r's last use; s (same buffer) is used below
        return u, s * w

    _assert_replays_like_eager(body, (8, 8), (8, 8))


def test_results_and_variables_are_never_written():
    v = em.Variable(np.ones((4, 4), np.float32))

    def body(x):
        a = x * 2.0
        v.assign(a)  # a is the variable's new value: pinned
        b = a + 1.0
        return b, b * 2.0

    f = graph.function(body)
    f(em.ones([4, 4]))
    f(em.ones([4, 4]))
    out = f(em.fill([4, 4], 3.0))
    assert_array_equal(v.numpy(), np.full((4, 4), 6.0))
    assert_array_equal(out[0].numpy(), np.full((4, 4), 7.0))
    assert_array_equal(out[1].numpy(), np.full((4, 4), 14.0))


def _sgd_step(v, cuda_graphs=False):
    """An optimizer's step. Replayed op by op: a captured CUDA Graph (on a GPU) copies
    the variables it reads in and its results out (``test_cuda_graph``)."""
    def step(g):
        v.assign_sub(g * 0.5)
    return graph.function(step, cuda_graphs=cuda_graphs)


def _count_updating_replays(step):
    plan = _plan(step)
    assert plan.replay_updating is not None
    calls = []
    inner = plan.replay_updating

    def counted(*args):
        calls.append(1)
        return inner(*args)

    plan.replay_updating = counted
    return calls


def test_a_variable_nobody_else_holds_is_updated_in_its_own_buffer():
    v = em.Variable(np.ones((8, 8), np.float32))
    step = _sgd_step(v)
    step(em.ones([8, 8]))
    calls = _count_updating_replays(step)
    before = _buffer(v.value())
    step(em.ones([8, 8]))
    step(em.ones([8, 8]))
    assert len(calls) == 2
    assert _buffer(v.value()) == before  # its own buffer, not a new one each step
    assert_array_equal(v.numpy(), np.full((8, 8), -0.5))


def test_values_read_before_a_call_keep_their_value():
    v = em.Variable(np.ones((8, 8), np.float32))
    step = _sgd_step(v)
    step(em.ones([8, 8]))
    calls = _count_updating_replays(step)
    step(em.ones([8, 8]))  # v == 0
    kept = v.value()  # a tensor the user keeps
    host = v.numpy()  # on the CPU: the variable's own array
    before = _buffer(kept)
    step(em.ones([8, 8]))
    assert_array_equal(kept.numpy(), np.zeros((8, 8)))
    assert_array_equal(host, np.zeros((8, 8)))
    assert_array_equal(v.numpy(), np.full((8, 8), -0.5))
    assert len(calls) == 1  # the second call saw the kept values and allocated
    assert _buffer(v.value()) != before
    del kept, host
    before = _buffer(v.value())
    step(em.ones([8, 8]))  # nothing holds the old value now: in place again
    assert_array_equal(v.numpy(), np.full((8, 8), -1.0))
    assert len(calls) == 2
    assert _buffer(v.value()) == before
    view = em.reshape(v.value(), [64])  # a view of the variable's array, kept
    step(em.ones([8, 8]))
    assert_array_equal(view.numpy(), np.full(64, -1.0))
    assert_array_equal(v.numpy(), np.full((8, 8), -1.5))
    assert len(calls) == 2


def test_values_read_before_a_call_keep_their_value_when_captured_as_a_cuda_graph():
    v = em.Variable(np.ones((8, 8), np.float32))
    step = _sgd_step(v, cuda_graphs=True)  # on a GPU, captured at its second replay
    kept = []
    for n in range(1, 6):
        step(em.ones([8, 8]))
        kept.append((v.value(), em.reshape(v.value(), [64]), 1.0 - 0.5 * n))
    for value, view, want in kept:
        assert_array_equal(value.numpy(), np.full((8, 8), want))
        assert_array_equal(view.numpy(), np.full(64, want))


def test_a_variable_value_returned_by_an_earlier_call_is_not_overwritten():
    v = em.Variable(np.ones((4,), np.float32))

    @graph.function
    def step(g):
        v.assign_sub(g)
        return v.value()

    step(em.ones([4]))
    first = step(em.ones([4]))
    second = step(em.ones([4]))
    assert_array_equal(first.numpy(), np.full(4, -1.0))
    assert_array_equal(second.numpy(), np.full(4, -2.0))


def test_a_value_read_before_the_update_and_returned_keeps_the_old_value(device):
    """The read's slot is a result: the update must not be written into its buffer (it
    was, on a GPU, where the returned value was the new one)."""
    v = em.Variable(np.zeros((3,), np.float32))

    @graph.function
    def step(g):
        old = v.value()
        v.assign_add(g)
        return old

    for k in range(4):
        assert_array_equal(step(em.ones([3])).numpy(), np.full(3, float(k)))
        assert_array_equal(v.numpy(), np.full(3, k + 1.0))


def test_no_variable_is_updated_in_place_when_a_guard_could_fail():
    v = em.Variable(np.ones((4,), np.float32))

    @graph.function
    def step(g):
        v.assign_sub(g)
        if em.reduce_sum(g) > 0:  # a guard after the update
            return g * 1.0
        return g * -1.0

    step(em.ones([4]))
    assert _plan(step).replay_updating is None
    step(em.fill([4], -1.0))  # the guard fails: eager, v updated once
    assert_array_equal(v.numpy(), np.full(4, 1.0))


def test_an_op_registered_with_an_out_form_reuses_buffers_too():
    from ember.core import extend

    op = extend.register_op(
        "graph_test_twice", lambda be, x: x * 2, family="math",
        out=lambda be, x, out: be.xp.multiply(x, 2, out=out))
    try:
        def body(x):
            return extend.run_op(op, (x * 3.0,)) + 1.0  # x * 3 dies in the op

        plan = _assert_replays_like_eager(body, (16, 16), in_place_at_least=1)
        assert "graph_test_twice" in plan.names
    finally:
        del extend.REGISTRY[op.name]
