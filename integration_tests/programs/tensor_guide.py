"""Port of tensorflow/docs site/en/guide/tensor.ipynb ("Introduction to Tensors"): scalars,
vectors, matrices and rank-3 tensors, numpy conversion, basic math and ops (reduce_max,
argmax, softmax), Python objects accepted as tensors, shapes, ranks and axes, single- and
multi-axis indexing, reshaping (good and bad), casting between dtypes, broadcasting and
broadcast_to, and a non-rectangular list refused by constant.

Upstream: https://github.com/tensorflow/docs/blob/master/site/en/guide/tensor.ipynb
Changed: names only (tf.constant/convert_to_tensor/add/multiply/matmul/reduce_max/zeros/
size/rank/shape/reshape/cast/range/broadcast_to -> em.*, tf.math.argmax -> em.argmax,
tf.nn.softmax -> em.nn_ops.softmax, tf.float16/float64/uint8 -> em.*). Notebook cells that
only show a value (`np.array(rank_2_tensor)`, `tf.rank(...)`) are bound to a name and
asserted. ember has no ragged, sparse or string tensors, by design: the cells of "Ragged
Tensors" that make a tf.RaggedTensor, all of "String tensors" and all of "Sparse tensors"
stay as `# GAP n (by design):` comments holding upstream's lines, with no stand-in
(constant's refusal of the non-rectangular list, which the ragged section shows first, is
ported). Added: every value the guide prints is asserted against numpy (values, shapes and
dtypes, TF's dtypes: Python ints int32, Python floats float32, numpy int64 kept, argmax
int64, size/rank/shape int32), and so is which error is raised.
Found (ember's gaps against TF, each a `# GAP n:` comment where the guide hits it):
3. `Tensor.shape` is a plain tuple: no TensorShape.as_list() (AttributeError);
stand-in list(x.shape).
By design: 4. no tf.ragged; 5. no string tensors or tf.strings (em.constant("Gray wolf")
raises DTypeError); 6. no tf.sparse.
Fixed in ember since the first version of this port: `.numpy()` of a 0-d tensor gave a
0-d numpy.ndarray where TF gives a numpy scalar (np.int32(0)): it printed the same but
was not hashable and not an np.generic (GAP 1); on the CPU `.numpy()` gave the tensor's
own writable buffer, where TF gives a copy, so writing into it changed the tensor the
guide calls immutable (GAP 2, silent). `.numpy()` is now a copy, and a numpy scalar for a
0-d tensor, so TF's checks are restored.
"""

import numpy as np

import ember.core as em

# The guide: "All tensors are immutable like Python numbers and strings: you can never
# update the contents of a tensor, only create a new one." TF's .numpy() is a copy.
immutable = em.constant([1, 2, 3])
view = immutable.numpy()
view[0] = 99
np.testing.assert_array_equal(immutable.numpy(), [1, 2, 3])

# This will be an int32 tensor by default; see "dtypes" below.
rank_0_tensor = em.constant(4)
print(rank_0_tensor)
assert rank_0_tensor.dtype == em.int32 and rank_0_tensor.shape == ()
assert rank_0_tensor.numpy() == 4

# Let's make this a float tensor.
rank_1_tensor = em.constant([2.0, 3.0, 4.0])
print(rank_1_tensor)
assert rank_1_tensor.dtype == em.float32 and rank_1_tensor.shape == (3,)
np.testing.assert_array_equal(rank_1_tensor.numpy(), np.array([2.0, 3.0, 4.0], np.float32))

# If you want to be specific, you can set the dtype (see below) at creation time
rank_2_tensor = em.constant([[1, 2],
                             [3, 4],
                             [5, 6]], dtype=em.float16)
print(rank_2_tensor)
assert rank_2_tensor.dtype == em.float16 and rank_2_tensor.shape == (3, 2)

# There can be an arbitrary number of
# axes (sometimes called "dimensions")
rank_3_tensor = em.constant([
  [[0, 1, 2, 3, 4],
   [5, 6, 7, 8, 9]],
  [[10, 11, 12, 13, 14],
   [15, 16, 17, 18, 19]],
  [[20, 21, 22, 23, 24],
   [25, 26, 27, 28, 29]],])

print(rank_3_tensor)
rank_3_np = np.arange(30, dtype=np.int32).reshape(3, 2, 5)
assert rank_3_tensor.dtype == em.int32 and rank_3_tensor.shape == (3, 2, 5)
np.testing.assert_array_equal(rank_3_tensor.numpy(), rank_3_np)

