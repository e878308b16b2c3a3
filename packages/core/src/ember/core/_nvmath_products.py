"""Matrix products on a GPU through nvmath-python (cuBLASLt), planned once per layout, so
that a traced step with products can be captured as one CUDA graph.

Why: cupy 14 refuses every cuBLAS call while a stream captures (each call sets its handle's
stream first, and ``setStream`` raises; cupy issue 6290), so a float ``matmul`` (Dense
layers, im2col convolutions, recurrent cells and all their gradients) kept every traced
training step out of a CUDA graph. nvmath-python's ``nvmath.linalg.advanced.Matmul`` calls
cuBLASLt itself: planned before a capture, its ``execute(stream=...)`` captures (H200,
2026-11-27: exact results after relaunching the graph with new inputs).

How: ``Products.matmul`` stands for ``xp.matmul`` in the backend's namespace
(``RoutedNamespace``), so every op that multiplies matrices takes it. A float product:

- has its operands as cuBLASLt reads them: each matrix row- or column-major with a leading
  dimension no shorter than its rows (a transposed view is read as it is; anything else is
  copied C-contiguous first, as cupy's own ``matmul`` copies it), a vector as a one-row or
  one-column matrix, batch dimensions equal or absent on one side;
- is written into a C-contiguous array made here, or into ``out=`` (nvmath's in-place form,
  ``beta=0``): the result is laid out as cupy's;
- runs through a ``Matmul`` planned the first time its layout is seen (shapes, strides,
  dtype, device) and kept; the plan also assumed its operands' address alignment, so a
  later call reuses it only for operands aligned at least as well. Planning synchronizes,
  so it never happens during a capture: a layout first seen while capturing raises
  ``ProductNotPlanned`` and the step replays op by op, saying so;
- runs as one direct ``cublasLtMatmul`` call with that plan (``_cublaslt_direct``: a
  seventh of ``execute``'s host time, the same bits), or, where the installed
  nvmath-python lacks what that call reads, ``execute``s;
- executes with ``release_workspace=True``: the workspace returns to the pool after each
  product, and no event is left for the next ``reset_operands`` to make the workspace's
  stream wait on. (nvmath waits there for the last ``execute``; an event recorded inside a
  capture, waited on from the stream that allocated the workspace outside it, would drag
  that stream into the capture.) ``release_operands()`` afterwards drops the operands, so
  a plan keeps no activation alive (nvmath 1.0's ``reset_operands()`` with no argument
  raises).

``Products.matmul_unsplit`` (``unsplit_matmul(xp)`` in an op) is the same product planned
with ``MatmulPlanPreferences(reduction_scheme_mask=NONE)``: cuBLASLt considers no algorithm
that splits ``k``, so the product is one kernel, without the split-K reduction kernel it
adds after a thin product's GEMM (an H200 ran one after the LSTM's (64, 512) @ (512, 128)
recurrent gradient at each step). For products inside a time loop, where launches, not
arithmetic, bound a step; if no algorithm qualifies, it is planned as ``matmul`` plans.

Eager calls take the same route, so a step computes the same bits eagerly, traced op by op
and captured. What nvmath does not take falls back to cupy's ``matmul``: integer and mixed
dtypes, empty operands, batch dimensions that broadcast against each other, extra keyword
arguments. During a capture that fallback meets cupy's refusal, which carries the reason
(``REASON_ATTR``) for ``graph``'s capture status; so does every product on a GPU without
nvmath-python (``MISSING``).
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

from ._cublaslt_direct import Direct, direct

MISSING = ("nvmath-python is not installed (pip install ember-core[cuda12], or "
           "ember-core[cuda13] on CUDA 13)")
REASON_ATTR = "ember_nvmath_reason"  # on cupy's refusal: why the product was not nvmath's
_DTYPES = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64, np.complex64,
                                          np.complex128))
_MAX_ALIGN = 256  # nvmath asks cuBLASLt for at most this alignment (min_alignment_*_bytes)


class ProductNotPlanned(RuntimeError):
    """A product whose layout was first seen during a stream capture (planning
    synchronizes, which a capture forbids)."""


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def load_nvmath() -> Any:
    """The ``nvmath`` package with ``nvmath.linalg.advanced`` imported, or None."""
    try:
        import nvmath
        import nvmath.bindings.cublasLt  # ``_cublaslt_direct``'s call
        import nvmath.linalg.advanced
    except (ImportError, OSError):  # not installed, or its CUDA libraries do not load
        return None
    return nvmath


class Products:
    """``xp.matmul`` through planned nvmath ``Matmul`` objects, one per layout and device
    (see the module docstring). ``nvmath`` None: every product is cupy's (``matmul``)."""

    def __init__(self, xp: Any, nvmath: Any, matmul: Any = None) -> None:
        self.xp = xp
        self.nvmath = nvmath
        self._matmul = matmul if matmul is not None else xp.matmul  # cupy's, the fallback
        self._plans: dict[tuple[Any, ...], list[tuple[tuple[int, ...], _Planned]]] = {}
        self._refused: dict[tuple[Any, ...], str] = {}
        self._lock = threading.Lock()  # a Matmul holds one call's operands at a time
        self.planned = 0  # Matmul objects planned
        self.executed = 0  # products nvmath ran
        self.fell_back = 0  # products left to cupy's matmul
        self.direct_calls = True  # False: every product through ``Matmul.execute``

    @property
    def missing(self) -> str | None:
        """Why no product goes through nvmath, or None."""
        return MISSING if self.nvmath is None else None

    def matmul(self, a: Any, b: Any, out: Any = None, **kwargs: Any) -> Any:
        """``cupy.matmul(a, b, out=out, **kwargs)``, through nvmath where it takes it; a
        product whose output tiles are cheap (``_short_tiles``) is planned unsplit."""
        return self._route(a, b, out, kwargs, split_k=None)

    def matmul_unsplit(self, a: Any, b: Any, out: Any = None) -> Any:
        """``matmul`` planned so that cuBLASLt does not split ``k`` (one kernel a product,
        no split-K reduction; see the module docstring)."""
        return self._route(a, b, out, {}, split_k=False)

    def _route(self, a: Any, b: Any, out: Any, kwargs: dict[str, Any],
               split_k: bool | None) -> Any:
        why = self._why_not(a, b, out, kwargs)
        if why is None:
            try:
                return self._planned(a, b, out, split_k)
            except _Refused as r:
                why = r.reason
        return self._fallback(a, b, out, kwargs, why)

    def _why_not(self, a: Any, b: Any, out: Any, kwargs: dict[str, Any]) -> str | None:
        if self.nvmath is None:
            return MISSING
        if kwargs:
            return f"matmul's arguments {sorted(kwargs)} are cupy's alone"
        nd = self.xp.ndarray
        if type(a) is not nd or type(b) is not nd or (out is not None and type(out) is not nd):
            return "an operand is not a GPU array"
        if a.dtype != b.dtype:
            return f"mixed dtypes {a.dtype} and {b.dtype} (cupy promotes them)"
        if a.dtype not in _DTYPES:
            return f"{a.dtype} products are cupy's own kernels"
        if a.ndim == 0 or b.ndim == 0 or a.size == 0 or b.size == 0:
            return "a scalar or empty operand"
        if out is not None and out.dtype != a.dtype:
            return f"out= is {out.dtype}, the product {a.dtype}"
        return None

    def _fallback(self, a: Any, b: Any, out: Any, kwargs: dict[str, Any], why: str) -> Any:
        self.fell_back += 1
        try:
            if out is not None:
                return self._matmul(a, b, out=out, **kwargs)
            return self._matmul(a, b, **kwargs)
        except NotImplementedError as e:  # cupy's refusal of cuBLAS during a capture
            setattr(e, REASON_ATTR, why)
            raise

    def _planned(self, a: Any, b: Any, out: Any, split_k: bool | None = True) -> Any:
        xp = self.xp
        a2 = a.reshape(1, a.shape[0]) if a.ndim == 1 else a
        b2 = b.reshape(b.shape[0], 1) if b.ndim == 1 else b
        if a2.shape[-1] != b2.shape[-2]:
            raise _Refused(f"shapes {a.shape} and {b.shape} do not multiply")
        if split_k is None:
            split_k = not _short_tiles(a2.shape[-2], b2.shape[-1], a2.shape[-1])
        try:
            batch = tuple(np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2]))
        except ValueError:
            raise _Refused(f"batch dimensions of {a.shape} and {b.shape} differ") from None
        m, n = a2.shape[-2], b2.shape[-1]
        shape = batch + (() if a.ndim == 1 else (m,)) + (() if b.ndim == 1 else (n,))
        if out is not None and out.shape != shape:
            raise _Refused(f"out= has shape {out.shape}, the product {shape}")
        into = out is not None and _writable_into(out, a, b)
        c = out.reshape(batch + (m, n)) if into else xp.empty(batch + (m, n), a.dtype)
        for ai, bi, ci in _pieces(a2, b2, c):
            ai, bi = _readable(xp, ai), _readable(xp, bi)
            self._execute(self._plan_for(ai, bi, ci, split_k), ai, bi, ci)
        if into:
            return out
        if out is not None:  # overlapping or strided out=: one copy, as cupy makes
            xp.copyto(out, c.reshape(shape))
            return out
        # the array itself where no axis goes: a reshape is a view (``base`` set), and
        # graph mode writes in place only into arrays that own their buffer
        return c if c.shape == shape else c.reshape(shape)

    def linear(self, x: Any, w: Any, bias: Any) -> Any:
        """``x @ w + bias`` (``x`` a matrix, ``bias`` along the last axis) as one cuBLASLt
        product with its ``BIAS`` epilog, or None where nvmath does not take it (the caller
        then adds the bias itself). cuBLASLt adds a bias along the result's rows, and
        nvmath wants the result column-major: the product is planned transposed, ``(w.T @
        x.T)`` into the transpose of a C-contiguous result, which is returned."""
        if self._why_not(x, w, None, {}) is not None or x.ndim != 2 or w.ndim != 2:
            return None
        if (type(bias) is not type(x) or bias.dtype != x.dtype or bias.shape != (w.shape[1],)
                or bias.strides != (bias.itemsize,)):
            return None
        out = self.xp.empty((x.shape[0], w.shape[1]), x.dtype)
        got = self._epilog_product(w.T, x.T, out.T, "BIAS", bias)
        return None if got is None else out

    def weight_grad(self, x: Any, dz: Any) -> tuple[Any, Any] | None:
        """``(x.T @ dz, dz.sum(0))``, a dense layer's kernel and bias gradients, as one
        cuBLASLt product with its ``BGRADA`` epilog (the bias gradient reduced inside the
        GEMM, over ``k``, the batch), or None where nvmath does not take it. Planned
        transposed as ``linear`` is: ``dz.T @ x`` into the transpose of a C-contiguous
        ``(x.shape[1], dz.shape[1])`` result, whose A, ``dz.T``, is what BGRADA sums."""
        if self._why_not(x, dz, None, {}) is not None or x.ndim != 2 or dz.ndim != 2:
            return None
        if x.shape[0] != dz.shape[0]:
            return None
        out = self.xp.empty((x.shape[1], dz.shape[1]), x.dtype)
        got = self._epilog_product(dz.T, x, out.T, "BGRADA", None)
        return None if got is None else (out, got[1]["bgrada"])

    def _epilog_product(self, a: Any, b: Any, c: Any, epilog: str, bias: Any) -> Any:
        """One planned product with ``epilog`` into ``c`` (column-major), nvmath's
        result; None where nvmath refused the plan (kept, so it is asked once)."""
        xp = self.xp
        a, b = _readable(xp, a), _readable(xp, b)
        split_k = not _short_tiles(a.shape[0], b.shape[1], a.shape[1])
        inputs = None if bias is None else {"bias": bias}
        try:
            planned = self._plan_for(a, b, c, split_k, epilog, inputs)
        except _Refused:
            return None
        return c, {"bgrada": self._execute(planned, a, b, c, bias)}

    def _execute(self, planned: _Planned, a: Any, b: Any, c: Any, bias: Any = None) -> Any:
        """``c = a @ b`` with ``planned``'s epilog, on the current stream: BGRADA's bias
        gradient, else None. No operand stays referenced."""
        xp = self.xp
        with self._lock:  # (the descriptor's epilog pointer is the call's)
            if planned.direct is not None and self.direct_calls:
                aux = planned.direct.run(xp, a, b, c, bias)
            else:
                mm = planned.mm
                mm.reset_operands(a=a, b=b, c=c,
                                  epilog_inputs=None if bias is None else {"bias": bias})
                got = mm.execute(stream=xp.cuda.get_current_stream(), release_workspace=True)
                mm.release_operands()  # keep no operand alive
                aux = got[1]["bgrada"] if isinstance(got, tuple) else None
        self.executed += 1
        return aux

    def _plan_for(self, a: Any, b: Any, c: Any, split_k: bool = True, epilog: str | None = None,
                  epilog_inputs: dict[str, Any] | None = None) -> _Planned:
        key = (a.shape, _strides(a), b.shape, _strides(b), c.shape, _strides(c), a.dtype.str,
               a.data.device_id, split_k, epilog)
        align = (_alignment(a), _alignment(b), _alignment(c))
        for planned_align, planned in self._plans.get(key, ()):
            if all(x >= y for x, y in zip(align, planned_align)):
                return planned
        refused = self._refused.get(key + align)
        if refused is not None:
            raise _Refused(refused)
        if self.xp.cuda.get_current_stream().is_capturing():
            raise ProductNotPlanned(
                f"matmul of {a.dtype}{list(a.shape)} @ {list(b.shape)} was first seen during "
                "the capture (nvmath-python plans a product before a capture: planning "
                "synchronizes)")
        adv = self.nvmath.linalg.advanced
        try:
            mm = adv.Matmul(a, b, c=c, beta=0.0, options=adv.MatmulOptions(inplace=True))
            _plan(adv, mm, split_k, epilog, epilog_inputs)
            mm.release_operands()
        except (ValueError, TypeError, RuntimeError) as e:  # what nvmath does not take
            self._refused[key + align] = f"nvmath-python refused it: {e}"
            raise _Refused(self._refused[key + align]) from None
        planned = _Planned(mm, direct(self.nvmath, mm, epilog))
        self._plans.setdefault(key, []).append((align, planned))
        self.planned += 1
        return planned


