"""Port of keras-team/keras-io examples/vision/mlp_image_classification.py ("Image
classification with modern MLP models", the Keras 3 version): three attention-free
classifiers built by one build_classifier (a data_augmentation Sequential of Normalization
adapted on the training images, Resizing, RandomFlip and RandomZoom; a Patches layer on
keras.ops.image.extract_patches; a Dense patch encoder; an optional PositionEmbedding
layer of its own with add_weight, ops.slice and ops.broadcast_to; the blocks;
GlobalAveragePooling1D, Dropout and a Dense head): MLP-Mixer (MLPMixerLayer: token- and
channel-mixing MLPs with gelu Dense layers, ops.transpose and a shared LayerNormalization),
FNet (FNetLayer: the real part of keras.ops.fft2 over patches and channels, LayerNormalization
and a feed-forward network) and gMLP (gMLPLayer: a spatial gating unit with ops.split and a
Dense(bias_initializer="Ones") across patches), each trained by run_experiment: AdamW,
SparseCategoricalCrossentropy(from_logits=True), SparseCategoricalAccuracy("acc") and
SparseTopKCategoricalAccuracy(5, "top5-acc"), ReduceLROnPlateau and
EarlyStopping(restore_best_weights=True) on val_loss, fit(validation_split=0.1), evaluate.

Upstream: https://github.com/keras-team/keras/blob/b9be76a13a1edbea5e17a54bf91da386323222bf/examples/keras_io/vision/mlp_image_classification.py
(the Keras 3 conversion that keras-io's examples/vision/mlp_image_classification.py carries
now, the same code in keras-io's formatting; the tf.keras version it replaced, with
tfa.layers.GELU, tf.image.extract_patches, an Embedding for positions and
tf.signal.fft2d, is https://github.com/keras-team/keras-io/blob/8bda227c08adf855a8b9ec579840e2a7171fff60/examples/vision/mlp_image_classification.py)
Changed: names only (keras -> ember.nn, bound to the name `keras` as the example spells
it; keras.layers -> nn.layers, keras.ops -> nn.ops). CIFAR-100 cannot be downloaded:
keras.datasets.cifar100.load_data() is replaced by the real MNIST digits
(ember.data.datasets.mnist from $EMBER_DATA, else ../shared/datasets/mnist beside the
checkout as test_programs.py finds them; the program skips when they are absent) in
CIFAR's layout: uint8 images of (32, 32, 3) (each 28x28 digit centred on a 32x32 black
canvas, as LeNet's 32x32 MNIST, and stacked to 3 channels) and int64 labels of shape
(n, 1); so num_classes is 10 (CIFAR-100: 100).
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream's sizes: image_size 64, patch_size 8,
embedding_dim 256, 4 blocks, batch 128, 50 epochs, on all 60,000/10,000 digits; hours of
CPU): image_size 16, patch_size 4 (16 patches of 48 values), embedding_dim 32, 2 blocks,
batch 64, 2,000 training and 500 test digits, 6 epochs per model (upstream's
learning rates, dropout, weight decay and callbacks); EMBER_PROGRAMS_SHORT=1 (the
strict-GPU run): 1 block, 256 and 64 digits, 2 epochs, no threshold on what training
reached.
Added: seeds for numpy and ember; the data's shapes and dtypes; the adapted Normalization
holds numpy's per-channel mean and variance; Patches of a batch equal numpy's slices of
the images (row-major patches, each flattened as (row, column, channel)); a
PositionEmbedding's weight is within glorot_uniform's bound, its output is that weight
for every example (start_index takes the later rows) and get_config names
sequence_length and GlorotUniform; the fft2 stand-in equals numpy's np.fft.fft2 over the
last two axes (real and imaginary parts); one block of each kind (inference mode) equals
a numpy float64 forward pass with its own weights (exact erf gelu, LayerNormalization with
epsilon 1e-6, Dense, np.fft.fft2(x).real for FNet), and gMLP's spatial projection starts
with a bias of ones; each classifier has the parameter count Keras 3 gives for the same
model (5,265 / 6,897 / 9,041; SHORT 3,585 / 4,657 / 5,473; FULL 219,665 / 598,801 /
862,225); a callback (EpochWeights, added to fit's callbacks) records the weights after
every epoch; fit's history has Keras's keys (learning_rate logged by ReduceLROnPlateau),
one value per epoch, a rate that only keeps or halves, and top-5 >= top-1;
restore_best_weights leaves the weights of the first epoch with the lowest val_loss (as
Keras 3 does also when training runs to the end, not only after an early stop); that
epoch's val_loss, val_acc and val_top5-acc equal numpy's from predict() on the last 10% of
the training digits (the split Keras takes, rounded down, before shuffling), and
evaluate's accuracies equal predict()'s on the test digits; (CPU run) the best val_loss is
below 0.9 times the first epoch's, and test accuracy passes 50% for MLP-Mixer and gMLP and
30% for FNet (chance is 10%; FNet learns slowest at upstream's learning rate of 0.001).
Keras 3.15.1 (torch backend, upstream's code on the same digits and sizes) reaches
70%/71% (MLP-Mixer), 46%/42% (FNet) and 77%/75% (gMLP) with seeds 0 and 1; this program
74%, 42% and 75% (seeds 1-3: 69-74%, 46%, 73-76%). Outside this program, the three
classifiers given Keras's initial weights predict what Keras predicts to 1e-6 (so the fft2
stand-in does in the model what keras.ops.fft2 does), and Resizing, RandomZoom (each
fill_mode), extract_patches, Normalization and AdamW steps agree with Keras 3's.
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it):
1. no keras.ops.fft2 (AttributeError: "ember.nn.ops has no fft2 (keras.ops.fft2)"); ember
has no FFT at all (no ops.fft, rfft, irfft, ifft2, stft, istft, no em.signal): fft2 below
computes (C - iS) (A + iB) (C - iS) with the DFT's cosine and sine matrices, built on the
tensors' device. Nothing upstream calls behaves differently from Keras 3 (no silent
difference found).
"""

