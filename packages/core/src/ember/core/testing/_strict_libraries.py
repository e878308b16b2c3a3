"""Which of the double's ``xp`` calls reach a CUDA library in cupy 14 (cuBLAS, cuSOLVER,
cuRAND), and cupy's refusal of them while a stream captures.

``check(backend, qual, args, kwargs, owner)`` runs before each ``xp`` call of the strict
double (``qual`` is the name under ``cupy.``, e.g. ``"matmul"``, ``"linalg.inv"``; ``owner``
is the array whose method is called, e.g. ``a`` in ``a.dot(b)``). While a capture is under
way (``backend.capture``) it raises what cupy raises, before the call does anything else, so
a factorization's status read (the devInfo check) comes after it, as on a GPU.

Why: cupy's bindings of cuBLAS, cuSOLVER, cuRAND (and cuSPARSE, which ember never calls)
refuse to run on a capturing stream: each library call sets its handle's stream first, and
``setStream`` raises ``NotImplementedError("calling cuBLAS API during stream capture is
currently unsupported")`` (likewise "cuSOLVER", "cuRAND"; cupy issue 6290: cuFFT, cuTENSOR
and NCCL are allowed). The H200 run of 2026-11-27 (cupy 14.2) failed 58 CUDA-graph tests
this way that the double had let capture.

ember's own float products do not meet this refusal where nvmath-python is installed: its
GPU backends route ``xp.matmul`` through nvmath's cuBLASLt (``ember.core._nvmath_products``;
the double's stand-in is ``_strict_nvmath``), and only what that route leaves to cupy
(integer and mixed dtypes, broadcasting batches, and every product without nvmath-python)
reaches the rules below, as do ``einsum``, ``dot`` and the factorizations, which cupy
calls into cuBLAS and cuSOLVER itself.

What was read (cupy v14.2.0, github.com/cupy/cupy):

- ``cupy_backends/cuda/libs/{cublas,cusolver,curand}.pyx``: ``setStream`` raises while
  ``runtime.streamIsCapturing``; every API wrapper calls it.
- ``cupy/_core/_routines_linalg.pyx``: ``dot`` and ``tensordot_core`` (behind ``dot``,
  ``ndarray.dot``, ``inner``, ``tensordot``, ``vdot``, 2-D ``matmul``): an empty operand
  fills zeros; a product of one element (``n == m == 1``) is its own reduction kernel
  (``_tensordot_core_mul_sum``); bool and integer dtypes are its own GEMM kernel
  (``_integral_tensordot_core``); float16/32/64 and complex go to cuBLAS. ``matmul`` of more
  than two dimensions: integer and bool its own kernel, float16 computed in float32 and every
  float or complex dtype in cuBLAS (``gemmStridedBatchedEx``, or ``_mat_ptrs`` and
  ``<t>gemmBatched`` when an operand broadcasts), with no one-element shortcut.
- ``cupy/linalg/_product.py``: ``vdot`` is ``tensordot_core(a, b, None, 1, 1, ...)``, so it
  never reaches cuBLAS; ``outer``, ``kron``, ``cross`` multiply; ``matrix_power`` is
  ``matmul`` (``inv`` first for a negative power).
- ``cupy/linalg/_einsum.py``: operands lose their size-1 axes, labels only one operand has
  are summed away, and each pairwise contraction of a label that no later operand or the
  output keeps is a 3-d ``matmul`` (cuBLAS for float and complex); the rest is element-wise.
  cuTENSOR (allowed) only with ``CUPY_ACCELERATORS=cutensor``, which is not the default.
- ``cupy/linalg/_solve.py``, ``_decomposition.py``, ``_eigenvalue.py``, ``_norms.py``,
  ``cupy/cublas.py``, ``cupyx/lapack.py``, ``cupyx/_cusolver.pyx``: which library each
  factorization calls (the table below). ``det`` and ``slogdet`` factorize with cuBLAS
  ``getrfBatched`` when ``batch * 65536 >= n * n`` (a 2-d matrix up to 256 x 256) and with
  cuSOLVER ``getrf`` otherwise; a batched ``inv`` uses cuBLAS ``getrf/getriBatched``;
  a batched ``solve`` with ``n <= 256`` (``get_batched_gesv_limit``) cuBLAS
  ``getrf/getrsBatched``. ``linalg.norm`` is element-wise and reductions, except the matrix
  norms ``ord=2, -2, 'nuc'``, which take an SVD.
- ``cupy/_core/core.pyx``: ``asfortranarray`` of a C-contiguous 2-d float32/float64 array
  transposes with cuBLAS ``geam``.
- ``cupy/random/_generator.py``: ``RandomState``'s uniform, normal and integer draws call
  cuRAND's host API (``generate*``); beta, binomial, chisquare, dirichlet, f, gamma,
  geometric, hypergeometric, logistic, poisson, standard_gamma, standard_t and vonmises are
  cupy's own kernels (allowed); a few check their parameters on the host first (a device
  read, refused during capture before any draw).

The rules, for a call that is not refused for another reason first:

=====================================================  ====================================
call (``cupy.``)                                        library while capturing
=====================================================  ====================================
matmul, linalg.matmul, ``@``                            cuBLAS for float/complex, unless an
                                                        operand is empty or (at most 2-d)
                                                        the product has one element
dot, ndarray.dot, inner, tensordot                      the same rule (any number of dims)
vdot, outer, kron, cross, trace, linalg.norm (most)     none
einsum                                                  cuBLAS for a float/complex result
                                                        with a contracted label
linalg.inv                                              2-d cuSOLVER; batched cuBLAS
linalg.solve, tensorsolve                               2-d cuSOLVER; batched cuBLAS if
                                                        n <= 256, else cuSOLVER
linalg.det, linalg.slogdet                              cuBLAS if batch * 65536 >= n * n,
                                                        else cuSOLVER
linalg.cholesky, qr, svd, eigh, eigvalsh, eig,          cuSOLVER
eigvals, pinv, lstsq, matrix_rank, tensorinv,
norm (ord 2, -2, 'nuc' over two axes), cond (p None,
2, -2; other p: inv's rule)
linalg.matrix_power                                     n < 0: inv's rule; n >= 2: matmul's
asfortranarray                                          cuBLAS for C-contiguous 2-d float32
                                                        or float64
cov, corrcoef                                           ndarray.dot's rule on the variables
random.(rand, randn, random_sample, random, ranf,       cuRAND
sample, uniform, normal, standard_normal, lognormal,
randint, random_integers, permutation, shuffle,
choice (no p), laplace, gumbel, pareto, wald,
standard_cauchy, standard_exponential)
random.multivariate_normal                              cuSOLVER (its factorization)
random.(exponential, power, rayleigh, triangular,       a device read first (the double's
weibull, logseries, zipf, negative_binomial,            D2H refusal)
noncentral_chisquare, noncentral_f, choice with p,
multinomial)
=====================================================  ====================================

Empty matrices take no library call (each function returns early); cuFFT (``fft.*``) is
allowed. Not modelled: cupyx (sparse, scipy), ``random.default_rng`` (the double hands out
numpy's generator), and the host copies cupy makes of Python-number parameters of random
draws before drawing.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

CUBLAS, CUSOLVER, CURAND = "cuBLAS", "cuSOLVER", "cuRAND"
READS = "a device read"  # not a library: a host read of device values (refused too)
REFUSED = "calling {} API during stream capture is currently unsupported"  # cupy's words
_BATCHED_GESV_LIMIT = 256  # cupy.cublas.get_batched_gesv_limit()

_LINALG_ONLY = frozenset({  # numpy has these under linalg only, so a bare name is linalg's
    "inv", "solve", "tensorsolve", "tensorinv", "cholesky", "qr", "svd", "eigh", "eigvalsh",
    "eig", "eigvals", "det", "slogdet", "lstsq", "pinv", "norm", "cond", "matrix_rank",
    "matrix_power"})
_CURAND = frozenset({
    "rand", "randn", "random_sample", "random", "ranf", "sample", "uniform", "normal",
    "standard_normal", "lognormal", "randint", "random_integers", "permutation", "shuffle",
    "laplace", "gumbel", "pareto", "wald", "standard_cauchy", "standard_exponential"})
_READS_FIRST = frozenset({  # parameter checks read the device before drawing
    "exponential", "power", "rayleigh", "triangular", "weibull", "logseries", "zipf",
    "negative_binomial", "noncentral_chisquare", "noncentral_f", "multinomial"})


def check(backend: Any, qual: str, args: Any, kwargs: Any, owner: Any = None) -> None:
    """Raise as cupy 14 does when ``cupy.<qual>`` would call a library it refuses during
    stream capture (``owner``: the array a method is called on)."""
    if backend.capturing_here() is None:
        return
    if isinstance(owner, np.ndarray):
        args = (owner, *args)
    lib = library(qual, args, kwargs)
    if lib == READS:
        backend.check_not_capturing("D2H transfers")
    elif lib is not None:
        raise NotImplementedError(REFUSED.format(lib))


def library(qual: str, args: Any, kwargs: Any) -> str | None:
    """The CUDA library cupy 14's ``cupy.<qual>(*args, **kwargs)`` calls first (``args`` are
    the arrays it gets, as numpy arrays), ``READS`` for a call that reads device values back
    before any library call, or None for cupy's own kernels only."""
    prefix, _, name = qual.rpartition(".")
    if prefix == "random":
        return _random(name, args, kwargs)
    if prefix in ("", "linalg") and name in _LINALG_ONLY:
        return _linalg(name, args, kwargs)
    if prefix not in ("", "linalg"):
        return None
    if name == "matmul":
        a, b = _arg(args, kwargs, 0, "x1"), _arg(args, kwargs, 1, "x2")
        return _matmul(a, b)
    if name == "dot":
        return _dot(_arg(args, kwargs, 0, "a"), _arg(args, kwargs, 1, "b"))
    if name == "inner":
        return _inner(_arg(args, kwargs, 0, "a"), _arg(args, kwargs, 1, "b"))
    if name == "tensordot":
        return _tensordot(_arg(args, kwargs, 0, "a"), _arg(args, kwargs, 1, "b"),
                          _arg(args, kwargs, 2, "axes", 2))
    if name == "einsum":
        return _einsum(args, kwargs)
    if name == "asfortranarray":
        return _asfortranarray(_arg(args, kwargs, 0, "a"), _arg(args, kwargs, 1, "dtype"))
    if name in ("cov", "corrcoef"):
        return _cov(name, args, kwargs)
    return None  # vdot (a one-element reduction), outer, kron, cross, trace, ...


