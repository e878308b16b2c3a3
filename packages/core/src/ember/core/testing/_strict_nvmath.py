"""nvmath-python on the strict double: a fake ``nvmath`` package (``nvmath.linalg.advanced``'s
``Matmul`` and ``MatmulOptions``) over the double's arrays. ``install(backend)`` puts it
behind each strict GPU with ember's own product routing (``ember.core._nvmath_products``),
as ``pip install ember-core[cuda12]`` puts the real one behind cupy; ``without_nvmath``
takes it away for a block (a GPU where it is not installed).

What it keeps of nvmath-python 1.0.0 (the version ``ember-core[cuda12]`` requires; read
from its wheel's source, ``nvmath/linalg/advanced/matmulmod.py``,
``nvmath/linalg/_internal/{typemaps,utils}.py`` and ``nvmath/_internal/workspace.py``):

- ``Matmul(a, b, /, c=None, *, alpha=None, beta=None, qualifiers=None, options=None,
  stream=None)``: float16/32/64 and complex64/128 only, A and B of one dtype
  (``ValueError``), extents strictly positive, ``c`` at least 2-D and ``beta`` given with
  it, ``options.inplace`` only with ``c`` (the result is then ``c`` itself). Layouts as
  ``get_mm_traits`` reads them (strides in elements): a vector is a one-row (A) or
  one-column (B) matrix; a matrix is column-major if its first stride is 1, else
  row-major if its second is, else ("Unsupported layout.") only a one-row or one-column
  matrix; batch dimensions tileable, equal (and in the same memory order) when both
  operands have them, else the other operand broadcast; C's batch as the product's.
- ``plan()`` asks cuBLASLt for algorithms in a blocking call (an event synchronize), so
  it raises during a capture; the algorithms assume the operands' address alignment
  (``min_alignment_*_bytes``, up to 256). ``plan(preferences=MatmulPlanPreferences(...)
  or a dict)``: ``reduction_scheme_mask`` ``MatmulReductionScheme.MASK`` (all, the
  default) or ``NONE``; ``NONE`` leaves cuBLASLt only algorithms that do not split ``k``
  (a split needs a reduction scheme), so the product is its GEMM (or GEMV) alone, never
  followed by a split-K reduction kernel, and it rounds as another algorithm would (another
  hash, ``SALT_UNSPLIT``). Other masks and preferences (limits, wave counts, numerical
  implementations, epilogs) are not modelled (raise).
- ``reset_operands(*, a=None, b=None, c=None, ...)`` (keyword-only in 1.0.0): dtype,
  extents and strides must match the planned ones ("The strides of the new operand must
  match ..."); with no argument it raises ``ValueError`` (1.0.0: "requires at least one
  operand"; earlier versions dropped the operands, and ember relied on it until
  2026-11-27, which on a GPU would have sent every product back to cupy).
  ``release_operands()`` drops them; then ``reset_operands`` needs all of them again and
  ``execute`` raises until it has them. Neither waits for anything; ``execute``'s
  ``release_workspace=True`` makes the workspace's stream wait for the execute's event
  (``Workspace.release``).
- ``execute(algorithm=None, release_workspace=False, stream=None)``: one ``cublasLtMatmul``
  on ``stream`` (the current one by default): the kernels the double counts for cuBLAS (a
  GEMM, and a split-K reduction where the H200 ran one; a batch is one batched GEMM); an
  event recorded after it; the workspace allocated on the first execute (its stream kept)
  and kept unless released. A captured execute is replayed by each graph launch.
- ``free()`` (then every method raises), and ``with Matmul(...) as mm``.
- What ``_cublaslt_direct`` reads of a planned ``Matmul`` (``handle``, ``mm_desc``,
  ``alpha``/``beta`` as one-element arrays of the scale type, the four layouts,
  ``cached_best_algorithm_struct``, ``workspace.size``, ``mm_desc_ifc.bias_pointer``),
  here tokens, and ``nvmath.bindings.cublasLt.matmul``: the plan's product on the
  operands at the addresses given, each resolved to the double's array there
  (``DeviceMemory.view_at``; an address in no live buffer raises as an illegal address
  would), with the kernels, rounding and capture of ``execute``. It refuses a handle,
  descriptor, layout, scalar or algorithm that is not the plan's, a workspace smaller
  than the plan's, an operand aligned less than planned, D at another address than C
  (ember writes in place), and a stream other than the current one.

Numbers: numpy's product (float16 accumulated in float32, as cuBLASLt's default compute
type), moved 1 or 2 ulp as the double moves cuBLAS's, with another hash (``SALT``):
cuBLASLt through nvmath may pick another algorithm than cupy's cuBLAS, so a step that
mixed the two libraries differs from one that used one.

Stricter than a GPU is known to be (modelled from CUDA's rules, not measured): an event
recorded in a capture and waited on from another stream raises (CUDA would pull that
stream into the capture; the legacy stream cannot join one); operands aligned less than
the plan assumed raise at ``execute`` (cuBLASLt's kernel may read them with wider loads);
a layout nvmath reads with a leading dimension longer than the array's stride (a
broadcast or overlapping row, where nvmath takes ``ld = max(extent, stride)``) raises
where a GPU would read other memory. Not modelled (raise): epilogs, autotuning, host
(numpy) operands, quantization, qualifiers.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import itertools
import types
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np

from .._nvmath_products import Products, RoutedNamespace
from . import _strict_launches, _strict_numerics
from ._strict_launches_libs import _gemm

SALT = 0x6E766D617468  # "nvmath": cuBLASLt's rounding, not cupy's cuBLAS's
SALT_UNSPLIT = 0x6E6F73706C6974  # "nosplit": an algorithm that does not split k rounds apart
_SCALE_TYPES = {np.dtype(k): np.dtype(v) for k, v in (
    (np.float16, np.float32), (np.float32, np.float32), (np.float64, np.float64),
    (np.complex64, np.complex64), (np.complex128, np.complex128))}
_HANDLE = 0x1B1A5  # every plan's cublasLtHandle_t (nvmath keeps one a device)
_TOKENS = itertools.count(0x5EED0000, 16)  # descriptors' and layouts' addresses
_DESCRIPTORS: weakref.WeakValueDictionary[int, Matmul] = weakref.WeakValueDictionary()
_SUPPORTED = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64,
                                             np.complex64, np.complex128))


class InvalidMatmulState(Exception):
    """nvmath's: a ``Matmul`` used after ``free()``."""