import math
import os
import pathlib
import unittest

import numpy as np

import ember.core as em
from ember import data, nn
from ember.nn import layers

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
em.random.set_seed(0)
np.random.seed(0)


def load_data(n_train, n_test):
    """MNIST in CIFAR's layout: uint8 (n, 32, 32, 3) images, (n, 1) int64 labels."""
    def split(name, n):
        x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
        x = (np.asarray(x).reshape(-1, 28, 28, 1) * 255).round().astype(np.uint8)
        x = np.pad(x, ((0, 0), (2, 2), (2, 2), (0, 0)))  # centred on a 32x32 canvas
        return np.repeat(x, 3, axis=-1), np.asarray(y).astype(np.int64).reshape(-1, 1)
    return split("train", n_train), split("test", n_test)


"""
## Prepare the data
"""

num_classes = 10  # CIFAR-100: 100
input_shape = (32, 32, 3)

(x_train, y_train), (x_test, y_test) = load_data(60000 if FULL else 256 if SHORT else 2000,
                                                 10000 if FULL else 64 if SHORT else 500)

print(f"x_train shape: {x_train.shape} - y_train shape: {y_train.shape}")
print(f"x_test shape: {x_test.shape} - y_test shape: {y_test.shape}")
assert x_train.shape[1:] == input_shape and x_train.dtype == np.uint8, x_train.shape
assert y_train.shape == (len(x_train), 1) and y_test.shape == (len(x_test), 1)

"""
## Configure the hyperparameters
"""

