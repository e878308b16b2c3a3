"""Port of keras-team/keras-io examples/vision/cct.py ("Compact Convolutional Transformers",
the tf.keras version): a CCTTokenizer layer (a Sequential of Conv2D(relu, he_normal, no bias),
ZeroPadding2D and MaxPool2D(same) whose output is tf.reshape'd into a sequence, and an
Embedding for positions sized by a dummy call), a StochasticDepth layer (tf.random.uniform,
tf.floor), a data_augmentation Sequential (Rescaling, RandomCrop, RandomFlip), Transformer
blocks of LayerNormalization, MultiHeadAttention, StochasticDepth, Add and a gelu MLP,
sequence pooling (tf.nn.softmax over the tokens of a Dense(1), tf.matmul(transpose_a=True),
tf.squeeze), trained with AdamW on CategoricalCrossentropy(from_logits=True,
label_smoothing=0.1) with CategoricalAccuracy and TopKCategoricalAccuracy(5), a
ModelCheckpoint(save_best_only, save_weights_only) on val_accuracy, load_weights, evaluate.

Upstream: https://github.com/keras-team/keras-io/blob/501fb4cbe62e5b5c434393f512a452ef833640a1/examples/vision/cct.py
Changed: names only (tf.keras/keras -> nn, bound to the name `keras` as the example spells
it; tensorflow.keras.layers -> nn.layers; tf.* -> em.*, bound to the name `tf`;
tf.nn.gelu/softmax -> em.nn_ops.gelu/softmax). tensorflow_addons is not TensorFlow:
tfa.optimizers.AdamW(learning_rate=0.001, weight_decay=0.0001) -> nn.optimizers.AdamW
(learning_rate=0.001, weight_decay=0.0001 / 0.001): tfa's decoupled decay subtracts
weight_decay * var per step, Keras's subtracts learning_rate * weight_decay * var (both
before the Adam step), so this is the same update. CIFAR-10 cannot be downloaded:
keras.datasets.cifar10.load_data() is replaced by the real MNIST digits
(ember.data.datasets.mnist from $EMBER_DATA, else ../shared/datasets/mnist beside the
checkout as test_programs.py finds them; the program skips when they are absent) in
CIFAR's layout: uint8 (n, 32, 32, 3) images (each 28x28 digit centred on a 32x32 black
canvas and repeated to 3 channels) and (n, 1) labels. The checkpoint goes into a
temporary directory (upstream: /tmp/checkpoint). The matplotlib plot is printed instead.
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream's sizes: projection_dim 128, tokenizer
channels [64, 128], batch 128, 30 epochs, all 60,000/10,000 digits): projection_dim 32,
tokenizer channels [16, 32] (the last must equal projection_dim), batch 64, 2,000 training
and 400 test digits, 4 epochs; EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 1 Transformer
block, 256/64 digits, 1 epoch, no threshold on what training reached.
Added: seeds for numpy and ember; the data's shapes; the tokenizer's sequence is 64 tokens
(32 -> conv 30 -> pad 32 -> pool 16 -> conv 14 -> pad 16 -> pool 8) and equals the
Sequential's (N, 8, 8, C) output reshaped row-major; StochasticDepth in training keeps or
zeroes whole examples and scales kept ones by 1/keep_prob, and is the identity otherwise;
the sequence pooling equals numpy's softmax over tokens and weighted sum; the parameter
count is the one computed by hand for Keras (no Rescaling/RandomCrop/RandomFlip weights);
the label-smoothed loss of evaluate equals numpy's from predict(); evaluate's accuracies
equal the ones computed by hand from predict(); top-5 >= top-1; the weights load_weights
restores equal the weights at the end of the best val_accuracy epoch; (CPU run) the training
loss falls and test accuracy passes 40% (chance 10%: an untrained or broken model stays
near it; this seed reaches 65.5%, after 25% validation accuracy in the first epoch).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error): 2. (loud) ModelCheckpoint(save_weights_only=True)
refuses upstream's "/tmp/checkpoint" (ValueError: the filepath must end in `.weights.h5`):
that is Keras 3's rule; tf.keras writes a TensorFlow checkpoint at any prefix, and
load_weights reads it back; stand-in: a `checkpoint.weights.h5` path.
Fixed in ember since the first version of this port: an ember function could not take a
symbolic tensor of the functional API (GAP 1, loud: tf.nn.softmax, tf.matmul and
tf.squeeze on the model's tensors raised TypeError "wrap the computation in
nn.layers.Lambda"); they now make nodes of the graph, as tf.keras's TFOpLambda layers.
keras.utils.to_categorical returned float64 (GAP 3, silent; Keras 3's numpy path) where
tf.keras's default dtype="float32" gives float32, as ember's now does. Upstream's lines
are restored.
Checked and the same as tf.keras: the eagerly-run position Embedding is not one of the
model's weights (keras-io#688); he_normal is Keras's truncated normal; gelu is the exact
(erf) one, as tf.nn.gelu's default approximate=False; label smoothing; MaxPool2D "same".
"""

