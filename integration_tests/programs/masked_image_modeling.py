"""Port of keras-team/keras-io examples/vision/masked_image_modeling.py ("Masked image
modeling with Autoencoders", the tf.keras version): a masked autoencoder pretrained on
images, then a linear probe of its encoder. tf.data pipelines (from_tensor_slices,
shuffle, batch, prefetch(AUTOTUNE)); train and test augmentation Sequentials (Rescaling,
Resizing, RandomCrop, RandomFlip); a Patches layer on tf.image.extract_patches and a
Reshape, with reconstruct_from_patch (tf.split, tf.unstack, tf.concat); a PatchEncoder
layer holding a trainable tf.Variable mask token, building a Dense projection and an
Embedding of positions in build(), masking with tf.argsort of tf.random.uniform,
tf.gather(batch_dims=1), tf.tile and tf.repeat; functional encoder and decoder
(LayerNormalization, MultiHeadAttention, Add, an MLP of gelu Dense and Dropout, Flatten, a
sigmoid Dense, Reshape); a keras.Model subclass whose calculate_loss, train_step (a
GradientTape over nested lists of the sub-models' trainable_variables, apply_gradients)
and test_step use compiled_loss and compiled_metrics; a TrainMonitor callback; a
WarmUpCosine LearningRateSchedule; fit(validation_data=...) and evaluate; then a frozen
Sequential (the patch layers, the encoder, BatchNormalization, GlobalAveragePooling1D and a
softmax Dense) trained with SGD(momentum) on the same schedule, its augmentation in a
tf.data map(num_parallel_calls=AUTOTUNE).

Upstream: https://github.com/keras-team/keras-io/blob/b8bb4c0d5068d64290003740c2ef9e703eefa751/examples/vision/masked_image_modeling.py
(keras-io now carries a Keras 3 conversion, "Last modified: 2026/02/13", which the search
index holds without its commit; its train_step calls self.add_loss(total_loss) and no
optimizer, so its fit would not update the weights: this port follows the tf.keras code.)
Changed: names only (tensorflow -> ember.core and tensorflow.keras -> ember.nn, bound to
the names `tf` and `keras` as the example spells them; tensorflow.keras.layers ->
ember.nn.layers; tf.data -> ember.data, tf.data.AUTOTUNE -> data.AUTOTUNE;
tf.GradientTape -> tape_lib.GradientTape (ember.tape imported as tape_lib, so upstream's
`as tape` stays); tf.nn.gelu -> em.nn_ops.gelu). tensorflow_addons is not TensorFlow:
tfa.optimizers.AdamW(learning_rate=scheduled_lrs, weight_decay=WEIGHT_DECAY) -> AdamW
below, keras.optimizers.Adam with tfa's decoupled decay (var -= weight_decay * var before
each Adam step, not scaled by the rate; keras's AdamW scales it by the rate, which the
schedule changes every step, so convmixer.py's weight_decay / learning_rate does not
apply here). CIFAR-10 cannot be downloaded: keras.datasets.cifar10.load_data() is
replaced by the real MNIST digits (ember.data.datasets.mnist from $EMBER_DATA, else
../shared/datasets/mnist beside the checkout as test_programs.py finds them; the program
skips when they are absent) in CIFAR's layout: uint8 (n, 32, 32, 3) images (each 28x28
digit centred on a 32x32 black canvas and repeated to 3 channels) and uint8 (n, 1)
labels, split as upstream splits CIFAR's training set (the first N_TRAIN for training,
the next N_VAL for validation). matplotlib is not used: show_patched_image keeps its
keras.utils.array_to_img and img_to_array calls and checks what it would draw; the
masked/original figure, TrainMonitor's figure and the plot of lrs are dropped
(TrainMonitor keeps its computation and appends its three images to a list, checked
after fit). Upstream's unused `count = 0` and `super(WarmUpCosine, self)` stay (noqa).
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream's sizes: 40,000/10,000/10,000 digits,
batch 256, patch 6 (64 patches), an encoder 128 wide with 4 heads and 6 layers, a decoder
64 wide with 4 heads and 2 layers, 100 pretraining and 50 probing epochs; many hours of
CPU): 2,000 training, 500 validation and 500 test digits, batch 64, IMAGE_SIZE 48 as
upstream (so the Resizing to 52 and the 48x48 RandomCrop keep upstream's margin) but
PATCH_SIZE 12 (16 patches of 432 values, 12 of them masked: the decoder's last Dense,
NUM_PATCHES * DEC_PROJECTION_DIM -> 48 * 48 * 3, shrinks from 28 M to 1.8 M weights), an
encoder 32 wide with 2 heads and 2 layers, a decoder 16 wide with 2 heads and 1 layer, 8
pretraining and 5 probing epochs (upstream's rates, schedules, weight decay, masking and
augmentation); EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 256/64/64 digits, 1 encoder
layer, 1 epoch of each, no threshold on what training reached.
Added: the data's shapes and dtypes; the augmentation against numpy (Rescaling and
Resizing are a bilinear half-pixel resize of x / 255; RandomCrop takes one window of the
52x52 image for the whole batch, RandomFlip mirrors each image or not; the test
augmentation is the 48x48 resize); the patches are numpy's row-major blocks, each
flattened as (row, column, channel), show_patched_image's img_to_array of each patch is
its block and reconstruct_from_patch gives the image back exactly; the masks split the 16
patches into 12 and 4, differently for different images; the PatchEncoder's outputs
equal numpy's from its own weights (the projection plus the position table, gathered at
the unmasked and masked indices, the mask token projected); the tf.Variable mask token is
one of the layer's 4 trainable weights and training changes it; generate_masked_image's
array; the encoder's and decoder's parameter counts by hand (tf.keras's numbers), and
both models in inference mode equal a numpy float64 forward pass with their own weights
(LayerNormalization with epsilon 1e-6, per-head scaled dot-product attention, erf gelu,
sigmoid); WarmUpCosine equals its formula in numpy at every step and past the last;
three steps of the AdamW stand-in equal numpy's tfa AdamW (decay, then tf.keras's Adam
with epsilon 1e-7) at the scheduled rates of steps 0, 1 and 2; fit's history has
tf.keras's keys (loss, mae, val_loss, val_mae), one value an epoch, and the optimizer took
one step a batch; TrainMonitor ran at epochs 0 and 5, its masked image is the original or
black, its reconstruction a sigmoid's; evaluate's loss and mae equal numpy's mean squared
and absolute errors over every masked patch of the test images (the masks replayed from
the same seed, which is set again before evaluate); the gradient of the loss with
respect to the decoder's last bias equals one derived by hand (2 (o - t) o (1 - o) / count
on the masked patches' pixels, none elsewhere); the probe Sequential has 6 layers (its
Input is not one), only the head's kernel and bias are trainable, the frozen weights and
the BatchNormalization's moving statistics do not change in the probe's fit
(trainable=False runs it in inference mode, as in TF 2), predict() equals numpy's head
over the frozen encoder's features, and evaluate's accuracy and loss equal predict()'s.
Thresholds (CPU run): the training loss falls; the test loss is below 0.75 times that of
the best constant image (0.061: an untrained decoder, its sigmoid near 0.5, gives ~0.22;
one that learnt only the mean grey level stays at 0.061); the probe's test accuracy
passes 25% (chance is 10%). Keras 3.15.1 (torch backend, the same code, data and sizes,
seeds 42, 0, 1) reaches a test loss of 0.0397, 0.0407, 0.0395 and probe accuracies of
38.6%, 33.0%, 37.8%; this program 0.0401-0.0408 and 35-37% with seed 42 (the map's worker
threads draw the flips in the order they run, so a run does not repeat exactly, nor does
upstream's) and 0.0398-0.0406 and 33.8-39.0% with seeds 0-4. At this size both only
just beat the mean training image (0.0410): 8 epochs on 2,000 digits learn the average
digit first (40 epochs here reach 0.0369 and 48%).
Found: no GAP: every upstream line runs as it is, with names changed (and the tfa
stand-in above); nothing on the program's path differs from tf.keras. Checked and the
same as tf.keras: the sub-models called in train_step without training= run in inference
mode (no dropout), while RandomCrop and RandomFlip augment outside fit (their training=True
default); tape.gradient over a nested list of variable lists; array_to_img's min-max
scaling to uint8; argsort's int32 indices; the compiled loss's tracker weights each batch
by its size. Noticed off this program's path (not GAPs here): MultiHeadAttention's
get_weights() gives 2-D kernels, (dim, heads * key_dim) and (heads * key_dim, dim), where
Keras gives (dim, heads, key_dim) and (heads, key_dim, dim), and their glorot_uniform
bound is sqrt(6 / (dim + heads * key_dim)) (0.25 here), as in Keras 3.15; tf.keras 2.x,
which upstream ran, computed the fans as for a convolution kernel: sqrt(6 / (dim * (heads
+ key_dim))) = 0.074 for the query, key and value kernels and 0.217 for the output's.
Dense.get_config() holds only the arguments given: no "activation" for a linear Dense
(Keras: "linear"), and the function itself for activation=tf.nn.gelu (Keras: "gelu").
Skips only when the MNIST files are absent ($EMBER_DATA, else ../shared/datasets/mnist
beside the checkout, else ~/.cache/ember/datasets/mnist).
"""

