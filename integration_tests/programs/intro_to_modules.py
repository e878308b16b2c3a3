"""Port of tensorflow/docs site/en/guide/intro_to_modules.ipynb ("Introduction to modules,
layers, and models"): modules that track variables and submodules, variables created on the
first call, checkpoints of a module (written, listed, restored into a new module before its
variables exist), a module whose __call__ is a graph function, Keras layers with a build
step, a subclassed Keras model and a functional one, and a model saved to a .keras file and
loaded back.

Upstream: https://github.com/tensorflow/docs/blob/master/site/en/guide/intro_to_modules.ipynb
Changed: names only (tf.Module -> nn.Layer, which docs/guide/coming-from.md maps it to: a
module keeps its own __call__; tf.keras.layers.Layer -> nn.layers.Layer, tf.keras.Model ->
nn.Model, tf.keras.Input -> nn.Input, keras.saving.register_keras_serializable ->
nn.saving.register_keras_serializable, tf.keras.models.load_model -> nn.models.load_model,
tf.Variable/random.normal/zeros/matmul/constant -> em.*, tf.nn.relu -> em.nn_ops.relu,
tf.errors.InvalidArgumentError -> em.InvalidArgumentError, tf.train.Checkpoint ->
checkpoint.Checkpoint, tf.train.list_variables -> checkpoint.list_variables, tf.function ->
graph.function, tf.summary.create_file_writer -> summary.create_file_writer). Files (the
checkpoint, the logs, the .keras file) go into a temporary directory instead of the
working directory; the notebook's shell cells (`!ls`) become globs of that directory, and
%tensorboard is dropped. Added: every value the guide prints is asserted (the modules'
outputs against numpy, the lists of variables, trainable variables and submodules, the
variables' names and shapes, the checkpoint's entries, the restored module's output and
variables, one trace per input signature, the error an incompatible input raises, the
functional model's summary, the reloaded model's output and weights). ember's checkpoint
of a module holds the module's four variables, as TF's, and the checkpoint's own
save_counter (0 after write(); TF's write() holds no counter).
Found (each open gap a `# GAP n:` comment holding upstream's line, with a stand-in after
it where the rest of the program needs one): 1. nn.Layer (ember's tf.Module) lists
variables in the order they were assigned (w, b), where tf.Module sorts them by attribute
name (b, w): silent; 4. no tf.summary.trace_on/trace_export and no tf.profiler
(AttributeError); 5. no SavedModel: no tf.saved_model.save/load of a module and its graph
functions (ember has no graphs to export; Keras-style model.save needs an nn.Model with a
config, and loads the Python class back, which is what this section shows SavedModel does
not need), so those cells are comments.
Fixed in ember since the first version of this port: there was no tf.train.list_variables
(GAP 2; the stand-in read the safetensors file's entries): checkpoint.list_variables is
restored, and each value is read back with checkpoint.load_variable (ember's list also
holds the save_counter entry); a graph.function decorating a method was one Function
shared by every instance, counting the traces of all of them (GAP 3): each instance now
has its own, as TF's, so new_model counts 1 trace and my_model 2.
"""

import contextlib
import glob
import io
import os
import tempfile
from datetime import datetime

import numpy as np

import ember.core as em
from ember import checkpoint, graph, nn, summary

em.random.set_seed(0)
workdir = tempfile.TemporaryDirectory()


def relu_dense(x, w, b):
  return np.maximum(np.asarray(x, np.float32) @ w.numpy() + b.numpy(), 0.0)


class SimpleModule(nn.Layer):
  def __init__(self, name=None):
    super().__init__(name=name)
    self.a_variable = em.Variable(5.0, name="train_me")
    self.non_trainable_variable = em.Variable(5.0, trainable=False, name="do_not_train_me")
  def __call__(self, x):
    return self.a_variable * x + self.non_trainable_variable

simple_module = SimpleModule(name="simple")

result = simple_module(em.constant(5.0))
print(result)
assert result.shape == () and result.dtype == em.float32 and float(result) == 30.0
assert simple_module.name == "simple"

