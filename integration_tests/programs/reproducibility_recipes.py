"""Port of keras-team/keras-io examples/keras_recipes/reproducibility_recipes.py
("Reproducibility in Keras Models", the Keras 3 version): keras.utils.set_random_seed and
tf.config.experimental.enable_op_determinism; each of the eleven built-in random
initializers called twice with seed=42, two GlorotNormal objects with the same seed and
two without one; then a small Conv2D/MaxPooling2D/Dropout/GlobalAveragePooling2D/Dense
classifier trained with fit on MNIST through a tf.data pipeline (a full-buffer shuffle,
batch, a parallel map that casts, scales, adds the channel axis and resizes to 32x32,
prefetch), its History written to history.json, and, after "restarting the kernel" and
running it all again, the new History compared with the saved one.

Upstream: https://github.com/keras-team/keras-io/blob/0130fa2d64ef56df69cb2ada9c8c06c9478d21eb/examples/keras_recipes/reproducibility_recipes.py
Changed: names only (keras -> ember.nn, keras.layers/initializers -> ember.nn.layers/
initializers, tf.data.Dataset/AUTOTUNE -> ember.data.*, tf.cast/float32/expand_dims and
tf.image.resize -> em.*, tf.config.experimental.enable_op_determinism() ->
em.config.enable_op_determinism(), the name docs/guide/coming-from.md gives it; there is
no em.config.experimental).
keras.datasets.mnist.load_data() -> a local mnist.load_data() that reads the real digits
with ember.data.datasets.mnist(data_dir=...) in load_data()'s layout (uint8 (n, 28, 28)
images, uint8 labels). history.json goes into a temporary working directory. Upstream
asks the reader to restart the kernel and run the notebook again: here the program runs
itself again in the same process (runpy, after everything above; its set_random_seed(812)
is the first thing either run does), skipping the cell that writes history.json as
upstream says, and the second run's History is compared with the first's.
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream's 60,000 training and 10,000 test
digits): 6,000 and 1,000 digits (EMBER_PROGRAMS_SHORT=1: 512 and 256, no accuracy
threshold); upstream's 2 epochs and batch 64 are kept.
Added: upstream's printed claims asserted: each seeded initializer gives the same number
on both iterations; GlorotNormal(seed=42) twice gives equal results, two unseeded ones
different results; the restarted run repeats every initializer number, result_3 and
result_4 and the whole History exactly (upstream: np.allclose; the same machine and
enable_op_determinism promise the same bits). Also: each (1, 1) draw lies in its
distribution's support (two standard deviations for the truncated ones, the uniform
limits, +-1 for Orthogonal); a (200, 300) draw of each initializer has the standard
deviation of Keras's formulas (within 4%, over 10 standard errors) and Orthogonal's rows are
orthonormal (numpy); the model's output shape and parameter count (21,578, from Keras's
formulas); a batch of the pipeline against a numpy bilinear resize (TF's half-pixel
centres) of the same digits; the shuffled epoch is a permutation of the labels, not their
order, and a new pass reshuffles; History's keys, in Keras 3's order, two floats each;
evaluate() against numpy on predict()'s probabilities (accuracy, and the cross-entropy of
Keras's clipped probabilities) and against the last val_ entries; and (CPU run) the test
accuracy passes 50%: the untrained model scores 9-13% (5 seeds), and 2 epochs of 6,000
digits reach 70-77% with seeds 0-4 and 79% with upstream's 812 (42-54% after one epoch;
upstream's 60,000 digits reach ~95%), so a model that does not learn, or a pipeline whose
labels no longer match its images, stays far below it.
Fixed in ember since the first version of this port (upstream's lines run now):
1. (silent) a seeded initializer was not repeatable: nn.initializers.X(seed=42) drew from
ember's op-level stream for seed 42 (TF 2's stateful op seeds), which advanced at every
call, so the two iterations printed different numbers and GlorotNormal(seed=42) twice gave
different results; in Keras 3 an integer seed is stateless, as ember's is now
(em.random.set_seed(812) before each seeded call stood in). 2. (silent) fit's
History.history kept its keys in the order ember logged them (loss, accuracy, ...) where
Keras 3 sorts the logs (Trainer._pythonify_logs: accuracy, loss, val_accuracy, val_loss),
as ember does now (a sorted dict stood in).
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
"""

import json
import math
import os
import pathlib
import runpy
import tempfile
import unittest

import numpy as np

import ember.core as em
from ember import data, nn
from ember.nn import initializers, layers

keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
N_TRAIN, N_TEST = (60000, 10000) if FULL else (512, 256) if SHORT else (6000, 1000)
# (added) True in the second run, which stands for upstream's "restart the kernel"
RESTARTED = globals().get("RESTARTED", False)
if not RESTARTED:
    workdir = tempfile.TemporaryDirectory()
    os.chdir(workdir.name)  # upstream writes history.json where it runs


class mnist:  # (added) the real digits in keras.datasets.mnist.load_data()'s layout
    @staticmethod
    def load_data():
        def split(name, n):
            x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
            return ((np.asarray(x).reshape(-1, 28, 28) * 255).round().astype(np.uint8),
                    np.asarray(y).astype(np.uint8))
        return split("train", N_TRAIN), split("test", N_TEST)


"""
## Setup
"""

# Set the seed using keras.utils.set_random_seed. This will set:
# 1) `numpy` seed
# 2) backend random seed
# 3) `python` random seed
keras.utils.set_random_seed(812)

# If using TensorFlow, this will make GPU ops as deterministic as possible,
# but it will affect the overall performance, so be mindful of that.
em.config.enable_op_determinism()


"""
## Weight initialization in Keras
"""

initializers_list = [
    initializers.RandomNormal,
    initializers.RandomUniform,
    initializers.TruncatedNormal,
    initializers.VarianceScaling,
    initializers.GlorotNormal,
    initializers.GlorotUniform,
    initializers.HeNormal,
    initializers.HeUniform,
    initializers.LecunNormal,
    initializers.LecunUniform,
    initializers.Orthogonal,
]

# (added) where a (1, 1) draw of each may lie: fan_in = fan_out = 1, so VarianceScaling's
# variance is its scale; truncated normals stop at two standard deviations
_TRUNC = 0.87962566103423978  # the standard deviation of a unit normal truncated at +-2
SUPPORT = {
    "RandomNormal": math.inf, "RandomUniform": 0.05, "TruncatedNormal": 2 * 0.05,
    "VarianceScaling": 2 / _TRUNC, "GlorotNormal": 2 / _TRUNC,
    "GlorotUniform": math.sqrt(3), "HeNormal": 2 * math.sqrt(2) / _TRUNC,
    "HeUniform": math.sqrt(6), "LecunNormal": 2 / _TRUNC, "LecunUniform": math.sqrt(3),
    "Orthogonal": 1.0,
}
printed = {}  # (added) initializer name -> the numbers printed

for initializer in initializers_list:
    print(f"Running {initializer}")

    for iteration in range(2):
        # In order to get same results across multiple runs from an initializer,
        # you can specify a seed value.
        result = float(initializer(seed=42)(shape=(1, 1)))
        print(f"\tIteration --> {iteration} // Result --> {result}")
        printed.setdefault(initializer.__name__, []).append(result)  # added
    print("\n")

for name, (first, second) in printed.items():  # added
    assert first == second, (name, first, second)
    assert math.isfinite(first) and abs(first) <= SUPPORT[name] * (1 + 1e-6), (name, first)
assert abs(printed["Orthogonal"][0]) == 1.0, printed["Orthogonal"]

# (added) each initializer's spread against Keras's formulas, on a (200, 300) kernel:
# fan_in 200, fan_out 300; 60,000 draws put the sample std within 0.3% (one standard
# error) of the true one, so 4% is ~10 standard errors
fan_in, fan_out = 200, 300
expected_std = {
    "RandomNormal": 0.05, "RandomUniform": 0.1 / math.sqrt(12),
    "TruncatedNormal": 0.05 * _TRUNC, "VarianceScaling": math.sqrt(1 / fan_in),
    "GlorotNormal": math.sqrt(2 / (fan_in + fan_out)),
    "GlorotUniform": math.sqrt(2 / (fan_in + fan_out)),
    "HeNormal": math.sqrt(2 / fan_in), "HeUniform": math.sqrt(2 / fan_in),
    "LecunNormal": math.sqrt(1 / fan_in), "LecunUniform": math.sqrt(1 / fan_in),
}
for initializer in initializers_list:
    w = initializer(seed=7)(shape=(fan_in, fan_out)).numpy()
    assert w.shape == (fan_in, fan_out) and w.dtype == np.float32, (initializer, w.shape)
    if initializer is initializers.Orthogonal:  # rows < columns: the rows are orthonormal
        np.testing.assert_allclose(w.astype(np.float64) @ w.T.astype(np.float64),
                                   np.eye(fan_in), atol=1e-5)
        continue
    std = float(w.astype(np.float64).std())
    assert abs(std / expected_std[initializer.__name__] - 1) < 0.04, (initializer, std)
    assert abs(float(w.mean())) < 5 * std / math.sqrt(w.size), (initializer, w.mean())

