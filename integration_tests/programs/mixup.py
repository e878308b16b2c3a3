"""Port of keras-team/keras-io examples/vision/mixup.py ("MixUp augmentation for image
classification", the tf.keras version): one-hot labels (tf.one_hot), a validation split,
two independently shuffled and batched copies of the training set zipped
(tf.data.Dataset.zip), a map that mixes each pair of batches with lambdas drawn from a
Beta(0.2, 0.2) distribution made of two tf.random.gamma draws, a small Conv2D /
MaxPooling2D / Dropout / GlobalAvgPool2D / Dense classifier whose initial weights are saved
(save_weights) and loaded into two models, one trained with fit() on the mixed-up dataset and
one on plain batches, each evaluated on the test set.

Upstream: https://github.com/keras-team/keras-io/blob/0a57de48c864d63b80083820e8988368ee5c3149/examples/vision/mixup.py
Changed: names only (tf.keras.Sequential -> nn.Sequential, tensorflow.keras.layers ->
ember.nn.layers, tf.one_hot/shape/reshape -> em.*, tf.data -> ember.data, tf.data.AUTOTUNE ->
data.AUTOTUNE), except where a GAP says otherwise; MNIST digits stand in for Fashion-MNIST
(tf.keras.datasets.fashion_mnist.load_data() -> ember.data.datasets.mnist(data_dir=...),
kept uint8 as load_data() gives them: same shapes, ten classes); the plot of the nine
previewed images (matplotlib) is dropped, the nine labels are still printed; the weights
file goes into a temporary working directory. Reduced (EMBER_PROGRAMS_FULL=1 restores
upstream: 60,000 training images of which 2,000 for validation, 10,000 test images, 10
epochs): 10,000 training images of which 1,000 for validation, 2,000 test images, 3 epochs;
EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 1,000 (100), 200 and 1 epoch, no accuracy
threshold.
Added: seeds for numpy and ember; the data's shapes, ranges and one-hot rows; the two
shuffled copies give different orders (else mix_up would mix every image with itself), and
so does one shuffled copy zipped with itself (as in TF);
sample_beta_distribution's draws lie in [0, 1] with Beta(0.2, 0.2)'s mean 0.5 and variance
0.04 / (0.16 * 1.4) = 0.179; mix_up on two fixed batches against numpy (the same gamma
draws, reshaped and mixed by hand); every previewed label row sums to 1 with at most two
classes in it, and each mixed image is the matching convex combination of two training
images; the model's parameter count (Keras's formula: 18,762); both models start from the
saved weights (two fresh models differ before load_weights); evaluate() on a mixed batch
against numpy's categorical cross-entropy of soft labels and argmax agreement (Keras's
"accuracy" is categorical here), and on the test set against predict(); (CPU run) both
models pass 65% test accuracy (untrained: ~10%; with 5 seeds 79-87% for each model after
3 epochs on 9,000 digits; the gamma draws run on the map's threads in their order, so a run
does not repeat exactly, as upstream's does not).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error):
2. initial_model.save_weights("initial_weights.h5") is refused ("ValueError: save_weights:
the filename must end in `.weights.h5` or `.safetensors`"): Keras 3's rule (ember follows
it, docs/guide/saving.md), where tf.keras, which this upstream uses, writes an HDF5 file
for any name ending in .h5; "initial_weights.weights.h5" stands in for both lines.
4. (silent; a noted difference, not a failure) a shuffled dataset iterated on its own
after a zip repeats the orders it had in the zip's passes: here the second model's fit() on
train_ds_one goes through the orders train_ds_one had in the zip's first passes (the check
above, the preview, the first fit). In TF every iterator over a shuffle draws new seeds, so
no order repeats (tensorflow/tensorflow#41334). Upstream's lines are kept.
Fixed in ember since the port was written: the strict GPU double refused a dataset map
worker's uploads while fit() captured its step as a CUDA graph (GAP 3, "the current stream
is capturing"; it now restricts only the capturing thread, as cupy's relaxed capture mode
does), so upstream's num_parallel_calls=AUTO is restored on every backend; Dataset.zip((ds,
ds)) of one shuffled ds paired every element with itself (part of GAP 4; each input of a
zip is now its own pass, as in TF, and this is checked); tf.random.gamma was missing (GAP
1; em.random.gamma now draws it, and upstream's lines run).
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
"""

