"""A strict, cupy-like device double: GPU arrays that behave like cupy's where cupy differs
from numpy, computed by numpy on the host.

``simulated_gpus(n, strict=True)`` puts one ``StrictBackend`` behind each simulated GPU.
Its arrays (``StrictArray``) are a separate type, not an ndarray subclass, so:

- implicit host conversion (``np.asarray(x)``, ``float(np_array_op(x))``) raises
  ``TypeError`` as cupy's ``__array__`` does;
- mixing with host numpy arrays in an ``xp`` function, a ufunc or an operator raises
  ``TypeError`` as cupy does (Python and numpy scalars are fine, as in cupy);
- every explicit host copy (``.get()``, ``backend.to_host``) and every scalar read
  (``.item()``, ``float()``, ``int()``, ``bool()``) is counted in ``backend.counters``;
- functions and dtypes cupy does not have are missing (``CUPY_LACKS``), bfloat16 included;
- out-of-bounds integer-array indices wrap around, as cupy's do, where numpy raises;
- arrays have cupy's ``.base`` and ``.data`` (``.ptr``, ``.mem``) and take their buffers
  from a memory pool per device (``xp.get_default_memory_pool()``), which host-memory
  tools such as tracemalloc do not see (``_strict_memory``).

The namespace ``StrictBackend.xp`` proxies numpy: arguments are unwrapped, results wrapped,
and numpy functions called on ``StrictArray`` dispatch here through ``__array_function__``
and ``__array_ufunc__`` (as they dispatch to cupy for cupy arrays).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .._backend import GPU_UNSUPPORTED_DTYPES, _np_erf, check_gpu_dtype
from .._cupy_backend import CupyBackend, buffer_address, owns_buffer
from . import _strict_launches, _strict_libraries, _strict_numerics, _strict_nvmath
from ._strict_cuda import CAPTURING, Capture, StrictCuda, StrictStream, normalized
from ._strict_memory import DeviceMemory, pointer

IMPLICIT = ("Implicit conversion to a NumPy array is not allowed. "
            "Please use `.get()` to construct a NumPy array explicitly.")

# numpy names that cupy 13 does not have, checked against the CuPy documentation
# (reference/comparison.html, reference/ufunc.html, the cupy.linalg pages). Present in cupy
# and so kept: ufunc.reduce/accumulate/outer/at, lib.stride_tricks.as_strided and
# sliding_window_view, linalg.svd/qr/cholesky/eigh/inv/solve/det/slogdet, einsum, pad.
CUPY_LACKS: frozenset[str] = frozenset({
    "errstate",        # numpy.errstate: cupy has only cupyx.errstate (for linalg checks)
    "seterr", "geterr",
    "frompyfunc",      # no Python-object ufuncs on a GPU
    "object_",         # no object arrays
    "busday_count", "is_busday", "busday_offset",  # no datetime64 support
    "nditer", "nested_iters", "memmap", "recarray",
    "linalg.eig", "linalg.eigvals",  # general eigenproblems: added in cupy 14 (symmetric only)
})
# dtypes cupy cannot hold (bfloat16 is experimental only from cupy 14, via ml_dtypes)
CUPY_DTYPES_LACKING = GPU_UNSUPPORTED_DTYPES
# cuSOLVER-backed functions whose failure cupy reports only when asked (cupyx.errstate)
_FACTORIZING = frozenset({"inv", "solve", "cholesky"})
# functions that accept host data and copy it to the device (counted as uploads)
_CREATION = frozenset({"array", "asarray", "asanyarray", "ascontiguousarray"})
# ndarray methods cupy.ndarray has (the ones not listed, e.g. tobytes/itemset/resize, raise)
_METHODS = frozenset({
    "all", "any", "argmax", "argmin", "argpartition", "argsort", "choose", "clip", "compress",
    "conj", "conjugate", "copy", "cumprod", "cumsum", "diagonal", "dot", "fill", "flatten",
    "max", "mean", "min", "nonzero", "partition", "prod", "ptp", "put", "ravel", "repeat",
    "reshape", "round", "sort", "squeeze", "std", "sum", "swapaxes", "take", "trace",
    "transpose", "var", "view",
})


@dataclasses.dataclass
class TransferCounters:
    """What crossed between host and a strict GPU.

    Attributes:
        syncs: host waits on the device: scalar reads plus host copies (and explicit
            ``synchronize`` calls).
        scalar_reads: ``.item()``, ``float()``, ``int()``, ``bool()``, ``complex()``.
        to_host: device -> host copies (``.get()``, ``to_host``, ``tolist``, printing).
        async_to_host: device -> host copies that do not wait (``get(out=host_buffer,
            blocking=False)``): they land by the next sync, and are not one.
        from_host: host -> device copies (``from_host``, ``xp.asarray(host_array)``).
        launches: device kernels (and memsets) launched, as cupy 14 would launch them
            (``_strict_launches``); a captured CUDA graph's kernels count at each of its
            launches, not while it is captured.
        graph_launches: captured CUDA graphs launched (one host launch each).
    """

    syncs: int = 0
    scalar_reads: int = 0
    to_host: int = 0
    async_to_host: int = 0
    from_host: int = 0
    launches: int = 0
    graph_launches: int = 0

    def reset(self) -> None:
        self.syncs = self.scalar_reads = self.to_host = self.from_host = self.launches = 0
        self.async_to_host = 0
        self.graph_launches = 0

    def snapshot(self) -> dict[str, int]:
        return dataclasses.asdict(self)


class StrictBackend:
    """The backend of one strict simulated GPU: ``xp`` is a cupy-like proxy over numpy."""

    name = "strict-cupy"

    def __init__(self, index: int) -> None:
        self.index = index
        self.counters = TransferCounters()
        self.capture: Capture | None = None  # a stream capture under way (_strict_cuda)
        self.memory = DeviceMemory(index)  # its pools and buffers (_strict_memory)
        self.linalg_raise = False  # inside linalg_errors() (cupyx.errstate(linalg="raise"))
        # cupy's current stream and using_allocator's allocator are each thread's own
        self._local = threading.local()
        self.null_stream = StrictStream(self, null=True)
        self.cuda = StrictCuda(self)
        self.xp = StrictNamespace(self, np, "")
        # ember's products through nvmath-python (a fake one, _strict_nvmath), as on a GPU
        # with ember-core[cuda12]: xp becomes ember's RoutedNamespace over the namespace
        self.products = _strict_nvmath.install(self)

    def to_host(self, a: Any) -> np.ndarray:
        if not isinstance(a, StrictArray):
            raise TypeError(f"to_host: expected a GPU array, got {type(a).__name__}")
        self._host_copy()
        return a._a.copy()

    def from_host(self, a: Any, index: int) -> StrictArray:
        if not isinstance(a, (np.ndarray, np.generic)):
            raise TypeError(f"from_host: expected a host numpy array, got {type(a).__name__}")
        check_gpu_dtype(a.dtype, "copy to GPU", index)
        cupy_supported(a.dtype)  # cupy.asarray's own check, behind ember's
        # ember's own GPU code over this cupy-like xp: its xp.asarray uploads (counted,
        # launches included) as cupy's does, so what cupy would get wrong shows here
        return CupyBackend.from_host(self, a, index)  # type: ignore[arg-type]

    def asarray(self, a: Any, dtype: Any = None) -> StrictArray:
        out = self.xp.asarray(a, dtype=dtype)
        assert isinstance(out, StrictArray)
        return out

    def scatter_add(self, out: Any, key: Any, updates: Any) -> None:
        """``out[key] += updates`` with repeated indices accumulating (cupyx.scatter_add)."""
        ns = self.xp
        args = (ns._unwrap(out, "scatter_add"), ns._unwrap(key, "scatter_add"),
                ns._unwrap(updates, "scatter_add"))
        target, k, u = args  # (wrapped in the launch: a graph reads the indices anew)
        self.run(lambda: np.add.at(target, cupy_wrapped(target.shape, k), u), args)
        self.launched(_strict_launches.kernels("cupyx.scatter_add", args, {}, None))

    def erf(self, x: Any) -> Any:
        a = self.xp._unwrap(x, "erf")
        q = "cupyx.scipy.special.erf"
        out = self.run(lambda: _strict_numerics.as_gpu_computes(q, (a,), {}, _np_erf(a)), a)
        self.launched(_strict_launches.kernels(q, (a,), {}, out))
        return self.xp._wrap(out, "erf")

    def activate(self, index: int) -> Any:
        return None

    def synchronize(self) -> None:
        self.check_not_capturing("synchronous API calls")
        self.counters.syncs += 1

    def owns(self, a: Any) -> bool:
        return owns_buffer(self.xp, a)  # the code that runs on cupy, on cupy's API

    def buffer_of(self, a: Any) -> int:
        return buffer_address(a)

    @contextlib.contextmanager
    def linalg_errors(self) -> Iterator[None]:
        """As cupy under ``cupyx.errstate(linalg="raise")``: a failed factorization raises
        (its status is read back: a synchronization); outside, it gives garbage (NaN)."""
        outer, self.linalg_raise = self.linalg_raise, True
        try:
            yield
        finally:
            self.linalg_raise = outer

    @property
    def current_stream(self) -> Any:
        """This thread's current stream (cupy's is per thread): the legacy default one
        unless a ``with stream:`` or ``stream.use()`` in this thread chose another."""
        return getattr(self._local, "stream", self.null_stream)

    @current_stream.setter
    def current_stream(self, stream: Any) -> None:
        self._local.stream = stream

    @property
    def allocator(self) -> Any:
        """This thread's ``using_allocator`` allocator; None: the shared pool."""
        return getattr(self._local, "allocator", None)

    @allocator.setter
    def allocator(self, allocator: Any) -> None:
        self._local.allocator = allocator

    def capturing_here(self) -> Capture | None:
        """The capture this thread's work joins: the capture under way when this thread
        issues on its stream or began it (cupy captures in relaxed mode: another thread's
        work on its own stream runs as usual, outside the graph)."""
        cap = self.capture
        if cap is None or (self.current_stream is not cap.stream
                           and cap.thread != threading.get_ident()):
            return None
        return cap

    def run(self, compute: Callable[[], Any], args: Any = ()) -> Any:
        """``compute()``'s result, numpy scalars as 0-d arrays; while a stream captures,
        the work is recorded for the graph's launches (``args``: the arrays it reads)."""
        cap = self.capture
        if cap is not None and self.capturing_here() is None and \
                self.current_stream is self.null_stream and not cap.stream.non_blocking:
            raise RuntimeError("cudaErrorStreamCaptureImplicit: work on the legacy default "
                               "stream while a blocking stream captures")
        out = normalized(compute())
        cap = self.capturing_here()
        if cap is not None:
            if self.current_stream is not cap.stream:
                raise RuntimeError("cudaErrorStreamCaptureImplicit: work on the legacy default "
                                   "stream while another stream captures")
            cap.record(compute, out, args, self.allocator)
        return out

    def launched(self, n: int) -> None:
        """``n`` kernels launched; while a stream captures they join its graph instead."""
        cap = self.capturing_here()
        if cap is not None:
            cap.kernels += n
        else:
            self.counters.launches += n

    def check_not_capturing(self, what: str) -> None:
        if self.capturing_here() is not None:
            raise RuntimeError(CAPTURING.format(what))

    def upload(self) -> None:
        self.check_not_capturing("H2D transfers")
        self.counters.from_host += 1

    def _host_copy(self) -> None:
        self.check_not_capturing("D2H transfers")
        self.counters.to_host += 1
        self.counters.syncs += 1

    def _scalar_read(self) -> None:
        self.check_not_capturing("D2H transfers")
        self.counters.scalar_reads += 1
        self.counters.syncs += 1


