"""Port of keras-team/keras-io examples/vision/token_learner.py ("Learning to tokenize in
Vision Transformers", the Keras 3 version): a data_augmentation Sequential (Rescaling,
Resizing, RandomCrop, RandomFlip), a mini ViT built with the functional API (a Conv2D patch
projection, Reshape, a PatchEncoder layer adding an Embedding of ops.arange positions,
pre-norm Transformer blocks of LayerNormalization, MultiHeadAttention, Add and an ops.gelu
MLP) with a TokenLearner in the middle (LayerNormalization of the (B, h, h, C) map, a
Sequential of four bias-free 3x3 Conv2D (ops.gelu, then sigmoid) + Reshape + Permute giving
the attention maps, ops.expand_dims times the Reshape'd inputs, ops.mean over the
positions), GlobalAvgPool1D and a softmax Dense, trained with AdamW on
"sparse_categorical_crossentropy" with accuracy and SparseTopKCategoricalAccuracy(5) over
tf.data pipelines, a ModelCheckpoint(save_best_only, save_weights_only) on val_accuracy,
load_weights and evaluate.

Upstream: https://github.com/keras-team/keras-io/blob/0c1c02c0ad7c7bb683be3d2fb234194abf901a48/examples/vision/token_learner.py
Changed: names only (keras -> ember.nn, bound to the name `keras` as the example spells it;
keras.layers -> nn.layers, keras.ops -> nn.ops; `from tensorflow import data as tf_data`
-> `from ember import data as tf_data`). matplotlib and datetime are imported upstream and
never used; they are dropped. CIFAR-10 cannot be downloaded: keras.datasets.cifar10
.load_data() is replaced by images this program generates in CIFAR-10's layout: uint8
(n, 32, 32, 3) images and uint8 (n, 1) labels in 0..9. Each class is a template of 4x4
blocks (8x8 pixels each) of random colours, mirrored left-right (RandomFlip("horizontal")
keeps its class); each image is its class's template moved by up to 2 pixels each way
plus Gaussian noise (sd 48), clipped and rounded to uint8. The checkpoint goes into a
temporary directory (upstream: /tmp/checkpoint.weights.h5).
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream's sizes: 50,000 (40,000 + 10,000
validation) / 10,000 images, batch 256, 20 epochs, PATCH_SIZE 6 (64 patches),
PROJECTION_DIM 128, 4 heads, 4 layers): 1,250 images (1,000 + 250 validation; the split
at upstream's 40,000 becomes 1,000) and 250 test images, batch 50, 6 epochs, PATCH_SIZE 12
(a 4x4 grid: 16 patches), PROJECTION_DIM 32, 2 heads, 3 layers (the TokenLearner still
after block NUM_LAYERS // 2, with a block after it, as upstream's); EMBER_PROGRAMS_SHORT=1
(the strict-GPU run): 2 layers, 200/100 images, 1 epoch, no threshold on what training
reached. IMAGE_SIZE, the augmentation, NUM_TOKENS, the epsilon, dropouts, learning rate
and weight decay are upstream's.
Added: seeds for numpy and ember; the data's shapes, dtypes and split; one epoch of the
shuffled training pipeline holds each training example once, in batches of BATCH_SIZE,
in another order the next epoch;
data_augmentation at inference is Rescaling then a bilinear (half-pixel, no antialias)
resize to 52x52, compared with torch's F.interpolate, RandomCrop and RandomFlip passing it
through (current Keras 3: its RandomCrop.transform_images returns the images unchanged
when training is False), and in training each image is a 48x48 window of that, the same
offset for the whole batch, some mirrored left-right; the PatchEncoder adds row i of its
table to token i, its table initialised in [-0.05, 0.05]; ops.gelu is the tanh
approximation (Keras 3's ops.gelu default approximate=True); a TokenLearner model equals a
float64 numpy TokenLearner written from its weights (layer norm, four zero-padded 3x3
convolutions, tanh gelu and sigmoid, the maps times the inputs, mean over positions) and
its kernels are glorot_uniform; the ViT's symbolic shapes (a 4x4 grid of
PROJECTION_DIM, then (NUM_TOKENS, PROJECTION_DIM) after the TokenLearner); count_params()
is Keras's, computed by hand; the softmax rows sum to 1; one attention layer of the
trained model equals numpy's multi-head attention from its weights; the weights
load_weights restores are those of the best val_accuracy epoch; evaluate's loss equals
numpy's cross-entropy of predict() (probabilities clipped to [1e-7, 1 - 1e-7]) and its
accuracies numpy's top-1 and top-5; (CPU run) the training loss falls below 0.8 of its
first epoch's and the test accuracy passes 50% (chance: 10%; an untrained or broken model
stays near it; this seed reaches 100% (validation accuracy 14% after the first epoch,
99.6% after the last), seeds 1-5 84-100%).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error): 1. (silent) the symbolic shape of
`augmented = data_augmentation(inputs)` is (None, 52, 52, 3): ember finds a layer's
symbolic output by running it on zeros with training=False, and RandomCrop at inference
returns its input; Keras 3 takes RandomCrop.compute_output_shape, (None, 48, 48, 3) (and
ember's RandomCrop(48, 48).compute_output_shape((None, 52, 52, 3)) is (None, 52, 52, 3)
too). The patch grid is the same here (52 // 12 == 48 // 12, and 52 // 6 == 48 // 6 at
upstream's size), so upstream's line is kept; with PATCH_SIZE 4 ember's model would
have 169 patches against NUM_PATCHES = 144 when it is built.
Also seen, off upstream's lines: MultiHeadAttention's kernels are flattened, (d, heads *
key_dim) for query, key and value and (heads * key_dim, d) for the output, where Keras's
EinsumDense kernels are (d, heads, key_dim) and (heads, key_dim, d) (biases (heads *
key_dim,) for (heads, key_dim)); same count and the same numbers in heads-major order.
Checked and the same as Keras 3: ops.gelu is the tanh gelu; RandomCrop/RandomFlip act
when the model is called without training= (their call defaults to training=True), not
in predict/evaluate; RandomCrop at inference returns its input (Keras 3.0's TFDataLayer
version resized it to 48x48, as tf.keras's smart_resize did); one crop offset per batch,
flips per image; Resizing is half-pixel bilinear without antialias; ops.arange is int32;
Embedding's uniform(-0.05, 0.05) and Conv2D's glorot_uniform; evaluate's loss weights a
partial batch by its size; ModelCheckpoint keeps the first best val_accuracy epoch.
"""

