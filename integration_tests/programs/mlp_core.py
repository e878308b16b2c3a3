"""Port of tensorflow/docs site/en/guide/core/mlp_core.ipynb ("Multilayer perceptrons for
digit recognition with Core APIs"): MNIST split into training, validation and test sets, a
dense layer and an MLP written as modules with Xavier initialization, the ReLU and softmax
activations, a sparse cross-entropy loss, an accuracy function, Adam written by hand, a
custom training loop, an export module with an input signature (preprocessing, the model and
class prediction) saved and loaded, the test accuracy, the accuracy of each digit and the
confusion matrix.

Upstream: https://github.com/tensorflow/docs/blob/0fb5bfa60839f453fed05d53917adb8bd2460c8c/site/en/guide/core/mlp_core.ipynb
Changed: names only (tf.random.set_seed/linspace/cast/sqrt/random.uniform/Variable/zeros/
add/matmul/identity/reshape/squeeze/argmax/equal/reduce_mean/square/fill -> em.*, tf.nn.relu/
softmax/sparse_softmax_cross_entropy_with_logits -> em.nn_ops.*, tf.Module -> nn.Layer (which
docs/guide/coming-from.md maps it to), tf.GradientTape -> tape.GradientTape, tf.function ->
graph.function, tf.TensorSpec -> graph.TensorSpec, tf.uint8 -> em.uint8), except the GAPs
below. tensorflow_datasets cannot download here: a local tfds.load with tfds's arguments
(split slices, batch_size, as_supervised) returns the real MNIST files read with
ember.data.datasets.mnist: uint8 [28, 28, 1] images and int64 labels as tfds gives them
(rescaled back from ember's [0, 1] floats, exactly), batched Datasets for batch_size=128 and
whole tensors for batch_size=-1; the examples are in the files' order (tfds's own order is a
fixed shuffle of them). The plots (matplotlib, seaborn's countplot and heatmap) are dropped;
what they would show is asserted. sklearn is not installed here: a numpy confusion matrix
stands in for sk_metrics.confusion_matrix. The saved model goes into a temporary directory.
Reduced (EMBER_PROGRAMS_FULL=1 restores it): 6,000 training, 1,000 validation and 2,000
test images, 3 epochs (upstream: 50,000, 10,000 and 10,000, 10 epochs; the splits become
'train[1000:7000]', 'train[0:1000]', 'test[:2000]'); EMBER_PROGRAMS_SHORT=1 (the
strict-GPU run): 1,000, 500 and 500 images, 1 epoch, no accuracy thresholds. Upstream's
layer sizes (700, 500, 10), batch size 128 and Adam's defaults are kept. A numpy seed is
added beside upstream's tf.random.set_seed(22).
Added: the split sizes, shapes and dtypes of the data and of the preprocessed batches (float32
in [0, 1], equal to the uint8 images / 255); every digit in the visualised 1,500 (the
countplot); linspace, relu and softmax(axis=0) against numpy; the Xavier limit against
sqrt(6 / (n + m)) and the draws inside it, with the spread of a uniform; each dense layer and
the MLP against a numpy forward pass; on a second MLP (upstream's sizes, its own Adam), two
train_steps against numpy: the loss, the accuracy and the tape's gradients against numpy
backpropagation in float64, and each update against Adam's formulas in numpy (with t = 1 and
2); the epoch means against numpy means of the batch values; the loaded export module's
classes (one trace for every batch size) against the argmax of a numpy forward pass of the
restored weights, the restored weights equal to the trained ones, the test accuracy, the
per-digit accuracies and the confusion matrix against numpy. Training thresholds (CPU run
only): the last epoch's training loss below 0.35 and below half of the first batch's (which
is the untrained model's, near ln 10 = 2.3), the training accuracy rising, the validation
and the test accuracy above 0.85 (ten balanced classes: an untrained model scores about 0.1;
this reduced run reaches 0.92 and 0.91; with EMBER_PROGRAMS_FULL=1, 0.98 and 0.97, as
upstream's), and every digit's accuracy above 0.6 (this run: 0.80 to 0.98).
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
Fixed in ember since the first version of this port: 2. nn.Layer's `layers` (its direct
sub-layers) was a read-only property, so MLP's `self.layers = layers` raised AttributeError
"property 'layers' of 'MLP' object has no setter" (the list was stored as `self.dense_layers`);
a Layer may now assign its own `layers` (only a Model reserves it, as Keras), and upstream's
lines run. 1. nn.Layer (ember's tf.Module) needed super().__init__() before a variable or a
layer was assigned to it (AttributeError: "call super().__init__() before assigning layers or
variables"); a Layer subclass that does not call it is now initialized with the defaults on
its first such assignment or when it is assigned to a parent (upstream's DenseLayer makes its
variables on its first call, inside the MLP), and upstream's classes run without the call.
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value or behaviour and no error):
3. no SavedModel (no tf.saved_model.save/load: AttributeError; as intro_to_modules.py's
GAP 5): a checkpoint of the export module, restored into a new ExportModule around a new
MLP (its variables take the saved values when they are created), stands in.
4. (silent) em.linspace(-2, 2, 201) is float32; tf.linspace gives float64 for int start and
stop (its delta is an int32 truediv; ember keeps float32 there, by design, and follows a
floating start's dtype as TensorFlow does); harmless here, as upstream casts to float32 next.
5. (silent, harmless here) the order of model.variables: nn.Layer lists each DenseLayer's
variables in assignment order (w, b), tf.Module by sorted attribute name (b, w), as
intro_to_modules.py's GAP 1; the gradients and Adam's slots follow the same list, so the
training is the same.
"""

