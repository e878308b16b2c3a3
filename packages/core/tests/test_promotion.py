"""The type-promotion table (docs/guide/dtypes.md), checked whole against a written reference.

The reference below is written by hand from the rules, not computed by numpy (numpy's
answers differ on purpose: ``int32 + float32`` is float64 there, float32 here).
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import ember.core as em
from ember.core.testing import OpLog

# bfloat16 cases run on /cpu:0 where a GPU is present: no GPU holds bfloat16
pytestmark = pytest.mark.usefixtures("bfloat16_on_host")

CODES = "b i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 f64 c64 c128".split()
DT = {"b": em.bool, "i8": em.int8, "i16": em.int16, "i32": em.int32, "i64": em.int64,
      "u8": em.uint8, "u16": em.uint16, "u32": em.uint32, "u64": em.uint64,
      "f16": em.float16, "bf16": em.bfloat16, "f32": em.float32, "f64": em.float64,
      "c64": em.complex64, "c128": em.complex128}

# Row x column -> result; "x": no common dtype (DTypeError).
TABLE = """
      b    i8   i16  i32  i64  u8   u16  u32  u64  f16  bf16 f32  f64  c64  c128
b     b    i8   i16  i32  i64  u8   u16  u32  u64  f16  bf16 f32  f64  c64  c128
i8    i8   i8   i16  i32  i64  i16  i32  i64  x    f16  bf16 f32  f64  c64  c128
i16   i16  i16  i16  i32  i64  i16  i32  i64  x    f16  bf16 f32  f64  c64  c128
i32   i32  i32  i32  i32  i64  i32  i32  i64  x    f16  bf16 f32  f64  c64  c128
i64   i64  i64  i64  i64  i64  i64  i64  i64  x    f16  bf16 f32  f64  c64  c128
u8    u8   i16  i16  i32  i64  u8   u16  u32  u64  f16  bf16 f32  f64  c64  c128
u16   u16  i32  i32  i32  i64  u16  u16  u32  u64  f16  bf16 f32  f64  c64  c128
u32   u32  i64  i64  i64  i64  u32  u32  u32  u64  f16  bf16 f32  f64  c64  c128
u64   u64  x    x    x    x    u64  u64  u64  u64  f16  bf16 f32  f64  c64  c128
f16   f16  f16  f16  f16  f16  f16  f16  f16  f16  f16  f32  f32  f64  c64  c128
bf16  bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 f32  bf16 f32  f64  c64  c128
f32   f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f64  c64  c128
f64   f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  c128 c128
c64   c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c128 c64  c128
c128  c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128
"""

# A tensor of the row's dtype with a Python scalar: bool, int, float, complex.
SCALARS = (True, 1, 1.5, 1j)
WEAK = """
      bool int  float complex