import math
import os
import tempfile

import numpy as np
import torch

import ember.core as em
from ember import data as tf_data
from ember import nn
from ember.nn import layers, ops

keras = nn  # the example's `keras.`
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
SEED = 0
np.random.seed(SEED)
em.random.set_seed(SEED)
workdir = tempfile.TemporaryDirectory()

"""
## Hyperparameters
"""

# DATA
BATCH_SIZE = 256 if FULL else 50
AUTO = tf_data.AUTOTUNE
INPUT_SHAPE = (32, 32, 3)
NUM_CLASSES = 10

# OPTIMIZER
LEARNING_RATE = 1e-3
WEIGHT_DECAY = 1e-4

# TRAINING
EPOCHS = 20 if FULL else 1 if SHORT else 6

# AUGMENTATION
IMAGE_SIZE = 48  # We will resize input images to this size.
PATCH_SIZE = 6 if FULL else 12  # Size of the patches to be extracted from the input images.
NUM_PATCHES = (IMAGE_SIZE // PATCH_SIZE) ** 2

# ViT ARCHITECTURE
LAYER_NORM_EPS = 1e-6
PROJECTION_DIM = 128 if FULL else 32
NUM_HEADS = 4 if FULL else 2
NUM_LAYERS = 4 if FULL else 2 if SHORT else 3
MLP_UNITS = [
    PROJECTION_DIM * 2,
    PROJECTION_DIM,
]

# TOKENLEARNER
NUM_TOKENS = 4

N_TRAIN, N_SPLIT, N_TEST = ((50000, 40000, 10000) if FULL else (200, 150, 100) if SHORT
                            else (1250, 1000, 250))


def load_data(n_train, n_test):
    """(added) CIFAR-10's layout: uint8 (n, 32, 32, 3) images, uint8 (n, 1) labels; each
    class a left-right mirrored template of 4x4 colour blocks, each image one moved by up
    to 2 pixels plus noise."""
    rng = np.random.RandomState(SEED)
    half = rng.uniform(0, 255, (NUM_CLASSES, 4, 2, 3))
    templates = np.concatenate([half, half[:, :, ::-1]], axis=2)  # mirrored left-right
    templates = templates.repeat(8, axis=1).repeat(8, axis=2)  # (classes, 32, 32, 3)
    padded = np.pad(templates, ((0, 0), (2, 2), (2, 2), (0, 0)), mode="edge")

    def split(n):
        y = rng.randint(0, NUM_CLASSES, n)
        dy, dx = rng.randint(0, 5, n), rng.randint(0, 5, n)
        x = np.stack([padded[c, a:a + 32, b:b + 32] for c, a, b in zip(y, dy, dx)])
        x = x + rng.normal(0, 48, x.shape)
        return np.clip(x, 0, 255).round().astype(np.uint8), y.reshape(-1, 1).astype(np.uint8)

    return split(n_train), split(n_test)


"""
## Load and prepare the CIFAR-10 dataset
"""

# Load the CIFAR-10 dataset.
(x_train, y_train), (x_test, y_test) = load_data(N_TRAIN, N_TEST)
# Added: CIFAR-10's layout
assert x_train.shape == (N_TRAIN, *INPUT_SHAPE) and x_train.dtype == np.uint8, x_train.shape
assert y_train.shape == (N_TRAIN, 1) and y_train.dtype == np.uint8, y_train.shape
assert x_test.shape == (N_TEST, *INPUT_SHAPE) and y_test.shape == (N_TEST, 1)
assert set(np.unique(y_train)) == set(range(NUM_CLASSES))
(x_train, y_train), (x_val, y_val) = (
    (x_train[:N_SPLIT], y_train[:N_SPLIT]),
    (x_train[N_SPLIT:], y_train[N_SPLIT:]),
)
print(f"Training samples: {len(x_train)}")
print(f"Validation samples: {len(x_val)}")
print(f"Testing samples: {len(x_test)}")
assert (len(x_train), len(x_val), len(x_test)) == (N_SPLIT, N_TRAIN - N_SPLIT, N_TEST)

# Convert to tf.data.Dataset objects.
train_ds = tf_data.Dataset.from_tensor_slices((x_train, y_train))
train_ds = train_ds.shuffle(BATCH_SIZE * 100).batch(BATCH_SIZE).prefetch(AUTO)

val_ds = tf_data.Dataset.from_tensor_slices((x_val, y_val))
val_ds = val_ds.batch(BATCH_SIZE).prefetch(AUTO)

test_ds = tf_data.Dataset.from_tensor_slices((x_test, y_test))
test_ds = test_ds.batch(BATCH_SIZE).prefetch(AUTO)

# Added: one epoch of the training pipeline: batches of BATCH_SIZE (the last one partial),
# the images uint8 and the labels (n, 1), each training example exactly once
_batches = [(np.asarray(x), np.asarray(y)) for x, y in train_ds]
assert [len(x) for x, _ in _batches] == [min(BATCH_SIZE, N_SPLIT - i)
                                         for i in range(0, N_SPLIT, BATCH_SIZE)]
assert _batches[0][0].dtype == np.uint8 and _batches[0][1].shape[1:] == (1,)
_seen = np.concatenate([x for x, _ in _batches])
_order = np.lexsort(_seen.reshape(len(_seen), -1).T)
np.testing.assert_array_equal(_seen[_order], x_train[np.lexsort(x_train.reshape(N_SPLIT, -1).T)])
assert not np.array_equal(_seen, x_train)  # shuffled
_again = np.concatenate([np.asarray(x) for x, _ in train_ds])
assert not np.array_equal(_again, _seen)  # and reshuffled each epoch

"""
## Data augmentation

The augmentation pipeline consists of:

- Rescaling
- Resizing
- Random cropping (fixed-sized or random sized)
- Random horizontal flipping
"""

data_augmentation = keras.Sequential(
    [
        layers.Rescaling(1 / 255.0),
        layers.Resizing(INPUT_SHAPE[0] + 20, INPUT_SHAPE[0] + 20),
        layers.RandomCrop(IMAGE_SIZE, IMAGE_SIZE),
        layers.RandomFlip("horizontal"),
    ],
    name="data_augmentation",
)

# Added: at inference, Rescaling then a half-pixel bilinear resize (no antialias; torch's
# F.interpolate(align_corners=False) computes the same) to 52x52; RandomCrop and RandomFlip
# return it unchanged (current Keras 3); in training each image is a 48x48 window of it,
# one offset for the batch, and some are mirrored
_sample = x_train[:16]
_resized = torch.nn.functional.interpolate(
    torch.from_numpy(_sample.astype(np.float64) / 255.0).permute(0, 3, 1, 2),
    size=(52, 52), mode="bilinear", align_corners=False).permute(0, 2, 3, 1).numpy()
_inference = ops.convert_to_numpy(data_augmentation(_sample, training=False))
assert _inference.shape == (16, 52, 52, 3) and _inference.dtype == np.float32, _inference.shape
np.testing.assert_allclose(_inference, _resized, rtol=1e-5, atol=1e-5)
_train_out = ops.convert_to_numpy(data_augmentation(_sample, training=True))
assert _train_out.shape == (16, IMAGE_SIZE, IMAGE_SIZE, 3), _train_out.shape
_windows = {(top, left): _resized[:, top:top + 48, left:left + 48]
            for top in range(5) for left in range(5)}
_offsets = [k for k, w in _windows.items()
            if all(np.allclose(_train_out[i], w[i], atol=1e-5)
                   or np.allclose(_train_out[i], w[i][:, ::-1], atol=1e-5) for i in range(16))]
assert len(_offsets) == 1, _offsets
_flipped = [not np.allclose(_train_out[i], _windows[_offsets[0]][i], atol=1e-5)
            for i in range(16)]
assert 0 < sum(_flipped) < 16, _flipped

"""
## Positional embedding module
"""


class PatchEncoder(layers.Layer):
    def __init__(self, num_patches, projection_dim):
        super().__init__()
        self.num_patches = num_patches
        self.position_embedding = layers.Embedding(
            input_dim=num_patches, output_dim=projection_dim
        )

    def call(self, patch):
        positions = ops.expand_dims(
            ops.arange(start=0, stop=self.num_patches, step=1), axis=0
        )
        encoded = patch + self.position_embedding(positions)
        return encoded

    def get_config(self):
        config = super().get_config()
        config.update({"num_patches": self.num_patches})
        return config


# Added: the encoder adds row i of its position table to token i of every image
_enc = PatchEncoder(num_patches=NUM_PATCHES, projection_dim=PROJECTION_DIM)
_tok = np.random.normal(size=(2, NUM_PATCHES, PROJECTION_DIM)).astype("float32")
_out = ops.convert_to_numpy(_enc(_tok))
(_table,) = _enc.position_embedding.get_weights()
assert np.asarray(_table).shape == (NUM_PATCHES, PROJECTION_DIM)
assert 0.04 < np.abs(_table).max() <= 0.05  # Keras's Embedding: uniform(-0.05, 0.05)
np.testing.assert_allclose(_out, _tok + np.asarray(_table)[None], rtol=1e-6, atol=1e-6)
assert _enc.get_config()["num_patches"] == NUM_PATCHES

"""
## MLP block for Transformer
"""


def mlp(x, dropout_rate, hidden_units):
    # Iterate over the hidden units and
    # add Dense => Dropout.
    for units in hidden_units:
        x = layers.Dense(units, activation=ops.gelu)(x)
        x = layers.Dropout(dropout_rate)(x)
    return x


def np_gelu(v):
    """(added) the tanh approximation, Keras 3's ops.gelu default (approximate=True)."""
    return 0.5 * v * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (v + 0.044715 * v ** 3)))


