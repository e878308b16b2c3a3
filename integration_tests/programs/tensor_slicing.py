"""Port of tensorflow/docs site/en/guide/tensor_slicing.ipynb ("Introduction to tensor
slicing"): extracting slices with tf.slice and Python slicing (1-D, 2-D, 3-D), tf.gather
along one axis (evenly and unevenly spaced indices), tf.gather_nd across several axes
(rows, elements, a list of matrices, one matrix), and inserting data with tf.scatter_nd,
gather_nd + scatter_nd as a sparse-tensor stand-in, tf.SparseTensor/tf.sparse.to_dense, and
tf.tensor_scatter_nd_add/sub/min/max.

Upstream: https://github.com/tensorflow/docs/blob/7c3650212740204359d4ceae481abc79345541be/site/en/guide/tensor_slicing.ipynb
Changed: names only (tf.constant/slice/gather/gather_nd/scatter_nd/tensor_scatter_nd_add ->
em.*). The notebook cell that only shows a value (`t1[::3]`) is bound to a name and
asserted. The guide trains nothing and downloads nothing: there is no data to substitute
and no accuracy threshold; nothing is reduced. Added beside it (below the guide's cells):
a randomized cross-check of the same ops against numpy on N rows (N = 2,000;
EMBER_PROGRAMS_FULL=1: 100,000; EMBER_PROGRAMS_SHORT=1: 256), seeded (numpy and ember).
Added: every value the guide prints is asserted against numpy computed independently
(values, shapes and TF's dtypes: int32 for Python ints, int64 kept from np.arange); the
magic square of t12 (rows, columns and diagonals sum to 15) and the identity of t13;
scatter_nd duplicates add (as TF's); out-of-range and negative indices raise (TF's CPU
kernels raise InvalidArgumentError); gradients of slice, Python slicing, gather (repeated
indices accumulate), gather_nd, scatter_nd and tensor_scatter_nd_add/update against numpy;
the randomized cross-check (gather, gather_nd, scatter_nd, tensor_scatter_nd_add and the
stand-ins of GAPs 3-5 against numpy's take, fancy indexing, add.at, subtract.at,
minimum.at, maximum.at).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it):
1. (by design, as tensor_guide.py's GAP 5) no string tensors: em.constant(list('abc...'))
raises DTypeError; the alphabet becomes int32 character codes, decoded with chr.
2. (prose only) no tf.strided_slice (AttributeError); Python slicing t1[1:7:2] stands in.
4. no tf.tensor_scatter_nd_min, 5. no tf.tensor_scatter_nd_max
(AttributeError): tensor_scatter_nd_update with em.minimum/em.maximum of gather_nd and the
updates stands in (exact for unique indices, as here). 6. (by design, as tensor_guide.py's
GAP 6) no tf.SparseTensor / tf.sparse.to_dense (AttributeError): the guide's own
equivalent, scatter_nd of the values, stands in for t10. 7. (prose only) no
tf.experimental.numpy.take (em.take: AttributeError); em.take_along_axis exists and is
checked against numpy.
Fixed in ember since the first version of this port: no tf.tensor_scatter_nd_sub (GAP 3,
AttributeError; tensor_scatter_nd_add of the negated updates stood in): upstream's lines
are restored. Also fixed (no upstream line, silent; found checking the ops around the
guide's calls): em.slice did not validate begin/size as TF's SliceOp does
(em.slice(t1, [6], [5]) gave [6 7], [-1], [1] gave [], [1], [-2] gave [1..6], and on a
matrix begin=[1], size=[1] sliced the first axis only); scatter_nd and
tensor_scatter_nd_add/update broadcast updates (em.scatter_nd([[1], [2]], [5], [4]) gave
[0 5 5 0]) where TF requires updates.shape == indices.shape[:-1] + shape[depth:]; gather_nd
with an index depth of 0 (indices of shape (2, 0)) gave params' shape (3, 2) where TF gives
(2, 3, 2). Each now raises or computes as TF's (asserted below).
"""