import math
import os
import pathlib
import unittest

import numpy as np

import ember.core as em
from ember import data, nn
from ember import tape as tape_lib
from ember.nn import layers

tf = em  # the example's `tf.` prefix
keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
# as test_programs.py: $EMBER_DATA, else the workspace's copy beside the checkout, else the cache
SHARED_MNIST = pathlib.Path(__file__).resolve().parents[3] / "shared" / "datasets" / "mnist"
DATA_DIR = os.environ.get("EMBER_DATA") or (
    str(SHARED_MNIST) if SHARED_MNIST.is_dir()
    else os.path.expanduser("~/.cache/ember/datasets/mnist"))
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")

# Setting seeds for reproducibility.
SEED = 42
keras.utils.set_random_seed(SEED)  # Python's random, numpy's and ember's generators


"""
## Numpy references (added): the program's results are checked against these
"""


def np_resize(images, size):
    """tf.image.resize(method="bilinear", antialias=False): half-pixel centres, edge clamp."""
    def axis(n_in):
        src = (np.arange(size) + 0.5) * (n_in / size) - 0.5
        low = np.floor(src)
        return (np.maximum(low, 0).astype(int), np.minimum(np.ceil(src), n_in - 1).astype(int),
                src - low)
    (y0, y1, wy), (x0, x1, wx) = axis(images.shape[1]), axis(images.shape[2])
    wx = wx[None, None, :, None]
    rows = [r[:, :, x0] * (1 - wx) + r[:, :, x1] * wx for r in (images[:, y0], images[:, y1])]
    return rows[0] * (1 - wy)[None, :, None, None] + rows[1] * wy[None, :, None, None]


