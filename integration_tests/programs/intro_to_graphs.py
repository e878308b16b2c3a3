"""Port of tensorflow/docs site/en/guide/intro_to_graphs.ipynb ("Introduction to graphs and
tf.function"): tf.function as a wrapper and a decorator, functions it calls, Python control
flow on tensor values, polymorphism (one function, many traces), run_functions_eagerly,
print as a Python side effect that runs only while tracing, non-strict execution, the
eager/graph timing comparison, and retracing on new Python arguments.

Upstream: https://github.com/tensorflow/docs/blob/master/site/en/guide/intro_to_graphs.ipynb
Changed: names only (tf.function -> graph.function, tf.config.run_functions_eagerly ->
graph.run_functions_eagerly, tf.constant/matmul/greater/maximum/pow/reduce_mean/gather/eye
-> em.*, tf.random.uniform -> em.random.uniform, tf.errors.InvalidArgumentError ->
em.InvalidArgumentError). Dropped, as TF graph internals ember does not have: the
`tf.autograph.to_code(simple_relu)` cell (ember has no AutoGraph: it runs the Python and
guards the values it reads) and the `get_concrete_function(...).graph.as_graph_def()` cell
(ember's trace is a replay list, not a GraphDef); the unused `from datetime import
datetime`. A seed is set.
Added: every value the guide prints is asserted (against numpy or the eager function),
and what each call prints (the Python side effects, captured) and the tracing counts;
the timing prints the eager/graph ratio and asserts no speed.
Found (each a `# GAP n:` comment holding upstream's line, with a stand-in after it):
2. no `pretty_printed_concrete_signatures()` (nor concrete
functions): AttributeError (loud); 3. non-strict execution: the first call of a
graph.function runs every op eagerly while it traces, so the unused `gather` raises
IndexOutOfRangeError where TF's graph prunes it and prints the input (loud; a
consequence of ember tracing by running the function, which graphs.md states: a replay
does prune the dead op).
Fixed in ember since the first version of this port: a graph.function that returned a
Python value (simple_relu's `return 0`) returned it as it was, an int, where tf.function
returns a Tensor, so upstream's `.numpy()` raised AttributeError (GAP 1): it now returns
a Tensor (em.constant's dtype, int32 here), and upstream's line is restored.
"""

import contextlib
import io
import sys
import timeit

import numpy as np

import ember.core as em
from ember import graph

em.random.set_seed(0)


@contextlib.contextmanager
def printed():
  """Capture what the block prints (and print it after): the guide's output, asserted."""
  buf = io.StringIO()
  with contextlib.redirect_stdout(buf):
    yield buf
  sys.stdout.write(buf.getvalue())


# Define a Python function.
def a_regular_function(x, y, b):
  x = em.matmul(x, y)
  x = x + b
  return x

# The Python type of `a_function_that_uses_a_graph` will now be a
# `graph.Function`.
a_function_that_uses_a_graph = graph.function(a_regular_function)

# Make some tensors.
x1 = em.constant([[1.0, 2.0]])
y1 = em.constant([[2.0], [3.0]])
b1 = em.constant(4.0)

orig_value = a_regular_function(x1, y1, b1).numpy()
# Call a `graph.function` like a Python function.
tf_function_value = a_function_that_uses_a_graph(x1, y1, b1).numpy()
assert(orig_value == tf_function_value)
assert isinstance(a_function_that_uses_a_graph, graph.Function)
np.testing.assert_array_equal(tf_function_value, [[12.0]])  # 1*2 + 2*3 + 4


def inner_function(x, y, b):
  x = em.matmul(x, y)
  x = x + b
  return x

# Using the `graph.function` decorator makes `outer_function` into a
# `graph.Function`.
@graph.function
def outer_function(x):
  y = em.constant([[2.0], [3.0]])
  b = em.constant(4.0)

  return inner_function(x, y, b)

