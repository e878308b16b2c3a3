"""Op arguments found by the argument sweep (test_argument_sweep.py): each one honoured or
rejected by name. Also TensorFlow 1.x keyword spellings."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import ember.core as em
from ember.core import nn_ops
from ember.core.testing import recorded_op_names

REDUCTIONS = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
              "reduce_any", "reduce_all", "reduce_logsumexp", "reduce_variance", "reduce_std",
              "count_nonzero"]
X = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)


@pytest.mark.parametrize("op", REDUCTIONS)
def test_tf1_spellings_of_reductions(op):
    f = getattr(em, op)
    want = f(X, axis=1, keepdims=True).numpy()
    assert want.shape == (2, 1)
    assert_allclose(f(X, reduction_indices=1, keep_dims=True).numpy(), want)
    assert_allclose(f(X, reduction_indices=[1], keepdims=True).numpy(), want)
    assert_allclose(f(X, axis=1, keep_dims=True).numpy(), want)
    assert f(X, reduction_indices=0).shape == (3,)
    with pytest.raises(em.InvalidArgumentError, match=f"{op}: give axis= or its TF 1.x "
                                                      "spelling reduction_indices=, not both"):
        f(X, axis=1, reduction_indices=1)
    with pytest.raises(em.InvalidArgumentError, match="keepdims= or .* keep_dims="):
        f(X, keepdims=True, keep_dims=True)


def test_tf1_spellings_of_argmax_and_moments():
    assert_array_equal(em.argmax(X, dimension=1).numpy(), [2, 2])
    assert_array_equal(em.argmin(X, dimension=1).numpy(), [0, 0])
    with pytest.raises(em.InvalidArgumentError, match="argmax: give axis= or .* dimension="):
        em.argmax(X, axis=0, dimension=1)
    mean, var = nn_ops.moments(X, [0], keep_dims=True)
    assert mean.shape == (1, 3) and var.shape == (1, 3)
    assert_allclose(mean.numpy(), X.mean(0, keepdims=True))


def _nchw(a):
    return np.transpose(a, (0, 3, 1, 2))


X4 = np.random.default_rng(0).normal(size=(2, 5, 6, 3)).astype(np.float32)


@pytest.mark.parametrize("pool", [nn_ops.max_pool2d, nn_ops.avg_pool2d])
@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_pools_honour_channels_first(pool, padding):
    want = pool(X4, 2, 2, padding).numpy()
    got = pool(_nchw(X4), [1, 1, 2, 2], [1, 1, 2, 2], padding, data_format="NCHW").numpy()
    assert_allclose(got, _nchw(want), rtol=1e-5, atol=1e-6)
    with pytest.raises(em.InvalidArgumentError, match="data_format must be one of"):
        pool(X4, 2, 2, padding, data_format="NWHC")


def test_conv2d_and_transpose_honour_channels_first():
    w = np.random.default_rng(1).normal(size=(3, 3, 3, 4)).astype(np.float32)
    want = nn_ops.conv2d(X4, w, 2, "SAME").numpy()
    got = nn_ops.conv2d(_nchw(X4), w, [1, 1, 2, 2], "SAME", data_format="NCHW").numpy()
    assert_allclose(got, _nchw(want), rtol=1e-5, atol=1e-6)
    y = nn_ops.conv2d(X4, w, 1, "SAME")
    wt = np.random.default_rng(2).normal(size=(3, 3, 3, 4)).astype(np.float32)
    want_t = nn_ops.conv2d_transpose(y, wt, X4.shape, 1, "SAME").numpy()
    got_t = nn_ops.conv2d_transpose(_nchw(y.numpy()), wt, _nchw(X4).shape, 1, "SAME",
                                    data_format="NCHW").numpy()
    assert_allclose(got_t, _nchw(want_t), rtol=1e-5, atol=1e-5)


def test_conv1d_honours_channels_first():
    x = X4[:, 0]  # (N, W, C)
    w = np.ones((2, 3, 2), np.float32)
    want = nn_ops.conv1d(x, w, 1, "VALID").numpy()
    got = nn_ops.conv1d(np.transpose(x, (0, 2, 1)), w, 1, "VALID", data_format="NCW").numpy()
    assert_allclose(got, np.transpose(want, (0, 2, 1)), rtol=1e-6)


def test_bias_add_honours_channels_first():
    b = np.array([1.0, 2.0, 3.0], np.float32)
    got = nn_ops.bias_add(_nchw(X4), b, data_format="NCHW").numpy()
    assert_allclose(got, _nchw(X4 + b))
    assert_allclose(nn_ops.bias_add(X4, b).numpy(), X4 + b)
    with pytest.raises(em.InvalidArgumentError, match="bias_add: .*channel axis 1"):
        nn_ops.bias_add(X4, b, data_format="NCHW")  # 5 channels on axis 1, 3 biases


def test_strides_along_batch_or_channels_are_rejected():
    with pytest.raises(em.InvalidArgumentError, match="max_pool2d: strides .* not 1 on the batch or channel"):
        nn_ops.max_pool2d(X4, 2, [2, 2, 2, 2])


def test_variable_assign_read_value():
    v = em.Variable(1.0)
    assert v.assign(2.0) is v
    assert v.assign(3.0, read_value=False) is None
    assert v.assign_add(1.0, read_value=False) is None
    assert v.assign_sub(2.0, read_value=False) is None
    assert float(v) == 2.0


def test_split_and_unstack_check_num():
    x = em.ones([4, 2])
    assert len(em.split(x, 2, num=2)) == 2
    with pytest.raises(em.InvalidArgumentError, match="split: num=3 but the split gives 2"):
        em.split(x, [1, 3], num=3)
    assert len(em.unstack(x, num=4)) == 4
    with pytest.raises(em.InvalidArgumentError, match="unstack: num=3 but axis 0"):
        em.unstack(x, num=3)


def test_transpose_conjugate():
    x = em.constant([[1.0, 2.0]])
    assert_allclose(em.transpose(x, conjugate=True).numpy(), [[1.0], [2.0]])
    with pytest.raises(em.InvalidArgumentError, match="transpose: conjugate=True"):
        em.transpose(em.constant([[1j]]), conjugate=True)


def test_name_scope():
    with em.name_scope("block") as s:
        assert s == "block"
    with em.name_scope(None, default_name="dense", values=[1]) as s:
        assert s == "dense"
    with pytest.raises(TypeError, match="bogus"):
        em.name_scope("x", bogus=1)


def test_gather_and_scatter_reject_negative_indices():
    x = em.constant([1.0, 2.0, 3.0])
    with pytest.raises(em.IndexOutOfRangeError, match="gather: indices must not be negative"):
        em.gather(x, [-1])
    with pytest.raises(em.IndexOutOfRangeError, match="gather_nd: indices must not be negative"):
        em.gather_nd(x, [[-1]])
    with pytest.raises(em.IndexOutOfRangeError, match="tensor_scatter_nd_update: indices"):
        em.tensor_scatter_nd_update(x, [[-1]], [5.0])
    assert_array_equal(x[-1].numpy(), 3.0)  # Python indexing keeps numpy's meaning


def test_embedding_lookup():
    table = np.arange(12.0, dtype=np.float32).reshape(6, 2)
    got = nn_ops.embedding_lookup(table, [[5, 0], [1, 1]])
    assert_array_equal(got.numpy(), table[[[5, 0], [1, 1]]])
    # TensorFlow 2's "div": contiguous ranges, the first vocabulary % n shards one longer
    div = [table[:2], table[2:4], table[4:]]
    assert_array_equal(nn_ops.embedding_lookup(div, [5, 0, 3]).numpy(), table[[5, 0, 3]])
    assert_array_equal(nn_ops.embedding_lookup([table[:3], table[3:5]], [4, 2]).numpy(),
                       table[[4, 2]])
    assert_array_equal(nn_ops.embedding_lookup(div, [5], partition_strategy="div").numpy(),
                       table[[5]])
    with pytest.raises(em.InvalidArgumentError, match=r"shards of sizes \[4, 2\] are not "
                                                      r"TensorFlow's 'div' split"):
        nn_ops.embedding_lookup([table[:4], table[4:]], [1])
    with pytest.raises(em.InvalidArgumentError, match="partition_strategy='mod' is "
                                                      "TensorFlow 1's"):
        nn_ops.embedding_lookup(div, [1], partition_strategy="mod")
    with pytest.raises(em.InvalidArgumentError, match=r"lookup: ids must be in \[0, 6\), got values from 6"):
        nn_ops.embedding_lookup(table, [6])
    with pytest.raises(em.InvalidArgumentError, match=r"ids must be in \[0, 6\), got values from -1 to"):
        nn_ops.embedding_lookup(table, [-1])
    with pytest.raises(em.InvalidArgumentError, match="ids must be integers"):
        nn_ops.embedding_lookup(table, [1.0])
    with pytest.raises(em.InvalidArgumentError, match="partition_strategy"):
        nn_ops.embedding_lookup(table, [1], partition_strategy="hash")
    clipped = nn_ops.embedding_lookup(table, [5], max_norm=1.0).numpy()
    assert_allclose(np.linalg.norm(clipped), 1.0, rtol=1e-6)


def test_flatten():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 2, 2)
    assert_array_equal(nn_ops.flatten(x).numpy(), x.reshape(2, 12))
    assert_array_equal(nn_ops.flatten(x, data_format="channels_first").numpy(),
                       np.moveaxis(x, 1, -1).reshape(2, 12))
    assert nn_ops.flatten(np.zeros(3)).shape == (3, 1)
    with pytest.raises(em.InvalidArgumentError, match="flatten: data_format"):
        nn_ops.flatten(x, data_format="NCHW")


def test_split_into_one_part_is_the_tensor():
    # A one-output split confused the tape's multi-output path (the nmt port's length-1 GRU).
    x = em.constant([[1.0, 2.0]])
    with recorded_op_names() as seen:
        (p,) = em.split(x, 1, axis=0)
        (q,) = em.unstack(x, axis=0)
    assert_array_equal(p.numpy(), x.numpy())
    assert_array_equal(q.numpy(), [1.0, 2.0])
    assert "split" not in seen and seen[0] == "identity"


@pytest.mark.parametrize("count", [3, np.int64(3), np.int32(3)])
def test_split_takes_a_numpy_integer_as_a_count(count):
    """np.int64(3) was read as the size list (3,) and refused: "sizes (3,) do not add up"."""
    parts = em.split(em.constant(np.arange(12.0).reshape(6, 2)), count)
    assert [p.shape for p in parts] == [(2, 2)] * 3


def test_add_n_adds_a_list_and_names_a_shape_or_dtype_that_differs():
    xs = [em.constant([1.0, 2.0]), em.constant([3.0, 4.0]), [5.0, 6.0]]
    assert_array_equal(em.add_n(xs).numpy(), [9.0, 12.0])
    with pytest.raises(em.InvalidArgumentError, match=r"add_n: inputs\[1\] is float32\[3\], "
                                                      r"inputs\[0\] float32\[2\]"):
        em.add_n([em.ones([2]), em.ones([3])])
    with pytest.raises(em.InvalidArgumentError, match="non-empty list"):
        em.add_n([])
