"""Port of keras-team/keras-io examples/vision/metric_learning.py ("Metric learning for image
similarity search", the tf.keras version): a keras.utils.Sequence of (anchor, positive)
pairs, one image of each class per row, drawn with Python's random; a functional
keras.Model subclass overriding train_step(data) with a GradientTape, tf.einsum of the two
embeddings over a temperature as logits, self.compiled_loss on tf.range labels,
self.compiled_metrics and self.metrics; a small Conv2D/GlobalAveragePooling2D/Dense
network with tf.nn.l2_normalize on its output; Adam, SparseCategoricalCrossentropy(
from_logits=True); fit on the Sequence; predict, then near neighbours by numpy dot
products and a near-neighbour confusion matrix.

Upstream: https://github.com/keras-team/keras-io/blob/653efec051cf5ad149f93795a218fdd7c27d1afb/examples/vision/metric_learning.py
Changed: names only (tensorflow.keras/keras -> nn, bound to the name `keras` as the example
spells it; tensorflow.keras.layers -> nn.layers; tf.* -> em.*, bound to the name `tf`;
tf.GradientTape -> tape.GradientTape; tf.nn.l2_normalize -> em.nn_ops.l2_normalize).
CIFAR-10 cannot be downloaded: cifar10.load_data() is replaced by the real MNIST digits
(ember.data.datasets.mnist from $EMBER_DATA, else ../shared/datasets/mnist beside the
checkout as test_programs.py finds them; the program skips when they are absent) in
CIFAR's layout, as cct_image_classification.py: uint8 (n, 32, 32, 3) images (each 28x28
digit centred on a 32x32 black canvas and repeated to 3 channels) and (n, 1) labels; the
confusion matrix's display labels are the digits' names. The collage sampling's upper
bound 50000 (CIFAR's training set) is the number of training images loaded.
sklearn.metrics.ConfusionMatrixDisplay (sklearn is not installed) and the matplotlib
plots are dropped: the loss history and the confusion matrix are printed instead. The
PIL collages are kept (Pillow is installed) and checked.
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream's 1,000 batches an epoch, 20 epochs, and
all 60,000/10,000 digits): 4,000 training and 1,000 test digits, 100 batches of 10 pairs
an epoch, 4 epochs; EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 500/200 digits, 10
batches, 1 epoch, no threshold on what training reached.
Added: seeds for Python's random, numpy and ember; the data's layout; the class lookups
cover every image once, by its class; a Sequence batch is (2, 10, 32, 32, 3) float32 whose
row c holds two distinct training images of class c; the collages' sizes; the
model's layer shapes (32 -> 15 -> 7 -> 3) and parameter count (by hand); its embeddings
have unit norm and equal numpy's l2 normalization of the Dense layer's output; tf.einsum
equals numpy's; the gradient of the train_step loss with respect to the Dense layer's
kernel and bias equals one derived by hand in numpy from the pooled features; two
train_steps called outside fit: the first returns (as `loss`, its only metric) numpy's
sparse cross entropy of the pre-step similarities over the temperature, changes every
weight, and moves the Dense layer's by Keras's Adam step for numpy's gradients; after the
second, `loss` is the mean of the two steps' losses; the near-neighbour table's last
column is each example itself; every confusion-matrix row counts 10 examples x 10
neighbours; the optimizer took one step a batch. Thresholds (CPU
run): the last epoch's loss is below 1.0 and below the first's (an untrained model sits
near log(10) = 2.30: unit embeddings over the temperature 0.2 give logits within +-5 that
it cannot yet order; this seed goes 1.87, 1.20, 0.83, 0.60; seeds 1-5 end at 0.56-0.65),
and the same-class share of the confusion matrix's near neighbours passes 0.75 and the
untrained model's by 0.3 (chance is 0.1; a random convolutional network already clusters
the digits a little: the untrained model gets 0.23 with this seed, 0.23-0.29 with seeds
1-5; trained, 0.90 with this seed, 0.89-0.92 with seeds 1-5).
Skips only when the MNIST files are absent.
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error): none open.
Fixed in ember since the first version of this port: tf.nn.l2_normalize on the functional
model's symbolic tensor raised TypeError (GAP 1, loud; tf.keras wraps it as a TFOpLambda
layer); it now makes a node of the graph (an operation, as Keras 3's, so the Dense is
model.layers[-1], where tf.keras's TFOpLambda layer would follow it), and upstream's line is
restored. Iterating a
keras.utils.Sequence (ember's PyDataset) called its on_epoch_begin() first and its
on_epoch_end() after a full pass (silent, not on this program's path: a Sequence that
reshuffles in on_epoch_end was reshuffled by a plain `for batch in seq`); as tf.keras's
Sequence.__iter__, a loop now only yields self[i] for i in range(len(self)). Checked and the same as
tf.keras: the batch handed to the overridden train_step is the Sequence's array itself;
glorot_uniform kernels and zero biases; valid 3x3 stride-2 convolutions (against numpy);
tf.range is int32; l2_normalize's epsilon 1e-12 under the square root; the loss metric is
the epoch's mean of the batch losses.
"""