weight_decay = 0.0001
batch_size = 128 if FULL else 64
num_epochs = 50 if FULL else 2 if SHORT else 6
dropout_rate = 0.2
image_size = 64 if FULL else 16  # We'll resize input images to this size.
patch_size = 8 if FULL else 4  # Size of the patches to be extracted from the input images.
num_patches = (image_size // patch_size) ** 2  # Size of the data array.
embedding_dim = 256 if FULL else 32  # Number of hidden units.
num_blocks = 4 if FULL else 1 if SHORT else 2  # Number of blocks.

print(f"Image size: {image_size} X {image_size} = {image_size ** 2}")
print(f"Patch size: {patch_size} X {patch_size} = {patch_size ** 2} ")
print(f"Patches per image: {num_patches}")
print(f"Elements per patch (3 channels): {(patch_size ** 2) * 3}")

"""
## Build a classification model

We implement a method that builds a classifier given the processing blocks.
"""


def build_classifier(blocks, positional_encoding=False):
    inputs = layers.Input(shape=input_shape)
    # Augment data.
    augmented = data_augmentation(inputs)
    # Create patches.
    patches = Patches(patch_size)(augmented)
    # Encode patches to generate a [batch_size, num_patches, embedding_dim] tensor.
    x = layers.Dense(units=embedding_dim)(patches)
    if positional_encoding:
        x = x + PositionEmbedding(sequence_length=num_patches)(x)
    # Process x using the module blocks.
    x = blocks(x)
    # Apply global average pooling to generate a [batch_size, embedding_dim] representation tensor.
    representation = layers.GlobalAveragePooling1D()(x)
    # Apply dropout.
    representation = layers.Dropout(rate=dropout_rate)(representation)
    # Compute logits outputs.
    logits = layers.Dense(num_classes)(representation)
    # Create the Keras model.
    return keras.Model(inputs=inputs, outputs=logits)


"""
## Define an experiment

We implement a utility function to compile, train, and evaluate a given model.
"""


test_accuracies = []  # Added: each model's, checked at the end


class EpochWeights(keras.callbacks.Callback):
    """Added: the weights at the end of every epoch, to check what EarlyStopping restores."""

    def on_train_begin(self, logs=None):
        self.weights = []

    def on_epoch_end(self, epoch, logs=None):
        self.weights.append([np.array(w) for w in self.model.get_weights()])


def run_experiment(model):
    # Create Adam optimizer with weight decay.
    optimizer = keras.optimizers.AdamW(
        learning_rate=learning_rate,
        weight_decay=weight_decay,
    )
    # Compile the model.
    model.compile(
        optimizer=optimizer,
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=[
            keras.metrics.SparseCategoricalAccuracy(name="acc"),
            keras.metrics.SparseTopKCategoricalAccuracy(5, name="top5-acc"),
        ],
    )
    # Create a learning rate scheduler callback.
    reduce_lr = keras.callbacks.ReduceLROnPlateau(
        monitor="val_loss", factor=0.5, patience=5
    )
    # Create an early stopping callback.
    early_stopping = keras.callbacks.EarlyStopping(
        monitor="val_loss", patience=10, restore_best_weights=True
    )
    epoch_weights = EpochWeights()  # Added
    # Fit the model.
    history = model.fit(
        x=x_train,
        y=y_train,
        batch_size=batch_size,
        epochs=num_epochs,
        validation_split=0.1,
        callbacks=[early_stopping, reduce_lr, epoch_weights],
    )

    _, accuracy, top_5_accuracy = model.evaluate(x_test, y_test)
    print(f"Test accuracy: {round(accuracy * 100, 2)}%")
    print(f"Test top 5 accuracy: {round(top_5_accuracy * 100, 2)}%")

    # Added: the history, the restored weights and evaluate's numbers
    check_experiment(model, history, early_stopping, epoch_weights, accuracy, top_5_accuracy)
    test_accuracies.append(accuracy)

    # Return history to plot learning curves.
    return history


def check_experiment(model, history, early_stopping, epoch_weights, accuracy, top_5_accuracy):
    h = history.history
    assert set(h) == {"loss", "acc", "top5-acc", "val_loss", "val_acc", "val_top5-acc",
                      "learning_rate"}, sorted(h)
    epochs = len(h["loss"])  # all of them, unless EarlyStopping stopped after the last one
    assert epochs == num_epochs or early_stopping.stopped_epoch == epochs - 1, epochs
    assert all(len(v) == epochs for v in h.values()), {k: len(v) for k, v in h.items()}
    assert len(epoch_weights.weights) == epochs
    for prefix in ("", "val_"):
        for top1, top5 in zip(h[prefix + "acc"], h[prefix + "top5-acc"]):
            assert top5 >= top1, (prefix, top1, top5)
    # ReduceLROnPlateau: the rate starts at learning_rate, then each epoch keeps it or halves
    # it; no halving before 6 epochs (patience 5)
    rates = np.array(h["learning_rate"])
    np.testing.assert_allclose(rates[0], learning_rate, rtol=1e-6)
    steps = rates[1:] / rates[:-1]
    assert np.all(np.isclose(steps, 1.0) | np.isclose(steps, 0.5)), rates
    assert np.allclose(rates[:6], learning_rate), rates
    # restore_best_weights: the weights at the end of the epoch with the lowest val_loss (the
    # first of equals: an improvement must be strict), also when no early stop happened
    best = int(np.argmin(h["val_loss"]))
    restored = model.get_weights()
    assert len(restored) == len(epoch_weights.weights[best])
    for w, saved in zip(restored, epoch_weights.weights[best]):
        np.testing.assert_array_equal(np.asarray(w), saved)
    # the best epoch's validation numbers, by hand from predict() on the last 10% of the
    # training data (validation_split takes the tail, before any shuffling), and
    # evaluate's, from predict() on the test data (inference: no dropout, flip or zoom)
    n_val = len(x_train) - math.floor(len(x_train) * (1.0 - 0.1))  # Keras rounds the split down
    for x, y, (loss, acc, top5) in (
            (x_train[-n_val:], y_train, [h[k][best] for k in ("val_loss", "val_acc", "val_top5-acc")]),
            (x_test, y_test, (None, accuracy, top_5_accuracy))):
        logits = np.asarray(model.predict(x, batch_size=batch_size, verbose=0))
        assert logits.shape == (len(x), num_classes) and logits.dtype == np.float32
        labels = y[-len(x):, 0]
        log_p = logits - logits.max(-1, keepdims=True)
        log_p = log_p - np.log(np.exp(log_p).sum(-1, keepdims=True))
        if loss is not None:
            np.testing.assert_allclose(loss, -log_p[np.arange(len(x)), labels].mean(), rtol=1e-5)
        np.testing.assert_allclose(acc, np.mean(np.argmax(logits, -1) == labels), atol=1e-6)
        np.testing.assert_allclose(
            top5, np.mean(np.any(np.argsort(-logits, -1)[:, :5] == labels[:, None], -1)), atol=1e-6)
    assert top_5_accuracy >= accuracy, (top_5_accuracy, accuracy)
    assert SHORT or h["val_loss"][best] < 0.9 * h["val_loss"][0], h["val_loss"]  # it learnt


"""
## Use data augmentation
"""

data_augmentation = keras.Sequential(
    [
        layers.Normalization(),
        layers.Resizing(image_size, image_size),
        layers.RandomFlip("horizontal"),
        layers.RandomZoom(height_factor=0.2, width_factor=0.2),
    ],
    name="data_augmentation",
)
# Compute the mean and the variance of the training data for normalization.
data_augmentation.layers[0].adapt(x_train)

# Added: the adapted statistics are the per-channel mean and variance of the images
norm = data_augmentation.layers[0]
np.testing.assert_allclose(np.ravel(norm.mean), x_train.reshape(-1, 3).mean(0), rtol=1e-5)
np.testing.assert_allclose(np.ravel(norm.variance), x_train.reshape(-1, 3).var(0), rtol=1e-4)


"""
## Implement patch extraction as a layer
"""


class Patches(layers.Layer):
    def __init__(self, patch_size, **kwargs):
        super().__init__(**kwargs)
        self.patch_size = patch_size

    def call(self, x):
        patches = keras.ops.image.extract_patches(x, self.patch_size)
        batch_size = keras.ops.shape(patches)[0]
        num_patches = keras.ops.shape(patches)[1] * keras.ops.shape(patches)[2]
        patch_dim = keras.ops.shape(patches)[3]
        out = keras.ops.reshape(patches, (batch_size, num_patches, patch_dim))
        return out


# Added: the patches of a few images are numpy's slices of them, row-major
images = x_train[:3].astype("float32")
patches = np.asarray(Patches(8)(images))
assert patches.shape == (3, 16, 8 * 8 * 3), patches.shape
for i in range(16):
    r, c = divmod(i, 4)
    np.testing.assert_array_equal(
        patches[:, i], images[:, r * 8:(r + 1) * 8, c * 8:(c + 1) * 8].reshape(3, -1))


"""
## Implement position embedding as a layer
"""


class PositionEmbedding(keras.layers.Layer):
    def __init__(
        self,
        sequence_length,
        initializer="glorot_uniform",
        **kwargs,
    ):
        super().__init__(**kwargs)
        if sequence_length is None:
            raise ValueError(
                "`sequence_length` must be an Integer, received `None`."
            )
        self.sequence_length = int(sequence_length)
        self.initializer = keras.initializers.get(initializer)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "sequence_length": self.sequence_length,
                "initializer": keras.initializers.serialize(self.initializer),
            }
        )
        return config

    def build(self, input_shape):
        feature_size = input_shape[-1]
        self.position_embeddings = self.add_weight(
            name="embeddings",
            shape=[self.sequence_length, feature_size],
            initializer=self.initializer,
            trainable=True,
        )

        super().build(input_shape)

    def call(self, inputs, start_index=0):
        shape = keras.ops.shape(inputs)
        feature_length = shape[-1]
        sequence_length = shape[-2]
        # trim to match the length of the input sequence, which might be less
        # than the sequence_length of the layer.
        position_embeddings = keras.ops.convert_to_tensor(
            self.position_embeddings
        )
        position_embeddings = keras.ops.slice(
            position_embeddings,
            (start_index, 0),
            (sequence_length, feature_length),
        )
        return keras.ops.broadcast_to(position_embeddings, shape)

    def compute_output_shape(self, input_shape):
        return input_shape