_v = np.linspace(-4, 4, 33).astype("float32")
np.testing.assert_allclose(ops.convert_to_numpy(ops.gelu(_v)), np_gelu(_v.astype(np.float64)),
                           rtol=1e-5, atol=1e-6)

"""
## TokenLearner module
"""


def token_learner(inputs, number_of_tokens=NUM_TOKENS):
    # Layer normalize the inputs.
    x = layers.LayerNormalization(epsilon=LAYER_NORM_EPS)(inputs)  # (B, H, W, C)

    # Applying Conv2D => Reshape => Permute
    # The reshape and permute is done to help with the next steps of
    # multiplication and Global Average Pooling.
    attention_maps = keras.Sequential(
        [
            # 3 layers of conv with gelu activation as suggested
            # in the paper.
            layers.Conv2D(
                filters=number_of_tokens,
                kernel_size=(3, 3),
                activation=ops.gelu,
                padding="same",
                use_bias=False,
            ),
            layers.Conv2D(
                filters=number_of_tokens,
                kernel_size=(3, 3),
                activation=ops.gelu,
                padding="same",
                use_bias=False,
            ),
            layers.Conv2D(
                filters=number_of_tokens,
                kernel_size=(3, 3),
                activation=ops.gelu,
                padding="same",
                use_bias=False,
            ),
            # This conv layer will generate the attention maps
            layers.Conv2D(
                filters=number_of_tokens,
                kernel_size=(3, 3),
                activation="sigmoid",  # Note sigmoid for [0, 1] output
                padding="same",
                use_bias=False,
            ),
            # Reshape and Permute
            layers.Reshape((-1, number_of_tokens)),  # (B, H*W, num_of_tokens)
            layers.Permute((2, 1)),
        ]
    )(
        x
    )  # (B, num_of_tokens, H*W)

    # Reshape the input to align it with the output of the conv block.
    num_filters = inputs.shape[-1]
    inputs = layers.Reshape((1, -1, num_filters))(inputs)  # inputs == (B, 1, H*W, C)

    # Element-Wise multiplication of the attention maps and the inputs
    attended_inputs = (
        ops.expand_dims(attention_maps, axis=-1) * inputs
    )  # (B, num_tokens, H*W, C)

    # Global average pooling the element wise multiplication result.
    outputs = ops.mean(attended_inputs, axis=2)  # (B, num_tokens, C)
    return outputs