import os
import pathlib
import tempfile
import unittest

import numpy as np

import ember.core as em
from ember import data, nn
from ember.nn import layers

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)
np.random.seed(0)
workdir = tempfile.TemporaryDirectory()
os.chdir(workdir.name)  # the example's relative weights file, in a folder of its own


def load_data(n_train, n_test):
    """(added) MNIST in fashion_mnist.load_data()'s layout: uint8 images (n, 28, 28), uint8
    labels."""
    def split(name, n):
        x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
        return ((np.asarray(x).reshape(-1, 28, 28) * 255).round().astype(np.uint8),
                np.asarray(y).astype(np.uint8))
    return split("train", n_train), split("test", n_test)


"""
## Prepare the dataset
"""

(x_train, y_train), (x_test, y_test) = load_data(60000 if FULL else 1000 if SHORT else 10000,
                                                 10000 if FULL else 200 if SHORT else 2000)
labels_train, labels_test = y_train, y_test  # (added) kept for the checks

x_train = x_train.astype("float32") / 255.0
x_train = np.reshape(x_train, (-1, 28, 28, 1))
y_train = em.one_hot(y_train, 10)

x_test = x_test.astype("float32") / 255.0
x_test = np.reshape(x_test, (-1, 28, 28, 1))
y_test = em.one_hot(y_test, 10)

# (added) shapes, ranges, one-hot rows
assert x_train.shape[1:] == (28, 28, 1) and x_train.dtype == np.float32
assert 0.0 <= x_train.min() and x_train.max() <= 1.0
assert tuple(y_train.shape) == (len(x_train), 10) and y_train.dtype == em.float32
np.testing.assert_array_equal(np.argmax(y_train.numpy(), -1), labels_train)
np.testing.assert_array_equal(y_test.numpy().sum(-1), np.ones(len(x_test), np.float32))

"""
## Define hyperparameters
"""

AUTO = data.AUTOTUNE
BATCH_SIZE = 64
EPOCHS = 10 if FULL else 1 if SHORT else 3

"""
## Convert the data into TensorFlow `Dataset` objects
"""

# Put aside a few samples to create our validation set
val_samples = 2000 if FULL else 100 if SHORT else 1000
x_val, y_val = x_train[:val_samples], y_train[:val_samples]
new_x_train, new_y_train = x_train[val_samples:], y_train[val_samples:]

train_ds_one = (
    data.Dataset.from_tensor_slices((new_x_train, new_y_train))
    .shuffle(BATCH_SIZE * 100)
    .batch(BATCH_SIZE)
)
train_ds_two = (
    data.Dataset.from_tensor_slices((new_x_train, new_y_train))
    .shuffle(BATCH_SIZE * 100)
    .batch(BATCH_SIZE)
)
# Because we will be mixing up the images and their corresponding labels, we will be
# combining two shuffled datasets from the same training data.
train_ds = data.Dataset.zip((train_ds_one, train_ds_two))

val_ds = data.Dataset.from_tensor_slices((x_val, y_val)).batch(BATCH_SIZE)

test_ds = data.Dataset.from_tensor_slices((x_test, y_test)).batch(BATCH_SIZE)

# (added) the two copies are shuffled independently: their first batches differ
(first_one, _), (first_two, _) = next(iter(train_ds))
assert first_one.shape == first_two.shape == (BATCH_SIZE, 28, 28, 1)
assert not np.array_equal(np.asarray(first_one), np.asarray(first_two))
# (added) and so is one shuffled dataset zipped with itself (each side is its own pass, TF's)
(self_one, _), (self_two, _) = next(iter(data.Dataset.zip((train_ds_one, train_ds_one))))
assert not np.array_equal(np.asarray(self_one), np.asarray(self_two))

"""
## Define the mixup technique function
"""


def sample_beta_distribution(size, concentration_0=0.2, concentration_1=0.2):
    gamma_1_sample = em.random.gamma(shape=[size], alpha=concentration_1)
    gamma_2_sample = em.random.gamma(shape=[size], alpha=concentration_0)
    return gamma_1_sample / (gamma_1_sample + gamma_2_sample)