# All trainable variables
print("trainable variables:", simple_module.trainable_variables)
# Every variable
print("all variables:", simple_module.variables)
assert [v.name for v in simple_module.trainable_variables] == ["train_me:0"]
assert simple_module.trainable_variables[0] is simple_module.a_variable
assert [v.name for v in simple_module.variables] == ["train_me:0", "do_not_train_me:0"]
assert simple_module.variables[1] is simple_module.non_trainable_variable
assert [v.trainable for v in simple_module.variables] == [True, False]
assert [float(v) for v in simple_module.variables] == [5.0, 5.0]


class Dense(nn.Layer):
  def __init__(self, in_features, out_features, name=None):
    super().__init__(name=name)
    self.w = em.Variable(
      em.random.normal([in_features, out_features]), name='w')
    self.b = em.Variable(em.zeros([out_features]), name='b')
  def __call__(self, x):
    y = em.matmul(x, self.w) + self.b
    return em.nn_ops.relu(y)


class SequentialModule(nn.Layer):
  def __init__(self, name=None):
    super().__init__(name=name)

    self.dense_1 = Dense(in_features=3, out_features=3)
    self.dense_2 = Dense(in_features=3, out_features=2)

  def __call__(self, x):
    x = self.dense_1(x)
    return self.dense_2(x)

# You have made a model!
my_model = SequentialModule(name="the_model")

# Call it, with random results
results = my_model(em.constant([[2.0, 2.0, 2.0]]))
print("Model results:", results)
expected = relu_dense(relu_dense([[2.0, 2.0, 2.0]], my_model.dense_1.w, my_model.dense_1.b),
                      my_model.dense_2.w, my_model.dense_2.b)
assert results.shape == (1, 2) and results.dtype == em.float32
np.testing.assert_allclose(results.numpy(), expected, rtol=1e-5, atol=1e-6)

print("Submodules:", my_model.submodules)
assert len(my_model.submodules) == 2
assert my_model.submodules[0] is my_model.dense_1 and my_model.submodules[1] is my_model.dense_2

for var in my_model.variables:
  print(var, "\n")
# GAP 1: tf.Module collects variables by sorted attribute name (b before w in each Dense),
# nn.Layer in the order they were assigned (w before b), silently:
# assert [(v.name, v.shape) for v in my_model.variables] == [
#     ("b:0", (3,)), ("w:0", (3, 3)), ("b:0", (2,)), ("w:0", (3, 2))]
assert [(v.name, v.shape) for v in my_model.variables] == [
    ("w:0", (3, 3)), ("b:0", (3,)), ("w:0", (3, 2)), ("b:0", (2,))]
assert [id(v) for v in my_model.variables] == [
    id(my_model.dense_1.w), id(my_model.dense_1.b), id(my_model.dense_2.w), id(my_model.dense_2.b)]
assert all(v.trainable for v in my_model.variables)
assert len(my_model.trainable_variables) == 4
np.testing.assert_array_equal(my_model.dense_1.b.numpy(), [0.0, 0.0, 0.0])


class FlexibleDenseModule(nn.Layer):
  # Note: No need for `in_features`
  def __init__(self, out_features, name=None):
    super().__init__(name=name)
    self.is_built = False
    self.out_features = out_features

  def __call__(self, x):
    # Create variables on first call.
    if not self.is_built:
      self.w = em.Variable(
        em.random.normal([x.shape[-1], self.out_features]), name='w')
      self.b = em.Variable(em.zeros([self.out_features]), name='b')
      self.is_built = True

    y = em.matmul(x, self.w) + self.b
    return em.nn_ops.relu(y)


# Used in a module
class MySequentialModule(nn.Layer):
  def __init__(self, name=None):
    super().__init__(name=name)

    self.dense_1 = FlexibleDenseModule(out_features=3)
    self.dense_2 = FlexibleDenseModule(out_features=2)

  def __call__(self, x):
    x = self.dense_1(x)
    return self.dense_2(x)

my_model = MySequentialModule(name="the_model")
assert my_model.variables == []  # nothing is created before the first call
first_results = my_model(em.constant([[2.0, 2.0, 2.0]]))
print("Model results:", first_results)
assert [(v.name, v.shape) for v in my_model.variables] == [
    ("w:0", (3, 3)), ("b:0", (3,)), ("w:0", (3, 2)), ("b:0", (2,))]
expected = relu_dense(relu_dense([[2.0, 2.0, 2.0]], my_model.dense_1.w, my_model.dense_1.b),
                      my_model.dense_2.w, my_model.dense_2.b)
