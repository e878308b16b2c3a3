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

The numpy path runs a draw a chunk of ``_CHUNK`` blocks at a time in arrays allocated once
a draw, every step a ufunc writing into one of them (``out=``), so the working set stays
in the L2 cache and no step allocates; a 32x32->64-bit product is one uint64 multiply.
Box-Muller's octant handling (the odd-octant reflection, swapping sine and cosine, the
signs) is integer arithmetic on the words and on the float64s' bits, and integers reach
float64 through the exponent of 2**52 (exact below 2**52), which numpy runs several
times faster than its conversions, selections and lookups; the steps that round are the
ones ``box_muller`` names, in its order.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

M0, M1 = 0xD2511F53, 0xCD9E8D57  # Philox4x32's multipliers
W0, W1 = 0x9E3779B9, 0xBB67AE85  # its key increments (Weyl sequence)
ROUNDS = 10
TRUNCATED_ROUNDS = 12
MASK32 = 0xFFFFFFFF
MASK64 = (1 << 64) - 1
_CHUNK = 1 << 14  # blocks a pass: fewer calls a block, and the arrays stay near L2

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

_U = np.uint64
_MULT = np.array([[M0], [M1]], np.uint64)
_LOW = _U(MASK32)
_TWO52 = 2.0 ** 52
_MAGIC = _U(0x4330000000000000)  # the bits of 2**52: MAGIC | v is 2**52 + v (v < 2**52)
_SIGN = _U(1 << 63)
_ARANGE = np.arange(_CHUNK, dtype=np.uint64)
_ARANGE.flags.writeable = False


@functools.lru_cache(maxsize=64)
def _round_keys(key: int) -> np.ndarray:
    """The ten rounds' keys of ``key``, (ROUNDS, 2, 1) uint64: lane 0 k0, lane 1 k1."""
    k0, k1 = key & MASK32, (key >> 32) & MASK32
    out = np.empty((ROUNDS, 2, 1), np.uint64)
    for r in range(ROUNDS):
        out[r, 0, 0], out[r, 1, 0] = k0, k1
        k0, k1 = (k0 + W0) & MASK32, (k1 + W1) & MASK32
    out.flags.writeable = False
    return out


class _Philox:
    """Philox4x32-10 of one stream's blocks, up to ``size`` at a time, in arrays reused
    from chunk to chunk. ``w[0]`` holds words 0 and 2 (the multiplied ones, one lane a
    row), ``w[1]`` words 1 and 3, as uint64 holding 32-bit values."""

    def __init__(self, key: int, stream: int, size: int) -> None:
        self.keys = _round_keys(key & MASK64)
        self.stream = (stream & MASK32, (stream >> 32) & MASK32)
        self.w = np.empty((2, 2, size), np.uint64)
        self.p = np.empty((2, size), np.uint64)

    def consecutive(self, first: int, c: int) -> np.ndarray:
        """The (2, 2, c) words of blocks ``first, first + 1, ...`` (wrapping at 2**64)."""
        b = np.add(_ARANGE[:c], _U(first & MASK64), out=self.w[1, 0, :c])
        return self._run(b)

    def blocks(self, b: np.ndarray) -> np.ndarray:
        """The (2, 2, len(b)) words of the given block numbers (uint64)."""
        dst = self.w[1, 0, :b.size]
        np.copyto(dst, b)
        return self._run(dst)

    def _run(self, b: np.ndarray) -> np.ndarray:
        c = b.size
        w = self.w[:, :, :c]
        x, y, p = w[0], w[1], self.p[:, :c]
        np.bitwise_and(b, _LOW, out=x[0])  # b lives in y[0]: the counter's words 0 and 1
        np.right_shift(b, _U(32), out=y[0])
        x[1].fill(self.stream[0])
        y[1].fill(self.stream[1])
        swapped = p[::-1]
        for k in self.keys:  # (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0)
            np.multiply(x, _MULT, out=p)
            np.right_shift(swapped, _U(32), out=x)
            np.bitwise_xor(x, y, out=x)
            np.bitwise_xor(x, k, out=x)
            np.bitwise_and(swapped, _LOW, out=y)
        return w


