"""The strict double's ``ElementwiseKernel`` with ``raw`` inputs (read by subscript, as
cupy 14's ``CArray::operator[]``) and scalars given for parameters of a named dtype
(cupy's ``CScalar.apply_dtype``)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ember.core.testing._strict_kernels import CompileException, KernelSyntaxError


def test_a_raw_input_is_read_at_its_c_order_positions_and_shapes_no_loop(gpu):
    xp = gpu.backend.xp
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = xp.asarray(host)
    k = xp.ElementwiseKernel("raw T x, int32 n", "T y",
                             "int j = (int)i; y = x[j < n ? n - 1 - j : 0]", "reverse")
    out = xp.empty((5,), dtype=np.float32)
    gpu.backend.counters.reset()
    assert k(x, 5, out) is out
    assert out.get().tolist() == host.reshape(-1)[4::-1].tolist()
    assert gpu.backend.counters.launches == 1  # one kernel, whatever the raw input's shape
    # a view is read in its own (logical) C order, as CArray indexes with its strides
    assert k(x.T, 5, out).get().tolist() == host.T.reshape(-1)[4::-1].tolist()
    with pytest.raises(ValueError, match="Loop size is undecided"):
        xp.ElementwiseKernel("raw T x", "T y", "y = x[0]", "no_loop")(x)


def test_a_subscript_out_of_bounds_is_refused_in_either_arm(gpu):
    """A GPU reads garbage there; the double evaluates both arms of ?:, so a kernel must
    keep its subscripts in bounds everywhere (``x[ok ? j : 0]``)."""
    xp = gpu.backend.xp
    x = xp.asarray(np.arange(4, dtype=np.float32))
    out = xp.empty((6,), dtype=np.float32)
    with pytest.raises(ValueError, match=r"ElementwiseKernel past: x\[4\] reads outside its "
                                         r"4 elements"):
        xp.ElementwiseKernel("raw T x", "T y", "y = i < 4 ? x[i] : (T)0", "past")(x, out)
    clamped = xp.ElementwiseKernel("raw T x", "T y", "y = i < 4 ? x[i < 4 ? i : 0] : (T)0",
                                   "clamped")(x, out)
    assert clamped.get().tolist() == [0, 1, 2, 3, 0, 0]


@pytest.mark.parametrize(("op", "why"), [
    ("y = x", "raw parameter 'x' is an array (CArray), not a value"),
    ("y = x[1.5]", "floating-point literal"),
    ("y = x[v]", "must have integral"),
    ("y = v[0]", "subscripted value 'v' is not a raw array parameter"),
    ("y = x[0", "the expression ends early"),
])
def test_c_a_compiler_rejects_is_refused_at_the_first_call(gpu, op, why):
    xp = gpu.backend.xp
    x = xp.asarray(np.arange(4, dtype=np.float32))
    bad = xp.ElementwiseKernel("raw T x, T v", "T y", op, "bad")
    with pytest.raises(CompileException, match=re.escape(why)):
        bad(x, x, xp.empty((4,), dtype=np.float32))


def test_raw_outputs_are_refused_by_name(gpu):
    with pytest.raises(KernelSyntaxError, match="raw output parameter 'raw T y'"):
        gpu.backend.xp.ElementwiseKernel("T x", "raw T y", "y[i] = x", "scatter")


def test_a_python_scalar_takes_its_parameters_dtype(gpu):
    """cupy casts a scalar to the parameter's dtype: uint32 arithmetic wraps at 2**32."""
    xp = gpu.backend.xp
    k = xp.ElementwiseKernel("uint32 a, T x", "uint64 y", "y = a * a", "square")
    got = k(2 ** 16, xp.zeros((1,), dtype=np.float32))
    assert got.dtype == np.uint64 and got.get().tolist() == [0]