b     b    i32  f32   c64
i8    i8   i8   f32   c64
i16   i16  i16  f32   c64
i32   i32  i32  f32   c64
i64   i64  i64  f32   c64
u8    u8   u8   f32   c64
u16   u16  u16  f32   c64
u32   u32  u32  f32   c64
u64   u64  u64  f32   c64
f16   f16  f16  f16   c64
bf16  bf16 bf16 bf16  c64
f32   f32  f32  f32   c64
f64   f64  f64  f64   c128
c64   c64  c64  c64   c64
c128  c128 c128 c128  c128
"""


def _grid(text: str) -> dict[tuple[str, int], str]:
    rows = [r.split() for r in text.strip().splitlines()[1:]]
    return {(r[0], j): v for r in rows for j, v in enumerate(r[1:])}


PAIRS = [(a, b, v) for (a, j), v in _grid(TABLE).items() for b in [CODES[j]]]
WEAK_CASES = [(a, SCALARS[j], v) for (a, j), v in _grid(WEAK).items()]


def _t(code: str, value: float = 1) -> em.Tensor:
    return em.constant(np.full([2], value).astype(DT[code]))


def test_the_table_is_square_and_symmetric():
    grid = {(a, b): v for a, b, v in PAIRS}
    assert len(grid) == len(CODES) ** 2
    for (a, b), v in grid.items():
        assert grid[b, a] == v, (a, b)


@pytest.mark.parametrize("a,b,want", PAIRS, ids=[f"{a}-{b}" for a, b, _ in PAIRS])
def test_every_dtype_pair(a, b, want):
    x, y = _t(a), _t(b)
    if want == "x":
        for f in (lambda: em.promote_types(DT[a], DT[b]), lambda: em.add(x, y),
                  lambda: em.concat([x, y], 0)):
            with pytest.raises(em.DTypeError, match="no common integer dtype"):
                f()
        return
    w = DT[want]
    assert em.promote_types(DT[a], DT[b]) == w
    assert em.result_type(x, y) == w
    assert em.result_type(x, y.numpy()) == w  # numpy arrays are strongly typed
    assert (x + y).dtype == w
    assert em.maximum(x, y).dtype == w
    assert em.concat([x, y], 0).dtype == w
    assert em.stack([x, y]).dtype == w
    assert em.where(em.constant([True, False]), x, y).dtype == w
    assert em.equal(x, y).dtype == em.bool
    # true division: integers and bools divide to float32
    assert (x / y).dtype == (em.float32 if want == "b" or want[0] in "iu" else w)
    if want[0] in "fc" and want != "c128" or want in ("i32", "i64"):
        assert em.matmul(em.reshape(x, [1, 2]), em.reshape(y, [2, 1])).dtype == w


@pytest.mark.parametrize("a,s,want", WEAK_CASES, ids=[f"{a}-{type(s).__name__}"
                                                       for a, s, _ in WEAK_CASES])
def test_every_dtype_with_python_scalars(a, s, want):
    x = _t(a)
    w = DT[want]
    assert em.result_type(x, s) == w
    assert (x + s).dtype == w
    assert (s + x).dtype == w
    assert em.where(em.constant([True, False]), x, s).dtype == w
    assert em.maximum(x, s).dtype == w


def test_python_scalars_alone_take_the_defaults():
    assert em.add(1, 2).dtype == em.int32
    assert em.add(1, 2.5).dtype == em.float32
    assert em.add(True, 1).dtype == em.int32
    assert em.add(True, False).dtype == em.bool
    assert em.add(1.5, 1j).dtype == em.complex64
    assert em.divide(1, 2).dtype == em.float32
    assert_allclose(em.divide(1, 2).numpy(), 0.5)


def test_scalar_values_are_kept():
    assert_allclose((_t("i32", 1) + 1.5).numpy(), [2.5, 2.5])
    assert_allclose((_t("f16", 1) + 2.0).numpy(), [3.0, 3.0])
    assert_array_equal((_t("u8", 254) + 1).numpy(), [255, 255])
    assert_array_equal((_t("b", 1) + 2).numpy(), [3, 3])


def test_python_int_that_does_not_fit_raises():
    with pytest.raises(em.InvalidArgumentError, match="add: Python int 300 does not fit .*uint8"):
        _t("u8") + 300
    with pytest.raises(em.InvalidArgumentError, match="int8"):
        em.maximum(_t("i8"), -129)


def test_numpy_values_and_lists_are_strongly_typed():
    x = _t("f32")
    assert (x + np.ones(2)).dtype == em.float64
    assert (x * np.float64(2.0)).dtype == em.float64  # a numpy scalar keeps its dtype
    assert (x + np.ones(2, np.float16)).dtype == em.float32
    assert (_t("f16") + [1.0, 2.0]).dtype == em.float32  # a list converts as em.constant
    assert (_t("i32") + [1.5, 2.0]).dtype == em.float32
    assert (_t("u8") + [1, 2]).dtype == em.int32
    assert (_t("i64") + np.float32(1)).dtype == em.float32


def test_no_float64_from_int_and_float32():
    i, f = em.constant([[1, 2]]), em.constant([[1.0], [2.0]])
    assert (i + em.transpose(f)).dtype == em.float32
    assert em.matmul(i, f).dtype == em.float32
    assert_allclose(em.matmul(i, f).numpy(), [[5.0]])
    assert (i @ f).dtype == em.float32
    assert em.einsum("ij,jk->ik", i, f).dtype == em.float32
    assert em.tensordot(i, f, 1).dtype == em.float32
    assert (em.constant([3, 4]) / em.constant([2, 8])).dtype == em.float32
    assert_allclose((em.constant([3, 4]) / em.constant([2, 8])).numpy(), [1.5, 0.5])
    assert (em.constant([3], dtype=em.int64) / 2).dtype == em.float32
    assert (em.constant([3.0], dtype=em.float64) / 2).dtype == em.float64
    assert em.squared_difference(i, 0.5).dtype == em.float32
    assert em.clip_by_value(i, 0.5, 1.5).dtype == em.float32
    assert em.atan2(i, f).dtype == em.float32


def test_comparisons_compare_in_the_promoted_dtype():
    assert_array_equal(em.less(em.constant([1, 2]), 1.5).numpy(), [True, False])
    assert_array_equal(em.equal(em.constant([1, 2]), em.constant([1.0, 2.5])).numpy(),
                       [True, False])


def test_index_updates_keep_the_tensor_dtype():
    x = em.zeros([3], dtype=em.float16)
    assert em.index_update(x, 1, np.float64(2.0)).dtype == em.float16
    assert em.tensor_scatter_nd_add(x, [[0]], em.constant([1.0])).dtype == em.float16
    with pytest.raises(em.DTypeError, match="index_update: the Python float 1.5 does not fit"):
        em.index_update(em.zeros([3], dtype=em.int32), 1, 1.5)
    with pytest.raises(em.DTypeError, match="cannot write float32 updates into .* int32"):
        em.index_update(em.zeros([3], dtype=em.int32), 1, em.constant(1.0))
    assert_array_equal(em.index_update(em.zeros([2], dtype=em.int32), 0, 2.0).numpy(), [2, 0])



def test_promotion_is_recorded_as_casts_bf16():
    # A tape sees the casts (whose gradient casts back), so gradients reach the originals.
    a = em.constant(np.array([1.0, 2.0], np.float16))
    b = em.constant(np.array([3.0, 4.0]).astype(em.bfloat16))
    log = OpLog()
    with em.recording.active(log):
        y = a * b
    assert y.dtype == em.float32
    names = [n for n, *_ in log.ops]
    assert names == ["cast", "cast", "multiply"]
    (_, (ca,), _), (_, (cb,), _) = log.ops[0][:3], log.ops[1][:3]
    assert ca is a and cb is b
    mul_inputs = log.ops[2][1]
    assert mul_inputs[0] is log.ops[0][3][0] and mul_inputs[1] is log.ops[1][3][0]
    assert_allclose(y.numpy(), [3.0, 8.0])


def test_composites_keep_low_precision_with_python_numbers():
    x16 = em.ones([2], dtype=em.float16)
    y = em.nn_ops.batch_normalization(x16, 0.0, 1.0, 0.5, 2.0, 1e-3)
    assert y.dtype == em.float16
    assert_allclose(y.numpy().astype(np.float32), [2.5, 2.5], rtol=1e-3)
    assert em.clip_by_value(x16, 0, 0.5).dtype == em.float16
    assert em.nn_ops.leaky_relu(x16, 0.1).dtype == em.float16


def test_products_keep_bf16_operands_dtype():
    # numpy's matmul of ml_dtypes bfloat16 returns float32 and its einsum has no bfloat16
    # loop: a bfloat16 layer (mixed_bfloat16) would silently compute on in float32
    a = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    b = np.arange(12, dtype=np.float32).reshape(3, 4) / 8
    x, y = em.constant(a.astype(em.bfloat16)), em.constant(b.astype(em.bfloat16))
    want = (a.astype(em.bfloat16).astype(np.float32) @ b.astype(em.bfloat16).astype(np.float32))
    for got in (em.matmul(x, y), em.einsum("ij,jk->ik", x, y),
                em.tensordot(x, y, [[1], [0]]), em.matmul(x, y[:, 0])):
        assert got.dtype == em.bfloat16
        assert_allclose(got.numpy().astype(np.float32), want[..., :got.shape[-1]]
                        if got.ndim == 2 else want[:, 0], rtol=1e-2)


def test_max_pool_of_bf16_pads_with_minus_infinity():
    # bfloat16's numpy kind is "V": max_pool2d took it for an integer dtype (iinfo raised)
    x = np.arange(50, dtype=np.float32).reshape(1, 5, 5, 2) / 64 - 0.5
    got = em.nn_ops.max_pool2d(em.constant(x.astype(em.bfloat16)), 2, 2, "SAME")
    want = em.nn_ops.max_pool2d(em.constant(x), 2, 2, "SAME")
    assert got.dtype == em.bfloat16
    assert_allclose(got.numpy().astype(np.float32), want.numpy(), rtol=1e-2)
