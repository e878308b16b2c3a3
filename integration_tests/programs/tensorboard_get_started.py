"""Port of tensorflow/tensorboard docs/get_started.ipynb ("Get started with TensorBoard"): the
section "Using TensorBoard with Keras Model.fit()" (the TensorBoard callback, with weight
histograms every epoch) and the section "Using TensorBoard with other methods" (a
GradientTape loop that writes train and test loss and accuracy with summary writers, one
scalar per epoch).

Upstream: https://github.com/tensorflow/tensorboard/blob/01555c4b1b92a14c5bd189d02de7555deffd261c/docs/get_started.ipynb
Changed: names only (tf.keras.models.Sequential/layers -> nn.Sequential/nn.layers,
tf.keras.losses/optimizers/metrics/callbacks -> nn.losses/optimizers/metrics/callbacks,
tf.GradientTape -> tape.GradientTape, tf.data -> ember.data, tf.summary -> ember.summary);
tf.keras.datasets.mnist.load_data() -> ember.data.datasets.mnist(data_dir=...). The notebook
magics are left out. Reduced (EMBER_PROGRAMS_FULL=1 restores it): 3,000 training and 1,000
test images, 2 epochs in each section (upstream 60,000, 10,000 and 5). Added: TensorBoard's
own EventAccumulator reads back every scalar, at the right step, equal to what fit returned
or the loop printed, and a histogram of every weight at every epoch; the test accuracy
passes 82% in both sections.
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
"""

import datetime
import os
import pathlib
import unittest

import numpy as np

import ember.core as em
from ember import data, nn, summary, tape

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
  raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
try:
  from tensorboard.backend.event_processing import event_accumulator
except ImportError as e:  # the integration session installs tensorboard
  raise unittest.SkipTest(f"tensorboard is not installed: {e}") from e
em.random.set_seed(0)


def load_data(n_train, n_test):
  def split(name, n):
    x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
    return (np.asarray(x).reshape(-1, 28, 28) * 255).round().astype(np.uint8), np.asarray(y)
  return split("train", n_train), split("test", n_test)


(x_train, y_train), (x_test, y_test) = load_data(60000 if FULL else 3000, 10000 if FULL else 1000)
x_train, x_test = x_train / 255.0, x_test / 255.0


def create_model():
  return nn.Sequential([
    nn.layers.Flatten(input_shape=(28, 28)),
    nn.layers.Dense(512, activation='relu'),
    nn.layers.Dropout(0.2),
    nn.layers.Dense(10, activation='softmax')
  ])


FIT_EPOCHS = 5 if FULL else 2
model = create_model()
model.compile(optimizer='adam',
              loss='sparse_categorical_crossentropy',
              metrics=['accuracy'])

log_dir = "logs/fit/" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
tensorboard_callback = nn.callbacks.TensorBoard(log_dir=log_dir, histogram_freq=1)

history = model.fit(x=x_train,
                    y=y_train,
                    epochs=FIT_EPOCHS,
                    validation_data=(x_test, y_test),
                    callbacks=[tensorboard_callback])

# what TensorBoard shows: each epoch's loss and accuracy under train/ and validation/, equal
# to fit's; the learning rate; a histogram of every weight at every epoch
assert history.history['val_accuracy'][-1] > 0.82, history.history
for split, prefix in (("train", ""), ("validation", "val_")):
  ea = event_accumulator.EventAccumulator(os.path.join(log_dir, split))
  ea.Reload()
  for tag in ("loss", "accuracy"):
    events = ea.Scalars("epoch_" + tag)
    assert [e.step for e in events] == list(range(FIT_EPOCHS)), (split, tag, events)
    np.testing.assert_allclose([e.value for e in events], history.history[prefix + tag],
                               rtol=1e-6)
  if split == "train":
    np.testing.assert_allclose([e.value for e in ea.Scalars("epoch_learning_rate")],
                               [0.001] * FIT_EPOCHS, rtol=1e-6)
    weights = [t for t in ea.Tags()["tensors"] if t.endswith("/histogram")]
    assert len(weights) == len(model.variables), weights
    for tag in weights:
      assert [e.step for e in ea.Tensors(tag)] == list(range(FIT_EPOCHS)), tag


train_dataset = data.Dataset.from_tensor_slices((x_train, y_train))
test_dataset = data.Dataset.from_tensor_slices((x_test, y_test))

train_dataset = train_dataset.shuffle(60000).batch(64)
test_dataset = test_dataset.batch(64)

loss_object = nn.losses.SparseCategoricalCrossentropy()
optimizer = nn.optimizers.Adam()

# Define our metrics
train_loss = nn.metrics.Mean('train_loss', dtype=em.float32)
train_accuracy = nn.metrics.SparseCategoricalAccuracy('train_accuracy')
test_loss = nn.metrics.Mean('test_loss', dtype=em.float32)
test_accuracy = nn.metrics.SparseCategoricalAccuracy('test_accuracy')


def train_step(model, optimizer, x_train, y_train):
  with tape.GradientTape() as t:
    predictions = model(x_train, training=True)
    loss = loss_object(y_train, predictions)
  grads = t.gradient(loss, model.trainable_variables)
  optimizer.apply_gradients(zip(grads, model.trainable_variables))

  train_loss(loss)
  train_accuracy(y_train, predictions)


def test_step(model, x_test, y_test):
  predictions = model(x_test)
  loss = loss_object(y_test, predictions)

  test_loss(loss)
  test_accuracy(y_test, predictions)


current_time = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
train_log_dir = 'logs/gradient_tape/' + current_time + '/train'
test_log_dir = 'logs/gradient_tape/' + current_time + '/test'
train_summary_writer = summary.create_file_writer(train_log_dir)
test_summary_writer = summary.create_file_writer(test_log_dir)

model = create_model()  # reset our model

EPOCHS = 5 if FULL else 2
printed = {"train": [], "test": []}

for epoch in range(EPOCHS):
  for (x_train, y_train) in train_dataset:
    train_step(model, optimizer, x_train, y_train)
  with train_summary_writer.as_default():
    summary.scalar('loss', train_loss.result(), step=epoch)
    summary.scalar('accuracy', train_accuracy.result(), step=epoch)

  for (x_test, y_test) in test_dataset:
    test_step(model, x_test, y_test)
  with test_summary_writer.as_default():
    summary.scalar('loss', test_loss.result(), step=epoch)
    summary.scalar('accuracy', test_accuracy.result(), step=epoch)

  template = 'Epoch {}, Loss: {}, Accuracy: {}, Test Loss: {}, Test Accuracy: {}'
  print (template.format(epoch+1,
                         train_loss.result(),
                         train_accuracy.result()*100,
                         test_loss.result(),
                         test_accuracy.result()*100))
  printed["train"].append((float(train_loss.result()), float(train_accuracy.result())))
  printed["test"].append((float(test_loss.result()), float(test_accuracy.result())))

  # Reset metrics every epoch
  train_loss.reset_states()
  test_loss.reset_states()
  train_accuracy.reset_states()
  test_accuracy.reset_states()

assert printed["test"][-1][1] > 0.82, printed
train_summary_writer.flush()
test_summary_writer.flush()
for split, log_dir in (("train", train_log_dir), ("test", test_log_dir)):
  ea = event_accumulator.EventAccumulator(log_dir)
  ea.Reload()
  for i, tag in enumerate(("loss", "accuracy")):
    events = ea.Scalars(tag)
    assert [e.step for e in events] == list(range(EPOCHS)), (split, tag, events)
    np.testing.assert_allclose([e.value for e in events], [p[i] for p in printed[split]],
                               rtol=1e-6)
