"""Port of tensorflow/docs site/en/tutorials/customization/basics.ipynb ("Customization
basics: tensors and operations"): ops on Python values and their shapes and dtypes, NumPy
compatibility both ways, the device a tensor lives on and explicit placement with a timed
matmul on the CPU (and on GPU #0 where there is one), and tf.data: a dataset from
from_tensor_slices and one from a TextLineDataset, transformed with map/shuffle/batch and
iterated.

Upstream: https://github.com/tensorflow/docs/blob/bfde3c234766fb69317de10b5bfbbc1e762cfaf2/site/en/tutorials/customization/basics.ipynb
Changed: names only (tf.add/square/reduce_sum/matmul/multiply/random.uniform/device ->
em.*, tf.data.Dataset/TextLineDataset -> data.*). Nothing is downloaded and nothing is
reduced: the tutorial needs no data set (its text file is the one it writes itself), and
upstream's sizes (ten 1000x1000 matmuls) take well under a second on one CPU core, so
EMBER_PROGRAMS_FULL / EMBER_PROGRAMS_SHORT change nothing. Nothing trains, so there is no
accuracy threshold. Seeds are set for numpy and ember (the shuffle order).
Added: every value the tutorial prints is asserted, with TF's dtypes, against numpy
computed independently (the ops on Python values, matmul's (1, 2) int32 result, multiply's
float64 result of a float64 array, np.add's ndarray back, .numpy() a host array); the
tensors' devices (the default device, /cpu:0 inside em.device("CPU:0"), /gpu:0 inside
em.device("GPU:0") where a GPU is present; a matmul stays on its inputs' device); the timed
1000x1000 matmul against numpy in float64; the dataset elements: map(square) then
shuffle(2) then batch(2) gives three int32 batches holding the six squares, each output
drawn from the first 2 + t inputs (the shuffle buffer's bound), with a new order on a new
pass (reshuffle_each_iteration); the text file's four lines, the last one upstream's two
spaces with no newline, in two batches.
Fixed in ember since the first version of this port: (GAP 1, loud) there was no
tf.config.list_physical_devices; em.config.list_physical_devices now lists the devices as
TF's does, and upstream's lines run.
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error):
2. Tensor.device is "/cpu:0" or "/gpu:0" where TF's is fully qualified and upper case,
"/job:localhost/replica:0/task:0/device:GPU:0" (the tutorial: "The string ends with
`GPU:<N>` if the tensor is placed on the `N`-th GPU"): upstream's
`print(x.device.endswith('GPU:0'))` prints False on a GPU where TF prints True (silent),
and its `assert x.device.endswith("CPU:0")` fails (loud). Stand-in: the lower-case suffix.
3. (by design, docs/guide/input-pipelines.md and coming-from.md) dataset elements are numpy
arrays and Python str, not tensors: the batches print as numpy arrays, and the text lines
are str ('Line 1') in object arrays where TF's are bytes (b'Line 1') in tf.string tensors.
The loops run unchanged.
"""

import os
import tempfile
import time

import numpy as np

import ember.core as em
from ember import data

em.random.set_seed(0)
np.random.seed(0)
DEFAULT_DEVICE = em.current_device().name  # where new tensors go: /gpu:0 on a GPU run

# ## Tensors
print(em.add(1, 2))
print(em.add([1, 2], [3, 4]))
print(em.square(5))
print(em.reduce_sum([1, 2, 3]))

# Operator overloading is also supported
print(em.square(2) + em.square(3))
for got, want in [(em.add(1, 2), np.int32(3)), (em.add([1, 2], [3, 4]), np.array([4, 6], np.int32)),
                  (em.square(5), np.int32(25)), (em.reduce_sum([1, 2, 3]), np.int32(6)),
                  (em.square(2) + em.square(3), np.int32(13))]:
  assert got.dtype == em.int32 and got.shape == np.shape(want), got  # TF: int32 from Python ints
  np.testing.assert_array_equal(got.numpy(), want)
  assert got.device == DEFAULT_DEVICE, got.device

x = em.matmul([[1]], [[2, 3]])
print(x)
print(x.shape)
print(x.dtype)
assert x.shape == (1, 2) and x.dtype == em.int32
np.testing.assert_array_equal(x.numpy(), np.array([[1]]) @ np.array([[2, 3]]))

# ### NumPy Compatibility
ndarray = np.ones([3, 3])

print("TensorFlow operations convert numpy arrays to Tensors automatically")
tensor = em.multiply(ndarray, 42)
print(tensor)
assert isinstance(tensor, em.Tensor) and tensor.device == DEFAULT_DEVICE
assert tensor.dtype == em.float64 and tensor.shape == (3, 3)  # the array's dtype, as TF


print("And NumPy operations convert Tensors to numpy arrays automatically")
print(np.add(tensor, 1))
added = np.add(tensor, 1)
assert type(added) is np.ndarray and added.dtype == np.float64
np.testing.assert_array_equal(added, np.full((3, 3), 43.0))

print("The .numpy() method explicitly converts a Tensor to a numpy array")
print(tensor.numpy())
assert type(tensor.numpy()) is np.ndarray and tensor.numpy().dtype == np.float64
np.testing.assert_array_equal(tensor.numpy(), ndarray * 42)