import os

import numpy as np

import ember.core as em
from ember import tape

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
N = 100_000 if FULL else 256 if SHORT else 2000  # rows of the randomized cross-check

np.random.seed(0)
em.random.set_seed(0)


def check(got, want, dtype=em.int32):
  """got is an ember tensor of want's shape and values and of the dtype TF gives."""
  want = np.asarray(want)
  assert isinstance(got, em.Tensor), type(got)
  assert got.dtype == dtype, (got.dtype, dtype)
  assert tuple(got.shape) == want.shape, (got.shape, want.shape)
  np.testing.assert_array_equal(got.numpy(), want)


def raises(fn, error=em.InvalidArgumentError):
  """fn() raises `error` (TF: InvalidArgumentError)."""
  try:
    fn()
  except error:
    return True
  raise AssertionError(f"{fn} did not raise {error.__name__}")


# ## Extract tensor slices

t1 = em.constant([0, 1, 2, 3, 4, 5, 6, 7])

print(em.slice(t1,
               begin=[1],
               size=[3]))
t1_np = np.arange(8, dtype=np.int32)
check(t1, t1_np)
check(em.slice(t1, begin=[1], size=[3]), t1_np[1:1 + 3])
check(em.slice(t1, begin=[1], size=[3]), [1, 2, 3])
check(em.slice(t1, begin=em.constant([1]), size=em.constant([-1])), t1_np[1:])  # -1: to the end

print(t1[1:4])
check(t1[1:4], t1_np[1:4])

print(t1[-3:])
check(t1[-3:], t1_np[-3:])
check(t1[-3:], [5, 6, 7])

t2 = em.constant([[0, 1, 2, 3, 4],
                  [5, 6, 7, 8, 9],
                  [10, 11, 12, 13, 14],
                  [15, 16, 17, 18, 19]])

print(t2[:-1, 1:3])
t2_np = np.arange(20, dtype=np.int32).reshape(4, 5)
check(t2, t2_np)
check(t2[:-1, 1:3], t2_np[:-1, 1:3])
check(t2[:-1, 1:3], [[1, 2], [6, 7], [11, 12]])

t3 = em.constant([[[1, 3, 5, 7],
                   [9, 11, 13, 15]],
                  [[17, 19, 21, 23],
                   [25, 27, 29, 31]]
                  ])

print(em.slice(t3,
               begin=[1, 1, 0],
               size=[1, 1, 2]))
t3_np = (2 * np.arange(16, dtype=np.int32) + 1).reshape(2, 2, 4)
check(t3, t3_np)
check(em.slice(t3, begin=[1, 1, 0], size=[1, 1, 2]), t3_np[1:2, 1:2, 0:2])
check(em.slice(t3, begin=[1, 1, 0], size=[1, 1, 2]), [[[25, 27]]])

# GAP 2 (prose): You can also use `tf.strided_slice` to extract slices of tensors by 'striding'
# over the tensor dimensions.  (em.strided_slice: AttributeError; TF's
# tf.strided_slice(t1, begin=[1], end=[7], strides=[2]) is t1[1:7:2])
assert not hasattr(em, "strided_slice")
check(t1[1:7:2], t1_np[1:7:2])  # stand-in

print(em.gather(t1,
                indices=[0, 3, 6]))

# This is similar to doing

every_third = t1[::3]
check(em.gather(t1, indices=[0, 3, 6]), np.take(t1_np, [0, 3, 6]))
check(every_third, t1_np[::3])
check(every_third, em.gather(t1, indices=[0, 3, 6]).numpy())

# GAP 1 (by design): alphabet = tf.constant(list('abcdefghijklmnopqrstuvwxyz'))
# (em.constant of str raises DTypeError: ember tensors hold booleans and numbers)
raises(lambda: em.constant(list('abcdefghijklmnopqrstuvwxyz')), em.DTypeError)
alphabet = em.constant([ord(c) for c in 'abcdefghijklmnopqrstuvwxyz'])  # stand-in: codes