def mix_up(ds_one, ds_two, alpha=0.2):
    # Unpack two datasets
    images_one, labels_one = ds_one
    images_two, labels_two = ds_two
    batch_size = em.shape(images_one)[0]

    # Sample lambda and reshape it to do the mixup
    l = sample_beta_distribution(batch_size, alpha, alpha)
    x_l = em.reshape(l, (batch_size, 1, 1, 1))
    y_l = em.reshape(l, (batch_size, 1))

    # Perform mixup on both images and labels by combining a pair of images/labels
    # (one from each dataset) into one image/label
    images = images_one * x_l + images_two * (1 - x_l)
    labels = labels_one * y_l + labels_two * (1 - y_l)
    return (images, labels)


# (added) Beta(0.2, 0.2): in [0, 1], mean 0.5, variance ab / ((a + b)^2 (a + b + 1)) = 0.179
lam = sample_beta_distribution(20000).numpy()
assert lam.shape == (20000,) and lam.dtype == np.float32
assert lam.min() >= 0.0 and lam.max() <= 1.0
assert abs(lam.mean() - 0.5) < 0.02 and abs(lam.var() - 0.04 / (0.16 * 1.4)) < 0.01, \
    (lam.mean(), lam.var())

# (added) mix_up against numpy, on two fixed batches and the same gamma draws
xa, xb = new_x_train[:5], new_x_train[5:10]
ya, yb = new_y_train[:5].numpy(), new_y_train[5:10].numpy()
em.random.set_seed(1)
mixed_x, mixed_y = mix_up((xa, ya), (xb, yb))
em.random.set_seed(1)
g1 = em.random.gamma([5], 0.2).numpy()
g2 = em.random.gamma([5], 0.2).numpy()
lam = g1 / (g1 + g2)
np.testing.assert_allclose(mixed_x.numpy(), xa * lam[:, None, None, None]
                           + xb * (1 - lam[:, None, None, None]), rtol=1e-6, atol=1e-7)
np.testing.assert_allclose(mixed_y.numpy(), ya * lam[:, None] + yb * (1 - lam[:, None]),
                           rtol=1e-6, atol=1e-7)
assert tuple(mixed_x.shape) == (5, 28, 28, 1) and tuple(mixed_y.shape) == (5, 10)

"""
## Visualize the new augmented dataset
"""

# First create the new dataset using our `mix_up` utility
train_ds_mu = train_ds.map(
    lambda ds_one, ds_two: mix_up(ds_one, ds_two, alpha=0.2), num_parallel_calls=AUTO
)

# Let's preview 9 samples from the dataset
sample_images, sample_labels = next(iter(train_ds_mu))
# (matplotlib dropped: plt.figure(figsize=(10, 10)))
for i, (image, label) in enumerate(zip(sample_images[:9], sample_labels[:9])):  # noqa: B007
    # (matplotlib dropped: ax = plt.subplot(3, 3, i + 1); plt.imshow(image.numpy().squeeze()))
    assert image.numpy().squeeze().shape == (28, 28)  # (added)
    print(label.numpy().tolist())
    # (matplotlib dropped: plt.axis("off"))

# (added) the mixed batch: soft labels summing to 1, at most two classes each, and every
# image the same convex combination of two training images as its label
sx, sy = sample_images.numpy(), sample_labels.numpy()
assert sx.shape == (BATCH_SIZE, 28, 28, 1) and sy.shape == (BATCH_SIZE, 10)
np.testing.assert_allclose(sy.sum(-1), 1.0, atol=1e-6)
assert ((sy > 1e-6).sum(-1) <= 2).all() and sy.min() >= 0.0
flat_train = new_x_train.reshape(len(new_x_train), -1).astype(np.float64)
labels_new = labels_train[val_samples:]
pairs_checked = 0
for img, lab in zip(sx[:8], sy[:8]) if not FULL else ():
    classes = np.flatnonzero(lab > 1e-6)
    if len(classes) == 1:  # lambda ~ 0 or 1, or two images of one class: nothing to find
        continue
    # min over training pairs (a of class 0, b of class 1) of |img - w0 a - w1 b|^2
    w0, w1 = lab[classes].astype(np.float64)
    c = img.reshape(1, -1).astype(np.float64) - w0 * flat_train[labels_new == classes[0]]
    b = flat_train[labels_new == classes[1]]
    resid = (c * c).sum(1)[:, None] - 2 * w1 * c @ b.T + w1 * w1 * (b * b).sum(1)[None]
    assert resid.min() < 1e-8, resid.min()
    pairs_checked += 1
