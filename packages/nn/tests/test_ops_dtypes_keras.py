"""Result dtypes of ``nn.ops``' element-wise functions follow Keras 3's promotion.

``FIXED`` is the table of the cases that once differed, with Keras's answer beside each
(and a check of its values); the sweep then runs every binary function of ``nn.ops``
(arithmetic, comparisons, logical and bitwise ones, shifts, products, ``where``) and a few
unary ones over operands of every small dtype and Python numbers, against the answers of
Keras 3.15.1 in ``data/keras_ops_dtypes.json`` (written by
``keras_ops_dtype_reference.py`` with Keras's own interpreter, torch and JAX backends).

Keras's answer is its JAX backend's (its promotion lattice is JAX's; TensorFlow and NumPy
agree), or torch's where JAX refuses the inputs, except where ``PICKED`` says otherwise.
Where Keras's torch backend differs from the lattice it is for torch's own limits (no
uint32: ``sum``/``prod``/``trace`` of uint8 are int32 there; shifts of a bool by a Python
int int64), and ember follows the lattice. Cases every Keras backend refuses are not
checked (ember may compute them). 64-bit inputs are left out: ember keeps 64-bit results
for them, by design.
"""

from __future__ import annotations

import json
import pathlib

import keras_ops_dtype_reference as ref  # (test helpers import by name: see conftest)
import numpy as np
import pytest
from numpy.testing import assert_allclose

from ember.nn import ops

_DATA = json.loads((pathlib.Path(__file__).parent / "data" / "keras_ops_dtypes.json")
                   .read_text())
TORCH, JAX = ref.unpack(_DATA["torch"]), ref.unpack(_DATA["jax"])

# Where Keras's backends disagree and ember picks the one that is not JAX's: hypot with a
# Python float counts it as float32 (convert_to_tensor's dtype) on TensorFlow and torch, as
# arctan2 and logaddexp do on every backend; JAX keeps it weak.
PICKED = {ref.key("hypot", a, b): "float32" for a, b in (
    ("float16", "py_float"), ("bfloat16", "py_float"), ("py_float", "float16"),
    ("py_float", "bfloat16"))}


def keras_answer(case: str) -> str:
    if case in PICKED:
        return PICKED[case]
    return JAX[case] if JAX[case] != "error" else TORCH[case]


def _operand(name):
    v = ref.value(name)
    return ops.convert_to_tensor(v, dtype=name) if isinstance(v, np.ndarray) else v


def _call(op, a, b):
    if op == "where":
        return ops.where(ops.convert_to_tensor(np.eye(2, dtype=bool)), _operand(a),
                         _operand(b))
    if op == "clip":
        return ops.clip(_operand(a), 0, 2)
    if b is None:
        return getattr(ops, op)(_operand(a))
    return getattr(ops, op)(_operand(a), _operand(b))


def _off_device(backend, *names):
    """bfloat16 stays on the host: a GPU has none in ember (cupy has none)."""
    return backend.startswith("/gpu") and "bfloat16" in names


def _np(name):
    v = ref.value(name)
    return v.astype(np.float64) if isinstance(v, np.ndarray) else v