assert first_results.shape == (1, 2)
np.testing.assert_allclose(first_results.numpy(), expected, rtol=1e-5, atol=1e-6)

chkp_path = os.path.join(workdir.name, "my_checkpoint")
ckpt = checkpoint.Checkpoint(model=my_model)
assert ckpt.write(chkp_path) == chkp_path

# !ls my_checkpoint*
print(sorted(os.path.basename(p) for p in glob.glob(chkp_path + "*")))
# TF writes my_checkpoint.data-00000-of-00001 and my_checkpoint.index; ember one safetensors
assert [os.path.basename(p) for p in glob.glob(chkp_path + "*")] == [
    "my_checkpoint.safetensors"]

listed = checkpoint.list_variables(chkp_path)
print(listed)
# TF: ('model/dense_1/b/.ATTRIBUTES/VARIABLE_VALUE', [3]), ... for the same four variables;
# ember's list also holds the checkpoint's save_counter (TF's write() saves no counter)
assert listed == [("model/dense_1/b", [3]), ("model/dense_1/w", [3, 3]),
                  ("model/dense_2/b", [2]), ("model/dense_2/w", [3, 2]), ("save_counter", [])]
for name, var in [("model/dense_1/w", my_model.dense_1.w), ("model/dense_1/b", my_model.dense_1.b),
                  ("model/dense_2/w", my_model.dense_2.w), ("model/dense_2/b", my_model.dense_2.b)]:
  np.testing.assert_array_equal(checkpoint.load_variable(chkp_path, name), var.numpy())

new_model = MySequentialModule()
new_checkpoint = checkpoint.Checkpoint(model=new_model)
status = new_checkpoint.restore(chkp_path)
assert new_model.variables == []  # restored when they are created, on the first call

# Should be the same result as above
restored_results = new_model(em.constant([[2.0, 2.0, 2.0]]))
print(restored_results)
np.testing.assert_array_equal(restored_results.numpy(), first_results.numpy())
for restored, original in zip(new_model.variables, my_model.variables):
  assert restored is not original and restored.shape == original.shape
  np.testing.assert_array_equal(restored.numpy(), original.numpy())
status.assert_consumed()  # every saved value went into new_model


class MySequentialModule(nn.Layer):
  def __init__(self, name=None):
    super().__init__(name=name)

    self.dense_1 = Dense(in_features=3, out_features=3)
    self.dense_2 = Dense(in_features=3, out_features=2)

  @graph.function
  def __call__(self, x):
    x = self.dense_1(x)
    return self.dense_2(x)

# You have made a model with a graph!
my_model = MySequentialModule(name="the_model")