def np_patches(images, size):
    """Row-major size x size blocks, each flattened as (row, column, channel)."""
    n, h, w, c = images.shape
    blocks = images.reshape(n, h // size, size, w // size, size, c).transpose(0, 1, 3, 2, 4, 5)
    return blocks.reshape(n, (h // size) * (w // size), size * size * c)


def np_gelu(x):  # tf.nn.gelu(approximate=False): the erf form
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def np_dense(x, dense, activation=None):
    kernel, bias = (np.asarray(w, dtype=np.float64) for w in dense.get_weights())
    y = x @ kernel + bias
    return {None: y, "gelu": np_gelu(y), "sigmoid": 1 / (1 + np.exp(-y))}[activation]


def np_layer_norm(x, norm):
    gamma, beta = (np.asarray(w, dtype=np.float64) for w in norm.get_weights())
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + LAYER_NORM_EPS) \
        * gamma + beta


def np_attention(x, mha, heads, key_dim):
    """Keras's MultiHeadAttention in inference mode (softmax(q k^T / sqrt(key_dim)) v per
    head, then the output projection); ember holds each projection as a 2-D kernel, the
    heads side by side (Keras: (dim, heads, key_dim) and (heads, key_dim, dim))."""
    w = [np.asarray(v, dtype=np.float64) for v in mha.get_weights()]
    n, t, _ = x.shape
    q, k, v = ((x @ w[i] + w[i + 1]).reshape(n, t, heads, key_dim).transpose(0, 2, 1, 3)
               for i in (0, 2, 4))
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(key_dim)
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    context = (scores / scores.sum(-1, keepdims=True)) @ v
    return context.transpose(0, 2, 1, 3).reshape(n, t, heads * key_dim) @ w[6] + w[7]


def np_transformer(x, model, heads, key_dim):
    """create_encoder's (and create_decoder's) blocks and final LayerNormalization, in
    inference mode (Dropout is the identity), with the model's own weights."""
    norms = [la for la in model.layers if isinstance(la, layers.LayerNormalization)]
    attentions = [la for la in model.layers if isinstance(la, layers.MultiHeadAttention)]
    mlps = [la for la in model.layers if isinstance(la, layers.Dense)
            and la.activation.__name__ == "gelu"]
    assert len(norms) == 2 * len(attentions) + 1 and len(mlps) == 2 * len(attentions)
    for i, attention in enumerate(attentions):
        x2 = np_attention(np_layer_norm(x, norms[2 * i]), attention, heads, key_dim) + x
        x3 = np_layer_norm(x2, norms[2 * i + 1])
        x = np_dense(np_dense(x3, mlps[2 * i], "gelu"), mlps[2 * i + 1], "gelu") + x2
    return np_layer_norm(x, norms[-1])


def dense_params(n_in, n_out):
    return n_in * n_out + n_out


def transformer_params(dim, heads, units):
    """LayerNormalization, MultiHeadAttention(key_dim=dim), LayerNormalization, the MLP."""
    attention = 3 * dense_params(dim, heads * dim) + dense_params(heads * dim, dim)
    return 2 * dim + attention + 2 * dim + dense_params(dim, units[0]) + \
        dense_params(units[0], units[1])

"""
## Hyperparameters for pretraining
"""

# DATA
BUFFER_SIZE = 1024
BATCH_SIZE = 256 if FULL else 64
AUTO = data.AUTOTUNE
INPUT_SHAPE = (32, 32, 3)
NUM_CLASSES = 10

# OPTIMIZER
LEARNING_RATE = 5e-3
WEIGHT_DECAY = 1e-4

# PRETRAINING
EPOCHS = 100 if FULL else 1 if SHORT else 8

# AUGMENTATION
IMAGE_SIZE = 48  # We will resize input images to this size.
PATCH_SIZE = 6 if FULL else 12  # Size of the patches to be extracted from the input images.
NUM_PATCHES = (IMAGE_SIZE // PATCH_SIZE) ** 2
MASK_PROPORTION = 0.75  # We have found 75% masking to give us the best results.

# ENCODER and DECODER
LAYER_NORM_EPS = 1e-6
ENC_PROJECTION_DIM = 128 if FULL else 32
DEC_PROJECTION_DIM = 64 if FULL else 16
ENC_NUM_HEADS = 4 if FULL else 2
ENC_LAYERS = 6 if FULL else 1 if SHORT else 2
DEC_NUM_HEADS = 4 if FULL else 2
DEC_LAYERS = (
    2 if FULL else 1  # The decoder is lightweight but should be reasonably deep for reconstruction.
)
ENC_TRANSFORMER_UNITS = [
    ENC_PROJECTION_DIM * 2,
    ENC_PROJECTION_DIM,
]  # Size of the transformer layers.
DEC_TRANSFORMER_UNITS = [
    DEC_PROJECTION_DIM * 2,
    DEC_PROJECTION_DIM,
]

"""
## Load and prepare the CIFAR-10 dataset (here: MNIST digits in CIFAR-10's layout)
"""


def load_data(n_train, n_test):
    """MNIST in CIFAR's layout: uint8 (n, 32, 32, 3) images, uint8 (n, 1) labels."""
    def split(name, n):
        x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
        x = (np.asarray(x).reshape(-1, 28, 28, 1) * 255).round().astype(np.uint8)
        x = np.pad(x, ((0, 0), (2, 2), (2, 2), (0, 0)))  # centred on a 32x32 canvas
        return np.repeat(x, 3, axis=-1), np.asarray(y).astype(np.uint8).reshape(-1, 1)
    return split("train", n_train), split("test", n_test)


N_TRAIN, N_VAL, N_TEST = ((40000, 10000, 10000) if FULL else (256, 64, 64) if SHORT
                          else (2000, 500, 500))
(x_train, y_train), (x_test, y_test) = load_data(N_TRAIN + N_VAL, N_TEST)
(x_train, y_train), (x_val, y_val) = (
    (x_train[:N_TRAIN], y_train[:N_TRAIN]),
    (x_train[N_TRAIN:], y_train[N_TRAIN:]),
)
print(f"Training samples: {len(x_train)}")
print(f"Validation samples: {len(x_val)}")
print(f"Testing samples: {len(x_test)}")
assert x_train.shape == (N_TRAIN,) + INPUT_SHAPE and x_train.dtype == np.uint8  # added
assert (len(x_val), len(x_test)) == (N_VAL, N_TEST) and y_train.shape == (N_TRAIN, 1)

train_ds = data.Dataset.from_tensor_slices(x_train)
train_ds = train_ds.shuffle(BUFFER_SIZE).batch(BATCH_SIZE).prefetch(AUTO)

val_ds = data.Dataset.from_tensor_slices(x_val)
val_ds = val_ds.batch(BATCH_SIZE).prefetch(AUTO)

test_ds = data.Dataset.from_tensor_slices(x_test)
test_ds = test_ds.batch(BATCH_SIZE).prefetch(AUTO)

"""
## Data augmentation
"""


def get_train_augmentation_model():
    model = keras.Sequential(
        [
            layers.Rescaling(1 / 255.0),
            layers.Resizing(INPUT_SHAPE[0] + 20, INPUT_SHAPE[0] + 20),
            layers.RandomCrop(IMAGE_SIZE, IMAGE_SIZE),
            layers.RandomFlip("horizontal"),
        ],
        name="train_data_augmentation",
    )
    return model


def get_test_augmentation_model():
    model = keras.Sequential(
        [layers.Rescaling(1 / 255.0), layers.Resizing(IMAGE_SIZE, IMAGE_SIZE),],
        name="test_data_augmentation",
    )
    return model


"""
## A layer for extracting patches from images
"""


class Patches(layers.Layer):
    def __init__(self, patch_size=PATCH_SIZE, **kwargs):
        super().__init__(**kwargs)
        self.patch_size = patch_size

        # Assuming the image has three channels each patch would be
        # of size (patch_size, patch_size, 3).
        self.resize = layers.Reshape((-1, patch_size * patch_size * 3))

    def call(self, images):
        # Create patches from the input images
        patches = tf.image.extract_patches(
            images=images,
            sizes=[1, self.patch_size, self.patch_size, 1],
            strides=[1, self.patch_size, self.patch_size, 1],
            rates=[1, 1, 1, 1],
            padding="VALID",
        )

        # Reshape the patches to (batch, num_patches, patch_area) and return it.
        patches = self.resize(patches)
        return patches

    def show_patched_image(self, images, patches):
        # This is a utility function which accepts a batch of images and its
        # corresponding patches and help visualize one image and its patches
        # side by side.
        idx = np.random.choice(patches.shape[0])
        print(f"Index selected: {idx}.")

        # (plt.figure/imshow/axis/show dropped: the images are checked instead)
        original = keras.utils.array_to_img(images[idx])
        assert original.size == (IMAGE_SIZE, IMAGE_SIZE), original.size  # added

        n = int(np.sqrt(patches.shape[1]))
        assert n * n == patches.shape[1] == NUM_PATCHES  # added
        for i, patch in enumerate(patches[idx]):
            patch_img = tf.reshape(patch, (self.patch_size, self.patch_size, 3))
            shown = keras.utils.img_to_array(patch_img)
            # added: patch i is the image's block (row i // n, column i % n)
            r, c = divmod(i, n)
            np.testing.assert_array_equal(
                shown, np.asarray(images[idx])[r * self.patch_size:(r + 1) * self.patch_size,
                                               c * self.patch_size:(c + 1) * self.patch_size])

        # Return the index chosen to validate it outside the method.
        return idx

    # taken from https://stackoverflow.com/a/58082878/10319735
    def reconstruct_from_patch(self, patch):
        # This utility function takes patches from a *single* image and
        # reconstructs it back into the image. This is useful for the train
        # monitor callback.
        num_patches = patch.shape[0]
        n = int(np.sqrt(num_patches))
        patch = tf.reshape(patch, (num_patches, self.patch_size, self.patch_size, 3))
        rows = tf.split(patch, n, axis=0)
        rows = [tf.concat(tf.unstack(x), axis=1) for x in rows]
        reconstructed = tf.concat(rows, axis=0)
        return reconstructed


"""
Let's visualize the image patches.
"""

# Get a batch of images.
image_batch = next(iter(train_ds))

# Augment the images.
augmentation_model = get_train_augmentation_model()
augmented_images = augmentation_model(image_batch)

# Define the patch layer.
patch_layer = Patches()

# Get the patches from the batched images.
patches = patch_layer(images=augmented_images)

# Added: the augmentation and the patches against numpy. Rescaling then Resizing is numpy's
# bilinear resize of x / 255; RandomCrop takes one window of that for the whole batch (as
# tf.keras 2.7's and Keras 3's do), RandomFlip("horizontal") mirrors each image or not.
batch = np.asarray(image_batch)
assert batch.shape == (BATCH_SIZE,) + INPUT_SHAPE and batch.dtype == np.uint8, batch.shape
augmented = np.asarray(augmented_images)
assert augmented.shape == (BATCH_SIZE, IMAGE_SIZE, IMAGE_SIZE, 3), augmented.shape
assert augmented.dtype == np.float32
resized = np_resize(batch / 255.0, INPUT_SHAPE[0] + 20)
margin = INPUT_SHAPE[0] + 20 - IMAGE_SIZE
windows = None
for image, big in zip(augmented, resized):
    hits = {(top, left) for top in range(margin + 1) for left in range(margin + 1)
            for view in (big, big[:, ::-1]) if np.allclose(
                view[top:top + IMAGE_SIZE, left:left + IMAGE_SIZE] if view is big
                else big[top:top + IMAGE_SIZE, left:left + IMAGE_SIZE][:, ::-1], image,
                atol=1e-5)}
    windows = hits if windows is None else windows & hits
assert windows, "no crop window is common to the batch"
np.testing.assert_allclose(np.asarray(get_test_augmentation_model()(image_batch)),
                           np_resize(batch / 255.0, IMAGE_SIZE), atol=1e-5)
assert patches.shape == (BATCH_SIZE, NUM_PATCHES, PATCH_SIZE * PATCH_SIZE * 3), patches.shape
np.testing.assert_array_equal(np.asarray(patches), np_patches(augmented, PATCH_SIZE))

# Now pass the images and the corresponding patches
# to the `show_patched_image` method.
random_index = patch_layer.show_patched_image(images=augmented_images, patches=patches)

# Chose the same chose image and try reconstructing the patches
# into the original image.
image = patch_layer.reconstruct_from_patch(patches[random_index])
# (plt.imshow/axis/show dropped)
np.testing.assert_array_equal(np.asarray(image), np.asarray(augmented_images[random_index]))

"""
## Patch encoding with masking
"""


class PatchEncoder(layers.Layer):
    def __init__(
        self,
        patch_size=PATCH_SIZE,
        projection_dim=ENC_PROJECTION_DIM,
        mask_proportion=MASK_PROPORTION,
        downstream=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.patch_size = patch_size
        self.projection_dim = projection_dim
        self.mask_proportion = mask_proportion
        self.downstream = downstream

        # This is a trainable mask token initialized randomly from a normal
        # distribution.
        self.mask_token = tf.Variable(
            tf.random.normal([1, patch_size * patch_size * 3]), trainable=True
        )

    def build(self, input_shape):
        (_, self.num_patches, self.patch_area) = input_shape

        # Create the projection layer for the patches.
        self.projection = layers.Dense(units=self.projection_dim)

        # Create the positional embedding layer.
        self.position_embedding = layers.Embedding(
            input_dim=self.num_patches, output_dim=self.projection_dim
        )

        # Number of patches that will be masked.
        self.num_mask = int(self.mask_proportion * self.num_patches)

    def call(self, patches):
        # Get the positional embeddings.
        batch_size = tf.shape(patches)[0]
        positions = tf.range(start=0, limit=self.num_patches, delta=1)
        pos_embeddings = self.position_embedding(positions[tf.newaxis, ...])
        pos_embeddings = tf.tile(
            pos_embeddings, [batch_size, 1, 1]
        )  # (B, num_patches, projection_dim)

        # Embed the patches.
        patch_embeddings = (
            self.projection(patches) + pos_embeddings
        )  # (B, num_patches, projection_dim)

        if self.downstream:
            return patch_embeddings
        else:
            mask_indices, unmask_indices = self.get_random_indices(batch_size)
            # The encoder input is the unmasked patch embeddings. Here we gather
            # all the patches that should be unmasked.
            unmasked_embeddings = tf.gather(
                patch_embeddings, unmask_indices, axis=1, batch_dims=1
            )  # (B, unmask_numbers, projection_dim)

            # Get the unmasked and masked position embeddings. We will need them
            # for the decoder.
            unmasked_positions = tf.gather(
                pos_embeddings, unmask_indices, axis=1, batch_dims=1
            )  # (B, unmask_numbers, projection_dim)
            masked_positions = tf.gather(
                pos_embeddings, mask_indices, axis=1, batch_dims=1
            )  # (B, mask_numbers, projection_dim)

            # Repeat the mask token number of mask times.
            # Mask tokens replace the masks of the image.
            mask_tokens = tf.repeat(self.mask_token, repeats=self.num_mask, axis=0)
            mask_tokens = tf.repeat(
                mask_tokens[tf.newaxis, ...], repeats=batch_size, axis=0
            )

            # Get the masked embeddings for the tokens.
            masked_embeddings = self.projection(mask_tokens) + masked_positions
            return (
                unmasked_embeddings,  # Input to the encoder.
                masked_embeddings,  # First part of input to the decoder.
                unmasked_positions,  # Added to the encoder outputs.
                mask_indices,  # The indices that were masked.
                unmask_indices,  # The indices that were unmaksed.
            )

    def get_random_indices(self, batch_size):
        # Create random indices from a uniform distribution and then split
        # it into mask and unmask indices.
        rand_indices = tf.argsort(
            tf.random.uniform(shape=(batch_size, self.num_patches)), axis=-1
        )
        mask_indices = rand_indices[:, : self.num_mask]
        unmask_indices = rand_indices[:, self.num_mask :]
        return mask_indices, unmask_indices

    def generate_masked_image(self, patches, unmask_indices):
        # Choose a random patch and it corresponding unmask index.
        idx = np.random.choice(patches.shape[0])
        patch = patches[idx]
        unmask_index = unmask_indices[idx]

        # Build a numpy array of same shape as patch.
        new_patch = np.zeros_like(patch)

        # Iterate of the new_patch and plug the unmasked patches.
        count = 0  # noqa: F841 (upstream's unused variable)
        for i in range(unmask_index.shape[0]):
            new_patch[unmask_index[i]] = patch[unmask_index[i]]
        return new_patch, idx


"""
Let's see the masking process in action on a sample image.
"""

# Create the patch encoder layer.
patch_encoder = PatchEncoder()

# Get the embeddings and positions.
(
    unmasked_embeddings,
    masked_embeddings,
    unmasked_positions,
    mask_indices,
    unmask_indices,
) = patch_encoder(patches=patches)


# Show a maksed patch image.
new_patch, random_index = patch_encoder.generate_masked_image(patches, unmask_indices)

# (the matplotlib figure is dropped; the two images it shows are built and checked)
img = patch_layer.reconstruct_from_patch(new_patch)
masked_img = keras.utils.array_to_img(img)
img = augmented_images[random_index]
original_img = keras.utils.array_to_img(img)

# Added: the masks, the embeddings against numpy from the layer's own weights, and the
# masked image
num_mask = int(MASK_PROPORTION * NUM_PATCHES)
masked_at, unmasked_at = np.asarray(mask_indices), np.asarray(unmask_indices)
assert masked_at.shape == (BATCH_SIZE, num_mask), masked_at.shape
assert unmasked_at.shape == (BATCH_SIZE, NUM_PATCHES - num_mask), unmasked_at.shape
assert masked_at.dtype == np.int32  # tf.argsort's
np.testing.assert_array_equal(np.sort(np.concatenate([masked_at, unmasked_at], 1), 1),
                              np.broadcast_to(np.arange(NUM_PATCHES), (BATCH_SIZE, NUM_PATCHES)))
assert len({tuple(sorted(row)) for row in masked_at}) > 1  # a mask for each image
kernel, bias = (np.asarray(w, np.float64) for w in patch_encoder.projection.get_weights())
table = np.asarray(patch_encoder.position_embedding.get_weights()[0], np.float64)
mask_token = np.array(patch_encoder.mask_token)
embedded = np.asarray(patches, np.float64) @ kernel + bias + table
np.testing.assert_allclose(np.asarray(unmasked_embeddings),
                           np.take_along_axis(embedded, unmasked_at[..., None], 1),
                           rtol=1e-4, atol=1e-4)
np.testing.assert_allclose(np.asarray(unmasked_positions), table[unmasked_at], rtol=1e-6)
np.testing.assert_allclose(np.asarray(masked_embeddings),
                           (mask_token @ kernel + bias) + table[masked_at], rtol=1e-4, atol=1e-5)
# the tf.Variable assigned in __init__ is one of the layer's trainable weights, as in tf.keras
assert len(patch_encoder.trainable_variables) == 4
assert any(v is patch_encoder.mask_token for v in patch_encoder.trainable_variables)
assert isinstance(new_patch, np.ndarray) and new_patch.shape == (NUM_PATCHES, patches.shape[2])
shown_patch = np.zeros_like(new_patch)
shown_patch[unmasked_at[random_index]] = np.asarray(patches)[random_index, unmasked_at[random_index]]
np.testing.assert_array_equal(new_patch, shown_patch)
assert masked_img.size == original_img.size == (IMAGE_SIZE, IMAGE_SIZE)

"""
## MLP
"""


def mlp(x, dropout_rate, hidden_units):
    for units in hidden_units:
        x = layers.Dense(units, activation=tf.nn_ops.gelu)(x)
        x = layers.Dropout(dropout_rate)(x)
    return x


"""
## MAE encoder
"""


def create_encoder(num_heads=ENC_NUM_HEADS, num_layers=ENC_LAYERS):
    inputs = layers.Input((None, ENC_PROJECTION_DIM))
    x = inputs

    for _ in range(num_layers):
        # Layer normalization 1.
        x1 = layers.LayerNormalization(epsilon=LAYER_NORM_EPS)(x)

        # Create a multi-head attention layer.
        attention_output = layers.MultiHeadAttention(
            num_heads=num_heads, key_dim=ENC_PROJECTION_DIM, dropout=0.1
        )(x1, x1)

        # Skip connection 1.
        x2 = layers.Add()([attention_output, x])

        # Layer normalization 2.
        x3 = layers.LayerNormalization(epsilon=LAYER_NORM_EPS)(x2)

        # MLP.
        x3 = mlp(x3, hidden_units=ENC_TRANSFORMER_UNITS, dropout_rate=0.1)

        # Skip connection 2.
        x = layers.Add()([x3, x2])

    outputs = layers.LayerNormalization(epsilon=LAYER_NORM_EPS)(x)
    return keras.Model(inputs, outputs, name="mae_encoder")


"""
## MAE decoder
"""


def create_decoder(
    num_layers=DEC_LAYERS, num_heads=DEC_NUM_HEADS, image_size=IMAGE_SIZE
):
    inputs = layers.Input((NUM_PATCHES, ENC_PROJECTION_DIM))
    x = layers.Dense(DEC_PROJECTION_DIM)(inputs)

    for _ in range(num_layers):
        # Layer normalization 1.
        x1 = layers.LayerNormalization(epsilon=LAYER_NORM_EPS)(x)

        # Create a multi-head attention layer.
        attention_output = layers.MultiHeadAttention(
            num_heads=num_heads, key_dim=DEC_PROJECTION_DIM, dropout=0.1
        )(x1, x1)

        # Skip connection 1.
        x2 = layers.Add()([attention_output, x])

        # Layer normalization 2.
        x3 = layers.LayerNormalization(epsilon=LAYER_NORM_EPS)(x2)

        # MLP.
        x3 = mlp(x3, hidden_units=DEC_TRANSFORMER_UNITS, dropout_rate=0.1)

        # Skip connection 2.
        x = layers.Add()([x3, x2])

    x = layers.LayerNormalization(epsilon=LAYER_NORM_EPS)(x)
    x = layers.Flatten()(x)
    pre_final = layers.Dense(units=image_size * image_size * 3, activation="sigmoid")(x)
    outputs = layers.Reshape((image_size, image_size, 3))(pre_final)

    return keras.Model(inputs, outputs, name="mae_decoder")


"""
## MAE trainer
"""


class MaskedAutoencoder(keras.Model):
    def __init__(
        self,
        train_augmentation_model,
        test_augmentation_model,
        patch_layer,
        patch_encoder,
        encoder,
        decoder,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.train_augmentation_model = train_augmentation_model
        self.test_augmentation_model = test_augmentation_model
        self.patch_layer = patch_layer
        self.patch_encoder = patch_encoder
        self.encoder = encoder
        self.decoder = decoder

    def calculate_loss(self, images, test=False):
        # Augment the input images.
        if test:
            augmented_images = self.test_augmentation_model(images)
        else:
            augmented_images = self.train_augmentation_model(images)

        # Patch the augmented images.
        patches = self.patch_layer(augmented_images)

        # Encode the patches.
        (
            unmasked_embeddings,
            masked_embeddings,
            unmasked_positions,
            mask_indices,
            unmask_indices,
        ) = self.patch_encoder(patches)

        # Pass the unmaksed patche to the encoder.
        encoder_outputs = self.encoder(unmasked_embeddings)

        # Create the decoder inputs.
        encoder_outputs = encoder_outputs + unmasked_positions
        decoder_inputs = tf.concat([encoder_outputs, masked_embeddings], axis=1)

        # Decode the inputs.
        decoder_outputs = self.decoder(decoder_inputs)
        decoder_patches = self.patch_layer(decoder_outputs)

        loss_patch = tf.gather(patches, mask_indices, axis=1, batch_dims=1)
        loss_output = tf.gather(decoder_patches, mask_indices, axis=1, batch_dims=1)

        # Compute the total loss.
        total_loss = self.compiled_loss(loss_patch, loss_output)

        return total_loss, loss_patch, loss_output

    def train_step(self, images):
        with tape_lib.GradientTape() as tape:
            total_loss, loss_patch, loss_output = self.calculate_loss(images)

        # Apply gradients.
        train_vars = [
            self.train_augmentation_model.trainable_variables,
            self.patch_layer.trainable_variables,
            self.patch_encoder.trainable_variables,
            self.encoder.trainable_variables,
            self.decoder.trainable_variables,
        ]
        grads = tape.gradient(total_loss, train_vars)
        tv_list = []
        for (grad, var) in zip(grads, train_vars):
            for g, v in zip(grad, var):
                tv_list.append((g, v))
        self.optimizer.apply_gradients(tv_list)

        # Report progress.
        self.compiled_metrics.update_state(loss_patch, loss_output)
        return {m.name: m.result() for m in self.metrics}

    def test_step(self, images):
        total_loss, loss_patch, loss_output = self.calculate_loss(images, test=True)

        # Update the trackers.
        self.compiled_metrics.update_state(loss_patch, loss_output)
        return {m.name: m.result() for m in self.metrics}


"""
## Model initialization
"""

train_augmentation_model = get_train_augmentation_model()
test_augmentation_model = get_test_augmentation_model()
patch_layer = Patches()
patch_encoder = PatchEncoder()
encoder = create_encoder()
decoder = create_decoder()

# Added: the parameter counts by hand, and both models (inference mode) against numpy
assert encoder.count_params() == ENC_LAYERS * transformer_params(
    ENC_PROJECTION_DIM, ENC_NUM_HEADS, ENC_TRANSFORMER_UNITS) + 2 * ENC_PROJECTION_DIM
assert decoder.count_params() == dense_params(ENC_PROJECTION_DIM, DEC_PROJECTION_DIM) + \
    DEC_LAYERS * transformer_params(DEC_PROJECTION_DIM, DEC_NUM_HEADS, DEC_TRANSFORMER_UNITS) + \
    2 * DEC_PROJECTION_DIM + dense_params(NUM_PATCHES * DEC_PROJECTION_DIM, IMAGE_SIZE ** 2 * 3)
probe = np.random.normal(size=(2, NUM_PATCHES - num_mask, ENC_PROJECTION_DIM)).astype("float32")
np.testing.assert_allclose(
    np.asarray(encoder(probe, training=False)),
    np_transformer(probe.astype(np.float64), encoder, ENC_NUM_HEADS, ENC_PROJECTION_DIM),
    rtol=1e-4, atol=1e-4)
assert encoder(np.zeros((1, NUM_PATCHES, ENC_PROJECTION_DIM), "float32")).shape == (
    1, NUM_PATCHES, ENC_PROJECTION_DIM)  # Input((None, ...)): any number of tokens
probe = np.random.normal(size=(2, NUM_PATCHES, ENC_PROJECTION_DIM)).astype("float32")
first, *_, last = [la for la in decoder.layers if isinstance(la, layers.Dense)]
decoded = np_transformer(np_dense(probe.astype(np.float64), first), decoder, DEC_NUM_HEADS,
                         DEC_PROJECTION_DIM)
decoded = np_dense(decoded.reshape(2, -1), last, "sigmoid").reshape(2, IMAGE_SIZE, IMAGE_SIZE, 3)
np.testing.assert_allclose(np.asarray(decoder(probe, training=False)), decoded,
                           rtol=1e-4, atol=1e-5)

mae_model = MaskedAutoencoder(
    train_augmentation_model=train_augmentation_model,
    test_augmentation_model=test_augmentation_model,
    patch_layer=patch_layer,
    patch_encoder=patch_encoder,
    encoder=encoder,
    decoder=decoder,
)

"""
## Training callbacks
"""

# Taking a batch of test inputs to measure model's progress.
test_images = next(iter(test_ds))
monitored = []  # added: what TrainMonitor would plot, checked after fit


class TrainMonitor(keras.callbacks.Callback):
    def __init__(self, epoch_interval=None):
        self.epoch_interval = epoch_interval

    def on_epoch_end(self, epoch, logs=None):
        if self.epoch_interval and epoch % self.epoch_interval == 0:
            test_augmented_images = self.model.test_augmentation_model(test_images)
            test_patches = self.model.patch_layer(test_augmented_images)
            (
                test_unmasked_embeddings,
                test_masked_embeddings,
                test_unmasked_positions,
                test_mask_indices,
                test_unmask_indices,
            ) = self.model.patch_encoder(test_patches)
            test_encoder_outputs = self.model.encoder(test_unmasked_embeddings)
            test_encoder_outputs = test_encoder_outputs + test_unmasked_positions
            test_decoder_inputs = tf.concat(
                [test_encoder_outputs, test_masked_embeddings], axis=1
            )
            test_decoder_outputs = self.model.decoder(test_decoder_inputs)

            # Show a maksed patch image.
            test_masked_patch, idx = self.model.patch_encoder.generate_masked_image(
                test_patches, test_unmask_indices
            )
            print(f"\nIdx chosen: {idx}")
            original_image = test_augmented_images[idx]
            masked_image = self.model.patch_layer.reconstruct_from_patch(
                test_masked_patch
            )
            reconstructed_image = test_decoder_outputs[idx]

            # (the matplotlib figure of the three images is dropped)
            monitored.append((epoch, original_image, masked_image, reconstructed_image))  # added


"""
### Learning rate scheduler
"""


class WarmUpCosine(keras.optimizers.schedules.LearningRateSchedule):
    def __init__(
        self, learning_rate_base, total_steps, warmup_learning_rate, warmup_steps
    ):
        super(WarmUpCosine, self).__init__()  # noqa: UP008 (upstream's spelling)

        self.learning_rate_base = learning_rate_base
        self.total_steps = total_steps
        self.warmup_learning_rate = warmup_learning_rate
        self.warmup_steps = warmup_steps
        self.pi = tf.constant(np.pi)

    def __call__(self, step):
        if self.total_steps < self.warmup_steps:
            raise ValueError("Total_steps must be larger or equal to warmup_steps.")

        cos_annealed_lr = tf.cos(
            self.pi
            * (tf.cast(step, tf.float32) - self.warmup_steps)
            / float(self.total_steps - self.warmup_steps)
        )
        learning_rate = 0.5 * self.learning_rate_base * (1 + cos_annealed_lr)

        if self.warmup_steps > 0:
            if self.learning_rate_base < self.warmup_learning_rate:
                raise ValueError(
                    "Learning_rate_base must be larger or equal to "
                    "warmup_learning_rate."
                )
            slope = (
                self.learning_rate_base - self.warmup_learning_rate
            ) / self.warmup_steps
            warmup_rate = slope * tf.cast(step, tf.float32) + self.warmup_learning_rate
            learning_rate = tf.where(
                step < self.warmup_steps, warmup_rate, learning_rate
            )
        return tf.where(
            step > self.total_steps, 0.0, learning_rate, name="learning_rate"
        )


total_steps = int((len(x_train) / BATCH_SIZE) * EPOCHS)
warmup_epoch_percentage = 0.15
warmup_steps = int(total_steps * warmup_epoch_percentage)
scheduled_lrs = WarmUpCosine(
    learning_rate_base=LEARNING_RATE,
    total_steps=total_steps,
    warmup_learning_rate=0.0,
    warmup_steps=warmup_steps,
)

lrs = [scheduled_lrs(step) for step in range(total_steps)]
# (plt.plot of lrs dropped)


def np_warmup_cosine(step, base, total, warmup_lr, warmup):  # added: WarmUpCosine in numpy
    lr = 0.5 * base * (1 + np.cos(np.pi * (step - warmup) / float(total - warmup)))
    if warmup > 0:
        lr = np.where(step < warmup, (base - warmup_lr) / warmup * step + warmup_lr, lr)
    return np.where(step > total, 0.0, lr)


# Added: the schedule, before and after its last step
assert len(lrs) == total_steps and all(lr.dtype == em.float32 for lr in lrs)
np.testing.assert_allclose(
    [float(scheduled_lrs(step)) for step in range(total_steps + 3)],
    np_warmup_cosine(np.arange(total_steps + 3), LEARNING_RATE, total_steps, 0.0, warmup_steps),
    rtol=1e-5, atol=1e-9)

# Assemble the callbacks.
train_callbacks = [TrainMonitor(epoch_interval=5)]

"""
## Model compilation and training
"""


class AdamW(keras.optimizers.Adam):
    """Stand-in for tfa.optimizers.AdamW (tensorflow_addons is not TensorFlow): tfa's
    DecoupledWeightDecayExtension subtracts weight_decay * var from each variable it
    updates, before the Adam step, not scaled by the learning rate (keras's AdamW scales
    it by the scheduled rate, which changes every step here)."""

    def __init__(self, weight_decay, **kwargs):
        super().__init__(**kwargs)
        self.tfa_weight_decay = weight_decay

    def apply_gradients(self, grads_and_vars, **kwargs):
        grads_and_vars = list(grads_and_vars)
        for grad, var in grads_and_vars:
            if grad is not None:
                var.assign_sub(self.tfa_weight_decay * var)
        return super().apply_gradients(grads_and_vars, **kwargs)


optimizer = AdamW(learning_rate=scheduled_lrs, weight_decay=WEIGHT_DECAY)

# Added: three steps of the stand-in on one variable are tfa's AdamW (decay, then
# tf.keras's Adam with epsilon 1e-7) at the scheduled rate of steps 0, 1, 2
probe_var = tf.Variable([1.0, -2.0, 0.5])
probe_optimizer = AdamW(learning_rate=scheduled_lrs, weight_decay=WEIGHT_DECAY)
value, m, v = np.array([1.0, -2.0, 0.5]), 0.0, 0.0
for t, g in enumerate(([0.5, -1.0, 2.0], [0.1, 0.2, -0.3], [1.0, 1.0, 1.0]), start=1):
    probe_optimizer.apply_gradients([(tf.constant(g), probe_var)])
    m, v = 0.9 * m + 0.1 * np.array(g), 0.999 * v + 0.001 * np.square(g)
    lr = np_warmup_cosine(t - 1, LEARNING_RATE, total_steps, 0.0, warmup_steps)
    value = value * (1 - WEIGHT_DECAY) - lr * math.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t) * m / (
        np.sqrt(v) + 1e-7)
    np.testing.assert_allclose(probe_var.numpy(), value, rtol=1e-6, atol=1e-7)

# Compile and pretrain the model.
mae_model.compile(
    optimizer=optimizer, loss=keras.losses.MeanSquaredError(), metrics=["mae"]
)
history = mae_model.fit(
    train_ds, epochs=EPOCHS, validation_data=val_ds, callbacks=train_callbacks,
)

# Added: what fit recorded, the number of steps taken, the trained mask token, and what
# TrainMonitor would have shown
h = history.history
print({k: [round(float(x), 4) for x in v] for k, v in h.items()})
assert set(h) == {"loss", "mae", "val_loss", "val_mae"}, sorted(h)
assert all(len(v) == EPOCHS for v in h.values()), h
assert int(optimizer.iterations) == EPOCHS * math.ceil(len(x_train) / BATCH_SIZE)
assert not np.array_equal(np.asarray(patch_encoder.mask_token), mask_token)
assert [epoch for epoch, *_ in monitored] == list(range(0, EPOCHS, 5)), monitored
for _, original, masked, reconstructed in monitored:
    original, masked, reconstructed = (np.asarray(x) for x in (original, masked, reconstructed))
    assert original.shape == masked.shape == reconstructed.shape == (IMAGE_SIZE, IMAGE_SIZE, 3)
    assert np.all((masked == 0) | (masked == original))  # the unmasked patches, else black
    assert 0 < reconstructed.min() and reconstructed.max() < 1  # a sigmoid's
assert SHORT or h["loss"][-1] < h["loss"][0], h["loss"]

# Measure its performance.
em.random.set_seed(SEED)  # added: the masks are drawn again below
loss, mae = mae_model.evaluate(test_ds)
print(f"Loss: {loss:.2f}")
print(f"MAE: {mae:.2f}")

# Added: evaluate's loss and mae are numpy's mean squared and absolute errors over every
# masked patch of the test images (the same masks, drawn again from the same seed)
em.random.set_seed(SEED)
replayed = [mae_model.calculate_loss(images, test=True)[1:] for images in test_ds]
targets = np.concatenate([np.asarray(a) for a, _ in replayed])
outputs = np.concatenate([np.asarray(b) for _, b in replayed])
assert targets.shape == (len(x_test), num_mask, PATCH_SIZE * PATCH_SIZE * 3), targets.shape
np.testing.assert_allclose(loss, np.mean(np.square(targets - outputs)), rtol=1e-5)
np.testing.assert_allclose(mae, np.mean(np.abs(targets - outputs)), rtol=1e-5)
# (CPU run) below what predicting one grey level everywhere gives (untrained, its sigmoid
# outputs about 0.5: ~0.22); see the header
test_pixels = np_resize(x_test / 255.0, IMAGE_SIZE)
train_pixels = np_resize(x_train[:2000] / 255.0, IMAGE_SIZE)
constant_loss = np.mean(np.square(test_pixels - train_pixels.mean()))
mean_image_loss = np.mean(np.square(test_pixels - train_pixels.mean(0)))
print(f"best constant: {constant_loss:.4f}, mean image: {mean_image_loss:.4f}, MAE: {loss:.4f}")
assert SHORT or loss < 0.75 * constant_loss, (loss, constant_loss)

# Added: the gradient of the loss with respect to the decoder's last bias, by hand: the
# pixels of the masked patches get 2 (output - target) output (1 - output) / count (the
# sigmoid's derivative), the others none; the masks are drawn again from the same seed
em.random.set_seed(SEED)
with tape_lib.GradientTape() as tape:
    total_loss, loss_patch, loss_output = mae_model.calculate_loss(test_images, test=True)
bias_gradient = np.asarray(tape.gradient(total_loss, last.bias))
em.random.set_seed(SEED)
masked_at = np.asarray(patch_encoder(patch_layer(test_augmentation_model(test_images)))[3])
target, output = np.asarray(loss_patch, np.float64), np.asarray(loss_output, np.float64)
np.testing.assert_allclose(float(total_loss), np.mean(np.square(target - output)), rtol=1e-5)
per_patch = np.zeros((len(output), NUM_PATCHES, output.shape[2]))
np.put_along_axis(per_patch, masked_at[..., None],
                  2 * (output - target) * output * (1 - output) / output.size, axis=1)
side = IMAGE_SIZE // PATCH_SIZE
per_pixel = per_patch.reshape(-1, side, side, PATCH_SIZE, PATCH_SIZE, 3).transpose(0, 1, 3, 2, 4, 5)
np.testing.assert_allclose(bias_gradient, per_pixel.sum(0).reshape(-1), rtol=1e-4, atol=1e-10)

"""
## Evaluation with linear probing
"""

# Extract the augmentation layers.
train_augmentation_model = mae_model.train_augmentation_model
test_augmentation_model = mae_model.test_augmentation_model

# Extract the patchers.
patch_layer = mae_model.patch_layer
patch_encoder = mae_model.patch_encoder
patch_encoder.downstream = True  # Swtich the downstream flag to True.

# Extract the encoder.
encoder = mae_model.encoder

# Pack as a model.
downstream_model = keras.Sequential(
    [
        layers.Input((IMAGE_SIZE, IMAGE_SIZE, 3)),
        patch_layer,
        patch_encoder,
        encoder,
        layers.BatchNormalization(),  # Refer to A.1 (Linear probing).
        layers.GlobalAveragePooling1D(),
        layers.Dense(NUM_CLASSES, activation="softmax"),
    ],
    name="linear_probe_model",
)

# Only the final classification layer of the `downstream_model` should be trainable.
for layer in downstream_model.layers[:-1]:
    layer.trainable = False

downstream_model.summary()

# Added: the Sequential's layers (its Input is none of them), and only the head trains
head = downstream_model.layers[-1]
assert len(downstream_model.layers) == 6 and downstream_model.layers[2] is encoder
assert len(downstream_model.trainable_variables) == 2
assert all(any(v is w for w in head.trainable_variables)
           for v in downstream_model.trainable_variables)
frozen = [np.array(w) for layer in downstream_model.layers[:-1] for w in layer.get_weights()]

"""
### Prepare datasets for linear probing
"""


def prepare_data(images, labels, is_train=True):
    if is_train:
        augmentation_model = train_augmentation_model
    else:
        augmentation_model = test_augmentation_model

    dataset = data.Dataset.from_tensor_slices((images, labels))
    if is_train:
        dataset = dataset.shuffle(BUFFER_SIZE)

    dataset = dataset.batch(BATCH_SIZE).map(
        lambda x, y: (augmentation_model(x), y), num_parallel_calls=AUTO
    )
    return dataset.prefetch(AUTO)


train_ds = prepare_data(x_train, y_train)
val_ds = prepare_data(x_train, y_train, is_train=False)
test_ds = prepare_data(x_test, y_test, is_train=False)

"""
### Perform linear probing
"""

linear_probe_epochs = 50 if FULL else 1 if SHORT else 5
linear_prob_lr = 0.1
warm_epoch_percentage = 0.1
steps = int((len(x_train) // BATCH_SIZE) * linear_probe_epochs)

warmup_steps = int(steps * warm_epoch_percentage)
scheduled_lrs = WarmUpCosine(
    learning_rate_base=linear_prob_lr,
    total_steps=steps,
    warmup_learning_rate=0.0,
    warmup_steps=warmup_steps,
)

optimizer = keras.optimizers.SGD(learning_rate=scheduled_lrs, momentum=0.9)
downstream_model.compile(
    optimizer=optimizer, loss="sparse_categorical_crossentropy", metrics=["accuracy"]
)
downstream_model.fit(train_ds, validation_data=val_ds, epochs=linear_probe_epochs)

loss, accuracy = downstream_model.evaluate(test_ds)
accuracy = round(accuracy * 100, 2)
print(f"Accuracy on the test set: {accuracy}%.")

# Added: the frozen layers did not change (the BatchNormalization's moving statistics
# included: with trainable=False it runs in inference mode, as in TF 2), predict() is the
# head over the frozen features in numpy, and evaluate's numbers are predict()'s
for before, after in zip(frozen, (w for layer in downstream_model.layers[:-1]
                                  for w in layer.get_weights())):
    np.testing.assert_array_equal(before, np.asarray(after))
probabilities = np.asarray(downstream_model.predict(test_ds), np.float64)
assert probabilities.shape == (len(x_test), NUM_CLASSES), probabilities.shape
features = np.asarray(encoder(patch_encoder(patch_layer(test_augmentation_model(x_test)))),
                      np.float64)
gamma, beta, moving_mean, moving_variance = (
    np.asarray(w, np.float64) for w in downstream_model.layers[3].get_weights())
pooled = ((features - moving_mean) / np.sqrt(moving_variance + 1e-3) * gamma + beta).mean(1)
logits = np_dense(pooled, head)
expected = np.exp(logits - logits.max(-1, keepdims=True))
np.testing.assert_allclose(probabilities, expected / expected.sum(-1, keepdims=True),
                           rtol=1e-4, atol=1e-6)
labels = y_test[:, 0].astype(np.int64)
assert accuracy == round(np.mean(probabilities.argmax(-1) == labels) * 100, 2), accuracy
np.testing.assert_allclose(loss, -np.log(probabilities[np.arange(len(labels)), labels]).mean(),
                           rtol=1e-4)
# (CPU run) well above chance (10%); see the header
assert SHORT or accuracy > 25, accuracy
