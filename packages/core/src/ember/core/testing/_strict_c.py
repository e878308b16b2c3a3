"""C's arithmetic on numpy arrays, for the strict double's ``ElementwiseKernel``.

numpy promotes differently from C (uint32 + int32 is int64 in numpy, unsigned int in C;
float32 * int32 is float64 in numpy, float in C; ``/`` of integers is a float in numpy),
so each operator here converts its operands by C's usual arithmetic conversions first:
integer promotion (bool, char, short to int), then the wider type, unsigned winning a tie.
Integer literals carry their C type (``Lit``): ``7`` is int, ``0xD2511F53`` unsigned int,
``7ull`` unsigned long long; against a floating operand they stay numpy's weak Python int,
which converts to the float type as C does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# C's type names, as cupy's kernels use them (long is 64 bits, as on Linux)
C_TYPES: dict[str, np.dtype] = {
    "bool": np.dtype(np.bool_), "int": np.dtype(np.int32), "signed int": np.dtype(np.int32),
    "unsigned int": np.dtype(np.uint32), "unsigned": np.dtype(np.uint32),
    "long": np.dtype(np.int64), "long long": np.dtype(np.int64),
    "unsigned long": np.dtype(np.uint64), "unsigned long long": np.dtype(np.uint64),
    "float": np.dtype(np.float32), "double": np.dtype(np.float64),
}


class CError(ValueError):
    """An operation C rejects (or leaves undefined) on these operands."""


class Undefined(CError):
    """A value whose C behaviour is undefined (a shift by the type's width or more)."""


class Lit:
    """An integer literal: its value and C type."""

    __slots__ = ("value", "dtype")

    def __init__(self, value: int, dtype: np.dtype) -> None:
        self.value = value
        self.dtype = dtype


def literal(text: str) -> Lit:
    """An integer literal's value and C type (decimal: int, long; hexadecimal: also the
    unsigned types; suffixes ``u`` and ``l``/``ll``)."""
    body = text.rstrip("uUlL")
    suffix = text[len(body):].lower()
    value = int(body, 16) if body[:2].lower() == "0x" else int(body, 10)
    unsigned, longs = "u" in suffix, suffix.count("l")
    if suffix.replace("u", "", 1) not in ("", "l", "ll"):
        raise CError(f"invalid integer suffix in {text!r}")
    hexa = body[:2].lower() == "0x"
    order = [np.int32, np.uint32, np.int64, np.uint64]
    if longs:
        order = order[2:]
    if unsigned:
        order = [t for t in order if t in (np.uint32, np.uint64)]
    elif not hexa:
        order = [t for t in order if t in (np.int32, np.int64)]
    for t in order:
        if value <= np.iinfo(t).max:
            return Lit(value, np.dtype(t))
    raise CError(f"integer literal {text!r} is too large for any of its C types")


def dtype_of(v: Any) -> np.dtype:
    return v.dtype if isinstance(v, Lit) else np.asarray(v).dtype


def _promoted(dt: np.dtype) -> np.dtype:
    """C's integer promotion: types narrower than int (and bool) become int."""
    if dt.kind in "biu" and dt.itemsize < 4 or dt.kind == "b":
        return np.dtype(np.int32)
    return dt


def common(a: np.dtype, b: np.dtype) -> np.dtype:
    """C's usual arithmetic conversions of two operand types."""
    if a.kind == "f" or b.kind == "f":
        floats = [d for d in (a, b) if d.kind == "f"]
        return max(floats, key=lambda d: d.itemsize)
    a, b = _promoted(a), _promoted(b)
    if a == b:
        return a
    if (a.kind == "u") == (b.kind == "u"):
        return a if a.itemsize >= b.itemsize else b
    u, s = (a, b) if a.kind == "u" else (b, a)
    return u if u.itemsize >= s.itemsize else s


def cast(v: Any, dt: np.dtype) -> Any:
    """``(dt) v``: modular for integers, as nvcc's conversions are."""
    if isinstance(v, Lit):
        return np.array(v.value).astype(dt)
    return np.asarray(v).astype(dt, copy=False)


def _operands(a: Any, b: Any) -> tuple[Any, Any]:
    da, db = dtype_of(a), dtype_of(b)
    if da.kind == "f" or db.kind == "f":  # a literal stays a weak Python int (C converts it)
        ct = common(da, db)
        return (a.value if isinstance(a, Lit) else cast(a, ct),
                b.value if isinstance(b, Lit) else cast(b, ct))
    ct = common(da, db)
    return cast(a, ct), cast(b, ct)


def _integral(op: str, *vs: Any) -> None:
    for v in vs:
        if dtype_of(v).kind == "f":
            raise CError(f"operator {op!r}: expression must have integral type, got "
                         f"{dtype_of(v)}")


def _divide(a: Any, b: Any) -> Any:
    if np.result_type(a, b).kind == "f":  # (a weak Python int stays weak)
        return np.true_divide(a, b)
    a, b = np.asarray(a), np.asarray(b)
    q = np.floor_divide(a, b)  # C truncates toward zero
    if a.dtype.kind == "i":
        q = q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0)))
    return q.astype(a.dtype, copy=False)