import os
import pathlib
import tempfile
import types
import unittest

import numpy as np

import ember.core as em
from ember import checkpoint, data, graph, nn
from ember import tape as tape_lib

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
  raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
np.random.seed(0)

# Reduced sizes (see the header): the splits upstream names, and how much of each file is read.
SPLITS = (['train[10000:]', 'train[0:10000]', 'test'] if FULL else
          ['train[500:1500]', 'train[0:500]', 'test[:500]'] if SHORT else
          ['train[1000:7000]', 'train[0:1000]', 'test[:2000]'])
N_TRAIN, N_VAL = (50000, 10000) if FULL else (1000, 500) if SHORT else (6000, 1000)
FILE_SIZES = {'train': N_VAL + N_TRAIN, 'test': 10000 if FULL else 500 if SHORT else 2000}
EPOCHS = 10 if FULL else 1 if SHORT else 3

# ---------------------------------------------------------------------------------------
# Added: the stand-in for tensorflow_datasets (see the header).
_FILES = {}


def _mnist_file(name):  # uint8 [n, 28, 28, 1] images and int64 labels, as tfds gives them
  if name not in _FILES:
    n = FILE_SIZES[name]
    x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
    images = np.asarray(x) * 255.0
    assert np.abs(images - images.round()).max() < 1e-3  # ember's floats are the bytes / 255
    _FILES[name] = (images.round().astype(np.uint8).reshape(n, 28, 28, 1),
                    np.asarray(y).astype(np.int64))
  return _FILES[name]


def _tfds_load(name, split, batch_size, as_supervised):
  assert name == "mnist" and as_supervised
  out = []
  for s in split:
    file, _, piece = s.partition('[')
    images, labels = _mnist_file(file)
    lo, _, hi = piece.rstrip(']').partition(':')
    part = slice(int(lo) if lo else None, int(hi) if hi else None)
    images, labels = images[part], labels[part]
    if batch_size == -1:  # the whole split as two tensors
      out.append((em.constant(images), em.constant(labels)))
    else:
      out.append(data.Dataset.from_tensor_slices((images, labels)).batch(batch_size))
  return out


tfds = types.SimpleNamespace(load=_tfds_load)