import os
import pathlib
import tempfile
import unittest

import numpy as np

import ember.core as em
from ember import data, nn
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
workdir = tempfile.TemporaryDirectory()


def load_data(n_train, n_test):
    """MNIST in CIFAR's layout: uint8 (n, 32, 32, 3) images, (n, 1) labels."""
    def split(name, n):
        x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
        x = (np.asarray(x).reshape(-1, 28, 28, 1) * 255).round().astype(np.uint8)
        x = np.pad(x, ((0, 0), (2, 2), (2, 2), (0, 0)))  # centred on a 32x32 canvas
        return np.repeat(x, 3, axis=-1), np.asarray(y).astype(np.uint8).reshape(-1, 1)
    return split("train", n_train), split("test", n_test)


"""
## Hyperparameters and constants
"""

positional_emb = True
conv_layers = 2
projection_dim = 128 if FULL else 32

num_heads = 2
transformer_units = [
    projection_dim,
    projection_dim,
]
transformer_layers = 1 if SHORT else 2
stochastic_depth_rate = 0.1

learning_rate = 0.001
weight_decay = 0.0001
batch_size = 128 if FULL else 64
num_epochs = 30 if FULL else 1 if SHORT else 4
image_size = 32

"""
## Load CIFAR-10 dataset
"""

num_classes = 10
input_shape = (32, 32, 3)

(x_train, y_train), (x_test, y_test) = load_data(60000 if FULL else 256 if SHORT else 2000,
                                                 10000 if FULL else 64 if SHORT else 400)
labels_test = y_test[:, 0].astype(np.int64)  # added: for the checks below

y_train = keras.utils.to_categorical(y_train, num_classes)
y_test = keras.utils.to_categorical(y_test, num_classes)
assert y_train.dtype == np.float32  # added: tf.keras's default dtype

print(f"x_train shape: {x_train.shape} - y_train shape: {y_train.shape}")
print(f"x_test shape: {x_test.shape} - y_test shape: {y_test.shape}")
assert x_train.shape[1:] == input_shape and x_train.dtype == np.uint8, x_train.shape
assert y_train.shape == (len(x_train), num_classes) and y_test.shape == (len(x_test), 10)
np.testing.assert_array_equal(np.argmax(y_test, -1), labels_test)

"""
## The CCT tokenizer
"""