import os
import pathlib
import random
import unittest
from collections import defaultdict

import numpy as np
from PIL import Image

import ember.core as em
from ember import data, nn
from ember import tape as tape_lib
from ember.nn import layers

tf = em  # the example's `tf.` prefix
keras = nn  # and its `keras.`
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
# as test_programs.py: $EMBER_DATA, else the workspace's copy beside the checkout, else the cache
SHARED_MNIST = pathlib.Path(__file__).resolve().parents[3] / "shared" / "datasets" / "mnist"
DATA_DIR = os.environ.get("EMBER_DATA") or (
    str(SHARED_MNIST) if SHARED_MNIST.is_dir()
    else os.path.expanduser("~/.cache/ember/datasets/mnist"))
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)
np.random.seed(0)
random.seed(0)
N_TRAIN = 60000 if FULL else 500 if SHORT else 4000
N_TEST = 10000 if FULL else 200 if SHORT else 1000
NUM_BATCHS = 1000 if FULL else 10 if SHORT else 100
EPOCHS = 20 if FULL else 1 if SHORT else 4


def load_data():
    """MNIST in CIFAR's layout: uint8 (n, 32, 32, 3) images, (n, 1) labels."""
    def split(name, n):
        x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
        x = (np.asarray(x).reshape(-1, 28, 28, 1) * 255).round().astype(np.uint8)
        x = np.pad(x, ((0, 0), (2, 2), (2, 2), (0, 0)))  # centred on a 32x32 canvas
        return np.repeat(x, 3, axis=-1), np.asarray(y).astype(np.uint8).reshape(-1, 1)
    return split("train", N_TRAIN), split("test", N_TEST)


"""
## Dataset
"""

(x_train, y_train), (x_test, y_test) = load_data()
assert x_train.shape == (N_TRAIN, 32, 32, 3) and x_train.dtype == np.uint8  # added
assert y_train.shape == (N_TRAIN, 1) and y_test.shape == (N_TEST, 1)  # added

x_train = x_train.astype("float32") / 255.0
y_train = np.squeeze(y_train)
x_test = x_test.astype("float32") / 255.0
y_test = np.squeeze(y_test)
assert y_train.shape == (N_TRAIN,) and x_test.dtype == np.float32  # added
assert 0.0 == x_train.min() and x_train.max() == 1.0  # added

"""
To get a sense of the dataset we can visualise a grid of 25 random examples.
"""

height_width = 32