def np_forward(layers, x):  # Added: the MLP in numpy (float64), from the layers' variables
  x = np.asarray(x, np.float64)
  for i, layer in enumerate(layers):
    x = x @ layer.w.numpy().astype(np.float64) + layer.b.numpy().astype(np.float64)
    if i < len(layers) - 1:
      x = np.maximum(x, 0.0)
  return x


def np_log_softmax(z, axis=-1):
  z = z - z.max(axis=axis, keepdims=True)
  return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


# ---------------------------------------------------------------------------------------
# ## Setup

em.random.set_seed(22)

# ## Load the data

train_data, val_data, test_data = tfds.load("mnist",
                                            split=SPLITS,
                                            batch_size=128, as_supervised=True)

x_viz, y_viz = tfds.load("mnist", split=['train[:1500]'], batch_size=-1, as_supervised=True)[0]
x_viz = em.squeeze(x_viz, axis=3)
assert x_viz.shape == (1500, 28, 28) and x_viz.dtype == em.uint8  # Added
assert y_viz.shape == (1500,) and y_viz.dtype == em.int64

# (the 3x3 grid of x_viz[i] with "True Label: {y_viz[i]}" is dropped with the plots)
# sns.countplot(y_viz.numpy()) is dropped; what it shows: every digit is well represented
counts = np.bincount(y_viz.numpy(), minlength=10)
print("digit counts:", counts.tolist())
assert counts.sum() == 1500 and len(counts) == 10 and counts.min() > 100, counts


# ## Preprocess the data

def preprocess(x, y):
  # Reshaping the data
  x = em.reshape(x, shape=[-1, 784])
  # Rescaling the data
  x = x/255
  return x, y

train_data, val_data = train_data.map(preprocess), val_data.map(preprocess)

# Added: the batches, their sizes and their values (tfds's batches keep the remainder)
x_first, y_first = next(iter(train_data))
assert x_first.shape == (128, 784) and x_first.dtype == em.float32, (x_first.shape, x_first.dtype)
assert y_first.shape == (128,) and np.asarray(y_first).dtype == np.int64
raw_images, raw_labels = _mnist_file('train')
first_train = int(SPLITS[0][len('train['):].split(':')[0])
np.testing.assert_array_equal(
    np.asarray(x_first), raw_images[first_train:first_train + 128].reshape(128, 784) / np.float32(255))