as_array = np.array(rank_2_tensor)
rank_2_np = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float16)
assert type(as_array) is np.ndarray and as_array.dtype == np.float16
np.testing.assert_array_equal(as_array, rank_2_np)

as_numpy = rank_2_tensor.numpy()
assert type(as_numpy) is np.ndarray and as_numpy.dtype == np.float16
np.testing.assert_array_equal(as_numpy, rank_2_np)

a = em.constant([[1, 2],
                 [3, 4]])
b = em.constant([[1, 1],
                 [1, 1]]) # Could have also said `em.ones([2,2], dtype=em.int32)`

print(em.add(a, b), "\n")
print(em.multiply(a, b), "\n")
print(em.matmul(a, b), "\n")
a_np, b_np = np.array([[1, 2], [3, 4]], np.int32), np.ones((2, 2), np.int32)
for got, want in [(em.add(a, b), a_np + b_np), (em.multiply(a, b), a_np * b_np),
                  (em.matmul(a, b), a_np @ b_np)]:
  assert got.dtype == em.int32 and got.shape == (2, 2), got
  np.testing.assert_array_equal(got.numpy(), want)
assert em.ones([2, 2], dtype=em.int32).dtype == b.dtype
np.testing.assert_array_equal(em.ones([2, 2], dtype=em.int32).numpy(), b.numpy())

print(a + b, "\n") # element-wise addition
print(a * b, "\n") # element-wise multiplication
print(a @ b, "\n") # matrix multiplication
for got, want in [(a + b, a_np + b_np), (a * b, a_np * b_np), (a @ b, a_np @ b_np)]:
  assert got.dtype == em.int32 and got.shape == (2, 2), got
  np.testing.assert_array_equal(got.numpy(), want)
np.testing.assert_array_equal((a @ b).numpy(), [[3, 3], [7, 7]])

c = em.constant([[4.0, 5.0], [10.0, 1.0]])

# Find the largest value
print(em.reduce_max(c))
# Find the index of the largest value
print(em.argmax(c))
# Compute the softmax
print(em.nn_ops.softmax(c))
c_np = np.array([[4.0, 5.0], [10.0, 1.0]], np.float32)
largest = em.reduce_max(c)
assert largest.dtype == em.float32 and largest.shape == () and largest.numpy() == 10.0
index = em.argmax(c)
assert index.dtype == em.int64 and index.shape == (2,)  # TF's default output_type: int64
np.testing.assert_array_equal(index.numpy(), np.argmax(c_np, axis=0))
np.testing.assert_array_equal(index.numpy(), [1, 0])
softmax = em.nn_ops.softmax(c)
e = np.exp(c_np - c_np.max(axis=-1, keepdims=True))
assert softmax.dtype == em.float32 and softmax.shape == (2, 2)
np.testing.assert_allclose(softmax.numpy(), e / e.sum(axis=-1, keepdims=True), rtol=1e-6)

converted = em.convert_to_tensor([1,2,3])
assert converted.dtype == em.int32 and converted.shape == (3,)
np.testing.assert_array_equal(converted.numpy(), [1, 2, 3])

from_list = em.reduce_max([1,2,3])
assert from_list.dtype == em.int32 and from_list.shape == () and from_list.numpy() == 3

from_numpy = em.reduce_max(np.array([1,2,3]))
# a numpy array keeps its dtype (numpy's default integer, int64 here), as in TF
assert from_numpy.dtype == np.array([1, 2, 3]).dtype and from_numpy.shape == ()
assert from_numpy.numpy() == 3

rank_4_tensor = em.zeros([3, 2, 4, 5])

print("Type of every element:", rank_4_tensor.dtype)
print("Number of axes:", rank_4_tensor.ndim)
print("Shape of tensor:", rank_4_tensor.shape)
print("Elements along axis 0 of tensor:", rank_4_tensor.shape[0])
print("Elements along the last axis of tensor:", rank_4_tensor.shape[-1])
print("Total number of elements (3*2*4*5): ", em.size(rank_4_tensor).numpy())
assert rank_4_tensor.dtype == em.float32
assert rank_4_tensor.ndim == 4 and type(rank_4_tensor.ndim) is int  # not a Tensor
assert tuple(rank_4_tensor.shape) == (3, 2, 4, 5)
assert rank_4_tensor.shape[0] == 3 and type(rank_4_tensor.shape[0]) is int
assert rank_4_tensor.shape[-1] == 5 and type(rank_4_tensor.shape[-1]) is int
size = em.size(rank_4_tensor)
assert size.dtype == em.int32 and size.shape == () and size.numpy() == 3 * 2 * 4 * 5
np.testing.assert_array_equal(rank_4_tensor.numpy(), np.zeros((3, 2, 4, 5), np.float32))