class _Planned:
    """A planned ``Matmul`` and its direct call (None: ``execute`` runs it)."""

    __slots__ = ("direct", "mm")

    def __init__(self, mm: Any, direct_call: Direct | None) -> None:
        self.mm = mm
        self.direct = direct_call


def _plan(adv: Any, mm: Any, split_k: bool, epilog: str | None = None,
          epilog_inputs: dict[str, Any] | None = None) -> None:
    """``mm.plan()``, with ``epilog`` (a ``MatmulEpilog`` name) and its inputs if given;
    without ``split_k``, first with no reduction scheme allowed (no algorithm that splits
    ``k``), and as ``matmul`` plans where none qualifies."""
    kw: dict[str, Any] = {}
    if epilog is not None:
        kw = {"epilog": getattr(adv.MatmulEpilog, epilog), "epilog_inputs": epilog_inputs}
    if not split_k:
        unsplit = adv.MatmulPlanPreferences(
            reduction_scheme_mask=adv.MatmulReductionScheme.NONE)
        try:
            mm.plan(preferences=unsplit, **kw)
            return
        except RuntimeError:  # nvmath: "Planning failed to find any suitable algorithm."
            pass
    mm.plan(**kw)


SHORT_TILE = 1 << 20  # multiply-adds in one 64x64 output tile: about 4 us on one SM