# Added: the weight is glorot_uniform's, the output that weight for every example; a
# shorter sequence takes the first rows, start_index the rows after it
pe = PositionEmbedding(sequence_length=num_patches)
probe = np.random.normal(size=(2, num_patches, embedding_dim)).astype("float32")
out = np.asarray(pe(probe))
table = np.asarray(pe.position_embeddings)
assert table.shape == (num_patches, embedding_dim) and out.shape == probe.shape
assert np.abs(table).max() <= math.sqrt(6 / (num_patches + embedding_dim)) + 1e-7
assert table.std() > 0.3 * math.sqrt(2 / (num_patches + embedding_dim)), table.std()
np.testing.assert_array_equal(out, np.broadcast_to(table, probe.shape))
np.testing.assert_array_equal(np.asarray(pe(probe[:, :3], start_index=2)),
                              np.broadcast_to(table[2:5], (2, 3, embedding_dim)))
config = pe.get_config()
assert config["sequence_length"] == num_patches, config
assert config["initializer"]["class_name"] == "GlorotUniform", config


"""
## Numpy references (added): the blocks below are checked against these
"""


def np_gelu(x):  # keras.activations.gelu(x, approximate=False): the exact erf form
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def np_dense(x, dense, activation=None):
    kernel, bias = (np.asarray(w, dtype=np.float64) for w in dense.get_weights())
    y = x @ kernel + bias
    return np_gelu(y) if activation == "gelu" else y


