"""The strict double's launch model for cupy's library calls: matrix products (cuBLAS,
and cupy's own kernels for integers), ``cupy.linalg`` (cuSOLVER) and ``cupy.fft``
(cuFFT). See ``_strict_launches``, whose helpers these rules use."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._strict_launches import LIBRARY_MEMOPS, MEMSET, _arrays, _first, _fresh_copies, _one, _shares


# --- matrix products ------------------------------------------------------------------
def _splits_k(r: int, c: int, k: int, a_trans: bool) -> bool:
    """Whether cuBLAS(Lt) on an H200 splits ``k`` for an ``(r, k) @ (k, c)`` float GEMM,
    which adds its ``splitKreduce_kernel``. The H200's runs show two regimes:

    - small products (``r * c <= 8192`` outputs) with ``a`` row-major and more than 16
      rows run a CUTLASS SIMT kernel with a split-K reduction, even for a small ``k``
      (16 rows or fewer: ``gemmSN`` kernels, no split; ``a`` transposed: xmma, no split);
    - otherwise ``k`` is split when it is long beside the output's 64x64 tiles
      (``k >= 64 * tiles``): e.g. the MLP's 784-deep first layer, the LSTM's 512-deep
      recurrent gradient.
    """
    tiles = math.ceil(r / 64) * math.ceil(c / 64)
    if k >= 64 * tiles:
        return True
    return not a_trans and r > 16 and r * c <= 8192


def _gemm(r: int, c: int, k: int, a_trans: bool) -> list[str]:
    if r == 1 and c == 1:
        return ["gemv", "splitKreduce_kernel"]
    if r == 1 or c == 1:
        return ["gemv"] + (["splitKreduce_kernel"] if k >= 4096 else [])
    return ["gemm"] + (["splitKreduce_kernel"] if _splits_k(r, c, k, a_trans) else [])


def _dot2(a: np.ndarray, b: np.ndarray, out_given: Any) -> list[str]:
    """cupy's ``dot`` of two arrays of at most two dimensions (``tensordot_core``)."""
    a2 = a.reshape(1, -1) if a.ndim == 1 else a
    b2 = b.reshape(-1, 1) if b.ndim == 1 else b
    r, k = a2.shape
    c = b2.shape[1]
    dtype = np.promote_types(a.dtype, b.dtype)
    if not a.size or not b.size:
        return [MEMSET] if r * c else []
    if r == 1 and c == 1:
        return ["cupy_multiply", "cub::DeviceReduce", "cupy_copy"]
    found = []
    # each operand's layout as cuBLAS gets it: (C-contiguous, F-contiguous); a cast or a
    # strided operand is first copied into a new C-contiguous array (a kernel)
    layouts = []
    for x, cast in ((a2, a.dtype != dtype), (b2, b.dtype != dtype)):
        c_ok, f_ok = bool(x.flags.c_contiguous), bool(x.flags.f_contiguous)
        if cast or not (c_ok or f_ok):
            found.append("cupy_copy")
            c_ok, f_ok = True, x.shape[0] == 1 or x.shape[1] == 1
        layouts.append((c_ok, f_ok))
    (a_c, a_f), (b_c, b_f) = layouts
    if dtype.kind in "biu":  # cupy's own kernel wants both row-major
        if a_f and not a_c and r > 1 and k > 1:
            found.append("cupy_copy")
        if b_f and not b_c and c > 1 and k > 1:
            found.append("cupy_copy")
        found.append("_tensordot_core_int_kernel")
    else:
        found += _gemm(r, c, k, not a_c and r > 1 and k > 1)
    if out_given is not None and (np.may_share_memory(out_given, a)
                                  or np.may_share_memory(out_given, b)):
        found.append("cupy_copy")
    return found


def _matmul(args: Any, kwargs: Any, out: Any) -> list[str]:
    a, b = args[0], args[1]
    given = kwargs.get("out", args[2] if len(args) > 2 else None)
    if a.ndim == 0 or b.ndim == 0:
        return _one("cupy_multiply")(args, kwargs, out)
    if max(a.ndim, b.ndim) <= 2:
        found = _dot2(a, b, given)
        if given is not None and (not given.flags.c_contiguous
                                  or given.dtype != np.promote_types(a.dtype, b.dtype)):
            found.append("cupy_copy")
        return found
    return _batched(a, b, given)


