"""Port of keras-team/keras-io examples/vision/gradient_centralization.py ("Gradient
Centralization for Better Training Performance"): the Horses or Humans dataset from
tfds.load, rescaled by a Rescaling layer in a Dataset.map, shuffled, batched and augmented
(a Sequential of RandomFlip, RandomRotation and RandomZoom mapped over the batches),
prefetched; a five-block Conv2D/MaxPooling2D/Dropout network with a sigmoid Dense; an
RMSprop subclass overriding get_gradients to centralize the gradients; a callback timing
each epoch; compile with binary_crossentropy and accuracy, fit without GC, compile again
with the GC optimizer and fit again, then the two runs' last loss, accuracy and time.

Upstream: https://github.com/keras-team/keras-io/blob/3a8622d94d7685d84435388a20316a1544d0af5c/examples/vision/gradient_centralization.py
Changed: names only (tensorflow -> ember.core as em: tf.reduce_mean -> em.reduce_mean;
tf.data.AUTOTUNE -> ember.data.AUTOTUNE; tensorflow.keras.layers -> ember.nn.layers;
tf.keras.Sequential -> nn.Sequential, tensorflow.keras.optimizers.RMSprop ->
nn.optimizers.RMSprop, tf.keras.callbacks.Callback -> nn.callbacks.Callback). The
Keras 3 version of the example (keras / keras.ops / tf.data, data_augmentation a list of
the same three layers) makes the same calls. Horses or Humans cannot be downloaded here
(no network): a local tfds.load with tfds's arguments returns the same splits and metadata
(features['image'].shape, splits[...].num_examples) of GENERATED pictures in its layout:
uint8 RGB (size, size, 3) images, int64 labels 0 (horses) and 1 (humans); each a figure
drawn with numpy on a two-colour gradient background with noise: a horse (a wide body on
four legs, a neck and a head, in one coat colour) or a person (a skin-coloured head, a
shirt with arms, trousers on two legs), of random position, size and colours.
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream's 300x300 images, 1,027 training and
256 test pictures, batch 128 and 10 epochs a run): 100x100 images (the least size this
network takes is 94: five valid 3x3 convolutions each followed by a 2x2 pooling), 256
training and 64 test pictures, batch 32, 4 epochs a run (32 steps); the model's
input_shape follows the images' size. EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 64
and 32 pictures, 1 epoch a run, no threshold on what training reached.
Added: seeds for numpy and ember; the metadata and the elements' shapes and dtypes;
Rescaling against numpy's x / 255; the prepared batches (shapes, dtypes, values in
[0, 1], every label once; the test set unshuffled, unaugmented and equal to the pictures
/ 255; the augmentation moving the training pictures; RandomFlip's one draw); the
model's output shapes and parameter count against Keras's formulas (1,704,097 at
300x300, as upstream's summary), its name and its layers' names as upstream's summary
prints them, Keras's default initializers (glorot_uniform's bound and spread, zero
biases) and Dropout(0.5)'s {0, 2} in training; History's keys and one finite value an
epoch, TimeHistory's one time an epoch; compile keeping the trained weights;
GCRMSprop.get_gradients never called by fit, as in tf.keras (fit takes the gradients with
a GradientTape in Optimizer.minimize; get_gradients is the legacy graph-mode path) and
Keras 3 (its optimizers have no get_gradients): upstream's "with GC" run is plain
RMSprop continuing from the first run's weights, which is why it ends better; the GC
optimizer's step count; upstream's centralization loop run on one batch's gradients
(from a GradientTape) against numpy's g - mean(g) over all axes but the last, and one
step of a fresh RMSprop with them against numpy's rule, Keras 3's (ms = 0.1 g^2;
v -= lr g / sqrt(ms + 1e-7); tf.keras 2's put epsilon after the square root); predict on 8
test pictures against a float64 numpy forward pass of the trained network; evaluate's loss
and accuracy against numpy's on predict's probabilities; and what training reached (CPU
run): test accuracy >= 0.8, the last epoch's training accuracy > 0.7 and loss < 0.6. An
untrained model scores 0.41-0.52 on the 64 balanced test pictures with loss 0.692-0.694 (5
seeds), and the first epoch's training accuracy is 0.50-0.57; 11 runs (7 seeds) reached test
accuracy 0.875-1.0,
training accuracy 0.80-0.90 and loss 0.39-0.55. The augmentation map runs in parallel
threads that draw from ember's one random stream, so runs with the same seeds differ (as
a parallel tf.data map with random ops does in TensorFlow without op determinism).
Found: no GAP: every upstream line runs with its names changed. Noted, as Keras 3
(ember's contract) where the tf.keras 2 of this version differs: RandomFlip(
"horizontal_and_vertical") flips both ways on one draw (tf.keras 2: two draws, four
orientations); nn.optimizers.RMSprop has no get_gradients (tf.keras 2's OptimizerV2 has
one; Keras 3's optimizers have none), so upstream's override would raise AttributeError
in ember where TensorFlow raises TypeError (super().get_gradients() lacks its arguments)
if anything called it; nothing does, here or in TensorFlow. em.reduce_mean accepts TF
1's keep_dims= (ember's documented contract; TF 2's tf.reduce_mean and keras.ops.mean
would refuse it, were the line reached).
"""