def np_layer_norm(x, norm):
    gamma, beta = (np.asarray(w, dtype=np.float64) for w in norm.get_weights())
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(x.var(-1, keepdims=True) + 1e-6) * gamma + beta


def check_block(block, reference):
    """One block in inference mode equals the numpy forward pass with its weights."""
    x = np.random.normal(size=(3, num_patches, embedding_dim)).astype("float32")
    y = np.asarray(block(x, training=False))
    assert y.shape == x.shape and y.dtype == np.float32, (y.shape, y.dtype)
    np.testing.assert_allclose(y, reference(block, x.astype(np.float64)), rtol=1e-4, atol=1e-4)


"""
## The MLP-Mixer model

The MLP-Mixer is an architecture based exclusively on
multi-layer perceptrons (MLPs), that contains two types of MLP layers:

1. One applied independently to image patches, which mixes the per-location features.
2. The other applied across patches (along channels), which mixes spatial information.

This is similar to a [depthwise separable convolution based model](https://arxiv.org/pdf/1610.02357.pdf)
such as the Xception model, but with two chained dense transforms, no max pooling, and layer normalization
instead of batch normalization.
"""

"""
### Implement the MLP-Mixer module
"""


class MLPMixerLayer(layers.Layer):
    def __init__(
        self, num_patches, hidden_units, dropout_rate, *args, **kwargs
    ):
        super().__init__(*args, **kwargs)

        self.mlp1 = keras.Sequential(
            [
                layers.Dense(units=num_patches, activation="gelu"),
                layers.Dense(units=num_patches),
                layers.Dropout(rate=dropout_rate),
            ]
        )
        self.mlp2 = keras.Sequential(
            [
                layers.Dense(units=num_patches, activation="gelu"),
                layers.Dense(units=hidden_units),
                layers.Dropout(rate=dropout_rate),
            ]
        )
        self.normalize = layers.LayerNormalization(epsilon=1e-6)

    def build(self, input_shape):
        return super().build(input_shape)

    def call(self, inputs):
        # Apply layer normalization.
        x = self.normalize(inputs)
        # Transpose inputs from [num_batches, num_patches, hidden_units] to [num_batches, hidden_units, num_patches].  # noqa: E501
        x_channels = keras.ops.transpose(x, axes=(0, 2, 1))
        # Apply mlp1 on each channel independently.
        mlp1_outputs = self.mlp1(x_channels)
        # Transpose mlp1_outputs from [num_batches, hidden_dim, num_patches] to [num_batches, num_patches, hidden_units].  # noqa: E501
        mlp1_outputs = keras.ops.transpose(mlp1_outputs, axes=(0, 2, 1))
        # Add skip connection.
        x = mlp1_outputs + inputs
        # Apply layer normalization.
        x_patches = self.normalize(x)
        # Apply mlp2 on each patch independtenly.
        mlp2_outputs = self.mlp2(x_patches)
        # Add skip connection.
        x = x + mlp2_outputs
        return x