@dataclasses.dataclass
class MatmulOptions:
    """nvmath's ``MatmulOptions``: the fields ember may pass; others are refused."""

    inplace: bool = False
    blocking: Any = "auto"
    memory_limit: Any = "80%"
    logger: Any = None


class MatmulReductionScheme(enum.IntEnum):
    """nvmath's (``cublasLtReductionScheme_t``): how a split ``k`` is reduced."""

    NONE = 0  # no split: each dot product in one sequence
    INPLACE = 1  # in place in the output, with counters in the workspace
    COMPUTE_TYPE = 2  # partial sums in the workspace, reduced in a separate kernel
    OUTPUT_TYPE = 4
    MASK = 7


class MatmulEpilog(enum.IntEnum):
    """nvmath's ``MatmulEpilog`` (``cublasLtEpilogue_t``'s values); the strict double
    models ``BIAS`` and ``BGRADA`` (see the module docstring), and refuses the others."""

    DEFAULT = 1
    RELU = 2
    RELU_AUX = 130
    BIAS = 4
    RELU_BIAS = 6
    RELU_AUX_BIAS = 134
    DRELU = 136
    DRELU_BGRAD = 152
    GELU = 32
    GELU_AUX = 160
    GELU_BIAS = 36
    GELU_AUX_BIAS = 164
    DGELU = 192
    DGELU_BGRAD = 208
    BGRADA = 256
    BGRADB = 512


_MODELLED_EPILOGS = (MatmulEpilog.BIAS, MatmulEpilog.BGRADA)


@dataclasses.dataclass
class MatmulPlanPreferences:
    """nvmath's ``MatmulPlanPreferences`` (its fields and defaults); the strict double
    models ``reduction_scheme_mask`` ``MASK`` or ``NONE`` with the other fields' defaults."""

    reduction_scheme_mask: Any = MatmulReductionScheme.MASK
    max_waves_count: Any = 0.0
    numerical_impl_mask: Any = None  # nvmath's MatmulNumericalImplFlags.ALL
    limit: int = 8
    epilog: Any = None

    def __post_init__(self) -> None:
        if self.reduction_scheme_mask is None:
            self.reduction_scheme_mask = MatmulReductionScheme.MASK
        self.reduction_scheme_mask = MatmulReductionScheme(self.reduction_scheme_mask)


def _splits(preferences: Any) -> bool:
    """Whether cuBLASLt may split ``k`` under ``preferences`` (see the module docstring)."""
    if preferences is None:
        return True
    if isinstance(preferences, dict):
        preferences = MatmulPlanPreferences(**preferences)
    if not isinstance(preferences, MatmulPlanPreferences):
        raise TypeError(f"Matmul.plan: preferences must be MatmulPlanPreferences or a dict, "
                        f"got {type(preferences).__name__}")
    p, d = preferences, MatmulPlanPreferences()
    if (p.max_waves_count not in (None, d.max_waves_count) or p.numerical_impl_mask is not None
            or p.limit != d.limit or p.epilog is not None):
        raise NotImplementedError("Matmul.plan: preferences other than reduction_scheme_mask "
                                  "are not modelled by the strict double")
    mask = p.reduction_scheme_mask
    if mask not in (MatmulReductionScheme.MASK, MatmulReductionScheme.NONE):
        raise NotImplementedError(f"Matmul.plan: reduction_scheme_mask {mask!r} is not "
                                  "modelled by the strict double (MASK or NONE)")
    return mask == MatmulReductionScheme.MASK


