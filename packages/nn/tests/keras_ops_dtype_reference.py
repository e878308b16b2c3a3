"""Keras 3's result dtypes for ``keras.ops``' binary element-wise functions (and a few unary
ones) over inputs of every small dtype and Python scalars, for ``test_ops_dtypes_keras.py``.

Run with Keras's own interpreter (never ember's), once per backend; each run adds its
backend's answers to ``data/keras_ops_dtypes.json``::

    KERAS_BACKEND=torch CUDA_VISIBLE_DEVICES= python packages/nn/tests/keras_ops_dtype_reference.py
    KERAS_BACKEND=jax JAX_PLATFORMS=cpu python packages/nn/tests/keras_ops_dtype_reference.py

(``nox -s keras-interop`` makes such an interpreter: Keras 3.15.1 and a CPU torch; JAX is
optional.) Each case is ``op:first,second`` where an operand is a dtype name (a 2x2 array of
that dtype) or ``py_int`` (2), ``py_float`` (2.5) or ``py_bool`` (True); the answer is the
result's dtype, or ``"error"`` where Keras refuses the inputs. The file holds, per backend
and op, one line of answers per first operand, in the order of ``seconds(op)`` (``unpack``
reads it back). 64-bit dtypes are left out:
ember keeps 64-bit results for 64-bit inputs where Keras's torch and JAX backends give
32-bit ones (a documented difference).
"""

from __future__ import annotations

import json
import os
import pathlib

import numpy as np

ARRAYS = ["bool", "uint8", "int8", "int16", "int32", "float16", "bfloat16", "float32"]
SCALARS = {"py_int": 2, "py_float": 2.5, "py_bool": True}
BINARY = [
    "add", "subtract", "multiply", "divide", "true_divide", "divide_no_nan", "floor_divide",
    "mod", "power", "maximum", "minimum", "arctan2", "hypot", "logaddexp", "equal",
    "not_equal", "greater", "greater_equal", "less", "less_equal", "logical_and",
    "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
    "right_shift", "matmul", "dot", "inner", "outer", "vdot", "tensordot",
]
# ops whose operands must be arrays (no Python scalars) in Keras
ARRAYS_ONLY = {"matmul", "dot", "inner", "outer", "vdot", "tensordot"}
UNARY = ["square", "trace", "negative", "abs", "sign", "sum", "prod", "cumsum", "diagonal",
         "diff", "clip"]


def firsts(op: str) -> list[str]:
    return ARRAYS if op in ARRAYS_ONLY or op == "where" else ARRAYS + list(SCALARS)


def seconds(op: str, first: str) -> list[str]:
    """The second operands paired with ``first`` (Python numbers only with arrays)."""
    if op in ARRAYS_ONLY or first in SCALARS:
        return ARRAYS
    return ARRAYS + list(SCALARS)


def cases() -> list[tuple[str, str, str | None]]:
    """(op, first, second) for every case (second None for the unary ones; ``where``'s
    operands are its x1 and x2, under a bool condition)."""
    out: list[tuple[str, str, str | None]] = []
    for op in BINARY + ["where"]:
        out += [(op, a, b) for a in firsts(op) for b in seconds(op, a)]
    out += [(op, a, None) for op in UNARY for a in ARRAYS]
    return out


def pack(answers: dict[str, str]) -> dict[str, object]:
    """One backend's answers as {op: {first: "answer answer ..."}} ({op: "..."} if unary)."""
    packed: dict[str, object] = {}
    for op in BINARY + ["where"]:
        packed[op] = {a: " ".join(answers[key(op, a, b)] for b in seconds(op, a))
                      for a in firsts(op)}
    for op in UNARY:
        packed[op] = " ".join(answers[key(op, a, None)] for a in ARRAYS)
    return packed


def unpack(packed: dict[str, object]) -> dict[str, str]:
    """``pack``'s inverse: {case key: answer}."""
    out: dict[str, str] = {}
    for op, rows in packed.items():
        if isinstance(rows, str):
            out.update({key(op, a, None): v for a, v in zip(ARRAYS, rows.split())})
        else:
            for a, row in rows.items():  # type: ignore[attr-defined]
                out.update({key(op, a, b): v for b, v in zip(seconds(op, a), row.split())})
    return out


def key(op: str, a: str, b: str | None) -> str:
    return f"{op}:{a}" if b is None else f"{op}:{a},{b}"


def value(name: str) -> np.ndarray | int | float | bool:
    """The operand ``name`` stands for (a numpy array; values valid for every op)."""
    if name in SCALARS:
        return SCALARS[name]
    base = np.array([[1, 2], [3, 1]])
    if name == "bool":
        return np.ones((2, 2), bool)
    if name == "bfloat16":
        return base.astype(np.float32)  # converted by Keras below
    return base.astype(name)


def main() -> None:
    import keras  # Keras's interpreter only
    from keras import ops

    def operand(name: str):
        v = value(name)
        if isinstance(v, np.ndarray):
            return ops.convert_to_tensor(v, dtype=name)
        return v

    backend = keras.backend.backend()
    answers: dict[str, str] = {}
    for op, a, b in cases():
        try:
            if op == "where":
                out = ops.where(ops.convert_to_tensor(np.eye(2, dtype=bool)), operand(a),
                                operand(b))
            elif op == "clip":
                out = ops.clip(operand(a), 0, 2)
            elif b is None:
                out = getattr(ops, op)(operand(a))
            else:
                out = getattr(ops, op)(operand(a), operand(b))
            answers[key(op, a, b)] = keras.backend.standardize_dtype(out.dtype)
        except Exception:
            answers[key(op, a, b)] = "error"
    path = pathlib.Path(__file__).parent / "data" / "keras_ops_dtypes.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data["keras_version"] = keras.__version__
    data[backend] = pack(answers)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"{backend}: {len(answers)} cases, "
          f"{sum(v == 'error' for v in answers.values())} refused -> {path}")


if __name__ == "__main__":
    os.environ.setdefault("KERAS_BACKEND", "torch")
    main()