def _batched(a: np.ndarray, b: np.ndarray, given: Any) -> list[str]:
    """cupy's ``matmul`` of more than two dimensions: contiguous copies, then one
    strided-batched GEMM, or, where a batch dimension broadcasts, pointer arrays
    (``cupy_mat_ptrs``: one kernel per batch dimension per operand) and a batched GEMM."""
    ndim = max(a.ndim, b.ndim)
    dtype = np.promote_types(a.dtype, b.dtype)
    a3 = a.reshape(1, -1) if a.ndim == 1 else a
    b3 = b.reshape(-1, 1) if b.ndim == 1 else b
    a3 = a3.reshape((1,) * (ndim - a3.ndim) + a3.shape)
    b3 = b3.reshape((1,) * (ndim - b3.ndim) + b3.shape)
    found = []
    for x in (a3, b3):
        if x.size and (x.dtype != dtype or not x.flags.c_contiguous):
            found.append("cupy_copy")
    batch = np.broadcast_shapes(a3.shape[:-2], b3.shape[:-2])
    broadcast = any(sa != sc or sb != sc for sa, sb, sc in
                    zip(a3.shape[:-2], b3.shape[:-2], batch) if sc > 1)
    r, c = a3.shape[-2], b3.shape[-1]
    if not a.size or not b.size:
        return found + ([MEMSET] if math.prod(batch) * r * c else [])
    if broadcast:
        found += ["cupy_mat_ptrs"] * (3 * (ndim - 2))
    if dtype.kind in "biu":
        found.append("_tensordot_core_int_batched_kernel")
    else:
        found.append("gemmBatched")
    if given is not None and (given.dtype != dtype or not given.flags.c_contiguous
                              or np.may_share_memory(given, a)
                              or np.may_share_memory(given, b)):
        found.append("cupy_copy")
    return found


def _dot(args: Any, kwargs: Any, out: Any) -> list[str]:
    a, b = args[0], args[1]
    if a.ndim == 0 or b.ndim == 0:
        return _one("cupy_multiply")(args, kwargs, out)
    if max(a.ndim, b.ndim) <= 2:
        return _dot2(a, b, kwargs.get("out"))
    return ["cupy_copy"] * 2 + _gemm(int(np.prod(a.shape[:-1])), b.shape[-1], a.shape[-1],
                                     False)


def _einsum(args: Any, kwargs: Any, out: Any) -> list[str]:
    spec = args[0] if isinstance(args[0], str) else None
    ops = [x for x in args[1:] if isinstance(x, np.ndarray)]
    res = _arrays(out)
    if spec is None or not res or not res[0].size:
        return []
    ins, _, right = spec.replace(" ", "").partition("->")
    subs = ins.split(",")
    if len(ops) == 1:
        return [] if _shares(res[0], ops) else ["cupy_sum"]
    if len(ops) != 2:
        return ["cupy_copy"] * len(ops) + ["gemm"] * (len(ops) - 1)
    s0, s1 = (s.replace("...", "") for s in subs[:2])
    out_sub = right.replace("...", "")
    contracted = (set(s0) & set(s1)) - set(out_sub)
    if not contracted:
        return ["cupy_multiply"]
    if not res[0].ndim or res[0].size == 1:
        if res[0].dtype.kind in "biu":
            return ["_tensordot_core_int_kernel"]
        return ["gemv", "splitKreduce_kernel"]
    if res[0].dtype.kind in "biu":
        return ["cupy_copy", "cupy_copy", "_tensordot_core_int_kernel"]
    free0, free1 = set(s0) - set(s1), set(s1) - set(s0)
    if not free0 or not free1:  # a matrix times a vector: one operand copied, a GEMV
        return ["cupy_copy", "gemv"]
    return ["cupy_copy", "cupy_copy", "gemm"]


