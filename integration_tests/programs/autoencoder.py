"""Port of keras-team/keras-io examples/vision/autoencoder.py ("Convolutional autoencoder
for image denoising": Conv2D, MaxPooling2D and strided Conv2DTranspose, binary cross-entropy,
trained on clean then on numpy-noised MNIST digits, with validation_data and shuffle).

Upstream: https://github.com/keras-team/keras-io/blob/f8f7dd396e1af11bccdc6bb6869e4f9be0bf9e32/examples/vision/autoencoder.py
Changed: names only (tensorflow.keras.layers -> ember.nn.layers, tensorflow.keras.models.Model
-> ember.nn.Model); mnist.load_data() -> ember.data.datasets.mnist(data_dir=...). Plotting
(display()) is dropped. Reduced (EMBER_PROGRAMS_FULL=1 restores it): 1,000 training
and 200 test images, 2 epochs on clean and 4 on noisy images (upstream 60,000, 10,000, 50
and 100); EMBER_PROGRAMS_SHORT=1: 128 and 64 images, 1 epoch each, no loss threshold.
Added: the parameter count Keras prints; evaluate() agrees with a binary cross-entropy
computed in numpy from predict(); the loss falls in each fit; the denoised test images are
nearer the clean ones than the noisy inputs are.
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
"""

import os
import pathlib
import unittest

import numpy as np

import ember.core as em
from ember import data
from ember.nn import Model, layers

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)
np.random.seed(0)


class mnist:  # tensorflow.keras.datasets.mnist, from the local files
    @staticmethod
    def load_data():
        def split(name, n):
            x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
            return ((np.asarray(x).reshape(-1, 28, 28) * 255).round().astype(np.uint8),
                    np.asarray(y))
        return (split("train", 60000 if FULL else 128 if SHORT else 1000),
                split("test", 10000 if FULL else 64 if SHORT else 200))


def preprocess(array):
    """
    Normalizes the supplied array and reshapes it into the appropriate format.
    """

    array = array.astype("float32") / 255.0
    array = np.reshape(array, (len(array), 28, 28, 1))
    return array


def noise(array):
    """
    Adds random noise to each image in the supplied array.
    """

    noise_factor = 0.4
    noisy_array = array + noise_factor * np.random.normal(
        loc=0.0, scale=1.0, size=array.shape
    )

    return np.clip(noisy_array, 0.0, 1.0)


# Since we only need images from the dataset to encode and decode, we
# won't use the labels.
(train_data, _), (test_data, _) = mnist.load_data()

# Normalize and reshape the data
train_data = preprocess(train_data)
test_data = preprocess(test_data)

# Create a copy of the data with added noise
noisy_train_data = noise(train_data)
noisy_test_data = noise(test_data)

input = layers.Input(shape=(28, 28, 1))

# Encoder
x = layers.Conv2D(32, (3, 3), activation="relu", padding="same")(input)
x = layers.MaxPooling2D((2, 2), padding="same")(x)
x = layers.Conv2D(32, (3, 3), activation="relu", padding="same")(x)
x = layers.MaxPooling2D((2, 2), padding="same")(x)

# Decoder
x = layers.Conv2DTranspose(32, (3, 3), strides=2, activation="relu", padding="same")(x)
x = layers.Conv2DTranspose(32, (3, 3), strides=2, activation="relu", padding="same")(x)
x = layers.Conv2D(1, (3, 3), activation="sigmoid", padding="same")(x)

# Autoencoder
autoencoder = Model(input, x)
autoencoder.compile(optimizer="adam", loss="binary_crossentropy")
autoencoder.summary()
assert autoencoder.count_params() == 28353, autoencoder.count_params()  # as Keras prints


def bce_by_hand(x, target):
    p = np.clip(autoencoder.predict(x), 1e-7, 1 - 1e-7)
    return float(np.mean(-(target * np.log(p) + (1 - target) * np.log(1 - p))))


history = autoencoder.fit(
    x=train_data,
    y=train_data,
    epochs=50 if FULL else 1 if SHORT else 2,
    batch_size=128,
    shuffle=True,
    validation_data=(test_data, test_data),
)
print(history.history)
assert SHORT or history.history["loss"][-1] < history.history["loss"][0], history.history
np.testing.assert_allclose(history.history["val_loss"][-1], bce_by_hand(test_data, test_data),
                           rtol=1e-4)

predictions = autoencoder.predict(test_data)
assert predictions.shape == test_data.shape, predictions.shape

history = autoencoder.fit(
    x=noisy_train_data,
    y=train_data,
    epochs=100 if FULL else 1 if SHORT else 4,
    batch_size=128,
    shuffle=True,
    validation_data=(noisy_test_data, test_data),
)
print(history.history)
assert SHORT or history.history["loss"][-1] < history.history["loss"][0], history.history
loss = autoencoder.evaluate(noisy_test_data, test_data, verbose=0)
np.testing.assert_allclose(loss, bce_by_hand(noisy_test_data, test_data), rtol=1e-4)
np.testing.assert_allclose(history.history["val_loss"][-1], loss, rtol=1e-5)

predictions = autoencoder.predict(noisy_test_data)
denoised_error = float(np.mean((predictions - test_data) ** 2))
noisy_error = float(np.mean((noisy_test_data - test_data) ** 2))
print("mean squared error, noisy:", noisy_error, "denoised:", denoised_error)
assert SHORT or denoised_error < noisy_error, (denoised_error, noisy_error)