print(em.gather(alphabet,
                indices=[2, 0, 19, 18]))
picked = em.gather(alphabet, indices=[2, 0, 19, 18])
print("".join(chr(c) for c in picked.numpy()))  # stand-in for TF's b'c' b'a' b't' b's'
check(picked, [ord(c) for c in "cats"])
assert "".join(chr(c) for c in picked.numpy()) == "cats"

t4 = em.constant([[0, 5],
                  [1, 6],
                  [2, 7],
                  [3, 8],
                  [4, 9]])

print(em.gather_nd(t4,
                   indices=[[2], [3], [0]]))
t4_np = np.stack([np.arange(5), np.arange(5, 10)], axis=1).astype(np.int32)
check(t4, t4_np)
check(em.gather_nd(t4, indices=[[2], [3], [0]]), t4_np[[2, 3, 0]])
check(em.gather_nd(t4, indices=[[2], [3], [0]]), [[2, 7], [3, 8], [0, 5]])

t5 = np.reshape(np.arange(18), [2, 3, 3])

print(em.gather_nd(t5,
                   indices=[[0, 0, 0], [1, 2, 1]]))
# a numpy array keeps its dtype (np.arange: int64 here), as in TF
elements = em.gather_nd(t5, indices=[[0, 0, 0], [1, 2, 1]])
check(elements, t5[tuple(np.array([[0, 0, 0], [1, 2, 1]]).T)], dtype=t5.dtype)
check(elements, [0, 16], dtype=t5.dtype)

# Return a list of two matrices

print(em.gather_nd(t5,
                   indices=[[[0, 0], [0, 2]], [[1, 0], [1, 2]]]))
two = em.gather_nd(t5, indices=[[[0, 0], [0, 2]], [[1, 0], [1, 2]]])
idx = np.array([[[0, 0], [0, 2]], [[1, 0], [1, 2]]])
check(two, t5[idx[..., 0], idx[..., 1]], dtype=t5.dtype)
assert tuple(two.shape) == (2, 2, 3)

# Return one matrix

print(em.gather_nd(t5,
                   indices=[[0, 0], [0, 2], [1, 0], [1, 2]]))
one = em.gather_nd(t5, indices=[[0, 0], [0, 2], [1, 0], [1, 2]])
check(one, t5[[0, 0, 1, 1], [0, 2, 0, 2]], dtype=t5.dtype)
check(one, [[0, 1, 2], [6, 7, 8], [9, 10, 11], [15, 16, 17]], dtype=t5.dtype)

# ## Insert data into tensors

t6 = em.constant([10])
indices = em.constant([[1], [3], [5], [7], [9]])
data = em.constant([2, 4, 6, 8, 10])

print(em.scatter_nd(indices=indices,
                    updates=data,
                    shape=t6))
scattered = em.scatter_nd(indices=indices, updates=data, shape=t6)
want = np.zeros(10, np.int32)
want[[1, 3, 5, 7, 9]] = [2, 4, 6, 8, 10]
check(scattered, want)
check(scattered, [0, 2, 0, 4, 0, 6, 0, 8, 0, 10])

# Gather values from one tensor by specifying indices

new_indices = em.constant([[0, 2], [2, 1], [3, 3]])
t7 = em.gather_nd(t2, indices=new_indices)
check(t7, t2_np[[0, 2, 3], [2, 1, 3]])
check(t7, [2, 11, 18])

# Add these values into a new tensor

t8 = em.scatter_nd(indices=new_indices, updates=t7, shape=em.constant([4, 5]))

print(t8)
t8_np = np.zeros((4, 5), np.int32)
t8_np[[0, 2, 3], [2, 1, 3]] = t2_np[[0, 2, 3], [2, 1, 3]]
check(t8, t8_np)

# GAP 6 (by design): t9 = tf.SparseTensor(indices=[[0, 2], [2, 1], [3, 3]],
# GAP 6 (by design):                      values=[2, 11, 18],
# GAP 6 (by design):                      dense_shape=[4, 5])
# GAP 6 (by design):
# GAP 6 (by design): print(t9)
assert not hasattr(em, "SparseTensor") and not hasattr(em, "sparse")