import math
import os
import types
from time import time

import numpy as np

import ember.core as em
from ember import data, nn, tape
from ember.nn import layers
from ember.nn.optimizers import RMSprop

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
np.random.seed(0)
em.random.set_seed(0)

SIZE = 300 if FULL else 100  # the pictures' side (upstream's input_shape: 300)
N_TRAIN = 1027 if FULL else 64 if SHORT else 256  # Horses or Humans: 1,027 and 256
N_TEST = 256 if FULL else 32 if SHORT else 64
EPOCHS = 10 if FULL else 1 if SHORT else 4


# ---------------------------------------------------------------------------------------
# Added: the stand-in for tfds.load("horses_or_humans", ...) (see the header).
def picture(i, label, size):
    """Picture i: a horse (label 0) or a person (label 1) on a gradient background."""
    rng = np.random.default_rng([11, i])
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float64) / size
    top, bottom = rng.uniform(60, 230, 3), rng.uniform(40, 200, 3)
    img = top + (bottom - top) * yy[..., None]
    cx, cy, s = rng.uniform(0.42, 0.58), rng.uniform(0.45, 0.55), rng.uniform(1.1, 1.4)
    u, v = (xx - cx) / s + 0.1 * (label == 0), (yy - cy) / s  # the figure's frame

    def ellipse(x0, y0, rx, ry):
        return ((u - x0) / rx) ** 2 + ((v - y0) / ry) ** 2 <= 1

    def box(x0, y0, x1, y1):
        return (u >= x0) & (u <= x1) & (v >= y0) & (v <= y1)

    if label == 0:  # a wide body on four legs, a neck and a head, in one coat colour
        coat = rng.choice([[120, 70, 35], [150, 100, 55], [60, 40, 30], [90, 60, 45]])
        img[ellipse(0, 0, 0.28, 0.12) | box(-0.24, 0, -0.19, 0.3) | box(-0.14, 0, -0.09, 0.3)
            | box(0.1, 0, 0.15, 0.3) | box(0.19, 0, 0.24, 0.3) | ellipse(0.3, -0.14, 0.06, 0.14)
            | ellipse(0.38, -0.26, 0.1, 0.05)] = coat + rng.uniform(-20, 20, 3)
    else:  # a head, a shirt with arms, trousers on two legs
        skin = rng.uniform([150, 100, 80], [240, 190, 160])
        shirt, trousers = rng.uniform(120, 255, 3), rng.uniform(0, 120, 3)
        img[box(-0.1, -0.2, 0.1, 0.05) | box(-0.17, -0.2, -0.11, 0.03)
            | box(0.11, -0.2, 0.17, 0.03)] = shirt
        img[box(-0.09, 0.05, -0.01, 0.38) | box(0.01, 0.05, 0.09, 0.38)] = trousers
        img[ellipse(0, -0.3, 0.07, 0.09)] = skin
    img += rng.normal(0, 6, img.shape)
    return np.clip(img, 0, 255).round().astype(np.uint8)