def np_mixer(block, x):  # Added
    m1, m2 = block.mlp1.layers, block.mlp2.layers
    t = np_layer_norm(x, block.normalize).transpose(0, 2, 1)
    x = np_dense(np_dense(t, m1[0], "gelu"), m1[1]).transpose(0, 2, 1) + x
    return x + np_dense(np_dense(np_layer_norm(x, block.normalize), m2[0], "gelu"), m2[1])


check_block(MLPMixerLayer(num_patches, embedding_dim, dropout_rate), np_mixer)

"""
### Build, train, and evaluate the MLP-Mixer model

Note that training the model with the current settings on a V100 GPUs
takes around 8 seconds per epoch.
"""

mlpmixer_blocks = keras.Sequential(
    [
        MLPMixerLayer(num_patches, embedding_dim, dropout_rate)
        for _ in range(num_blocks)
    ]
)
learning_rate = 0.005
mlpmixer_classifier = build_classifier(mlpmixer_blocks)
# Added: the number Keras 3 gives for this model (Normalization's mean, variance and count
# included)
print("count_params", mlpmixer_classifier.count_params())
assert mlpmixer_classifier.count_params() == (219665 if FULL else 3585 if SHORT else 5265)
history = run_experiment(mlpmixer_classifier)

"""
The MLP-Mixer model tends to have much less number of parameters compared
to convolutional and transformer-based models, which leads to less training and
serving computational cost.

As mentioned in the [MLP-Mixer](https://arxiv.org/abs/2105.01601) paper,
when pre-trained on large datasets, or with modern regularization schemes,
the MLP-Mixer attains competitive scores to state-of-the-art models.
You can obtain better results by increasing the embedding dimensions,
increasing the number of mixer blocks, and training the model for longer.
You may also try to increase the size of the input images and use different patch sizes.
"""

"""
## The FNet model

The FNet uses a similar block to the Transformer block. However, FNet replaces the self-attention layer
in the Transformer block with a parameter-free 2D Fourier transformation layer:

1. One 1D Fourier Transform is applied along the patches.
2. One 1D Fourier Transform is applied along the channels.
"""