"""
Now, let's inspect how two different initializer objects behave when they are
have the same seed value.
"""

# Setting the seed value for an initializer will cause two different objects
# to produce same results.
glorot_normal_1 = keras.initializers.GlorotNormal(seed=42)
glorot_normal_2 = keras.initializers.GlorotNormal(seed=42)

input_dim, neurons = 3, 5

# Call two different objects with same shape
result_1 = glorot_normal_1(shape=(input_dim, neurons))
result_2 = glorot_normal_2(shape=(input_dim, neurons))

# Check if the results are equal.
equal = np.allclose(result_1, result_2)
print(f"Are the results equal? {equal}")
assert equal  # added: upstream's output
assert result_1.shape == (3, 5) and result_1.dtype == em.float32  # added
# added: truncated at two standard deviations, sqrt(2 / (3 + 5)) / 0.8796 each
assert float(em.reduce_max(em.abs(result_1))) <= 2 * math.sqrt(2 / 8) / _TRUNC + 1e-6

glorot_normal_3 = keras.initializers.GlorotNormal()
glorot_normal_4 = keras.initializers.GlorotNormal()

# Let's call the initializer.
result_3 = glorot_normal_3(shape=(input_dim, neurons))

# Call the second initializer.
result_4 = glorot_normal_4(shape=(input_dim, neurons))

equal = np.allclose(result_3, result_4)
print(f"Are the results equal? {equal}")
assert not equal  # added: upstream's output

"""
## Reproducibility in model training process
"""

trained = []  # (added) the model train_model builds, and what its evaluate() returned


def train_model(train_data: data.Dataset, test_data: data.Dataset) -> dict:
    model = keras.Sequential(
        [
            layers.Conv2D(32, (3, 3), activation="relu"),
            layers.MaxPooling2D((2, 2)),
            layers.Dropout(0.2),
            layers.Conv2D(32, (3, 3), activation="relu"),
            layers.MaxPooling2D((2, 2)),
            layers.Dropout(0.2),
            layers.Conv2D(32, (3, 3), activation="relu"),
            layers.GlobalAveragePooling2D(),
            layers.Dense(64, activation="relu"),
            layers.Dropout(0.2),
            layers.Dense(10, activation="softmax"),
        ]
    )

    model.compile(
        optimizer="adam",
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
        jit_compile=False,
    )
    # jit_compile's default value is "auto" which will cause some problems in some
    # ops, therefore it's set to False.

    # model.fit has a `shuffle` parameter which has a default value of `True`.
    # If you are using array-like objects, this will shuffle the data before
    # training. This argument is ignored when `x` is a generator or
    # `tf.data.Dataset`.
    history = model.fit(train_data, epochs=2, validation_data=test_data)

    print(f"Model accuracy on test data: {model.evaluate(test_data)[1] * 100:.2f}%")

    trained.append((model, model.evaluate(test_data)))  # added: for the checks below
    return history.history


# Load the MNIST dataset
(train_images, train_labels), (
    test_images,
    test_labels,
) = mnist.load_data()
assert train_images.shape == (N_TRAIN, 28, 28) and train_images.dtype == np.uint8  # added
assert test_labels.shape == (N_TEST,) and test_labels.dtype == np.uint8  # added

# Construct tf.data.Dataset objects
train_ds = data.Dataset.from_tensor_slices((train_images, train_labels))
test_ds = data.Dataset.from_tensor_slices((test_images, test_labels))


def prepare_dataset(image, label):
    # Cast and normalize the image
    image = em.cast(image, em.float32) / 255.0

    # Expand the channel dimension
    image = em.expand_dims(image, axis=-1)

    # Resize the image
    image = em.image.resize(image, (32, 32))

    return image, label


# Prepare the datasets, batch-map --> vectorized operations
train_data = (
    train_ds.shuffle(buffer_size=len(train_images))
    .batch(batch_size=64)
    .map(prepare_dataset, num_parallel_calls=data.AUTOTUNE)
    .prefetch(buffer_size=data.AUTOTUNE)
)

test_data = (
    test_ds.batch(batch_size=64)
    .map(prepare_dataset, num_parallel_calls=data.AUTOTUNE)
    .prefetch(buffer_size=data.AUTOTUNE)
)

"""
Train the model for the first time.
"""

history = train_model(train_data, test_data)

