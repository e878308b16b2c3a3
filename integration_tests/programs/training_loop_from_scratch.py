"""Port of keras-team/keras-io guides/writing_a_training_loop_from_scratch.py ("Writing a
training loop from scratch", the tf.keras version: GradientTape + optimizer.apply_gradients,
metrics by hand, add_loss losses in the step).

Upstream: https://github.com/keras-team/keras-io/blob/02743a2aafd542d9bad4b4a54b8f64d327ca171b/guides/writing_a_training_loop_from_scratch.py
Changed: names only (keras.layers -> nn.layers, keras.optimizers.SGD -> nn.optimizers.SGD,
keras.losses.SparseCategoricalCrossentropy -> nn.losses.SparseCategoricalCrossentropy,
keras.metrics -> nn.metrics, tf.data -> ember.data, tf.GradientTape -> tape.GradientTape,
@tf.function -> @graph.function). ember has no functional API, so each
`keras.Input(shape=(784,)); ...; keras.Model(inputs, outputs)` chain becomes the same layers
in an nn.Sequential with input_shape on the first. keras.datasets.mnist.load_data() ->
ember.data.datasets.mnist(data_dir=...) scaled back to 0..255 (the guide does not normalise).
The closing GAN section is left out (tensorflow_docs_dcgan covers the same loop).
Reduced (EMBER_PROGRAMS_FULL=1 restores it): 8,000 training images (2,000 of them held out for
validation) instead of 60,000 (10,000). Added: validation accuracy passes 70% after the second
loop, the metric equals the accuracy computed by hand, and model.losses holds the activity loss.
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): fewer examples and epochs, no threshold on
what training reached.
"""
# ruff: noqa: UP031

import os
import pathlib
import time
import unittest

import numpy as np

import ember.core as em
from ember import data, graph, nn, tape
from ember.nn import layers

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
N_TRAIN, N_VAL = (60000, 10000) if FULL else (1600, 400) if SHORT else (8000, 2000)
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)


def load_data():
    def split(name, n):
        x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
        return (np.asarray(x) * 255.0).round().astype(np.uint8).reshape(-1, 28, 28), np.asarray(y)
    return split("train", N_TRAIN), split("test", 1000)


model = nn.Sequential([
    layers.Dense(64, activation="relu", input_shape=(784,)),
    layers.Dense(64, activation="relu"),
    layers.Dense(10, name="predictions"),
])

# Instantiate an optimizer.
optimizer = nn.optimizers.SGD(learning_rate=1e-3)
# Instantiate a loss function.
loss_fn = nn.losses.SparseCategoricalCrossentropy(from_logits=True)

# Prepare the training dataset.
batch_size = 64
(x_train, y_train), (x_test, y_test) = load_data()
x_train = np.reshape(x_train, (-1, 784))
x_test = np.reshape(x_test, (-1, 784))
train_dataset = data.Dataset.from_tensor_slices((x_train, y_train))
train_dataset = train_dataset.shuffle(buffer_size=1024).batch(batch_size)

first_losses = []
epochs = 1 if SHORT else 2
for epoch in range(epochs):
    print("\nStart of epoch %d" % (epoch,))

    # Iterate over the batches of the dataset.
    for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):

        # Open a GradientTape to record the operations run
        # during the forward pass, which enables auto-differentiation.
        with tape.GradientTape() as t:

            # Run the forward pass of the layer.
            # The operations that the layer applies
            # to its inputs are going to be recorded
            # on the GradientTape.
            logits = model(x_batch_train, training=True)  # Logits for this minibatch

            # Compute the loss value for this minibatch.
            loss_value = loss_fn(y_batch_train, logits)

        # Use the gradient tape to automatically retrieve
        # the gradients of the trainable variables with respect to the loss.
        grads = t.gradient(loss_value, model.trainable_weights)

        # Run one step of gradient descent by updating
        # the value of the variables to minimize the loss.
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        first_losses.append(float(loss_value))

        # Log every 200 batches.
        if step % 200 == 0:
            print(
                "Training loss (for one batch) at step %d: %.4f"
                % (step, float(loss_value))
            )
            print("Seen so far: %s samples" % ((step + 1) * 64))

assert SHORT or np.mean(first_losses[-20:]) < np.mean(first_losses[:20]) / 3, (
    np.mean(first_losses[:20]), np.mean(first_losses[-20:]))

# Get model
model = nn.Sequential([
    layers.Dense(64, activation="relu", name="dense_1", input_shape=(784,)),
    layers.Dense(64, activation="relu", name="dense_2"),
    layers.Dense(10, name="predictions"),
])