def _arg(args: Any, kwargs: Any, i: int, key: str, default: Any = None) -> Any:
    return args[i] if len(args) > i else kwargs.get(key, default)


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(np.shape(x))


def _gemm_dtype(*xs: Any) -> bool:
    """Whether cupy's product of ``xs`` is a floating or complex GEMM (cuBLAS), not its own
    integer/bool kernel."""
    try:
        return np.result_type(*xs).kind in "fc"
    except TypeError:
        return False


def _product(a: Any, b: Any, n: int, m: int) -> str | None:
    """``tensordot_core``'s choice for an ``(n, k) x (k, m)`` product of ``a`` and ``b``."""
    if np.size(a) == 0 or np.size(b) == 0 or (n == 1 and m == 1):
        return None  # zeros, or _tensordot_core_mul_sum
    return CUBLAS if _gemm_dtype(a, b) else None


def _dot(a: Any, b: Any) -> str | None:
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb:
        return None  # a multiply
    k = sa[-1]
    if k == 0:
        return None
    return _product(a, b, math.prod(sa) // k, math.prod(sb) // k)


def _matmul(a: Any, b: Any) -> str | None:
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb:
        return None  # cupy refuses scalars (ValueError), as numpy does
    if max(len(sa), len(sb)) <= 2:
        return _dot(a, b)
    if np.size(a) == 0 or np.size(b) == 0:
        return None
    return CUBLAS if _gemm_dtype(a, b) else None


def _inner(a: Any, b: Any) -> str | None:
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb or sa[-1] == 0:
        return None
    k = sa[-1]
    return _product(a, b, math.prod(sa) // k, math.prod(sb) // k)


def _tensordot(a: Any, b: Any, axes: Any) -> str | None:
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb:
        return None
    if isinstance(axes, (tuple, list)):
        a_axes = axes[0] if isinstance(axes[0], (tuple, list)) else (axes[0],)
    else:
        a_axes = tuple(range(len(sa) - int(axes), len(sa)))
    k = math.prod(sa[i] for i in a_axes)
    if k == 0:
        return None
    return _product(a, b, math.prod(sa) // k, math.prod(sb) // k)


def _einsum(args: Any, kwargs: Any) -> str | None:
    """cupy's einsum reaches cuBLAS (a 3-d ``matmul``) when, after dropping size-1 axes and
    summing labels only one operand has, a label of several operands is not in the output;
    whatever the contraction path, the last two operands holding it contract it."""
    try:
        from numpy._core.einsumfunc import _parse_einsum_input
        ins, out, ops = _parse_einsum_input(list(args))
    except Exception:  # numpy's einsum raises on it too
        return None
    dtype = kwargs.get("dtype")
    if len(ops) < 2 or not (np.dtype(dtype).kind in "fc" if dtype is not None
                            else _gemm_dtype(*ops)):
        return None
    shapes = [_shape(o) for o in ops]
    if any(math.prod(s) == 0 for s in shapes):
        return None  # zeros
    labels = []
    for sub, shape in zip(ins.split(","), shapes):
        # numpy's parser spells an ellipsis' axes as letters; a broadcast operand has fewer
        sub = sub[len(sub) - len(shape):] if len(sub) > len(shape) else sub
        labels.append({c for c, n in zip(sub, shape) if n != 1})
    keep = set(out)
    for i, own in enumerate(labels):  # unary sums of labels no other operand has
        others = keep.union(*(o for j, o in enumerate(labels) if j != i))
        labels[i] = own & others
    held = [c for own in labels for c in own]
    return CUBLAS if any(held.count(c) > 1 and c not in keep for c in set(held)) else None


def _asfortranarray(a: Any, dtype: Any) -> str | None:
    if not isinstance(a, np.ndarray) or a.ndim != 2 or a.flags.f_contiguous:
        return None
    if dtype is not None and np.dtype(dtype) != a.dtype:
        return None  # an element-wise copy
    return CUBLAS if a.flags.c_contiguous and a.dtype in (np.float32, np.float64) else None


def _cov(name: str, args: Any, kwargs: Any) -> str | None:
    """``X.dot(X.T)`` over the variables (X's rows, y's appended): one variable is a
    one-element product (no cuBLAS); with weights the normalization is read back first."""
    if kwargs.get("fweights") is not None or kwargs.get("aweights") is not None:
        return READS
    rowvar = _arg(args, kwargs, 2, "rowvar", True)
    rows, obs = 0, 0
    for i, x in enumerate((_arg(args, kwargs, 0, "m"), _arg(args, kwargs, 1, "y"))):
        if x is None:
            continue
        s = _shape(x)
        s2 = (1,) * (2 - len(s)) + s if len(s) < 2 else s  # cupy.array(x, ndmin=2)
        if not rowvar and (len(s) != 1 if i == 0 else s2[0] != 1):
            s2 = s2[::-1]
        rows, obs = rows + s2[0], s2[1]
    return CUBLAS if rows > 1 and obs > 0 else None  # computed in float64 at least


def _linalg(name: str, args: Any, kwargs: Any) -> str | None:
    a = _arg(args, kwargs, 0, "a")
    shape = _shape(a)
    if name == "norm":
        return _norm(a, _arg(args, kwargs, 1, "ord"), _arg(args, kwargs, 2, "axis"))
    if len(shape) < 2:
        return None  # cupy refuses it (or, matrix_rank, compares with zero)
    if name == "matrix_power":
        n = _arg(args, kwargs, 1, "n")
        if n is None or n == 0 or n == 1:
            return None
        return _linalg("inv", (a,), {}) if n < 0 else _matmul(a, a)
    if name == "cond":
        p = _arg(args, kwargs, 1, "p")
        if np.size(a) == 0:
            return None  # cupy raises LinAlgError
        return CUSOLVER if p is None or p in (2, -2) else _linalg("inv", (a,), {})
    if np.size(a) == 0 or (len(shape) >= 2 and 0 in shape[-2:]):
        return None  # every function returns early for empty matrices
    if name == "inv":
        return CUSOLVER if len(shape) == 2 else CUBLAS
    if name == "solve":
        batched = len(shape) > 2 and shape[-1] <= _BATCHED_GESV_LIMIT
        return CUBLAS if batched else CUSOLVER
    if name in ("det", "slogdet"):
        n = shape[-1]
        return CUBLAS if (np.size(a) // (n * n)) * 65536 >= n * n else CUSOLVER
    return CUSOLVER  # cholesky, qr, svd, eigh, eigvalsh, eig, eigvals, pinv, lstsq,
    # matrix_rank, tensorsolve (a 2-d solve), tensorinv (a 2-d inv)


def _norm(x: Any, ord: Any, axis: Any) -> str | None:
    """Only the matrix norms of singular values (ord 2, -2, 'nuc' over two axes) take a
    library call (an SVD); the rest are element-wise kernels and reductions."""
    nd = len(_shape(x))
    if axis is None:
        if ord is None or (nd == 1 and ord == 2) or (nd == 2 and ord in ("f", "fro")):
            return None
        axis = tuple(range(nd))
    two_axes = isinstance(axis, tuple) and len(axis) == 2
    if not two_axes or not (ord in (2, -2) or ord == "nuc") or np.size(x) == 0:
        return None
    return CUSOLVER


def _random(name: str, args: Any, kwargs: Any) -> str | None:
    if name in _CURAND:
        return CURAND
    if name in _READS_FIRST:
        return READS
    if name == "choice":
        if _arg(args, kwargs, 3, "p") is not None:
            return READS  # its checks of p read the device
        a, replace = _arg(args, kwargs, 0, "a"), _arg(args, kwargs, 2, "replace", True)
        if not replace and isinstance(a, (int, np.integer)):
            return None  # a Feistel bijection: cupy's own kernel
        return CURAND
    if name == "multivariate_normal":
        return CUSOLVER
    return None  # cupy's own kernels (beta, gamma, poisson, ...), seed, get_random_state
