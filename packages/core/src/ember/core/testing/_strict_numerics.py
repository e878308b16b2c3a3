"""Numbers as a GPU computes them: the double's results where cupy 14's differ from numpy's.

``computed(qual, fn, args, kwargs, call)`` runs inside the launch of each ``xp`` call
(``call()`` is numpy's computation), so a captured CUDA graph's replays compute the same
numbers as the eager call. It gives what cupy would:

- **Floor division and remainder of floats** (``floor_divide``, ``remainder``/``mod``,
  ``divmod``, and the ``//``, ``%`` operators through them). cupy computes
  ``floor(x / y)`` and ``x - floor(x / y) * y`` (``cupy/_core/_routines_math.pyx``,
  ``_floor_divide`` in ``include/cupy/carray.cuh``), which nvcc contracts into one fused
  multiply-add; float16 in float. numpy starts from ``fmod`` and corrects it (Python's
  semantics). At exact multiples they disagree: float32 ``1.05 % 0.35`` is 0.34999996 in
  numpy and -2.98e-08 on a GPU (as an H200 gave), ``1.05 // 0.35`` 2 against 3. Integer
  kernels agree with numpy (a zero divisor gives 0 in both).
- **The rounding of library results** (``as_gpu_computes``): CUDA's math functions, cuBLAS
  products, cuSOLVER's factorizations and cupy's reductions round differently from numpy's
  (other algorithms, other summation orders), so their float results here move by 1 or 2
  ulp, deterministically (chosen by a hash of the value's bits: the same value moves the
  same way in every call, in a fused kernel as in ``cupy.exp``). A test that holds a GPU
  result to numpy's at ``rtol=1e-7`` fails here as it would on a GPU. What a GPU keeps
  exact stays exact: zeros, infinities, NaN; whole numbers a math function returns
  (``exp(0) == 1``, ``tanh`` saturating at 1, ``log2(8) == 3``); products, sums and
  factorizations whose exact value the dtype can hold (small integers, an identity
  matrix, one-hot rows), checked against the same call in higher precision. A value never
  moves across a whole number, so ``tanh``, ``sin`` and ``erf`` stay in [-1, 1], ``exp``
  of a negative number at most 1, and odd functions stay odd.
- **0-d uploads** (``uploaded``): ``cupy.asarray`` of 0-d host data fills the new array
  with ``ndarray.fill``, which clears the memory (``memset``) for a value equal to 0, so
  -0.0 lands as +0.0 (``_array_default`` and ``fill`` in ``cupy/_core/core.pyx``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

# --- floor division and remainder ----------------------------------------------------------
_FLOOR = frozenset({"remainder", "floor_divide", "divmod"})

# --- what rounds differently on a GPU ------------------------------------------------------
# CUDA's math functions (a few ulp from the correctly rounded value, as numpy's libm may be)
_MATH = frozenset({
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin",
    "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
    "logaddexp", "logaddexp2", "cbrt", "power", "float_power", "erf",
    "cupyx.scipy.special.erf",
})
# cuBLAS (matmul, dot, tensordot and einsum's contractions): another summation order
_BLAS = frozenset({"matmul", "dot", "vdot", "inner", "tensordot", "einsum",
                   "linalg.multi_dot", "linalg.matrix_power"})
# cuSOLVER: other factorization algorithms
_SOLVER = frozenset({
    "linalg.solve", "linalg.inv", "linalg.cholesky", "linalg.qr", "linalg.svd", "linalg.eigh",
    "linalg.eigvalsh", "linalg.det", "linalg.slogdet", "linalg.lstsq", "linalg.pinv",
    "linalg.tensorsolve", "linalg.tensorinv",
})
# cupy's reduction and scan kernels: a tree, not numpy's pairwise order
_REDUCE = frozenset({"sum", "mean", "var", "std", "prod", "nansum", "nanmean", "nanvar",
                     "nanstd", "nanprod", "cumsum", "cumprod", "average", "add.reduce",
                     "multiply.reduce", "add.accumulate", "multiply.accumulate"})
_STEPS = np.array([-2, -1, 1, 2])
_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}
_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))
# longdouble recomputations of float64 products cost time: beyond this many
# multiply-adds, whole-number results alone count as exact
_LONG_MAX_WORK = 2_000_000
_CREATION = frozenset({"array", "asarray", "asanyarray", "ascontiguousarray"})
# float32 arithmetic: a GPU's NaN result is its canonical NaN, 0x7fffffff, whatever the
# operands' NaN (numpy on x86 keeps an operand's payload and gives 0xffc00000, a negative
# NaN, for an invalid operation), as the H200 gave in floordiv and a float32 NaN widened
_ARITH = frozenset({"add", "subtract", "multiply", "divide", "true_divide", "fmod", "sqrt",
                    "reciprocal", "square", "floor_divide", "remainder", "divmod"}) | _MATH
_NAN32 = np.uint32(0x7FFFFFFF)


def canonical_nan(out: Any) -> Any:
    """``out`` with each float32 NaN made the GPU's canonical one (in place for arrays)."""
    if isinstance(out, tuple):
        return tuple(canonical_nan(o) for o in out)
    if getattr(out, "dtype", None) != np.float32:
        return out
    if isinstance(out, np.ndarray):
        if out.flags.writeable:
            bits = out.view(np.uint32)
            bits[(bits & _NAN32) > np.uint32(0x7F800000)] = _NAN32
        return out
    return np.array(_NAN32).view(np.float32)[()] if np.isnan(out) else out