np.testing.assert_array_equal(np.asarray(y_first), raw_labels[first_train:first_train + 128])
assert sum(int(x.shape[0]) for x, _ in train_data) == N_TRAIN
assert [int(y.shape[0]) for _, y in val_data] == [128] * (N_VAL // 128) + [N_VAL % 128]


# ## Build the MLP

x = em.linspace(-2, 2, 201)
# GAP 4 (silent): TF's x is float64 here (int start and stop); ember's is float32
assert x.dtype == em.float32
x = em.cast(x, em.float32)
# plt.plot(x, tf.nn.relu(x)) is dropped; what it plots:
np.testing.assert_allclose(x.numpy(), np.linspace(-2, 2, 201), atol=1e-6)  # Added
np.testing.assert_array_equal(em.nn_ops.relu(x).numpy(), np.maximum(x.numpy(), 0))

x = em.linspace(-4, 4, 201)
x = em.cast(x, em.float32)
# plt.plot(x, tf.nn.softmax(x, axis=0)) is dropped; what it plots:
softmax_x = em.nn_ops.softmax(x, axis=0)
assert softmax_x.shape == (201,) and softmax_x.dtype == em.float32  # Added
np.testing.assert_allclose(softmax_x.numpy(), np.exp(np_log_softmax(x.numpy().astype(np.float64))),
                           rtol=1e-5, atol=1e-9)
assert abs(float(em.reduce_sum(softmax_x)) - 1.0) < 1e-5


# ### The dense layer

def xavier_init(shape):
  # Computes the xavier initialization values for a weight matrix
  in_dim, out_dim = shape
  xavier_lim = em.sqrt(6.)/em.sqrt(em.cast(in_dim + out_dim, em.float32))
  weight_vals = em.random.uniform(shape=(in_dim, out_dim),
                                  minval=-xavier_lim, maxval=xavier_lim, seed=22)
  return weight_vals


# Added: the limit and the draws (a uniform on [-lim, lim) has std lim / sqrt(3))
_w = xavier_init(shape=(784, 700)).numpy()
_lim = np.sqrt(6 / (784 + 700))
assert _w.shape == (784, 700) and _w.dtype == np.float32
assert -_lim <= _w.min() < -0.99 * _lim and 0.99 * _lim < _w.max() < _lim, (_w.min(), _w.max())
assert abs(_w.mean()) < 0.01 * _lim and abs(_w.std() - _lim / np.sqrt(3)) < 0.01 * _lim
assert not np.array_equal(_w, xavier_init(shape=(784, 700)).numpy())  # a new draw each call


class DenseLayer(nn.Layer):

  def __init__(self, out_dim, weight_init=xavier_init, activation=em.identity):
    # Initialize the dimensions and activation functions
    self.out_dim = out_dim
    self.weight_init = weight_init
    self.activation = activation
    self.built = False

  def __call__(self, x):
    if not self.built:
      # Infer the input dimension based on first call
      self.in_dim = x.shape[1]
      # Initialize the weights and biases using Xavier scheme
      self.w = em.Variable(xavier_init(shape=(self.in_dim, self.out_dim)))
      self.b = em.Variable(em.zeros(shape=(self.out_dim,)))
      self.built = True
    # Compute the forward pass
    z = em.add(em.matmul(x, self.w), self.b)
    return self.activation(z)


class MLP(nn.Layer):

  def __init__(self, layers):
    self.layers = layers

  @graph.function
  def __call__(self, x, preds=False):
    # Execute the model's layers sequentially
    for layer in self.layers:
      x = layer(x)
    return x


hidden_layer_1_size = 700
hidden_layer_2_size = 500
output_size = 10

mlp_model = MLP([
    DenseLayer(out_dim=hidden_layer_1_size, activation=em.nn_ops.relu),
    DenseLayer(out_dim=hidden_layer_2_size, activation=em.nn_ops.relu),
    DenseLayer(out_dim=output_size)])

# Added: the variables appear on the first call; the outputs against numpy
assert mlp_model.variables == [] and not mlp_model.layers[0].built
logits_first = mlp_model(x_first)
assert logits_first.shape == (128, 10) and logits_first.dtype == em.float32
# GAP 5 (silent): TF's order is [b, w] for each layer (sorted names); ember's [w, b]
assert [tuple(v.shape) for v in mlp_model.variables] == [
    (784, 700), (700,), (700, 500), (500,), (500, 10), (10,)]
np.testing.assert_allclose(logits_first.numpy(), np_forward(mlp_model.layers, x_first),
                           rtol=1e-4, atol=1e-5)
_h1 = mlp_model.layers[0](x_first)
assert _h1.shape == (128, 700) and float(em.reduce_min(_h1)) == 0.0
np.testing.assert_allclose(_h1.numpy(), np.maximum(np.asarray(x_first, np.float64) @
                                                   mlp_model.layers[0].w.numpy(), 0),
                           rtol=1e-4, atol=1e-5)
assert not np.any(mlp_model.layers[0].b.numpy())  # zeros before training
assert abs(np.abs(mlp_model.layers[0].w.numpy()).max() - _lim) < 1e-3 * _lim


# ### Define the loss function

def cross_entropy_loss(y_pred, y):
  # Compute cross entropy loss with a sparse operation
  sparse_ce = em.nn_ops.sparse_softmax_cross_entropy_with_logits(labels=y, logits=y_pred)
  return em.reduce_mean(sparse_ce)


def accuracy(y_pred, y):
  # Compute accuracy after extracting class predictions
  class_preds = em.argmax(em.nn_ops.softmax(y_pred), axis=1)
  is_equal = em.equal(y, class_preds)
  return em.reduce_mean(em.cast(is_equal, em.float32))


# Added: both against numpy, on the untrained model's first batch
_z = logits_first.numpy().astype(np.float64)
_y = np.asarray(y_first)
_loss0 = cross_entropy_loss(logits_first, y_first)
assert _loss0.shape == () and _loss0.dtype == em.float32
assert abs(float(_loss0) - (-np_log_softmax(_z)[np.arange(128), _y].mean())) < 1e-5
assert 1.5 < float(_loss0) < 3.5  # near ln(10) = 2.30 untrained
assert float(accuracy(logits_first, y_first)) == np.mean(_z.argmax(1) == _y)
assert em.argmax(em.nn_ops.softmax(logits_first), axis=1).dtype == em.int64


# ### Train the model

class Adam:

    def __init__(self, learning_rate=1e-3, beta_1=0.9, beta_2=0.999, ep=1e-7):
      # Initialize optimizer parameters and variable slots
      self.beta_1 = beta_1
      self.beta_2 = beta_2
      self.learning_rate = learning_rate
      self.ep = ep
      self.t = 1.
      self.v_dvar, self.s_dvar = [], []
      self.built = False

    def apply_gradients(self, grads, vars):
      # Initialize variables on the first call
      if not self.built:
        for var in vars:
          v = em.Variable(em.zeros(shape=var.shape))
          s = em.Variable(em.zeros(shape=var.shape))
          self.v_dvar.append(v)
          self.s_dvar.append(s)
        self.built = True
      # Update the model variables given their gradients
      for i, (d_var, var) in enumerate(zip(grads, vars)):
        self.v_dvar[i].assign(self.beta_1*self.v_dvar[i] + (1-self.beta_1)*d_var)
        self.s_dvar[i].assign(self.beta_2*self.s_dvar[i] + (1-self.beta_2)*em.square(d_var))
        v_dvar_bc = self.v_dvar[i]/(1-(self.beta_1**self.t))
        s_dvar_bc = self.s_dvar[i]/(1-(self.beta_2**self.t))
        var.assign_sub(self.learning_rate*(v_dvar_bc/(em.sqrt(s_dvar_bc) + self.ep)))
      self.t += 1.
      return


def train_step(x_batch, y_batch, loss, acc, model, optimizer):
  # Update the model state given a batch of data
  with tape_lib.GradientTape() as tape:
    y_pred = model(x_batch)
    batch_loss = loss(y_pred, y_batch)
  batch_acc = acc(y_pred, y_batch)
  grads = tape.gradient(batch_loss, model.variables)
  optimizer.apply_gradients(grads, model.variables)
  return batch_loss, batch_acc


def val_step(x_batch, y_batch, loss, acc, model):
  # Evaluate the model on given a batch of validation data
  y_pred = model(x_batch)
  batch_loss = loss(y_pred, y_batch)
  batch_acc = acc(y_pred, y_batch)
  return batch_loss, batch_acc


# ---------------------------------------------------------------------------------------
# Added: two train_steps of a second MLP (upstream's sizes) against numpy, in float64:
# the loss, the accuracy and the gradients by backpropagation, then Adam's update with the
# tape's own gradients (so that the check of the optimizer does not hang on float32
# rounding of near-zero gradients).
def np_backprop(layers, x, y):
  ws = [layer.w.numpy().astype(np.float64) for layer in layers]
  bs = [layer.b.numpy().astype(np.float64) for layer in layers]
  acts = [np.asarray(x, np.float64)]
  for i in range(3):
    z = acts[-1] @ ws[i] + bs[i]
    acts.append(np.maximum(z, 0.0) if i < 2 else z)
  logp = np_log_softmax(acts[-1])
  n = len(y)
  loss = -logp[np.arange(n), y].mean()
  dz = np.exp(logp)
  dz[np.arange(n), y] -= 1.0
  dz /= n
  grads = [None] * 3
  for i in (2, 1, 0):
    grads[i] = (acts[i].T @ dz, dz.sum(0))
    if i:
      dz = (dz @ ws[i].T) * (acts[i] > 0)
  return loss, np.mean(acts[-1].argmax(1) == y), grads


check_mlp = MLP([
    DenseLayer(out_dim=hidden_layer_1_size, activation=em.nn_ops.relu),
    DenseLayer(out_dim=hidden_layer_2_size, activation=em.nn_ops.relu),
    DenseLayer(out_dim=output_size)])
check_mlp(x_first)
check_opt = Adam()
np_v = {id(v): np.zeros(v.shape) for v in check_mlp.variables}
np_s = {id(v): np.zeros(v.shape) for v in check_mlp.variables}
for t in (1, 2):
  np_loss, np_acc, np_grads = np_backprop(check_mlp.layers, x_first, _y)
  with tape_lib.GradientTape() as _tape:
    _loss = cross_entropy_loss(check_mlp(x_first), y_first)
  em_grads = _tape.gradient(_loss, check_mlp.variables)
  for layer, (gw, gb) in zip(check_mlp.layers, np_grads):
    by_var = {id(v): g for v, g in zip(check_mlp.variables, em_grads)}
    np.testing.assert_allclose(by_var[id(layer.w)].numpy(), gw, rtol=1e-3, atol=2e-6)
    np.testing.assert_allclose(by_var[id(layer.b)].numpy(), gb, rtol=1e-3, atol=2e-6)
  before = [v.numpy().astype(np.float64) for v in check_mlp.variables]
  step_loss, step_acc = train_step(x_first, y_first, cross_entropy_loss, accuracy, check_mlp,
                                   check_opt)
  assert abs(float(step_loss) - np_loss) < 1e-5 and abs(float(step_acc) - np_acc) < 1e-6
  assert check_opt.t == t + 1 and len(check_opt.v_dvar) == 6
  for v, g, old in zip(check_mlp.variables, em_grads, before):
    g = g.numpy().astype(np.float64)
    np_v[id(v)] = 0.9 * np_v[id(v)] + 0.1 * g
    np_s[id(v)] = 0.999 * np_s[id(v)] + 0.001 * g * g
    v_bc, s_bc = np_v[id(v)] / (1 - 0.9 ** t), np_s[id(v)] / (1 - 0.999 ** t)
    np.testing.assert_allclose(v.numpy(), old - 1e-3 * v_bc / (np.sqrt(s_bc) + 1e-7),
                               rtol=0, atol=1e-6)
  np.testing.assert_allclose(check_opt.v_dvar[0].numpy(), np_v[id(check_mlp.variables[0])],
                             rtol=1e-4, atol=1e-9)
del check_mlp, check_opt
# ---------------------------------------------------------------------------------------


def train_model(mlp, train_data, val_data, loss, acc, optimizer, epochs):
  # Initialize data structures
  train_losses, train_accs = [], []
  val_losses, val_accs = [], []

  # Format training loop and begin training
  for epoch in range(epochs):
    batch_losses_train, batch_accs_train = [], []
    batch_losses_val, batch_accs_val = [], []

    # Iterate over the training data
    for x_batch, y_batch in train_data:
      # Compute gradients and update the model's parameters
      batch_loss, batch_acc = train_step(x_batch, y_batch, loss, acc, mlp, optimizer)
      # Keep track of batch-level training performance
      batch_losses_train.append(batch_loss)
      batch_accs_train.append(batch_acc)

    # Iterate over the validation data
    for x_batch, y_batch in val_data:
      batch_loss, batch_acc = val_step(x_batch, y_batch, loss, acc, mlp)
      batch_losses_val.append(batch_loss)
      batch_accs_val.append(batch_acc)

    # Keep track of epoch-level model performance
    train_loss, train_acc = em.reduce_mean(batch_losses_train), em.reduce_mean(batch_accs_train)
    val_loss, val_acc = em.reduce_mean(batch_losses_val), em.reduce_mean(batch_accs_val)
    train_losses.append(train_loss)
    train_accs.append(train_acc)
    val_losses.append(val_loss)
    val_accs.append(val_acc)
    print(f"Epoch: {epoch}")
    print(f"Training loss: {train_loss:.3f}, Training accuracy: {train_acc:.3f}")
    print(f"Validation loss: {val_loss:.3f}, Validation accuracy: {val_acc:.3f}")
    # Added: the epoch means against numpy's means of the batch values
    for mean, values in ((train_loss, batch_losses_train), (train_acc, batch_accs_train),
                         (val_loss, batch_losses_val), (val_acc, batch_accs_val)):
      assert mean.shape == () and mean.dtype == em.float32
      assert abs(float(mean) - np.mean([float(b) for b in values])) < 1e-5
    assert len(batch_losses_train) == -(-N_TRAIN // 128)
    first_batch_losses.append(float(batch_losses_train[0]))  # Added
  return train_losses, train_accs, val_losses, val_accs


first_batch_losses = []  # Added
train_losses, train_accs, val_losses, val_accs = train_model(mlp_model, train_data, val_data,
                                                             loss=cross_entropy_loss, acc=accuracy,
                                                             optimizer=Adam(), epochs=EPOCHS)

# ### Performance evaluation (plot_metrics' plots are dropped; what they show is asserted)
assert len(train_losses) == len(train_accs) == len(val_losses) == len(val_accs) == EPOCHS
# Added: the first batch's loss is the untrained model's, computed above
assert abs(first_batch_losses[0] - float(_loss0)) < 1e-5
if not SHORT:
  assert float(train_losses[-1]) < min(0.35, 0.5 * first_batch_losses[0]), train_losses
  assert float(val_accs[-1]) > 0.85, val_accs
  assert float(train_accs[-1]) > float(train_accs[0]), train_accs


# ## Save and load the model

class ExportModule(nn.Layer):
  def __init__(self, model, preprocess, class_pred):
    # Initialize pre and postprocessing functions
    self.model = model
    self.preprocess = preprocess
    self.class_pred = class_pred

  @graph.function(input_signature=[graph.TensorSpec(shape=[None, None, None, None], dtype=em.uint8)])
  def __call__(self, x):
    # Run the ExportModule for new data points
    x = self.preprocess(x)
    y = self.model(x)
    y = self.class_pred(y)
    return y


def preprocess_test(x):
  # The export module takes in unprocessed and unlabeled data
  x = em.reshape(x, shape=[-1, 784])
  x = x/255
  return x


def class_pred_test(y):
  # Generate class predictions from MLP output
  return em.argmax(em.nn_ops.softmax(y), axis=1)


mlp_model_export = ExportModule(model=mlp_model,
                                preprocess=preprocess_test,
                                class_pred=class_pred_test)

models = tempfile.mkdtemp()
save_path = os.path.join(models, 'mlp_model_export')
# GAP 3: tf.saved_model.save(mlp_model_export, save_path)
saved = checkpoint.Checkpoint(model=mlp_model_export).save(save_path)

# GAP 3: mlp_loaded = tf.saved_model.load(save_path)
mlp_loaded = ExportModule(model=MLP([DenseLayer(out_dim=hidden_layer_1_size, activation=em.nn_ops.relu),
                                     DenseLayer(out_dim=hidden_layer_2_size, activation=em.nn_ops.relu),
                                     DenseLayer(out_dim=output_size)]),
                          preprocess=preprocess_test, class_pred=class_pred_test)
checkpoint.Checkpoint(model=mlp_loaded).restore(saved)


def accuracy_score(y_pred, y):
  # Generic accuracy function
  is_equal = em.equal(y_pred, y)
  return em.reduce_mean(em.cast(is_equal, em.float32))


x_test, y_test = tfds.load("mnist", split=[SPLITS[2]], batch_size=-1, as_supervised=True)[0]
test_classes = mlp_loaded(x_test)
test_acc = accuracy_score(test_classes, y_test)
print(f"Test Accuracy: {test_acc:.3f}")

# Added: the loaded module against the trained weights and a numpy forward pass
n_test = FILE_SIZES['test']
assert x_test.shape == (n_test, 28, 28, 1) and x_test.dtype == em.uint8
assert test_classes.shape == (n_test,) and test_classes.dtype == em.int64
for trained, loaded in zip(mlp_model.variables, mlp_loaded.model.variables):
  np.testing.assert_array_equal(loaded.numpy(), trained.numpy())
np_logits = np_forward(mlp_loaded.model.layers, x_test.numpy().reshape(-1, 784) / 255)
np_classes = np_logits.argmax(1)
_top2 = np.sort(np_logits, axis=1)[:, -2:]
_clear = _top2[:, 1] - _top2[:, 0] > 1e-3  # leave out near ties, which float32 may flip
assert _clear.mean() > 0.99
np.testing.assert_array_equal(test_classes.numpy()[_clear], np_classes[_clear])
assert abs(float(test_acc) - np.mean(test_classes.numpy() == y_test.numpy())) < 1e-6
np.testing.assert_array_equal(mlp_model_export(x_test[:7]).numpy(), test_classes.numpy()[:7])
assert mlp_loaded(x_test[:3]).shape == (3,)
if hasattr(mlp_loaded.__call__, "experimental_get_tracing_count"):
  assert mlp_loaded.__call__.experimental_get_tracing_count() == 1  # one signature, all sizes
if not SHORT:
  assert float(test_acc) > 0.85, float(test_acc)

print("Accuracy breakdown by digit:")
print("---------------------------")
label_accs = {}
for label in range(10):
  label_ind = (y_test == label)
  # extract predictions for specific true label
  pred_label = test_classes[label_ind]
  label_filled = em.cast(em.fill(pred_label.shape[0], label), em.int64)
  # compute class-wise accuracy
  label_accs[accuracy_score(pred_label, label_filled).numpy()] = label
for key in sorted(label_accs):
  print(f"Digit {label_accs[key]}: {key:.3f}")

# Added: each digit's accuracy against numpy (the dict keeps one digit per distinct value)
_yt, _pc = y_test.numpy(), test_classes.numpy()
np_digit_accs = {d: np.mean(_pc[_yt == d] == d) for d in range(10)}
assert len(label_accs) == len(set(np.float32(a) for a in np_digit_accs.values()))
for key, digit in label_accs.items():
  assert abs(float(key) - np_digit_accs[digit]) < 1e-6, (digit, key)
if not SHORT:
  assert min(np_digit_accs.values()) > 0.6, np_digit_accs


# sklearn is not installed here: sk_metrics.confusion_matrix(a, b) stands in as numpy
sk_metrics = types.SimpleNamespace(confusion_matrix=lambda a, b: np.bincount(
    np.asarray(a) * 10 + np.asarray(b), minlength=100).reshape(10, 10))


def show_confusion_matrix(test_labels, test_classes):
  # Compute confusion matrix and normalize
  confusion = sk_metrics.confusion_matrix(test_labels.numpy(),
                                          test_classes.numpy())
  confusion_normalized = confusion / confusion.sum(axis=1)
  # (the seaborn heatmap and its labels are dropped)
  return confusion, confusion_normalized  # Added: returned to be checked


confusion, confusion_normalized = show_confusion_matrix(y_test, test_classes)
assert confusion.sum() == n_test and confusion_normalized.shape == (10, 10)  # Added
for d in range(10):
  assert confusion[d].sum() == np.sum(_yt == d)
  assert confusion[d, d] == np.sum((_yt == d) & (_pc == d))
  assert abs(confusion[d, d] / confusion[d].sum() - np_digit_accs[d]) < 1e-12
