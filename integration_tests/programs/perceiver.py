"""Port of keras-team/keras-io examples/vision/perceiver_image_classification.py ("Image
classification with Perceiver", the Keras 3 version that still calls tf.*): a
data_augmentation Sequential (Normalization adapted on the training images, Resizing,
RandomFlip, RandomZoom) called from inside the model; a Patches layer on
tf.image.extract_patches and tf.reshape; a PatchEncoder (Dense projection plus an Embedding
over tf.range positions); a cross-attention module built with the functional API on a dict
of two named Inputs (LayerNormalization, Dense query/key/value, Attention(use_scale=True,
dropout=0.1) with a batch-1 query against a batch of keys, Add skips, a gelu FFN
Sequential); a Transformer module (LayerNormalization, MultiHeadAttention, Add, FFN);
a Perceiver keras.Model subclass whose build() makes a trainable latent array (add_weight,
random_normal) and the modules, and whose call repeats cross-attention and Transformer
num_iterations times with shared weights (tf.expand_dims of the latent array), then
GlobalAveragePooling1D and a classification FFN; trained with Adam(weight_decay) on
SparseCategoricalCrossentropy(from_logits=True) with SparseCategoricalAccuracy("acc") and
SparseTopKCategoricalAccuracy(5, "top5-acc"), ReduceLROnPlateau and
EarlyStopping(restore_best_weights=True) on val_loss, fit(validation_split=0.1), evaluate.

Upstream: https://github.com/keras-team/keras/blob/bc4308ce1c0cbd322117ad90a5ce0ca710495913/examples/keras_io/tensorflow/vision/perceiver_image_classification.py
(the Keras 3 conversion that keras-io's examples/vision/perceiver_image_classification.py
carries now, the same code; the tf.keras version it replaced, with tfa.optimizers.LAMB and
`super(Perceiver, self)`, is https://github.com/keras-team/keras-io/blob/b8bb4c0d5068d64290003740c2ef9e703eefa751/examples/vision/perceiver_image_classification.py)
Changed: names only (keras -> ember.nn, bound to the name `keras` as the example spells it;
keras.layers -> nn.layers; tf.* -> em.*, bound to the name `tf`; tf.nn.gelu ->
em.nn_ops.gelu; tf.image.extract_patches -> em.image.extract_patches). CIFAR-100 cannot be
downloaded: keras.datasets.cifar100.load_data() is replaced by the real MNIST digits
(ember.data.datasets.mnist from $EMBER_DATA, else ../shared/datasets/mnist beside the
checkout as test_programs.py finds them; the program skips when they are absent) in
CIFAR's layout: uint8 images of (32, 32, 3) (each 28x28 digit centred on a 32x32 black
canvas and repeated to 3 channels) and int64 labels of shape (n, 1); so num_classes is 10
(CIFAR-100: 100) and the classifier's last layer has 10 units.
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream's sizes: image_size 64 (1,024 patches of
2x2), latent_dim 256, projection_dim 256, 8 heads, 4 Transformer blocks, batch 64, 50
epochs, on all 60,000/10,000 digits; hours of CPU): image_size 16 (64 patches of 2x2: the
data array), latent_dim 16, projection_dim 32, 2 heads, 2 Transformer blocks, batch 64,
3,000 training and 500 test digits, 8 epochs; EMBER_PROGRAMS_SHORT=1 (the strict-GPU run):
1 Transformer block, 256 and 64 digits, 1 epoch, no threshold on what training reached.
Patch size, num_iterations (2), dropouts, epsilons, learning rate, weight decay, the
augmentation and the callbacks are upstream's.
Added: seeds for numpy and ember; the data's shapes and dtypes; the adapted Normalization
holds numpy's per-channel mean and variance; in inference the augmentation is numpy's
normalisation and half-pixel bilinear resize (32 -> 16: the mean of each 2x2 block), and
deterministic; in training RandomFlip returns each image or its mirror, RandomZoom keeps
the shape and moves pixels; tf.nn.gelu is the exact (erf) gelu; the Patches of a batch are
numpy's slices of it (row-major patches, each flattened as (row, column, channel)); the
PatchEncoder adds row i of its Embedding to patch i's projection; the cross-attention
module (a batch-1 latent array against a batch of data arrays) and the Transformer module
equal a float64 numpy forward pass written from their weights (LayerNormalization with
epsilon 1e-6, Attention's softmax(scale * query key^T) value with the learnt scale
starting at 1 and Keras's [query, value, key] order,
MultiHeadAttention's per-head softmax(q k^T / sqrt(key_dim)) v, the gelu FFN, the skips);
the whole Perceiver in inference equals the numpy composition of those (augmentation,
patches, encoder, num_iterations x (cross-attention, Transformer), mean over the latents,
head); the latent array is random_normal's (std 0.05); count_params() is the number Keras 3
gives, computed by hand (31,147 here, checked against Keras 3.15; SHORT 20,491, FULL
9,674,507: the global data_augmentation is not the model's); one Adam step with
weight_decay makes Keras 3's update (v * (1 - lr * wd), then the Adam step); a callback
(EpochWeights, added to fit's callbacks) records the weights after every epoch; fit's
history has Keras's keys, one value per epoch, a rate that only keeps or falls by 0.2
(never in the first 4 epochs: patience 3), top-5 >= top-1; restore_best_weights leaves the
weights of the first epoch with the lowest val_loss (Keras 3 restores also when training
runs to the end); that epoch's val_loss, val_acc and val_top5-acc equal numpy's from
predict() on the last 10% of the training digits, and evaluate's accuracies equal
predict()'s on the test digits; (CPU run) the best val_loss is below 0.9 of the first
epoch's and test accuracy passes 30% (chance is 10%: an untrained or broken model stays
near it; seed 0 reaches 42.0% (its best val_loss 0.64 of the first), seeds 1-6
38.6-59.8%).
Checked outside this program against Keras 3.15.1 (torch backend; upstream's code with
keras.ops for its tf.* calls, on the same digits and sizes): given Keras's initial weights,
the Perceiver's inference logits equal Keras's to 1.3e-6 and its inference-mode gradients
equal Keras's; with shuffle off and no flip, zoom or dropout, fit's epoch losses agree to 4
digits for the first epochs; RandomZoom with fixed factors (each fill_mode), Resizing
(bilinear, nearest) and the adapted Normalization equal Keras's to 2e-7; the initializers'
statistics match (glorot_uniform, random_normal, Embedding's uniform). Keras's Attention
takes [query, value, key], so upstream's [query, key, value] attends with its `value`
tensor as keys and returns its `key` tensor's rows, in ember as in Keras (the numpy check
follows it). Keras 3.15 on torch does not augment in fit when the global
data_augmentation is first called by fit's build (its training=False sticks to the later
calls), so its accuracy on this setup (38-47% with 2,000 digits and 6 epochs) is that of a
model trained without flips and zooms; ember flips and zooms in fit and not in
evaluate/predict, as Keras documents and tf.keras does.
Found: no GAP: every upstream line runs as written (names changed only), and what it
computes was checked against numpy above. One silent difference seen around upstream's
lines, which does not change what they compute: a functional Model nested inside a
subclassed Model (upstream's cross-attention module, whose graph has two inputs) lists its
weights in the outer model's `weights`/`get_weights()` in the order its layers were called
(LayerNormalization(latent), Dense(query), LayerNormalization(data), Dense(key), ...),
where Keras lists them in the nested model's own order (the two LayerNormalizations, then
query, key, value), as the same module's own `weights` does in ember; so
set_weights(keras_model.get_weights()) fails here on a shape, and silently permutes
arrays of equal shapes: with inputs a, b and Dense chains pa -> qa on a, pb -> qb on b, the
functional model lists pa, pb, qa, qb (as Keras), a subclassed model holding it pa, qa, pb,
qb (Keras: pa, pb, qa, qb). The program's checks read weights layer by layer, and
EarlyStopping's get_weights/set_weights round trip is unaffected.
Skips only when the MNIST files are absent ($EMBER_DATA, else ../shared/datasets/mnist
beside the checkout, else ~/.cache/ember/datasets/mnist).
"""

