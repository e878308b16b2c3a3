"""Port of keras-team/keras-io examples/keras_recipes/antirectifier.py ("Simple custom layer
example: Antirectifier": a custom layer with build/add_weight, an in-place `-=` on its
input, relu of both signs concatenated and mixed back by a matmul, get_config with a
serialized initializer; a Sequential model starting with keras.Input, Dropout, RMSprop,
fit with validation_split, evaluate).

Upstream: https://github.com/keras-team/keras-io/blob/2dd71c68bd2a1ebbe588f3571571abcb16d96c27/examples/keras_recipes/antirectifier.py
Changed: names only (tf.keras/keras -> nn, tf.keras.layers -> nn.layers, tf.* -> em.*,
tf.nn.relu -> em.nn_ops.relu); keras.datasets.mnist.load_data() -> ember.data.datasets.mnist
(data_dir=...). Reduced (EMBER_PROGRAMS_FULL=1 restores it): 6,000 training and 1,000 test
images and 2 epochs (upstream 60,000, 10,000 and 20); EMBER_PROGRAMS_SHORT=1: 600/200
images and 1 epoch, no thresholds. Added: a seed; the layer's output checked against numpy;
the layer rebuilt from its config (initializer included) gives the same config; the
validation split holds the last 15% of the data; test accuracy passes 75% (chance 10%;
seeds 0-2 reach 0.80-0.90: two epochs of RMSprop end that far apart when OpenBLAS's
Haswell kernels round differently from its SkylakeX ones).
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
"""

import os
import pathlib
import unittest

import numpy as np

import ember.core as em
from ember import data, nn
from ember.nn import layers

tf = em  # the example's `tf.` prefix
keras = nn  # and its `keras.`
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)


class Antirectifier(layers.Layer):
    def __init__(self, initializer="he_normal", **kwargs):
        super(Antirectifier, self).__init__(**kwargs)  # noqa: UP008 (upstream spelling)
        self.initializer = keras.initializers.get(initializer)

    def build(self, input_shape):
        output_dim = input_shape[-1]
        self.kernel = self.add_weight(
            shape=(output_dim * 2, output_dim),
            initializer=self.initializer,
            name="kernel",
            trainable=True,
        )

    def call(self, inputs):
        inputs -= tf.reduce_mean(inputs, axis=-1, keepdims=True)
        pos = tf.nn_ops.relu(inputs)
        neg = tf.nn_ops.relu(-inputs)
        concatenated = tf.concat([pos, neg], axis=-1)
        mixed = tf.matmul(concatenated, self.kernel)
        return mixed

    def get_config(self):
        # Implement get_config to enable serialization. This is optional.
        base_config = super(Antirectifier, self).get_config()  # noqa: UP008
        config = {"initializer": keras.initializers.serialize(self.initializer)}
        return dict(list(base_config.items()) + list(config.items()))


# Training parameters
batch_size = 128
num_classes = 10
epochs = 20 if FULL else 1 if SHORT else 2


def load_data(n_train, n_test):
    def split(name, n):
        x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
        return (np.asarray(x).reshape(-1, 28, 28) * 255).round().astype(np.uint8), np.asarray(y)
    return split("train", n_train), split("test", n_test)


# The data, split between train and test sets
(x_train, y_train), (x_test, y_test) = load_data(60000 if FULL else 600 if SHORT else 6000,
                                                 10000 if FULL else 200 if SHORT else 1000)

x_train = x_train.reshape(-1, 784)
x_test = x_test.reshape(-1, 784)
x_train = x_train.astype("float32")
x_test = x_test.astype("float32")
x_train /= 255
x_test /= 255
print(x_train.shape[0], "train samples")
print(x_test.shape[0], "test samples")

# Build the model
model = keras.Sequential(
    [
        keras.Input(shape=(784,)),
        layers.Dense(256),
        Antirectifier(),
        layers.Dense(256),
        Antirectifier(),
        layers.Dropout(0.5),
        layers.Dense(10),
    ]
)

# Compile the model
model.compile(
    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    optimizer=keras.optimizers.RMSprop(),
    metrics=[keras.metrics.SparseCategoricalAccuracy()],
)

# Train the model
history = model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs,
                    validation_split=0.15)

# Test the model
results = model.evaluate(x_test, y_test)

# --- added: checks that can fail -----------------------------------------------------------
anti = model.layers[1]
assert isinstance(anti, Antirectifier) and tuple(anti.kernel.shape) == (512, 256)
h = np.asarray(model.layers[0](x_test[:5]))
centred = h - h.mean(-1, keepdims=True)
want = np.concatenate([np.maximum(centred, 0), np.maximum(-centred, 0)], -1) @ anti.kernel.numpy()
np.testing.assert_allclose(anti(h).numpy(), want, rtol=1e-4, atol=1e-5)

config = anti.get_config()
assert config["initializer"]["class_name"] == "HeNormal", config
again = Antirectifier.from_config(config)
assert again.get_config() == config, (again.get_config(), config)

# validation_split: Keras holds out the last 15% (before any shuffling), 900 of 6,000 here
n_val = len(x_train) - int(len(x_train) * (1 - 0.15))
val = model.evaluate(x_train[-n_val:], y_train[-n_val:], verbose=0)
np.testing.assert_allclose(val, [history.history["val_loss"][-1],
                                 history.history["val_sparse_categorical_accuracy"][-1]],
                           rtol=1e-5)
print("test loss, test acc:", results)
assert SHORT or history.history["loss"][-1] < history.history["loss"][0], history.history
assert SHORT or results[1] > 0.75, results
