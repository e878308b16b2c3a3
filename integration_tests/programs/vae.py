"""Port of keras-team/keras-io examples/generative/vae.py ("Variational AutoEncoder", the
Keras 3 version, last modified 2024/04/24): a Sampling layer (the reparameterization trick,
epsilon from keras.random.normal with a SeedGenerator), a functional convolutional encoder
with three outputs (z_mean, z_log_var, z), a functional Conv2DTranspose decoder, a
keras.Model subclass with Mean trackers behind an overridden `metrics` property and a
custom train_step (GradientTape over binary cross-entropy summed over the pixels plus the
KL divergence), trained with Adam on all MNIST digits; then a grid of decoded latent points
and the encoder's z_mean of labelled digits.

Upstream: https://github.com/keras-team/keras-io/blob/67e2c7062095bcae4746153831a1ac547abb9b42/examples/generative/vae.py
Changed: names only (keras -> nn, keras.layers -> nn.layers, keras.ops -> ember.nn.ops,
imported as upstream does (`from ember.nn import ops`), keras.random -> nn.random,
tf.GradientTape -> ember.tape.GradientTape); keras.datasets.mnist.load_data() ->
ember.data.datasets.mnist(data_dir=...) (the real MNIST, found as mnist_convnet.py finds
it), kept uint8 as load_data() gives it. The matplotlib figures are not drawn: the two
plot functions compute what they would show and return it. Reduced
(EMBER_PROGRAMS_FULL=1 restores upstream: 60,000 + 10,000 digits, 30 epochs, a 30x30
latent grid, all 60,000 labelled digits): 3,072 + 1,024 digits, 4 epochs, a 5x5 grid,
2,000 labelled digits; EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 256 + 128 digits,
2 epochs, a 3x3 grid, 300 labelled digits, no check on what training reached.
Added: a seed; the parameter counts upstream's summaries print (encoder 69,076, decoder
65,089); the encoder's three outputs are (n, 2); Sampling's z has mean z_mean and
standard deviation exp(z_log_var / 2); binary_crossentropy of a batch averages the last
axis (shape (n, 28, 28)) and equals numpy's clipped formula; train_step gets the images
themselves (fit(x) with no y), so the logged losses are per image; fit's History has the
keys train_step returns (loss, reconstruction_loss, kl_loss: Keras 3 keeps the last step's
logs when they do not match the metrics' names) and, each epoch, loss equals
reconstruction_loss + kl_loss; the trackers are reset every epoch (count = steps per
epoch); the KL term is finite and positive; (CPU run) the reconstruction loss falls from
the first epoch to the last and below 0.8 x its untrained value (784 ln 2 ~ 543); decoded
grid digits are (1, 28, 28, 1) in [0, 1]; (CPU run) the digits' z_mean separate the
classes at twice chance at least (nearest class mean > 20%; Keras 3 on the torch backend,
same data and steps, gives the same losses within 2%, with the same early collapse of
the KL term).
Found (both fixed in ember since the first version of this port; upstream's lines are
restored and no GAP remains): ember.nn had no `random` module (keras.random.SeedGenerator,
keras.random.normal(seed=...): GAP 1, em.random.normal on the global seed stood in; now
nn.random.SeedGenerator and nn.random.normal); fit(x) with no y handed train_step a
1-tuple (x,) where Keras 3 hands it x, so upstream's train_step raised in
binary_crossentropy (GAP 2, unwrapped by hand; now fit hands it x, which is checked).
"""

import math
import os
import pathlib
import unittest

import numpy as np

import ember.core as em
from ember import data, nn
from ember import tape as tape_lib
from ember.nn import layers, ops

keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)
N_TRAIN, N_TEST = (60000, 10000) if FULL else (256, 128) if SHORT else (3072, 1024)


def load_data():
    """keras.datasets.mnist.load_data(), in its layout (uint8 (n, 28, 28) images, uint8
    labels), from the real MNIST files."""
    def split(name, n):
        x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
        return ((np.asarray(x).reshape(-1, 28, 28) * 255).round().astype(np.uint8),
                np.asarray(y).astype(np.uint8))
    return split("train", N_TRAIN), split("test", N_TEST)


"""
## Create a sampling layer
"""


