"""Port of keras-team/keras-io examples/generative/vq_vae.py ("Vector-Quantized Variational
Autoencoders", tf.keras 2 with TensorFlow Probability): a VectorQuantizer layer (a
tf.Variable codebook, nearest code by L2 distance, the codebook and commitment losses through
add_loss, a straight-through estimator), a functional Conv2D encoder to 7x7x16 latents and a
Conv2DTranspose decoder, a keras.Model subclass with three Mean trackers and a custom
train_step trained on MNIST scaled to [-0.5, 0.5] (reconstruction MSE over the data's
variance); then the codes of the digits become the data of a PixelCNN prior (a one-hot of
an int32 Input, masked PixelConvLayers and residual blocks, sparse categorical
cross-entropy), sampled code by code through a tfp Categorical, and decoded into images.

Upstream: https://github.com/keras-team/keras-io/blob/8ec6ea47e9e378a71d0e7e7c2f2a959b9c352d35/examples/generative/vq_vae.py
Changed: names only (tensorflow.keras / tensorflow.keras.layers -> ember.nn / ember.nn.layers,
tf.random_uniform_initializer / Variable / shape / reshape / one_hot / matmul /
reduce_mean / reduce_sum / stop_gradient / argmin / int32 -> em.*, tf.GradientTape ->
ember.tape.GradientTape, imported as tape_lib since upstream names the tape `tape`);
keras.datasets.mnist.load_data() -> ember.data.datasets.mnist(data_dir=...) (the real MNIST,
kept uint8 (n, 28, 28) as load_data() gives it; `data` is not upstream's, ember.data is
imported as em_data); the matplotlib figures are dropped (what they would show is
checked); the `pip install tensorflow-probability` cell is dropped (GAP 1). History
objects are kept (`history =`, `ph =`). Reduced (EMBER_PROGRAMS_FULL=1 restores upstream:
60,000 + 10,000 digits, 30 + 30 epochs, 128 filters, PixelCNN batch 128): 4,096 + 256
digits, VQ-VAE 4 epochs (batch 128, as upstream), PixelCNN 32 filters, batch 16, 3 epochs
(batch 16 gives the Adam(3e-4) steps that learning the codes' context needs at a quarter
of upstream's data); EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 128 + 32 digits, 1
epoch each, no threshold on what training reached. The sampling is upstream's (10 priors,
one predict() per code). CPU run: ~26 s of one core.
Added: seeds for numpy and ember; the data's layout and variance; the parameter counts
upstream's summaries print (vq_vae 48,913; pixel_cnn 1,049,728 at 128 filters, the
architecture's formula at the reduced size); the codebook is U(-0.05, 0.05) (16, 64)
float32 and one of the layer's and the model's trainable weights (tf.keras tracks a
tf.Variable set in __init__); on random latents, get_code_indices() is numpy's argmin of
squared distances (int64, tf.argmin's default), the layer's output is numpy's nearest
codebook columns, its one loss is (1 + beta) x their mean squared distance, the output's
gradient reaches the inputs unchanged and the codebook not at all (straight-through), the
loss's gradient is -beta x 2(q - x)/n for the inputs and 2(q - x)/n summed per code for the
codebook; fit(x) with no y hands train_step the float32 batch (tf.keras casts float64
numpy input to floatx); History has train_step's three keys, loss = reconstruction_loss +
vqvae_loss every epoch, the trackers count one epoch's steps, the codebook moved; predict()
is float32 (10, 28, 28, 1) and equals the decoder of numpy's nearest codes, and the model's
eager loss is numpy's; the PixelCNN's first kernel is 0 from the centre on (type A), the
model is causal (changing the code at p and after leaves the logits at p and before
unchanged, and changes later ones), evaluate() (loss, accuracy) is numpy's sparse
cross-entropy of predict() and argmax hit rate on the last 10% (before training and
after; "accuracy" with that loss is sparse categorical accuracy), fit's last val_loss /
val_accuracy are evaluate() of that part; the sampler stand-in draws each code with its
softmax probability (20,000 draws within 0.015); the priors are codes; the embedding lookup
is numpy's; the generated images are (10, 28, 28, 1) and finite.
Thresholds (CPU run): the test digits' reconstruction loss is below 0.55 x that of the
train set's mean image (0.67; the best a model that ignores its input can do; the
untrained model gets ~2.4; this run 0.29); the PixelCNN's validation loss is below 0.95 x
the mean entropy of the validation codes' per-position frequencies (0.64; the least loss
any model that does not read the codes above and to the left can reach on them; this run
0.58, after 2 epochs 0.63; untrained ln 128 = 4.85) and its validation accuracy passes those
frequencies' best (0.77) by 0.01 (0.80); 95% of the sampled codes are codes the data uses
(an untrained model draws any of the 128; here 10 are used) and the share of the data's
commonest code among them is within 0.15 of the data's (0.67 against 0.70).
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error): 1. (loud) no tensorflow_probability
(tfp.layers.DistributionLambda(tfp.distributions.Categorical), whose output predict()
turns into a sample; the same gap as mixture_density_network.py's GAP 2): a Lambda layer
drawing from em.random.categorical over the last axis stands in, int32 as Categorical's
samples.
Also seen, not gaps here: the pixel_cnn summary has no row for the one-hot of the input
(tf.keras lists a `tf.one_hot (TFOpLambda)` layer; ember makes it an operation, as Keras 3,
so pixel_cnn.layers[1] is the first PixelConvLayer, not the one-hot); right after the
functional model is built, model.losses holds a number computed on the placeholder
construction input (here 0.0006), not the empty list of Keras 3; summary rows with a long
"name (Class)" are not truncated and push the other columns out of line.
"""