def show_collage(examples):
    box_size = height_width + 2
    num_rows, num_cols = examples.shape[:2]

    collage = Image.new(
        mode="RGB",
        size=(num_cols * box_size, num_rows * box_size),
        color=(250, 250, 250),
    )
    for row_idx in range(num_rows):
        for col_idx in range(num_cols):
            array = (np.array(examples[row_idx, col_idx]) * 255).astype(np.uint8)
            collage.paste(
                Image.fromarray(array), (col_idx * box_size, row_idx * box_size)
            )

    # Double size for visualisation.
    collage = collage.resize((2 * num_cols * box_size, 2 * num_rows * box_size))
    return collage


# Show a collage of 5x5 random images.
sample_idxs = np.random.randint(0, 50000 if FULL else N_TRAIN, size=(5, 5))
examples = x_train[sample_idxs]
collage = show_collage(examples)
assert collage.size == (2 * 5 * 34, 2 * 5 * 34), collage.size  # added: 5x5 boxes, doubled

"""
Metric learning provides training data not as explicit `(X, y)` pairs but instead uses
multiple instances that are related in the way we want to express similarity.
"""

class_idx_to_train_idxs = defaultdict(list)
for y_train_idx, y in enumerate(y_train):
    class_idx_to_train_idxs[y].append(y_train_idx)

class_idx_to_test_idxs = defaultdict(list)
for y_test_idx, y in enumerate(y_test):
    class_idx_to_test_idxs[y].append(y_test_idx)

# added: every image once, under its class; every class has at least 10 test images
assert sorted(class_idx_to_train_idxs) == list(range(10))
assert sorted(i for v in class_idx_to_train_idxs.values() for i in v) == list(range(N_TRAIN))
assert all((y_train[v] == c).all() for c, v in class_idx_to_train_idxs.items())
assert all(len(class_idx_to_test_idxs[c]) >= 10 for c in range(10))

"""
For this example we are using the simplest approach to training; a batch will consist of
`(anchor, positive)` pairs spread across the classes.
"""

num_classes = 10


class AnchorPositivePairs(keras.utils.Sequence):
    def __init__(self, num_batchs):
        self.num_batchs = num_batchs

    def __len__(self):
        return self.num_batchs

    def __getitem__(self, _idx):
        x = np.empty((2, num_classes, height_width, height_width, 3), dtype=np.float32)
        for class_idx in range(num_classes):
            examples_for_class = class_idx_to_train_idxs[class_idx]
            anchor_idx = random.choice(examples_for_class)
            positive_idx = random.choice(examples_for_class)
            while positive_idx == anchor_idx:
                positive_idx = random.choice(examples_for_class)
            x[0, class_idx] = x_train[anchor_idx]
            x[1, class_idx] = x_train[positive_idx]
        return x


"""
We can visualise a batch in another collage. The top row shows randomly chosen anchors
from the 10 classes, the bottom row shows the corresponding 10 positives.
"""

examples = next(iter(AnchorPositivePairs(num_batchs=1)))

show_collage(examples)


def train_indices(images):
    """added: the training image(s) equal to each of ``images``."""
    flat = x_train.reshape(N_TRAIN, -1)
    return [np.flatnonzero((flat == im.reshape(1, -1)).all(1)) for im in images]


# added: row c holds two training images of class c, drawn at different indices
assert examples.shape == (2, 10, 32, 32, 3) and examples.dtype == np.float32, examples.shape
for c, (a, p) in enumerate(zip(train_indices(examples[0]), train_indices(examples[1]))):
    assert len(a) and len(p) and (y_train[a] == c).all() and (y_train[p] == c).all(), c
    assert len(set(a) | set(p)) >= 2, (c, a, p)

"""
## Embedding model
"""