def _short_tiles(m: int, n: int, k: int) -> bool:
    """Whether an ``(m, k) @ (k, n)`` product is planned unsplit by default: each output
    tile (64 x 64, or the whole output where it is smaller) costs at most ``SHORT_TILE``
    multiply-adds, about what launching cuBLASLt's split-K reduction kernel costs on an
    H200 (4 us on one SM at FP32, against 2-5 us a launch), so that splitting ``k`` would
    save no time and add a kernel (the MLP's (128, 256) @ (256, 10) logits; LeNet's
    (64, 1024) @ (1024, 10)). A long ``k`` over few tiles is still split: unsplit, LeNet's
    weight gradient (800, 12544) @ (12544, 64) would run 13 tiles of 51M each."""
    return k * min(m, 64) * min(n, 64) <= SHORT_TILE


def unsplit_matmul(xp: Any) -> Any:
    """``xp.matmul_unsplit`` where ``xp`` routes products through nvmath (one kernel a
    product: ``Products.matmul_unsplit``), else ``xp.matmul``."""
    return getattr(xp, "matmul_unsplit", None) or xp.matmul


class RoutedNamespace:
    """An ``xp`` (cupy's module, or the strict double's namespace) whose ``matmul`` is
    ``Products.matmul`` (and ``matmul_unsplit`` its unsplit form); every other name is
    ``xp``'s own, looked up once and kept."""

    def __init__(self, xp: Any, products: Any) -> None:
        self._xp = xp
        self.matmul = products.matmul
        self.matmul_unsplit = products.matmul_unsplit
        self.__name__ = getattr(xp, "__name__", "cupy")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self._xp, name)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return f"<{self._xp!r}, matmul through nvmath-python>"