def check_dtype(dtype: Any, what: str, index: int | None = None) -> None:
    """Raise ``TypeError`` (as cupy does) for a dtype cupy cannot hold, naming ``what``; the
    backend's host copies raise ember's ``DTypeError`` through ``check_gpu_dtype`` instead."""
    try:
        check_gpu_dtype(dtype, what, index)
    except TypeError as e:
        raise TypeError(str(e)) from None
    cupy_supported(dtype)


def cupy_supported(dtype: Any) -> None:
    """cupy 14's ``check_supported_dtype`` (cupy/_core/_dtype.pyx): a ``ValueError`` for a
    dtype with no C type (strings, bytes, datetimes) or in big-endian byte order. Object
    arrays and bfloat16 are refused before, by ``check_gpu_dtype``."""
    dt = np.dtype(dtype)
    if dt.byteorder == ">":
        raise ValueError(f"Unsupported dtype {dt} with big-endian byte-order")
    if dt.kind in "SUMm":
        raise ValueError(f"Unsupported dtype {dt}")


class StrictNamespace:
    """``xp`` of a strict GPU: numpy's names, unwrapping ``StrictArray`` arguments and
    wrapping array results; host numpy arrays are rejected outside creation functions."""

    def __init__(self, backend: StrictBackend, module: Any, prefix: str) -> None:
        self._backend = backend
        self._module = module
        self._prefix = prefix
        self.__name__ = ("cupy." + prefix).rstrip(".")  # as the cupy module it stands for

    def __repr__(self) -> str:
        return f"<strict cupy double {('cupy.' + self._prefix).rstrip('.')}>"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        qual = self._prefix + name
        if qual in CUPY_LACKS:
            raise AttributeError(f"module 'cupy{'.' + self._prefix.rstrip('.') if self._prefix else ''}'"
                                 f" has no attribute {name!r} (the strict GPU double lacks "
                                 "what cupy lacks)")
        if name == "ndarray" and not self._prefix:
            return StrictArray
        if name == "cuda" and not self._prefix:
            return self._backend.cuda
        if name == "get_default_memory_pool" and not self._prefix:
            return lambda: self._backend.memory.default_pool
        if name == "asnumpy" and not self._prefix:
            return self._asnumpy
        if name == "ElementwiseKernel" and not self._prefix:
            from ._strict_kernels import StrictElementwiseKernel

            return functools.partial(StrictElementwiseKernel, self)
        if name == "ReductionKernel" and not self._prefix:
            from ._strict_reduction_kernels import StrictReductionKernel

            return functools.partial(StrictReductionKernel, self)
        obj = getattr(self._module, name)
        out: Any
        if isinstance(obj, types.ModuleType):
            out = StrictNamespace(self._backend, obj, qual + ".")
        elif isinstance(obj, np.ufunc):
            out = _Ufunc(self, obj)
        elif isinstance(obj, type) or not callable(obj):
            out = obj  # dtypes, scalar types, finfo/iinfo, constants
        else:
            out = self._function(obj, name)
        setattr(self, name, out)
        return out

    def _asnumpy(self, a: Any) -> np.ndarray:
        if isinstance(a, StrictArray):
            a._ns._backend._host_copy()
            return a._a.copy()
        return np.asarray(a)

    def _function(self, fn: Callable[..., Any], name: str) -> Callable[..., Any]:
        def proxy(*args: Any, **kwargs: Any) -> Any:
            return self._call(fn, name, args, kwargs)

        proxy.__name__ = proxy.__qualname__ = name
        proxy.__doc__ = f"cupy-like {self._prefix}{name} over numpy (strict GPU double)"
        return proxy

    def _call(self, fn: Callable[..., Any], name: str, args: Any, kwargs: dict[str, Any]) -> Any:
        host_ok = name in _CREATION and not self._prefix
        a = self._unwrap(args, name, host_ok)
        k = {key: self._unwrap(v, name, host_ok) for key, v in kwargs.items()}
        if k.get("dtype") is not None:
            check_dtype(k["dtype"], name)
        qual = self._prefix + name
        _strict_libraries.check(self._backend, qual, a, k, getattr(fn, "__self__", None))
        if self._prefix == "linalg." and name in _FACTORIZING:
            def call() -> Any:
                return self._factorize(fn, name, a, k)
        elif name in ("take", "take_along_axis") and not self._prefix:
            def call() -> Any:  # wrapped in the launch: a graph reads the indices anew
                wa, wk = _wrapped_take(name, a, k)
                return fn(*wa, **wk)
        else:
            def call() -> Any:
                return fn(*a, **k)
        host_data = host_ok and bool(args) and type(args[0]) is not StrictArray

        def gpu_call() -> Any:  # cupy's numbers where numpy's differ, in the launch (replays)
            return _strict_numerics.computed(qual, fn, a, k, call, host_data=host_data)

        owner = getattr(fn, "__self__", None)  # an ndarray method's array
        reads = (a, k, owner) if isinstance(owner, np.ndarray) else (a, k)
        with np.errstate(all="ignore"):  # cupy never warns about floating-point errors
            out = self._backend.run(gpu_call, reads)
        self._backend.launched(_strict_launches.kernels(  # given args: host arrays stay host
            qual, args, kwargs, out, owner if isinstance(owner, np.ndarray) else None))
        given = kwargs.get("out")
        if type(given) is StrictArray and out is given._a:
            return given  # as cupy: a call given out= returns that very array
        return self._wrap(out, name)

    def _factorize(self, fn: Callable[..., Any], name: str, a: Any, k: Any) -> Any:
        """A cuSOLVER-backed function: its status is read back only under
        ``linalg_errors()``; otherwise a failure gives NaN where cupy gives garbage."""
        if name == "solve":
            _solve_shapes(*a, **k)
        be = self._backend
        if be.linalg_raise:
            be._scalar_read()  # the devInfo check
        try:
            return fn(*a, **k)
        except np.linalg.LinAlgError:
            if be.linalg_raise:
                raise np.linalg.LinAlgError(f"Error reported by {name} in cuSOLVER (strict "
                                            "double)") from None
            shape = a[0].shape
            if name == "solve":  # a (..., n, n), b (..., n, k)
                shape = np.broadcast_shapes(a[0].shape[:-2], a[1].shape[:-2]) + a[1].shape[-2:]
            return np.full(shape, np.nan, np.result_type(*a))

    def _unwrap(self, x: Any, name: str, host_ok: bool = False) -> Any:
        t = type(x)
        if t is StrictArray:
            if x._ns._backend is not self._backend:
                raise ValueError(f"{name}: the array is on /gpu:{x._ns._backend.index}, not on "
                                 f"the current device /gpu:{self._backend.index}")
            return x._a
        if t is tuple or t is list:
            return t(self._unwrap(v, name, host_ok) for v in x)
        if isinstance(x, np.ndarray):
            if host_ok:
                check_dtype(x.dtype, name, self._backend.index)
                self._backend.upload()
                return np.array(x, copy=True)  # a device buffer of its own, as cupy's
            raise TypeError(f"Unsupported type {type(x)} in cupy.{self._prefix}{name}: a host "
                            "numpy array mixed with GPU arrays (cupy raises here; move it to "
                            "the device first)")
        return x

    def _wrap(self, out: Any, name: str) -> Any:
        t = type(out)
        if t is np.ndarray or isinstance(out, np.generic):
            arr = np.asarray(out)
            check_dtype(arr.dtype, name)
            return StrictArray(arr, self._backend.xp)  # not this submodule: an array's
            # methods and operators are cupy's, whichever function made it
        if isinstance(out, tuple):  # including numpy's named results: cupy returns tuples
            return tuple(self._wrap(o, name) for o in out)
        if t is list:
            return [self._wrap(o, name) for o in out]
        return out