def np_token_learner(model, maps):
    """(added) a float64 numpy TokenLearner from the weights of a model that is one:
    layer norm over channels, four zero-padded 3x3 convolutions without bias (tanh gelu
    three times, then sigmoid), the maps times the inputs, mean over the positions."""
    (ln,) = [la for la in model.layers if isinstance(la, layers.LayerNormalization)]
    (seq,) = [la for la in model.layers if isinstance(la, keras.Sequential)]
    gamma, beta = (np.asarray(w, np.float64) for w in ln.get_weights())
    x = maps.astype(np.float64)
    x = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + LAYER_NORM_EPS)
    x = x * gamma + beta
    convs = [la for la in seq.layers if isinstance(la, layers.Conv2D)]
    assert len(convs) == 4 and all(not conv.use_bias for conv in convs)
    b, h, w, _ = x.shape
    for i, conv in enumerate(convs):
        (kernel,) = conv.get_weights()
        kernel = np.asarray(kernel, np.float64)  # (3, 3, in, out)
        assert kernel.shape[:2] == (3, 3) and kernel.shape[-1] == NUM_TOKENS
        xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
        x = sum(xp[:, dy:dy + h, dx:dx + w] @ kernel[dy, dx]
                for dy in range(3) for dx in range(3))
        x = np_gelu(x) if i < 3 else 1.0 / (1.0 + np.exp(-x))
    attention = x.reshape(b, h * w, NUM_TOKENS).transpose(0, 2, 1)  # (B, tokens, H*W)
    flat = maps.astype(np.float64).reshape(b, 1, h * w, -1)
    return (attention[..., None] * flat).mean(axis=2)


