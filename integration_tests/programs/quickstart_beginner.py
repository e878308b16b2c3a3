"""Port of tensorflow/docs site/en/tutorials/quickstart/beginner.ipynb ("TensorFlow 2 quickstart
for beginners": a Sequential MLP trained with compile/fit).

Upstream: https://github.com/tensorflow/docs/blob/master/site/en/tutorials/quickstart/beginner.ipynb
Changed: names only (tf.keras.models.Sequential -> nn.Sequential, tf.keras.layers -> nn.layers,
tf.nn.softmax -> em.nn_ops.softmax,
tf.keras.losses -> nn.losses); tf.keras.datasets.mnist.load_data() ->
ember.data.datasets.mnist(data_dir=...). Reduced (EMBER_PROGRAMS_FULL=1 restores it): 10,000
training and 2,000 test images, 2 epochs instead of 60,000/10,000 and 5. Added: the untrained
loss is near -log(1/10) = 2.3 (as the tutorial says) and the test accuracy passes 86%
(PyTorch, same setup: 89.9%).
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): fewer examples and epochs, no threshold on
what training reached.
"""

import math
import os
import pathlib
import unittest

import numpy as np

import ember.core as em
from ember import data, nn

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
N_TRAIN, N_TEST = (60000, 10000) if FULL else (1000, 200) if SHORT else (10000, 2000)
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
  raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)


def load_data():
  def split(name, n):
    x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
    return (np.asarray(x).reshape(-1, 28, 28) * 255.0).round().astype(np.uint8), np.asarray(y)
  return split("train", N_TRAIN), split("test", N_TEST)


(x_train, y_train), (x_test, y_test) = load_data()
x_train, x_test = x_train / 255.0, x_test / 255.0

model = nn.Sequential([
  nn.layers.Flatten(input_shape=(28, 28)),
  nn.layers.Dense(128, activation='relu'),
  nn.layers.Dropout(0.2),
  nn.layers.Dense(10)
])

predictions = model(x_train[:1]).numpy()
print(predictions)

probs = em.nn_ops.softmax(predictions).numpy()
np.testing.assert_allclose(probs.sum(), 1.0, rtol=1e-5)

loss_fn = nn.losses.SparseCategoricalCrossentropy(from_logits=True)

initial = loss_fn(y_train[:1], predictions).numpy()
print(initial)
assert abs(float(initial) - math.log(10)) < 1.0, initial

model.compile(optimizer='adam',
              loss=loss_fn,
              metrics=['accuracy'])

history = model.fit(x_train, y_train, epochs=5 if FULL else 1 if SHORT else 2)

result = model.evaluate(x_test,  y_test, verbose=2)
print(result)
assert SHORT or result[1] > 0.86, result  # [loss, accuracy], as Keras returns
assert SHORT or history.history["loss"][-1] < history.history["loss"][0], history.history

probability_model = nn.Sequential([
  model,
  nn.layers.Softmax()
])

p = probability_model(x_test[:5]).numpy()
assert p.shape == (5, 10)
np.testing.assert_allclose(p.sum(axis=1), np.ones(5), rtol=1e-5)