# ## GPU acceleration
x = em.random.uniform([3, 3])

print("Is there a GPU available: "),
print(em.config.list_physical_devices("GPU"))
assert [d.device_type for d in em.config.list_physical_devices("GPU")] == [
    "GPU" for d in em.list_devices() if "gpu" in d]  # Added

print("Is the Tensor on GPU #0:  "),
# GAP 2: print(x.device.endswith('GPU:0'))   (silent: ember's x.device is '/gpu:0', not
# TF's '/job:localhost/replica:0/task:0/device:GPU:0', so this prints False on a GPU)
print(x.device.endswith('gpu:0'))
assert x.device == DEFAULT_DEVICE and x.device in ("/cpu:0", "/gpu:0"), x.device
assert x.device.endswith('gpu:0') == (DEFAULT_DEVICE == "/gpu:0")
assert not x.device.endswith('GPU:0')  # GAP 2: the line upstream prints is always False
assert x.shape == (3, 3) and x.dtype == em.float32
assert 0.0 <= x.numpy().min() and x.numpy().max() < 1.0 and len(np.unique(x.numpy())) == 9

# ### Explicit Device Placement
def time_matmul(x):
  start = time.time()
  for loop in range(10):  # noqa: B007
    em.matmul(x, x)

  result = time.time()-start

  print("10 loops: {:0.2f}ms".format(1000*result))  # noqa: UP032


def check_matmul(x, device):  # (added) the product, where it ran, against numpy in float64
  product = em.matmul(x, x)
  assert product.device == x.device == device, (product.device, x.device, device)
  assert product.shape == (1000, 1000) and product.dtype == em.float32
  want = x.numpy().astype(np.float64) @ x.numpy().astype(np.float64)
  np.testing.assert_allclose(product.numpy(), want, rtol=1e-5, atol=1e-3)


# Force execution on CPU
print("On CPU:")
with em.device("CPU:0"):
  x = em.random.uniform([1000, 1000])
  # GAP 2: assert x.device.endswith("CPU:0")   (AssertionError: x.device is '/cpu:0')
  assert x.device.endswith("cpu:0")
  time_matmul(x)
  check_matmul(x, "/cpu:0")

# Force execution on GPU #0 if available
if em.config.list_physical_devices("GPU"):
  print("On GPU:")
  with em.device("GPU:0"): # Or GPU:1 for the 2nd GPU, GPU:2 for the 3rd etc.
    x = em.random.uniform([1000, 1000])
    # GAP 2: assert x.device.endswith("GPU:0")   (AssertionError: x.device is '/gpu:0')
    assert x.device.endswith("gpu:0")
    time_matmul(x)
    check_matmul(x, "/gpu:0")
if DEFAULT_DEVICE == "/gpu:0":  # the GPU run took the GPU branch
  assert em.num_gpus() > 0 and x.device == "/gpu:0", x.device

# ## Datasets
# ### Create a source `Dataset`
ds_tensors = data.Dataset.from_tensor_slices([1, 2, 3, 4, 5, 6])
assert ds_tensors.element_spec == data.TensorSpec((), np.int32) and len(ds_tensors) == 6

# Create a CSV file
_, filename = tempfile.mkstemp()

with open(filename, 'w') as f:
  f.write("""Line 1
Line 2
Line 3
  """)

ds_file = data.TextLineDataset(filename)

# ### Apply transformations
ds_tensors = ds_tensors.map(em.square).shuffle(2).batch(2)

ds_file = ds_file.batch(2)
assert ds_tensors.element_spec == data.TensorSpec((None,), np.int32) and len(ds_tensors) == 3

# ### Iterate
# GAP 3 (by design): the elements below are numpy arrays (TF: tf.Tensor), and the lines of
# ds_file Python str in object arrays (TF: bytes in tf.string tensors); the loops run as
# upstream's.
print('Elements of ds_tensors:')
for x in ds_tensors:
  print(x)
assert type(x) is np.ndarray and x.dtype == np.int32 and x.shape == (2,)

print('\nElements in ds_file:')
for x in ds_file:
  print(x)
assert type(x) is np.ndarray and x.shape == (2,)

# (added) every pass over ds_tensors holds the six squares, two a batch, each drawn from the
# first 2 + t inputs (a buffer of 2), and a new pass gets a new order, as TF's
squares = [n * n for n in [1, 2, 3, 4, 5, 6]]
orders = set()
for _ in range(20):
  batches = list(ds_tensors)
  assert [b.shape for b in batches] == [(2,)] * 3 and all(b.dtype == np.int32 for b in batches)
  order = [int(v) for b in batches for v in b]
  assert sorted(order) == squares, order
  assert all(squares.index(v) <= t + 1 for t, v in enumerate(order)), order
  orders.add(tuple(order))
assert len(orders) > 1, orders  # 32 possible orders; 20 equal passes: p = 32**-19

lines = [b.tolist() for b in ds_file]
print(lines)
assert lines == [['Line 1', 'Line 2'], ['Line 3', '  ']], lines  # TF: b'Line 1', ... b'  '
assert ds_file.element_spec.shape == (None,)
with open(filename) as f:
  assert sum(lines, []) == f.read().split('\n')  # the file's lines, the last with no newline
os.remove(filename)