class _Ufunc:
    """A numpy ufunc seen through the strict namespace (call, reduce, accumulate, ...)."""

    def __init__(self, ns: StrictNamespace, ufunc: np.ufunc) -> None:
        self._ns = ns
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__
        self.nin, self.nout, self.nargs = ufunc.nin, ufunc.nout, ufunc.nargs
        self.identity = ufunc.identity

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._ns._call(self._ufunc, self.__name__, args, kwargs)

    def __getattr__(self, method: str) -> Any:
        if method not in ("reduce", "accumulate", "reduceat", "outer", "at"):
            raise AttributeError(method)
        fn = getattr(self._ufunc, method)
        return lambda *a, **k: self._ns._call(fn, f"{self.__name__}.{method}", a, k)


def _binop(ufunc: np.ufunc, reflected: bool = False) -> Callable[..., Any]:
    name = ufunc.__name__

    def op(self: StrictArray, other: Any) -> Any:
        args = (other, self) if reflected else (self, other)
        return self._ns._call(ufunc, name, args, {})

    return op


def _inplace(ufunc: np.ufunc) -> Callable[..., Any]:
    name = ufunc.__name__

    def op(self: StrictArray, other: Any) -> StrictArray:
        a, b = self._a, self._ns._unwrap(other, name)
        with np.errstate(all="ignore"):  # (//= and %= compute as cupy's kernels do)
            self._ns._backend.run(lambda: _strict_numerics.computed(
                name, ufunc, (a, b), {"out": a}, lambda: ufunc(a, b, out=a)), (a, b))
        self._ns._backend.launched(_strict_launches.kernels(name, (a, b), {"out": a}, a))
        return self

    return op