class EmbeddingModel(keras.Model):
    def train_step(self, data):
        # Note: Workaround for open issue, to be removed.
        if isinstance(data, tuple):
            data = data[0]
        anchors, positives = data[0], data[1]

        with tape_lib.GradientTape() as tape:
            # Run both anchors and positives through model.
            anchor_embeddings = self(anchors, training=True)
            positive_embeddings = self(positives, training=True)

            # Calculate cosine similarity between anchors and positives. As they have
            # been normalised this is just the pair wise dot products.
            similarities = tf.einsum(
                "ae,pe->ap", anchor_embeddings, positive_embeddings
            )

            # Since we intend to use these as logits we scale them by a temperature.
            # This value would normally be chosen as a hyper parameter.
            temperature = 0.2
            similarities /= temperature

            # We use these similarities as logits for a softmax. The labels for
            # this call are just the sequence [0, 1, 2, ..., num_classes] since we
            # want the main diagonal values, which correspond to the anchor/positive
            # pairs, to be high. This loss will move embeddings for the
            # anchor/positive pairs together and move all other pairs apart.
            sparse_labels = tf.range(num_classes)
            loss = self.compiled_loss(sparse_labels, similarities)

        # Calculate gradients and apply via optimizer.
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))

        # Update and return metrics (specifically the one for the loss value).
        self.compiled_metrics.update_state(sparse_labels, similarities)
        return {m.name: m.result() for m in self.metrics}


"""
Next we describe the architecture that maps from an image to an embedding.
"""

inputs = layers.Input(shape=(height_width, height_width, 3))
x = layers.Conv2D(filters=32, kernel_size=3, strides=2, activation="relu")(inputs)
x = layers.Conv2D(filters=64, kernel_size=3, strides=2, activation="relu")(x)
x = layers.Conv2D(filters=128, kernel_size=3, strides=2, activation="relu")(x)
x = layers.GlobalAveragePooling2D()(x)
pooled = x  # added: for the checks below
embeddings = layers.Dense(units=8, activation=None)(x)
dense_out = embeddings  # added: for the checks below
embeddings = tf.nn_ops.l2_normalize(embeddings, axis=-1)

model = EmbeddingModel(inputs, embeddings)

# added: the shapes (valid 3x3 convolutions of stride 2: 32 -> 15 -> 7 -> 3) and the
# parameter count by hand
shapes = [tuple(lay.output.shape) for lay in model.layers[1:5]]
assert shapes == [(None, 15, 15, 32), (None, 7, 7, 64), (None, 3, 3, 128), (None, 128)], shapes
assert model.output_shape == (None, 8), model.output_shape
expected_params = (27 * 32 + 32) + (9 * 32 * 64 + 64) + (9 * 64 * 128 + 128) + (128 * 8 + 8)
assert model.count_params() == expected_params, (model.count_params(), expected_params)
probe = keras.Model(inputs, [pooled, dense_out, embeddings])  # added: the inner tensors


def np_loss_and_dense_grads(batch, temperature=0.2):
    """added: the train_step loss and its gradient with respect to the Dense layer's kernel
    and bias, derived by hand in numpy (float64) from the pooled features."""
    (fa, _, _), (fp, _, _) = (
        [np.asarray(t, np.float64) for t in probe(batch[i])] for i in (0, 1))
    kernel, bias = (np.asarray(v, np.float64) for v in model.layers[-1].get_weights())
    outs = []
    for f in (fa, fp):
        e = f @ kernel + bias
        norm = np.sqrt(np.maximum((e ** 2).sum(-1, keepdims=True), 1e-12))
        outs.append((e, norm, e / norm))
    (_, norm_a, na), (_, norm_p, npos) = outs
    logits = na @ npos.T / temperature
    logp = logits - logits.max(1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(1, keepdims=True))
    loss = -np.mean(np.diag(logp))
    d_logits = (np.exp(logp) - np.eye(len(logits))) / len(logits)
    g_na, g_np = d_logits @ npos / temperature, d_logits.T @ na / temperature
    g_ea = (g_na - na * (na * g_na).sum(-1, keepdims=True)) / norm_a
    g_ep = (g_np - npos * (npos * g_np).sum(-1, keepdims=True)) / norm_p
    return loss, fa.T @ g_ea + fp.T @ g_ep, g_ea.sum(0) + g_ep.sum(0)