def _split(name, n, first):
    labels = np.random.default_rng([5, first]).permutation(np.arange(n) % 2).astype(np.int64)
    images = np.stack([picture(first + i, labels[i], SIZE) for i in range(n)])
    return images, labels


SPLITS = {"train": _split("train", N_TRAIN, 0), "test": _split("test", N_TEST, N_TRAIN)}


def _tfds_load(name, split, with_info, as_supervised):
    assert name == "horses_or_humans" and with_info and as_supervised
    datasets = [data.Dataset.from_tensor_slices(SPLITS[s]) for s in split]
    info = types.SimpleNamespace(
        features={"image": types.SimpleNamespace(shape=(SIZE, SIZE, 3), dtype=em.uint8)},
        splits={s: types.SimpleNamespace(num_examples=len(SPLITS[s][1])) for s in SPLITS})
    return datasets, info


tfds = types.SimpleNamespace(load=_tfds_load,
                             Split=types.SimpleNamespace(TRAIN="train", TEST="test"))

# ---------------------------------------------------------------------------------------
"""
## Prepare the data
"""

num_classes = 2
input_shape = (SIZE, SIZE, 3)  # upstream: (300, 300, 3)
dataset_name = "horses_or_humans"
batch_size = 128 if FULL else 32
AUTOTUNE = data.AUTOTUNE

(train_ds, test_ds), metadata = tfds.load(
    name=dataset_name,
    split=[tfds.Split.TRAIN, tfds.Split.TEST],
    with_info=True,
    as_supervised=True,
)

print(f"Image shape: {metadata.features['image'].shape}")
print(f"Training images: {metadata.splits['train'].num_examples}")
print(f"Test images: {metadata.splits['test'].num_examples}")

# Added: the elements as tfds gives them
image0, label0 = next(iter(train_ds))
assert image0.shape == input_shape and image0.dtype == np.uint8, (image0.shape, image0.dtype)
assert label0.shape == () and label0.dtype == np.int64
np.testing.assert_array_equal(image0, SPLITS["train"][0][0])
assert metadata.splits["train"].num_examples == N_TRAIN

"""
## Use Data Augmentation

We will rescale the data to `[0, 1]` and perform simple augmentations to our data.
"""

rescale = layers.Rescaling(1.0 / 255)

data_augmentation = nn.Sequential(
    [
        layers.RandomFlip("horizontal_and_vertical"),
        layers.RandomRotation(0.3),
        layers.RandomZoom(0.2),
    ]
)

# Added: Rescaling against numpy
scaled0 = rescale(image0)
assert scaled0.dtype == em.float32 and scaled0.shape == input_shape
np.testing.assert_allclose(scaled0.numpy(), image0.astype(np.float32) / 255, rtol=1e-6)


def prepare(ds, shuffle=False, augment=False):
    # Rescale dataset
    ds = ds.map(lambda x, y: (rescale(x), y), num_parallel_calls=AUTOTUNE)

    if shuffle:
        ds = ds.shuffle(1024)

    # Batch dataset
    ds = ds.batch(batch_size)

    # Use data augmentation only on the training set
    if augment:
        ds = ds.map(
            lambda x, y: (data_augmentation(x, training=True), y),
            num_parallel_calls=AUTOTUNE,
        )

    # Use buffered prefecting
    return ds.prefetch(buffer_size=AUTOTUNE)


"""
Rescale and augment the data
"""

train_ds = prepare(train_ds, shuffle=True, augment=True)
test_ds = prepare(test_ds)

# Added: the prepared batches
steps = math.ceil(N_TRAIN / batch_size)
train_batches = list(train_ds)
assert len(train_batches) == steps
for xb, yb in train_batches:
    xb, yb = np.asarray(xb), np.asarray(yb)
    assert xb.shape[1:] == input_shape and xb.dtype == np.float32, (xb.shape, xb.dtype)
    assert len(xb) == len(yb) and yb.dtype == np.int64
    assert xb.min() >= -1e-6 and xb.max() <= 1 + 1e-6, (xb.min(), xb.max())
assert sum(len(b[1]) for b in train_batches) == N_TRAIN
assert sorted(np.concatenate([np.asarray(b[1]) for b in train_batches])) == sorted(
    SPLITS["train"][1])