def _unop(ufunc: np.ufunc) -> Callable[..., Any]:
    return lambda self: self._ns._call(ufunc, ufunc.__name__, (self,), {})


def cupy_float_to_int(a: np.ndarray, dtype: Any) -> np.ndarray:
    """Floats cast to an integer type as a GPU's conversion does (cupy's "Differences
    between CuPy and NumPy"): NaN to 0, out-of-range values saturated, where numpy on x86
    gives the type's minimum or wraps. Code that relies on numpy's answer there is
    silently wrong on a GPU."""
    info = np.iinfo(dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        f = a.astype(np.float64)
        f = np.trunc(np.where(np.isnan(f), 0.0, f))
        out = np.where((f > info.min) & (f < info.max), f, 0.0).astype(dtype)
        out[f >= float(info.max)] = info.max
        out[f <= float(info.min)] = info.min
    return out


def store_first_wins(a: np.ndarray, key: Any, value: Any) -> None:
    """``a[key] = value``, except that where integer index arrays repeat a target with
    different values, the first of them lands instead of numpy's last. On a GPU which one
    lands is undefined (cupy's "Differences between CuPy and NumPy"): code that relies on
    numpy's order gets another answer here, as it may on a GPU. numpy's own assignment
    runs first, so its checks and casts are the same."""
    a[key] = value
    parts = key if type(key) is tuple else (key,)
    if not any(isinstance(p, (np.ndarray, list)) and np.asarray(p).dtype.kind in "iu"
               for p in parts):
        return
    targets = np.arange(a.size).reshape(a.shape)[key]
    flat = targets.reshape(-1)
    if np.unique(flat).size == flat.size:
        return
    v = np.asarray(value)
    while v.ndim > targets.ndim and v.shape[0] == 1:  # numpy drops leading 1s
        v = v[0]
    values = np.broadcast_to(v, targets.shape).reshape(-1)
    a[np.unravel_index(flat[::-1], a.shape)] = values[::-1]  # any strides


def cupy_wrapped(shape: tuple[int, ...], key: Any) -> Any:
    """``key`` with its integer index arrays taken modulo their axis's length: cupy wraps
    out-of-bounds indices around where numpy raises (cupy's "Differences between CuPy
    and NumPy"), so code that relies on numpy's IndexError is silently wrong on a GPU."""
    parts = key if type(key) is tuple else (key,)

    def takes(p: Any) -> int:  # the axes of the array that ``p`` indexes
        if p is None or p is Ellipsis:
            return 0
        if isinstance(p, np.ndarray) and p.dtype == np.bool_:
            return p.ndim
        return 1

    explicit = sum(takes(p) for p in parts)
    out, axis = [], 0
    for p in parts:
        if p is Ellipsis:
            axis += len(shape) - explicit
        elif isinstance(p, np.ndarray) and p.dtype.kind in "iu" and axis < len(shape) \
                and shape[axis] > 0:
            p = np.mod(p, shape[axis])
        out.append(p)
        axis += takes(p)
    return tuple(out) if type(key) is tuple else out[0]


def _solve_shapes(a: np.ndarray, b: np.ndarray) -> None:
    """cupy 14's ``linalg.solve`` shape check (cupy/linalg/_solve.py): numpy 2's rules, except
    that a multidimensional ``b`` must have ``a``'s batch dimensions exactly (no broadcast)."""
    if b.ndim == 0:
        raise ValueError("b must have at least one dimension")
    if b.ndim == 1:
        if a.shape[-1] != b.size:
            raise ValueError("a must have (..., M, M) shape and b must have (M,) "
                             "for one-dimensional b")
    elif a.shape[:-1] != b.shape[:-1]:
        raise ValueError("a must have (..., M, M) shape and b must have (..., M, K) "
                         "for multidimensional b")


def _wrapped_take(name: str, args: Any, kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """cupy's ``take`` and ``take_along_axis`` wrap out-of-bounds indices too."""
    if name == "take":
        if kwargs.get("mode", "wrap") != "wrap":
            raise TypeError("take() got an unexpected keyword argument 'mode' (cupy's take "
                            "always wraps)")
        return args, {**kwargs, "mode": "wrap"}
    arr, indices, *rest = args
    axis = rest[0] if rest else kwargs.get("axis")
    if axis is not None and isinstance(indices, np.ndarray) and arr.shape[axis] > 0:
        indices = np.mod(indices, arr.shape[axis])
    return (arr, indices, *rest), kwargs


class StrictArray:
    """A device array of the strict double; wraps a numpy array that host code cannot reach
    implicitly. See the module docstring."""

    __slots__ = ("__weakref__", "_a", "_base", "_mem", "_ns")
    __hash__ = None  # type: ignore[assignment]
    __array_priority__ = 100.0

    def __init__(self, a: np.ndarray, ns: StrictNamespace) -> None:
        self._a = a
        self._ns = ns
        be = ns._backend
        self._base, self._mem = be.memory.place(self, a, be.allocator)

    # --- attributes cupy.ndarray has ---------------------------------------------
    base = property(lambda self: self._base, doc="The array this one views; None if fresh.")
    data = property(lambda self: pointer(self._a, self._mem),
                    doc="A MemoryPointer to the first element (``.ptr``, ``.mem``).")
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)
    T = property(lambda self: StrictArray(self._a.T, self._ns))
    real = property(lambda self: StrictArray(np.asarray(self._a.real), self._ns))
    imag = property(lambda self: StrictArray(np.asarray(self._a.imag), self._ns))

    @property
    def flags(self) -> Any:
        return self._a.flags

    def __getattr__(self, name: str) -> Any:
        if name in _METHODS:
            fn = getattr(self._a, name)
            return lambda *a, **k: self._ns._call(fn, name, a, k)
        raise AttributeError(f"the strict GPU array (like cupy.ndarray) has no attribute {name!r}")

    def astype(self, dtype: Any, *args: Any, **kwargs: Any) -> StrictArray:
        check_dtype(dtype, "astype")
        a, be = self._a, self._ns._backend
        if np.dtype(dtype).kind in "iu" and a.dtype.kind == "f":
            out = be.run(lambda: cupy_float_to_int(a, dtype), a)
        elif a.dtype == np.float32 and np.dtype(dtype) == np.float64:
            out = be.run(lambda: _strict_numerics.widened_nan(a), a)
        else:
            out = be.run(lambda: a.astype(dtype, *args, **kwargs), a)
        be.launched(_strict_launches.kernels("ndarray.astype", (a, dtype, *args), kwargs, out))
        return StrictArray(out, self._ns)

    # --- host boundary -------------------------------------------------------------
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError(IMPLICIT)

    def get(self, stream: Any = None, order: str = "C", out: Any = None,
            blocking: bool = True) -> np.ndarray:
        """A host copy (counted), into ``out`` if given (a numpy array of this shape and
        dtype, as cupy checks). ``blocking=False`` with ``out`` (cupy's: the copy is enqueued,
        complete by the next sync; ``out`` is pinned memory) is no sync: ``async_to_host``."""
        be = self._ns._backend
        if out is not None:
            if not isinstance(out, np.ndarray):
                raise TypeError("Only numpy.ndarray can be obtained from cupy.ndarray")
            if out.dtype != self._a.dtype:
                raise TypeError(f"{out.dtype} array cannot be obtained from {self._a.dtype} "
                                "array")
            if out.shape != self._a.shape:
                raise ValueError(f"Shape mismatch. Expected shape: {self._a.shape}, actual "
                                 f"shape: {out.shape}")
        if blocking or out is None:  # a fresh pageable buffer: cudaMemcpyAsync waits
            be._host_copy()
        else:
            be.check_not_capturing("D2H transfers (the strict double does not model an "
                                   "asynchronous copy as a graph node)")
            be.counters.async_to_host += 1
        if out is None:
            return np.array(self._a, order=order, copy=True)
        out[...] = self._a
        return out

    def tolist(self) -> Any:
        self._ns._backend._host_copy()
        return self._a.tolist()

    def item(self, *args: Any) -> Any:
        self._ns._backend._scalar_read()
        return self._a.item(*args)

    def _scalar(self) -> Any:
        if self._a.size != 1:
            raise TypeError("only length-1 arrays can be converted to Python scalars")
        self._ns._backend._scalar_read()
        return self._a.reshape(()).item()

    def __float__(self) -> float:
        return float(self._scalar())

    def __int__(self) -> int:
        return int(self._scalar())

    def __complex__(self) -> complex:
        return complex(self._scalar())

    def __bool__(self) -> bool:
        if self._a.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self._scalar())

    def __index__(self) -> int:
        if self._a.ndim != 0 or self._a.dtype.kind not in "iub":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self._scalar())

    def __repr__(self) -> str:
        self._ns._backend._host_copy()
        return "strict_gpu_" + repr(self._a)

    __str__ = __repr__

    def __reduce__(self) -> Any:
        raise TypeError("strict GPU arrays are not pickled")

    # --- numpy protocols: numpy functions on these arrays dispatch here -------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        fn = ufunc if method == "__call__" else getattr(ufunc, method)
        return self._ns._call(fn, ufunc.__name__, inputs, kwargs)

    def __array_function__(self, func: Any, types_: Any, args: Any, kwargs: Any) -> Any:
        mod = (func.__module__ or "numpy").split(".")
        sub = ".".join(m for m in mod[1:] if not m.startswith("_"))
        qual = (sub + "." if sub else "") + func.__name__
        if qual in CUPY_LACKS:
            return NotImplemented
        return self._ns._call(func, func.__name__, args, kwargs)

    # --- indexing and iteration ----------------------------------------------------
    def __getitem__(self, key: Any) -> StrictArray:
        a, k = self._a, self._key(key)
        out = self._ns._backend.run(lambda: a[cupy_wrapped(a.shape, k)], (a, k))
        self._ns._backend.launched(_strict_launches.kernels("ndarray.__getitem__", (a, k), {},
                                                            out))
        return self._ns._wrap(out, "__getitem__")

    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(value, np.ndarray):  # cupy copies a host value to the device
            self._ns._backend.upload()
        else:
            value = self._ns._unwrap(value, "__setitem__")
        a, k = self._a, self._key(key)

        def store() -> None:
            store_first_wins(a, cupy_wrapped(a.shape, k), value)

        self._ns._backend.run(store, (a, k, value))
        self._ns._backend.launched(_strict_launches.kernels("ndarray.__setitem__",
                                                            (a, k, value), {}, None))

    def _key(self, key: Any) -> Any:
        if isinstance(key, list) and all(isinstance(k, (int, np.integer)) for k in key):
            key = np.asarray(key, dtype=np.intp)  # an index array written as a list
        if isinstance(key, np.ndarray):  # cupy accepts host index arrays (an upload)
            self._ns._backend.upload()
            return key
        if type(key) is tuple:
            return tuple(self._key(k) for k in key)
        return self._ns._unwrap(key, "__getitem__")

    def __len__(self) -> int:
        if self._a.ndim == 0:
            raise TypeError("len() of unsized object")
        return len(self._a)

    def __iter__(self) -> Iterator[StrictArray]:
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        for i in range(self._a.shape[0]):
            yield self[i]

    # --- operators -----------------------------------------------------------------
    __add__, __radd__ = _binop(np.add), _binop(np.add, True)
    __sub__, __rsub__ = _binop(np.subtract), _binop(np.subtract, True)
    __mul__, __rmul__ = _binop(np.multiply), _binop(np.multiply, True)
    __truediv__, __rtruediv__ = _binop(np.true_divide), _binop(np.true_divide, True)
    __floordiv__, __rfloordiv__ = _binop(np.floor_divide), _binop(np.floor_divide, True)
    __mod__, __rmod__ = _binop(np.remainder), _binop(np.remainder, True)
    __pow__, __rpow__ = _binop(np.power), _binop(np.power, True)
    __matmul__, __rmatmul__ = _binop(np.matmul), _binop(np.matmul, True)
    __and__, __rand__ = _binop(np.bitwise_and), _binop(np.bitwise_and, True)
    __or__, __ror__ = _binop(np.bitwise_or), _binop(np.bitwise_or, True)
    __xor__, __rxor__ = _binop(np.bitwise_xor), _binop(np.bitwise_xor, True)
    __lshift__, __rlshift__ = _binop(np.left_shift), _binop(np.left_shift, True)
    __rshift__, __rrshift__ = _binop(np.right_shift), _binop(np.right_shift, True)
    __eq__ = _binop(np.equal)  # type: ignore[assignment]
    __ne__ = _binop(np.not_equal)  # type: ignore[assignment]
    __lt__, __le__ = _binop(np.less), _binop(np.less_equal)
    __gt__, __ge__ = _binop(np.greater), _binop(np.greater_equal)
    __iadd__, __isub__ = _inplace(np.add), _inplace(np.subtract)
    __imul__, __itruediv__ = _inplace(np.multiply), _inplace(np.true_divide)
    __ifloordiv__, __imod__ = _inplace(np.floor_divide), _inplace(np.remainder)
    __ipow__ = _inplace(np.power)  # no __imatmul__: cupy.ndarray has none, so a @= b is
    # a = a @ b (a new array, through __matmul__ and cuBLAS for floats)
    __iand__, __ior__ = _inplace(np.bitwise_and), _inplace(np.bitwise_or)
    __ixor__ = _inplace(np.bitwise_xor)
    __ilshift__, __irshift__ = _inplace(np.left_shift), _inplace(np.right_shift)
    __neg__, __pos__ = _unop(np.negative), _unop(np.positive)
    __abs__, __invert__ = _unop(np.absolute), _unop(np.invert)
