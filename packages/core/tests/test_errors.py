"""Errors name the op and the offending shapes, dtypes, values or devices."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em
from ember.core import nn_ops as nn
from ember.core._ops import conv_select


def _raises(exc, pattern, fn, *args, **kwargs):
    with pytest.raises(exc, match=pattern):
        fn(*args, **kwargs)


def test_error_hierarchy():
    assert issubclass(em.DTypeError, em.InvalidArgumentError)
    assert issubclass(em.DTypeError, TypeError)
    assert issubclass(em.DeviceError, em.InvalidArgumentError)
    assert issubclass(em.InvalidArgumentError, ValueError)
    assert issubclass(em.IndexOutOfRangeError, IndexError)


def test_matmul_inner_dims():
    _raises(em.InvalidArgumentError, r"matmul: inner dimensions differ: \(2, 3\) @ \(4, 5\)",
            em.matmul, em.ones([2, 3]), em.ones([4, 5]))
    _raises(em.InvalidArgumentError, r"matmul: inner dimensions differ: \(1, 3\) @ \(4, 1\)",
            em.matmul, em.ones([3]), em.ones([4]))
    _raises(em.InvalidArgumentError, "matmul: scalars are not matrices",
            em.matmul, em.ones([]), em.ones([2, 2]))
    _raises(em.InvalidArgumentError, r"matmul: .*inputs: float32\[2, 3, 4\], float32\[5, 4, 2\]",
            em.matmul, em.ones([2, 3, 4]), em.ones([5, 4, 2]))


def test_broadcast_mismatch_names_op_and_shapes():
    _raises(em.InvalidArgumentError, r"add: .*inputs: float32\[2, 3\], float32\[4\]",
            em.add, em.ones([2, 3]), em.ones([4]))
    _raises(em.InvalidArgumentError, r"where: .*inputs: bool\[2\], float32\[3\], float32\[2\]",
            em.where, em.constant([True, False]), em.ones([3]), em.ones([2]))


def test_concat_and_stack():
    _raises(em.InvalidArgumentError, r"concat: along axis 0, tensor 1 has shape \(2, 4\) but "
            r"tensor 0 has \(2, 3\)", em.concat, [em.ones([2, 3]), em.ones([2, 4])], 0)
    _raises(em.InvalidArgumentError, "concat: needs at least one tensor", em.concat, [], 0)
    _raises(em.InvalidArgumentError, "concat: axis 2 is out of range for a tensor of rank 2",
            em.concat, [em.ones([2, 3])], 2)
    _raises(em.InvalidArgumentError, r"stack: tensor 1 has shape \(3,\) but tensor 0 has \(2,\)",
            em.stack, [em.ones([2]), em.ones([3])])


def test_reshape_size():
    _raises(em.InvalidArgumentError, r"reshape: cannot reshape a tensor of shape \(2, 3\) "
            r"\(6 elements\) into \(4, 2\)", em.reshape, em.ones([2, 3]), [4, 2])
    _raises(em.InvalidArgumentError, r"reshape: cannot reshape \(2, 3\) into \(4, -1\)",
            em.reshape, em.ones([2, 3]), [4, -1])
    _raises(em.InvalidArgumentError, "reshape: 'ab' is not a shape", em.reshape, em.ones([2]),
            "ab")


def test_shape_ops():
    _raises(em.InvalidArgumentError, r"squeeze: axis 0 of shape \(2, 1\) is not 1",
            em.squeeze, em.ones([2, 1]), 0)
    _raises(em.InvalidArgumentError, r"transpose: perm \[0, 0\] is not a permutation",
            em.transpose, em.ones([2, 3]), [0, 0])
    _raises(em.InvalidArgumentError, r"split: axis 0 of shape \(5,\) does not divide into 2",
            em.split, em.ones([5]), 2)
    _raises(em.InvalidArgumentError, r"split: sizes \(2, 2\) do not add up to 5",
            em.split, em.ones([5]), [2, 2])
    _raises(em.InvalidArgumentError, r"tile: multiples \(2,\) must have one entry per axis",
            em.tile, em.ones([2, 2]), [2])
    _raises(em.InvalidArgumentError, "roll: shift and axis must be ints or 1-D lists of one "
            "length", em.roll, em.ones([2, 2]), [1, 2], 0)
    _raises(em.InvalidArgumentError, r"roll: axis 2 is out of range for a tensor of shape "
            r"\(2, 2\)", em.roll, em.ones([2, 2]), 1, 2)
    _raises(em.InvalidArgumentError, "roll: axis 0 is out of range", em.roll, em.ones([]), 1, 0)
    _raises(em.InvalidArgumentError, "pad: REFLECT padding .* is too large for axis 0",
            em.pad, em.ones([2]), [[2, 0]], "REFLECT")
    _raises(em.InvalidArgumentError, "reduce_sum: axis 3 is out of range for a tensor of rank 2",
            em.reduce_sum, em.ones([2, 2]), 3)
    _raises(em.InvalidArgumentError, "reduce_sum: repeated axis", em.reduce_sum,
            em.ones([2, 2]), [0, -2])
    _raises(em.InvalidArgumentError, r"broadcast_to: .*float32\[3\]", em.broadcast_to,
            em.ones([3]), [2, 4])


def test_indexing_errors():
    x = em.ones([3, 4])
    _raises(em.IndexOutOfRangeError, r"getitem: .*inputs: float32\[3, 4\]", x.__getitem__, 5)
    _raises(IndexError, "getitem", x.__getitem__, em.constant([0, 7]))
    _raises(em.InvalidArgumentError, "getitem: indices must be integers or bools, got float64",
            x.__getitem__, np.array([0.5]))
    _raises(em.InvalidArgumentError, "indices must be integers, got float32",
            em.gather, x, em.constant([1.0]))
    _raises(em.InvalidArgumentError, r"gather_nd: index depth 3 exceeds the rank of params "
            r"\(3, 4\)", em.gather_nd, x, [[0, 0, 0]])
    _raises(em.InvalidArgumentError, r"boolean_mask: mask shape \(2,\) does not match shape "
            r"\(3, 4\) from axis 0", em.boolean_mask, x, [True, False])
    _raises(em.InvalidArgumentError, r"top_k: k=5 is out of range for last axis of shape "
            r"\(3, 4\)", em.top_k, x, 5)
    _raises(em.InvalidArgumentError, "one_hot: indices must be integers, got float32",
            em.one_hot, em.constant([1.0]), 3)


def test_conv_and_pool_errors():
    _raises(em.InvalidArgumentError, r"conv2d: input has 3 channels but filters \(3, 3, 4, 8\) "
            "expect 4", nn.conv2d, em.ones([1, 5, 5, 3]), em.ones([3, 3, 4, 8]))
    _raises(em.InvalidArgumentError, r"conv2d: expected input \(N, H, W, C\) .* got \(5, 5, 3\)",
            nn.conv2d, em.ones([5, 5, 3]), em.ones([3, 3, 3, 8]))
    _raises(em.InvalidArgumentError, "conv2d: padding must be 'SAME' or 'VALID', got "
            "'FULL'",
            nn.conv2d, em.ones([1, 5, 5, 3]), em.ones([3, 3, 3, 8]), padding="FULL")
    # explicit padding: negative amounts (cropping) and padding of the batch or channel
    # axes are refused, not applied by one algorithm and dropped by another
    x, w = em.ones([1, 5, 5, 1]), em.ones([2, 2, 1, 1])
    _raises(em.InvalidArgumentError, r"conv2d: padding must not be negative, got "
            r"\[\[0, 0\], \[0, -1\], \[0, 0\], \[0, 0\]\]", nn.conv2d, x, w, 1,
            [[0, 0], [0, -1], [0, 0], [0, 0]])
    _raises(em.InvalidArgumentError, "conv2d: explicit padding of the batch and channel axes "
            "must be", nn.conv2d, x, w, 1, [[1, 0], [0, 0], [0, 0], [0, 0]])
    _raises(em.InvalidArgumentError, r"max_pool2d: padding must be 'SAME', 'VALID' or explicit",
            nn.max_pool2d, x, 2, 1, [[1, 1]])
    _raises(em.InvalidArgumentError, r"conv2d_backprop_input: padding must not be negative",
            conv_select.conv2d_backprop_input, em.ones([1, 5, 4, 1]), w, [1, 5, 5, 1], (1, 1),
            (1, 1), ((0, 0), (0, -1)))
    # an integer image pads only with a value of its dtype (numpy wraps -1 to 255)
    img = em.ones([1, 3, 3, 1], dtype=em.uint8)
    for bad in (-1, 256, float("-inf"), 0.5):
        _raises(em.InvalidArgumentError, rf"extract_patches: pad_value {bad!r} is not a value "
                r"of the images' dtype uint8", em.extract_patches, img, 2, 1, 1, "SAME",
                pad_value=bad)
    assert int(em.reduce_max(em.extract_patches(img, 2, 1, 1, "SAME", pad_value=255))) == 255
    _raises(em.InvalidArgumentError, r"conv2d: filters \(7, 7, 3, 8\) .* are larger than the "
            "padded input", nn.conv2d, em.ones([1, 5, 5, 3]), em.ones([7, 7, 3, 8]))
    _raises(em.InvalidArgumentError, r"max_pool2d: expected NHWC input of rank 4, got shape "
            r"\(5, 5\)", nn.max_pool2d, em.ones([5, 5]), 2)
    _raises(em.InvalidArgumentError, r"conv2d_transpose: output_shape \(1, 5, 5, 2\) convolved "
            r"gives spatial size \(3, 3\), but input has \(2, 2\)", nn.conv2d_transpose,
            em.ones([1, 2, 2, 4]), em.ones([3, 3, 2, 4]), [1, 5, 5, 2], strides=2)
    _raises(em.InvalidArgumentError, r"bias_add: bias of shape \(3,\) does not match the last "
            r"axis of value \(2, 4\)", nn.bias_add, em.ones([2, 4]), em.ones([3]))


def test_loss_errors(device):
    # on a GPU the label range is checked on the device and raised at the next read
    _raises(em.InvalidArgumentError, r"sparse_softmax_cross_entropy_with_logits: labels must "
            r"be in \[0, 3\), got values from 0 to 3",
            lambda *a: nn.sparse_softmax_cross_entropy_with_logits(*a).numpy(),
            em.constant([0, 3]), em.ones([2, 3]))
    _raises(em.InvalidArgumentError, "labels must be integers, got float32",
            nn.sparse_softmax_cross_entropy_with_logits, em.constant([0.0]), em.ones([1, 3]))
    _raises(em.InvalidArgumentError, r"labels \(3,\) must have the shape of logits \(2, 3\) "
            "without its last axis",
            nn.sparse_softmax_cross_entropy_with_logits, em.constant([0, 1, 2]), em.ones([2, 3]))
    _raises(em.InvalidArgumentError, r"softmax_cross_entropy_with_logits: labels \(2, 4\) and "
            r"logits \(2, 3\) must have the same shape",
            nn.softmax_cross_entropy_with_logits, em.ones([2, 4]), em.ones([2, 3]))


def test_dtype_errors(device):
    _raises(em.DTypeError, r"bitwise_and: .*inputs: float32\[2\], float32\[2\]",
            em.bitwise_and, em.ones([2]), em.ones([2]))
    _raises(TypeError, "not a dtype: 'floaty'", em.cast, em.ones([2]), "floaty")
    # checked before any backend sees it, so the same on every device (cupy's own words on a
    # GPU were "Unsupported dtype <U3")
    _raises(em.DTypeError, r"^add: cannot make a tensor from str data of dtype <U3: tensors "
            "hold booleans and numbers", em.add, em.ones([2]), "abc")
    _raises(em.DTypeError, r"^constant: cannot make a tensor from ndarray data of dtype object",
            em.constant, np.array([1, None]))


def test_a_big_endian_array_is_no_error_on_any_device(device):
    """cupy refuses big-endian arrays ("Unsupported dtype >i4 with big-endian byte-order"):
    ember makes them native first; the numbers are the same."""
    t = em.constant(np.arange(3, dtype=">i4"))
    assert (t.device, t.dtype) == (device, em.int32)
    assert t.numpy().tolist() == [0, 1, 2]


def test_int_overflow_of_python_operand():
    _raises(em.InvalidArgumentError, "multiply: Python int 70000 does not fit the operand dtype "
            "int16", em.multiply, em.ones([2], dtype=em.int16), 70000)


def test_einsum_errors():
    _raises(em.InvalidArgumentError, "einsum: 'ij,jk' names 2 operands, got 1",
            em.einsum, "ij,jk", em.ones([2, 2]))  # (an implicit output: as the user wrote it)
    _raises(em.InvalidArgumentError, "einsum: 'ij,jk->ik' names 2 operands, got 1", em.einsum,
            "ij,jk->ik", em.ones([2, 2]))
    _raises(em.InvalidArgumentError, r"tensordot: axis 1 of \(2, 3\) does not match axis 0 of "
            r"\(4, 2\)", em.tensordot, em.ones([2, 3]), em.ones([4, 2]), 1)


def test_conv_and_pool_padding_errors_name_the_public_op():
    import pytest

    import ember.core as em

    x = em.zeros([1, 5, 5, 2])
    with pytest.raises(em.InvalidArgumentError, match=r"^conv2d: padding"):
        em.nn_ops.conv2d(x, em.zeros([3, 3, 2, 4]), padding="FULL")
    with pytest.raises(em.InvalidArgumentError, match=r"^max_pool2d: padding"):
        em.nn_ops.max_pool2d(x, 2, 2, padding="FULL")
    with pytest.raises(em.InvalidArgumentError, match=r"^avg_pool2d: padding"):
        em.nn_ops.avg_pool2d(x, 2, 2, padding="FULL")