# Added: a TokenLearner on its own against numpy, on a (B, 4, 4, C) map
_grid = int(math.sqrt(NUM_PATCHES))
_tl_in = layers.Input(shape=(_grid, _grid, PROJECTION_DIM))
_tl = keras.Model(_tl_in, token_learner(_tl_in))
_maps = np.random.normal(size=(3, _grid, _grid, PROJECTION_DIM)).astype("float32")
_tl_out = ops.convert_to_numpy(_tl(_maps))
assert _tl_out.shape == (3, NUM_TOKENS, PROJECTION_DIM), _tl_out.shape
np.testing.assert_allclose(_tl_out, np_token_learner(_tl, _maps), rtol=1e-4, atol=1e-5)
# Added: its kernels are glorot_uniform: within sqrt(6 / (9 * in + 9 * out)), and reach it
for _conv in [la for la in _tl.layers if isinstance(la, keras.Sequential)][0].layers[:4]:
    (_k,) = _conv.get_weights()
    _limit = math.sqrt(6.0 / (9 * np.shape(_k)[2] + 9 * NUM_TOKENS))
    assert 0.8 * _limit < np.abs(_k).max() <= _limit, (np.abs(_k).max(), _limit)

"""
## Transformer block
"""


def transformer(encoded_patches):
    # Layer normalization 1.
    x1 = layers.LayerNormalization(epsilon=LAYER_NORM_EPS)(encoded_patches)

    # Multi Head Self Attention layer 1.
    attention_output = layers.MultiHeadAttention(
        num_heads=NUM_HEADS, key_dim=PROJECTION_DIM, dropout=0.1
    )(x1, x1)

    # Skip connection 1.
    x2 = layers.Add()([attention_output, encoded_patches])

    # Layer normalization 2.
    x3 = layers.LayerNormalization(epsilon=LAYER_NORM_EPS)(x2)

    # MLP layer 1.
    x4 = mlp(x3, hidden_units=MLP_UNITS, dropout_rate=0.1)

    # Skip connection 2.
    encoded_patches = layers.Add()([x4, x2])
    return encoded_patches