# Instantiate an optimizer to train the model.
optimizer = nn.optimizers.SGD(learning_rate=1e-3)
# Instantiate a loss function.
loss_fn = nn.losses.SparseCategoricalCrossentropy(from_logits=True)

# Prepare the metrics.
train_acc_metric = nn.metrics.SparseCategoricalAccuracy()
val_acc_metric = nn.metrics.SparseCategoricalAccuracy()

# Prepare the training dataset.
batch_size = 64
train_dataset = data.Dataset.from_tensor_slices((x_train, y_train))
train_dataset = train_dataset.shuffle(buffer_size=1024).batch(batch_size)

# Prepare the validation dataset.
# Reserve 10,000 samples for validation.
x_val = x_train[-N_VAL:]
y_val = y_train[-N_VAL:]
x_train = x_train[:-N_VAL]
y_train = y_train[:-N_VAL]
val_dataset = data.Dataset.from_tensor_slices((x_val, y_val))
val_dataset = val_dataset.batch(64)


@graph.function
def train_step(x, y):
    with tape.GradientTape() as t:
        logits = model(x, training=True)
        loss_value = loss_fn(y, logits)
    grads = t.gradient(loss_value, model.trainable_weights)
    optimizer.apply_gradients(zip(grads, model.trainable_weights))
    train_acc_metric.update_state(y, logits)
    return loss_value


@graph.function
def test_step(x, y):
    val_logits = model(x, training=False)
    val_acc_metric.update_state(y, val_logits)


epochs = 1 if SHORT else 2
for epoch in range(epochs):
    print("\nStart of epoch %d" % (epoch,))
    start_time = time.time()

    # Iterate over the batches of the dataset.
    for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):
        loss_value = train_step(x_batch_train, y_batch_train)

        # Log every 200 batches.
        if step % 200 == 0:
            print(
                "Training loss (for one batch) at step %d: %.4f"
                % (step, float(loss_value))
            )
            print("Seen so far: %d samples" % ((step + 1) * 64))

    # Display metrics at the end of each epoch.
    train_acc = train_acc_metric.result()
    print("Training acc over epoch: %.4f" % (float(train_acc),))

    # Reset training metrics at the end of each epoch
    train_acc_metric.reset_states()

    # Run a validation loop at the end of each epoch.
    for x_batch_val, y_batch_val in val_dataset:
        test_step(x_batch_val, y_batch_val)

    val_acc = val_acc_metric.result()
    val_acc_metric.reset_states()
    print("Validation acc: %.4f" % (float(val_acc),))
    print("Time taken: %.2fs" % (time.time() - start_time))

by_hand = float(np.mean(np.argmax(model(x_val).numpy(), -1) == y_val))
np.testing.assert_allclose(float(val_acc), by_hand, atol=1e-6)
assert SHORT or float(val_acc) > 0.70, float(val_acc)


class ActivityRegularizationLayer(layers.Layer):
    def call(self, inputs):
        self.add_loss(1e-2 * em.reduce_sum(inputs))
        return inputs


model = nn.Sequential([
    layers.Dense(64, activation="relu", input_shape=(784,)),
    # Insert activity regularization as a layer
    ActivityRegularizationLayer(),
    layers.Dense(64, activation="relu"),
    layers.Dense(10, name="predictions"),
])


@graph.function
def train_step(x, y):
    with tape.GradientTape() as t:
        logits = model(x, training=True)
        loss_value = loss_fn(y, logits)
        # Add any extra losses created during the forward pass.
        loss_value += sum(model.losses)
    grads = t.gradient(loss_value, model.trainable_weights)
    optimizer.apply_gradients(zip(grads, model.trainable_weights))
    train_acc_metric.update_state(y, logits)
    return loss_value


x_batch, y_batch = x_train[:64], y_train[:64]
hidden = np.maximum(x_batch.astype(np.float32) @ model.layers[0].kernel.numpy()
                    + model.layers[0].bias.numpy(), 0)  # before the step updates the kernel
logits_before = model(x_batch).numpy()  # (eager: before the step updates the weights)
loss_value = train_step(x_batch, y_batch)
# added: the step's loss is the cross-entropy plus the activity loss add_loss recorded
shifted = logits_before - logits_before.max(1, keepdims=True)
ce = np.mean(np.log(np.exp(shifted).sum(1)) - shifted[np.arange(64), y_batch])
np.testing.assert_allclose(float(loss_value), ce + 1e-2 * hidden.sum(), rtol=1e-4)
# model.losses after a traced call holds what the trace computed, which later calls do not
# update (TF's are graph tensors): using one raises, as TF's do
assert len(model.losses) == 1, model.losses
try:
  float(model.losses[0])
except em.LeakedTensorError:
  pass
else:
  raise AssertionError("a loss leaked out of the traced step was usable")