class Sampling(layers.Layer):
    """Uses (z_mean, z_log_var) to sample z, the vector encoding a digit."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seed_generator = keras.random.SeedGenerator(1337)

    def call(self, inputs):
        z_mean, z_log_var = inputs
        batch = ops.shape(z_mean)[0]
        dim = ops.shape(z_mean)[1]
        epsilon = keras.random.normal(shape=(batch, dim), seed=self.seed_generator)
        return z_mean + ops.exp(0.5 * z_log_var) * epsilon


"""
## Build the encoder
"""

latent_dim = 2

encoder_inputs = keras.Input(shape=(28, 28, 1))
x = layers.Conv2D(32, 3, activation="relu", strides=2, padding="same")(encoder_inputs)
x = layers.Conv2D(64, 3, activation="relu", strides=2, padding="same")(x)
x = layers.Flatten()(x)
x = layers.Dense(16, activation="relu")(x)
z_mean = layers.Dense(latent_dim, name="z_mean")(x)
z_log_var = layers.Dense(latent_dim, name="z_log_var")(x)
z = Sampling()([z_mean, z_log_var])
encoder = keras.Model(encoder_inputs, [z_mean, z_log_var, z], name="encoder")
encoder.summary()
assert encoder.count_params() == 69076, encoder.count_params()  # upstream's summary

"""
## Build the decoder
"""

latent_inputs = keras.Input(shape=(latent_dim,))
x = layers.Dense(7 * 7 * 64, activation="relu")(latent_inputs)
x = layers.Reshape((7, 7, 64))(x)
x = layers.Conv2DTranspose(64, 3, activation="relu", strides=2, padding="same")(x)
x = layers.Conv2DTranspose(32, 3, activation="relu", strides=2, padding="same")(x)
decoder_outputs = layers.Conv2DTranspose(1, 3, activation="sigmoid", padding="same")(x)
decoder = keras.Model(latent_inputs, decoder_outputs, name="decoder")
decoder.summary()
assert decoder.count_params() == 65089, decoder.count_params()  # upstream's summary

"""
## Define the VAE as a `Model` with a custom `train_step`
"""

seen_batches = []  # added: what fit hands train_step


class VAE(keras.Model):
    def __init__(self, encoder, decoder, **kwargs):
        super().__init__(**kwargs)
        self.encoder = encoder
        self.decoder = decoder
        self.total_loss_tracker = keras.metrics.Mean(name="total_loss")
        self.reconstruction_loss_tracker = keras.metrics.Mean(
            name="reconstruction_loss"
        )
        self.kl_loss_tracker = keras.metrics.Mean(name="kl_loss")

    @property
    def metrics(self):
        return [
            self.total_loss_tracker,
            self.reconstruction_loss_tracker,
            self.kl_loss_tracker,
        ]

    def train_step(self, data):
        seen_batches.append(type(data).__name__)  # added
        with tape_lib.GradientTape() as tape:
            z_mean, z_log_var, z = self.encoder(data)
            reconstruction = self.decoder(z)
            reconstruction_loss = ops.mean(
                ops.sum(
                    keras.losses.binary_crossentropy(data, reconstruction),
                    axis=(1, 2),
                )
            )
            kl_loss = -0.5 * (1 + z_log_var - ops.square(z_mean) - ops.exp(z_log_var))
            kl_loss = ops.mean(ops.sum(kl_loss, axis=1))
            total_loss = reconstruction_loss + kl_loss
        grads = tape.gradient(total_loss, self.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
        self.total_loss_tracker.update_state(total_loss)
        self.reconstruction_loss_tracker.update_state(reconstruction_loss)
        self.kl_loss_tracker.update_state(kl_loss)
        return {
            "loss": self.total_loss_tracker.result(),
            "reconstruction_loss": self.reconstruction_loss_tracker.result(),
            "kl_loss": self.kl_loss_tracker.result(),
        }


"""
## Added: the pieces, before training
"""

# Sampling: z = z_mean + exp(z_log_var / 2) * epsilon, epsilon ~ N(0, 1)
zs = Sampling()([ops.full((20000, 2), 3.0), ops.full((20000, 2), math.log(4.0))]).numpy()
assert zs.shape == (20000, 2)
np.testing.assert_allclose(zs.mean(0), [3.0, 3.0], atol=0.05)
np.testing.assert_allclose(zs.std(0), [2.0, 2.0], atol=0.05)

# the encoder's three outputs, the decoder's images
(x_train, _), (x_test, _) = load_data()
probe = np.expand_dims(x_train[:5], -1).astype("float32") / 255
outs = encoder(probe)
assert isinstance(outs, (list, tuple)) and len(outs) == 3
assert [tuple(o.shape) for o in outs] == [(5, 2)] * 3, [o.shape for o in outs]
recon = decoder(outs[2])
assert recon.shape == (5, 28, 28, 1), recon.shape
# keras.losses.binary_crossentropy: the mean over the last axis of the clipped formula
bce = keras.losses.binary_crossentropy(probe, recon)
assert bce.shape == (5, 28, 28), bce.shape
p = np.clip(recon.numpy().astype(np.float64), 1e-7, 1 - 1e-7)
by_hand = -(probe * np.log(p) + (1 - probe) * np.log(1 - p)).mean(-1)
np.testing.assert_allclose(bce.numpy(), by_hand, rtol=1e-4, atol=1e-6)
untrained = float(np.mean(by_hand.sum((1, 2))))
print("untrained reconstruction loss:", untrained, "(784 ln 2 =", 784 * math.log(2), ")")

"""
## Train the VAE
"""

mnist_digits = np.concatenate([x_train, x_test], axis=0)
mnist_digits = np.expand_dims(mnist_digits, -1).astype("float32") / 255

vae = VAE(encoder, decoder)
vae.compile(optimizer=keras.optimizers.Adam())
epochs = 30 if FULL else 2 if SHORT else 4
history = vae.fit(mnist_digits, epochs=epochs, batch_size=128)

"""
## Added: what training did
"""

steps = math.ceil(len(mnist_digits) / 128)
print(history.history)
# fit(x) with no y: Keras 3 hands train_step the batch of images itself, not a 1-tuple
assert set(seen_batches) - {"tuple", "list"}, seen_batches[:3]
assert set(history.history) == {"loss", "reconstruction_loss", "kl_loss"}, history.history.keys()
rec = history.history["reconstruction_loss"]
kl = history.history["kl_loss"]
assert len(rec) == epochs
for lo, r, k in zip(history.history["loss"], rec, kl):
    np.testing.assert_allclose(lo, r + k, rtol=1e-5)
    assert math.isfinite(k) and k > 0.0, k
assert [m.name for m in vae.metrics] == ["total_loss", "reconstruction_loss", "kl_loss"]
assert int(vae.total_loss_tracker.count) == steps, int(vae.total_loss_tracker.count)
assert len(vae.trainable_weights) == len(encoder.trainable_weights) + len(decoder.trainable_weights)
# per image: between 0 and the untrained 784 ln 2 (a 1-tuple batch would sum otherwise)
assert 0.0 < rec[-1] < 1.1 * 784 * math.log(2), rec
assert SHORT or rec[-1] < rec[0], rec
assert SHORT or rec[-1] < 0.8 * untrained, (rec, untrained)

"""
## Display a grid of sampled digits (computed, not drawn)
"""


def plot_latent_space(vae, n=30, figsize=15):
    # display a n*n 2D manifold of digits
    digit_size = 28
    scale = 1.0
    figure = np.zeros((digit_size * n, digit_size * n))
    # linearly spaced coordinates corresponding to the 2D plot
    # of digit classes in the latent space
    grid_x = np.linspace(-scale, scale, n)
    grid_y = np.linspace(-scale, scale, n)[::-1]

    for i, yi in enumerate(grid_y):
        for j, xi in enumerate(grid_x):
            z_sample = np.array([[xi, yi]])
            x_decoded = vae.decoder.predict(z_sample, verbose=0)
            assert x_decoded.shape == (1, 28, 28, 1), x_decoded.shape  # added
            digit = x_decoded[0].reshape(digit_size, digit_size)
            figure[
                i * digit_size : (i + 1) * digit_size,
                j * digit_size : (j + 1) * digit_size,
            ] = digit

    return figure  # upstream: plt.imshow(figure, cmap="Greys_r"), with ticks


grid_n = 30 if FULL else 3 if SHORT else 5
figure = plot_latent_space(vae, n=grid_n)
assert figure.shape == (28 * grid_n, 28 * grid_n)
assert figure.min() >= 0.0 and figure.max() <= 1.0
assert figure.std() > 0.0  # the grid's digits are not all blank

"""
## Display how the latent space clusters different digit classes (computed, not drawn)
"""


def plot_label_clusters(vae, data, labels):
    # display a 2D plot of the digit classes in the latent space
    z_mean, _, _ = vae.encoder.predict(data, verbose=0)
    return z_mean  # upstream: plt.scatter(z_mean[:, 0], z_mean[:, 1], c=labels)


(x_train, y_train), _ = load_data()
n_labelled = 60000 if FULL else 300 if SHORT else 2000
x_train, y_train = x_train[:n_labelled], y_train[:n_labelled]
x_train = np.expand_dims(x_train, -1).astype("float32") / 255

z_labelled = plot_label_clusters(vae, x_train, y_train)
assert z_labelled.shape == (len(x_train), 2), z_labelled.shape
centroids = np.stack([z_labelled[y_train == c].mean(0) for c in range(10)])
nearest = np.argmin(((z_labelled[:, None, :] - centroids[None]) ** 2).sum(-1), axis=1)
cluster_accuracy = float(np.mean(nearest == y_train))
print("nearest-class-mean accuracy in the latent space:", cluster_accuracy)
assert SHORT or cluster_accuracy > 0.2, cluster_accuracy
print("VAE: OK")