test_x = np.concatenate([np.asarray(b[0]) for b in test_ds])
test_y = np.concatenate([np.asarray(b[1]) for b in test_ds])
np.testing.assert_allclose(test_x, SPLITS["test"][0].astype(np.float32) / 255, rtol=1e-6)
np.testing.assert_array_equal(test_y, SPLITS["test"][1])
# the augmentation moved the training pictures: no batch is one of the rescaled pictures
train_scaled = SPLITS["train"][0].astype(np.float32) / 255
first = np.asarray(train_batches[0][0])
assert not any(np.allclose(first[0], p, atol=1e-3) for p in train_scaled)
# RandomFlip("horizontal_and_vertical") flips an image both ways or not at all, one draw
# (Keras 3's rule; the tf.keras 2 of this version drew left-right and up-down apart)
flipped = data_augmentation.layers[0](np.repeat(train_scaled[:1], 16, 0), training=True)
half_turn = [np.array_equal(f, train_scaled[0, ::-1, ::-1]) for f in flipped.numpy()]
unflipped = [np.array_equal(f, train_scaled[0]) for f in flipped.numpy()]
assert all(np.logical_or(half_turn, unflipped)) and any(half_turn) and any(unflipped)

"""
## Define a model

In this section we will define a Convolutional neural network.
"""

model = nn.Sequential(
    [
        layers.Conv2D(16, (3, 3), activation="relu", input_shape=input_shape),  # upstream: (300, 300, 3)
        layers.MaxPooling2D(2, 2),
        layers.Conv2D(32, (3, 3), activation="relu"),
        layers.Dropout(0.5),
        layers.MaxPooling2D(2, 2),
        layers.Conv2D(64, (3, 3), activation="relu"),
        layers.Dropout(0.5),
        layers.MaxPooling2D(2, 2),
        layers.Conv2D(64, (3, 3), activation="relu"),
        layers.MaxPooling2D(2, 2),
        layers.Conv2D(64, (3, 3), activation="relu"),
        layers.MaxPooling2D(2, 2),
        layers.Flatten(),
        layers.Dropout(0.5),
        layers.Dense(512, activation="relu"),
        layers.Dense(1, activation="sigmoid"),
    ]
)

# Added: the output shapes and parameter count against Keras's formulas
side, params, channels = SIZE, 0, 3
for filters in (16, 32, 64, 64, 64):
    side = (side - 2) // 2
    params += 3 * 3 * channels * filters + filters
    channels = filters
params += side * side * 64 * 512 + 512 + 512 + 1
assert model.output_shape == (None, 1), model.output_shape
assert model.layers[12].output.shape == (None, side * side * 64)
assert model.count_params() == params, (model.count_params(), params)
assert not FULL or params == 1_704_097  # upstream's summary
# Keras's names (upstream's summary: the augmentation Sequential took "sequential"), its
# default initializers (glorot_uniform kernels: |w| <= sqrt(6 / (fan_in + fan_out)), the
# fans of a conv kernel its receptive field times its channels in and out; zero biases)
# and Dropout(0.5) in training (each unit dropped or scaled by 1 / (1 - 0.5))
assert model.name == "sequential_1" and data_augmentation.name == "sequential", model.name
assert [layer.name for layer in model.layers] == [
    "conv2d", "max_pooling2d", "conv2d_1", "dropout", "max_pooling2d_1", "conv2d_2",
    "dropout_1", "max_pooling2d_2", "conv2d_3", "max_pooling2d_3", "conv2d_4",
    "max_pooling2d_4", "flatten", "dropout_2", "dense", "dense_1"]
for kernel, bias in zip(model.trainable_variables[::2], model.trainable_variables[1::2]):
    k = kernel.numpy()
    receptive = int(np.prod(k.shape[:-2]))
    limit = math.sqrt(6 / (receptive * (k.shape[-2] + k.shape[-1])))
    assert limit * 0.9 < np.abs(k).max() <= limit, (kernel.name, np.abs(k).max(), limit)
    assert abs(k.std() - limit / math.sqrt(3)) < 0.1 * limit, (kernel.name, k.std(), limit)
    assert not bias.numpy().any()