# added: the embeddings are the Dense output, l2-normalized; tf.einsum is numpy's
feats, dense_vals, emb = (np.asarray(t) for t in probe(examples[0]))
assert emb.shape == (10, 8) and feats.shape == (10, 128), (emb.shape, feats.shape)
np.testing.assert_allclose(np.linalg.norm(emb, axis=-1), 1.0, rtol=1e-5)
np.testing.assert_allclose(emb, dense_vals / np.linalg.norm(dense_vals, axis=-1, keepdims=True),
                           rtol=1e-5, atol=1e-6)
emb_p = np.asarray(model(examples[1]))
sims = tf.einsum("ae,pe->ap", tf.convert_to_tensor(emb), tf.convert_to_tensor(emb_p))
assert tuple(sims.shape) == (10, 10), sims.shape
np.testing.assert_allclose(sims.numpy(), emb @ emb_p.T, rtol=1e-5, atol=1e-6)

"""
Finally we run the training.
"""

model.compile(
    optimizer=keras.optimizers.Adam(learning_rate=1e-3),
    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
)

# added: the gradient of train_step's loss (as written there) with respect to the Dense
# layer, against numpy's
with tape_lib.GradientTape() as g:
    s = tf.einsum("ae,pe->ap", model(examples[0], training=True),
                  model(examples[1], training=True)) / 0.2
    check_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(
        tf.range(num_classes), s)
dense_vars = model.layers[-1].trainable_variables
grads = g.gradient(check_loss, dense_vars)
want_loss, want_dk, want_db = np_loss_and_dense_grads(examples)
np.testing.assert_allclose(float(check_loss), want_loss, rtol=1e-4)
np.testing.assert_allclose(np.asarray(grads[0]), want_dk, rtol=1e-3, atol=1e-6)
np.testing.assert_allclose(np.asarray(grads[1]), want_db, rtol=1e-3, atol=1e-6)


def same_class_fraction(embeddings, k=10):
    """added: the diagonal share of upstream's confusion matrix for these embeddings."""
    gram = np.einsum("ae,be->ab", embeddings, embeddings)
    nbrs = np.argsort(gram.T)[:, -(k + 1):]
    idxs = [i for c in range(num_classes) for i in class_idx_to_test_idxs[c][:10]]
    return float(np.mean([y_test[j] == y_test[i] for i in idxs for j in nbrs[i][:-1]]))


untrained_fraction = same_class_fraction(model.predict(x_test, verbose=0))  # added

history = model.fit(AnchorPositivePairs(num_batchs=NUM_BATCHS), epochs=EPOCHS)

# plt.plot(history.history["loss"]); plt.show() -> printed
print("loss", history.history["loss"])
losses = history.history["loss"]  # added: below
assert list(history.history) == ["loss"] and len(losses) == EPOCHS, history.history
assert all(np.isfinite(losses)), losses
assert SHORT or (losses[-1] < 1.0 and losses[-1] < losses[0]), losses
assert int(model.optimizer.iterations) == EPOCHS * NUM_BATCHS  # one Adam step a batch

"""
## Testing
"""

near_neighbours_per_example = 10

embeddings = model.predict(x_test)
gram_matrix = np.einsum("ae,be->ab", embeddings, embeddings)
near_neighbours = np.argsort(gram_matrix.T)[:, -(near_neighbours_per_example + 1) :]

# added: unit embeddings; each example is its own nearest neighbour (the last column)
assert embeddings.shape == (N_TEST, 8) and embeddings.dtype == np.float32, embeddings.shape
np.testing.assert_allclose(np.linalg.norm(embeddings, axis=-1), 1.0, rtol=1e-5)
assert near_neighbours.shape == (N_TEST, near_neighbours_per_example + 1)
assert np.mean(near_neighbours[:, -1] == np.arange(N_TEST)) > 0.98