def philox(counters: np.ndarray, key: tuple[int, int]) -> np.ndarray:
    """Philox4x32-10 of ``counters`` ((n, 4) uint32) under ``key`` (two 32-bit words):
    the (n, 4) uint32 outputs, as Random123's ``philox4x32_R(10, ctr, key)``."""
    c = np.asarray(counters, np.uint32).reshape(-1, 4)
    # counter words (c0, c1) as a block number and (c2, c3) as a stream, one at a time
    out = np.empty(c.shape, np.uint32)
    k = int(key[0]) | int(key[1]) << 32
    for i, (c0, c1, c2, c3) in enumerate(c.tolist()):
        out[i] = words(k, c2 | c3 << 32, [c0 | c1 << 32])[0]
    return out


def _order(w: np.ndarray) -> list[np.ndarray]:
    """A block's words 0, 1, 2, 3 as rows of the (2, 2, c) state."""
    return [w[0, 0], w[1, 0], w[0, 1], w[1, 1]]


def words(key: int, stream: int, blocks: np.ndarray) -> np.ndarray:
    """The (n, 4) uint32 words of the given block numbers (uint64) of a stream."""
    blocks = np.asarray(blocks, np.uint64).reshape(-1)
    out = np.empty((blocks.size, 4), np.uint32)
    ph = _Philox(key, stream, min(_CHUNK, blocks.size))
    for s in range(0, blocks.size, _CHUNK):
        w = ph.blocks(blocks[s:s + _CHUNK])
        for j, row in enumerate(_order(w)):
            np.copyto(out[s:s + row.size, j], row, casting="unsafe")
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


def _chunks(key: int, stream: int, start: int, nb: int):  # type: ignore[no-untyped-def]
    """(first block offset, (2, 2, c) words) of a draw's ``nb`` blocks, chunk by chunk
    (the words live in arrays the next chunk overwrites)."""
    ph = _Philox(key, stream, min(_CHUNK, nb))
    for s in range(0, nb, _CHUNK):
        yield s, ph.consecutive(start + s, min(_CHUNK, nb - s))


def float_bits(dt: Any) -> int:
    """Random bits a [0, 1) float of ``dt`` (float32 or narrower) can hold exactly."""
    dt = np.dtype(dt)
    if dt.itemsize >= 4:
        return 24
    return 11 if dt == np.float16 else 8  # bfloat16: 8 significant bits


def uniform(key: int, stream: int, start: int, n: int, dtype: Any) -> np.ndarray:
    """``n`` uniform floats in [0, 1) of ``dtype`` (a float dtype): float32 and narrower
    the top ``float_bits`` bits of a word times 2**-bits; float64 53 bits of two words."""
    dt = np.dtype(dtype)
    wide = dt == np.float64
    nb = blocks_for("uniform64" if wide else "uniform32", n)
    out = np.empty((nb, 2 if wide else 4), np.float64 if wide else np.float32)
    bits = 53 if wide else float_bits(dt)
    scale = out.dtype.type(2.0 ** -bits)
    tmp = np.empty((2, 2, min(_CHUNK, nb)), out.dtype)
    for s, w in _chunks(key, stream, start, nb):
        c = w.shape[-1]
        if wide:  # (wa >> 5) * 2**26 + (wb >> 6): 53 bits
            np.right_shift(w[0], _U(5), out=w[0])
            np.left_shift(w[0], _U(26), out=w[0])
            np.right_shift(w[1], _U(6), out=w[1])
            np.bitwise_or(w[0], w[1], out=w[0])
            f = tmp[0, :, :c]
            np.copyto(f, w[0].view(np.int64), casting="unsafe")  # exact: below 2**53
            rows = [f[0], f[1]]
        else:
            np.right_shift(w, _U(32 - bits), out=w)
            f = tmp[:, :, :c]
            np.copyto(f, w.view(np.int64), casting="unsafe")  # exact: below 2**24
            rows = _order(f)
        for j, row in enumerate(rows):
            np.multiply(row, scale, out=out[s:s + c, j])  # a power of two: exact
    out = out.reshape(-1)[:n]
    return out if out.dtype == dt else out.astype(dt)


def normal(key: int, stream: int, start: int, n: int, dtype: Any) -> np.ndarray:
    """``n`` standard normal values of ``dtype`` (float64, or float32 rounded to it)."""
    dt = np.dtype(dtype)
    kind = "normal64" if dt == np.float64 else "normal32"
    nb = blocks_for(kind, n)
    out = np.empty((nb, 4 if kind == "normal32" else 2), dt)
    bm = _BoxMuller(kind, min(_CHUNK, nb))
    for s, w in _chunks(key, stream, start, nb):
        bm.values(w, out[s:s + w.shape[-1]])
    return out.reshape(-1)[:n]