# op, first, second (None: unary), Keras's dtype, numpy's values (in float64 or ints)
FIXED = [
    # float-valued functions of two inputs: result_type(x1, x2, float)
    ("arctan2", "float16", "int8", "float16", np.arctan2),
    ("arctan2", "int32", "bfloat16", "bfloat16", np.arctan2),
    ("arctan2", "float16", "bool", "float16", np.arctan2),
    ("arctan2", "float16", "py_int", "float16", np.arctan2),
    ("arctan2", "py_bool", "float16", "float16", np.arctan2),
    ("arctan2", "float16", "py_float", "float32", np.arctan2),  # 2.5 converts to float32
    ("arctan2", "int8", "int16", "float32", np.arctan2),
    ("hypot", "float16", "uint8", "float16", np.hypot),
    ("hypot", "bfloat16", "py_int", "bfloat16", np.hypot),
    ("hypot", "py_int", "float16", "float16", np.hypot),
    ("hypot", "float16", "py_float", "float32", np.hypot),  # TF, torch (JAX: float16)
    ("logaddexp", "float16", "int32", "float16", np.logaddexp),
    ("logaddexp", "bool", "bfloat16", "bfloat16", np.logaddexp),
    ("logaddexp", "float16", "py_bool", "float16", np.logaddexp),
    ("logaddexp", "bfloat16", "py_float", "float32", np.logaddexp),
    ("divide_no_nan", "float16", "int8", "float16", np.divide),
    ("divide_no_nan", "uint8", "bfloat16", "bfloat16", np.divide),
    ("divide_no_nan", "float16", "py_float", "float16", np.divide),  # weak here (TF's code)
    ("divide_no_nan", "py_int", "float16", "float16", np.divide),
    ("divide_no_nan", "int32", "int8", "float32", np.divide),
    # bools in integer arithmetic: int32
    ("square", "bool", None, "int32", np.square),
    ("mod", "bool", "bool", "int32", np.mod),
    ("mod", "bool", "py_bool", "int32", np.mod),
    ("floor_divide", "bool", "bool", "int32", np.floor_divide),
    ("floor_divide", "py_bool", "bool", "int32", np.floor_divide),
    ("power", "bool", "bool", "int32", np.power),
    ("left_shift", "bool", "bool", "int32", lambda a, b: np.left_shift(a.astype(int), 1)),
    ("right_shift", "bool", "py_bool", "int32", lambda a, b: np.right_shift(a.astype(int), 1)),
    # trace sums as sum does (uint8 -> uint32: JAX, TF, NumPy; Keras's torch has int32)
    ("trace", "bool", None, "int32", np.trace),
    ("trace", "int8", None, "int32", np.trace),
    ("trace", "int16", None, "int32", np.trace),
    ("trace", "uint8", None, "uint32", np.trace),
    # int8 matrix products accumulate in int32 (Keras's matmul rule)
    ("matmul", "int8", "int8", "int32", np.matmul),
    # bools where numpy's arithmetic refuses or widens them
    ("vdot", "bool", "bool", "bool", lambda a, b: np.vdot(a.astype(bool), b.astype(bool))),
    ("diff", "bool", None, "bool", lambda a: np.diff(a.astype(bool))),
    ("sign", "bool", None, "bool", lambda a: a.astype(bool)),
]


@pytest.mark.parametrize("op,a,b,want,fn", FIXED,
                         ids=[f"{c[0]}:{c[1]},{c[2]}" for c in FIXED])
def test_fixed_cases_have_keras_dtype_and_values(op, a, b, want, fn, backend):
    case = ref.key(op, a, b)
    assert keras_answer(case) == want, f"the table disagrees with the reference for {case}"
    if _off_device(backend, a, b):
        pytest.skip("no bfloat16 on a GPU")
    out = _call(op, a, b)
    assert ops.dtype(out) == want, case
    assert out.device == backend
    expected = fn(_np(a)) if b is None else fn(_np(a), _np(b))
    got = ops.convert_to_numpy(out).astype(np.float64)
    tol = 1e-2 if want in ("float16", "bfloat16") else 1e-6
    assert_allclose(got, np.asarray(expected, np.float64), rtol=tol, atol=tol, err_msg=case)


def test_fixed_cases_cover_every_op_the_sweep_found():
    """Every op with a case that once differed has a row in FIXED (the table is the list
    of fixes; the sweep below is what keeps them fixed)."""
    assert {c[0] for c in FIXED} >= {"arctan2", "hypot", "logaddexp", "divide_no_nan",
                                     "square", "mod", "floor_divide", "power", "left_shift",
                                     "right_shift", "trace", "matmul", "vdot"}


OPS = sorted({op for op, _, _ in ref.cases()})


@pytest.mark.parametrize("op", OPS)
def test_every_case_has_keras_dtype(op, backend):
    wrong = []
    for o, a, b in ref.cases():
        if o != op:
            continue
        case = ref.key(o, a, b)
        want = keras_answer(case)
        if want == "error" or _off_device(backend, a, b):
            continue
        try:
            got = ops.dtype(_call(o, a, b))
        except Exception as e:
            got = f"error ({type(e).__name__}: {e})"
        if got != want:
            wrong.append(f"{case}: ember {got}, Keras {want}")
    assert not wrong, "\n".join(wrong)