dropped = model.layers[3](em.ones((4000,)), training=True).numpy()
assert set(np.unique(dropped)) <= {0.0, 2.0} and 0.45 < np.mean(dropped == 0) < 0.55

"""
## Implement Gradient Centralization
"""


class GCRMSprop(RMSprop):
    def get_gradients(self, loss, params):
        # We here just provide a modified get_gradients() function since we are
        # trying to just compute the centralized gradients.

        grads = []
        gradients = super().get_gradients()
        for grad in gradients:
            grad_len = len(grad.shape)
            if grad_len > 1:
                axis = list(range(grad_len - 1))
                grad -= em.reduce_mean(grad, axis=axis, keep_dims=True)
            grads.append(grad)

        return grads


optimizer = GCRMSprop(learning_rate=1e-4)

"""
## Training utilities
"""


class TimeHistory(nn.callbacks.Callback):
    def on_train_begin(self, logs={}):  # noqa: B006 (upstream's)
        self.times = []

    def on_epoch_begin(self, batch, logs={}):  # noqa: B006
        self.epoch_time_start = time()

    def on_epoch_end(self, batch, logs={}):  # noqa: B006
        self.times.append(time() - self.epoch_time_start)


"""
## Train the model without GC
"""

time_callback_no_gc = TimeHistory()
model.compile(
    loss="binary_crossentropy",
    optimizer=RMSprop(learning_rate=1e-4),
    metrics=["accuracy"],
)

model.summary()

"""
We also save the history since we later want to compare our model trained with and not
trained with Gradient Centralization
"""

history_no_gc = model.fit(
    train_ds, epochs=EPOCHS, verbose=1, callbacks=[time_callback_no_gc]
)

"""
## Train the model with GC
"""

# Added: compile keeps the trained weights; count the calls of get_gradients
weights_before = [w.numpy().copy() for w in model.weights]
gc_calls = []
_get_gradients = GCRMSprop.get_gradients
GCRMSprop.get_gradients = lambda self, *a, **k: gc_calls.append(a) or _get_gradients(self, *a, **k)

time_callback_gc = TimeHistory()
model.compile(loss="binary_crossentropy", optimizer=optimizer, metrics=["accuracy"])

for w, before in zip(model.weights, weights_before):
    np.testing.assert_array_equal(w.numpy(), before)

model.summary()

history_gc = model.fit(train_ds, epochs=EPOCHS, verbose=1, callbacks=[time_callback_gc])

"""
## Comparing performance
"""

print("Not using Gradient Centralization")
print(f"Loss: {history_no_gc.history['loss'][-1]}")
print(f"Accuracy: {history_no_gc.history['accuracy'][-1]}")
print(f"Training Time: {sum(time_callback_no_gc.times)}")

print("Using Gradient Centralization")
print(f"Loss: {history_gc.history['loss'][-1]}")
print(f"Accuracy: {history_gc.history['accuracy'][-1]}")
print(f"Training Time: {sum(time_callback_gc.times)}")

# ---------------------------------------------------------------------------------------
# Added: what the two runs recorded, and that fit never asked for get_gradients
for history, timer in ((history_no_gc, time_callback_no_gc), (history_gc, time_callback_gc)):
    assert set(history.history) == {"loss", "accuracy"}, history.history.keys()
    assert all(len(v) == EPOCHS and np.all(np.isfinite(v)) for v in history.history.values())
    assert len(timer.times) == EPOCHS and all(t > 0 for t in timer.times)
assert gc_calls == [], len(gc_calls)
assert int(optimizer.iterations) == EPOCHS * steps, (int(optimizer.iterations), steps)

# Added: upstream's centralization loop on one batch's gradients, against numpy
xb, yb = train_batches[0]
with tape.GradientTape() as gt:
    loss = nn.losses.binary_crossentropy(em.cast(em.reshape(yb, (-1, 1)), em.float32),
                                         model(xb, training=False))
    loss = em.reduce_mean(loss)