class _BoxMuller:
    """Box-Muller's values of a chunk of blocks' words (``_pairs``'s layout), in arrays
    allocated once a draw: float32 draws take a pair from each half of a block (shape
    (2, c), one lane a row), float64 draws one pair from a whole block (shape (c,))."""

    def __init__(self, kind: str, size: int) -> None:
        self.wide = kind == "normal64"
        m = size if self.wide else 2 * size
        self.f = np.empty((7, m), np.float64)
        self.i = np.empty((2, m), np.int32)
        self.u = np.empty((3, m), np.uint64)

    def _bufs(self, shape: tuple[int, ...]) -> tuple[list[np.ndarray], ...]:
        m = math.prod(shape)
        return tuple([a[:m].reshape(shape) for a in arr] for arr in (self.f, self.i, self.u))

    def values(self, w: np.ndarray, out: np.ndarray) -> None:
        """Write the values of the (2, 2, c) words ``w`` (consumed) into ``out`` ((c, 4)
        or (c, 2), the draw's order)."""
        if self.wide:
            c0, c1, c2, c3 = _order(w)
            f, i, u = self._bufs(c0.shape)
            np.left_shift(c0, _U(21), out=c0)  # k = c0 << 21 | c1 >> 11 (53 bits)
            np.right_shift(c1, _U(11), out=c1)
            np.bitwise_or(c0, c1, out=c0)
            x = f[0]
            np.copyto(x, c0.view(np.int64), casting="unsafe")  # exact: below 2**53
            np.add(x, 1.0, out=x)
            r = np.bitwise_and(c2, _U(0x1FFFFFFF), out=u[0])  # r: 50 bits, c2 & ... | c3
            np.left_shift(r, _U(21), out=r)
            np.right_shift(c3, _U(11), out=c3)
            np.bitwise_or(r, c3, out=r)
            cs, sn = _box_muller(x, r, c2, 53, 50, f, i, u)
            out[:, 0], out[:, 1] = cs, sn
            return
        wa, wb = w[0], w[1]
        f, i, u = self._bufs(wa.shape)
        np.bitwise_or(wa, _MAGIC, out=wa)  # wa + 1 as float64: (2**52 + wa) - (2**52 - 1)
        x = wa.view(np.float64)
        np.subtract(x, _TWO52 - 1, out=x)
        r = np.bitwise_and(wb, _U(0x1FFFFFFF), out=u[0])
        cs, sn = _box_muller(x, r, wb, 32, 29, f, i, u)
        for lane in (0, 1):
            out[:, 2 * lane], out[:, 2 * lane + 1] = cs[lane], sn[lane]