# Convert the sparse tensor into a dense tensor

# GAP 6 (by design): t10 = tf.sparse.to_dense(t9)
t10 = em.scatter_nd(indices=[[0, 2], [2, 1], [3, 3]], updates=[2, 11, 18],
                    shape=[4, 5])  # stand-in: the guide's own equivalent

print(t10)
check(t10, t8_np)

t11 = em.constant([[2, 7, 0],
                   [9, 0, 1],
                   [0, 3, 8]])

# Convert the tensor into a magic square by inserting numbers at appropriate indices

t12 = em.tensor_scatter_nd_add(t11,
                               indices=[[0, 2], [1, 1], [2, 0]],
                               updates=[6, 5, 4])

print(t12)
t11_np = np.array([[2, 7, 0], [9, 0, 1], [0, 3, 8]], np.int32)
t12_np = t11_np.copy()
np.add.at(t12_np, ([0, 1, 2], [2, 1, 0]), [6, 5, 4])
check(t12, t12_np)
check(t11, t11_np)  # t11 itself is unchanged
m = t12.numpy()
assert sorted(m.ravel()) == list(range(1, 10))
assert set(m.sum(0)) == set(m.sum(1)) == {15}
assert np.trace(m) == np.trace(m[::-1]) == 15

# Convert the tensor into an identity matrix

t13 = em.tensor_scatter_nd_sub(t11,
                               indices=[[0, 0], [0, 1], [1, 0], [1, 1], [1, 2], [2, 1], [2, 2]],
                               updates=[1, 7, 9, -1, 1, 3, 7])

print(t13)
sub_idx = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [1, 2], [2, 1], [2, 2]])
t13_np = t11_np.copy()
np.subtract.at(t13_np, tuple(sub_idx.T), [1, 7, 9, -1, 1, 3, 7])
check(t13, t13_np)
check(t13, np.eye(3, dtype=np.int32))

t14 = em.constant([[-2, -7, 0],
                   [-9, 0, 1],
                   [0, -3, -8]])

# GAP 4: t15 = tf.tensor_scatter_nd_min(t14,
# GAP 4:                                indices=[[0, 2], [1, 1], [2, 0]],
# GAP 4:                                updates=[-6, -5, -4])
assert not hasattr(em, "tensor_scatter_nd_min")
minmax_idx = [[0, 2], [1, 1], [2, 0]]
t15 = em.tensor_scatter_nd_update(  # stand-in (the indices are unique)
    t14, indices=minmax_idx, updates=em.minimum(em.gather_nd(t14, minmax_idx), [-6, -5, -4]))

print(t15)
t14_np = np.array([[-2, -7, 0], [-9, 0, 1], [0, -3, -8]], np.int32)
t15_np = t14_np.copy()
np.minimum.at(t15_np, ([0, 1, 2], [2, 1, 0]), [-6, -5, -4])
check(t15, t15_np)
check(t15, [[-2, -7, -6], [-9, -5, 1], [-4, -3, -8]])

# GAP 5: t16 = tf.tensor_scatter_nd_max(t14,
# GAP 5:                                indices=[[0, 2], [1, 1], [2, 0]],
# GAP 5:                                updates=[6, 5, 4])
assert not hasattr(em, "tensor_scatter_nd_max")
t16 = em.tensor_scatter_nd_update(  # stand-in (the indices are unique)
    t14, indices=minmax_idx, updates=em.maximum(em.gather_nd(t14, minmax_idx), [6, 5, 4]))

print(t16)
t16_np = t14_np.copy()
np.maximum.at(t16_np, ([0, 1, 2], [2, 1, 0]), [6, 5, 4])
check(t16, t16_np)
check(t16, [[-2, -7, 6], [-9, 5, 1], [4, -3, -8]])

