"""Philox4x32-10 in numpy: the counter-based generator ember's random numbers come from.

Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011; the
generator of cuRAND, PyTorch and JAX) maps a 128-bit counter and a 64-bit key to 128
random bits in ten rounds of multiplications and xors. Nothing is sequential: block ``b``
of a stream is ``philox(counter=(b, stream), key)``, so a draw is a vectorized function
of the block numbers, on the CPU here and in one CUDA kernel on a GPU
(``_philox_cuda``), with the same bits. A generator's whole state is (key, stream,
next block).

A draw of ``n`` values takes the next ``blocks_for(kind, n)`` blocks; value ``j`` reads
block ``j >> shift`` (4 values a block for 32-bit kinds, 2 for 64-bit ones):

- float32 uniform: the top 24 bits of word ``j & 3`` times 2**-24 (float16: 11 bits,
  bfloat16: 8, so no value rounds up to 1); float64: 53 bits of a pair of words.
- normal: Box-Muller on a pair of words (the radius from one, the angle from the other),
  two values a pair (float32: a word each; float64: two words each). Its logarithm, sine
  and cosine are written here in +, -, *, / and sqrt (fdlibm's polynomials), which IEEE
  rounds the same on every machine: CUDA's ``log`` or numpy's would differ by an ulp.
- truncated normal: ``TRUNCATED_ROUNDS`` normal draws' worth of blocks; value ``j`` is the
  first of its candidates within two standard deviations (all failing has probability
  0.0455**12, about 1e-16; then the last is clipped to the bounds).
- integers in [low, low + span): 64 bits of a pair of words modulo ``span`` (bias below
  span / 2**64).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

M0, M1 = 0xD2511F53, 0xCD9E8D57  # Philox4x32's multipliers
W0, W1 = 0x9E3779B9, 0xBB67AE85  # its key increments (Weyl sequence)
ROUNDS = 10
TRUNCATED_ROUNDS = 12
MASK32 = 0xFFFFFFFF
MASK64 = (1 << 64) - 1
_MULT = np.array([[M0], [M1]], np.uint64)
_LOW = np.uint64(MASK32)
_CHUNK = 1 << 15  # blocks a pass (its arrays stay in cache)

# fdlibm's (e_log.c, k_sin.c, k_cos.c) polynomial coefficients and split constants
LG = (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
      2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
      1.479819860511658591e-01)
LN2_HI, LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10
S = (-1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04,
     2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10)
C = (4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05,
     -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11)
PIO4 = math.pi / 4
SQRT2 = math.sqrt(2.0)


def philox(counters: np.ndarray, key: tuple[int, int]) -> np.ndarray:
    """Philox4x32-10 of ``counters`` ((n, 4) uint32) under ``key`` (two 32-bit words):
    the (n, 4) uint32 outputs, as Random123's ``philox4x32_R(10, ctr, key)``."""
    c = np.asarray(counters, np.uint32).reshape(-1, 4)
    x = np.ascontiguousarray(c[:, 0::2].T, np.uint64)  # words 0 and 2 (multiplied)
    y = np.ascontiguousarray(c[:, 1::2].T, np.uint64)  # words 1 and 3
    _rounds(x, y, int(key[0]), int(key[1]))
    out = np.empty(c.shape, np.uint32)
    out[:, 0::2] = x.T
    out[:, 1::2] = y.T
    return out


def _rounds(x: np.ndarray, y: np.ndarray, k0: int, k1: int) -> None:
    """Ten rounds on (2, n) uint64 arrays holding 32-bit words, in place: ``x`` the words
    that are multiplied (0, 2), ``y`` the others (1, 3)."""
    p = np.empty_like(x)
    hi = np.empty_like(x)
    for r in range(ROUNDS):
        if r:
            k0, k1 = (k0 + W0) & MASK32, (k1 + W1) & MASK32
        np.multiply(x, _MULT, out=p)
        np.right_shift(p, np.uint64(32), out=hi)
        np.bitwise_xor(y, np.array([[k0], [k1]], np.uint64), out=x)
        np.bitwise_xor(x, hi[::-1], out=x)  # (hi1 ^ c1 ^ k0, hi0 ^ c3 ^ k1)
        np.bitwise_and(p[::-1], _LOW, out=y)  # (lo1, lo0)


def words(key: int, stream: int, blocks: np.ndarray) -> np.ndarray:
    """The (n, 4) uint32 words of the given block numbers (uint64) of a stream."""
    blocks = np.asarray(blocks, np.uint64).reshape(-1)
    k0, k1 = key & MASK32, key >> 32
    out = np.empty((blocks.size, 4), np.uint32)
    for s in range(0, blocks.size, _CHUNK):
        b = blocks[s:s + _CHUNK]
        x = np.empty((2, b.size), np.uint64)
        y = np.empty((2, b.size), np.uint64)
        np.bitwise_and(b, _LOW, out=x[0])
        np.right_shift(b, np.uint64(32), out=y[0])
        x[1] = stream & MASK32
        y[1] = stream >> 32
        _rounds(x, y, k0, k1)
        chunk = out[s:s + b.size]
        chunk[:, 0::2] = x.T
        chunk[:, 1::2] = y.T
    return out