def _box_muller(x: np.ndarray, r: np.ndarray, ow: np.ndarray, xbits: int, rbits: int,
                f: list[np.ndarray], i: list[np.ndarray],
                u: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """``box_muller`` in place: ``x`` float64 (whole numbers 1 to 2**xbits), ``r`` and
    ``ow`` uint64 (``r`` below 2**rbits, the octant in bits 29 to 31 of ``ow``, nothing
    above), all consumed; ``f``, ``i``, ``u``: scratch float64, int32 and uint64 arrays
    of their shape. Returns (cosine part, sine part) in two of ``f``."""
    f1, f2, f3, f4, f5, f6 = f[1:7]
    # rad = sqrt(-2 log(x / 2**xbits)), fdlibm's log: x = m * 2**e, m in (sqrt2/2, sqrt2]
    mant, ex = np.frexp(x, out=(f1, i[0]))  # x = mant * 2**ex, mant in [1/2, 1)
    small = np.less_equal(mant, SQRT2 / 2, out=i[1])  # m = 2 mant (else mant)
    fm = np.ldexp(mant, small, out=x)
    np.subtract(fm, 1.0, out=fm)  # f = m - 1
    np.subtract(ex, small, out=ex)  # e
    dk = f1
    np.copyto(dk, ex)
    np.subtract(dk, float(xbits), out=dk)
    s = np.add(fm, 2.0, out=f2)
    np.divide(fm, s, out=s)
    z = np.multiply(s, s, out=f3)
    w = np.multiply(z, z, out=f4)
    t1 = np.multiply(w, LG[5], out=f5)
    for a in (LG[3], LG[1]):
        np.add(t1, a, out=t1)
        np.multiply(t1, w, out=t1)
    t2 = np.multiply(w, LG[6], out=f6)
    for a in (LG[4], LG[2]):
        np.add(t2, a, out=t2)
        np.multiply(t2, w, out=t2)
    np.add(t2, LG[0], out=t2)
    np.multiply(t2, z, out=t2)
    rr = np.add(t2, t1, out=t2)
    hfsq = np.multiply(fm, fm, out=f5)
    np.multiply(hfsq, 0.5, out=hfsq)
    a = np.add(hfsq, rr, out=f6)
    np.multiply(a, s, out=a)
    np.add(a, np.multiply(dk, LN2_LO, out=f3), out=a)
    np.subtract(hfsq, a, out=a)
    np.subtract(a, fm, out=a)
    np.multiply(dk, LN2_HI, out=dk)
    rad = np.subtract(dk, a, out=dk)  # log(x / 2**xbits)
    np.multiply(rad, -2.0, out=rad)
    np.sqrt(rad, out=rad)
    # theta = (octant + (r + 1/2) / 2**rbits) pi/4: phi = (2 r' + 1) pi/4 / 2**(rbits + 1),
    # r' = r (2**rbits - 1 - r in odd octants: r ^ (2**rbits - 1)), exact in 2**52 + ...
    odd = np.left_shift(ow, _U(34), out=u[1])
    np.right_shift(odd.view(np.int64), 63, out=odd.view(np.int64))  # all ones if odd
    np.bitwise_and(odd, _U((1 << rbits) - 1), out=odd)
    np.bitwise_xor(r, odd, out=r)
    np.left_shift(r, _U(1), out=r)
    np.bitwise_or(r, _MAGIC | _U(1), out=r)
    phi = r.view(np.float64)
    np.subtract(phi, _TWO52, out=phi)
    np.multiply(phi, PIO4 / float(1 << (rbits + 1)), out=phi)  # the one rounding step
    z = np.multiply(phi, phi, out=f2)
    v = np.multiply(z, phi, out=f3)
    sn = np.multiply(z, S[5], out=f4)
    for a in (S[4], S[3], S[2], S[1]):
        np.add(sn, a, out=sn)
        np.multiply(sn, z, out=sn)
    np.add(sn, S[0], out=sn)
    np.multiply(sn, v, out=sn)
    np.add(sn, phi, out=sn)
    rc = np.multiply(z, C[5], out=f5)
    for a in (C[4], C[3], C[2], C[1], C[0]):
        np.add(rc, a, out=rc)
        np.multiply(rc, z, out=rc)
    hz = np.multiply(z, 0.5, out=f3)
    cw = np.subtract(1.0, hz, out=f6)
    q = np.subtract(1.0, cw, out=x)
    np.subtract(q, hz, out=q)
    np.multiply(rc, z, out=rc)
    np.add(q, rc, out=q)
    cs = np.add(cw, q, out=cw)
    np.multiply(cs, rad, out=cs)
    np.multiply(sn, rad, out=sn)
    # theta's quadrant on the float64s' bits: d = oc ^ (oc >> 1) (shifted by 29); swap
    # where d's bit 0 is set, then negate the cosine where bit 1 is, the sine where oc >= 4
    csb, snb = cs.view(np.uint64), sn.view(np.uint64)
    d = np.right_shift(ow, _U(1), out=u[1])
    np.bitwise_xor(d, ow, out=d)
    m = np.left_shift(d, _U(34), out=u[2])
    np.right_shift(m.view(np.int64), 63, out=m.view(np.int64))
    diff = np.bitwise_xor(csb, snb, out=ow)
    np.bitwise_and(diff, m, out=diff)
    np.bitwise_xor(csb, diff, out=csb)
    np.bitwise_xor(snb, diff, out=snb)
    np.left_shift(d, _U(33), out=m)
    np.bitwise_and(m, _SIGN, out=m)
    np.bitwise_xor(csb, m, out=csb)
    np.left_shift(d, _U(32), out=d)  # bit 31 of ow (d's bit 32 is 0)
    np.bitwise_and(d, _SIGN, out=d)
    np.bitwise_xor(snb, d, out=snb)
    return cs, sn


def box_muller(x: np.ndarray, xbits: int, octant: np.ndarray, r: np.ndarray,
               rbits: int) -> tuple[np.ndarray, np.ndarray]:
    """(rad * cos(theta), rad * sin(theta)) with rad = sqrt(-2 log(x / 2**xbits)) and
    theta = (octant + (r + 1/2) / 2**rbits) * pi/4, in float64 IEEE arithmetic alone
    (``_philox_cuda`` writes the same steps in C; keep the two in the same order).

    ``x`` (whole numbers from 1 to 2**xbits) is m * 2**e with m in [1, 2): e and m are
    read from its bits here, with ``ilogb`` and ``ldexp`` in C (exact in both)."""
    xs = np.array(x, np.float64).reshape(-1)
    shape = np.shape(x)
    ow = np.left_shift(np.asarray(octant, np.uint64).reshape(-1), _U(29))
    rr = np.asarray(r, np.float64).reshape(-1).astype(np.uint64)
    f = list(np.empty((7, xs.size)))
    cs, sn = _box_muller(xs, rr, ow, xbits, rbits, f, list(np.empty((2, xs.size), np.int32)),
                         list(np.empty((3, xs.size), np.uint64)))
    return cs.reshape(shape), sn.reshape(shape)


def truncated_normal(key: int, stream: int, start: int, n: int, dtype: Any) -> np.ndarray:
    """``n`` normal values within two standard deviations (see the module)."""
    dt = np.dtype(dtype)
    kind = "normal64" if dt == np.float64 else "normal32"
    nb = blocks_for(kind, n)
    shift = SHIFT[kind]
    per = 1 << shift  # values a block
    out = np.empty(nb * per, dt)
    size = min(_CHUNK, nb)
    bm = _BoxMuller(kind, size)
    vals = np.empty((size, per))
    todo = []
    for s, w in _chunks(key, stream, start, nb):
        v = vals[:w.shape[-1]]
        bm.values(w, v)
        out[s * per:s * per + v.size] = v.reshape(-1)
        far = np.flatnonzero(np.abs(v.reshape(-1)) > 2)
        if far.size:
            todo.append(far + s * per)
    left = np.concatenate(todo).astype(np.uint64) if todo else np.empty(0, np.uint64)
    left = left[left < n]  # not the last block's padding
    for r in range(1, TRUNCATED_ROUNDS):
        if left.size == 0:
            break
        blocks = left >> _U(shift)  # sorted (as ``left`` is): unique without a hash table
        blocks = blocks[np.concatenate(([True], blocks[1:] != blocks[:-1]))]
        ph = _Philox(key, stream, min(_CHUNK, blocks.size))
        cand = np.empty((blocks.size, per))
        base = _U((start + r * nb) & MASK64)
        for s in range(0, blocks.size, _CHUNK):
            b = blocks[s:s + _CHUNK] + base
            bm.values(ph.blocks(b), cand[s:s + b.size])
        where = np.searchsorted(blocks, left >> _U(shift)).astype(np.intp)
        z = cand.reshape(-1)[where * per + (left & _U(per - 1)).astype(np.intp)]
        if r == TRUNCATED_ROUNDS - 1:
            z = np.clip(z, -2, 2)
        ok = np.abs(z) <= 2
        out[left[ok].astype(np.intp)] = z[ok]
        left = left[~ok]
    return out[:n]


def integers(key: int, stream: int, start: int, n: int, low: int, span: int,
             dtype: Any) -> np.ndarray:
    """``n`` integers in [low, low + span) (span at most 2**64) of ``dtype``: 64 bits of
    a pair of words modulo ``span``."""
    nb = blocks_for("int", n)
    out = np.empty((nb, 2), dtype)
    for s, w in _chunks(key, stream, start, nb):
        v = w[0]
        np.left_shift(v, _U(32), out=v)
        np.bitwise_or(v, w[1], out=v)
        if span < 1 << 64:
            np.remainder(v, _U(span), out=v)
        np.add(v, _U(low & MASK64), out=v)
        for lane in (0, 1):
            np.copyto(out[s:s + v.shape[-1], lane], v[lane], casting="unsafe")
    return out.reshape(-1)[:n]
