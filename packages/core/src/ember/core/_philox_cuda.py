"""Philox4x32-10 as ``cupy.ElementwiseKernel``s: ``_philox``'s draws computed on a GPU.

Each output element runs Philox on its own block (``ctr + (i >> shift)``) and takes its
words, so a draw is one kernel with no cuRAND (cupy refuses cuRAND while a CUDA graph
captures) and no host transfer: the generator's key, next block and stream are a uint64
array on the device, which the kernel reads and one in-place add advances. The C repeats
``_philox``'s steps in the same order and types, so the bits are the same (the strict
double's kernel test compares them); constants are ``ldexp`` of integers (C's decimal
float literals would be rounded by the compiler, and the double refuses them).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _philox as P

_KERNELS: dict[tuple[int, str], Any] = {}
_IN = "U key, U ctr, U sub"


def _d(x: float) -> str:
    """A double constant as exact C: ``ldexp((double)M, E)``."""
    m, e = math.frexp(abs(x))
    c = f"ldexp((double){int(m * 2 ** 53)}, {e - 53})"
    return f"(-{c})" if x < 0 else c


class _Code:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.declared: set[str] = set()

    def let(self, ctype: str, name: str, expr: str) -> None:
        if name in self.declared:
            self.lines.append(f"{name} = {expr}")
        else:
            self.declared.add(name)
            self.lines.append(f"{ctype} {name} = {expr}")

    def source(self) -> str:
        return "; ".join(self.lines) + ";"


def _philox(c: _Code, block: str) -> None:
    """Philox4x32-10 of counter (block, sub) under key into c0..c3."""
    u, ull = "unsigned int", "unsigned long long"
    c.let(ull, "b", block)
    c.let(u, "c0", "(unsigned int)b")
    c.let(u, "c1", "(unsigned int)(b >> 32)")
    c.let(u, "c2", "(unsigned int)sub")
    c.let(u, "c3", "(unsigned int)(sub >> 32)")
    c.let(u, "k0", "(unsigned int)key")
    c.let(u, "k1", "(unsigned int)(key >> 32)")
    for r in range(P.ROUNDS):
        if r:
            c.let(u, "k0", f"k0 + {P.W0:#x}u")
            c.let(u, "k1", f"k1 + {P.W1:#x}u")
        c.let(u, "h0", f"__umulhi({P.M0:#x}u, c0)")
        c.let(u, "l0", f"{P.M0:#x}u * c0")
        c.let(u, "h1", f"__umulhi({P.M1:#x}u, c2)")
        c.let(u, "l1", f"{P.M1:#x}u * c2")
        c.let(u, "c0", "h1 ^ c1 ^ k0")
        c.let(u, "c1", "l1")
        c.let(u, "c2", "h0 ^ c3 ^ k1")
        c.let(u, "c3", "l0")


def _box_muller(c: _Code, xbits: int, rbits: int) -> None:
    """``_philox.box_muller`` of x, oc, r into ct (cosine part) and st (sine part)."""
    lg, s, co = [_d(v) for v in P.LG], [_d(v) for v in P.S], [_d(v) for v in P.C]
    for t, n, e in [
        ("int", "e", "ilogb(x)"), ("double", "m", "ldexp(x, -e)"),
        ("bool", "big", f"m > {_d(P.SQRT2)}"), ("double", "m", "big ? m / 2 : m"),
        ("int", "e", "big ? e + 1 : e"), ("double", "f", "m - 1"),
        ("double", "dk", f"(double)(e - {xbits})"), ("double", "s", "f / (2 + f)"),
        ("double", "z", "s * s"), ("double", "w", "z * z"),
        ("double", "t1", f"w * ({lg[1]} + w * ({lg[3]} + w * {lg[5]}))"),
        ("double", "t2", f"z * ({lg[0]} + w * ({lg[2]} + w * ({lg[4]} + w * {lg[6]})))"),
        ("double", "rr", "t2 + t1"), ("double", "hfsq", "f * f / 2"),
        ("double", "lnu", f"dk * {_d(P.LN2_HI)} - ((hfsq - (s * (hfsq + rr) + dk * "
                          f"{_d(P.LN2_LO)})) - f)"),
        ("double", "rad", "sqrt(-2 * lnu)"), ("bool", "odd", "(oc & 1) != 0"),
        ("double", "ra", f"odd ? (double){(1 << rbits) - 1} - r : r"),
        ("double", "phi", f"(2 * ra + 1) / (double){1 << (rbits + 1)} * {_d(P.PIO4)}"),
        ("double", "z", "phi * phi"), ("double", "v", "z * phi"),
        ("double", "sn", f"phi + v * ({s[0]} + z * ({s[1]} + z * ({s[2]} + z * ({s[3]} + z * "
                         f"({s[4]} + z * {s[5]})))))"),
        ("double", "rc", f"z * ({co[0]} + z * ({co[1]} + z * ({co[2]} + z * ({co[3]} + z * "
                         f"({co[4]} + z * {co[5]})))))"),
        ("double", "hz", "z / 2"), ("double", "w", "1 - hz"),
        ("double", "cs", "w + (((1 - w) - hz) + z * rc)"),
        ("bool", "swap", "((oc ^ (oc >> 1)) & 1) != 0"),
        ("double", "st", "(swap ? cs : sn) * rad"), ("double", "ct", "(swap ? sn : cs) * rad"),
        ("double", "st", "oc >= 4 ? -st : st"),
        ("double", "ct", "((oc ^ (oc >> 1)) & 2) != 0 ? -ct : ct"),
    ]:
        c.let(t, n, e)


def _normal_inputs(c: _Code, wide: bool) -> None:
    """x, oc and r of the pair value ``j`` belongs to (``_philox._pairs``)."""
    if wide:
        c.let("unsigned long long", "k", "((unsigned long long)c0 << 21) | (c1 >> 11)")
        c.let("double", "x", "(double)k + 1")
        c.let("unsigned int", "oc", "c2 >> 29")
        c.let("double", "r", "(double)(((unsigned long long)(c2 & 0x1fffffffu) << 21) | "
                             "(c3 >> 11))")
    else:
        c.let("unsigned int", "wa", "((j >> 1) & 1) == 0 ? c0 : c2")
        c.let("unsigned int", "wb", "((j >> 1) & 1) == 0 ? c1 : c3")
        c.let("double", "x", "(double)wa + 1")
        c.let("unsigned int", "oc", "wb >> 29")
        c.let("double", "r", "(double)(wb & 0x1fffffffu)")


def source(kind: str, bits: int = 24) -> tuple[str, str]:
    """(extra input parameters, C) of a kernel drawing ``kind``."""
    c = _Code()
    c.let("unsigned long long", "j", "(unsigned long long)i")
    wide = kind.endswith("64") or kind in ("int", "int_full")
    shift = 1 if wide else 2
    if kind.startswith("truncated"):
        for r in range(P.TRUNCATED_ROUNDS):
            _philox(c, f"ctr + {r}ull * nb + (j >> {shift})")
            _normal_inputs(c, wide)
            _box_muller(c, 53 if wide else 32, 50 if wide else 29)
            c.let("double", "cand", "(j & 1) == 0 ? ct : st")
            if r == P.TRUNCATED_ROUNDS - 1:
                c.let("double", "cand", "cand > 2 ? 2 : (cand < -2 ? -2 : cand)")
            if r == 0:
                c.let("double", "y", "cand")
            else:
                c.let("double", "y", "done ? y : cand")
            c.let("bool", "done", "fabs(y) <= 2")
        c.lines.append("o = y")
        return ", U nb", c.source()
    _philox(c, f"ctr + (j >> {shift})")
    if kind == "uniform32":
        c.let("unsigned int", "w", "(j & 3) == 0 ? c0 : ((j & 3) == 1 ? c1 : "
                                   "((j & 3) == 2 ? c2 : c3))")
        c.lines.append(f"o = (float)(w >> {32 - bits}) / {1 << bits}")
    elif kind == "uniform64":
        c.let("unsigned int", "wa", "(j & 1) == 0 ? c0 : c2")
        c.let("unsigned int", "wb", "(j & 1) == 0 ? c1 : c3")
        c.lines.append("o = (double)(((unsigned long long)(wa >> 5) << 26) | (wb >> 6)) / "
                       f"(double){1 << 53}")
    elif kind.startswith("normal"):
        _normal_inputs(c, wide)
        _box_muller(c, 53 if wide else 32, 50 if wide else 29)
        c.lines.append("o = (j & 1) == 0 ? ct : st")
    elif kind in ("int", "int_full"):
        c.let("unsigned int", "wa", "(j & 1) == 0 ? c0 : c2")
        c.let("unsigned int", "wb", "(j & 1) == 0 ? c1 : c3")
        c.let("unsigned long long", "v", "((unsigned long long)wa << 32) | wb")
        c.lines.append("o = v + low" if kind == "int_full" else "o = v % span + low")
        return ", U span, U low", c.source()
    else:
        raise ValueError(f"unknown draw {kind!r}")
    return "", c.source()


def draw(xp: Any, state: Any, kind: str, shape: tuple[int, ...], dtype: Any,
         *extra: Any, bits: int = 24) -> Any:
    """A draw on the device of ``state`` (the generator's uint64 [key, next block,
    stream]); advances its next block. ``dtype``: the kernel's output dtype."""
    dt = np.dtype(dtype)
    n = math.prod(shape)
    out = xp.empty(shape, dt)
    if n == 0:
        return out
    name = f"ember_philox_{kind}_{bits}_{dt.name}"
    kernel = _KERNELS.get((id(xp), name))
    if kernel is None:
        params, src = source(kind, bits)
        kernel = _KERNELS[(id(xp), name)] = xp.ElementwiseKernel(
            _IN + params, f"{dt.name} o", src, name, options=("--fmad=false",))
    kernel(state[0], state[1], state[2], *extra, out)
    base = "int" if kind.startswith("int") else kind
    advance = state[1:2]
    advance += np.uint64(P.blocks_for(base, n))
    return out