def _pieces(a: Any, b: Any, c: Any) -> Any:
    """``(a, b, c)`` products nvmath takes that make up ``c = a @ b`` (``c`` with the whole
    broadcast batch): one where the batches are equal or one side is a single matrix; where
    each side's batch broadcasts over dimensions the other has (the recurrent layers'
    ``(steps, 1) x (gates,)``), one per index of the side with fewer, which is then a
    single matrix each time. Batches that broadcast and also share a dimension: cupy's."""
    ba, bb = a.shape[:-2], b.shape[:-2]
    if math.prod(ba) == 1 or math.prod(bb) == 1 or _strip(ba) == _strip(bb):
        lead = _strip(c.shape[:-2])
        yield (_squeezed_batch(a), _squeezed_batch(b),
               c.reshape(lead + c.shape[-2:]) if lead != c.shape[:-2] else c)
        return
    nd = len(c.shape) - 2
    pa, pb = (1,) * (nd - len(ba)) + ba, (1,) * (nd - len(bb)) + bb
    if any(x == y and x > 1 for x, y in zip(pa, pb)):
        raise _Refused(f"batch dimensions {ba} and {bb} broadcast over a shared one "
                       "(nvmath takes equal batches or one matrix)")
    a, b = a.reshape(pa + a.shape[-2:]), b.reshape(pb + b.shape[-2:])
    a_only = [d for d in range(nd) if pa[d] > 1]  # (the other side is 1 there)
    b_only = [d for d in range(nd) if pb[d] > 1]
    fixed = b_only if math.prod(pb) <= math.prod(pa) else a_only
    ones = {d for d in range(nd) if pa[d] == pb[d] == 1}
    for idx in np.ndindex(*(c.shape[d] for d in fixed)):
        at = dict(zip(fixed, idx))
        single = tuple(at.get(d, 0) for d in range(nd))  # the fixed side: one matrix
        batched = tuple(0 if d in at or d in ones else slice(None) for d in range(nd))
        out = tuple(at[d] if d in at else 0 if d in ones else slice(None) for d in range(nd))
        if fixed is b_only:
            yield a[batched], b[single], c[out]
        else:
            yield a[single], b[batched], c[out]