assert FULL or pairs_checked >= 2, pairs_checked

"""
## Model building
"""


def get_training_model():
    model = nn.Sequential(
        [
            layers.Conv2D(16, (5, 5), activation="relu", input_shape=(28, 28, 1)),
            layers.MaxPooling2D(pool_size=(2, 2)),
            layers.Conv2D(32, (5, 5), activation="relu"),
            layers.MaxPooling2D(pool_size=(2, 2)),
            layers.Dropout(0.2),
            layers.GlobalAvgPool2D(),
            layers.Dense(128, activation="relu"),
            layers.Dense(10, activation="softmax"),
        ]
    )
    return model


"""
For the sake of reproducibility, we serialize the initial random weights of our shallow
network.
"""

initial_model = get_training_model()
# GAP 2: initial_model.save_weights("initial_weights.h5")
initial_model.save_weights("initial_weights.weights.h5")
# (added) Keras's count: 5*5*1*16+16 + 5*5*16*32+32 + 32*128+128 + 128*10+10
assert initial_model.count_params() == 416 + 12832 + 4224 + 1290 == 18762
assert initial_model.output_shape == (None, 10)
initial_weights = initial_model.get_weights()

"""
## 1. Train the model with the mixed up dataset
"""

model = get_training_model()
assert not all(np.array_equal(a, b) for a, b in zip(model.get_weights(), initial_weights))
# GAP 2: model.load_weights("initial_weights.h5")
model.load_weights("initial_weights.weights.h5")
for a, b in zip(model.get_weights(), initial_weights):  # (added)
    np.testing.assert_array_equal(a, b)
model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
history = model.fit(train_ds_mu, validation_data=val_ds, epochs=EPOCHS)
_, test_acc = model.evaluate(test_ds)
print("Test accuracy: {:.2f}%".format(test_acc * 100))  # noqa: UP032 (upstream's)
mixup_acc = test_acc


def check_evaluate(model, x, y_soft):
    """(added) evaluate() against numpy: categorical cross-entropy of (soft) labels, Keras's
    clipping at 1e-7, and the categorical accuracy (argmax agreement)."""
    loss, acc = model.evaluate(x, y_soft, batch_size=len(x), verbose=0)
    p = np.asarray(model.predict(x, batch_size=len(x), verbose=0), np.float64)
    assert p.shape == (len(x), 10)
    np.testing.assert_allclose(p.sum(-1), 1.0, rtol=1e-5)
    want = np.mean(-np.sum(y_soft * np.log(np.clip(p, 1e-7, 1 - 1e-7)), -1))
    np.testing.assert_allclose(loss, want, rtol=1e-4)
    np.testing.assert_allclose(acc, np.mean(np.argmax(p, -1) == np.argmax(y_soft, -1)), atol=1e-6)
    return loss, acc


check_evaluate(model, sx, sy)
_, by_hand = check_evaluate(model, x_test, y_test.numpy())
np.testing.assert_allclose(test_acc, by_hand, atol=1e-6)
assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
assert len(history.history["loss"]) == EPOCHS

"""
## 2. Train the model *without* the mixed up dataset
"""

model = get_training_model()
# GAP 2: model.load_weights("initial_weights.h5")
model.load_weights("initial_weights.weights.h5")
model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
# Notice that we are NOT using the mixed up dataset here
# GAP 4 (silent, a noted difference): its passes repeat train_ds_one's orders in the zip's
# first passes (TF draws new orders for every iterator)
model.fit(train_ds_one, validation_data=val_ds, epochs=EPOCHS)
_, test_acc = model.evaluate(test_ds)
print("Test accuracy: {:.2f}%".format(test_acc * 100))  # noqa: UP032 (upstream's)
_, by_hand = check_evaluate(model, x_test, y_test.numpy())
np.testing.assert_allclose(test_acc, by_hand, atol=1e-6)

# (added) both models learned: an untrained one is near 10%
assert SHORT or (mixup_acc > 0.65 and test_acc > 0.65), (mixup_acc, test_acc)