def widened_nan(a: np.ndarray) -> np.ndarray:
    """float32 ``a`` as float64 as a GPU converts it: a NaN becomes the float32 canonical
    NaN widened, 0x7FFFFFFFE0000000 (the H200's; numpy keeps the payload: 0x7FF8...)."""
    out = a.astype(np.float64)
    bits = out.view(np.uint64)
    bits[np.isnan(a)] = np.uint64(0x7FFFFFFFE0000000)
    return out


def computed(qual: str, fn: Callable[..., Any], args: Any, kwargs: dict[str, Any],
             call: Callable[[], Any], *, host_data: bool = False) -> Any:
    """``cupy.<qual>(*args, **kwargs)`` as cupy 14 computes it; ``call()`` is numpy's
    ``fn(*args, **kwargs)`` (with the double's own handling, e.g. wrapped indices), and
    ``host_data`` says that a creation function (``asarray``, ...) was given host data."""
    if qual in _ARITH:
        return canonical_nan(_computed(qual, fn, args, kwargs, call, host_data))
    return _computed(qual, fn, args, kwargs, call, host_data)


def _computed(qual: str, fn: Callable[..., Any], args: Any, kwargs: dict[str, Any],
              call: Callable[[], Any], host_data: bool) -> Any:
    if qual in _FLOOR and len(args) >= 2:
        return _floor_ops(qual, args, kwargs, call)
    if host_data and qual in _CREATION:
        return uploaded(np.asarray(call()))  # cupy copies host data, never aliases it
    owner = getattr(fn, "__self__", None)
    if qual == "fill" and isinstance(owner, np.ndarray) and args:
        out = call()
        if owner.flags.c_contiguous and bool(np.asarray(args[0]) == 0):
            owner[...] = 0  # cupy's fill memsets for a value == 0: -0.0 lands as +0.0
        return out
    if _rounds(qual):
        args, owner = _operands(args, kwargs, owner)
        out = call()
        return as_gpu_computes(qual, args, kwargs, out, fn=fn, owner=owner)
    return call()


def uploaded(host: np.ndarray) -> np.ndarray:
    """A device copy of ``host`` as ``cupy.asarray`` makes it: 0-d data goes through
    ``fill``, whose ``memset`` for a value equal to 0 turns -0.0 into +0.0."""
    dev = np.array(host, copy=True)
    if dev.ndim == 0 and dev.dtype.kind in "fc" and dev == 0:
        dev = np.zeros_like(dev)
    return dev


def as_gpu_computes(qual: str, args: Any, kwargs: Any, out: Any, *,
                    fn: Callable[..., Any] | None = None, owner: Any = None,
                    salt: int = 0) -> Any:
    """``out`` (numpy's result of ``cupy.<qual>(*args, **kwargs)``) as a GPU rounds it: float
    results of math functions, products, solvers and reductions moved by 1 or 2 ulp where
    a GPU does not keep them exact. ``fn`` (numpy's function, or an array's method with
    ``owner`` its array) recomputes the call in higher precision to find those. ``salt``
    changes which way each value moves: another library's rounding (nvmath's cuBLASLt)."""
    if not _rounds(qual):
        return out
    if isinstance(out, tuple):
        return tuple(_moved(qual, args, kwargs, o, fn, owner, i, salt) for i, o in enumerate(out))
    if isinstance(out, list):
        return [_moved(qual, args, kwargs, o, fn, owner, i, salt) for i, o in enumerate(out)]
    return _moved(qual, args, kwargs, out, fn, owner, None, salt)


