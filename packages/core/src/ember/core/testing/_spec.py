"""OpSpec, Case, input samplers and the helpers that build element-wise families."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import _dtypes

F32, F64 = _dtypes.float32, _dtypes.float64
F16, BF16 = _dtypes.float16, _dtypes.bfloat16
I32, I64, U8, BOOL = _dtypes.int32, _dtypes.int64, _dtypes.uint8, _dtypes.bool_
FLOATS = (F32, F64)
LOW = (F16, BF16)
INTS = (I32, I64)
NUMERIC = FLOATS + INTS

# (rtol, atol) by dtype between an op's result and its numpy reference (the table's
# formula, often another algorithm); a spec may loosen them with ``tol``.
DEFAULT_TOL: dict[np.dtype, tuple[float, float]] = {
    F64: (1e-10, 1e-12), F32: (1e-5, 1e-6), F16: (1e-2, 1e-2), BF16: (3e-2, 3e-2),
}
# (rtol, atol) by device kind and dtype between a result computed on that kind of device
# and the same computation by numpy (ember on the CPU). The CPU runs numpy itself: the same
# numbers, up to numpy's default rtol. A GPU's libraries round differently: CUDA's math
# functions, cuBLAS's products, cuSOLVER's factorizations and cupy's reductions land a few
# ulp from numpy's, and composite ops (a recurrent cell over steps, a convolution's long
# sums, a factorization) compound that; the op table's tolerances held for all of them on
# an H200 (2026-11-27), where rtol=1e-7 failed 35 ops. The strict double moves such results
# by a few ulp, so a comparison that forgets this fails in CI too.
BACKEND_TOL: dict[str, dict[np.dtype, tuple[float, float]]] = {
    "cpu": {dt: (1e-7, 0.0) for dt in (F64, F32, F16, BF16)},
    "gpu": {F64: (1e-10, 1e-12), F32: (1e-5, 1e-6), F16: (1e-2, 1e-2)},
}


def backend_tolerance(dtype: Any, device: Any = "/cpu:0",
                      op_tol: tuple[float, float] | None = None) -> tuple[float, float]:
    """(rtol, atol) for comparing a ``dtype`` result computed on ``device`` (a name such as
    ``"/gpu:0"``, a Device, or a Tensor's ``.device``) with numpy's (``BACKEND_TOL``).

    ``op_tol``, an op's own tolerance for its rounding-sensitive numbers (a spec's ``tol``:
    sums that cancel, for instance), loosens a GPU's further: a GPU's rounding goes through
    the same cancellations."""
    from .._device import get_device

    kind = get_device(device).kind
    rtol, atol = BACKEND_TOL[kind].get(np.dtype(dtype), (0.0, 0.0))
    if op_tol is not None and kind != "cpu":
        rtol, atol = max(rtol, op_tol[0]), max(atol, op_tol[1])
    return rtol, atol


def device_bits(a: Any, device: Any = "/cpu:0") -> bytes:
    """``a``'s bytes, for a bit-for-bit comparison of a result computed on ``device`` with
    numpy's: on the CPU every bit; on a GPU each NaN as one pattern, since a GPU's
    arithmetic and conversions give their canonical NaN (float32 0x7FFFFFFF), not numpy's
    sign and payload (which no framework promises). A NaN still has to be a NaN, and
    every other value (signed zeros, infinities) its bits."""
    from .._device import get_device

    a = np.ascontiguousarray(a)
    if get_device(device).kind == "cpu" or a.dtype.kind not in "fc":
        return a.tobytes()
    a = a.copy()
    a[np.isnan(a)] = np.nan
    return a.tobytes()


MakeArgs = Callable[[np.random.Generator, np.dtype], list[Any]]


@dataclasses.dataclass(frozen=True)
class Case:
    """One input configuration: ``make(rng, dtype)`` gives the positional arguments.

    numpy arrays among them (also inside lists and tuples) become ember tensors on the
    device under test; everything else (Python numbers, shapes, slices) passes as is.
    """

    name: str
    make: MakeArgs
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class OpSpec:
    """How to run, check and differentiate one public op.

    Attributes:
        name: the public name (``"add"``, ``"nn_ops.conv2d"``, ``"random.normal"``).
        fn: calls ember: ``fn(*args, **kwargs)``.
        ref: the numpy reference, same arguments (numpy arrays instead of tensors); None
            for random ops, which get ``stat`` instead.
        cases: the input configurations (broadcasting, scalars, zero-size, edge shapes).
        dtypes: the dtypes each case is made in.
        differentiable: whether gradients flow through the op.
        grad_args: indices of the float arguments to differentiate; every case's inputs
            already respect the op's domain (positive for log, away from kinks for abs).
        torch: ``torch(torch_module, *args, **kwargs)`` computing the same thing with
            PyTorch tensors in place of arrays, or None where PyTorch has no equivalent;
            it may return None for a case PyTorch cannot express.
        tol: (rtol, atol) overrides by dtype.
        stat: for random ops, ``stat(result_numpy, args, kwargs, dtype)`` asserting the
            distribution's properties.
        kwargs: keyword arguments given in every case (a case's own take precedence).
    """

    name: str
    fn: Callable[..., Any]
    ref: Callable[..., Any] | None
    cases: tuple[Case, ...]
    dtypes: tuple[np.dtype, ...] = FLOATS
    differentiable: bool = True
    grad_args: tuple[int, ...] = (0,)
    torch: Callable[..., Any] | None = None
    tol: dict[np.dtype, tuple[float, float]] = dataclasses.field(default_factory=dict)
    stat: Callable[..., None] | None = None
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)

    def tolerance(self, dtype: np.dtype, device: Any = "/cpu:0") -> tuple[float, float]:
        """(rtol, atol) against the numpy reference for a result on ``device``: the spec's
        (or ``DEFAULT_TOL``), loosened to ``BACKEND_TOL``'s for that device's kind."""
        rtol, atol = self.tol.get(dtype, DEFAULT_TOL.get(np.dtype(dtype), (0.0, 0.0)))
        brtol, batol = backend_tolerance(dtype, device)
        return max(rtol, brtol), max(atol, batol)

    def __repr__(self) -> str:
        return f"OpSpec({self.name!r})"


# --- samplers ---------------------------------------------------------------------------
# Float domains: (low, high, gap): uniform in [low, high) with |x| >= gap.
_FLOAT_DOMAINS = {
    "real": (-2.0, 2.0, 0.1),    # away from 0: the kink of abs, relu, sign, ...
    "any": (-3.0, 3.0, 0.0),
    "positive": (0.5, 2.0, 0.0),  # log, sqrt, pow's base
    "unit": (-0.9, 0.9, 0.1),    # tan, and where a small range keeps values tame
    "above_one": (1.2, 3.0, 0.0),  # acosh
}
_INT_DOMAINS = {
    "real": (-5, 6), "any": (-5, 6), "positive": (1, 6), "unit": (-1, 2), "shift": (0, 5),
    "small": (0, 4), "above_one": (2, 5),
}


def sample(rng: np.random.Generator, shape: Sequence[int], dtype: Any,
           domain: str = "real") -> np.ndarray:
    """Random values of ``dtype`` and ``shape`` inside ``domain``.

    Besides the float domains above, ``lattice_a`` and ``lattice_b`` draw from two
    interleaved grids (``0.2 k + 0.05`` and ``0.2 k + 0.15``) so that a value from one is
    at least 0.1 from any value of the other: ties never occur in max/min/clip.
    ``grid`` gives small whole numbers so comparisons see equal elements.
    """
    dt = np.dtype(dtype)
    shape = tuple(shape)
    if dt.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    if dt.kind in "iu":
        lo, hi = _INT_DOMAINS.get(domain, (-5, 6))
        if dt.kind == "u":
            lo, hi = max(lo, 0), max(hi, 2)
        i = rng.integers(lo, hi, shape)
        if domain in ("real", "lattice_a", "lattice_b"):  # as for floats: no zeros
            i = np.where(i == 0, 1, i)
        return np.asarray(i).astype(dt)
    if domain in ("lattice_a", "lattice_b"):
        off = 0.05 if domain == "lattice_a" else 0.15
        x = rng.integers(-10, 10, shape) * 0.2 + off
    elif domain == "grid":
        x = rng.integers(-3, 4, shape).astype(np.float64)
    else:
        lo, hi, gap = _FLOAT_DOMAINS[domain]
        x = rng.uniform(lo, hi, shape)
        if gap:
            small = np.abs(x) < gap
            x = np.where(small, np.where(x < 0, -gap, gap) * 2, x)
    return np.asarray(x).astype(dt)


def to_float(x: np.ndarray) -> np.ndarray:
    """What ember does to integer/bool operands of float-only functions."""
    return x.astype(F32) if x.dtype.kind in "biu" else x


def vectorize_float(f: Callable[[float], float]) -> Callable[[np.ndarray], np.ndarray]:
    """A float64 scalar function applied element-wise, result in ``to_float(x).dtype``."""

    def ref(x: np.ndarray) -> np.ndarray:
        x = to_float(np.asarray(x))
        v = np.vectorize(f, otypes=[np.float64])(x.astype(np.float64))
        return v.astype(x.dtype)

    return ref


# --- case families ----------------------------------------------------------------------
UNARY_SHAPES = {"vector": (5,), "matrix": (3, 4), "scalar": (), "empty": (0, 3)}
BINARY_SHAPES = {
    "same": ((3, 4), (3, 4)),
    "broadcast": ((3, 1), (1, 4)),
    "rank": ((2, 3, 4), (4,)),
    "scalar": ((3, 2), ()),
    "empty": ((0, 4), (1, 4)),
}


def unary_cases(domain: str = "real") -> tuple[Case, ...]:
    return tuple(Case(n, lambda rng, dt, s=s: [sample(rng, s, dt, domain)])
                 for n, s in UNARY_SHAPES.items())


def binary_cases(domains: tuple[str, str] = ("real", "real"),
                 py_scalar: Any = None) -> tuple[Case, ...]:
    """Shape pairs covering broadcasting, 0-d and zero-size, plus ``x op python_scalar``."""
    d0, d1 = domains
    cases = [Case(n, lambda rng, dt, a=a, b=b: [sample(rng, a, dt, d0), sample(rng, b, dt, d1)])
             for n, (a, b) in BINARY_SHAPES.items()]
    if py_scalar is not None:
        cases.append(Case("python_scalar", lambda rng, dt: [
            sample(rng, (2, 3), dt, d0), py_scalar(dt)]))
    return tuple(cases)


def weak_ref(ref: Callable[..., Any]) -> Callable[..., Any]:
    """``ref`` with Python scalar operands given the array operand's dtype first.

    That is ember's rule for weak scalars; numpy follows it too, except that ml_dtypes'
    bfloat16 combined with a Python float gives float32.
    """

    def call(*args: Any, **kwargs: Any) -> Any:
        dt = next((a.dtype for a in args if isinstance(a, np.ndarray)), None)
        if dt is not None and dt.kind != "b":
            args = tuple(np.asarray(a, dt) if type(a) in (int, float) else a for a in args)
        return ref(*args, **kwargs)

    return call


def weak(f: float, i: int = 2, b: bool = True) -> Callable[[np.dtype], Any]:
    """A Python scalar of the kind matching ``dtype`` (weakly typed in ember and numpy)."""
    return lambda dt: b if np.dtype(dt).kind == "b" else (i if np.dtype(dt).kind in "iu" else f)


def _t(name: str) -> Callable[..., Any]:
    """``torch.<name>`` called with the spec's positional arguments."""
    def call(T: Any, *args: Any, **kwargs: Any) -> Any:
        fn: Any = T
        for part in name.split("."):
            fn = getattr(fn, part)
        return fn(*[T.tensor(a) if type(a) in (bool, int, float) else a for a in args])

    return call


def unary(name: str, fn: Any, ref: Any, *, domain: str = "real",
          dtypes: tuple[np.dtype, ...] = FLOATS, torch: str | None = None,
          differentiable: bool = True, **kw: Any) -> OpSpec:
    """A spec for an element-wise unary op over vector, matrix, 0-d and zero-size inputs."""
    return OpSpec(name, fn, ref, unary_cases(domain), dtypes, differentiable,
                  (0,) if differentiable else (),
                  _t(torch) if torch else None, **kw)


def binary(name: str, fn: Any, ref: Any, *, domains: tuple[str, str] = ("real", "real"),
           dtypes: tuple[np.dtype, ...] = FLOATS, torch: str | None = None,
           differentiable: bool = True, py_scalar: Any = None, **kw: Any) -> OpSpec:
    """A spec for an element-wise binary op over broadcasting shape pairs."""
    ref = weak_ref(ref) if py_scalar is not None else ref
    return OpSpec(name, fn, ref, binary_cases(domains, py_scalar), dtypes, differentiable,
                  (0, 1) if differentiable else (), _t(torch) if torch else None, **kw)


@dataclasses.dataclass(frozen=True)
class Raw:
    """An argument passed to ember as is (a numpy array that must not become a tensor)."""

    value: Any


def raw(make: Any) -> Any:
    return lambda rng, dt: Raw(make(rng, dt))


def case(name: str, make: MakeArgs, **kwargs: Any) -> Case:
    return Case(name, make, kwargs)


def arr(*shape: int, domain: str = "real") -> Callable[[np.random.Generator, np.dtype], Any]:
    """A sampler for one array argument of the case's dtype."""
    return lambda rng, dt: sample(rng, shape, dt, domain)


def args(*makers: Any) -> MakeArgs:
    """``make(rng, dtype)`` from per-argument samplers (callables) and constants."""
    return lambda rng, dt: [m(rng, dt) if callable(m) else m for m in makers]


def lst(*makers: Any) -> Any:
    """A sampler for a list argument (e.g. the tensors given to concat)."""
    return lambda rng, dt: [mk(rng, dt) for mk in makers]