def _strip(shape: tuple[int, ...]) -> tuple[int, ...]:
    while shape and shape[0] == 1:
        shape = shape[1:]
    return shape


def _squeezed_batch(x: Any) -> Any:
    """``x`` with leading batch dimensions of one dropped, a batch of one as one matrix."""
    batch = x.shape[:-2]
    if not batch:
        return x
    if math.prod(batch) == 1:
        return x.reshape(x.shape[-2:])
    stripped = _strip(batch)
    return x if stripped == batch else x.reshape(stripped + x.shape[-2:])


def _strides(x: Any) -> tuple[int, ...]:
    return tuple(s // x.itemsize for s in x.strides)


def _alignment(x: Any) -> int:
    ptr = int(x.data.ptr)
    return _MAX_ALIGN if ptr == 0 else min(_MAX_ALIGN, ptr & -ptr)


def _matrix_ok(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """A matrix cuBLASLt reads as this array: row-major (unit column stride, rows at least a
    row apart) or column-major; nvmath takes any ``ld = max(extent, stride)``, so a shorter
    stride (a broadcast row, overlapping rows) would read other memory."""
    (m, n), (s0, s1) = shape, strides
    if s1 == 1 and (m == 1 or s0 >= n):
        return True
    return s0 == 1 and (n == 1 or s1 >= m)


def _batch_ok(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """nvmath's ``check_batch_tileable``: batch strides, sorted, each the one below times
    its extent (and none negative)."""
    if not shape:
        return True
    if any(s < 0 for s in strides):
        return False
    order = sorted(zip(strides, shape))
    return all(order[i - 1][1] * order[i - 1][0] == order[i][0] for i in range(1, len(order)))


def _readable(xp: Any, x: Any) -> Any:
    """``x`` if cuBLASLt reads it as it is, else a C-contiguous copy (one kernel, as cupy's
    ``matmul`` copies a strided operand)."""
    if any(s % x.itemsize for s in x.strides):
        return xp.ascontiguousarray(x)
    st = _strides(x)
    if _matrix_ok(x.shape[-2:], st[-2:]) and _batch_ok(x.shape[:-2], st[:-2]):
        return x
    return xp.ascontiguousarray(x)


def _writable_into(out: Any, a: Any, b: Any) -> bool:
    """Whether the product can be written straight into ``out``: C-contiguous, sharing no
    memory with an operand (cuBLASLt would read what it already wrote)."""
    if not out.flags.c_contiguous:
        return False
    lo, hi = _extent(out)
    for x in (a, b):
        xlo, xhi = _extent(x)
        if xlo < hi and lo < xhi:
            return False
    return True


def _extent(x: Any) -> tuple[int, int]:
    """The byte range ``x``'s elements lie in."""
    lo = hi = int(x.data.ptr)
    for n, s in zip(x.shape, x.strides):
        if n > 1:
            if s < 0:
                lo += (n - 1) * s
            else:
                hi += (n - 1) * s
    return lo, hi + x.itemsize