# Note that the callable will create a graph that
# includes `inner_function` as well as `outer_function`.
value = outer_function(em.constant([[1.0, 2.0]])).numpy()
print(value)
np.testing.assert_array_equal(value, [[12.0]])
# replayed: a new input of the same signature runs the traced ops
np.testing.assert_array_equal(outer_function(em.constant([[3.0, 1.0]])).numpy(), [[13.0]])
assert outer_function.experimental_get_tracing_count() == 1


def simple_relu(x):
  if em.greater(x, 0):
    return x
  else:
    return 0

# Using `graph.function` makes `tf_simple_relu` a `graph.Function` that wraps
# `simple_relu`.
tf_simple_relu = graph.function(simple_relu)

first = tf_simple_relu(em.constant(1)).numpy()
print("First branch, with graph:", first)
assert first == 1
print("Second branch, with graph:", tf_simple_relu(em.constant(-1)).numpy())
# simple_relu's Python `0` comes back as a Tensor (em.constant(0): int32), as tf.function's
second = tf_simple_relu(em.constant(-1))
assert isinstance(second, em.Tensor) and second.dtype == em.int32 and second.numpy() == 0
# each branch is its own trace (a guard on the value `if` read); both are replayed after
assert int(tf_simple_relu(em.constant(7))) == 7
assert tf_simple_relu(em.constant(-7)).numpy() == 0
assert tf_simple_relu.experimental_get_tracing_count() == 2

# (dropped: print(tf.autograph.to_code(simple_relu)) and
#  print(tf_simple_relu.get_concrete_function(tf.constant(1)).graph.as_graph_def()))


@graph.function
def my_relu(x):
  return em.maximum(0., x)

# `my_relu` creates new graphs as it observes different input types.
r1 = my_relu(em.constant(5.5))
r2 = my_relu([1, -1])
r3 = my_relu(em.constant([3., -3.]))
print(r1)
print(r2)
print(r3)
assert float(r1) == 5.5
np.testing.assert_array_equal(r2.numpy(), [1.0, 0.0])
assert r2.dtype == em.float32
np.testing.assert_array_equal(r3.numpy(), [3.0, 0.0])
assert my_relu.experimental_get_tracing_count() == 3

# These two calls do *not* create new graphs.
r4 = my_relu(em.constant(-2.5)) # Input type matches `em.constant(5.5)`.
r5 = my_relu(em.constant([-1., 1.])) # Input type matches `em.constant([3., -3.])`.
print(r4)
print(r5)
assert float(r4) == 0.0
np.testing.assert_array_equal(r5.numpy(), [0.0, 1.0])
assert my_relu.experimental_get_tracing_count() == 3

# There are three traces (one for each graph) in `my_relu`.
# GAP 2: ember has no concrete functions to list (AttributeError):
# print(my_relu.pretty_printed_concrete_signatures())
print(my_relu.experimental_get_tracing_count())  # stand-in: how many there are
assert my_relu.experimental_get_tracing_count() == 3


@graph.function
def get_MSE(y_true, y_pred):
  sq_diff = em.pow(y_true - y_pred, 2)
  return em.reduce_mean(sq_diff)

y_true = em.random.uniform([5], maxval=10, dtype=em.int32)
y_pred = em.random.uniform([5], maxval=10, dtype=em.int32)
print(y_true)
print(y_pred)
t_np, p_np = y_true.numpy(), y_pred.numpy()
assert y_true.dtype == em.int32 and t_np.min() >= 0 and t_np.max() < 10
assert p_np.min() >= 0 and p_np.max() < 10
# an integer mean, as TF's: the sum divided by 5, rounded toward zero
expected_mse = int(np.sum((t_np - p_np) ** 2)) // 5

mse = get_MSE(y_true, y_pred)
print(mse)
assert mse.dtype == em.int32 and int(mse) == expected_mse

graph.run_functions_eagerly(True)

mse = get_MSE(y_true, y_pred)
print(mse)
assert int(mse) == expected_mse

# Don't forget to set it back when you are done.
graph.run_functions_eagerly(False)
assert get_MSE.experimental_get_tracing_count() == 1  # the eager call did not trace


@graph.function
def get_MSE(y_true, y_pred):
  print("Calculating MSE!")
  sq_diff = em.pow(y_true - y_pred, 2)
  return em.reduce_mean(sq_diff)

