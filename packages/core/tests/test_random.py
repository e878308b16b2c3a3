"""Random numbers: seeds, op-level seeds, distributions, Generator state."""

from __future__ import annotations

import json

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember.core import random


def test_set_seed_repeats_the_program():
    def program():
        return [random.normal([3]).numpy(), random.uniform([2, 2]).numpy(),
                random.uniform([4], maxval=10, dtype=em.int32).numpy(),
                random.truncated_normal([3]).numpy(), random.shuffle(em.range(6)).numpy(),
                random.categorical([[0.0, 1.0]], 5).numpy()]

    random.set_seed(42)
    first = program()
    random.set_seed(42)
    second = program()
    for a, b in zip(first, second):
        assert_array_equal(a, b)
    random.set_seed(43)
    assert not np.array_equal(program()[0], first[0])


def test_successive_draws_differ():
    random.set_seed(0)
    assert not np.array_equal(random.normal([4]).numpy(), random.normal([4]).numpy())


def test_op_level_seed():
    random.set_seed(7)
    a1, a2 = random.normal([3], seed=1), random.normal([3], seed=1)
    b = random.normal([3], seed=2)
    assert not np.array_equal(a1.numpy(), a2.numpy())  # a sequence, not one value
    assert not np.array_equal(a1.numpy(), b.numpy())
    random.set_seed(7)
    random.normal([10])  # global draws do not disturb op-level streams
    assert_array_equal(random.normal([3], seed=1).numpy(), a1.numpy())
    assert_array_equal(random.normal([3], seed=1).numpy(), a2.numpy())
    random.set_seed(8)
    assert not np.array_equal(random.normal([3], seed=1).numpy(), a1.numpy())


def test_dtypes_and_shapes():
    assert random.normal([2, 3]).dtype == em.float32
    assert random.normal([2], dtype=em.float64).dtype == em.float64
    assert random.normal([2], dtype=em.bfloat16).dtype == em.bfloat16
    assert random.uniform((), dtype=em.float16).shape == ()
    assert random.uniform([5], maxval=255, dtype=em.int32).dtype == em.int32
    assert random.uniform(em.constant([2, 2])).shape == (2, 2)
    assert random.normal([0, 3]).shape == (0, 3)


def test_distributions():
    random.set_seed(3)
    n = random.normal([20000], mean=2.0, stddev=0.5).numpy()
    assert abs(n.mean() - 2.0) < 0.02 and abs(n.std() - 0.5) < 0.02
    u = random.uniform([20000], minval=-2.0, maxval=2.0).numpy()
    assert u.min() >= -2.0 and u.max() < 2.0 and abs(u.mean()) < 0.05
    t = random.truncated_normal([20000], mean=1.0, stddev=3.0).numpy()
    assert np.all(np.abs(t - 1.0) <= 6.0) and abs(t.mean() - 1.0) < 0.1
    assert abs(t.std() - 3.0 * 0.8796) < 0.1
    i = random.uniform([5000], minval=-3, maxval=4, dtype=em.int64).numpy()
    assert i.dtype == np.int64 and i.min() == -3 and i.max() == 3
    assert set(np.unique(i)) == set(range(-3, 4))


def test_uniform_errors():
    with pytest.raises(em.InvalidArgumentError, match="maxval is required for integer dtype"):
        random.uniform([2], dtype=em.int32)
    with pytest.raises(em.InvalidArgumentError, match="need minval < maxval, got 5, 5"):
        random.uniform([2], 5, 5, dtype=em.int32)
    with pytest.raises(em.InvalidArgumentError, match="normal: dtype must be floating"):
        random.normal([2], dtype=em.int32)
    with pytest.raises(em.InvalidArgumentError, match=r"categorical: logits must be \(batch"):
        random.categorical([0.0, 1.0], 3)


def test_generator_state_save_restore_continues_stream():
    g = random.Generator(5)
    g.normal([3])
    saved = g.state
    a = [g.normal([4]).numpy(), g.uniform([2]).numpy()]
    g.normal([100])
    g.state = saved
    b = [g.normal([4]).numpy(), g.uniform([2]).numpy()]
    for x, y in zip(a, b):
        assert_array_equal(x, y)


def test_generator_checkpoint_state_through_json():
    g = random.Generator.from_seed(11)
    g.uniform([7])
    blob = json.dumps(g.__checkpoint_state__())
    expected = g.normal([5]).numpy()
    h = random.Generator(0)
    h.__checkpoint_restore_state__(json.loads(blob))
    assert_array_equal(h.normal([5]).numpy(), expected)


