"""Port of tensorflow/docs site/en/guide/variable.ipynb ("Introduction to Variables"):
creating variables of several dtypes, reading them as tensors, assign / assign_add /
assign_sub, variables built from variables, names, trainable=False, and placing variables
and tensors on devices.

Upstream: https://github.com/tensorflow/docs/blob/master/site/en/guide/variable.ipynb
Changed: names only (tf.Variable/constant/convert_to_tensor/reshape/matmul ->
em.Variable/constant/convert_to_tensor/reshape/matmul, tf.math.argmax -> em.argmax,
tf.device -> em.device). The setup cell's commented-out
tf.debugging.set_log_device_placement(True) is dropped (ember logs no placements; each
tensor's .device is asserted instead). Added: every value the guide prints is asserted
(shapes, dtypes, values, names, the error a resizing assign raises, the devices the
tensors live on).
Found (each open gap a `# GAP n:` comment holding upstream's line, with the stand-in after
it): 1. (a deliberate difference, docs/guide/dtypes.md rule 7) a Python complex becomes
complex64 where TensorFlow infers complex128: silent; 2. (a deliberate difference,
api-map) em.device("GPU:0") on a machine without a GPU raises DeviceError where TF's soft
placement runs the block on the CPU: loud (stand-in: the CPU where there is no GPU);
3. em.device places only new tensors: `a * b` of two CPU variables inside
`em.device("GPU:0")` runs on /cpu:0 and gives a CPU tensor, where TF copies them to GPU:0
and multiplies there: silent (stand-in: a.gpu() * b.gpu()).
"""

import numpy as np

import ember.core as em

my_tensor = em.constant([[1.0, 2.0], [3.0, 4.0]])
my_variable = em.Variable(my_tensor)

# Variables can be all kinds of types, just like tensors
bool_variable = em.Variable([False, False, False, True])
complex_variable = em.Variable([5 + 4j, 6 + 1j])
# the variable has the same dtype as its initial value
assert my_variable.dtype == em.float32
assert bool_variable.dtype == em.bool
np.testing.assert_array_equal(bool_variable.numpy(), [False, False, False, True])
# GAP 1 (a deliberate difference, docs/guide/dtypes.md rule 7): TF infers complex128 for a
# Python complex (py_seq_tensor.cc: DT_COMPLEX128), ember complex64, silently:
# assert complex_variable.dtype == tf.complex128
assert complex_variable.dtype == em.complex64
np.testing.assert_array_equal(complex_variable.numpy(), [5 + 4j, 6 + 1j])

print("Shape: ", my_variable.shape)
print("DType: ", my_variable.dtype)
print("As NumPy: ", my_variable.numpy())
assert my_variable.shape == (2, 2)
assert my_variable.dtype == em.float32
assert isinstance(my_variable.numpy(), np.ndarray)
np.testing.assert_array_equal(my_variable.numpy(), [[1.0, 2.0], [3.0, 4.0]])

print("A variable:", my_variable)
print("\nViewed as a tensor:", em.convert_to_tensor(my_variable))
print("\nIndex of highest value:", em.argmax(my_variable))

# This creates a new tensor; it does not reshape the variable.
print("\nCopying and reshaping: ", em.reshape(my_variable, [1,4]))
assert repr(my_variable).startswith(
    "<ember.Variable 'Variable:0' shape=(2, 2) dtype=float32, numpy="), repr(my_variable)
as_tensor = em.convert_to_tensor(my_variable)
assert isinstance(as_tensor, em.Tensor) and not isinstance(as_tensor, em.Variable)
np.testing.assert_array_equal(as_tensor.numpy(), my_tensor.numpy())
highest = em.argmax(my_variable)
assert highest.dtype == em.int64  # tf.math.argmax's default output_type
np.testing.assert_array_equal(highest.numpy(), [1, 1])
reshaped = em.reshape(my_variable, [1,4])
assert reshaped.shape == (1, 4) and my_variable.shape == (2, 2)  # the variable keeps its shape
np.testing.assert_array_equal(reshaped.numpy(), [[1.0, 2.0, 3.0, 4.0]])