def fft2(x):
    """Stand-in for keras.ops.fft2 on (real, imag): the 2-D DFT over the last two axes as
    two products with the DFT's cosine and sine matrices (exp(-2 pi i k n / N) = C - iS),
    built on the tensors' device; returns (real, imag) as Keras does."""
    real, imag = x
    shape = keras.ops.shape(real)

    def cos_sin(n):
        k = keras.ops.arange(n)
        angle = keras.ops.cast(keras.ops.mod(k[:, None] * k[None, :], n), real.dtype)
        angle = angle * (2 * math.pi / n)
        return keras.ops.cos(angle), keras.ops.sin(angle)

    cr, sr = cos_sin(shape[-2])  # along the rows (the patches)
    cc, sc = cos_sin(shape[-1])  # along the columns (the channels)
    # (C_r - i S_r) (A + i B) = (C_r A + S_r B) + i (C_r B - S_r A)
    row_re = keras.ops.matmul(cr, real) + keras.ops.matmul(sr, imag)
    row_im = keras.ops.matmul(cr, imag) - keras.ops.matmul(sr, real)
    # (P + i Q) (C_c - i S_c) = (P C_c + Q S_c) + i (Q C_c - P S_c)
    return (keras.ops.matmul(row_re, cc) + keras.ops.matmul(row_im, sc),
            keras.ops.matmul(row_im, cc) - keras.ops.matmul(row_re, sc))


# Added: the stand-in is numpy's FFT over the last two axes
probe = np.random.normal(size=(2, num_patches, embedding_dim)).astype("float32")
probe_im = np.random.normal(size=probe.shape).astype("float32")
expected = np.fft.fft2(probe.astype(np.float64) + 1j * probe_im)
got_re, got_im = fft2((keras.ops.convert_to_tensor(probe), keras.ops.convert_to_tensor(probe_im)))
np.testing.assert_allclose(np.asarray(got_re), expected.real, rtol=1e-4, atol=2e-4)
np.testing.assert_allclose(np.asarray(got_im), expected.imag, rtol=1e-4, atol=2e-4)

"""
### Implement the FNet module
"""


class FNetLayer(layers.Layer):
    def __init__(self, embedding_dim, dropout_rate, *args, **kwargs):
        super().__init__(*args, **kwargs)

        self.ffn = keras.Sequential(
            [
                layers.Dense(units=embedding_dim, activation="gelu"),
                layers.Dropout(rate=dropout_rate),
                layers.Dense(units=embedding_dim),
            ]
        )

        self.normalize1 = layers.LayerNormalization(epsilon=1e-6)
        self.normalize2 = layers.LayerNormalization(epsilon=1e-6)

    def call(self, inputs):
        # Apply fourier transformations.
        real_part = inputs
        im_part = keras.ops.zeros_like(inputs)
        # GAP 1: x = keras.ops.fft2((real_part, im_part))[0]
        x = fft2((real_part, im_part))[0]
        # Add skip connection.
        x = x + inputs
        # Apply layer normalization.
        x = self.normalize1(x)
        # Apply Feedfowrad network.
        x_ffn = self.ffn(x)
        # Add skip connection.
        x = x + x_ffn
        # Apply layer normalization.
        return self.normalize2(x)


def np_fnet(block, x):  # Added
    x = np_layer_norm(np.fft.fft2(x).real + x, block.normalize1)
    ffn = block.ffn.layers
    return np_layer_norm(x + np_dense(np_dense(x, ffn[0], "gelu"), ffn[2]), block.normalize2)


check_block(FNetLayer(embedding_dim, dropout_rate), np_fnet)

"""
### Build, train, and evaluate the FNet model

Note that training the model with the current settings on a V100 GPUs
takes around 8 seconds per epoch.
"""

fnet_blocks = keras.Sequential(
    [FNetLayer(embedding_dim, dropout_rate) for _ in range(num_blocks)]
)
learning_rate = 0.001
fnet_classifier = build_classifier(fnet_blocks, positional_encoding=True)
# Added: the number Keras 3 gives for this model (Normalization's mean, variance and count
# included)
print("count_params", fnet_classifier.count_params())
assert fnet_classifier.count_params() == (598801 if FULL else 4657 if SHORT else 6897)
history = run_experiment(fnet_classifier)

"""
As shown in the [FNet](https://arxiv.org/abs/2105.03824) paper,
better results can be achieved by increasing the embedding dimensions,
increasing the number of FNet blocks, and training the model for longer.
You may also try to increase the size of the input images and use different patch sizes.
The FNet scales very efficiently to long inputs, runs much faster than attention-based
Transformer models, and produces competitive accuracy results.
"""

"""
## The gMLP model

The gMLP is a MLP architecture that features a Spatial Gating Unit (SGU).
The SGU enables cross-patch interactions across the spatial (channel) dimension, by:

1. Transforming the input spatially by applying linear projection across patches (along channels).
2. Applying element-wise multiplication of the input and its spatial transformation.
"""