with printed() as out:
  error = get_MSE(y_true, y_pred)
  error = get_MSE(y_true, y_pred)
  error = get_MSE(y_true, y_pred)
# printed once: only while tracing
assert out.getvalue() == "Calculating MSE!\n", out.getvalue()
assert int(error) == expected_mse

# Now, globally set everything to run eagerly to force eager execution.
graph.run_functions_eagerly(True)

# Observe what is printed below.
with printed() as out:
  error = get_MSE(y_true, y_pred)
  error = get_MSE(y_true, y_pred)
  error = get_MSE(y_true, y_pred)
assert out.getvalue() == "Calculating MSE!\n" * 3, out.getvalue()
assert int(error) == expected_mse

graph.run_functions_eagerly(False)
assert get_MSE.experimental_get_tracing_count() == 1


def unused_return_eager(x):
  # Get index 1 will fail when `len(x) == 1`
  em.gather(x, [1]) # unused
  return x

raised = None
try:
  print(unused_return_eager(em.constant([0.0])))
except em.InvalidArgumentError as e:
  # All operations are run during eager execution so an error is raised.
  print(f'{type(e).__name__}: {e}')
  raised = e
assert raised is not None and "gather" in str(raised), raised


@graph.function
def unused_return_graph(x):
  em.gather(x, [1]) # unused
  return x

# Only needed operations are run during graph execution. The error is not raised.
# GAP 3: ember's first call runs every op eagerly while it traces, so the unused gather
# raises IndexOutOfRangeError here, where TF's graph prunes it and prints [0.]:
# print(unused_return_graph(tf.constant([0.0])))
raised = None
try:  # stand-in: the same call, its error caught
  print(unused_return_graph(em.constant([0.0])))
except em.InvalidArgumentError as e:
  print(f'{type(e).__name__}: {e}')
  raised = e
assert isinstance(raised, em.IndexOutOfRangeError), raised


x = em.random.uniform(shape=[10, 10], minval=-1, maxval=2, dtype=em.int32)

def power(x, y):
  result = em.eye(10, dtype=em.int32)
  for _ in range(y):
    result = em.matmul(x, result)
  return result

eager_s = timeit.timeit(lambda: power(x, 100), number=1000)
print("Eager execution:", eager_s, "seconds")

power_as_graph = graph.function(power)
graph_s = timeit.timeit(lambda: power_as_graph(x, 100), number=1000)
print("Graph execution:", graph_s, "seconds")
print(f"eager / graph: {eager_s / graph_s:.2f}x")  # no speed is asserted
# the same integer matrix power (int32 products wrap around alike), traced once
x_np = x.numpy().astype(np.int32)
want = np.eye(10, dtype=np.int32)
for _ in range(100):
  want = x_np @ want
np.testing.assert_array_equal(power_as_graph(x, 100).numpy(), want)
np.testing.assert_array_equal(power(x, 100).numpy(), want)
assert power_as_graph.experimental_get_tracing_count() == 1


@graph.function
def a_function_with_python_side_effect(x):
  print("Tracing!") # An eager-only side effect.
  return x * x + em.constant(2)

with printed() as out:
  # This is traced the first time.
  v1 = a_function_with_python_side_effect(em.constant(2))
  print(v1)
  # The second time through, you won't see the side effect.
  v2 = a_function_with_python_side_effect(em.constant(3))
  print(v2)
assert out.getvalue().count("Tracing!") == 1, out.getvalue()
assert int(v1) == 6 and int(v2) == 11

with printed() as out:
  # This retraces each time the Python argument changes,
  # as a Python argument could be an epoch count or other
  # hyperparameter.
  v3 = a_function_with_python_side_effect(2)
  print(v3)
  v4 = a_function_with_python_side_effect(3)
  print(v4)
assert out.getvalue().count("Tracing!") == 2, out.getvalue()
assert int(v3) == 6 and int(v4) == 11
assert a_function_with_python_side_effect.experimental_get_tracing_count() == 3