a = em.Variable([2.0, 3.0])
# This will keep the same dtype, float32
a.assign([1, 2])
assert a.dtype == em.float32
np.testing.assert_array_equal(a.numpy(), [1.0, 2.0])
# Not allowed as it resizes the variable:
raised = None
try:
  a.assign([1.0, 2.0, 3.0])
except Exception as e:
  print(f"{type(e).__name__}: {e}")
  raised = e
# TF raises ValueError ("Shape mismatch. The variable shape (2,), and the assigned value shape
# (3,) are incompatible."); ember's InvalidArgumentError is a ValueError
assert isinstance(raised, ValueError), raised
assert "(2,)" in str(raised) and "(3,)" in str(raised), raised
np.testing.assert_array_equal(a.numpy(), [1.0, 2.0])  # unchanged
assert a.shape == (2,)

a = em.Variable([2.0, 3.0])
# Create b based on the value of a
b = em.Variable(a)
a.assign([5, 6])

# a and b are different
print(a.numpy())
print(b.numpy())
np.testing.assert_array_equal(a.numpy(), [5.0, 6.0])
np.testing.assert_array_equal(b.numpy(), [2.0, 3.0])

# There are other versions of assign
added = a.assign_add([2,3])
print(added.numpy())  # [7. 9.]
np.testing.assert_array_equal(added.numpy(), [7.0, 9.0])
subtracted = a.assign_sub([7,9])
print(subtracted.numpy())  # [0. 0.]
np.testing.assert_array_equal(subtracted.numpy(), [0.0, 0.0])
np.testing.assert_array_equal(a.numpy(), [0.0, 0.0])
np.testing.assert_array_equal(b.numpy(), [2.0, 3.0])  # b still has its own copy

# Create a and b; they will have the same name but will be backed by
# different tensors.
a = em.Variable(my_tensor, name="Mark")
# A new variable with the same name, but different value
# Note that the scalar add is broadcast
b = em.Variable(my_tensor + 1, name="Mark")

# These are elementwise-unequal, despite having the same name
print(a == b)
assert a.name == b.name == "Mark:0"
equal = a == b
assert equal.dtype == em.bool and equal.shape == (2, 2)
np.testing.assert_array_equal(equal.numpy(), [[False, False], [False, False]])
np.testing.assert_array_equal(b.numpy(), [[2.0, 3.0], [4.0, 5.0]])

step_counter = em.Variable(1, trainable=False)
assert step_counter.trainable is False and a.trainable is True
assert step_counter.dtype == em.int32 and int(step_counter) == 1

with em.device('CPU:0'):

  # Create some tensors
  a = em.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
  b = em.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
  c = em.matmul(a, b)

print(c)
assert a.device == b.device == c.device == "/cpu:0", (a.device, b.device, c.device)
assert c.shape == (2, 2) and c.dtype == em.float32
np.testing.assert_allclose(c.numpy(), [[22.0, 28.0], [49.0, 64.0]])

with em.device('CPU:0'):
  a = em.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
  b = em.Variable([[1.0, 2.0, 3.0]])
assert a.device == b.device == "/cpu:0"

# GAP 2 (a deliberate difference, api-map: "asking for a GPU that is not there raises"): TF's
# soft placement runs this block on the CPU where there is no GPU; ember raises DeviceError
# "device: 'GPU:0' is not available (no usable GPU: ...); devices here: /cpu:0":
# with tf.device('GPU:0'):
gpu_or_cpu = 'GPU:0' if em.num_gpus() else 'CPU:0'
with em.device(gpu_or_cpu):
  # Element-wise multiply
  # GAP 3: ember runs an op where its inputs live and em.device places only new tensors, so
  # `a * b` of these two CPU variables runs on /cpu:0 even inside em.device('GPU:0'), and k
  # is a CPU tensor, silently; TF copies a and b to GPU:0 and multiplies there:
  # k = a * b
  k = a.gpu() * b.gpu() if em.num_gpus() else a * b

print(k)
assert k.device == em.get_device(gpu_or_cpu).name, (k.device, gpu_or_cpu)
assert a.device == b.device == "/cpu:0"  # the variables stay where they were placed
assert k.shape == (2, 3) and k.dtype == em.float32
np.testing.assert_allclose(k.numpy(), [[1.0, 4.0, 9.0], [4.0, 10.0, 18.0]])