def test_independent_generators():
    a, b = random.Generator(1), random.Generator(1)
    assert_array_equal(a.normal([3]).numpy(), b.normal([3]).numpy())
    assert random.get_global_generator() is random.get_global_generator()


def test_same_values_on_every_device(device):
    random.set_seed(9)
    ref = random.normal([4]).numpy()
    random.set_seed(9)
    with em.device(device):
        t = random.normal([4])
    assert t.device == device
    assert_array_equal(t.numpy(), ref)


@pytest.mark.parametrize(("dtype", "low", "high"), [
    (np.uint64, 0, 2**64),  # the full range: one 64-bit word a draw, as a bounded range
    (np.int64, -2**63, 2**63),
    (np.int64, -5, 1000),
    (np.int32, 0, 100000),
])
def test_integer_draws_are_the_same_on_every_device(device, dtype, low, high):
    # a GPU's full-range draws read each block's words for two draws (a kernel's "wide"
    # test left the full range out), so they repeated in pairs and shuffles were biased
    want = random.Generator.from_seed(1).uniform([9], low, high, dtype=dtype).numpy()
    assert len(set(want.tolist())) == 9
    with em.device(device):
        got = random.Generator.from_seed(1).uniform([9], low, high, dtype=dtype)
    assert_array_equal(got.numpy(), want)


def test_shuffles_are_the_same_on_every_device(device):
    want = random.Generator.from_seed(3).shuffle(em.range(8)).numpy()
    with em.device(device):
        got = random.Generator.from_seed(3).shuffle(em.range(8))
    assert_array_equal(got.numpy(), want)