rank = em.rank(rank_4_tensor)
assert isinstance(rank, em.Tensor) and rank.dtype == em.int32 and rank.shape == ()
assert rank.numpy() == 4

shape = em.shape(rank_4_tensor)
assert isinstance(shape, em.Tensor) and shape.dtype == em.int32 and shape.shape == (4,)
np.testing.assert_array_equal(shape.numpy(), [3, 2, 4, 5])

rank_1_tensor = em.constant([0, 1, 1, 2, 3, 5, 8, 13, 21, 34])
print(rank_1_tensor.numpy())
fib = np.array([0, 1, 1, 2, 3, 5, 8, 13, 21, 34], np.int32)
assert rank_1_tensor.dtype == em.int32
np.testing.assert_array_equal(rank_1_tensor.numpy(), fib)

print("First:", rank_1_tensor[0].numpy())
print("Second:", rank_1_tensor[1].numpy())
print("Last:", rank_1_tensor[-1].numpy())
# "Indexing with a scalar removes the axis": a 0-d int32 tensor
for i, want in [(0, 0), (1, 1), (-1, 34)]:
  item = rank_1_tensor[i]
  assert item.shape == () and item.dtype == em.int32 and item.numpy() == want
# .numpy() of a 0-d tensor is a numpy scalar (np.int32(0)), as TF's: hashable
assert isinstance(rank_1_tensor[0].numpy(), np.int32)
assert {rank_1_tensor[0].numpy(): "first"}[np.int32(0)] == "first"

print("Everything:", rank_1_tensor[:].numpy())
print("Before 4:", rank_1_tensor[:4].numpy())
print("From 4 to the end:", rank_1_tensor[4:].numpy())
print("From 2, before 7:", rank_1_tensor[2:7].numpy())
print("Every other item:", rank_1_tensor[::2].numpy())
print("Reversed:", rank_1_tensor[::-1].numpy())
for got, want in [(rank_1_tensor[:], fib[:]), (rank_1_tensor[:4], fib[:4]),
                  (rank_1_tensor[4:], fib[4:]), (rank_1_tensor[2:7], fib[2:7]),
                  (rank_1_tensor[::2], fib[::2]), (rank_1_tensor[::-1], fib[::-1])]:
  assert got.dtype == em.int32 and got.shape == want.shape, (got, want)
  np.testing.assert_array_equal(got.numpy(), want)
np.testing.assert_array_equal(rank_1_tensor[::-1].numpy()[:3], [34, 21, 13])

print(rank_2_tensor.numpy())
np.testing.assert_array_equal(rank_2_tensor.numpy(), rank_2_np)

# Pull out a single value from a 2-rank tensor
print(rank_2_tensor[1, 1].numpy())
single = rank_2_tensor[1, 1]
assert single.shape == () and single.dtype == em.float16 and single.numpy() == 4.0

# Get row and column tensors
print("Second row:", rank_2_tensor[1, :].numpy())
print("Second column:", rank_2_tensor[:, 1].numpy())
print("Last row:", rank_2_tensor[-1, :].numpy())
print("First item in last column:", rank_2_tensor[0, -1].numpy())
print("Skip the first row:")
print(rank_2_tensor[1:, :].numpy(), "\n")
for got, want in [(rank_2_tensor[1, :], rank_2_np[1, :]), (rank_2_tensor[:, 1], rank_2_np[:, 1]),
                  (rank_2_tensor[-1, :], rank_2_np[-1, :]),
                  (rank_2_tensor[0, -1], rank_2_np[0, -1]),
                  (rank_2_tensor[1:, :], rank_2_np[1:, :])]:
  assert got.dtype == em.float16 and got.shape == want.shape, (got, want)
  np.testing.assert_array_equal(got.numpy(), want)
np.testing.assert_array_equal(rank_2_tensor[:, 1].numpy(), [2.0, 4.0, 6.0])

print(rank_3_tensor[:, :, 4])
last_feature = rank_3_tensor[:, :, 4]
assert last_feature.dtype == em.int32 and last_feature.shape == (3, 2)
np.testing.assert_array_equal(last_feature.numpy(), [[4, 9], [14, 19], [24, 29]])

# Shape returns a `TensorShape` object that shows the size along each axis
x = em.constant([[1], [2], [3]])
print(x.shape)
assert tuple(x.shape) == (3, 1)