class CCTTokenizer(layers.Layer):
    def __init__(
        self,
        kernel_size=3,
        stride=1,
        padding=1,
        pooling_kernel_size=3,
        pooling_stride=2,
        num_conv_layers=conv_layers,
        num_output_channels=[64, 128] if FULL else [16, 32],
        positional_emb=positional_emb,
        **kwargs,
    ):
        super(CCTTokenizer, self).__init__(**kwargs)  # noqa: UP008

        # This is our tokenizer.
        self.conv_model = keras.Sequential()
        for i in range(num_conv_layers):
            self.conv_model.add(
                layers.Conv2D(
                    num_output_channels[i],
                    kernel_size,
                    stride,
                    padding="valid",
                    use_bias=False,
                    activation="relu",
                    kernel_initializer="he_normal",
                )
            )
            self.conv_model.add(layers.ZeroPadding2D(padding))
            self.conv_model.add(
                layers.MaxPool2D(pooling_kernel_size, pooling_stride, "same")
            )

        self.positional_emb = positional_emb

    def call(self, images):
        outputs = self.conv_model(images)
        # After passing the images through our mini-network the spatial dimensions
        # are flattened to form sequences.
        reshaped = tf.reshape(
            outputs,
            (-1, tf.shape(outputs)[1] * tf.shape(outputs)[2], tf.shape(outputs)[-1]),
        )
        return reshaped

    def positional_embedding(self, image_size):
        # Positional embeddings are optional in CCT. Here, we calculate
        # the number of sequences and initialize an `Embedding` layer to
        # compute the positional embeddings later.
        if self.positional_emb:
            dummy_inputs = tf.ones((1, image_size, image_size, 3))
            dummy_outputs = self.call(dummy_inputs)
            sequence_length = tf.shape(dummy_outputs)[1]
            projection_dim = tf.shape(dummy_outputs)[-1]

            embed_layer = layers.Embedding(
                input_dim=sequence_length, output_dim=projection_dim
            )
            return embed_layer, sequence_length
        else:
            return None


# Added: the tokenizer's sequence is the conv stack's feature map, row-major
tok = CCTTokenizer()
sample = tf.convert_to_tensor(x_train[:2].astype("float32") / 255.0)
seq = tok(sample)
fmap = tok.conv_model(sample).numpy()
assert fmap.shape == (2, 8, 8, projection_dim), fmap.shape
assert tuple(seq.shape) == (2, 64, projection_dim), seq.shape
np.testing.assert_array_equal(seq.numpy(), fmap.reshape(2, 64, projection_dim))
emb, seq_len = tok.positional_embedding(image_size)
assert int(seq_len) == 64, seq_len
assert emb.output_dim == projection_dim and emb.input_dim == 64, (emb.input_dim, emb.output_dim)

"""
## Stochastic depth for regularization
"""


# Referred from: github.com:rwightman/pytorch-image-models.
class StochasticDepth(layers.Layer):
    def __init__(self, drop_prop, **kwargs):
        super(StochasticDepth, self).__init__(**kwargs)  # noqa: UP008
        self.drop_prob = drop_prop

    def call(self, x, training=None):
        if training:
            keep_prob = 1 - self.drop_prob
            shape = (tf.shape(x)[0],) + (1,) * (tf.shape(x).shape[0] - 1)
            random_tensor = keep_prob + tf.random.uniform(shape, 0, 1)
            random_tensor = tf.floor(random_tensor)
            return (x / keep_prob) * random_tensor
        return x


# Added: whole examples are kept (scaled by 1/keep_prob) or dropped; inference is the identity
sd_in = np.random.rand(256, 3, 4).astype("float32") + 0.5
sd_out = StochasticDepth(0.5)(tf.convert_to_tensor(sd_in), training=True).numpy()
assert sd_out.shape == sd_in.shape
kept = np.all(sd_out != 0, axis=(1, 2))
assert np.all(kept | np.all(sd_out == 0, axis=(1, 2)))
np.testing.assert_allclose(sd_out[kept], sd_in[kept] / 0.5, rtol=1e-6)
assert 64 < kept.sum() < 192, kept.sum()  # about half of 256
np.testing.assert_array_equal(StochasticDepth(0.5)(tf.convert_to_tensor(sd_in)).numpy(), sd_in)

"""
## MLP for the Transformers encoder
"""


def mlp(x, hidden_units, dropout_rate):
    for units in hidden_units:
        x = layers.Dense(units, activation=tf.nn_ops.gelu)(x)
        x = layers.Dropout(dropout_rate)(x)
    return x