"""
## ViT model with the TokenLearner module
"""

symbolic_shapes = []  # added: the shapes the functional model reports


def create_vit_classifier(use_token_learner=True, token_learner_units=NUM_TOKENS):
    inputs = layers.Input(shape=INPUT_SHAPE)  # (B, H, W, C)

    # Augment data.
    # GAP 1: augmented = data_augmentation(inputs)
    # (silent: augmented.shape is (None, 52, 52, 3) here, (None, 48, 48, 3) in Keras 3;
    # the Conv2D's grid below is the same for both, so the line stays as it is)
    augmented = data_augmentation(inputs)

    # Create patches and project the pathces.
    projected_patches = layers.Conv2D(
        filters=PROJECTION_DIM,
        kernel_size=(PATCH_SIZE, PATCH_SIZE),
        strides=(PATCH_SIZE, PATCH_SIZE),
        padding="VALID",
    )(augmented)
    _, h, w, c = projected_patches.shape
    symbolic_shapes.append((h, w, c))
    projected_patches = layers.Reshape((h * w, c))(
        projected_patches
    )  # (B, number_patches, projection_dim)

    # Add positional embeddings to the projected patches.
    encoded_patches = PatchEncoder(
        num_patches=NUM_PATCHES, projection_dim=PROJECTION_DIM
    )(
        projected_patches
    )  # (B, number_patches, projection_dim)
    encoded_patches = layers.Dropout(0.1)(encoded_patches)

    # Iterate over the number of layers and stack up blocks of
    # Transformer.
    for i in range(NUM_LAYERS):
        # Add a Transformer block.
        encoded_patches = transformer(encoded_patches)

        # Add TokenLearner layer in the middle of the
        # architecture. The paper suggests that anywhere
        # between 1/2 or 3/4 will work well.
        if use_token_learner and i == NUM_LAYERS // 2:
            _, hh, c = encoded_patches.shape
            h = int(math.sqrt(hh))
            encoded_patches = layers.Reshape((h, h, c))(
                encoded_patches
            )  # (B, h, h, projection_dim)
            encoded_patches = token_learner(
                encoded_patches, token_learner_units
            )  # (B, num_tokens, c)
            symbolic_shapes.append(tuple(encoded_patches.shape))

    # Layer normalization and Global average pooling.
    representation = layers.LayerNormalization(epsilon=LAYER_NORM_EPS)(encoded_patches)
    representation = layers.GlobalAvgPool1D()(representation)

    # Classify outputs.
    outputs = layers.Dense(NUM_CLASSES, activation="softmax")(representation)

    # Create the Keras model.
    model = keras.Model(inputs=inputs, outputs=outputs)
    return model