def block_range(start: int, n: int) -> np.ndarray:
    """Block numbers ``start, start + 1, ...`` (``n`` of them), wrapping at 2**64."""
    return np.arange(n, dtype=np.uint64) + np.uint64(start & MASK64)


# --- the layout of a draw --------------------------------------------------------------
SHIFT = {"uniform32": 2, "uniform64": 1, "normal32": 2, "normal64": 1, "int": 1}


def blocks_for(kind: str, n: int) -> int:
    """Blocks a draw of ``n`` values takes (``kind`` as in ``SHIFT``, or
    ``truncated32``/``truncated64``: ``TRUNCATED_ROUNDS`` normal draws)."""
    if kind.startswith("truncated"):
        return TRUNCATED_ROUNDS * blocks_for("normal" + kind[-2:], n)
    per = 1 << SHIFT[kind]
    return -(-n // per)


def _flat(key: int, stream: int, start: int, kind: str, n: int) -> np.ndarray:
    return words(key, stream, block_range(start, blocks_for(kind, n))).reshape(-1)


def uniform(key: int, stream: int, start: int, n: int, dtype: Any) -> np.ndarray:
    """``n`` uniform floats in [0, 1) of ``dtype`` (a float dtype)."""
    dt = np.dtype(dtype)
    if dt == np.float64:
        w = _flat(key, stream, start, "uniform64", n).reshape(-1, 2)[:n]
        return uniform64(w[:, 0], w[:, 1])
    w = _flat(key, stream, start, "uniform32", n)[:n]
    return uniform32(w, float_bits(dt)).astype(dt)


def float_bits(dt: Any) -> int:
    """Random bits a [0, 1) float of ``dt`` (float32 or narrower) can hold exactly."""
    dt = np.dtype(dt)
    if dt.itemsize >= 4:
        return 24
    return 11 if dt == np.float16 else 8  # bfloat16: 8 significant bits


def uniform32(w: np.ndarray, bits: int = 24) -> np.ndarray:
    return (w >> np.uint32(32 - bits)).astype(np.float32) / np.float32(1 << bits)


def uniform64(wa: np.ndarray, wb: np.ndarray) -> np.ndarray:
    k = (wa.astype(np.uint64) >> np.uint64(5) << np.uint64(26)) | (wb >> np.uint32(6))
    return k.astype(np.float64) / float(1 << 53)


def normal(key: int, stream: int, start: int, n: int, dtype: Any) -> np.ndarray:
    """``n`` standard normal values of ``dtype`` (float64, or float32 rounded to it)."""
    dt = np.dtype(dtype)
    kind = "normal64" if dt == np.float64 else "normal32"
    return _normal(key, stream, start, n, kind, dt)


def _normal(key: int, stream: int, start: int, n: int, kind: str, dt: Any) -> np.ndarray:
    nb = blocks_for(kind, n)
    per = 2 if kind == "normal64" else 4
    out = np.empty(nb * per, dt)
    for s in range(0, nb, _CHUNK):
        w = words(key, stream, block_range(start + s, min(_CHUNK, nb - s))).reshape(-1)
        zc, zs = _pairs(w, kind)
        o = out[s * per:s * per + 2 * zc.size].reshape(-1, 2)
        o[:, 0], o[:, 1] = zc, zs
    return out[:n]


def _pairs(w: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Box-Muller's two values of each pair of ``w`` (flat uint32 words of whole blocks)."""
    if kind == "normal32":
        p = w.reshape(-1, 2)
        x = p[:, 0].astype(np.float64) + 1  # u1 = x / 2**32 in (0, 1]
        return box_muller(x, 32, p[:, 1] >> np.uint32(29),
                          (p[:, 1] & np.uint32(0x1FFFFFFF)).astype(np.float64), 29)
    q = w.reshape(-1, 4).astype(np.uint64)
    k = (q[:, 0] << np.uint64(21)) | (q[:, 1] >> np.uint64(11))
    r = ((q[:, 2] & np.uint64(0x1FFFFFFF)) << np.uint64(21)) | (q[:, 3] >> np.uint64(11))
    return box_muller(k.astype(np.float64) + 1, 53, (q[:, 2] >> np.uint64(29)).astype(np.uint32),
                      r.astype(np.float64), 50)


_EXP = np.uint64(0x7FF << 52)
_ONE = np.uint64(1023 << 52)


def box_muller(x: np.ndarray, xbits: int, octant: np.ndarray, r: np.ndarray,
               rbits: int) -> tuple[np.ndarray, np.ndarray]:
    """(rad * cos(theta), rad * sin(theta)) with rad = sqrt(-2 log(x / 2**xbits)) and
    theta = (octant + (r + 1/2) / 2**rbits) * pi/4, in float64 IEEE arithmetic alone
    (``_philox_cuda`` writes the same steps in C; keep the two in the same order).

    ``x`` (whole numbers from 1 to 2**xbits) is m * 2**e with m in [1, 2): e and m are
    read from its bits here, with ``ilogb`` and ``ldexp`` in C (exact in both)."""
    bits = x.view(np.uint64)
    e = ((bits >> np.uint64(52)).astype(np.int64) - 1023)
    m = ((bits & ~_EXP) | _ONE).view(np.float64)
    big = m > SQRT2
    m[big] /= 2
    e += big
    f = m - 1
    dk = (e - xbits).astype(np.float64)
    s = f / (2 + f)
    z = s * s
    w = z * z
    t1 = w * (LG[1] + w * (LG[3] + w * LG[5]))
    t2 = z * (LG[0] + w * (LG[2] + w * (LG[4] + w * LG[6])))
    rr = t2 + t1
    hfsq = f * f / 2
    lnu = dk * LN2_HI - ((hfsq - (s * (hfsq + rr) + dk * LN2_LO)) - f)
    rad = np.sqrt(-2 * lnu)
    odd = (octant & 1).astype(bool)
    rr = np.where(odd, float((1 << rbits) - 1) - r, r)
    phi = (2 * rr + 1) / float(1 << (rbits + 1)) * PIO4
    z = phi * phi
    v = z * phi
    sn = phi + v * (S[0] + z * (S[1] + z * (S[2] + z * (S[3] + z * (S[4] + z * S[5])))))
    rc = z * (C[0] + z * (C[1] + z * (C[2] + z * (C[3] + z * (C[4] + z * C[5])))))
    hz = z / 2
    w = 1 - hz
    cs = w + (((1 - w) - hz) + z * rc)
    # theta's quadrant: swap sine and cosine in odd quadrants (odd octants swapped them
    # already), negate the sine in the lower half plane, the cosine in the left one
    swap = ((octant ^ (octant >> 1)) & 1).astype(bool)
    sin_t = np.where(swap, cs, sn)
    cos_t = np.where(swap, sn, cs)
    sin_t *= rad
    cos_t *= rad
    np.negative(sin_t, out=sin_t, where=octant >= 4)
    np.negative(cos_t, out=cos_t, where=((octant ^ (octant >> 1)) & 2).astype(bool))
    return cos_t, sin_t


def truncated_normal(key: int, stream: int, start: int, n: int, dtype: Any) -> np.ndarray:
    """``n`` normal values within two standard deviations (see the module)."""
    dt = np.dtype(dtype)
    kind = "normal64" if dt == np.float64 else "normal32"
    nb = blocks_for(kind, n)
    shift = SHIFT[kind]
    out = _normal(key, stream, start, n, kind, np.float64)
    todo = np.flatnonzero(np.abs(out) > 2).astype(np.uint64)
    for r in range(1, TRUNCATED_ROUNDS):
        if todo.size == 0:
            break
        blocks = np.unique(todo >> np.uint64(shift))
        w = words(key, stream, blocks + np.uint64((start + r * nb) & MASK64)).reshape(-1)
        zc, zs = _pairs(w, kind)
        # the pair and part of each remaining value, within the blocks computed
        where = np.searchsorted(blocks, todo >> np.uint64(shift))
        per = 1 << shift  # values a block
        pair = where * (per // 2) + ((todo & np.uint64(per - 1)) >> np.uint64(1)).astype(np.intp)
        z = np.where((todo & np.uint64(1)).astype(bool), zs[pair], zc[pair])
        if r == TRUNCATED_ROUNDS - 1:
            z = np.clip(z, -2, 2)
        ok = np.abs(z) <= 2
        out[todo[ok].astype(np.intp)] = z[ok]
        todo = todo[~ok]
    return out.astype(dt)


def integers(key: int, stream: int, start: int, n: int, low: int, span: int,
             dtype: Any) -> np.ndarray:
    """``n`` integers in [low, low + span) (span at most 2**64) of ``dtype``."""
    w = _flat(key, stream, start, "int", n).reshape(-1, 2)[:n].astype(np.uint64)
    v = (w[:, 0] << np.uint64(32)) | w[:, 1]
    if span < 1 << 64:
        v = v % np.uint64(span)
    return (v + np.uint64(low & MASK64)).astype(dtype)