"""
Let's save our results into a JSON file, and restart the kernel.
"""

# Save the history object into a json file
if not RESTARTED:  # added: the restarted run skips this cell, as upstream says
    with open("history.json", "w") as fp:
        json.dump(history, fp)

"""
Do not run the cell above in order not to overwrite the results. Execute the
model training cell again and compare the results.
"""

with open("history.json", "r") as fp:  # noqa: UP015 (upstream's line)
    history_loaded = json.load(fp)


"""
Compare the results one by one. You will see that they are equal.
"""
for key in history.keys():
    for i in range(len(history[key])):
        if not np.allclose(history[key][i], history_loaded[key][i]):
            print(f"{key} not equal")

# --- (added) checks --------------------------------------------------------------------
assert list(history) == ["accuracy", "loss", "val_accuracy", "val_loss"], list(history)
assert history_loaded == history, (history, history_loaded)  # every number, to the bit
for values in history.values():
    assert len(values) == 2 and all(type(v) is float and math.isfinite(v) for v in values)

model, evaluated = trained[-1]
assert model.output_shape == (None, 10), model.output_shape
# Keras's counts: 3*3*1*32+32, 3*3*32*32+32 (twice), 32*64+64, 64*10+10
assert model.count_params() == 320 + 9248 + 9248 + 2112 + 650, model.count_params()

# a batch of the pipeline against numpy: a bilinear resize with half-pixel centres
images, labels = next(iter(test_data))
assert tuple(images.shape) == (64, 32, 32, 1) and images.dtype == em.float32, images.shape
np.testing.assert_array_equal(np.asarray(labels), test_labels[:64])


def bilinear(x, size):  # x (n, h, w) -> (n, size, size), TF 2's tf.image.resize
    def axis(n_in):
        s = np.clip((np.arange(size) + 0.5) * n_in / size - 0.5, 0, n_in - 1)
        lo = np.floor(s).astype(int)
        return lo, np.minimum(lo + 1, n_in - 1), s - lo
    (r0, r1, fr), (c0, c1, fc) = axis(x.shape[1]), axis(x.shape[2])
    rows = x[:, r0] * (1 - fr)[:, None] + x[:, r1] * fr[:, None]
    return rows[:, :, c0] * (1 - fc) + rows[:, :, c1] * fc


expected = bilinear(test_images[:64].astype(np.float64) / 255.0, 32)
np.testing.assert_allclose(images.numpy()[..., 0], expected, atol=1e-6)

# the full-buffer shuffle: a permutation of the labels, not their order; a new pass
# (a new iterator) reshuffles (reshuffle_each_iteration=True)
passes = [np.concatenate([np.asarray(y) for _, y in train_data]) for _ in range(2)]
for order in passes:
    np.testing.assert_array_equal(np.sort(order), np.sort(train_labels))
    assert (order != train_labels).mean() > 0.5
assert (passes[0] != passes[1]).mean() > 0.5

# evaluate() against numpy on predict()'s probabilities
probs = np.asarray(model.predict(test_data, verbose=0), dtype=np.float64)
assert probs.shape == (N_TEST, 10)
np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)
accuracy = float(np.mean(probs.argmax(axis=1) == test_labels))
p_true = np.clip(probs[np.arange(N_TEST), test_labels], 1e-7, 1 - 1e-7)
loss = float(-np.log(p_true).mean())
assert abs(evaluated[1] - accuracy) < 1e-6, (evaluated, accuracy)
assert abs(evaluated[0] - loss) < 1e-4 * max(1.0, loss), (evaluated, loss)
assert abs(history["val_accuracy"][-1] - evaluated[1]) < 1e-6, (history, evaluated)
assert abs(history["val_loss"][-1] - evaluated[0]) < 1e-4 * max(1.0, loss), (history, evaluated)
print(f"test accuracy {accuracy:.4f}, loss {loss:.4f}")
assert SHORT or accuracy > 0.5, accuracy

if not RESTARTED:  # added: "restart the kernel" and run every cell again but the json.dump
    rerun = runpy.run_path(__file__, init_globals={"RESTARTED": True}, run_name="__main__")
    assert rerun["printed"] == printed, (rerun["printed"], printed)
    np.testing.assert_array_equal(rerun["result_3"].numpy(), result_3.numpy())
    np.testing.assert_array_equal(rerun["result_4"].numpy(), result_4.numpy())
    assert rerun["history_loaded"] == history  # the restarted run read the first one's file
    assert rerun["history"] == history, (rerun["history"], history)  # exactly
    print("the restarted run repeated the History exactly")