graph_results = [my_model([[2.0, 2.0, 2.0]]),
                 my_model([[[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]])]
print(graph_results[0])
print(graph_results[1])
# Each unique signature passed into the function creates a separate graph
assert my_model.__call__.experimental_get_tracing_count() == 2
expected = relu_dense(relu_dense([[2.0, 2.0, 2.0]], my_model.dense_1.w, my_model.dense_1.b),
                      my_model.dense_2.w, my_model.dense_2.b)
assert graph_results[0].shape == (1, 2) and graph_results[1].shape == (1, 2, 2)
np.testing.assert_allclose(graph_results[0].numpy(), expected, rtol=1e-5, atol=1e-6)
np.testing.assert_allclose(graph_results[1].numpy(), np.stack([expected[0]] * 2)[None],
                           rtol=1e-5, atol=1e-6)
# the same signature again replays the first graph
again = my_model([[2.0, 2.0, 2.0]])
np.testing.assert_array_equal(again.numpy(), graph_results[0].numpy())
assert my_model.__call__.experimental_get_tracing_count() == 2

# Set up logging.
stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
logdir = os.path.join(workdir.name, f"logs/func/{stamp}")
writer = summary.create_file_writer(logdir)
assert os.path.isdir(logdir)

# Create a new model to get a fresh trace
# Otherwise the summary will not see the graph.
new_model = MySequentialModule()

# Bracket the function call with
# tf.summary.trace_on() and tf.summary.trace_export().
# GAP 4: ember.summary has no trace_on/trace_export and ember no profiler (AttributeError:
# module 'ember.summary' has no attribute 'trace_on'); the call runs without a trace:
# tf.summary.trace_on(graph=True)
# tf.profiler.experimental.start(logdir)
# Call only one tf.function when tracing.
with contextlib.redirect_stdout(io.StringIO()) as printed:
  z = print(new_model(em.constant([[2.0, 2.0, 2.0]])))
print(printed.getvalue(), end="")
assert z is None and printed.getvalue().startswith("ember.Tensor([[")
# a new model is traced afresh: its own Function, with its own count
assert new_model.__call__.experimental_get_tracing_count() == 1
assert my_model.__call__.experimental_get_tracing_count() == 2
# GAP 4: with writer.as_default():
#   tf.summary.trace_export(
#       name="my_func_trace",
#       step=0,
#       profiler_outdir=logdir)

# GAP 5: ember has no SavedModel (no tf.saved_model; a module's graph functions cannot be
# exported, and nn.Layer has no save); the cells that save, list and load it:
# tf.saved_model.save(my_model, "the_saved_model")
# !ls -l the_saved_model
# !ls -l the_saved_model/variables
# new_model = tf.saved_model.load("the_saved_model")
# isinstance(new_model, SequentialModule)  # False: a loaded SavedModel has no Python class

final_results = [my_model([[2.0, 2.0, 2.0]]), my_model([[[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]])]
print(final_results[0])
print(final_results[1])
for final, earlier in zip(final_results, graph_results):
  assert final.shape == earlier.shape
  np.testing.assert_array_equal(final.numpy(), earlier.numpy())


class MyDense(nn.layers.Layer):
  # Adding **kwargs to support base Keras layer arguments
  def __init__(self, in_features, out_features, **kwargs):
    super().__init__(**kwargs)

    # This will soon move to the build step; see below
    self.w = em.Variable(
      em.random.normal([in_features, out_features]), name='w')
    self.b = em.Variable(em.zeros([out_features]), name='b')
  def call(self, x):
    y = em.matmul(x, self.w) + self.b
    return em.nn_ops.relu(y)

simple_layer = MyDense(name="simple", in_features=3, out_features=3)

layer_results = simple_layer([[2.0, 2.0, 2.0]])
print(layer_results)
assert simple_layer.name == "simple"
assert layer_results.shape == (1, 3) and layer_results.dtype == em.float32
np.testing.assert_allclose(layer_results.numpy(),
                           relu_dense([[2.0, 2.0, 2.0]], simple_layer.w, simple_layer.b),
                           rtol=1e-5, atol=1e-6)
assert [(v.name, v.shape) for v in simple_layer.variables] == [("w:0", (3, 3)), ("b:0", (3,))]


class FlexibleDense(nn.layers.Layer):
  # Note the added `**kwargs`, as Keras supports many arguments
  def __init__(self, out_features, **kwargs):
    super().__init__(**kwargs)
    self.out_features = out_features

  def build(self, input_shape):  # Create the state of the layer (weights)
    self.w = em.Variable(
      em.random.normal([input_shape[-1], self.out_features]), name='w')
    self.b = em.Variable(em.zeros([self.out_features]), name='b')

  def call(self, inputs):  # Defines the computation from inputs to outputs
    return em.matmul(inputs, self.w) + self.b

# Create the instance of the layer
flexible_dense = FlexibleDense(out_features=3)

print(flexible_dense.variables)
assert flexible_dense.variables == [] and not flexible_dense.built

# Call it, with predictably random results
flexible_results = flexible_dense(em.constant([[2.0, 2.0, 2.0], [3.0, 3.0, 3.0]]))
print("Model results:", flexible_results)
assert flexible_results.shape == (2, 3)
np.testing.assert_allclose(
    flexible_results.numpy(),
    np.array([[2.0] * 3, [3.0] * 3], np.float32) @ flexible_dense.w.numpy()
    + flexible_dense.b.numpy(), rtol=1e-5, atol=1e-6)

print(flexible_dense.variables)
assert flexible_dense.built
assert [(v.name, v.shape) for v in flexible_dense.variables] == [("w:0", (3, 3)), ("b:0", (3,))]
assert flexible_dense.variables[0] is flexible_dense.w
assert flexible_dense.variables[1] is flexible_dense.b

failed = None
try:
  print("Model results:", flexible_dense(em.constant([[2.0, 2.0, 2.0, 2.0]])))
except em.InvalidArgumentError as e:
  print("Failed:", e)
  failed = e
assert failed is not None and "(1, 4)" in str(failed) and "(3, 3)" in str(failed), failed
assert flexible_dense.w.shape == (3, 3)  # build ran once: the variables are not remade


@nn.saving.register_keras_serializable()
class MySequentialModel(nn.Model):
  def __init__(self, name=None, **kwargs):
    super().__init__(**kwargs)

    self.dense_1 = FlexibleDense(out_features=3)
    self.dense_2 = FlexibleDense(out_features=2)
  def call(self, x):
    x = self.dense_1(x)
    return self.dense_2(x)

# You have made a Keras model!
my_sequential_model = MySequentialModel(name="the_model")

# Call it on a tensor, with random results
sequential_results = my_sequential_model(em.constant([[2.0, 2.0, 2.0]]))
print("Model results:", sequential_results)
hidden = np.full((1, 3), 2.0, np.float32) @ my_sequential_model.dense_1.w.numpy() \
    + my_sequential_model.dense_1.b.numpy()
np.testing.assert_allclose(
    sequential_results.numpy(),
    hidden @ my_sequential_model.dense_2.w.numpy() + my_sequential_model.dense_2.b.numpy(),
    rtol=1e-5, atol=1e-5)

print(my_sequential_model.variables)
assert [(v.name, v.shape) for v in my_sequential_model.variables] == [
    ("w:0", (3, 3)), ("b:0", (3,)), ("w:0", (3, 2)), ("b:0", (2,))]
assert [id(v) for v in my_sequential_model.variables] == [
    id(my_sequential_model.dense_1.w), id(my_sequential_model.dense_1.b),
    id(my_sequential_model.dense_2.w), id(my_sequential_model.dense_2.b)]
assert len(my_sequential_model.trainable_variables) == 4

print(my_sequential_model.submodules)
assert len(my_sequential_model.submodules) == 2
assert my_sequential_model.submodules[0] is my_sequential_model.dense_1
assert my_sequential_model.submodules[1] is my_sequential_model.dense_2
assert all(isinstance(m, FlexibleDense) for m in my_sequential_model.submodules)

inputs = nn.Input(shape=[3,])

x = FlexibleDense(3)(inputs)
x = FlexibleDense(2)(x)

my_functional_model = nn.Model(inputs=inputs, outputs=x)

with contextlib.redirect_stdout(io.StringIO()) as printed:
  my_functional_model.summary()
print(printed.getvalue(), end="")
model_summary = printed.getvalue()
assert "(FlexibleDense)" in model_summary and "(None, 3)" in model_summary, model_summary
assert "(None, 2)" in model_summary, model_summary
assert "Total params: 20" in model_summary, model_summary  # 3*3+3 and 3*2+2
assert "Trainable params: 20" in model_summary, model_summary
assert my_functional_model.count_params() == 20

functional_results = my_functional_model(em.constant([[2.0, 2.0, 2.0]]))
print(functional_results)
first, second = [layer for layer in my_functional_model.layers if isinstance(layer, FlexibleDense)]
assert functional_results.shape == (1, 2)
np.testing.assert_allclose(
    functional_results.numpy(),
    (np.full((1, 3), 2.0, np.float32) @ first.w.numpy() + first.b.numpy()) @ second.w.numpy()
    + second.b.numpy(), rtol=1e-5, atol=1e-5)

keras_path = os.path.join(workdir.name, "exname_of_file.keras")
my_sequential_model.save(keras_path)
assert os.path.isfile(keras_path)

reconstructed_model = nn.models.load_model(keras_path)
assert type(reconstructed_model) is MySequentialModel

reconstructed_results = reconstructed_model(em.constant([[2.0, 2.0, 2.0]]))
print(reconstructed_results)
# the same result when called on the same data: the weights came back, not new random ones
np.testing.assert_array_equal(reconstructed_results.numpy(), sequential_results.numpy())
assert len(reconstructed_model.variables) == 4
for loaded, original in zip(reconstructed_model.variables, my_sequential_model.variables):
  assert loaded is not original and loaded.shape == original.shape
  np.testing.assert_array_equal(loaded.numpy(), original.numpy())

workdir.cleanup()