import math
import os
import pathlib
import unittest

import numpy as np

import ember.core as em
from ember import data as em_data
from ember import nn
from ember import tape as tape_lib
from ember.nn import layers

tf = em  # the example's `tf.` prefix
keras = nn  # and its `keras.`
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)
np.random.seed(0)
N_TRAIN, N_TEST = (60000, 10000) if FULL else (128, 32) if SHORT else (4096, 256)
VQ_EPOCHS = 30 if FULL else 1 if SHORT else 4
PCNN_EPOCHS = 30 if FULL else 1 if SHORT else 3
PCNN_FILTERS = 128 if FULL else 32
PCNN_BATCH = 128 if FULL else 16


def load_data():
    """keras.datasets.mnist.load_data(), in its layout (uint8 (n, 28, 28) images, uint8
    labels), from the real MNIST files."""
    def split(name, n):
        x, y = next(iter(em_data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
        return ((np.asarray(x).reshape(-1, 28, 28) * 255).round().astype(np.uint8),
                np.asarray(y).astype(np.uint8))
    return split("train", N_TRAIN), split("test", N_TEST)


"""
## `VectorQuantizer` layer
"""


class VectorQuantizer(layers.Layer):
    def __init__(self, num_embeddings, embedding_dim, beta=0.25, **kwargs):
        super().__init__(**kwargs)
        self.embedding_dim = embedding_dim
        self.num_embeddings = num_embeddings

        # The `beta` parameter is best kept between [0.25, 2] as per the paper.
        self.beta = beta

        # Initialize the embeddings which we will quantize.
        w_init = tf.random_uniform_initializer()
        self.embeddings = tf.Variable(
            initial_value=w_init(
                shape=(self.embedding_dim, self.num_embeddings), dtype="float32"
            ),
            trainable=True,
            name="embeddings_vqvae",
        )

    def call(self, x):
        # Calculate the input shape of the inputs and
        # then flatten the inputs keeping `embedding_dim` intact.
        input_shape = tf.shape(x)
        flattened = tf.reshape(x, [-1, self.embedding_dim])

        # Quantization.
        encoding_indices = self.get_code_indices(flattened)
        encodings = tf.one_hot(encoding_indices, self.num_embeddings)
        quantized = tf.matmul(encodings, self.embeddings, transpose_b=True)

        # Reshape the quantized values back to the original input shape
        quantized = tf.reshape(quantized, input_shape)

        # Calculate vector quantization loss and add that to the layer. You can learn more
        # about adding losses to different layers here:
        # https://keras.io/guides/making_new_layers_and_models_via_subclassing/. Check
        # the original paper to get a handle on the formulation of the loss function.
        commitment_loss = tf.reduce_mean((tf.stop_gradient(quantized) - x) ** 2)
        codebook_loss = tf.reduce_mean((quantized - tf.stop_gradient(x)) ** 2)
        self.add_loss(self.beta * commitment_loss + codebook_loss)

        # Straight-through estimator.
        quantized = x + tf.stop_gradient(quantized - x)
        return quantized

    def get_code_indices(self, flattened_inputs):
        # Calculate L2-normalized distance between the inputs and the codes.
        similarity = tf.matmul(flattened_inputs, self.embeddings)
        distances = (
            tf.reduce_sum(flattened_inputs**2, axis=1, keepdims=True)
            + tf.reduce_sum(self.embeddings**2, axis=0)
            - 2 * similarity
        )

        # Derive the indices for minimum distances.
        encoding_indices = tf.argmin(distances, axis=1)
        return encoding_indices


"""
## Encoder and decoder
"""


def get_encoder(latent_dim=16):
    encoder_inputs = keras.Input(shape=(28, 28, 1))
    x = layers.Conv2D(32, 3, activation="relu", strides=2, padding="same")(
        encoder_inputs
    )
    x = layers.Conv2D(64, 3, activation="relu", strides=2, padding="same")(x)
    encoder_outputs = layers.Conv2D(latent_dim, 1, padding="same")(x)
    return keras.Model(encoder_inputs, encoder_outputs, name="encoder")


def get_decoder(latent_dim=16):
    latent_inputs = keras.Input(shape=get_encoder(latent_dim).output.shape[1:])
    x = layers.Conv2DTranspose(64, 3, activation="relu", strides=2, padding="same")(
        latent_inputs
    )
    x = layers.Conv2DTranspose(32, 3, activation="relu", strides=2, padding="same")(x)
    decoder_outputs = layers.Conv2DTranspose(1, 3, padding="same")(x)
    return keras.Model(latent_inputs, decoder_outputs, name="decoder")


"""
## Standalone VQ-VAE model
"""


def get_vqvae(latent_dim=16, num_embeddings=64):
    vq_layer = VectorQuantizer(num_embeddings, latent_dim, name="vector_quantizer")
    encoder = get_encoder(latent_dim)
    decoder = get_decoder(latent_dim)
    inputs = keras.Input(shape=(28, 28, 1))
    encoder_outputs = encoder(inputs)
    quantized_latents = vq_layer(encoder_outputs)
    reconstructions = decoder(quantized_latents)
    return keras.Model(inputs, reconstructions, name="vq_vae")


get_vqvae().summary()

# Added: the parameter count upstream's summary prints (encoder 19,856 + the codebook
# 16 x 64 + decoder 28,033), and the quantizer against numpy
probe = get_vqvae()
assert probe.count_params() == 48913, probe.count_params()
assert probe.get_layer("encoder").output_shape == (None, 7, 7, 16)
assert probe.get_layer("decoder").output_shape == (None, 28, 28, 1)
vq = probe.get_layer("vector_quantizer")
E = vq.embeddings.numpy()
# tf.random_uniform_initializer(): U(-0.05, 0.05); the tf.Variable set in __init__ is one
# of the layer's (and the model's) trainable weights, as tf.keras tracks it
assert E.shape == (16, 64) and E.dtype == np.float32, (E.shape, E.dtype)
assert -0.05 <= E.min() < -0.04 and 0.04 < E.max() <= 0.05, (E.min(), E.max())
assert any(w is vq.embeddings for w in vq.trainable_weights)
assert sum(w is vq.embeddings for w in probe.trainable_variables) == 1
latents = (0.05 * np.random.randn(2, 7, 7, 16)).astype(np.float32)
flat = latents.reshape(-1, 16)
np_idx = ((flat[:, :, None] - E[None]) ** 2).sum(axis=1).argmin(axis=1)
np_q = E[:, np_idx].T
codes = vq.get_code_indices(flat)
assert codes.dtype == em.int64 and codes.shape == (98,), (codes.dtype, codes.shape)
np.testing.assert_array_equal(codes.numpy(), np_idx)
beta = vq.beta
w_out = np.random.randn(*latents.shape).astype(np.float32)
x_var = tf.Variable(latents)
with tape_lib.GradientTape(persistent=True) as probe_tape:
    quantized = vq(x_var)
    vq_loss = sum(vq.losses)
    weighted = tf.reduce_sum(quantized * w_out)
assert len(vq.losses) == 1, vq.losses
np.testing.assert_allclose(quantized.numpy(), np_q.reshape(latents.shape), atol=1e-7)
sq = float(np.mean((np_q.reshape(latents.shape).astype(np.float64) - latents) ** 2))
np.testing.assert_allclose(float(vq_loss), (1 + beta) * sq, rtol=1e-5)
# straight-through: the output's gradient reaches the inputs unchanged and the codebook
# not at all; the loss pulls the inputs by beta (commitment) and the codes by 1 (codebook)
g_x, g_e = probe_tape.gradient(weighted, [x_var, vq.embeddings])
np.testing.assert_allclose(g_x.numpy(), w_out, rtol=1e-6)
assert g_e is None or not np.any(g_e.numpy()), "the codebook got the output's gradient"
g_x, g_e = probe_tape.gradient(vq_loss, [x_var, vq.embeddings])
diff = (np_q - flat) * 2 / latents.size
np.testing.assert_allclose(g_x.numpy().reshape(-1, 16), -beta * diff, rtol=1e-4, atol=1e-9)
np_g_e = np.zeros_like(E)
np.add.at(np_g_e.T, np_idx, diff)
np.testing.assert_allclose(g_e.numpy(), np_g_e, rtol=1e-4, atol=1e-9)
del probe_tape


"""
## Wrapping up the training loop inside `VQVAETrainer`
"""


seen_batches = []  # added: what fit hands train_step


class VQVAETrainer(keras.models.Model):
    def __init__(self, train_variance, latent_dim=32, num_embeddings=128, **kwargs):
        super(VQVAETrainer, self).__init__(**kwargs)  # noqa: UP008
        self.train_variance = train_variance
        self.latent_dim = latent_dim
        self.num_embeddings = num_embeddings

        self.vqvae = get_vqvae(self.latent_dim, self.num_embeddings)

        self.total_loss_tracker = keras.metrics.Mean(name="total_loss")
        self.reconstruction_loss_tracker = keras.metrics.Mean(
            name="reconstruction_loss"
        )
        self.vq_loss_tracker = keras.metrics.Mean(name="vq_loss")

    @property
    def metrics(self):
        return [
            self.total_loss_tracker,
            self.reconstruction_loss_tracker,
            self.vq_loss_tracker,
        ]

    def train_step(self, x):
        seen_batches.append((type(x).__name__, x.dtype))  # added
        with tape_lib.GradientTape() as tape:
            # Outputs from the VQ-VAE.
            reconstructions = self.vqvae(x)

            # Calculate the losses.
            reconstruction_loss = (
                tf.reduce_mean((x - reconstructions) ** 2) / self.train_variance
            )
            total_loss = reconstruction_loss + sum(self.vqvae.losses)

        # Backpropagation.
        grads = tape.gradient(total_loss, self.vqvae.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.vqvae.trainable_variables))

        # Loss tracking.
        self.total_loss_tracker.update_state(total_loss)
        self.reconstruction_loss_tracker.update_state(reconstruction_loss)
        self.vq_loss_tracker.update_state(sum(self.vqvae.losses))

        # Log results.
        return {
            "loss": self.total_loss_tracker.result(),
            "reconstruction_loss": self.reconstruction_loss_tracker.result(),
            "vqvae_loss": self.vq_loss_tracker.result(),
        }


"""
## Load and preprocess the MNIST dataset
"""

(x_train, _), (x_test, _) = load_data()

x_train = np.expand_dims(x_train, -1)
x_test = np.expand_dims(x_test, -1)
x_train_scaled = (x_train / 255.0) - 0.5
x_test_scaled = (x_test / 255.0) - 0.5

data_variance = np.var(x_train / 255.0)

# Added: load_data()'s layout, and the images' variance (MNIST's: 0.095)
assert x_train.shape == (N_TRAIN, 28, 28, 1) and x_train.dtype == np.uint8, x_train.shape
assert x_test_scaled.shape == (N_TEST, 28, 28, 1), x_test_scaled.shape
assert x_train_scaled.min() == -0.5 and x_train_scaled.max() == 0.5
assert 0.08 < data_variance < 0.11, data_variance

"""
## Train the VQ-VAE model
"""

vqvae_trainer = VQVAETrainer(data_variance, latent_dim=16, num_embeddings=128)
initial_codebook = vqvae_trainer.vqvae.get_layer("vector_quantizer").embeddings.numpy()  # added
vqvae_trainer.compile(optimizer=keras.optimizers.Adam())
history = vqvae_trainer.fit(x_train_scaled, epochs=VQ_EPOCHS, batch_size=128)  # added: history =

# Added: train_step got each batch itself, as float32 (tf.keras casts float64 numpy input to
# floatx); History holds train_step's keys, one value per epoch, the trackers' running means
# (reset every epoch), so loss = reconstruction_loss + vqvae_loss; the codebook was trained
print({k: [round(v, 4) for v in vals] for k, vals in history.history.items()})
assert seen_batches and all(t == "Tensor" and d == em.float32 for t, d in seen_batches), seen_batches
assert set(history.history) == {"loss", "reconstruction_loss", "vqvae_loss"}, history.history.keys()
for lo, rec, vql in zip(*(history.history[k] for k in ("loss", "reconstruction_loss", "vqvae_loss"))):
    np.testing.assert_allclose(lo, rec + vql, rtol=1e-5)
assert len(history.history["loss"]) == VQ_EPOCHS
assert float(vqvae_trainer.vq_loss_tracker.count) == math.ceil(N_TRAIN / 128)
assert np.abs(vqvae_trainer.vqvae.get_layer("vector_quantizer").embeddings.numpy()
              - initial_codebook).max() > 1e-4

"""
## Reconstruction results on the test set
"""

trained_vqvae_model = vqvae_trainer.vqvae
idx = np.random.choice(len(x_test_scaled), 10)
test_images = x_test_scaled[idx]
reconstructions_test = trained_vqvae_model.predict(test_images)
assert reconstructions_test.shape == (10, 28, 28, 1), reconstructions_test.shape  # added
assert reconstructions_test.dtype == np.float32, reconstructions_test.dtype  # added

# (the matplotlib figures are dropped)

# Added: (CPU run) the reconstructions of the test digits: their mean squared error over the
# train set's variance (the reconstruction loss) is below 0.5 x that of the train set's mean
# image (~0.70: any model that ignores its input does no better; the untrained model: ~2.4)
all_reconstructions = trained_vqvae_model.predict(x_test_scaled, verbose=0)
test_loss = float(np.mean((x_test_scaled - all_reconstructions) ** 2) / data_variance)
mean_image_loss = float(np.mean((x_test_scaled - x_train_scaled.mean(axis=0)) ** 2) / data_variance)
print(f"test reconstruction loss {test_loss:.3f}, the mean image's {mean_image_loss:.3f}")
assert SHORT or test_loss < 0.55 * mean_image_loss, (test_loss, mean_image_loss)

"""
## Visualizing the discrete codes
"""

encoder = vqvae_trainer.vqvae.get_layer("encoder")
quantizer = vqvae_trainer.vqvae.get_layer("vector_quantizer")

encoded_outputs = encoder.predict(test_images)
flat_enc_outputs = encoded_outputs.reshape(-1, encoded_outputs.shape[-1])
codebook_indices = quantizer.get_code_indices(flat_enc_outputs)
codebook_indices = codebook_indices.numpy().reshape(encoded_outputs.shape[:-1])

# Added: the codes are numpy's nearest codebook columns, and the VQ-VAE is the decoder of
# those columns (the straight-through output equals the quantized latents)
trained_codebook = quantizer.embeddings.numpy()
assert encoded_outputs.shape == (10, 7, 7, 16) and codebook_indices.shape == (10, 7, 7)
np.testing.assert_array_equal(codebook_indices, (
    (flat_enc_outputs[:, :, None] - trained_codebook[None]) ** 2).sum(axis=1).argmin(axis=1)
    .reshape(10, 7, 7))
decoded_codes = vqvae_trainer.vqvae.get_layer("decoder").predict(
    trained_codebook[:, codebook_indices].transpose(1, 2, 3, 0), verbose=0)
np.testing.assert_allclose(reconstructions_test, decoded_codes, rtol=1e-4, atol=1e-5)
# and, called eagerly, the model's one loss is the quantizer's (1 + beta) x the mean squared
# distance of the latents to their codes
trained_vqvae_model(test_images)
nearest = trained_codebook[:, codebook_indices].transpose(1, 2, 3, 0)
np.testing.assert_allclose([float(v) for v in trained_vqvae_model.losses],
                           [1.25 * np.mean((nearest - encoded_outputs) ** 2)], rtol=1e-4)

"""
## PixelCNN hyperparameters
"""

num_residual_blocks = 2
num_pixelcnn_layers = 2
pixelcnn_input_shape = encoded_outputs.shape[1:-1]
print(f"Input shape of the PixelCNN: {pixelcnn_input_shape}")

"""
## PixelCNN model
"""


# The first layer is the PixelCNN layer. This layer simply
# builds on the 2D convolutional layer, but includes masking.
class PixelConvLayer(layers.Layer):
    def __init__(self, mask_type, **kwargs):
        super(PixelConvLayer, self).__init__()  # noqa: UP008
        self.mask_type = mask_type
        self.conv = layers.Conv2D(**kwargs)

    def build(self, input_shape):
        # Build the conv2d layer to initialize kernel variables
        self.conv.build(input_shape)
        # Use the initialized kernel to create the mask
        kernel_shape = self.conv.kernel.get_shape()
        self.mask = np.zeros(shape=kernel_shape)
        self.mask[: kernel_shape[0] // 2, ...] = 1.0
        self.mask[kernel_shape[0] // 2, : kernel_shape[1] // 2, ...] = 1.0
        if self.mask_type == "B":
            self.mask[kernel_shape[0] // 2, kernel_shape[1] // 2, ...] = 1.0

    def call(self, inputs):
        self.conv.kernel.assign(self.conv.kernel * self.mask)
        return self.conv(inputs)


# Next, we build our residual block layer.
# This is just a normal residual block, but based on the PixelConvLayer.
class ResidualBlock(keras.layers.Layer):
    def __init__(self, filters, **kwargs):
        super(ResidualBlock, self).__init__(**kwargs)  # noqa: UP008
        self.conv1 = keras.layers.Conv2D(
            filters=filters, kernel_size=1, activation="relu"
        )
        self.pixel_conv = PixelConvLayer(
            mask_type="B",
            filters=filters // 2,
            kernel_size=3,
            activation="relu",
            padding="same",
        )
        self.conv2 = keras.layers.Conv2D(
            filters=filters, kernel_size=1, activation="relu"
        )

    def call(self, inputs):
        x = self.conv1(inputs)
        x = self.pixel_conv(x)
        x = self.conv2(x)
        return keras.layers.add([inputs, x])


pixelcnn_inputs = keras.Input(shape=pixelcnn_input_shape, dtype=tf.int32)
ohe = tf.one_hot(pixelcnn_inputs, vqvae_trainer.num_embeddings)
x = PixelConvLayer(
    mask_type="A", filters=PCNN_FILTERS, kernel_size=7, activation="relu", padding="same"
)(ohe)

for _ in range(num_residual_blocks):
    x = ResidualBlock(filters=PCNN_FILTERS)(x)

for _ in range(num_pixelcnn_layers):
    x = PixelConvLayer(
        mask_type="B",
        filters=PCNN_FILTERS,
        kernel_size=1,
        strides=1,
        activation="relu",
        padding="valid",
    )(x)

out = keras.layers.Conv2D(
    filters=vqvae_trainer.num_embeddings, kernel_size=1, strides=1, padding="valid"
)(x)

pixel_cnn = keras.Model(pixelcnn_inputs, out, name="pixel_cnn")
pixel_cnn.summary()

# Added: the shapes and the parameter count of the architecture (upstream's summary:
# 1,049,728 at 128 filters); the first layer's kernel is 0 from the centre on
F, K = PCNN_FILTERS, vqvae_trainer.num_embeddings
assert pixel_cnn.input_shape == (None, 7, 7) and pixel_cnn.output_shape == (None, 7, 7, K)
expected_params = (7 * 7 * K * F + F) + num_residual_blocks * (
    (F * F + F) + (3 * 3 * F * (F // 2) + F // 2) + ((F // 2) * F + F)
) + num_pixelcnn_layers * (F * F + F) + (F * K + K)
assert pixel_cnn.count_params() == expected_params, (pixel_cnn.count_params(), expected_params)
assert not FULL or expected_params == 1049728
first_pixel_layer = [la for la in pixel_cnn.layers if isinstance(la, PixelConvLayer)][0]
first_kernel = first_pixel_layer.conv.kernel.numpy().reshape(49, K, F)
assert not np.any(first_kernel[24:]) and np.all(np.any(first_kernel[:24], axis=(1, 2)))

"""
## Prepare data to train the PixelCNN
"""

# Generate the codebook indices.
encoded_outputs = encoder.predict(x_train_scaled)
flat_enc_outputs = encoded_outputs.reshape(-1, encoded_outputs.shape[-1])
codebook_indices = quantizer.get_code_indices(flat_enc_outputs)

codebook_indices = codebook_indices.numpy().reshape(encoded_outputs.shape[:-1])
print(f"Shape of the training data for PixelCNN: {codebook_indices.shape}")

# Added: int64 codes (tf.argmin's default), numpy's nearest columns; how many are used
assert codebook_indices.shape == (N_TRAIN, 7, 7) and codebook_indices.dtype == np.int64
np.testing.assert_array_equal(codebook_indices[:64], (
    (flat_enc_outputs[:64 * 49, :, None] - trained_codebook[None]) ** 2).sum(axis=1)
    .argmin(axis=1).reshape(64, 7, 7))
used_codes = np.unique(codebook_indices)
print(f"{len(used_codes)} of the {K} codes are used")

# Added: the model is causal: changing the code at position p and every later one (raster
# order) leaves the logits at p and before it unchanged, and changes later ones
probe_codes = codebook_indices[:4]
before = pixel_cnn.predict(probe_codes, verbose=0)
assert before.shape == (4, 7, 7, K) and before.dtype == np.float32, (before.shape, before.dtype)
for p in (0, 10, 24, 48):
    changed = probe_codes.reshape(4, -1).copy()
    changed[:, p:] = (changed[:, p:] + 1 + np.arange(49 - p)) % K
    after = pixel_cnn.predict(changed.reshape(4, 7, 7), verbose=0).reshape(4, 49, K)
    np.testing.assert_allclose(after[:, :p + 1], before.reshape(4, 49, K)[:, :p + 1],
                               rtol=0, atol=1e-5)
    assert p == 48 or np.abs(after[:, p + 1:] - before.reshape(4, 49, K)[:, p + 1:]).max() > 1e-5

"""
## PixelCNN training
"""

pixel_cnn.compile(
    optimizer=keras.optimizers.Adam(3e-4),
    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"],
)

# Added: evaluate() of the part fit keeps apart (the last 10%) is numpy's sparse categorical
# cross-entropy of the logits and, "accuracy" with that loss meaning Keras's
# sparse_categorical_accuracy, the share of argmax hits
val_codes = codebook_indices[int(len(codebook_indices) * (1 - 0.1)):]


def numpy_scores(codes):
    logits = pixel_cnn.predict(codes, verbose=0).astype(np.float64)
    logp = logits - logits.max(-1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(-1, keepdims=True))
    nll = -np.take_along_axis(logp, codes[..., None], -1).mean()
    return nll, np.mean(logits.argmax(-1) == codes)


untrained = pixel_cnn.evaluate(val_codes, val_codes, verbose=0)
np.testing.assert_allclose(untrained, numpy_scores(val_codes), rtol=1e-4)

ph = pixel_cnn.fit(  # added: ph =
    x=codebook_indices,
    y=codebook_indices,
    batch_size=PCNN_BATCH,
    epochs=PCNN_EPOCHS,
    validation_split=0.1,
)

# Added: History has loss/accuracy and their val_ twins per epoch; the last val_ pair is
# evaluate() of the last 10%, numpy's; (CPU run) the validation loss is below 0.8 x the mean
# entropy of the validation codes' per-position frequencies, the least loss any model that
# ignores the codes above and to the left reaches on them (untrained: ln 128 = 4.85)
print({k: [round(v, 4) for v in vals] for k, vals in ph.history.items()})
assert set(ph.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}, ph.history.keys()
assert all(len(v) == PCNN_EPOCHS for v in ph.history.values())
trained = numpy_scores(val_codes)
np.testing.assert_allclose(pixel_cnn.evaluate(val_codes, val_codes, verbose=0), trained, rtol=1e-4)
np.testing.assert_allclose([ph.history["val_loss"][-1], ph.history["val_accuracy"][-1]], trained,
                           rtol=1e-4)
freq = np.stack([np.mean(val_codes == k, axis=0) for k in used_codes])
context_free = float(-np.sum(freq * np.log(np.where(freq > 0, freq, 1)), axis=0).mean())
print(f"validation loss untrained {untrained[0]:.3f}, trained {trained[0]:.3f}, "
      f"context-free best {context_free:.3f}")
context_free_accuracy = float(freq.max(axis=0).mean())
assert SHORT or trained[0] < 0.95 * context_free, (trained, context_free)
assert SHORT or trained[1] > context_free_accuracy + 0.01, (trained, context_free_accuracy)

"""
## Codebook sampling
"""

# Create a mini sampler model.
inputs = layers.Input(shape=pixel_cnn.input_shape[1:])
outputs = pixel_cnn(inputs, training=False)
# GAP 1: categorical_layer = tfp.layers.DistributionLambda(tfp.distributions.Categorical)
categorical_layer = layers.Lambda(lambda logits: tf.reshape(tf.random.categorical(
    tf.reshape(logits, [-1, logits.shape[-1]]), 1, dtype=tf.int32), tf.shape(logits)[:-1]))
outputs = categorical_layer(outputs)
sampler = keras.Model(inputs, outputs)

# Added: the sampler draws codes with the softmax of the logits (20,000 draws from known
# logits: each frequency within 0.015 of its probability)
known = np.log(np.array([0.5, 0.3, 0.15] + [0.05 / (K - 3)] * (K - 3), np.float32))
draws = categorical_layer(np.tile(known, (200, 10, 10, 1))).numpy()
assert draws.shape == (200, 10, 10) and draws.dtype == np.int32, (draws.shape, draws.dtype)
np.testing.assert_allclose(np.bincount(draws.ravel(), minlength=K)[:4] / draws.size,
                           [0.5, 0.3, 0.15, 0.05 / (K - 3)], atol=0.015)

"""
We now construct a prior to generate images. Here, we will generate 10 images.
"""

# Create an empty array of priors.
batch = 10
priors = np.zeros(shape=(batch,) + (pixel_cnn.input_shape)[1:])
batch, rows, cols = priors.shape

# Iterate over the priors because generation has to be done sequentially pixel by pixel.
for row in range(rows):
    for col in range(cols):
        # Feed the whole array and retrieving the pixel value probabilities for the next
        # pixel.
        probs = sampler.predict(priors)
        # Use the probabilities to pick pixel values and append the values to the priors.
        priors[:, row, col] = probs[:, row, col]

print(f"Prior shape: {priors.shape}")

# Added: the priors are codes; (CPU run) drawn as the data's: 95% of them are codes the data
# uses (an untrained model draws any of the 128) and the share of the data's commonest code
# is within 0.15 of its share in the data
assert priors.shape == (10, 7, 7) and np.all(priors == np.round(priors)), priors.shape
assert priors.min() >= 0 and priors.max() < K, (priors.min(), priors.max())
commonest = np.bincount(codebook_indices.ravel()).argmax()
print(f"sampled: {np.mean(np.isin(priors, used_codes)):.3f} used codes, "
      f"{np.mean(priors == commonest):.3f} of the commonest (data: "
      f"{np.mean(codebook_indices == commonest):.3f})")
assert SHORT or np.mean(np.isin(priors, used_codes)) >= 0.95, np.unique(priors)
assert SHORT or abs(np.mean(priors == commonest) - np.mean(codebook_indices == commonest)) < 0.15

"""
We can now use our decoder to generate the images.
"""

# Perform an embedding lookup.
pretrained_embeddings = quantizer.embeddings
priors_ohe = tf.one_hot(priors.astype("int32"), vqvae_trainer.num_embeddings).numpy()
quantized = tf.matmul(
    priors_ohe.astype("float32"), pretrained_embeddings, transpose_b=True
)
quantized = tf.reshape(quantized, (-1, *(encoded_outputs.shape[1:])))

# Generate novel images.
decoder = vqvae_trainer.vqvae.get_layer("decoder")
generated_samples = decoder.predict(quantized)

# (the matplotlib figures are dropped)

# Added: the lookup is the codebook's columns at the priors; the decoded images' shape
np.testing.assert_allclose(quantized.numpy(),
                           trained_codebook[:, priors.astype(int)].transpose(1, 2, 3, 0),
                           rtol=1e-6)
assert generated_samples.shape == (10, 28, 28, 1) and np.all(np.isfinite(generated_samples))