"""
## Data augmentation
"""

# Note the rescaling layer. These layers have pre-defined inference behavior.
data_augmentation = keras.Sequential(
    [
        layers.Rescaling(scale=1.0 / 255),
        layers.RandomCrop(image_size, image_size),
        layers.RandomFlip("horizontal"),
    ],
    name="data_augmentation",
)

"""
## The final CCT model
"""


def create_cct_model(
    image_size=image_size,
    input_shape=input_shape,
    num_heads=num_heads,
    projection_dim=projection_dim,
    transformer_units=transformer_units,
):

    inputs = layers.Input(input_shape)

    # Augment data.
    augmented = data_augmentation(inputs)

    # Encode patches.
    cct_tokenizer = CCTTokenizer()
    encoded_patches = cct_tokenizer(augmented)

    # Apply positional embedding.
    if positional_emb:
        pos_embed, seq_length = cct_tokenizer.positional_embedding(image_size)
        positions = tf.range(start=0, limit=seq_length, delta=1)
        position_embeddings = pos_embed(positions)
        encoded_patches += position_embeddings

    # Calculate Stochastic Depth probabilities.
    dpr = [x for x in np.linspace(0, stochastic_depth_rate, transformer_layers)]

    # Create multiple layers of the Transformer block.
    for i in range(transformer_layers):
        # Layer normalization 1.
        x1 = layers.LayerNormalization(epsilon=1e-5)(encoded_patches)

        # Create a multi-head attention layer.
        attention_output = layers.MultiHeadAttention(
            num_heads=num_heads, key_dim=projection_dim, dropout=0.1
        )(x1, x1)

        # Skip connection 1.
        attention_output = StochasticDepth(dpr[i])(attention_output)
        x2 = layers.Add()([attention_output, encoded_patches])

        # Layer normalization 2.
        x3 = layers.LayerNormalization(epsilon=1e-5)(x2)

        # MLP.
        x3 = mlp(x3, hidden_units=transformer_units, dropout_rate=0.1)

        # Skip connection 2.
        x3 = StochasticDepth(dpr[i])(x3)
        encoded_patches = layers.Add()([x3, x2])

    # Apply sequence pooling.
    representation = layers.LayerNormalization(epsilon=1e-5)(encoded_patches)
    attention_weights = tf.nn_ops.softmax(layers.Dense(1)(representation), axis=1)
    weighted_representation = tf.matmul(
        attention_weights, representation, transpose_a=True
    )
    weighted_representation = tf.squeeze(weighted_representation, -2)

    # Classify outputs.
    logits = layers.Dense(num_classes)(weighted_representation)
    # Create the Keras model.
    model = keras.Model(inputs=inputs, outputs=logits)
    return model


# Added: the sequence pooling, eagerly, against numpy
rep = np.random.randn(3, 64, projection_dim).astype("float32")
scores = np.random.randn(3, 64, 1).astype("float32")
att = tf.nn_ops.softmax(tf.convert_to_tensor(scores), axis=1)
pooled = tf.squeeze(tf.matmul(att, tf.convert_to_tensor(rep), transpose_a=True), -2).numpy()
w_np = np.exp(scores - scores.max(1, keepdims=True))
w_np /= w_np.sum(1, keepdims=True)
assert pooled.shape == (3, projection_dim), pooled.shape
np.testing.assert_allclose(pooled, (w_np * rep).sum(1), rtol=1e-5, atol=1e-5)


"""
## Model training and evaluation
"""


class EpochWeights(keras.callbacks.Callback):
    """Added: the weights at the end of every epoch, to check what load_weights restores."""

    def on_train_begin(self, logs=None):
        self.weights = []

    def on_epoch_end(self, epoch, logs=None):
        self.weights.append([np.array(w) for w in self.model.get_weights()])