# ## Further reading: "the slicing ops available with TensorFlow NumPy such as
# `tf.experimental.numpy.take_along_axis` and `tf.experimental.numpy.take`"
# GAP 7 (prose): tf.experimental.numpy.take (em.take: AttributeError); em.gather stands in
assert not hasattr(em, "take")
check(em.gather(t2, [4, 0], axis=1), np.take(t2_np, [4, 0], axis=1))
order = np.argsort(-t2_np, axis=1).astype(np.int32)
check(em.take_along_axis(t2, order, axis=1), np.take_along_axis(t2_np, order, axis=1))

# ---- Added: what TF does around the guide's calls -------------------------------------

# scatter_nd adds duplicate indices (TF's docs: "If indices contains duplicates, the
# duplicate values are accumulated (summed)"); so does tensor_scatter_nd_add
check(em.scatter_nd(indices=[[1], [1], [3]], updates=[2, 3, 4], shape=[5]), [0, 5, 0, 4, 0])
check(em.tensor_scatter_nd_add(t11, indices=[[0, 2], [0, 2]], updates=[6, 5]),
      t11_np + np.array([[0, 0, 11], [0, 0, 0], [0, 0, 0]], np.int32))
# index rows of depth < rank scatter whole slices
check(em.scatter_nd(indices=[[1]], updates=[[1, 2]], shape=[3, 2]), [[0, 0], [1, 2], [0, 0]])
# a gather_nd index of depth == rank given as a single vector picks one element
check(em.gather_nd(t4, indices=[1, 1]), t4_np[1, 1])

# out-of-range and negative indices raise (TF's CPU kernels: InvalidArgumentError)
raises(lambda: em.gather(t1, indices=[8]))
raises(lambda: em.gather(t1, indices=[-1]))
raises(lambda: em.gather_nd(t4, indices=[[5]]))
raises(lambda: em.gather_nd(t4, indices=[[0, 2]]))
raises(lambda: em.scatter_nd(indices=[[10]], updates=[1], shape=t6))
raises(lambda: em.tensor_scatter_nd_add(t11, indices=[[0, 3]], updates=[6]))
# writing floats into an int32 tensor is refused (TF: a dtype error)
raises(lambda: em.tensor_scatter_nd_add(t11, indices=[[0, 2]], updates=[6.5]), Exception)

# gradients (TF: gather/gather_nd/slice scatter the output gradient back, repeated indices
# accumulate; scatter_nd's gradient w.r.t. updates is gather_nd of the output gradient)
x = em.constant([1., 2., 3., 4., 5., 6., 7., 8.])
w = em.constant([1., 2., 3., 4., 5., 6., 7., 8.])
w_np = w.numpy()
with tape.GradientTape(persistent=True) as g:
  g.watch(x)
  y_slice = em.reduce_sum(em.slice(x, begin=[1], size=[3]) * w[:3])
  y_step = em.reduce_sum(x[::3] * w[:3])
  y_gather = em.reduce_sum(em.gather(x, indices=[0, 3, 3, 6]) * w[:4])
  y_gnd = em.reduce_sum(em.gather_nd(x, indices=[[2], [3], [0], [2]]) * w[:4])
  y_add = em.reduce_sum(em.tensor_scatter_nd_add(x, [[1], [5]], [10., 20.]) * w)
  y_upd = em.reduce_sum(em.tensor_scatter_nd_update(x, [[1], [5]], [10., 20.]) * w)
want = np.zeros(8, np.float32)
want[1:4] = w_np[:3]
check(g.gradient(y_slice, x), want, em.float32)
want = np.zeros(8, np.float32)
want[::3] = w_np[:3]
check(g.gradient(y_step, x), want, em.float32)
want = np.zeros(8, np.float32)
np.add.at(want, [0, 3, 3, 6], w_np[:4])
check(g.gradient(y_gather, x), want, em.float32)
want = np.zeros(8, np.float32)
np.add.at(want, [2, 3, 0, 2], w_np[:4])
check(g.gradient(y_gnd, x), want, em.float32)
check(g.gradient(y_add, x), w_np, em.float32)
want = w_np.copy()
want[[1, 5]] = 0  # the overwritten elements get no gradient
check(g.gradient(y_upd, x), want, em.float32)
upd = em.constant([2., 4., 6.])
with tape.GradientTape() as g:
  g.watch(upd)
  y = em.reduce_sum(em.scatter_nd([[1], [3], [1]], upd, [8]) * w)