def test_dropout():
    x = em.ones([10000])
    y = em.nn_ops.dropout(x, 0.25, seed=3).numpy()
    assert set(np.unique(y)) == {0.0, np.float32(1 / 0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.02
    assert em.nn_ops.dropout(x, 0.0) is x
    with pytest.raises(em.InvalidArgumentError, match=r"dropout: rate must be in \[0, 1\)"):
        em.nn_ops.dropout(x, 1.0)
    ns = em.nn_ops.dropout(em.ones([4, 6]), 0.5, noise_shape=[4, 1], seed=1).numpy()
    assert np.all(ns == ns[:, :1])  # one decision per row


# --- Philox4x32-10 ---------------------------------------------------------------------
# Random123's known-answer vectors (tests/kat_vectors): counter, key, expected words
KAT = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
       ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
       ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]


@pytest.mark.parametrize(("ctr", "key", "want"), KAT)
def test_philox_matches_random123s_known_answers(ctr, key, want):
    from ember.core import _philox

    assert _philox.philox(np.array([ctr], np.uint32), key)[0].tolist() == list(want)
    # a stream's blocks are the same function: block b of stream s is counter (b, s)
    b, s = ctr[0] | ctr[1] << 32, ctr[2] | ctr[3] << 32
    assert _philox.words(key[0] | key[1] << 32, s, [b])[0].tolist() == list(want)


@pytest.mark.parametrize("kind", ["uniform32", "uniform64", "normal32", "normal64",
                                  "truncated32", "truncated64", "int"])
def test_the_gpu_kernel_draws_numpys_bits(kind):
    """The CUDA kernel (evaluated by the strict double) and the numpy path give the same
    bits, from a counter that wraps its low word, over every lane and octant."""
    from ember.core import _philox as P
    from ember.core import _philox_cuda as K
    from ember.core.testing.devices import simulated_gpus

    key, stream, start, n = 0x1234567890ABCDEF, 77, 2 ** 32 - 3, 1027
    dt = np.float64 if kind.endswith("64") else np.float32
    with simulated_gpus(1, strict=True) as (gpu,):
        xp = gpu.backend.xp
        state = xp.asarray(np.array([key, start, stream], np.uint64))
        if kind == "int":
            got = K.draw(xp, state, "int", (n,), np.int16, np.uint64(1000),
                         np.uint64((-500) & P.MASK64)).get()
            want = P.integers(key, stream, start, n, -500, 1000, np.int16)
        elif kind.startswith("truncated"):
            nb = P.blocks_for("normal" + kind[-2:], n)
            got = K.draw(xp, state, kind, (n,), dt, np.uint64(nb)).get()
            want = P.truncated_normal(key, stream, start, n, dt)
        else:
            got = K.draw(xp, state, kind, (n,), dt).get()
            want = getattr(P, kind[:-2])(key, stream, start, n, dt)
        assert got.dtype == want.dtype
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
        assert int(state.get()[1]) == start + P.blocks_for(kind, n)


def test_box_mullers_own_log_sine_and_cosine_are_accurate():
    from ember.core import _philox as P

    rng = np.random.default_rng(0)
    x = rng.integers(1, 2 ** 32, 50000).astype(np.float64)
    oc = rng.integers(0, 8, x.size).astype(np.uint32)
    r = rng.integers(0, 2 ** 29, x.size).astype(np.float64)
    zc, zs = P.box_muller(x, 32, oc, r, 29)
    rad = np.sqrt(-2 * np.log(x / 2 ** 32))
    theta = (oc + (r + 0.5) / 2 ** 29) * np.pi / 4
    np.testing.assert_allclose(zc, rad * np.cos(theta), rtol=0, atol=1e-14)
    np.testing.assert_allclose(zs, rad * np.sin(theta), rtol=0, atol=1e-14)


def test_state_is_philox_and_a_pcg64_state_is_refused_by_name():
    g = random.Generator(3)
    g.uniform([5])
    st = g.state
    assert st == {"bit_generator": "Philox4x32-10", "key": 3, "stream": 0, "counter": 2}
    old = np.random.Generator(np.random.PCG64(3)).bit_generator.state
    with pytest.raises(ValueError, match="PCG64.*Philox4x32-10"):
        g.state = old
    with pytest.raises(ValueError, match="expected"):
        g.state = {**st, "counter": -1}
    with pytest.raises(em.InvalidArgumentError, match="seed must be an int"):
        random.Generator([1, 2])


def test_gpu_draws_keep_the_state_on_the_device():
    """A draw on a GPU reads and advances the state there: no host transfer after the
    first upload, and the values continue the CPU's stream."""
    from ember.core.testing.devices import simulated_gpus

    g, ref = random.Generator(8), random.Generator(8)
    with simulated_gpus(1, strict=True) as (gpu,), em.device("/gpu:0"):
        g.normal([3])
        before = gpu.backend.counters.snapshot()
        a = g.uniform([6])
        after = gpu.backend.counters.snapshot()
    assert after["to_host"] == before["to_host"] and after["from_host"] == before["from_host"]
    ref.normal([3])
    assert_array_equal(a.numpy(), ref.uniform([6]).numpy())
    assert g.state == ref.state


# --- the chunked numpy path against a plain reference ----------------------------------
def _ref_words(key, stream, blocks):
    """Philox4x32-10 block by block in Python integers (the spec, no numpy tricks)."""
    out = []
    for b in blocks:
        c = [b & 0xFFFFFFFF, b >> 32, stream & 0xFFFFFFFF, stream >> 32]
        k0, k1 = key & 0xFFFFFFFF, key >> 32
        for r in range(10):
            if r:
                k0, k1 = (k0 + 0x9E3779B9) & 0xFFFFFFFF, (k1 + 0xBB67AE85) & 0xFFFFFFFF
            p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
            c = [(p1 >> 32) ^ c[1] ^ k0, p1 & 0xFFFFFFFF, (p0 >> 32) ^ c[3] ^ k1,
                 p0 & 0xFFFFFFFF]
        out.append(c)
    return np.array(out, np.uint64).reshape(-1, 4)


def _ref_box_muller(x, xbits, octant, r, rbits):
    """Box-Muller in the kernel's order of steps, written plainly (whole-array numpy)."""
    from ember.core import _philox as P

    e = np.floor(np.log2(x)).astype(np.int64)  # x is a whole number: log2 is exact enough
    e[np.ldexp(1.0, e) > x] -= 1
    e[np.ldexp(1.0, e + 1) <= x] += 1
    m = np.ldexp(x, -e)
    big = m > P.SQRT2
    m = np.where(big, m / 2, m)
    e = e + big
    f = m - 1
    dk = (e - xbits).astype(np.float64)
    s = f / (2 + f)
    z = s * s
    w = z * z
    t1 = w * (P.LG[1] + w * (P.LG[3] + w * P.LG[5]))
    t2 = z * (P.LG[0] + w * (P.LG[2] + w * (P.LG[4] + w * P.LG[6])))
    hfsq = f * f / 2
    lnu = dk * P.LN2_HI - ((hfsq - (s * (hfsq + (t2 + t1)) + dk * P.LN2_LO)) - f)
    rad = np.sqrt(-2 * lnu)
    rr = np.where(octant & 1, float((1 << rbits) - 1) - r, r)
    phi = (2 * rr + 1) / float(1 << (rbits + 1)) * P.PIO4
    z = phi * phi
    S, C = P.S, P.C
    sn = phi + z * phi * (S[0] + z * (S[1] + z * (S[2] + z * (S[3] + z * (S[4] + z * S[5])))))
    rc = z * (C[0] + z * (C[1] + z * (C[2] + z * (C[3] + z * (C[4] + z * C[5])))))
    w = 1 - z / 2
    cs = w + (((1 - w) - z / 2) + z * rc)
    swap = ((octant ^ (octant >> 1)) & 1).astype(bool)
    sin_t = np.where(swap, cs, sn) * rad
    cos_t = np.where(swap, sn, cs) * rad
    sin_t = np.where(octant >= 4, -sin_t, sin_t)
    cos_t = np.where(((octant ^ (octant >> 1)) & 2).astype(bool), -cos_t, cos_t)
    return cos_t, sin_t


def _reference(kind, key, stream, start, n, dtype):
    """A draw the plain way: every block's words, then the values of the whole array."""
    from ember.core import _philox as P

    wide = np.dtype(dtype) == np.float64
    nb = P.blocks_for(("uniform" if kind == "uniform" else "normal") + ("64" if wide else "32"), n)

    def block_words(first):
        return _ref_words(key, stream, [(first + i) % 2 ** 64 for i in range(nb)])

    def normals(q):
        if not wide:
            p = q.reshape(-1, 2)
            zc, zs = _ref_box_muller(p[:, 0].astype(np.float64) + 1, 32, p[:, 1] >> 29,
                                     (p[:, 1] & 0x1FFFFFFF).astype(np.float64), 29)
        else:
            k = (q[:, 0] << 21) | (q[:, 1] >> 11)
            r = ((q[:, 2] & 0x1FFFFFFF) << 21) | (q[:, 3] >> 11)
            zc, zs = _ref_box_muller(k.astype(np.float64) + 1, 53, q[:, 2] >> 29,
                                     r.astype(np.float64), 50)
        return np.stack([zc, zs], 1).reshape(-1)

    q = block_words(start)
    if kind == "uniform":
        if wide:
            p = q.reshape(-1, 2)
            v = ((p[:, 0] >> 5) << 26 | (p[:, 1] >> 6)).astype(np.float64) / 2.0 ** 53
        else:
            bits = P.float_bits(dtype)
            v = (q.reshape(-1) >> (32 - bits)).astype(np.float32) / np.float32(2 ** bits)
        return v[:n].astype(dtype)
    if kind == "normal":
        return normals(q)[:n].astype(dtype)
    out = normals(q)[:n]
    for r in range(1, P.TRUNCATED_ROUNDS):
        far = np.abs(out) > 2
        if not far.any():
            break
        cand = normals(block_words(start + r * nb))[:n]
        if r == P.TRUNCATED_ROUNDS - 1:
            cand = np.clip(cand, -2, 2)
        out = np.where(far, cand, out)
    return out.astype(dtype)


@pytest.mark.parametrize(("start", "n"), [(0, 1), (7, 3), (2 ** 32 - 2, 5), (2 ** 32 - 300, 2047),
                                          (2 ** 64 - 3, 9), (12345, 16384 * 4 + 6)])
@pytest.mark.parametrize(("kind", "dtype"), [("uniform", np.float32), ("uniform", np.float16),
                                             ("uniform", np.float64), ("normal", np.float32),
                                             ("normal", np.float64), ("truncated", np.float32),
                                             ("truncated", np.float64)])
def test_the_chunked_numpy_path_draws_the_plain_references_bits(kind, dtype, start, n):
    """``_philox``'s chunked arrays, bit tricks and reused buffers change no bit: against
    Philox in Python integers and Box-Muller written plainly, at sizes that are not whole
    blocks or chunks (the chunk is 16384 blocks), from counters whose low word wraps
    inside the draw and from one that wraps at 2**64."""
    from ember.core import _philox as P

    key, stream = 0x0123456789ABCDEF ^ start, 2 ** 40 + n
    fn = {"uniform": P.uniform, "normal": P.normal, "truncated": P.truncated_normal}[kind]
    got = fn(key, stream, start, n, dtype)
    want = _reference(kind, key, stream, start, n, dtype)
    assert got.dtype == want.dtype and got.shape == (n,)
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))


