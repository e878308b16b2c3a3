"""``em.config.deterministic`` (TensorFlow's ``enable_op_determinism``): convolutions
choose their algorithm by a rule of their shapes, not by timing; a GPU's index_add sums
repeated targets in a fixed pairwise order, not with atomics."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import ember.core as em
from ember.core._ops import array as array_ops
from ember.core._ops import conv_select
from ember.core._ops._scatter_sorted import scatter_add_sorted


@pytest.fixture
def deterministic():
    em.config.enable_op_determinism()
    try:
        yield
    finally:
        em.config.deterministic = False


def test_the_setting_is_a_bool_for_the_whole_process():
    assert em.config.deterministic is False
    with pytest.raises(em.InvalidArgumentError, match="deterministic must be a bool.*1"):
        em.config.deterministic = 1
    seen = []
    with em.config.using(deterministic=True):
        t = threading.Thread(target=lambda: seen.append(em.config.deterministic))
        t.start()
        t.join()
        assert "deterministic=True" in repr(em.config)
    assert seen == [True]  # a thread started later sees it (a ContextVar would not)
    assert em.config.deterministic is False


def _no_timing(*args):
    raise AssertionError("the autotuner timed candidates under em.config.deterministic")


@pytest.mark.parametrize(("channels", "want"), [(16, "winograd"), (1, "im2col")])
def test_convolutions_choose_by_rule_without_timing(deterministic, monkeypatch, channels,
                                                    want):
    monkeypatch.setattr(conv_select, "_autotune", _no_timing)
    ran = []
    real = conv_select.ALGORITHMS

    def spy(name):
        def run(i):
            def f(*a):
                ran.append((name, i))
                return real[name][i](*a)
            return f
        return tuple(run(i) for i in range(3))

    monkeypatch.setattr(conv_select, "ALGORITHMS", {k: spy(k) for k in real})
    conv_select.clear_chosen()
    rng = np.random.default_rng(0)
    x = em.constant(rng.standard_normal((4, 16, 16, channels)).astype(np.float32))
    w = em.constant(rng.standard_normal((3, 3, channels, 16)).astype(np.float32))
    y1 = em.nn_ops.conv2d(x, w, padding="SAME")  # >= AUTOTUNE_MIN_MACS: would be timed
    y2 = em.nn_ops.conv2d(x, w, padding="SAME")
    assert {name for name, _ in ran} == {want}
    assert_array_equal(y1.numpy(), y2.numpy())
    assert conv_select.chosen_algorithms() == {}  # nothing timed, nothing cached
    with em.config.using(conv_algorithm="fft"):  # a forced algorithm still wins
        ran.clear()
        em.nn_ops.conv2d(x, w, padding="SAME")
        assert ran == [("fft", 0)]


# --- index_add on a GPU ------------------------------------------------------------------

def _add_at(o, k, u):
    np.add.at(o, k, u)


def _pairwise(vals):
    """The documented order: round r adds the element 2**r along into each multiple of
    2**(r+1), within one target's run of updates (in their given order)."""
    vals = [np.asarray(v).copy() for v in vals]
    step = 1
    while step < len(vals):
        for i in range(0, len(vals) - step, 2 * step):
            vals[i] = vals[i] + vals[i + step]
        step *= 2
    return vals[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sorted_scatter_add_sums_each_target_pairwise_in_the_given_order(dtype):
    rng = np.random.default_rng(1)
    out = rng.standard_normal((6, 3)).astype(dtype)
    ids = rng.integers(-6, 6, 41)  # negative ids count from the end, as numpy's
    up = (rng.standard_normal((41, 3)) * 10.0 ** rng.integers(-3, 4, (41, 1))).astype(dtype)
    got = out.copy()
    scatter_add_sorted(np, _add_at, got, (ids,), up)
    want = out.copy()
    for row in range(6):
        mine = [up[j] for j in range(41) if ids[j] % 6 == row]
        if mine:
            want[row] = want[row] + _pairwise(mine)
    assert_array_equal(got, want)
    serial = out.copy()
    np.add.at(serial, (ids,), up)
    assert_allclose(got, serial, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-4)


def test_the_order_atomics_apply_in_changes_no_bit():
    rng = np.random.default_rng(2)
    out = rng.standard_normal((5, 4)).astype(np.float32)
    ids = rng.integers(0, 5, 64)
    up = rng.standard_normal((64, 4)).astype(np.float32)

    def atomics_in(order):
        def scatter(o, k, u):
            (lin,) = k
            for j in order:  # one "thread" after another, in this order
                o[lin[j]] += u[j]
        return scatter

    results = []
    for seed in range(5):
        got = out.copy()
        scatter_add_sorted(np, atomics_in(np.random.default_rng(seed).permutation(64)),
                           got, (ids,), up)
        results.append(got)
    for r in results[1:]:
        assert_array_equal(r, results[0])
    naive = []
    for seed in range(5):  # the same atomics on the raw updates do differ (the bug fixed)
        got = out.copy()
        atomics_in(np.random.default_rng(seed).permutation(64))(got, (ids,), up)
        naive.append(got.tobytes())
    assert len(set(naive)) > 1


@pytest.mark.parametrize("key", [
    lambda r: (slice(None), r.integers(0, 4, 9)),  # columns
    lambda r: (r.integers(0, 3, 9), r.integers(0, 4, 9)),  # single elements
    lambda r: (r.integers(0, 3, (2, 5)),),  # rows by a 2-D index
    lambda r: (np.array([], np.int64),),  # nothing
])
def test_sorted_scatter_add_takes_any_key_numpy_takes(key):
    rng = np.random.default_rng(3)
    out = rng.standard_normal((3, 4)).astype(np.float64)
    k = key(rng)
    up = rng.standard_normal(out[k].shape)
    got, want = out.copy(), out.copy()
    scatter_add_sorted(np, _add_at, got, k, up)
    np.add.at(want, k, up)
    assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_a_gpus_index_add_takes_the_sorted_sum(deterministic, gpu, monkeypatch):
    # index_add is the gradient of gather and of indexing (an Embedding's, through the
    # tape: ember-tape's rule runs this op)
    calls = []
    real = array_ops.scatter_add_sorted
    monkeypatch.setattr(array_ops, "scatter_add_sorted",
                        lambda *a: calls.append(1) or real(*a))
    rng = np.random.default_rng(4)
    ids = rng.integers(0, 7, 50)
    up = rng.standard_normal((50, 3)).astype(np.float32)
    got = {}
    for dev in ("/cpu:0", "/gpu:0"):
        with em.device(dev):
            got[dev] = em.index_add(em.zeros((7, 3)), (em.constant(ids),),
                                    em.constant(up)).numpy()
    assert calls == [1]  # the GPU's, not the host's (numpy's add.at is serial)
    want = np.zeros((7, 3), np.float32)
    np.add.at(want, ids, up)
    assert_allclose(got["/cpu:0"], want, rtol=1e-6)
    assert_allclose(got["/gpu:0"], want, rtol=1e-5, atol=1e-6)