def keras_param_count():
    """(added) what Keras's count_params() gives for create_vit_classifier(): the patch
    Conv2D, the position table, per block two LayerNormalizations, the attention's four
    projections (key_dim = PROJECTION_DIM per head) and the MLP; the TokenLearner's
    LayerNormalization and four bias-free 3x3 convolutions; the last LayerNormalization
    and the head (no weights in the augmentation layers)."""
    d, heads, t = PROJECTION_DIM, NUM_HEADS, NUM_TOKENS
    total = (PATCH_SIZE * PATCH_SIZE * 3 + 1) * d + NUM_PATCHES * d
    attention = 3 * (d * heads * d + heads * d) + heads * d * d + d
    mlp_units = (d + 1) * MLP_UNITS[0] + (MLP_UNITS[0] + 1) * MLP_UNITS[1]
    total += NUM_LAYERS * (2 * d + attention + 2 * d + mlp_units)
    total += 2 * d + 9 * d * t + 3 * 9 * t * t
    return total + 2 * d + (d + 1) * NUM_CLASSES


"""
## Training utility
"""


class EpochWeights(keras.callbacks.Callback):
    """(added) the weights and val_accuracy at the end of every epoch."""

    def on_train_begin(self, logs=None):
        self.weights, self.val_accuracy = [], []

    def on_epoch_end(self, epoch, logs=None):
        self.weights.append([np.array(w) for w in self.model.get_weights()])
        self.val_accuracy.append(logs["val_accuracy"])


def np_attention(mha, x):
    """(added) Keras's multi-head attention in numpy from the layer's weights: per head
    q, k, v projections (d, heads, key_dim), softmax(q k^T / sqrt(key_dim)) v, then the
    output projection (heads, key_dim, d)."""
    wq, bq, wk, bk, wv, bv, wo, bo = (np.asarray(w, np.float64) for w in mha.get_weights())
    # ember keeps each projection flattened, (d, heads * key_dim) and (heads * key_dim, d),
    # where Keras's EinsumDense kernels are (d, heads, key_dim) and (heads, key_dim, d)
    d, heads = x.shape[-1], NUM_HEADS
    assert wq.shape == (d, heads * PROJECTION_DIM) and wo.shape == (heads * PROJECTION_DIM, d)
    wq, wk, wv = (w.reshape(d, heads, -1) for w in (wq, wk, wv))
    bq, bk, bv = (b.reshape(heads, -1) for b in (bq, bk, bv))
    wo = wo.reshape(heads, -1, d)
    q = np.einsum("btd,dhk->bthk", x, wq) + bq
    k = np.einsum("btd,dhk->bthk", x, wk) + bk
    v = np.einsum("btd,dhk->bthk", x, wv) + bv
    scores = np.einsum("bshk,bthk->bhts", k, q) / math.sqrt(q.shape[-1])
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    scores /= scores.sum(-1, keepdims=True)
    out = np.einsum("bhts,bshk->bthk", scores, v)
    return np.einsum("bthk,hkd->btd", out, wo) + bo


