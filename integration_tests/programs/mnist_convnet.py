"""Port of keras-team/keras-io examples/vision/mnist_convnet.py ("Simple MNIST convnet":
Conv2D/MaxPooling2D/Dropout in a Sequential, one-hot labels, categorical cross-entropy,
compile/fit with validation_split, evaluate).

Upstream: https://github.com/keras-team/keras-io/blob/02cfe8063b505adc073986c91729f22039f77ad0/examples/vision/mnist_convnet.py
Changed: names only (keras.Sequential -> nn.Sequential, keras.layers -> nn.layers,
keras.utils -> nn.utils, keras.Input -> nn.Input; the first version of this port replaced
to_categorical by em.one_hot and keras.Input by input_shape=, which ember lacked then:
upstream's lines are restored); keras.datasets.mnist.load_data() ->
ember.data.datasets.mnist(data_dir=...). Reduced (EMBER_PROGRAMS_FULL=1 restores it): 3,000
training and 1,000 test images, 2 epochs (upstream 60,000, 10,000 and 15); EMBER_PROGRAMS_SHORT=1: 600, 200
and 1 epoch, no accuracy threshold. Added: test
accuracy passes 75% (44 Adam steps on 2,700 images) and agrees with the accuracy computed
by hand from predict().
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

keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)


def load_data(n_train, n_test):
    def split(name, n):
        x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
        return (np.asarray(x).reshape(-1, 28, 28) * 255).round().astype(np.uint8), np.asarray(y)
    return split("train", n_train), split("test", n_test)


# Model / data parameters
num_classes = 10
input_shape = (28, 28, 1)

# Load the data and split it between train and test sets
(x_train, y_train), (x_test, y_test) = load_data(60000 if FULL else 600 if SHORT else 3000,
                                                 10000 if FULL else 200 if SHORT else 1000)
labels_test = y_test

# Scale images to the [0, 1] range
x_train = x_train.astype("float32") / 255
x_test = x_test.astype("float32") / 255
# Make sure images have shape (28, 28, 1)
x_train = np.expand_dims(x_train, -1)
x_test = np.expand_dims(x_test, -1)
print("x_train shape:", x_train.shape)
print(x_train.shape[0], "train samples")
print(x_test.shape[0], "test samples")


# convert class vectors to binary class matrices
y_train = keras.utils.to_categorical(y_train, num_classes)
y_test = keras.utils.to_categorical(y_test, num_classes)

model = keras.Sequential(
    [
        keras.Input(shape=input_shape),
        layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Conv2D(64, kernel_size=(3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Flatten(),
        layers.Dropout(0.5),
        layers.Dense(num_classes, activation="softmax"),
    ]
)

model.summary()
assert model.count_params() == 34826, model.count_params()  # the number Keras prints

batch_size = 128
epochs = 15 if FULL else 1 if SHORT else 2

model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])

model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs, validation_split=0.1)

score = model.evaluate(x_test, y_test, verbose=0)
print("Test loss:", score[0])
print("Test accuracy:", score[1])
by_hand = float(np.mean(np.argmax(model.predict(x_test), -1) == labels_test))
np.testing.assert_allclose(score[1], by_hand, atol=1e-6)
assert SHORT or score[1] > 0.75, score