# --- FFT (cuFFT) ------------------------------------------------------------------------
def _fft(kind: str, ndim: int | None) -> Any:
    """``cupy.fft``'s transforms (``kind``: "c2c", "r2c", "c2r"; ``ndim``: the default
    count of axes, None for all). Modelled on cupy 14's ``_fftn`` path, not measured (the
    op table's convolutions are too small for ember to pick FFT): each axis padded by
    ``s`` is a zeroed array and a copy, a strided input is copied contiguous, a C2R
    transform copies its input (cuFFT overwrites it), one cuFFT kernel per transformed
    axis, and a normalization pass where the norm mode scales this direction."""
    def rule(args: Any, kwargs: Any, out: Any) -> list[str]:
        a = _first(args, kwargs)
        res = _arrays(out)
        if not isinstance(a, np.ndarray) or not res or not res[0].size:
            return []
        s_ = kwargs.get("s", args[1] if len(args) > 1 else None)
        axes = kwargs.get("axes", kwargs.get("axis", args[2] if len(args) > 2 else None))
        if axes is None:
            axes = tuple(range(-(ndim or a.ndim), 0))
        elif isinstance(axes, (int, np.integer)):
            axes = (int(axes),)
        if isinstance(s_, (int, np.integer)):
            s_ = (int(s_),)
        found: list[str] = []
        if not (a.flags.c_contiguous or a.flags.f_contiguous):
            found.append("cupy_copy")
        if s_ is not None:
            sizes = list(s_)
            if kind == "c2r":
                sizes[-1] = sizes[-1] // 2 + 1
            for n, ax in zip(sizes, axes):
                if n is not None and n > a.shape[ax]:
                    found += [MEMSET, "cupy_copy"]
        if kind == "c2r":
            found.append("cupy_copy")
        found += ["cufft"] * len(axes)
        norm = kwargs.get("norm") or "backward"
        inverse = kind == "c2r" or kwargs.get("_inverse", False)
        if norm == "ortho" or (norm == "forward") != inverse:
            found.append("cupy_true_divide")
        return found
    return rule


def _ifft(kind: str, ndim: int | None) -> Any:
    forward = _fft(kind, ndim)
    return lambda args, kwargs, out: forward(args, {**kwargs, "_inverse": True}, out)


# --- linear algebra (cuSOLVER and cuBLAS inside cupy.linalg) --------------------------
def linalg(name: str, args: Any, kwargs: Any, out: Any) -> list[str]:
    """What cupy 14's ``cupy.linalg`` routines launch, as the H200 ran them for the op
    table's small float32 matrices: cuSOLVER picks its kernels internally, so these are
    its measured counts (with cupy's own copies and checks around them), by routine and
    by whether the input is one matrix (LU, Householder, ...) or a batch of them
    (cupy's batched routines: getrf/getri batched, Jacobi for svd and eigh)."""
    a = args[0] if args and isinstance(args[0], np.ndarray) else None
    res = _arrays(out)
    if a is None or not res or not any(r.size for r in res) or a.ndim < 2:
        return _fresh_copies(args, kwargs, out)
    count = _LINALG.get(name)
    if count is None:
        return _fresh_copies(args, kwargs, out)
    kernels, memops = count(a, a.ndim > 2, kwargs)
    return ["cusolver:" + name] * kernels + [LIBRARY_MEMOPS] * memops


def _qr(a: np.ndarray, batched: bool, kwargs: Any) -> tuple[int, int]:
    m, n = a.shape[-2:]
    if batched:
        return 13 * int(np.prod(a.shape[:-2])), 1  # one matrix after another
    if m < n:
        return 21, 1
    return (17 if kwargs.get("mode") == "complete" and m > n else 14), 1


def _svd(a: np.ndarray, batched: bool, kwargs: Any) -> tuple[int, int]:
    m, n = a.shape[-2:]
    if batched:
        return 5 + (m < n), 0  # gesvdj batched (a wide batch is transposed first)
    if not kwargs.get("compute_uv", True):
        return 5, 3
    return (40 if m > n else 30 if m == n else 34), (15 if m >= n else 3)


_LINALG: dict[str, Any] = {
    "solve": lambda a, batched, kw: (10, 0) if batched else (18, 2),
    "inv": lambda a, batched, kw: (9, 1) if batched else (18, 3),
    "cholesky": lambda a, batched, kw: (13, 0) if batched else (9, 0),
    "det": lambda a, batched, kw: (21, 0),  # batched LU, then sign and log-sum on cupy
    "slogdet": lambda a, batched, kw: (19, 0),
    "eigh": lambda a, batched, kw: (5, 0) if batched else (16, 2),
    "qr": _qr,
    "svd": _svd,
}


RULES: dict[str, Any] = {
    # cuFFT
    "fft.fft": _fft("c2c", 1), "fft.ifft": _ifft("c2c", 1), "fft.fft2": _fft("c2c", 2),
    "fft.ifft2": _ifft("c2c", 2), "fft.fftn": _fft("c2c", None),
    "fft.ifftn": _ifft("c2c", None), "fft.rfft": _fft("r2c", 1),
    "fft.irfft": _fft("c2r", 1), "fft.rfft2": _fft("r2c", 2), "fft.irfft2": _fft("c2r", 2),
    "fft.rfftn": _fft("r2c", None), "fft.irfftn": _fft("c2r", None),
    # cuBLAS, and cupy's own kernels for integers
    "matmul": _matmul, "dot": _dot, "ndarray.dot": _dot, "einsum": _einsum,
}