@dataclasses.dataclass
class _Event:
    stream: Any
    capture: Any  # the capture it was recorded in, or None


@dataclasses.dataclass
class _Layout:
    """One operand as nvmath reads it: matrix shape, (order, ld), batch shape and order."""

    mm: tuple[int, int]
    order: str
    batch: tuple[int, ...]
    batch_order: tuple[int, ...]


def _array(x: Any, name: str) -> np.ndarray:
    if type(x).__name__ != "StrictArray":
        raise TypeError(f"Matmul: operand {name} is a {type(x).__name__}; the strict double "
                        "models nvmath's GPU operands only (host operands are not modelled)")
    return x._a


def _strides(a: np.ndarray) -> tuple[int, ...]:
    return tuple(s // a.itemsize for s in a.strides)


def _tileable(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    order = sorted(zip(strides, shape))
    return all(order[i - 1][1] * order[i - 1][0] == order[i][0] for i in range(1, len(order)))


def _layout(a: np.ndarray, name: str, vector_as: str) -> _Layout:
    shape, strides = list(a.shape), list(_strides(a))
    batch, mm, bst, mst = shape[:-2], shape[-2:], strides[:-2], strides[-2:]
    if len(mm) == 1:  # a vector: one row (A) or one column (B)
        s, d = mm[0], mst[0]
        mm, mst = ([1, s], [s * d, d]) if vector_as == "row" else ([s, 1], [d, s * d])
    if batch and not _tileable(tuple(batch), tuple(bst)):
        raise ValueError(f"The batch layout for {name} corresponding to shape = {batch} and "
                         f"strides = {bst} is currently not supported because it is not "
                         "tileable.")
    (m, n), (s0, s1) = mm, mst
    if s0 == 1:
        order, ok = "col", n == 1 or s1 >= m
    elif s1 == 1:
        order, ok = "row", m == 1 or s0 >= n
    elif m == 1 or n == 1:
        order, ok = ("col", True) if m == 1 else ("row", True)
    else:
        raise ValueError("Unsupported layout.")
    if not ok:
        raise ValueError(f"the strict double refuses operand {name} (shape {tuple(a.shape)}, "
                         f"strides {tuple(strides)}): nvmath would read it with a leading "
                         "dimension longer than its stride, other memory than the array's")
    batch_order = tuple(i for _, i in sorted(zip(bst, range(len(bst)))))
    return _Layout((m, n), order, tuple(batch), batch_order)


def _alignment(x: Any) -> int:
    ptr = int(x.data.ptr)
    return 256 if ptr == 0 else min(256, ptr & -ptr)


class Matmul:
    """The strict double's ``nvmath.linalg.advanced.Matmul`` (see the module docstring)."""

    def __init__(self, a: Any, b: Any, /, c: Any = None, *, alpha: Any = None,
                 beta: Any = None, qualifiers: Any = None, options: Any = None,
                 stream: Any = None, quantization_scales: Any = None) -> None:
        if qualifiers is not None or quantization_scales is not None:
            raise NotImplementedError("Matmul: qualifiers and quantization scales are not "
                                      "modelled by the strict double")
        if isinstance(options, dict):
            options = MatmulOptions(**options)
        self.options = options if options is not None else MatmulOptions()
        if c is None and self.options.inplace:
            raise ValueError("The operation cannot be inplace if operand C is not provided.")
        arrays = [_array(a, "A"), _array(b, "B")] + ([_array(c, "C")] if c is not None else [])
        for x, name in zip(arrays, "ABC"):
            if x.dtype not in _SUPPORTED:
                raise ValueError(f"The dtype of operand {name} ({x.dtype}) is not supported.")
            if any(e <= 0 for e in x.shape):
                raise ValueError(f"The specified extents {x.shape} for operand {name.lower()} "
                                 "are not valid. The extents must be strictly positive. ")
        if c is not None and c.ndim < 2:
            raise ValueError("In order to avoid broadcasting behavior ambiguity, `c` must be "
                             "at least 2-D. Use a singleton dimension to convert your input "
                             "array to 2-D.")
        if c is not None and beta is None:
            raise ValueError("A value for beta must be provided if operand C is provided.")
        if a.dtype != b.dtype:
            raise ValueError(f"Unsupported combination of dtypes for operands A {a.dtype} and "
                             f"B {b.dtype}.")
        backends = {id(x._ns._backend): x._ns._backend for x in (a, b, c) if x is not None}
        if len(backends) > 1:
            raise ValueError("Matmul: the operands are on different devices")
        (self._backend,) = backends.values()
        self._traits(arrays[0], arrays[1], arrays[2] if c is not None else None)
        scale = _SCALE_TYPES[arrays[0].dtype]  # nvmath's scale_type: alpha's, beta's
        self.alpha = np.array([1.0 if alpha is None else alpha], scale)
        self.beta = np.array([0.0 if beta is None else beta], scale)
        # what ``_cublaslt_direct`` reads: cuBLASLt's objects, here tokens the fake
        # ``cublasLt.matmul`` checks (``_DESCRIPTORS`` maps the descriptor back to this)
        self.handle = _HANDLE
        self.mm_desc = next(_TOKENS)
        self.a_layout_ptr, self.b_layout_ptr, self.d_layout_ptr = (
            next(_TOKENS), next(_TOKENS), next(_TOKENS))
        self.c_layout_ptr = self.d_layout_ptr if c is not None else None
        self.mm_desc_ifc = _DescInterface()
        self.workspace = _Workspace()
        _DESCRIPTORS[self.mm_desc] = self
        self.operands: list[Any] | None = [a, b] + ([c] if c is not None else [])
        self._meta = [(x.dtype, tuple(x.shape), _strides(x._a)) for x in self.operands]
        self.num_operands = len(self.operands)
        self.planned = False
        self.valid_state = True
        self.last_compute_event: _Event | None = None
        self.workspace_stream: Any = None
        self._align: tuple[int, ...] = ()
        self._split_k = True  # what plan()'s preferences allow
        self.epilog: MatmulEpilog | None = None
        self.epilog_operands: dict[str, Any] | None = {}
        self._epilog_meta: dict[str, tuple[Any, ...]] = {}

    def _traits(self, a: np.ndarray, b: np.ndarray, c: np.ndarray | None) -> None:
        la, lb = _layout(a, "A", "row"), _layout(b, "B", "col")
        if la.mm[1] != lb.mm[0]:
            raise ValueError(f"The 'K' extent must match for the operands: K={la.mm[1]} in "
                             f"operand A is not equal to K={lb.mm[0]} in operand B.")
        if la.batch and lb.batch:
            if la.batch != lb.batch:
                raise ValueError(f"The batch dimensions of operands A {list(la.batch)} and B "
                                 f"{list(lb.batch)} must match.")
            if la.batch_order != lb.batch_order:
                raise ValueError(f"The batch order of operands A {la.batch_order} and B "
                                 f"{lb.batch_order} must match.")
        batch = la.batch or lb.batch
        self._mnk = (la.mm[0], lb.mm[1], la.mm[1])
        self._a_order = la.order
        self._batch = batch
        if c is not None:
            lc = _layout(c, "C", "row")
            if lc.mm[0] != la.mm[0]:
                raise ValueError(f"The M dimension of the C matrix ({lc.mm[0]}) must match "
                                 "the M dimension of A.")
            if lc.mm[1] != lb.mm[1] and (self.options.inplace or lc.mm[1] != 1):
                raise ValueError(f"The N dimension of the C matrix ({lc.mm[1]}) must match "
                                 "the N dimension of B.")
            if (self.options.inplace or lc.batch) and lc.batch != batch:
                raise ValueError(f"The batch dimension of operand C {list(lc.batch)} must "
                                 f"match with that of the other operands {list(batch)}.")

    def __enter__(self) -> Matmul:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.free()

    def _check_valid(self) -> None:
        if not self.valid_state:
            raise InvalidMatmulState("The Matmul object cannot be used after resources are "
                                     "free'd")

    def _stream(self, stream: Any) -> Any:
        return stream if stream is not None else self._backend.current_stream

    def _wait_for_last(self) -> None:
        """nvmath's ``workspace_stream.wait(last_compute_event)``."""
        ev = self.last_compute_event
        if ev is None:
            return
        if ev.capture is not None and self.workspace_stream is not ev.stream:
            raise RuntimeError(
                "cudaErrorStreamCaptureImplicit: a stream waits on an event recorded in a "
                "stream capture (nvmath's workspace stream waiting for the execute that was "
                "captured; strict double: a GPU would pull that stream into the capture, "
                "which the legacy stream cannot join)")
        self.last_compute_event = None

    def plan(self, *, preferences: Any = None, algorithms: Any = None, epilog: Any = None,
             epilog_inputs: Any = None, stream: Any = None) -> tuple[Any, ...]:
        self._check_valid()
        if algorithms is not None:
            raise NotImplementedError("Matmul.plan: given algorithms are not modelled by the "
                                      "strict double")
        if self.operands is None:
            raise RuntimeError("Matmul.plan: the operands were reset to None")
        split_k = _splits(preferences)
        self._plan_epilog(epilog, epilog_inputs)
        self._backend.check_not_capturing("synchronous API calls")  # the heuristic query
        self._split_k = split_k
        self._align = tuple(_alignment(x) for x in self.operands)
        self.planned = True
        self.cached_best_algorithm_struct = np.zeros(64, np.uint8)  # (cublasLtMatmulAlgo_t)
        # a split k reduces through the workspace; nvmath adds 16 bytes with an epilog
        self.workspace.size = (1 << 20) + (16 if self.epilog is not None else 0) \
            if split_k else 0
        return ("algorithm 0 (strict double)",)

    def _plan_epilog(self, epilog: Any, inputs: Any) -> None:
        """nvmath 1.0.0's checks of ``plan(epilog=, epilog_inputs=)`` for the epilogs the
        double models (``BiasHandler.validate``, ``BgradHandler``, ``plan``)."""
        self.epilog, self.epilog_operands, self._epilog_meta = None, {}, {}
        if epilog is None:
            if inputs is not None:  # nvmath warns and ignores them: ember never does this
                raise ValueError("Matmul.plan: epilog_inputs without an epilog (nvmath "
                                 "ignores them with a warning; strict double: refused)")
            return
        epilog = MatmulEpilog(epilog)
        if epilog not in _MODELLED_EPILOGS:
            raise NotImplementedError(f"Matmul.plan: the epilog {epilog.name} is not modelled "
                                      "by the strict double (BIAS and BGRADA are)")
        if self._batch:
            raise NotImplementedError("Matmul.plan: a batched product with an epilog is not "
                                      "modelled by the strict double")
        assert self.operands is not None
        c = self.operands[2]._a if self.num_operands == 3 else None
        col_c = c is not None and _layout(c, "C", "row").order == "col"
        if epilog == MatmulEpilog.BGRADA and c is not None and not col_c:
            raise ValueError("The epilog BGRADA requires input matrix 'c' to be F-contiguous "
                             "(column-major).")
        if epilog == MatmulEpilog.BIAS and not col_c:
            # nvmath asks for a column-major result (BiasHandler.order); given a row-major C
            # it passes the order on to cuBLASLt, whose bias runs along D's rows
            raise NotImplementedError("Matmul.plan: a BIAS epilog into a row-major result is "
                                      "not modelled by the strict double (give a "
                                      "column-major C)")
        needed = {"bias"} if epilog == MatmulEpilog.BIAS else set()
        given = dict(inputs or {})
        if set(given) != needed:
            raise ValueError(f"The epilog {epilog.name} requires the following input tensors: "
                             f"{needed}. The provided tensor names are: {given.keys()}")
        m = self._mnk[0]
        for name, x in given.items():
            arr = _array(x, name)
            shape, strides = list(arr.shape), list(_strides(arr))
            if len(shape) == 1:
                shape, strides = shape + [1], strides + [shape[0] * strides[0]]
            if len(shape) != 2:
                raise NotImplementedError("Matmul.plan: a batched bias is not modelled by the "
                                          "strict double")
            if shape[0] != m:
                raise ValueError(f"The M dimension of the bias vector ({shape[0]}) must match "
                                 "the M dimension of A.")
            if shape[1] != 1:
                raise ValueError(f"The N dimension of the bias vector ({shape[1]}) must be "
                                 "equal to 1.")
            if strides[0] != 1:
                raise ValueError(f"The stride of the bias {list(_strides(arr))} must be 1 "
                                 "along the dimension 0, which corresponds to the M dimension.")
            d_dtype = self._meta[0][0]
            if arr.dtype != d_dtype:  # (cuBLASLt >= 11.11.3 takes some others: not modelled)
                raise ValueError(f"The bias tensor dtype '{arr.dtype}' must be the same as the "
                                 f"result dtype '{d_dtype}'.")
            if x._ns._backend is not self._backend:
                raise ValueError("The epilog inputs must be in the same memory space as the "
                                 "operands.")
            self._epilog_meta[name] = (arr.dtype, tuple(arr.shape), _strides(arr))
        self.epilog, self.epilog_operands = epilog, given

    def reset_operands(self, *, a: Any = None, b: Any = None, c: Any = None,
                       alpha: Any = None, beta: Any = None, quantization_scales: Any = None,
                       epilog_inputs: Any = None, stream: Any = None) -> None:
        self._check_valid()
        if c is not None and self.num_operands == 2:
            raise ValueError("The matrix multiplication problem specification does not "
                             "include operand C, so it cannot be reset.")
        if quantization_scales is not None:
            raise NotImplementedError("reset_operands: not modelled by the strict double")
        if all(x is None for x in (a, b, c, alpha, beta, epilog_inputs)):
            raise ValueError("reset_operands() requires at least one operand to be provided.")
        names = set(self._epilog_meta)
        if epilog_inputs is not None and set(epilog_inputs) != names and (
                self.operands is None or not set(epilog_inputs) <= names):
            raise ValueError(f"The epilog inputs {names} are required. The provided epilog "
                             f"input names are {epilog_inputs.keys()}.")
        if self.operands is None:  # released: every operand again
            if (a is None or b is None or (c is None and self.num_operands == 3)
                    or (names and epilog_inputs is None)):
                raise ValueError(
                    "After release_operands(), all required operands must be provided to "
                    "reset_operands(). Required: a, b" + (", c" if self.num_operands == 3 else "")
                    + (", epilog_inputs" if names else ""))
            self.operands = [None] * self.num_operands
            self.epilog_operands = {}
        for name, x in (epilog_inputs or {}).items():
            arr = _array(x, name)
            if (arr.dtype, tuple(arr.shape), _strides(arr)) != self._epilog_meta[name]:
                raise ValueError(f"The data type, extents and strides of the new epilog input "
                                 f"{name!r} must match the original one's.")
            assert self.epilog_operands is not None
            self.epilog_operands[name] = x
        if alpha is not None:
            self.alpha[0] = alpha
        if beta is not None:
            self.beta[0] = beta
        for i, x in enumerate((a, b, c)):
            if x is None:
                continue
            arr = _array(x, "ABC"[i])
            dtype, shape, strides = self._meta[i]
            for what, want, got in (("data type", dtype, arr.dtype),
                                    ("extents", shape, arr.shape),
                                    ("strides", strides, _strides(arr))):
                if want != got:
                    raise ValueError(f"The {what} of the new operand must match the {what} "
                                     "of the original operand.")
            if x._ns._backend is not self._backend:
                raise ValueError(f"The operand {'ABC'[i]} is on another device than the "
                                 "original operand.")
            self.operands[i] = x

    def release_operands(self) -> None:
        """Drop the references to the operands (nvmath 1.0's way to keep none alive);
        ``reset_operands`` must then give all of them again. It waits for nothing."""
        self._check_valid()
        self.operands = None
        self.epilog_operands = None

    def execute(self, *, algorithm: Any = None, release_workspace: bool = False,
                stream: Any = None) -> Any:
        self._check_valid()
        if not self.planned:
            raise RuntimeError("Execution cannot be performed before plan() has been called.")
        if self.operands is None:
            raise RuntimeError("Execution cannot be performed after the operands have been "
                               "released. Use reset_operands() to provide new operands before "
                               "performing the execution.")
        be = self._backend
        for x, name, planned in zip(self.operands, "ABC", self._align):
            if _alignment(x) < planned:
                raise RuntimeError(
                    f"CUBLAS_STATUS_NOT_SUPPORTED: operand {name}'s address is aligned to "
                    f"{_alignment(x)} bytes, the plan assumed {planned} (strict double: the "
                    "algorithm cuBLASLt chose may read it with wider loads)")
        s = self._stream(stream)
        with s if s is not be.current_stream else contextlib.nullcontext():
            if self.workspace_stream is None:
                self.workspace_stream = s  # the first execute allocates the workspace
            out = self._launch([x._a for x in self.operands],
                               [x._a for x in (self.epilog_operands or {}).values()],
                               "nvmath.Matmul.execute")
            aux: dict[str, Any] = {}
            if self.epilog == MatmulEpilog.BGRADA:
                out, grad = out
                aux["bgrada"] = type(self.operands[0])(grad, be.xp)
            if release_workspace:
                self._wait_for_last()
                self.workspace_stream = None
        result = self.operands[2] if self.options.inplace else type(self.operands[0])(out, be.xp)
        return (result, aux) if aux else result

    def _launch(self, arrays: list[np.ndarray], extra: list[np.ndarray], source: str,
                grad_into: np.ndarray | None = None) -> Any:
        """One ``cublasLtMatmul`` of ``arrays`` (A, B, C) with the epilog's inputs
        ``extra``, on the current stream: the product (and BGRADA's gradient, written into
        ``grad_into`` when given); the kernels counted under ``source``."""
        be = self._backend
        s = be.current_stream
        inplace = self.options.inplace
        alpha, beta = self.alpha[0], self.beta[0]
        a_order, batch = self._a_order, self._batch
        salt = SALT if self._split_k else SALT_UNSPLIT
        epilog = self.epilog

        def compute() -> Any:
            p = _product(arrays, alpha, beta, inplace, a_order, batch, salt)
            if epilog is None:
                return p
            got = _epilogue(epilog, p, arrays[0], extra)
            if grad_into is not None:
                np.copyto(grad_into, got[1])
                return p, grad_into
            return got

        out = be.run(compute, arrays + extra)
        m, n, k = self._mnk
        if batch:
            names = ["gemmBatched"]
        elif not self._split_k:  # no reduction scheme: the GEMM (GEMV) alone
            names = ["gemv" if m == 1 or n == 1 else "gemm"]
        else:
            names = _gemm(m, n, k, a_order == "col" and m > 1 and k > 1)
        if epilog == MatmulEpilog.BGRADA:  # the H200 ran the bias gradient after the GEMM
            names = [*names, "cublasLt::epilogue::globalKernelBgradAB"]
        for rec in _strict_launches._recorders:  # (the launch counter's recording())
            rec.append((source, names))
        be.launched(len(names))
        cap = be.capturing_here()
        cap = cap if cap is not None and cap.stream is s else None
        self.last_compute_event = _Event(s, cap)
        return out

    def _direct(self, handle: int, alpha: int, a: int, la: int, b: int, lb: int, beta: int,
                c: int, lc: Any, d: int, ld: int, algo: int, workspace: int,
                workspace_size: int, stream: int) -> None:
        """The fake ``cublasLt.matmul`` of this plan: every handle and pointer must be
        the plan's own (the double resolves the operands' addresses to its arrays)."""
        self._check_valid()
        be = self._backend
        if not self.planned:
            raise RuntimeError("CUBLAS_STATUS_INVALID_VALUE: cublasLtMatmul with a descriptor "
                               "no plan() has prepared (strict double)")
        for what, got, want in (
                ("handle", handle, self.handle),
                ("alpha", alpha, int(self.alpha.ctypes.data)),
                ("beta", beta, int(self.beta.ctypes.data)),
                ("A's layout", la, self.a_layout_ptr), ("B's layout", lb, self.b_layout_ptr),
                ("C's layout", lc, self.c_layout_ptr), ("D's layout", ld, self.d_layout_ptr),
                ("algorithm", algo, int(self.cached_best_algorithm_struct.ctypes.data))):
            if got != want:
                raise RuntimeError(f"CUBLAS_STATUS_INVALID_VALUE: cublasLtMatmul given another "
                                   f"{what} than its plan's (strict double)")
        if not self.options.inplace or c != d:
            raise NotImplementedError("cublasLtMatmul: only the in-place form (D at C's "
                                      "address) is modelled by the strict double")
        if workspace_size < self.workspace.size or (workspace_size and not workspace):
            raise RuntimeError(f"CUBLAS_STATUS_NOT_SUPPORTED: the algorithm needs "
                               f"{self.workspace.size} bytes of workspace, given "
                               f"{workspace_size} at 0x{workspace:x} (strict double)")
        if stream != be.current_stream.ptr:
            raise NotImplementedError("cublasLtMatmul on another stream than the current one "
                                      "is not modelled by the strict double")
        mem = be.memory
        arrays = []
        for ptr, (dtype, shape, strides), name, planned in zip(
                (a, b, c), self._meta, "ABC", self._align):
            if ptr == 0 or min(256, ptr & -ptr) < planned:
                raise RuntimeError(
                    f"CUBLAS_STATUS_NOT_SUPPORTED: operand {name}'s address 0x{ptr:x} is "
                    f"aligned less than the {planned} bytes the plan assumed (strict double)")
            arrays.append(mem.view_at(ptr, dtype, shape, strides, f"operand {name}"))
        ptr = self.mm_desc_ifc.bias_pointer
        extra, grad_into = [], None
        if self.epilog == MatmulEpilog.BIAS:
            dtype, shape, strides = self._epilog_meta["bias"]
            extra = [mem.view_at(ptr, dtype, shape, strides, "the BIAS epilog's bias")]
        elif self.epilog == MatmulEpilog.BGRADA:
            grad_into = mem.view_at(ptr, self._meta[2][0], (self._mnk[0],), (1,),
                                    "the BGRADA epilog's output")
        self._launch(arrays, extra, "cublasLt.matmul", grad_into)

    def free(self) -> None:
        if not self.valid_state:
            return
        try:
            self._wait_for_last()
        finally:
            self.operands = None
            self.valid_state = False


def _product(arrays: list[np.ndarray], alpha: Any, beta: Any, inplace: bool, a_order: str,
             batch: tuple[int, ...], salt: int = SALT) -> np.ndarray:
    """``alpha * a @ b + beta * c`` as cuBLASLt gives it: numpy's product, cuBLASLt's
    rounding; into ``c`` in place, else a new array laid out as nvmath lays the result out
    (``a``'s order)."""
    a, b = arrays[0], arrays[1]
    c = arrays[2] if len(arrays) > 2 else None
    with np.errstate(all="ignore"):
        if a.dtype == np.float16:
            p = np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(np.float16)
        else:
            p = np.matmul(a, b)
        p = np.asarray(_strict_numerics.as_gpu_computes("matmul", (a, b), {}, p, fn=np.matmul,
                                                        salt=salt))
        if alpha != 1:
            p = (p * alpha).astype(a.dtype)
        if c is not None and beta != 0:
            p = (p + beta * c).astype(c.dtype)
    if inplace:
        assert c is not None
        np.copyto(c, p.reshape(c.shape))
        return c
    if a_order == "col" and p.ndim >= 2:  # nvmath's result follows A's layout
        col = np.empty(p.shape[:-2] + p.shape[-1:] + p.shape[-2:-1], p.dtype).swapaxes(-1, -2)
        col[...] = p
        return col
    return p


def _epilogue(epilog: MatmulEpilog, p: np.ndarray, a: np.ndarray,
              extra: list[np.ndarray]) -> Any:
    """The epilog applied to the product ``p`` (written where ``p`` lies): ``BIAS`` adds
    the bias along D's rows in the result's dtype, as cuBLASLt adds it before rounding
    the result (here after: the double's rounding stands for another algorithm's);
    ``BGRADA`` also returns A summed over ``k`` (its columns), in the result's dtype, as a
    new array (nvmath allocates it at each execute)."""
    with np.errstate(all="ignore"):
        if epilog == MatmulEpilog.BIAS:
            (bias,) = extra
            p[...] = (p + bias.reshape(-1, 1)).astype(p.dtype)
            return p
        acc = np.float32 if a.dtype == np.float16 else a.dtype
        grad = a.sum(axis=-1, dtype=acc).astype(p.dtype)
        return p, np.asarray(_strict_numerics.as_gpu_computes(
            "sum", (a,), {"axis": -1}, grad, fn=np.sum, salt=SALT))


class _DescInterface:
    """nvmath's ``MatmulDescInterface``: the descriptor's epilog pointer (``bias_pointer``:
    the BIAS epilog's input, the BGRADA epilog's output)."""

    def __init__(self) -> None:
        self.bias_pointer = 0


class _Workspace:
    """nvmath's ``Workspace``: the bytes the planned algorithm needs (``size``)."""

    def __init__(self) -> None:
        self.size = 0


def _cublaslt_matmul(handle: int, desc: int, alpha: int, a: int, la: int, b: int, lb: int,
                     beta: int, c: int, lc: Any, d: int, ld: int, algo: int, workspace: int,
                     workspace_size: int, stream: int) -> None:
    """The fake ``nvmath.bindings.cublasLt.matmul``: the product of the plan whose
    descriptor ``desc`` is (``Matmul._direct``)."""
    mm = _DESCRIPTORS.get(desc)
    if mm is None:
        raise RuntimeError(f"CUBLAS_STATUS_INVALID_VALUE: no live matmul descriptor {desc:#x} "
                           "(strict double)")
    mm._direct(handle, alpha, a, la, b, lb, beta, c, lc, d, ld, algo, workspace,
               workspace_size, stream)


class _Module(types.SimpleNamespace):
    pass


NVMATH = _Module(
    __name__="nvmath", __version__="1.0.0 (strict double)",
    bindings=_Module(cublasLt=_Module(matmul=_cublaslt_matmul)),
    linalg=_Module(advanced=_Module(Matmul=Matmul, MatmulOptions=MatmulOptions,
                                    MatmulPlanPreferences=MatmulPlanPreferences,
                                    MatmulReductionScheme=MatmulReductionScheme,
                                    MatmulEpilog=MatmulEpilog,
                                    InvalidMatmulState=InvalidMatmulState)))


def install(backend: Any) -> Products:
    """Put ember's product routing with the fake nvmath behind ``backend`` (a
    ``StrictBackend`` whose ``xp`` is its strict namespace): what ``CupyBackend`` does with
    the real nvmath-python."""
    products = Products(backend.xp, NVMATH)
    backend.xp = RoutedNamespace(backend.xp, products)
    return products


@contextlib.contextmanager
def without_nvmath(*devices: Any) -> Iterator[None]:
    """Inside the block, the strict GPUs ``devices`` (ember ``Device`` objects or
    backends) have no nvmath-python: every product is cupy's, as on a GPU where
    ``ember-core`` was installed without its ``cuda12``/``cuda13`` extra."""
    backends = [getattr(d, "backend", d) for d in devices]
    outer = [be.products.nvmath for be in backends]
    for be in backends:
        be.products.nvmath = None
    try:
        yield
    finally:
        for be, nv in zip(backends, outer):
            be.products.nvmath = nv


def planned_products(device: Any) -> int:
    """How many ``Matmul`` objects ember planned on the strict GPU ``device``."""
    return getattr(device, "backend", device).products.planned


__all__ = ["NVMATH", "SALT", "SALT_UNSPLIT", "Matmul", "MatmulEpilog", "MatmulOptions",
           "MatmulPlanPreferences", "MatmulReductionScheme", "install", "planned_products",
           "without_nvmath"]