"""
As a visual check of these embeddings we can build a collage of the near neighbours for 5
random examples.
"""

num_collage_examples = 5

examples = np.empty(
    (
        num_collage_examples,
        near_neighbours_per_example + 1,
        height_width,
        height_width,
        3,
    ),
    dtype=np.float32,
)
for row_idx in range(num_collage_examples):
    examples[row_idx, 0] = x_test[row_idx]
    anchor_near_neighbours = reversed(near_neighbours[row_idx][:-1])
    for col_idx, nn_idx in enumerate(anchor_near_neighbours):
        examples[row_idx, col_idx + 1] = x_test[nn_idx]

collage = show_collage(examples)
assert collage.size == (2 * 11 * 34, 2 * 5 * 34), collage.size  # added

"""
We can also get a quantified view of the performance by considering the correctness of
near neighbours in terms of a confusion matrix.
"""

confusion_matrix = np.zeros((num_classes, num_classes))

# For each class.
for class_idx in range(num_classes):
    # Consider 10 examples.
    example_idxs = class_idx_to_test_idxs[class_idx][:10]
    for y_test_idx in example_idxs:
        # And count the classes of its near neighbours.
        for nn_idx in near_neighbours[y_test_idx][:-1]:
            nn_class_idx = y_test[nn_idx]
            confusion_matrix[class_idx, nn_class_idx] += 1

# Display a confusion matrix.
labels = ["Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine"]
# disp = ConfusionMatrixDisplay(...); disp.plot(...); plt.show() -> printed
print("near-neighbour confusion matrix (rows:", ", ".join(labels) + ")")
print(confusion_matrix.astype(int))

# added: 10 examples x 10 neighbours a class; the same-class share passes the untrained one
np.testing.assert_array_equal(confusion_matrix.sum(1), 100)
fraction = float(np.trace(confusion_matrix) / confusion_matrix.sum())
assert fraction == same_class_fraction(embeddings), fraction
print(f"same-class near neighbours: {fraction:.3f} (untrained {untrained_fraction:.3f})")
assert SHORT or (fraction > 0.75 and fraction > untrained_fraction + 0.3), (
    fraction, untrained_fraction)

# added: two train_steps outside fit. The first returns (as `loss`, its only metric)
# numpy's loss at the pre-step weights, moves the Dense layer's weights by Adam's step
# (Keras's: epsilon hat 1e-7 on the uncorrected sqrt(v)) for numpy's gradients, and moves
# every weight; after the second, `loss` is the mean of the two steps' losses.
model.reset_metrics()
opt = model.optimizer
step_losses = []
for step in range(2):
    batch = AnchorPositivePairs(num_batchs=1)[0]
    want_loss, want_dk, want_db = np_loss_and_dense_grads(batch)
    step_losses.append(want_loss)
    before = [np.array(w) for w in model.get_weights()]
    slots = [(np.array(opt.get_slot(v, "m")), np.array(opt.get_slot(v, "v")))
             for v in dense_vars]
    t = int(opt.iterations) + 1
    logs = model.train_step(tf.convert_to_tensor(batch))
    assert list(logs) == ["loss"], logs
    np.testing.assert_allclose(float(logs["loss"]), np.mean(step_losses), rtol=1e-4)
    if step == 0:
        after = model.get_weights()
        assert all(not np.array_equal(b, np.asarray(w)) for b, w in zip(before, after))
        for w_before, w_after, grad, (m, v) in zip(before[-2:], after[-2:], (want_dk, want_db),
                                                   slots):
            m = 0.9 * m + 0.1 * grad
            v = 0.999 * v + 0.001 * grad ** 2
            step_size = 1e-3 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
            np.testing.assert_allclose(np.asarray(w_after), w_before - step_size * m / (
                np.sqrt(v) + 1e-7), rtol=1e-4, atol=1e-6)