def run_experiment(model):
    # Initialize the AdamW optimizer.
    optimizer = keras.optimizers.AdamW(
        learning_rate=LEARNING_RATE, weight_decay=WEIGHT_DECAY
    )

    # Compile the model with the optimizer, loss function
    # and the metrics.
    model.compile(
        optimizer=optimizer,
        loss="sparse_categorical_crossentropy",
        metrics=[
            keras.metrics.SparseCategoricalAccuracy(name="accuracy"),
            keras.metrics.SparseTopKCategoricalAccuracy(5, name="top-5-accuracy"),
        ],
    )

    # Define callbacks
    # (upstream: "/tmp/checkpoint.weights.h5"; a temporary directory here)
    checkpoint_filepath = os.path.join(workdir.name, "checkpoint.weights.h5")
    checkpoint_callback = keras.callbacks.ModelCheckpoint(
        checkpoint_filepath,
        monitor="val_accuracy",
        save_best_only=True,
        save_weights_only=True,
    )
    epoch_weights = EpochWeights()  # Added

    # Train the model.
    _ = model.fit(
        train_ds,
        epochs=EPOCHS,
        validation_data=val_ds,
        callbacks=[checkpoint_callback, epoch_weights],
    )
    history = _  # added: checked below

    model.load_weights(checkpoint_filepath)
    _, accuracy, top_5_accuracy = model.evaluate(test_ds)
    print(f"Test accuracy: {round(accuracy * 100, 2)}%")
    print(f"Test top 5 accuracy: {round(top_5_accuracy * 100, 2)}%")

    # Added: the restored weights are those of the (first) best val_accuracy epoch
    best = int(np.argmax(epoch_weights.val_accuracy))
    np.testing.assert_allclose(epoch_weights.val_accuracy, history.history["val_accuracy"])
    for restored, saved in zip(model.get_weights(), epoch_weights.weights[best]):
        np.testing.assert_array_equal(np.asarray(restored), saved)
    # Added: evaluate's numbers are numpy's from predict()
    probs = np.asarray(model.predict(test_ds), np.float64)
    labels = y_test[:, 0].astype(np.int64)
    assert probs.shape == (N_TEST, NUM_CLASSES), probs.shape
    np.testing.assert_allclose(probs.sum(-1), 1.0, rtol=1e-5)
    loss = -np.log(np.clip(probs[np.arange(N_TEST), labels], 1e-7, 1 - 1e-7)).mean()
    top1 = np.mean(np.argmax(probs, -1) == labels)
    top5 = np.mean(np.any(np.argsort(-probs, -1)[:, :5] == labels[:, None], -1))
    np.testing.assert_allclose(_, loss, rtol=1e-4)
    np.testing.assert_allclose(accuracy, top1, atol=1e-6)
    np.testing.assert_allclose(top_5_accuracy, top5, atol=1e-6)
    assert sorted(history.history) == sorted(
        ["loss", "accuracy", "top-5-accuracy", "val_loss", "val_accuracy",
         "val_top-5-accuracy"]), sorted(history.history)
    for t1, t5 in zip(history.history["accuracy"], history.history["top-5-accuracy"]):
        assert t5 >= t1, (t1, t5)
    print("loss", [round(v, 4) for v in history.history["loss"]],
          "val_accuracy", history.history["val_accuracy"])
    assert SHORT or history.history["loss"][-1] < 0.8 * history.history["loss"][0], \
        history.history["loss"]
    assert SHORT or accuracy > 0.5, accuracy
    return accuracy


"""
## Train and evaluate a ViT with TokenLearner
"""

vit_token_learner = create_vit_classifier()
# Added: the shapes of the functional graph and Keras's parameter count
print("symbolic shapes", symbolic_shapes)
assert symbolic_shapes == [(_grid, _grid, PROJECTION_DIM),
                           (None, NUM_TOKENS, PROJECTION_DIM)], symbolic_shapes
assert vit_token_learner.output_shape == (None, NUM_CLASSES), vit_token_learner.output_shape
print("count_params", vit_token_learner.count_params(), keras_param_count())
assert vit_token_learner.count_params() == keras_param_count()
run_experiment(vit_token_learner)

# Added: one attention layer of the trained model against numpy, on its own input
_mha = [la for la in vit_token_learner.layers if isinstance(la, layers.MultiHeadAttention)][-1]
_x = np.random.normal(size=(2, NUM_TOKENS, PROJECTION_DIM)).astype("float32")
np.testing.assert_allclose(ops.convert_to_numpy(_mha(_x, _x)), np_attention(_mha, _x),
                           rtol=1e-4, atol=1e-5)
