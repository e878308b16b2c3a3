"""Complex numbers from and to their parts: ``complex``, ``real``, ``imag`` and ``conj``
(TensorFlow's ``tf.complex``, ``tf.math.real``, ``tf.math.imag``, ``tf.math.conj``).

float32 parts make complex64 and float64 parts complex128 (float16, bfloat16, integer and
bool parts compute in float32); ``real`` and ``imag`` of complex64 are float32, of
complex128 float64, and of a real tensor the tensor itself and zeros (as TensorFlow).
Their gradients (ember-tape) follow TensorFlow's and PyTorch's convention for complex
tensors: the gradient of a real loss ``L`` with respect to ``z`` is
``dL/d re(z) + i dL/d im(z)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtypes
from .._errors import InvalidArgumentError
from .._registry import execute, register
from . import _args
from ._define import to_float

F = "math"
_C64 = np.dtype(np.complex64)
_C128 = np.dtype(np.complex128)


def complex_of(dtype: np.dtype) -> np.dtype:
    """The complex dtype whose parts have ``dtype`` (complex128 for float64, else complex64)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return dtype
    return _C128 if dtype == np.float64 else _C64


def real_of(dtype: np.dtype) -> np.dtype:
    """The dtype of a complex ``dtype``'s parts (float32 for complex64, float64 for
    complex128); a real dtype is its own."""
    dtype = np.dtype(dtype)
    if dtype.kind != "c":
        return dtype
    return np.dtype(np.float64) if dtype == _C128 else np.dtype(np.float32)


def _parts(x: Any) -> Any:
    """A real array as float32 or float64 (the precisions complex numbers come in)."""
    x = to_float(x)
    return x if x.dtype in (np.float32, np.float64) else x.astype(np.float32)


def _complex(be: Any, re: Any, im: Any) -> Any:
    xp = be.xp
    re, im = _parts(re), _parts(im)
    if re.dtype != im.dtype:  # the wider of the two (promotion gives one dtype but for 16-bit)
        wide = np.promote_types(re.dtype, im.dtype)
        re, im = re.astype(wide), im.astype(wide)
    re, im = xp.broadcast_arrays(re, im)
    # the two parts side by side, viewed as complex numbers: no arithmetic, so an infinite
    # part stays infinite (re + 1j * im would make inf * 0 = nan)
    pairs = xp.ascontiguousarray(xp.stack([re, im], -1))
    return pairs.view(complex_of(re.dtype))[..., 0]


def _real(be: Any, z: Any) -> Any:
    return be.xp.real(z).copy() if z.dtype.kind == "c" else z


def _imag(be: Any, z: Any) -> Any:
    return be.xp.imag(z).copy() if z.dtype.kind == "c" else be.xp.zeros_like(z)


def _conj(be: Any, z: Any) -> Any:
    return be.xp.conj(z) if z.dtype.kind == "c" else z


_complex_op = register("complex", _complex, family=F, promote="all")
_real_op = register("real", _real, family=F)
_imag_op = register("imag", _imag, family=F)
_conj_op = register("conj", _conj, family=F)


def _not_complex(fn: str, x: Any, what: str) -> None:
    if x.dtype.kind == "c":
        raise InvalidArgumentError(f"{fn}: {what} must be real, got dtype {x.dtype} and shape "
                                   f"{tuple(x.shape)}")


def complex(real: Any, imag: Any, name: str | None = None) -> Any:
    """The complex tensor ``real + i * imag`` (broadcast): complex64 from float32 parts,
    complex128 from float64 ones.

    Examples:
        >>> import ember.core as em
        >>> em.complex(em.constant([1., 2.]), em.constant([0.5, -1.]))
        ember.Tensor([1.+0.5j 2.-1.j ], shape=(2,), dtype=complex64)
    """
    re, im = _args.tensor(real), _args.tensor(imag)
    _not_complex("complex", re, "real")
    _not_complex("complex", im, "imag")
    return execute(_complex_op, (re, im))


def real(input: Any, name: str | None = None) -> Any:
    """The real part of each element (float32 for complex64, float64 for complex128); a real
    tensor is returned as it is.

    Examples:
        >>> import ember.core as em
        >>> em.math.real(em.complex(em.constant([1., 2.]), em.constant([3., 4.])))
        ember.Tensor([1. 2.], shape=(2,), dtype=float32)
    """
    x = _args.tensor(input)
    return execute(_real_op, (x,)) if _dtypes.is_complex(x.dtype) else x


def imag(input: Any, name: str | None = None) -> Any:
    """The imaginary part of each element (float32 for complex64, float64 for complex128);
    zeros for a real tensor.

    Examples:
        >>> import ember.core as em
        >>> em.math.imag(em.complex(em.constant([1., 2.]), em.constant([3., 4.])))
        ember.Tensor([3. 4.], shape=(2,), dtype=float32)
    """
    return execute(_imag_op, (_args.tensor(input),))


def conj(x: Any, name: str | None = None) -> Any:
    """The complex conjugate of each element; a real tensor is returned as it is.

    Examples:
        >>> import ember.core as em
        >>> em.math.conj(em.complex(em.constant([1.]), em.constant([2.])))
        ember.Tensor([1.-2.j], shape=(1,), dtype=complex64)
    """
    t = _args.tensor(x)
    return execute(_conj_op, (t,)) if _dtypes.is_complex(t.dtype) else t