def _shift(fn: Any, op: str) -> Any:
    def shift(a: Any, b: Any) -> Any:
        _integral(op, a, b)
        left = cast(a, _promoted(dtype_of(a)))
        count = np.asarray(b.value if isinstance(b, Lit) else b)
        bits = left.dtype.itemsize * 8
        if np.any((count < 0) | (count >= bits)):
            raise Undefined(f"shift count out of [0, {bits}) for {left.dtype} (undefined in C)")
        return fn(left, count.astype(left.dtype))
    return shift


def _arith(fn: Any, op: str, integral: bool = False) -> Any:
    def arith(a: Any, b: Any) -> Any:
        if integral:
            _integral(op, a, b)
        x, y = _operands(a, b)
        if op == "/":
            return _divide(x, y)
        if op == "%":
            return np.fmod(x, y)  # the sign of the dividend, as C
        return fn(x, y)
    return arith


BINARY = {
    "+": _arith(np.add, "+"), "-": _arith(np.subtract, "-"), "*": _arith(np.multiply, "*"),
    "/": _arith(None, "/"), "%": _arith(None, "%", integral=True),
    "<": _arith(np.less, "<"), ">": _arith(np.greater, ">"),
    "<=": _arith(np.less_equal, "<="), ">=": _arith(np.greater_equal, ">="),
    "==": _arith(np.equal, "=="), "!=": _arith(np.not_equal, "!="),
    "&": _arith(np.bitwise_and, "&", True), "|": _arith(np.bitwise_or, "|", True),
    "^": _arith(np.bitwise_xor, "^", True),
    "<<": _shift(np.left_shift, "<<"), ">>": _shift(np.right_shift, ">>"),
    "&&": lambda a, b: np.logical_and(truth(a), truth(b)),
    "||": lambda a, b: np.logical_or(truth(a), truth(b)),
}


def truth(v: Any) -> Any:
    return v.value != 0 if isinstance(v, Lit) else np.asarray(v) != 0


def negate(v: Any) -> Any:
    if isinstance(v, Lit):
        return Lit(int(np.array(-v.value).astype(v.dtype)), v.dtype) if v.dtype.kind == "u" \
            else Lit(-v.value, v.dtype)
    return np.negative(cast(v, _promoted(dtype_of(v))))


def invert(v: Any) -> Any:
    _integral("~", v)
    return np.invert(cast(v, _promoted(dtype_of(v))))


def select(c: Any, a: Any, b: Any) -> Any:
    """``c ? a : b``, its branches converted to their common type. A ``float16`` branch
    against an integer one is ambiguous to nvrtc (cupy's ``float16`` class converts from
    ``int`` and to ``float``, each way): write ``(T)0``, as the H200 showed."""
    da, db = dtype_of(a), dtype_of(b)
    if {da.kind, db.kind} & {"i", "u", "b"} and np.dtype(np.float16) in (da, db):
        raise CError(f'ambiguous "?" operation: second operand of type '
                     f'"{_c_name(da)}" can be converted to third operand type '
                     f'"{_c_name(db)}", and vice versa')
    x, y = _operands(a, b)
    return np.where(truth(c), x, y)


def _c_name(dt: np.dtype) -> str:
    return "float16" if dt == np.float16 else next(
        (n for n, t in C_TYPES.items() if t == dt), str(dt))


def floating_only(name: str, fn: Any) -> Any:
    """``fn`` as CUDA's ``isnan``/``isinf``, which overload float, double and long double
    only: an integer argument matches all three, an error for nvrtc (the H200's, on an
    int32 max pool)."""
    def call(x: Any, *rest: Any) -> Any:
        if dtype_of(x).kind != "f":
            raise CError(f'more than one instance of overloaded function "{name}" matches '
                         f'the argument list: argument types are: ({_c_name(dtype_of(x))})')
        return fn(x, *rest)
    return call


def umulhi(a: Any, b: Any) -> Any:
    """CUDA's ``__umulhi``: the high 32 bits of the 64-bit product of two unsigned ints."""
    _integral("__umulhi", a, b)
    x = cast(a, np.dtype(np.uint32)).astype(np.uint64)
    y = cast(b, np.dtype(np.uint32)).astype(np.uint64)
    return (x * y >> np.uint64(32)).astype(np.uint32)


def ilogb(x: Any) -> Any:
    """CUDA's ``ilogb`` (exact): the unbiased exponent of a float, as an int."""
    a = np.asarray(x)
    if a.dtype.kind != "f":
        raise CError(f"ilogb: the double passes floating-point arguments only, got {a.dtype}")
    e = np.frexp(a)[1].astype(np.int32) - 1
    return np.where(a == 0, np.iinfo(np.int32).min,
                    np.where(np.isfinite(a), e, np.iinfo(np.int32).max)).astype(np.int32)


def ldexp(x: Any, n: Any) -> Any:
    """CUDA's ``ldexp`` (exact): ``x * 2**n`` in ``x``'s floating-point type."""
    a = np.asarray(x)
    if a.dtype.kind != "f":
        raise CError(f"ldexp: the double passes a floating-point first argument only, got "
                     f"{a.dtype}")
    _integral("ldexp", n)
    return np.ldexp(a, cast(n, np.dtype(np.int32))).astype(a.dtype, copy=False)
