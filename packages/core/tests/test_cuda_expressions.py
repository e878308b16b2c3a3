"""Every op's CUDA expression (``extend.cuda_form``, what graph mode fuses on a GPU) computes
what the op's forward does, on every float case of the op table, bit for bit: checked as a
one-op ``ElementwiseKernel`` on the strict GPU double, which evaluates the kernel's C."""

from __future__ import annotations

import re

import numpy as np
import pytest

import ember.core as em
from ember.core import extend
from ember.core.testing import OP_SPECS, case_id, make_case, simulated_gpus

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
WITH_CUDA = {name: op for name, op in extend.REGISTRY.items() if op.cuda is not None}


def _arity(expr: str) -> int:
    return len(set(re.findall(r"\{(\d)\}", expr)))


CASES = []
for spec in OP_SPECS:
    op = WITH_CUDA.get(spec.name.split(".")[-1])
    if op is None:
        continue
    for case in spec.cases:
        for dtype in FLOATS:
            if dtype in [np.dtype(d) for d in spec.dtypes]:
                CASES.append((op, spec, case, dtype))


def test_the_common_element_wise_ops_have_one():
    for name in ("add", "subtract", "multiply", "divide", "maximum", "minimum", "negative",
                 "exp", "log", "tanh", "sqrt", "relu", "square", "abs"):
        assert name in WITH_CUDA, name
    assert {op.name for op, *_ in CASES} == set(WITH_CUDA)  # each is checked below


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(("op", "spec", "case", "dtype"), CASES,
                         ids=[case_id(s, c, d) for _, s, c, d in CASES])
def test_the_expression_computes_the_forward_bit_for_bit(op, spec, case, dtype):
    raw, kwargs = make_case(spec, case, dtype)
    arrays = [np.asarray(a, dtype) for a in raw]
    for a in arrays:  # the cases' extremes, and NaN where there is room
        if a.size > 2:
            a.flat[0] = np.nan
            a.flat[1] = -0.0
    n = _arity(op.cuda)
    assert not kwargs and len(arrays) == n, "the case calls the op on its operands only"
    with simulated_gpus(1, strict=True), em.device("/gpu:0"):
        ts = [em.constant(a) for a in arrays]
        want = extend.array_of(extend.run_op(op, ts))
        xp = extend.device_of(ts[0]).backend.xp
        kernel = xp.ElementwiseKernel(", ".join(f"T i{k}" for k in range(n)), "T o0",
                                      "o0 = " + op.cuda.format(*(f"i{k}" for k in range(n))),
                                      f"check_{op.name}", options=("--fmad=false",))
        got = kernel(*(extend.array_of(t) for t in ts))
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got.get(), want.get(), equal_nan=True)