# You can convert this object into a Python list, too
# GAP 3: ember's Tensor.shape is a tuple: AttributeError: 'tuple' object has no attribute
# 'as_list' (TF: [3, 1]):
# print(x.shape.as_list())
print(list(x.shape))  # stand-in
assert list(x.shape) == [3, 1]

# You can reshape a tensor to a new shape.
# Note that you're passing in a list
reshaped = em.reshape(x, [1, 3])

print(x.shape)
print(reshaped.shape)
assert tuple(x.shape) == (3, 1) and tuple(reshaped.shape) == (1, 3)
assert reshaped.dtype == em.int32
np.testing.assert_array_equal(reshaped.numpy(), [[1, 2, 3]])
np.testing.assert_array_equal(x.numpy(), [[1], [2], [3]])  # x itself is unchanged

print(rank_3_tensor)
np.testing.assert_array_equal(rank_3_tensor.numpy(), rank_3_np)

# A `-1` passed in the `shape` argument says "Whatever fits".
print(em.reshape(rank_3_tensor, [-1]))
flat = em.reshape(rank_3_tensor, [-1])
assert flat.shape == (30,) and flat.dtype == em.int32
np.testing.assert_array_equal(flat.numpy(), np.arange(30))

print(em.reshape(rank_3_tensor, [3*2, 5]), "\n")
print(em.reshape(rank_3_tensor, [3, -1]))
for got, want in [(em.reshape(rank_3_tensor, [3*2, 5]), rank_3_np.reshape(6, 5)),
                  (em.reshape(rank_3_tensor, [3, -1]), rank_3_np.reshape(3, 10))]:
  assert got.dtype == em.int32 and got.shape == want.shape, got
  np.testing.assert_array_equal(got.numpy(), want)

# Bad examples: don't do this

# You can't reorder axes with reshape.
print(em.reshape(rank_3_tensor, [2, 3, 5]), "\n")

# This is a mess
print(em.reshape(rank_3_tensor, [5, 6]), "\n")

# This doesn't work at all
raised = None
try:
  em.reshape(rank_3_tensor, [7, -1])
except Exception as e:
  print(f"{type(e).__name__}: {e}")
  raised = e
# TF raises InvalidArgumentError (30 values are not a multiple of 7)
assert isinstance(raised, em.InvalidArgumentError), repr(raised)
# reshape keeps the element order (it is not a transpose)
for got, want in [(em.reshape(rank_3_tensor, [2, 3, 5]), rank_3_np.reshape(2, 3, 5)),
                  (em.reshape(rank_3_tensor, [5, 6]), rank_3_np.reshape(5, 6))]:
  assert got.dtype == em.int32 and got.shape == want.shape, got
  np.testing.assert_array_equal(got.numpy(), want)
assert not np.array_equal(em.reshape(rank_3_tensor, [2, 3, 5]).numpy(),
                          np.transpose(rank_3_np, (1, 0, 2)))

the_f64_tensor = em.constant([2.2, 3.3, 4.4], dtype=em.float64)
the_f16_tensor = em.cast(the_f64_tensor, dtype=em.float16)
# Now, cast to an uint8 and lose the decimal precision
the_u8_tensor = em.cast(the_f16_tensor, dtype=em.uint8)
print(the_u8_tensor)
f64_np = np.array([2.2, 3.3, 4.4], np.float64)
assert the_f64_tensor.dtype == em.float64
np.testing.assert_array_equal(the_f64_tensor.numpy(), f64_np)
assert the_f16_tensor.dtype == em.float16
np.testing.assert_array_equal(the_f16_tensor.numpy(), f64_np.astype(np.float16))
assert the_u8_tensor.dtype == em.uint8 and the_u8_tensor.shape == (3,)
np.testing.assert_array_equal(the_u8_tensor.numpy(), np.array([2, 3, 4], np.uint8))

x = em.constant([1, 2, 3])

y = em.constant(2)
z = em.constant([2, 2, 2])
# All of these are the same computation
print(em.multiply(x, 2))
print(x * y)
print(x * z)
for got in [em.multiply(x, 2), x * y, x * z]:
  assert got.dtype == em.int32 and got.shape == (3,), got  # 2 does not widen int32
  np.testing.assert_array_equal(got.numpy(), [2, 4, 6])

# These are the same computations
x = em.reshape(x,[3,1])
y = em.range(1, 5)
print(x, "\n")
print(y, "\n")
print(em.multiply(x, y))
assert x.shape == (3, 1) and y.shape == (4,) and y.dtype == em.int32
np.testing.assert_array_equal(y.numpy(), np.arange(1, 5))
outer = em.multiply(x, y)
outer_np = np.arange(1, 4).reshape(3, 1) * np.arange(1, 5)
assert outer.dtype == em.int32 and outer.shape == (3, 4)
np.testing.assert_array_equal(outer.numpy(), outer_np)