"""
### Implement the gMLP module
"""


class gMLPLayer(layers.Layer):
    def __init__(
        self, num_patches, embedding_dim, dropout_rate, *args, **kwargs
    ):
        super().__init__(*args, **kwargs)

        self.channel_projection1 = keras.Sequential(
            [
                layers.Dense(units=embedding_dim * 2, activation="gelu"),
                layers.Dropout(rate=dropout_rate),
            ]
        )

        self.channel_projection2 = layers.Dense(units=embedding_dim)

        self.spatial_projection = layers.Dense(
            units=num_patches, bias_initializer="Ones"
        )

        self.normalize1 = layers.LayerNormalization(epsilon=1e-6)
        self.normalize2 = layers.LayerNormalization(epsilon=1e-6)

    def spatial_gating_unit(self, x):
        # Split x along the channel dimensions.
        # Tensors u and v will in the shape of [batch_size, num_patchs, embedding_dim].
        u, v = keras.ops.split(x, indices_or_sections=2, axis=2)
        # Apply layer normalization.
        v = self.normalize2(v)
        # Apply spatial projection.
        v_channels = keras.ops.transpose(v, axes=(0, 2, 1))
        v_projected = self.spatial_projection(v_channels)
        v_projected = keras.ops.transpose(v_projected, axes=(0, 2, 1))
        # Apply element-wise multiplication.
        return u * v_projected

    def call(self, inputs):
        # Apply layer normalization.
        x = self.normalize1(inputs)
        # Apply the first channel projection. x_projected shape: [batch_size, num_patches, embedding_dim * 2].
        x_projected = self.channel_projection1(x)
        # Apply the spatial gating unit. x_spatial shape: [batch_size, num_patches, embedding_dim].
        x_spatial = self.spatial_gating_unit(x_projected)
        # Apply the second channel projection. x_projected shape: [batch_size, num_patches, embedding_dim].
        x_projected = self.channel_projection2(x_spatial)
        # Add skip connection.
        return x + x_projected


def np_gmlp(block, x):  # Added
    x = np_layer_norm(x, block.normalize1)
    u, v = np.split(np_dense(x, block.channel_projection1.layers[0], "gelu"), 2, axis=2)
    v = np_layer_norm(v, block.normalize2).transpose(0, 2, 1)
    v = np_dense(v, block.spatial_projection).transpose(0, 2, 1)
    return x + np_dense(u * v, block.channel_projection2)


block = gMLPLayer(num_patches, embedding_dim, dropout_rate)
check_block(block, np_gmlp)
np.testing.assert_array_equal(np.asarray(block.spatial_projection.bias), np.ones(num_patches))

"""
### Build, train, and evaluate the gMLP model

Note that training the model with the current settings on a V100 GPUs
takes around 9 seconds per epoch.
"""

gmlp_blocks = keras.Sequential(
    [
        gMLPLayer(num_patches, embedding_dim, dropout_rate)
        for _ in range(num_blocks)
    ]
)
learning_rate = 0.003
gmlp_classifier = build_classifier(gmlp_blocks)
# Added: the number Keras 3 gives for this model (Normalization's mean, variance and count
# included)
print("count_params", gmlp_classifier.count_params())
assert gmlp_classifier.count_params() == (862225 if FULL else 5473 if SHORT else 9041)
history = run_experiment(gmlp_classifier)

"""
As shown in the [gMLP](https://arxiv.org/abs/2105.08050) paper,
better results can be achieved by increasing the embedding dimensions,
increasing the number of gMLP blocks, and training the model for longer.
You may also try to increase the size of the input images and use different patch sizes.
Note that, the paper used advanced regularization strategies, such as MixUp and CutMix,
as well as AutoAugment.
"""

# Added: what training reached
print("test accuracy (MLP-Mixer, FNet, gMLP):", test_accuracies)
# (CPU run) well above chance (10%): see the header for what Keras 3 and ember reach
mixer_accuracy, fnet_accuracy, gmlp_accuracy = test_accuracies
assert SHORT or (mixer_accuracy > 0.5 and fnet_accuracy > 0.3 and gmlp_accuracy > 0.5), test_accuracies