gradients = gt.gradient(loss, model.trainable_variables)
grads = []
for grad in gradients:  # the body of GCRMSprop.get_gradients
    grad_len = len(grad.shape)
    if grad_len > 1:
        axis = list(range(grad_len - 1))
        grad -= em.reduce_mean(grad, axis=axis, keep_dims=True)
    grads.append(grad)
for g, c in zip(gradients, grads):
    g, c = g.numpy().astype(np.float64), c.numpy()
    expect = g - g.reshape(-1, g.shape[-1]).mean(0) if g.ndim > 1 else g
    np.testing.assert_allclose(c, expect, rtol=1e-4, atol=1e-6 * np.abs(g).max())
    if g.ndim > 1:
        assert np.abs(c.reshape(-1, g.shape[-1]).mean(0)).max() <= 1e-5 * np.abs(g).max()
# one step of a fresh RMSprop with the centralized gradients, against numpy's rule
values = [v.numpy().astype(np.float64) for v in model.trainable_variables]
step_opt = RMSprop(learning_rate=1e-4)
step_opt.apply_gradients(zip(grads, model.trainable_variables))
for v, before, c in zip(model.trainable_variables, values, grads):
    c = c.numpy().astype(np.float64)
    expect = before - 1e-4 * c / np.sqrt(0.1 * c * c + 1e-7)  # Keras 3's rule
    np.testing.assert_allclose(v.numpy(), expect, rtol=1e-5, atol=1e-7)
    v.assign(before.astype(np.float32))

# Added: predict against a float64 numpy forward pass of the trained network in inference
# (valid 3x3 cross-correlations, 2x2 max pooling dropping the odd row and column, Dropout
# the identity, Flatten in (height, width, channel) order), on 8 test pictures
def np_forward(x, ws):
    x = x.astype(np.float64)
    for k in range(5):
        kernel, bias = ws[2 * k], ws[2 * k + 1]
        h, w = x.shape[1] - 2, x.shape[2] - 2
        patches = np.stack([x[:, i:i + h, j:j + w] for i in range(3) for j in range(3)], 3)
        x = np.maximum(np.einsum("nhwkc,kcf->nhwf", patches, kernel.reshape(9, *kernel.shape[2:]))
                       + bias, 0)
        h2, w2 = x.shape[1] // 2, x.shape[2] // 2
        x = x[:, :2 * h2, :2 * w2].reshape(len(x), h2, 2, w2, 2, -1).max(axis=(2, 4))
    x = np.maximum(x.reshape(len(x), -1) @ ws[10] + ws[11], 0)
    return 1 / (1 + np.exp(-(x @ ws[12] + ws[13])))


ws = [v.numpy().astype(np.float64) for v in model.trainable_variables]
assert [w.shape for w in ws[::2]] == [(3, 3, 3, 16), (3, 3, 16, 32), (3, 3, 32, 64),
                                      (3, 3, 64, 64), (3, 3, 64, 64), (side * side * 64, 512),
                                      (512, 1)]
probs = model.predict(test_ds, verbose=0)
assert probs.shape == (N_TEST, 1) and probs.dtype == np.float32, (probs.shape, probs.dtype)
np.testing.assert_allclose(probs[:8], np_forward(test_x[:8], ws), rtol=1e-4, atol=1e-6)

# Added: evaluate against numpy on predict's probabilities, and what training reached
test_loss, test_acc = model.evaluate(test_ds, verbose=0)
probs = probs[:, 0].astype(np.float64)
np_acc = np.mean((probs > 0.5) == (test_y == 1))
p = np.clip(probs, 1e-7, 1 - 1e-7)
np_loss = -np.mean(test_y * np.log(p) + (1 - test_y) * np.log(1 - p))
np.testing.assert_allclose(test_acc, np_acc, atol=1e-6)
np.testing.assert_allclose(test_loss, np_loss, rtol=1e-4)
print(f"test loss {test_loss:.4f}, test accuracy {test_acc:.4f}; training accuracy "
      f"{history_no_gc.history['accuracy']} then {history_gc.history['accuracy']}")
if not SHORT:
    assert test_acc >= 0.8, test_acc
    assert history_gc.history["accuracy"][-1] > 0.7, history_gc.history
    assert history_gc.history["loss"][-1] < 0.6, history_gc.history