x_stretch = em.constant([[1, 1, 1, 1],
                         [2, 2, 2, 2],
                         [3, 3, 3, 3]])

y_stretch = em.constant([[1, 2, 3, 4],
                         [1, 2, 3, 4],
                         [1, 2, 3, 4]])

print(x_stretch * y_stretch)  # Again, operator overloading
stretched = x_stretch * y_stretch
assert stretched.dtype == em.int32 and stretched.shape == (3, 4)
np.testing.assert_array_equal(stretched.numpy(), outer.numpy())  # the same as broadcasting

print(em.broadcast_to(em.constant([1, 2, 3]), [3, 3]))
broadcast = em.broadcast_to(em.constant([1, 2, 3]), [3, 3])
assert broadcast.dtype == em.int32 and broadcast.shape == (3, 3)
np.testing.assert_array_equal(broadcast.numpy(), np.broadcast_to([1, 2, 3], (3, 3)))

ragged_list = [
    [0, 1, 2, 3],
    [4, 5],
    [6, 7, 8],
    [9]]

raised = None
try:
  tensor = em.constant(ragged_list)
except Exception as e:
  print(f"{type(e).__name__}: {e}")
  raised = e
# TF: ValueError: Can't convert non-rectangular Python sequence to Tensor.
assert isinstance(raised, ValueError), repr(raised)

# GAP 4 (by design): ragged_tensor = tf.ragged.constant(ragged_list)
# GAP 4 (by design): print(ragged_tensor)

# GAP 4 (by design): print(ragged_tensor.shape)

# GAP 5 (by design): # Tensors can be strings, too here is a scalar string.
# GAP 5 (by design): scalar_string_tensor = tf.constant("Gray wolf")
# GAP 5 (by design): print(scalar_string_tensor)

# GAP 5 (by design): # If you have three string tensors of different lengths, this is OK.
# GAP 5 (by design): tensor_of_strings = tf.constant(["Gray wolf",
# GAP 5 (by design):                                  "Quick brown fox",
# GAP 5 (by design):                                  "Lazy dog"])
# GAP 5 (by design): # Note that the shape is (3,). The string length is not included.
# GAP 5 (by design): print(tensor_of_strings)

# GAP 5 (by design): tf.constant("🥳👍")

# GAP 5 (by design): # You can use split to split a string into a set of tensors
# GAP 5 (by design): print(tf.strings.split(scalar_string_tensor, sep=" "))

# GAP 5 (by design): # ...but it turns into a `RaggedTensor` if you split up a tensor of strings,
# GAP 5 (by design): # as each string might be split into a different number of parts.
# GAP 5 (by design): print(tf.strings.split(tensor_of_strings))

# GAP 5 (by design): text = tf.constant("1 10 100")
# GAP 5 (by design): print(tf.strings.to_number(tf.strings.split(text, " ")))

# GAP 5 (by design): byte_strings = tf.strings.bytes_split(tf.constant("Duck"))
# GAP 5 (by design): byte_ints = tf.io.decode_raw(tf.constant("Duck"), tf.uint8)
# GAP 5 (by design): print("Byte strings:", byte_strings)
# GAP 5 (by design): print("Bytes:", byte_ints)

# GAP 5 (by design): # Or split it up as unicode and then decode it
# GAP 5 (by design): unicode_bytes = tf.constant("アヒル 🦆")
# GAP 5 (by design): unicode_char_bytes = tf.strings.unicode_split(unicode_bytes, "UTF-8")
# GAP 5 (by design): unicode_values = tf.strings.unicode_decode(unicode_bytes, "UTF-8")
# GAP 5 (by design):
# GAP 5 (by design): print("\nUnicode bytes:", unicode_bytes)
# GAP 5 (by design): print("\nUnicode chars:", unicode_char_bytes)
# GAP 5 (by design): print("\nUnicode values:", unicode_values)

# GAP 6 (by design): # Sparse tensors store values by index in a memory-efficient manner
# GAP 6 (by design): sparse_tensor = tf.sparse.SparseTensor(indices=[[0, 0], [1, 2]],
# GAP 6 (by design):                                        values=[1, 2],
# GAP 6 (by design):                                        dense_shape=[3, 4])
# GAP 6 (by design): print(sparse_tensor, "\n")
# GAP 6 (by design):
# GAP 6 (by design): # You can convert sparse tensors to dense
# GAP 6 (by design): print(tf.sparse.to_dense(sparse_tensor))