import math
import os
import pathlib
import unittest

import numpy as np

import ember.core as em
from ember import data, nn, tape
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

(x_train, y_train), (x_test, y_test) = load_data(60000 if FULL else 256 if SHORT else 3000,
                                                 10000 if FULL else 64 if SHORT else 500)

print(f"x_train shape: {x_train.shape} - y_train shape: {y_train.shape}")
print(f"x_test shape: {x_test.shape} - y_test shape: {y_test.shape}")
assert x_train.shape[1:] == input_shape and x_train.dtype == np.uint8, x_train.shape
assert y_train.shape == (len(x_train), 1) and y_test.shape == (len(x_test), 1)
assert set(np.unique(y_train)) <= set(range(num_classes))

"""
## Configure the hyperparameters
"""

learning_rate = 0.001
weight_decay = 0.0001
batch_size = 64
num_epochs = 50 if FULL else 1 if SHORT else 8
dropout_rate = 0.2
image_size = 64 if FULL else 16  # We'll resize input images to this size.
patch_size = 2  # Size of the patches to be extract from the input images.
num_patches = (image_size // patch_size) ** 2  # Size of the data array.
latent_dim = 256 if FULL else 16  # Size of the latent array.
projection_dim = (
    256 if FULL else 32  # Embedding size of each element in the data and latent arrays.
)
num_heads = 8 if FULL else 2  # Number of Transformer heads.
ffn_units = [
    projection_dim,
    projection_dim,
]  # Size of the Transformer Feedforward network.
num_transformer_blocks = 4 if FULL else 1 if SHORT else 2
num_iterations = (
    2  # Repetitions of the cross-attention and Transformer modules.
)
classifier_units = [
    projection_dim,
    num_classes,
]  # Size of the Feedforward network of the final classifier.

print(f"Image size: {image_size} X {image_size} = {image_size ** 2}")
print(f"Patch size: {patch_size} X {patch_size} = {patch_size ** 2} ")
print(f"Patches per image: {num_patches}")
print(f"Elements per patch (3 channels): {(patch_size ** 2) * 3}")
print(f"Latent array shape: {latent_dim} X {projection_dim}")
print(f"Data array shape: {num_patches} X {projection_dim}")

"""
Note that, in order to use each pixel as an individual input in the data array,
set `patch_size` to 1.
"""

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


# Added: numpy references for the checks below (float64)
def np_resize_bilinear(images, size):
    """Half-pixel-centred bilinear resize without antialiasing (tf.image.resize's, Keras's
    Resizing default): source coordinate (i + 0.5) * in / out - 0.5, clamped to the image."""
    def weights(n_in, n_out):
        src = np.clip((np.arange(n_out) + 0.5) * n_in / n_out - 0.5, 0, n_in - 1)
        lo = np.floor(src).astype(int)
        hi = np.minimum(lo + 1, n_in - 1)
        m = np.zeros((n_out, n_in))
        m[np.arange(n_out), lo] += 1 - (src - lo)
        m[np.arange(n_out), hi] += src - lo
        return m
    rows, cols = weights(images.shape[1], size), weights(images.shape[2], size)
    return np.einsum("ai,nijc,bj->nabc", rows, images, cols)


def np_gelu(x):  # tf.nn.gelu(x) (approximate=False): the exact erf form
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def np_dense(x, dense, activation=None):
    kernel, bias = (np.asarray(w, dtype=np.float64) for w in dense.get_weights())
    y = x @ kernel + bias
    return np_gelu(y) if activation == "gelu" else y


def np_layer_norm(x, norm):
    gamma, beta = (np.asarray(w, dtype=np.float64) for w in norm.get_weights())
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(x.var(-1, keepdims=True) + 1e-6) * gamma + beta


def np_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return np.exp(z) / np.exp(z).sum(-1, keepdims=True)


def np_ffn(x, ffn):  # create_ffn's Sequential in inference: gelu Dense layers, a linear one
    for layer in ffn.layers[:-2]:
        x = np_dense(x, layer, "gelu")
    return np_dense(x, ffn.layers[-2])


# Added: the adapted statistics are the per-channel mean and (biased) variance of the
# training images; in inference the augmentation is normalisation and the resize only
norm = data_augmentation.layers[0]
mean, var = x_train.reshape(-1, 3).mean(0), x_train.reshape(-1, 3).var(0)
np.testing.assert_allclose(np.ravel(norm.mean), mean, rtol=1e-5)
np.testing.assert_allclose(np.ravel(norm.variance), var, rtol=1e-4)


def np_augment_inference(images):
    return np_resize_bilinear((images.astype(np.float64) - mean) / np.sqrt(var), image_size)


sample = x_train[:8]
augmented = np.asarray(data_augmentation(sample, training=False))
assert augmented.shape == (8, image_size, image_size, 3) and augmented.dtype == np.float32
np.testing.assert_allclose(augmented, np_augment_inference(sample), rtol=1e-4, atol=1e-4)
np.testing.assert_array_equal(np.asarray(data_augmentation(sample, training=False)), augmented)
if not FULL:  # 32 -> 16: each output pixel is the mean of a 2x2 block
    block_means = ((sample - mean) / np.sqrt(var)).reshape(8, 16, 2, 16, 2, 3).mean((2, 4))
    np.testing.assert_allclose(augmented, block_means, rtol=1e-4, atol=1e-4)
# in training, RandomFlip("horizontal") gives each image or its mirror (left-right)
flip = data_augmentation.layers[2]
flipped = np.asarray(flip(augmented, training=True))
same = np.all(flipped == augmented, axis=(1, 2, 3))
mirrored = np.all(flipped == augmented[:, :, ::-1], axis=(1, 2, 3))
assert np.all(same | mirrored), (same, mirrored)
assert not np.array_equal(np.asarray(flip(np.repeat(augmented, 8, axis=0), training=True)),
                          np.repeat(augmented, 8, axis=0))  # some of 64 are mirrored
zoom = data_augmentation.layers[3]
np.testing.assert_array_equal(np.asarray(zoom(augmented, training=False)), augmented)
zoomed = np.asarray(zoom(augmented, training=True))
assert zoomed.shape == augmented.shape and not np.allclose(zoomed, augmented)

"""
## Implement Feedforward network (FFN)
"""


def create_ffn(hidden_units, dropout_rate):
    ffn_layers = []
    for units in hidden_units[:-1]:
        ffn_layers.append(layers.Dense(units, activation=tf.nn_ops.gelu))

    ffn_layers.append(layers.Dense(units=hidden_units[-1]))
    ffn_layers.append(layers.Dropout(dropout_rate))

    ffn = keras.Sequential(ffn_layers)
    return ffn


# Added: tf.nn.gelu is the exact (erf) gelu
probe = np.linspace(-4, 4, 33).astype("float32")
np.testing.assert_allclose(np.asarray(tf.nn_ops.gelu(probe)), np_gelu(probe.astype(np.float64)),
                           rtol=1e-5, atol=1e-6)

"""
## Implement patch creation as a layer
"""


class Patches(layers.Layer):
    def __init__(self, patch_size):
        super().__init__()
        self.patch_size = patch_size

    def call(self, images):
        batch_size = tf.shape(images)[0]
        patches = tf.image.extract_patches(
            images=images,
            sizes=[1, self.patch_size, self.patch_size, 1],
            strides=[1, self.patch_size, self.patch_size, 1],
            rates=[1, 1, 1, 1],
            padding="VALID",
        )
        patch_dims = patches.shape[-1]
        patches = tf.reshape(patches, [batch_size, -1, patch_dims])
        return patches


def np_patches(images, size):  # Added: row-major patches, each (row, column, channel)
    n, h, w, c = images.shape
    p = images.reshape(n, h // size, size, w // size, size, c).transpose(0, 1, 3, 2, 4, 5)
    return p.reshape(n, (h // size) * (w // size), size * size * c)


# Added: the patches of a batch are numpy's slices of it
patches = np.asarray(Patches(patch_size)(augmented))
assert patches.shape == (8, num_patches, patch_size * patch_size * 3), patches.shape
np.testing.assert_array_equal(patches, np_patches(augmented, patch_size))
np.testing.assert_array_equal(patches[:, 1], augmented[:, :patch_size, patch_size:2 * patch_size]
                              .reshape(8, -1))

"""
## Implement the patch encoding layer

The `PatchEncoder` layer will linearly transform a patch by projecting it into
a vector of size `latent_dim`. In addition, it adds a learnable position embedding
to the projected vector.

Note that the orginal Perceiver paper uses the Fourier feature positional encodings.
"""


class PatchEncoder(layers.Layer):
    def __init__(self, num_patches, projection_dim):
        super().__init__()
        self.num_patches = num_patches
        self.projection = layers.Dense(units=projection_dim)
        self.position_embedding = layers.Embedding(
            input_dim=num_patches, output_dim=projection_dim
        )

    def call(self, patches):
        positions = tf.range(start=0, limit=self.num_patches, delta=1)
        encoded = self.projection(patches) + self.position_embedding(positions)
        return encoded


def np_encode(patches, encoder):  # Added
    table = np.asarray(encoder.position_embedding.get_weights()[0], dtype=np.float64)
    return np_dense(patches, encoder.projection) + table


# Added: the projection of patch i plus row i of the position table
encoder = PatchEncoder(num_patches, projection_dim)
encoded = np.asarray(encoder(patches))
assert encoded.shape == (8, num_patches, projection_dim) and encoded.dtype == np.float32
np.testing.assert_allclose(encoded, np_encode(patches.astype(np.float64), encoder),
                           rtol=1e-4, atol=1e-5)
table = np.asarray(encoder.position_embedding.get_weights()[0])
assert table.shape == (num_patches, projection_dim) and np.abs(table).max() <= 0.05

"""
## Build the Perceiver model

The Perceiver consists of two modules: a cross-attention
module and a standard Transformer with self-attention.
"""

"""
### Cross-attention module

The cross-attention expects a `(latent_dim, projection_dim)` latent array,
and the `(data_dim,  projection_dim)` data array as inputs,
to produce a `(latent_dim, projection_dim)` latent array as an output.
To apply cross-attention, the `query` vectors are generated from the latent array,
while the `key` and `value` vectors are generated from the encoded image.

Note that the data array in this example is the image,
where the `data_dim` is set to the `num_patches`.
"""


def create_cross_attention_module(
    latent_dim, data_dim, projection_dim, ffn_units, dropout_rate
):
    inputs = {
        # Recieve the latent array as an input of shape [1, latent_dim, projection_dim].
        "latent_array": layers.Input(
            shape=(latent_dim, projection_dim), name="latent_array"
        ),
        # Recieve the data_array (encoded image) as an input of shape [batch_size, data_dim, projection_dim].
        "data_array": layers.Input(
            shape=(data_dim, projection_dim), name="data_array"
        ),
    }

    # Apply layer norm to the inputs
    latent_array = layers.LayerNormalization(epsilon=1e-6)(
        inputs["latent_array"]
    )
    data_array = layers.LayerNormalization(epsilon=1e-6)(inputs["data_array"])

    # Create query tensor: [1, latent_dim, projection_dim].
    query = layers.Dense(units=projection_dim)(latent_array)
    # Create key tensor: [batch_size, data_dim, projection_dim].
    key = layers.Dense(units=projection_dim)(data_array)
    # Create value tensor: [batch_size, data_dim, projection_dim].
    value = layers.Dense(units=projection_dim)(data_array)

    # Generate cross-attention outputs: [batch_size, latent_dim, projection_dim].
    attention_output = layers.Attention(use_scale=True, dropout=0.1)(
        [query, key, value], return_attention_scores=False
    )
    # Skip connection 1.
    attention_output = layers.Add()([attention_output, latent_array])

    # Apply layer norm.
    attention_output = layers.LayerNormalization(epsilon=1e-6)(attention_output)
    # Apply Feedforward network.
    ffn = create_ffn(hidden_units=ffn_units, dropout_rate=dropout_rate)
    outputs = ffn(attention_output)
    # Skip connection 2.
    outputs = layers.Add()([outputs, attention_output])

    # Create the Keras model.
    model = keras.Model(inputs=inputs, outputs=outputs)
    return model


def np_cross_attention(module, latent, data_array):  # Added
    """The module in inference, from its layers: Keras lists the two input
    LayerNormalizations, then the query, key and value Dense layers, in that order."""
    norms = [lyr for lyr in module.layers if isinstance(lyr, layers.LayerNormalization)]
    query_d, key_d, value_d = [lyr for lyr in module.layers if isinstance(lyr, layers.Dense)]
    (attention,) = [lyr for lyr in module.layers if isinstance(lyr, layers.Attention)]
    (ffn,) = [lyr for lyr in module.layers if isinstance(lyr, keras.Sequential)]
    lat, dat = np_layer_norm(latent, norms[0]), np_layer_norm(data_array, norms[1])
    q, k, v = np_dense(lat, query_d), np_dense(dat, key_d), np_dense(dat, value_d)
    scale = float(np.asarray(attention.get_weights()[0]))
    # Keras's Attention takes [query, value, key]: upstream's [query, key, value] makes the
    # tensor named `value` the keys and the one named `key` the values
    att = np_softmax(scale * q @ v.transpose(0, 2, 1)) @ k + lat  # q: batch 1, broadcast
    att = np_layer_norm(att, norms[2])
    return np_ffn(att, ffn) + att


# Added: a batch-1 latent array against a batch of 8 data arrays gives 8 latent arrays,
# numpy's; Attention's scale starts at 1; dropout acts in training only
module = create_cross_attention_module(latent_dim, num_patches, projection_dim, ffn_units,
                                       dropout_rate)
assert [lyr.name for lyr in module.layers][:2] == ["latent_array", "data_array"]
latent_probe = np.random.normal(size=(1, latent_dim, projection_dim)).astype("float32")
cross = np.asarray(module({"latent_array": latent_probe, "data_array": encoded},
                          training=False))
assert cross.shape == (8, latent_dim, projection_dim), cross.shape
(attention_layer,) = [lyr for lyr in module.layers if isinstance(lyr, layers.Attention)]
assert float(np.asarray(attention_layer.get_weights()[0])) == 1.0
np.testing.assert_allclose(cross, np_cross_attention(module, latent_probe.astype(np.float64),
                                                     encoded.astype(np.float64)),
                           rtol=1e-4, atol=1e-4)
in_training = np.asarray(module({"latent_array": latent_probe, "data_array": encoded},
                                training=True))
assert not np.allclose(in_training, cross)

"""
### Transformer module

The Transformer expects the output latent vector from the cross-attention module
as an input, applies multi-head self-attention to its `latent_dim` elements,
followed by feedforward network, to produce another `(latent_dim, projection_dim)` latent array.
"""


def create_transformer_module(
    latent_dim,
    projection_dim,
    num_heads,
    num_transformer_blocks,
    ffn_units,
    dropout_rate,
):
    # input_shape: [1, latent_dim, projection_dim]
    inputs = layers.Input(shape=(latent_dim, projection_dim))

    x0 = inputs
    # Create multiple layers of the Transformer block.
    for _ in range(num_transformer_blocks):
        # Apply layer normalization 1.
        x1 = layers.LayerNormalization(epsilon=1e-6)(x0)
        # Create a multi-head self-attention layer.
        attention_output = layers.MultiHeadAttention(
            num_heads=num_heads, key_dim=projection_dim, dropout=0.1
        )(x1, x1)
        # Skip connection 1.
        x2 = layers.Add()([attention_output, x0])
        # Apply layer normalization 2.
        x3 = layers.LayerNormalization(epsilon=1e-6)(x2)
        # Apply Feedforward network.
        ffn = create_ffn(hidden_units=ffn_units, dropout_rate=dropout_rate)
        x3 = ffn(x3)
        # Skip connection 2.
        x0 = layers.Add()([x3, x2])

    # Create the Keras model.
    model = keras.Model(inputs=inputs, outputs=x0)
    return model


def np_mha(x, mha):  # Added: Keras's kernels are (dim, heads, key_dim) and (heads, key_dim, dim)
    wq, bq, wk, bk, wv, bv, wo, bo = (np.asarray(w, dtype=np.float64) for w in mha.get_weights())
    d, h = x.shape[-1], num_heads
    q = np.einsum("btd,dhk->bhtk", x, wq.reshape(d, h, -1)) + bq.reshape(h, 1, -1)
    k = np.einsum("btd,dhk->bhtk", x, wk.reshape(d, h, -1)) + bk.reshape(h, 1, -1)
    v = np.einsum("btd,dhk->bhtk", x, wv.reshape(d, h, -1)) + bv.reshape(h, 1, -1)
    ctx = np_softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(q.shape[-1])) @ v
    return np.einsum("bhtk,hkd->btd", ctx, wo.reshape(h, -1, d)) + bo


def np_transformer(module, x):  # Added: the blocks in inference, from their layers
    norms = [lyr for lyr in module.layers if isinstance(lyr, layers.LayerNormalization)]
    mhas = [lyr for lyr in module.layers if isinstance(lyr, layers.MultiHeadAttention)]
    ffns = [lyr for lyr in module.layers if isinstance(lyr, keras.Sequential)]
    assert len(mhas) == len(ffns) == num_transformer_blocks == len(norms) // 2
    for i in range(num_transformer_blocks):
        x2 = np_mha(np_layer_norm(x, norms[2 * i]), mhas[i]) + x
        x = np_ffn(np_layer_norm(x2, norms[2 * i + 1]), ffns[i]) + x2
    return x


# Added: the module equals numpy's blocks; its MultiHeadAttention kernels hold Keras's
# number of weights
module = create_transformer_module(latent_dim, projection_dim, num_heads,
                                   num_transformer_blocks, ffn_units, dropout_rate)
out = np.asarray(module(cross, training=False))
assert out.shape == cross.shape, out.shape
np.testing.assert_allclose(out, np_transformer(module, cross.astype(np.float64)),
                           rtol=1e-4, atol=1e-4)
mha = [lyr for lyr in module.layers if isinstance(lyr, layers.MultiHeadAttention)][0]
assert [int(np.prod(np.shape(w))) for w in mha.get_weights()] == [
    projection_dim * num_heads * projection_dim, num_heads * projection_dim] * 3 + [
    num_heads * projection_dim * projection_dim, projection_dim]

"""
### Perceiver model

The Perceiver model repeats the cross-attention and Transformer modules
`num_iterations` times—with shared weights and skip connections—to allow
the latent array to iteratively extract information from the input image as it is needed.
"""


class Perceiver(keras.Model):
    def __init__(
        self,
        patch_size,
        data_dim,
        latent_dim,
        projection_dim,
        num_heads,
        num_transformer_blocks,
        ffn_units,
        dropout_rate,
        num_iterations,
        classifier_units,
    ):
        super().__init__()

        self.latent_dim = latent_dim
        self.data_dim = data_dim
        self.patch_size = patch_size
        self.projection_dim = projection_dim
        self.num_heads = num_heads
        self.num_transformer_blocks = num_transformer_blocks
        self.ffn_units = ffn_units
        self.dropout_rate = dropout_rate
        self.num_iterations = num_iterations
        self.classifier_units = classifier_units

    def build(self, input_shape):
        # Create latent array.
        self.latent_array = self.add_weight(
            shape=(self.latent_dim, self.projection_dim),
            initializer="random_normal",
            trainable=True,
        )

        # Create patching module.
        self.patcher = Patches(self.patch_size)

        # Create patch encoder.
        self.patch_encoder = PatchEncoder(self.data_dim, self.projection_dim)

        # Create cross-attenion module.
        self.cross_attention = create_cross_attention_module(
            self.latent_dim,
            self.data_dim,
            self.projection_dim,
            self.ffn_units,
            self.dropout_rate,
        )

        # Create Transformer module.
        self.transformer = create_transformer_module(
            self.latent_dim,
            self.projection_dim,
            self.num_heads,
            self.num_transformer_blocks,
            self.ffn_units,
            self.dropout_rate,
        )

        # Create global average pooling layer.
        self.global_average_pooling = layers.GlobalAveragePooling1D()

        # Create a classification head.
        self.classification_head = create_ffn(
            hidden_units=self.classifier_units, dropout_rate=self.dropout_rate
        )

        super().build(input_shape)

    def call(self, inputs):
        # Augment data.
        augmented = data_augmentation(inputs)
        # Create patches.
        patches = self.patcher(augmented)
        # Encode patches.
        encoded_patches = self.patch_encoder(patches)
        # Prepare cross-attention inputs.
        cross_attention_inputs = {
            "latent_array": tf.expand_dims(self.latent_array, 0),
            "data_array": encoded_patches,
        }
        # Apply the cross-attention and the Transformer modules iteratively.
        for _ in range(self.num_iterations):
            # Apply cross-attention from the latent array to the data array.
            latent_array = self.cross_attention(cross_attention_inputs)
            # Apply self-attention Transformer to the latent array.
            latent_array = self.transformer(latent_array)
            # Set the latent array of the next iteration.
            cross_attention_inputs["latent_array"] = latent_array

        # Apply global average pooling to generate a [batch_size, projection_dim] repesentation tensor.
        representation = self.global_average_pooling(latent_array)
        # Generate logits.
        logits = self.classification_head(representation)
        return logits


def np_perceiver(model, images):  # Added: the model in inference, composed from numpy's parts
    encoded = np_encode(np_patches(np_augment_inference(images), patch_size),
                        model.patch_encoder)
    latent = np.asarray(model.latent_array, dtype=np.float64)[None]
    for _ in range(num_iterations):
        latent = np_transformer(model.transformer,
                                np_cross_attention(model.cross_attention, latent, encoded))
    return np_ffn(latent.mean(1), model.classification_head)


def expected_count_params():  # Added: Keras 3's count, by hand
    d, dense = projection_dim, lambda n_in, n_out: n_in * n_out + n_out
    ffn = sum(dense(a, b) for a, b in zip([d] + ffn_units[:-1], ffn_units))
    cross = 2 * 2 * d + 3 * dense(d, d) + 1 + 2 * d + ffn  # 1: Attention's scale
    mha = 3 * dense(d, num_heads * d) + dense(num_heads * d, d)
    block = 2 * d + mha + 2 * d + ffn
    head = sum(dense(a, b) for a, b in zip([d] + classifier_units[:-1], classifier_units))
    encoder = dense(patch_size * patch_size * 3, d) + num_patches * d
    return latent_dim * d + encoder + cross + num_transformer_blocks * block + head


"""
## Compile, train, and evaluate the mode
"""


class EpochWeights(keras.callbacks.Callback):
    """Added: the weights at the end of every epoch, to check what EarlyStopping restores."""

    def on_train_begin(self, logs=None):
        self.weights = []

    def on_epoch_end(self, epoch, logs=None):
        self.weights.append([np.array(w) for w in self.model.get_weights()])


def run_experiment(model):
    # Create Adam optimizer with weight decay.
    optimizer = keras.optimizers.Adam(
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
        monitor="val_loss", factor=0.2, patience=3
    )

    # Create an early stopping callback.
    early_stopping = keras.callbacks.EarlyStopping(
        monitor="val_loss", patience=15, restore_best_weights=True
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
    # ReduceLROnPlateau: the rate starts at learning_rate, then each epoch keeps it or
    # multiplies it by 0.2; not before 4 epochs (patience 3)
    rates = np.array(h["learning_rate"])
    steps = rates[1:] / rates[:-1]
    assert np.all(np.isclose(steps, 1.0) | np.isclose(steps, 0.2)), rates
    np.testing.assert_allclose(rates[:4], learning_rate, rtol=1e-6)
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
            (x_train[-n_val:], y_train, [h[k][best] for k in ("val_loss", "val_acc",
                                                             "val_top5-acc")]),
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
            top5, np.mean(np.any(np.argsort(-logits, -1)[:, :5] == labels[:, None], -1)),
            atol=1e-6)
    assert top_5_accuracy >= accuracy, (top_5_accuracy, accuracy)
    assert SHORT or h["val_loss"][best] < 0.9 * h["val_loss"][0], h["val_loss"]  # it learnt
    assert SHORT or accuracy > 0.3, accuracy


"""
Note that training the perceiver model with the current settings on a V100 GPUs takes
around 200 seconds.
"""

perceiver_classifier = Perceiver(
    patch_size,
    num_patches,
    latent_dim,
    projection_dim,
    num_heads,
    num_transformer_blocks,
    ffn_units,
    dropout_rate,
    num_iterations,
    classifier_units,
)

# Added: built by a first call (inference), the model is numpy's composition of its parts;
# its latent array is random_normal's (mean 0, std 0.05); the count is Keras's
logits = np.asarray(perceiver_classifier(x_train[:4], training=False))
assert logits.shape == (4, num_classes) and logits.dtype == np.float32, logits.shape
np.testing.assert_allclose(logits, np_perceiver(perceiver_classifier, x_train[:4]),
                           rtol=1e-3, atol=1e-4)
np.testing.assert_array_equal(np.asarray(perceiver_classifier(x_train[:4], training=False)),
                              logits)
latent_init = np.asarray(perceiver_classifier.latent_array)
assert latent_init.shape == (latent_dim, projection_dim)
assert abs(latent_init.std() - 0.05) < 0.3 * 0.05 and abs(latent_init.mean()) < 0.02
print("count_params", perceiver_classifier.count_params())
assert perceiver_classifier.count_params() == expected_count_params()
assert expected_count_params() == (9674507 if FULL else 20491 if SHORT else 31147)

# Added: one step of Adam with weight_decay on one variable is Keras 3's: the variable
# decays by learning_rate * weight_decay first, then takes the Adam step (epsilon 1e-7)
v_check = em.Variable(np.array([2.0, -1.0], np.float32))
opt_check = keras.optimizers.Adam(learning_rate=learning_rate, weight_decay=weight_decay)
with tape.GradientTape() as t:
    loss_check = em.reduce_sum(v_check * em.constant(np.array([0.5, 0.25], np.float32)))
opt_check.apply_gradients(zip(t.gradient(loss_check, [v_check]), [v_check]))
g = np.array([0.5, 0.25])
m_hat, v_hat = g, g * g  # the first step's bias-corrected moments
np.testing.assert_allclose(
    v_check.numpy(),
    np.array([2.0, -1.0]) * (1 - learning_rate * weight_decay)
    - learning_rate * m_hat / (np.sqrt(v_hat) + 1e-7 / math.sqrt(1 - 0.999)), rtol=1e-6)

history = run_experiment(perceiver_classifier)

"""
After 40 epochs, the Perceiver model achieves around 53% accuracy and 81% top-5 accuracy on the test data.

As mentioned in the ablations of the [Perceiver](https://arxiv.org/abs/2103.03206) paper,
you can obtain better results by increasing the latent array size,
increasing the (projection) dimensions of the latent array and data array elements,
increasing the number of blocks in the Transformer module, and increasing the number of iterations of applying
the cross-attention and the latent Transformer modules. You may also try to increase the size the input images
and use different patch sizes.

The Perceiver benefits from inceasing the model size. However, larger models needs bigger accelerators
to fit in and train efficiently. This is why in the Perceiver paper they used 32 TPU cores to run the experiments.
"""  # noqa: E501
