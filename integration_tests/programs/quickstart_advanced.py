"""Port of tensorflow/docs site/en/tutorials/quickstart/advanced.ipynb ("TensorFlow 2 quickstart
for experts": a subclassed CNN trained with GradientTape).

Upstream: https://github.com/tensorflow/docs/blob/master/site/en/tutorials/quickstart/advanced.ipynb
Changed: names only (tf.keras.layers -> nn.layers, tf.keras.Model -> nn.Model, tf.data ->
ember.data, tf.GradientTape -> tape.GradientTape, tf.keras.optimizers.Adam ->
nn.optimizers.Adam, tf.keras.metrics -> nn.metrics, tf.keras.losses -> nn.losses,
tf.newaxis -> np.newaxis, @tf.function -> @graph.function);
tf.keras.datasets.mnist.load_data() -> ember.data.datasets.mnist(data_dir=...).
Reduced (EMBER_PROGRAMS_FULL=1 restores it): 3,000 training and 1,000 test images, 1 epoch
instead of 60,000/10,000 and 5 (EMBER_PROGRAMS_SHORT=1: 600/200). Added: the test accuracy
must pass 84% (not in the short run).
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
"""

import os
import pathlib
import unittest

import numpy as np

import ember.core as em
from ember import data, graph, nn, tape
from ember.nn import Model
from ember.nn.layers import Conv2D, Dense, Flatten

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
N_TRAIN, N_TEST = (60000, 10000) if FULL else (600, 200) if SHORT else (3000, 1000)
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
  raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)


def load_data():
  def split(name, n):
    x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
    return (np.asarray(x).reshape(-1, 28, 28) * 255.0).round(), np.asarray(y)
  return split("train", N_TRAIN), split("test", N_TEST)


(x_train, y_train), (x_test, y_test) = load_data()
x_train, x_test = x_train / 255.0, x_test / 255.0

# Add a channels dimension
x_train = x_train[..., np.newaxis].astype("float32")
x_test = x_test[..., np.newaxis].astype("float32")

train_ds = data.Dataset.from_tensor_slices(
    (x_train, y_train)).shuffle(10000).batch(32)

test_ds = data.Dataset.from_tensor_slices((x_test, y_test)).batch(32)


class MyModel(Model):
  def __init__(self):
    super().__init__()
    self.conv1 = Conv2D(32, 3, activation='relu')
    self.flatten = Flatten()
    self.d1 = Dense(128, activation='relu')
    self.d2 = Dense(10)

  def call(self, x):
    x = self.conv1(x)
    x = self.flatten(x)
    x = self.d1(x)
    return self.d2(x)


# Create an instance of the model
model = MyModel()

loss_object = nn.losses.SparseCategoricalCrossentropy(from_logits=True)

optimizer = nn.optimizers.Adam()

train_loss = nn.metrics.Mean(name='train_loss')
train_accuracy = nn.metrics.SparseCategoricalAccuracy(name='train_accuracy')

test_loss = nn.metrics.Mean(name='test_loss')
test_accuracy = nn.metrics.SparseCategoricalAccuracy(name='test_accuracy')


@graph.function
def train_step(images, labels):
  with tape.GradientTape() as t:
    # training=True is only needed if there are layers with different
    # behavior during training versus inference (e.g. Dropout).
    predictions = model(images, training=True)
    loss = loss_object(labels, predictions)
  gradients = t.gradient(loss, model.trainable_variables)
  optimizer.apply_gradients(zip(gradients, model.trainable_variables))

  train_loss(loss)
  train_accuracy(labels, predictions)


@graph.function
def test_step(images, labels):
  # training=False is only needed if there are layers with different
  # behavior during training versus inference (e.g. Dropout).
  predictions = model(images, training=False)
  t_loss = loss_object(labels, predictions)

  test_loss(t_loss)
  test_accuracy(labels, predictions)


EPOCHS = 5 if FULL else 1

for epoch in range(EPOCHS):
  # Reset the metrics at the start of the next epoch
  train_loss.reset_state()
  train_accuracy.reset_state()
  test_loss.reset_state()
  test_accuracy.reset_state()

  for images, labels in train_ds:
    train_step(images, labels)

  for test_images, test_labels in test_ds:
    test_step(test_images, test_labels)

  print(
    f'Epoch {epoch + 1}, '
    f'Loss: {train_loss.result():0.2f}, '
    f'Accuracy: {train_accuracy.result() * 100:0.2f}, '
    f'Test Loss: {test_loss.result():0.2f}, '
    f'Test Accuracy: {test_accuracy.result() * 100:0.2f}'
  )

# The metric must agree with an accuracy computed by hand from the model's outputs.
by_hand = float(np.mean(np.argmax(model(x_test).numpy(), -1) == y_test))
np.testing.assert_allclose(float(test_accuracy.result()), by_hand, atol=1e-6)
assert SHORT or float(test_accuracy.result()) > 0.84, float(test_accuracy.result())