def gpu_math(name: str, f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` (numpy's ``name``) as a CUDA math function rounds it: for the double's
    ``ElementwiseKernel``, so a fused kernel's ``exp`` gives ``cupy.exp``'s bits."""
    qual = {"atan2": "arctan2", "pow": "power", "atan": "arctan"}.get(name, name)

    def math(*a: Any) -> Any:
        return as_gpu_computes(qual, a, {}, f(*a))

    return math


def _rounds(qual: str) -> bool:
    return qual in _MATH or qual in _BLAS or qual in _SOLVER or qual in _REDUCE


def _operands(args: Any, kwargs: dict[str, Any], owner: Any) -> tuple[Any, Any]:
    """``args`` and ``owner``, copied where an ``out=`` buffer overlaps them (numpy writes
    the result over them before the exactness check reads them)."""
    dest = kwargs.get("out")
    if dest is None:
        return args, owner
    dests = [d for d in (dest if isinstance(dest, tuple) else (dest,))
             if isinstance(d, np.ndarray)]

    def safe(a: Any) -> Any:
        if isinstance(a, np.ndarray) and any(np.may_share_memory(a, d) for d in dests):
            return a.copy()
        return a

    return tuple(safe(a) for a in args), safe(owner)


# --- floor division and remainder ----------------------------------------------------------
def _floor_ops(qual: str, args: Any, kwargs: dict[str, Any], call: Callable[[], Any]) -> Any:
    x, y = (a.copy() if isinstance(a, np.ndarray) else a for a in args[:2])  # out= may alias
    out = call()  # numpy's: its dtype, shape, checks and out= buffers
    outs = [np.asarray(o) for o in (out if isinstance(out, tuple) else (out,))]
    dt = outs[0].dtype
    if dt not in _FLOATS:
        return out  # cupy's integer kernels give numpy's answers (a zero divisor gives 0)
    q, r = cupy_floor_divmod(x, y, dt)
    want = {"floor_divide": (q,), "remainder": (r,), "divmod": (q, r)}[qual]
    for o, w in zip(outs, want):
        np.copyto(o, w, where=kwargs.get("where", True))
    return tuple(outs) if isinstance(out, tuple) else outs[0]


def cupy_floor_divmod(x: Any, y: Any, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """cupy 14's float ``floor_divide`` and ``remainder`` of ``x`` and ``y`` in ``dtype``:
    ``floor(x / y)`` and ``fma(-floor(x / y), y, x)`` (float16 computes in float)."""
    ct = np.dtype(np.float32) if dtype.itemsize < 4 else dtype
    xa = np.asarray(x).astype(dtype).astype(ct)  # the loop's operands (scalars cast to it)
    ya = np.asarray(y).astype(dtype).astype(ct)
    with np.errstate(all="ignore"):
        q = np.floor(xa / ya)
        r = _fma(-q, ya, xa)
    return q.astype(dtype), r.astype(dtype)


def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``a * b + c`` rounded once, as a GPU's fused multiply-add: float32 through float64
    (where the product is exact), float64 through error-free transformations."""
    if a.dtype != np.float64:
        return (a.astype(np.float64) * b + c.astype(np.float64)).astype(a.dtype)
    p = a * b
    e = _product_error(a, b, p)  # a * b == p + e exactly
    s = p + c
    v = s - p
    t = (p - (s - v)) + (c - v)  # p + c == s + t exactly
    r = s + (t + e)
    return np.where(np.isfinite(r), r, p + c)  # infinities and NaN as the plain sum


def _product_error(a: np.ndarray, b: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Dekker's exact error of the float64 product ``p = a * b``."""
    ah, al = _split(a)
    bh, bl = _split(b)
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t = a * 134217729.0  # 2**27 + 1: Veltkamp's split into two 26-bit halves
    hi = t - (t - a)
    return hi, a - hi


# --- rounding ------------------------------------------------------------------------------
def _moved(qual: str, args: Any, kwargs: Any, out: Any, fn: Any, owner: Any,
           index: int | None, salt: int = 0) -> Any:
    y = np.asarray(out)
    if y.dtype not in _FLOATS or y.size == 0:
        return out
    if qual == "power" and len(args) >= 2 and _whole(np.asarray(args[1])).all():
        return out  # integer powers: correctly rounded products on a GPU too
    with np.errstate(all="ignore"):
        keep = _exact(qual, args, kwargs, y, fn, owner, index)
        moved = _perturbed(y, keep, salt)
    if moved is y:
        return out
    dests = kwargs.get("out")
    dests = dests if isinstance(dests, tuple) else (dests,)
    if isinstance(out, np.ndarray) and any(out is d for d in dests):
        np.copyto(out, moved)  # the caller's out= buffer holds the result
        return out
    return moved


def _whole(y: np.ndarray) -> np.ndarray:
    return np.isfinite(y) & (np.trunc(y) == y)


def _exact(qual: str, args: Any, kwargs: Any, y: np.ndarray, fn: Any, owner: Any,
           index: int | None) -> np.ndarray:
    """Where a GPU gives numpy's value: what the dtype can hold of the exact result (found
    in higher precision), or for math functions and where that is too costly, whole
    numbers."""
    if qual in _MATH:
        return _whole(y)
    ref = _higher(qual, args, kwargs, y, fn, owner, index)
    if ref is None:
        return _whole(y)
    return ~np.isfinite(ref) | (ref.astype(y.dtype).astype(ref.dtype) == ref)


def _higher(qual: str, args: Any, kwargs: Any, y: np.ndarray, fn: Any, owner: Any,
            index: int | None) -> np.ndarray | None:
    """The call again in float64 (or longdouble for float64), None where not possible."""
    if fn is None:
        return None
    hp: Any = np.float64
    if y.dtype == np.float64:
        sizes = [max(a.size, 1) for a in (*args, owner) if isinstance(a, np.ndarray)]
        work = max([np.sqrt(float(np.prod(sizes + [max(y.size, 1)])))] + sizes)
        if (qual in _SOLVER or np.finfo(np.longdouble).nmant <= 52
                or work > _LONG_MAX_WORK):
            return None
        hp = np.longdouble

    def up(a: Any) -> Any:
        if isinstance(a, np.ndarray) and a.dtype.kind in "fiub":
            return a.astype(hp)
        if isinstance(a, (list, tuple)) and any(isinstance(v, np.ndarray) for v in a):
            return type(a)(up(v) for v in a)
        return a

    kw = {k: v for k, v in kwargs.items() if k not in ("out", "dtype")}
    try:
        if isinstance(owner, np.ndarray):
            ref = getattr(up(owner), fn.__name__)(*up(args), **kw)
        else:
            ref = fn(*up(list(args)), **kw)
    except (TypeError, ValueError, np.linalg.LinAlgError):
        return None
    if index is not None:
        if not isinstance(ref, (tuple, list)) or len(ref) <= index:
            return None
        ref = ref[index]
    ref = np.asarray(ref)
    if ref.shape != y.shape or ref.dtype.kind != "f":
        return None
    return ref


def _perturbed(y: np.ndarray, keep: np.ndarray, salt: int = 0) -> np.ndarray:
    """``y`` with each value outside ``keep`` moved by 1 or 2 ulp (its magnitude, so that
    the sign stays), never across a whole number; ``y`` itself where nothing moves."""
    tiny = np.finfo(y.dtype).tiny
    mag = np.abs(y)
    lo, hi = np.floor(y), np.ceil(y)
    move = ~keep & np.isfinite(y) & (mag >= tiny) & (lo != hi)
    if not move.any():
        return y
    ut = _UINT[y.dtype.itemsize]
    bits = np.array(mag, order="C").view(ut).astype(np.int64)
    mixed = (bits.astype(np.uint64) ^ np.uint64(salt)) * np.uint64(0x9E3779B97F4A7C15)  # a hash
    steps = _STEPS[(mixed >> np.uint64(58)).astype(np.int64) % len(_STEPS)]
    out = y
    for sign in (1, -1):  # the other way where the first would cross a whole number
        cand = np.copysign((bits + sign * steps).astype(ut).view(y.dtype), y)
        ok = move & (cand >= lo) & (cand <= hi)
        out = np.where(ok, cand, out)
        move = move & ~ok
    return np.asarray(out, dtype=y.dtype)
