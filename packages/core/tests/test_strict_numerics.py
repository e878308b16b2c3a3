"""The strict double computes numbers as cupy 14 on a GPU does where they differ from
numpy's (``ember.core.testing._strict_numerics``): floor division and remainder, 0-d
uploads, and the rounding of math functions, products, solvers and reductions."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember.core.testing import simulated_gpus


@pytest.fixture
def xp():
    with simulated_gpus(1, strict=True) as (gpu,):
        yield gpu.backend.xp


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """How many representable values lie between ``got`` and ``want`` (same sign)."""
    it = {4: np.int32, 8: np.int64}[got.dtype.itemsize]
    return np.abs(got.view(it).astype(np.int64) - want.view(it).astype(np.int64))


def test_float_remainder_and_floor_division_are_cupys(xp):
    """cupy: floor(x / y) and x - floor(x / y) * y as one FMA; numpy: from fmod. The H200
    gave float32 1.05 % 0.35 = -2.98e-08 where numpy gives 0.34999996."""
    x32, y32 = np.float32([1.05, 2.1, -0.7]), np.float32([0.35, 0.7, 0.35])
    x, y = xp.asarray(x32), xp.asarray(y32)
    q = np.floor(x32 / y32)  # 3, 3, -2: float32 division rounds 1.05 / 0.35 up to 3
    fma = (x32.astype(np.float64) - q.astype(np.float64) * y32).astype(np.float32)
    assert fma[0] == np.float32(-2.9802322e-08) and np.mod(x32, y32)[0] == np.float32(0.34999996)
    for got in (xp.remainder(x, y), xp.mod(x, y), x % y, np.remainder(x, y), xp.divmod(x, y)[1]):
        assert_array_equal(got.get(), fma)
    for got in (xp.floor_divide(x, y), x // y, xp.divmod(x, y)[0]):
        assert_array_equal(got.get(), q)
    r, d = x.copy(), x.copy()
    r %= y
    d //= y
    assert_array_equal(r.get(), fma)
    assert_array_equal(d.get(), q)
    # float64: 1.8 // -0.6 is -4 in numpy (1.8 % -0.6 is -0.59999...), floor(1.8 / -0.6)
    # = -3 on a GPU
    assert (xp.asarray(np.float64([1.8])) // -0.6).get()[0] == -3.0
    assert np.floor_divide(1.8, -0.6) == -4.0


def test_integer_remainder_and_floor_division_are_numpys(xp):
    x, y = np.int32([7, -7, 7, -7, 5]), np.int32([2, 2, -2, -2, 0])
    with np.errstate(divide="ignore"):
        want_r, want_q = np.remainder(x, y), np.floor_divide(x, y)  # a zero divisor: 0
    assert_array_equal((xp.asarray(x) % xp.asarray(y)).get(), want_r)
    assert_array_equal((xp.asarray(x) // xp.asarray(y)).get(), want_q)


def test_a_0d_upload_clears_negative_zero_as_cupys_fill(xp):
    """cupy.asarray of 0-d data runs ndarray.fill, which memsets a value equal to 0."""
    assert xp.asarray(np.array(-0.0)).get().tobytes() == np.array(0.0).tobytes()
    assert xp.asarray(-0.0).get().tobytes() == np.array(0.0).tobytes()
    assert xp.asarray(np.array([-0.0])).get().tobytes() == np.array([-0.0]).tobytes()
    a = xp.asarray(np.ones(3, np.float32))
    a.fill(-0.0)
    assert not np.signbit(a.get()).any()
    # ember uploads a 0-d array as one element, so every bit arrives
    with em.device("/gpu:0"):
        assert em.constant(-0.0).numpy().tobytes() == np.float32(-0.0).tobytes()


def test_library_results_move_by_an_ulp_or_two_the_same_way_each_time(xp):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((6, 5)).astype(np.float32)
    b = rng.standard_normal((5, 4)).astype(np.float32)
    m = (a[:5] @ a[:5].T + 5 * np.eye(5)).astype(np.float32)
    da, db, dm = xp.asarray(a), xp.asarray(b), xp.asarray(m)
    for got, want in ((xp.exp(da), np.exp(a)), (xp.tanh(da), np.tanh(a)), (da @ db, a @ b),
                      (xp.einsum("ij,jk->ik", da, db), np.einsum("ij,jk->ik", a, b)),
                      (xp.sum(da, axis=1), a.sum(1)), (xp.linalg.inv(dm), np.linalg.inv(m))):
        g = got.get()
        ulps = _ulps(g, want.astype(g.dtype))
        assert ulps.max() <= 2 and (ulps > 0).mean() > 0.5, ulps  # a GPU's rounding
        assert not np.allclose(g, want, rtol=1e-7, atol=0)  # numpy's default fails, as on a GPU
    again = xp.exp(xp.asarray(a))
    assert_array_equal(again.get(), xp.exp(da).get())  # deterministic
    k = xp.ElementwiseKernel("T x", "T y", "y = exp(x)", "e")
    assert_array_equal(k(da).get(), xp.exp(da).get())  # a fused kernel's exp is cupy.exp's


def test_what_a_gpu_keeps_exact_stays_exact(xp):
    near_one = np.float32([10.0, 12.0, -15.0, 20.0, 0.0])
    assert_array_equal(xp.tanh(xp.asarray(near_one)).get(), np.tanh(near_one))  # +-1 and 0
    t = xp.tanh(xp.asarray(np.linspace(-6, 6, 1001, dtype=np.float32))).get()
    assert np.abs(t).max() <= 1  # never moved across a whole number
    e = xp.exp(xp.asarray(np.float32([0.0, -np.inf, np.inf, np.nan, -1e-7, -1e-6])))
    got = e.get()
    assert got[0] == 1 and got[1] == 0 and got[2] == np.inf and np.isnan(got[3])
    assert (got[4:] <= 1).all()  # exp of a negative number never rounds above 1
    s = np.float32([0.3, 1.2, 2.5])
    assert_array_equal(xp.sin(xp.asarray(-s)).get(), -xp.sin(xp.asarray(s)).get())  # odd
    ints = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    d = xp.asarray(ints)
    assert_array_equal((d @ d.T).get(), ints @ ints.T)  # small integers: exact on a GPU
    assert_array_equal(xp.sum(d, axis=0).get(), ints.sum(0))
    r = np.random.default_rng(1).standard_normal((4, 4)).astype(np.float32)
    eye = xp.asarray(np.eye(4, dtype=np.float32))
    assert_array_equal((xp.asarray(r) @ eye).get(), r)  # an identity product is exact
    assert_array_equal(xp.linalg.inv(eye).get(), np.eye(4))


def test_a_graph_replay_rounds_as_the_eager_call(xp):
    x = xp.asarray(np.linspace(0.1, 2.0, 6).reshape(2, 3))
    stream = xp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        out = xp.sum(xp.exp(x), axis=1)
        graph = stream.end_capture()
    graph.launch()
    assert_array_equal(out.get(), xp.sum(xp.exp(x), axis=1).get())