def run_experiment(model):
    # tfa.optimizers.AdamW(learning_rate=0.001, weight_decay=0.0001): tfa decays by
    # weight_decay * var, Keras by learning_rate * weight_decay * var (see the header)
    optimizer = keras.optimizers.AdamW(learning_rate=0.001, weight_decay=0.0001 / 0.001)

    model.compile(
        optimizer=optimizer,
        loss=keras.losses.CategoricalCrossentropy(
            from_logits=True, label_smoothing=0.1
        ),
        metrics=[
            keras.metrics.CategoricalAccuracy(name="accuracy"),
            keras.metrics.TopKCategoricalAccuracy(5, name="top-5-accuracy"),
        ],
    )

    # GAP 2: checkpoint_filepath = "/tmp/checkpoint"
    checkpoint_filepath = os.path.join(workdir.name, "checkpoint.weights.h5")
    checkpoint_callback = keras.callbacks.ModelCheckpoint(
        checkpoint_filepath,
        monitor="val_accuracy",
        save_best_only=True,
        save_weights_only=True,
    )
    epoch_weights = EpochWeights()  # Added

    history = model.fit(
        x=x_train,
        y=y_train,
        batch_size=batch_size,
        epochs=num_epochs,
        validation_split=0.1,
        callbacks=[checkpoint_callback, epoch_weights],
    )

    model.load_weights(checkpoint_filepath)
    loss, accuracy, top_5_accuracy = model.evaluate(x_test, y_test)
    print(f"Test accuracy: {round(accuracy * 100, 2)}%")
    print(f"Test top 5 accuracy: {round(top_5_accuracy * 100, 2)}%")

    # Added: the restored weights are the best val_accuracy epoch's (the first best)
    best = int(np.argmax(history.history["val_accuracy"]))
    restored = model.get_weights()
    assert len(restored) == len(epoch_weights.weights[best])
    for w, saved in zip(restored, epoch_weights.weights[best]):
        np.testing.assert_array_equal(np.asarray(w), saved)
    # evaluate's loss and metrics, by hand from predict()
    logits = np.asarray(model.predict(x_test, batch_size=batch_size)).astype(np.float64)
    assert logits.shape == (len(x_test), num_classes), logits.shape
    smoothed = y_test * 0.9 + 0.1 / num_classes
    log_p = logits - logits.max(-1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(-1, keepdims=True))
    np.testing.assert_allclose(loss, float(np.mean(-(smoothed * log_p).sum(-1))), rtol=1e-4)
    top1 = float(np.mean(np.argmax(logits, -1) == labels_test))
    top5 = float(np.mean(np.any(np.argsort(-logits, -1)[:, :5] == labels_test[:, None], -1)))
    np.testing.assert_allclose(accuracy, top1, atol=1e-6)
    np.testing.assert_allclose(top_5_accuracy, top5, atol=1e-6)
    assert top_5_accuracy >= accuracy, (top_5_accuracy, accuracy)
    assert SHORT or accuracy > 0.4, accuracy

    return history


cct_model = create_cct_model()
# Added: the parameter count tf.keras gives for this model, by hand. The position Embedding
# is called on a concrete tf.range, not on the model's input, so tf.keras runs it eagerly and
# the model adds its output as a constant: its 64 * projection_dim weights are not the
# model's and are never trained (keras-team/keras-io#688); ember does the same.
c1, c2 = (64, 128) if FULL else (16, 32)
d = projection_dim
block = (2 * d + 3 * (d * num_heads * d + num_heads * d) + num_heads * d * d + d
         + 2 * d + 2 * (d * d + d))
expected = 27 * c1 + 9 * c1 * c2 + transformer_layers * block + 2 * d + d + 1 + d * 10 + 10
print("count_params", cct_model.count_params(), expected)
assert cct_model.count_params() == expected
history = run_experiment(cct_model)

"""
Let's now visualize the training progress of the model.
"""

print("train_loss", history.history["loss"])
print("val_loss", history.history["val_loss"])

# Added: training went somewhere
assert len(history.history["loss"]) == num_epochs
assert SHORT or history.history["loss"][-1] < history.history["loss"][0], history.history["loss"]