def test_words_and_integers_match_python_integers_across_chunks():
    from ember.core import _philox as P

    key, stream = 2 ** 64 - 5, 3
    blocks = [(2 ** 32 - 7 + i) % 2 ** 64 for i in range(16384 + 20)] + [2 ** 64 - 1, 0, 5]
    want = _ref_words(key, stream, blocks)
    assert np.array_equal(P.words(key, stream, blocks), want.astype(np.uint32))
    n = 2 * len(blocks) - 1
    start = 2 ** 32 - 7
    q = _ref_words(key, stream, [(start + i) % 2 ** 64 for i in range(-(-n // 2))])
    v = ((q.reshape(-1, 2)[:, 0] << 32) | q.reshape(-1, 2)[:, 1])[:n]
    assert np.array_equal(P.integers(key, stream, start, n, -500, 1000, np.int16),
                          ((v % 1000) + np.uint64(2 ** 64 - 500)).astype(np.int16))
    assert np.array_equal(P.integers(key, stream, start, n, 0, 2 ** 64, np.uint64), v)


def test_new_seed_repeats_after_set_seed_and_draws_nothing_from_the_global_generator():
    random.set_seed(12)
    seeds = [random.new_seed() for _ in range(50)]
    after = random.uniform([3]).numpy()
    random.set_seed(12)
    assert [random.new_seed() for _ in range(50)] == seeds
    random.set_seed(12)
    assert_array_equal(random.uniform([3]).numpy(), after)  # new_seed took nothing from it
    assert len(set(seeds)) == 50 and all(0 <= s < 2 ** 31 - 1 for s in seeds)
    random.set_seed(13)
    assert [random.new_seed() for _ in range(3)] != seeds[:3]


def _ks_two_sample(a, b):
    """The two-sample Kolmogorov-Smirnov statistic."""
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    return np.max(np.abs(np.searchsorted(a, grid, side="right") / a.size
                         - np.searchsorted(b, grid, side="right") / b.size))


@pytest.mark.parametrize("alpha", [0.2, 1.0, 4.5])
def test_gamma_draws_follow_the_gamma_distribution(alpha):
    # against numpy's own gamma sampler: two samples of 40000 differ by a KS statistic
    # above 0.012 with probability below 0.5%
    g = random.Generator(5).gamma([40000], alpha).numpy()
    assert g.dtype == np.float32 and (g >= 0).all()
    ref = np.random.default_rng(5).gamma(alpha, 1.0, 40000)
    assert _ks_two_sample(g, ref) < 0.012
    np.testing.assert_allclose(g.mean(), alpha, rtol=0.03)
    np.testing.assert_allclose(g.var(), alpha, rtol=0.06)


def test_gamma_shape_rate_and_seed(device):
    random.set_seed(3)
    with em.device(device):
        a = em.constant([[0.5], [2.0]])
        b = em.constant([1.0, 4.0, 0.5])
        g = random.gamma([6], a, b)
        assert g.shape == (6, 2, 3) and g.dtype == em.float32
        random.set_seed(3)
        again = random.gamma([6], a, b)
        assert_array_equal(again.numpy(), g.numpy())
        bad = random.gamma([2], [-1.0, float("nan")]).numpy()
        assert np.isnan(bad).all()
        assert random.gamma([3], 0.0).numpy().tolist() == [0.0, 0.0, 0.0]


def test_gamma_draws_are_the_same_on_every_device(device):
    want = random.Generator(8).gamma([50], [0.3, 7.0]).numpy()
    with em.device(device):
        got = random.Generator(8).gamma([50], [0.3, 7.0])
    np.testing.assert_allclose(got.numpy(), want, rtol=2e-6)


def test_generator_scope_takes_unseeded_draws_and_leaves_the_global_stream():
    em.random.set_seed(1)
    alone = [float(em.random.uniform(())) for _ in range(3)]
    em.random.set_seed(1)
    g = em.random.Generator(7)
    with em.random.generator_scope(g) as inside:
        assert inside is g
        scoped = em.random.normal((4,)).numpy()
        seeded = em.random.uniform((), seed=3)  # an op seed keeps its own stream
    np.testing.assert_array_equal(scoped, em.random.Generator(7).normal((4,)).numpy())
    assert [float(em.random.uniform(())) for _ in range(3)] == alone
    em.random.set_seed(1)
    assert float(em.random.uniform((), seed=3)) == float(seeded)
    with pytest.raises(TypeError, match="generator_scope: expected an em.random.Generator"):
        with em.random.generator_scope(5):
            pass