check(g.gradient(y, upd), w_np[[1, 3, 1]], em.float32)
del g

# ---- Added: a randomized cross-check of the same ops on N rows against numpy ------------
params_np = np.random.randn(N, 6).astype(np.float32)
params = em.constant(params_np)
rows = np.random.randint(0, N, size=N // 2).astype(np.int32)
cols = np.random.randint(0, 6, size=N // 2).astype(np.int32)
begin = int(np.random.randint(0, N // 2))
check(em.slice(params, begin=[begin, 2], size=[N // 4, 3]),
      params_np[begin:begin + N // 4, 2:5], em.float32)
check(params[begin::7, ::-2], params_np[begin::7, ::-2], em.float32)
check(em.gather(params, rows), np.take(params_np, rows, axis=0), em.float32)
check(em.gather(params, cols[:9], axis=1), np.take(params_np, cols[:9], axis=1), em.float32)
check(em.gather_nd(params, np.stack([rows, cols], -1)), params_np[rows, cols], em.float32)
check(em.gather_nd(params, rows[:, None]), params_np[rows], em.float32)
vals_np = np.random.randint(-50, 50, size=N // 2).astype(np.int32)
vals = em.constant(vals_np)
nd = np.stack([rows % 37, cols], -1)  # many repeated targets
want = np.zeros((37, 6), np.int32)
np.add.at(want, (rows % 37, cols), vals_np)
check(em.scatter_nd(nd, vals, [37, 6]), want)
base_np = np.random.randint(-50, 50, size=(37, 6)).astype(np.int32)
base = em.constant(base_np)
want = base_np.copy()
np.add.at(want, (rows % 37, cols), vals_np)
check(em.tensor_scatter_nd_add(base, nd, vals), want)
want = base_np.copy()
np.subtract.at(want, (rows % 37, cols), vals_np)
check(em.tensor_scatter_nd_sub(base, nd, vals), want)
# GAPs 4-5's stand-ins need unique indices: one update for each of 37 * 6 targets
flat = np.random.permutation(37 * 6)[:100]
uniq = np.stack(np.unravel_index(flat, (37, 6)), -1).astype(np.int32)
upd_np = np.random.randint(-50, 50, size=100).astype(np.int32)
for stand_in, ufunc in [(em.minimum, np.minimum), (em.maximum, np.maximum)]:
  want = base_np.copy()
  ufunc.at(want, tuple(uniq.T), upd_np)
  got = em.tensor_scatter_nd_update(base, uniq, stand_in(em.gather_nd(base, uniq), upd_np))
  check(got, want)
print(f"randomized cross-check on {N} rows: ok")

# added: TensorFlow's checks, which ember lacked (see the header's "Also fixed")
for begin, size in ([6], [5]), ([-1], [1]), ([-3], [2]), ([1], [-2]):
  try:
    em.slice(t1, begin, size)
  except em.InvalidArgumentError:
    pass
  else:
    raise AssertionError(f"em.slice(t1, {begin}, {size}) did not raise")
for call in (lambda: em.scatter_nd([[1], [2]], [5], [4]),
             lambda: em.tensor_scatter_nd_add(t1, [[0], [1]], [1])):
  try:
    call()
  except em.InvalidArgumentError:
    pass
  else:
    raise AssertionError("updates of another shape were broadcast")
check(em.gather_nd(em.constant(np.arange(6).reshape(3, 2)), np.zeros((2, 0), np.int32)),
      np.broadcast_to(np.arange(6).reshape(3, 2), (2, 3, 2)), dtype=em.int64)
