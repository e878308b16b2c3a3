"""Port of keras-team/keras-io examples/generative/conditional_gan.py ("Conditional GAN",
the tf.keras version, last modified 2021/07/15): MNIST digits and their one-hot labels
(keras.utils.to_categorical) in a shuffled, batched Dataset; a Sequential discriminator
(InputLayer, strided Conv2D + LeakyReLU(alpha=0.2), GlobalMaxPooling2D, Dense(1)) reading
the image with its label broadcast over 10 extra channels (tf.repeat + tf.reshape), and a
Sequential generator (Dense, LeakyReLU, Reshape, two strided Conv2DTranspose, a sigmoid
Conv2D) reading the noise with the label appended; a keras.Model subclass overriding
compile(), the `metrics` property (two keras.metrics.Mean trackers) and train_step() (one
discriminator step on fakes and reals, one generator step through the discriminator, each
with its own GradientTape and Adam), trained with fit(); then the trained generator's
class interpolation (tf.linspace between two one-hot labels, predict()), scaled to uint8,
resized to 96x96 (tf.image.resize) and written as an animated GIF. (keras-io's master has
since moved this example to Keras 3: keras.ops and a keras.random.SeedGenerator.)

Upstream: https://github.com/keras-team/keras-io/blob/2dd71c68bd2a1ebbe588f3571571abcb16d96c27/examples/generative/conditional_gan.py
Changed: names only (keras -> nn, keras.layers -> nn.layers, keras.Sequential/Model ->
nn.Sequential/Model, keras.metrics.Mean -> nn.metrics.Mean, keras.optimizers.Adam ->
nn.optimizers.Adam, keras.losses.BinaryCrossentropy -> nn.losses.BinaryCrossentropy,
keras.utils.to_categorical -> nn.utils.to_categorical, tf.data.Dataset -> data.Dataset,
tf.GradientTape -> ember.tape.GradientTape, tf.reshape/shape/concat/ones/zeros/linspace/
cast/float32, tf.repeat, tf.image.resize and tf.random.normal -> em.*. keras.datasets.mnist.load_data() ->
ember.data.datasets.mnist (train and test, kept uint8 as load_data() gives them).
imageio is not installed: PIL writes the GIF (imageio.mimsave's fps=1 -> 1,000 ms a frame),
into a temporary directory (upstream: the working directory); the notebook display
(tensorflow_docs.vis.embed) and the unused matplotlib import are dropped. The tape variable
is `tape` as upstream's; the module is imported as tape_lib.
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream: all 70,000 digits, 20 epochs, filters
64/128 in the discriminator and 128/128 in the generator): 1,536 training + 512 test
digits, 4 epochs, every filter count divided by 4 (the generator's Dense and Reshape keep
upstream's 7*7*138, the noise its 128 dimensions); EMBER_PROGRAMS_SHORT=1 (the strict-GPU
run): 128 + 64 digits, 1 epoch, every filter count divided by 8, no check on what
training reached.
Added: a seed for numpy and ember; the data's shapes, ranges and one-hot rows; both models'
output shapes and parameter counts (against Keras's formulas; upstream's widths under
FULL: 80,385 and 1,491,215); the label maps that train_step builds with tf.repeat and
tf.reshape against numpy's np.repeat (TF's tf.repeat with no axis flattens first: so,
as upstream really computes, channel c at pixel p holds label (10p + c) // 784 of the
one-hot row, a striped map, not the label repeated per channel); BinaryCrossentropy
(from_logits=True) and Mean against numpy; fit's History holds the returned g_loss and
d_loss only (tf.keras logs train_step's dict), each epoch's value is the trackers' mean
over that epoch (the `metrics` property lets fit reset them each epoch: count == steps of
one epoch); every batch's loss is finite and positive; both models' weights move; the
trained generator and discriminator against a float64 numpy forward pass (TF's "same"
padding, with a strided Conv2D's odd padding pixel last, and Conv2DTranspose as that
convolution's gradient); (CPU run) training reaches what an untrained or broken model
does not, so both halves of train_step must work: the generator's mean |pixel - 0.5|
passes 0.1 (untrained, a sigmoid of near-zero outputs: ~0.005, and so it stays if the
generator's update is lost; real digits, mostly black: 0.47; 0.24-0.50 after 4 epochs in
trials with 5 seeds), and the discriminator's loss, averaged over an epoch, gets below
0.67 in some epoch (log(2) = 0.693 is a discriminator no better than chance; the 5 seeds
gave 0.48-0.64, while a discriminator whose update is lost climbs to 0.72-0.78 as the
generator learns to fool it); the interpolation noise and labels against numpy
(tf.repeat's flattening again: the 9 noise rows are not copies of one vector), predict()
against calling the generator, the 96x96 resize against a numpy bilinear resize (TF 2's
half-pixel centres), and the GIF's frames (9 unless two in a row are equal).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it):
3. em.linspace(0, 1, 9) is float32 where
tf.linspace of Python ints is float64 (TF divides the int32 difference, then recasts to
the quotient's dtype): silent, harmless here as upstream casts to float32 next.
Fixed in ember since the first version of this port: no tf.image.resize (GAP 4,
AttributeError; nn.ops.image.resize stood in, on a float32 copy); no em.repeat (GAP 2, tf.repeat:
AttributeError); Model.predict (and predict_on_batch) returned a read-only numpy array
where Keras returns a writable one, so upstream's `fake_images *= 255.0` raised
"ValueError: output array is read-only" (GAP 5); keras.utils.to_categorical returned float64
(GAP 1, silent; Keras 3's numpy path) where tf.keras, which this upstream uses, returns
float32, as ember's now does. Upstream's lines are restored.
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
"""

import math
import os
import pathlib
import tempfile
import unittest

import numpy as np
from PIL import Image

import ember.core as em
from ember import data, nn
from ember import tape as tape_lib

keras = nn  # the example's `keras.` prefix
layers = nn.layers
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
np.random.seed(0)
em.random.set_seed(0)
workdir = tempfile.TemporaryDirectory()
W = 1 if FULL else 8 if SHORT else 4  # the width divisor: every filter count is divided by it
N_TRAIN, N_TEST = (60000, 10000) if FULL else (128, 64) if SHORT else (1536, 512)
EPOCHS = 20 if FULL else 1 if SHORT else 4


def load_data():
    """keras.datasets.mnist.load_data() in its layout (uint8 (n, 28, 28) images, uint8
    labels), the first N_TRAIN and N_TEST digits."""
    def split(name, n):
        x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
        images = (np.asarray(x).reshape(-1, 28, 28) * 255).round().astype(np.uint8)
        return images, np.asarray(y).astype(np.uint8)
    return split("train", N_TRAIN), split("test", N_TEST)


"""
## Constants and hyperparameters
"""

batch_size = 64
num_channels = 1
num_classes = 10
image_size = 28
latent_dim = 128

"""
## Loading the MNIST dataset and preprocessing it
"""

# We'll use all the available examples from both the training and test
# sets.
(x_train, y_train), (x_test, y_test) = load_data()
all_digits = np.concatenate([x_train, x_test])
all_labels = np.concatenate([y_train, y_test])
raw_labels = all_labels  # added: for the checks

# Scale the pixel values to [0, 1] range, add a channel dimension to
# the images, and one-hot encode the labels.
all_digits = all_digits.astype("float32") / 255.0
all_digits = np.reshape(all_digits, (-1, 28, 28, 1))
all_labels = keras.utils.to_categorical(all_labels, 10)
assert all_labels.dtype == np.float32  # added: tf.keras's default dtype

# Create tf.data.Dataset.
dataset = data.Dataset.from_tensor_slices((all_digits, all_labels))
dataset = dataset.shuffle(buffer_size=1024).batch(batch_size)

print(f"Shape of training images: {all_digits.shape}")
print(f"Shape of training labels: {all_labels.shape}")

n_all = N_TRAIN + N_TEST
assert all_digits.shape == (n_all, 28, 28, 1) and all_digits.dtype == np.float32
assert all_digits.min() == 0.0 and all_digits.max() == 1.0
assert all_labels.shape == (n_all, 10) and all_labels.dtype == np.float32
np.testing.assert_array_equal(all_labels, np.eye(10, dtype=np.float32)[raw_labels])
first_x, first_y = next(iter(dataset))
assert first_x.shape == (batch_size, 28, 28, 1) and first_y.shape == (batch_size, 10)

"""
## Calculating the number of input channel for the generator and discriminator
"""

generator_in_channels = latent_dim + num_classes
discriminator_in_channels = num_channels + num_classes
print(generator_in_channels, discriminator_in_channels)
assert (generator_in_channels, discriminator_in_channels) == (138, 11)

"""
## Creating the discriminator and generator
"""

# Create the discriminator.
discriminator = keras.Sequential(
    [
        keras.layers.InputLayer((28, 28, discriminator_in_channels)),
        layers.Conv2D(64 // W, (3, 3), strides=(2, 2), padding="same"),
        layers.LeakyReLU(alpha=0.2),
        layers.Conv2D(128 // W, (3, 3), strides=(2, 2), padding="same"),
        layers.LeakyReLU(alpha=0.2),
        layers.GlobalMaxPooling2D(),
        layers.Dense(1),
    ],
    name="discriminator",
)

# Create the generator.
generator = keras.Sequential(
    [
        keras.layers.InputLayer((generator_in_channels,)),
        # We want to generate 128 + num_classes coefficients to reshape into a
        # 7x7x(128 + num_classes) map.
        layers.Dense(7 * 7 * generator_in_channels),
        layers.LeakyReLU(alpha=0.2),
        layers.Reshape((7, 7, generator_in_channels)),
        layers.Conv2DTranspose(128 // W, (4, 4), strides=(2, 2), padding="same"),
        layers.LeakyReLU(alpha=0.2),
        layers.Conv2DTranspose(128 // W, (4, 4), strides=(2, 2), padding="same"),
        layers.LeakyReLU(alpha=0.2),
        layers.Conv2D(1, (7, 7), padding="same", activation="sigmoid"),
    ],
    name="generator",
)


def resize_bilinear(images, height, width):
    """Added: tf.image.resize's default (bilinear, half-pixel centres) of NHWC images, in
    numpy."""
    def axis(n_out, n_in):
        x = np.clip((np.arange(n_out) + 0.5) * n_in / n_out - 0.5, 0, n_in - 1)
        lo = np.floor(x).astype(int)
        return lo, np.minimum(lo + 1, n_in - 1), x - lo
    y0, y1, fy = axis(height, images.shape[1])
    x0, x1, fx = axis(width, images.shape[2])
    fy, fx = fy[None, :, None, None], fx[None, None, :, None]
    top = images[:, y0][:, :, x0] * (1 - fx) + images[:, y0][:, :, x1] * fx
    bottom = images[:, y1][:, :, x0] * (1 - fx) + images[:, y1][:, :, x1] * fx
    return top * (1 - fy) + bottom * fy


def same_padding(size, k, stride):
    """TF's "same" padding (before, after) of one axis: the odd pixel goes after."""
    total = max((math.ceil(size / stride) - 1) * stride + k - size, 0)
    return total // 2, total - total // 2


def np_conv(x, kernel, bias, stride):
    """Added: Conv2D(padding="same") in float64 numpy: x (n, h, w, c_in), kernel
    (k, k, c_in, c_out)."""
    k, out = kernel.shape[0], math.ceil(x.shape[1] / stride)
    pad = same_padding(x.shape[1], k, stride)
    xp = np.pad(x, ((0, 0), pad, pad, (0, 0)))
    y = sum(xp[:, i:i + stride * out:stride, j:j + stride * out:stride] @ kernel[i, j]
            for i in range(k) for j in range(k))
    return y + bias


def np_conv_transpose(x, kernel, bias, stride):
    """Added: Conv2DTranspose(padding="same") in float64 numpy, the gradient of np_conv:
    kernel (k, k, c_out, c_in); output size = input size * stride."""
    k, size = kernel.shape[0], x.shape[1]
    out = size * stride
    full = np.zeros((x.shape[0], (size - 1) * stride + k, (size - 1) * stride + k,
                     kernel.shape[2]))
    for i in range(k):
        for j in range(k):
            full[:, i:i + stride * size:stride, j:j + stride * size:stride] += \
                x @ kernel[i, j].T
    before = same_padding(out, k, stride)[0]
    return full[:, before:before + out, before:before + out] + bias


def np_leaky_relu(x):
    return np.where(x > 0, x, 0.2 * x)


def np_weights(model):
    return [v.numpy().astype(np.float64) for v in model.trainable_weights]


def np_generator(z):
    """Added: upstream's generator in float64 numpy."""
    dk, db, t1k, t1b, t2k, t2b, ck, cb = np_weights(generator)
    x = np_leaky_relu(z @ dk + db).reshape(-1, 7, 7, generator_in_channels)
    x = np_leaky_relu(np_conv_transpose(x, t1k, t1b, 2))
    x = np_leaky_relu(np_conv_transpose(x, t2k, t2b, 2))
    return 1 / (1 + np.exp(-np_conv(x, ck, cb, 1)))


def np_discriminator(images):
    """Added: upstream's discriminator in float64 numpy."""
    c1k, c1b, c2k, c2b, dk, db = np_weights(discriminator)
    x = np_leaky_relu(np_conv(images.astype(np.float64), c1k, c1b, 2))
    x = np_leaky_relu(np_conv(x, c2k, c2b, 2))
    return x.max(axis=(1, 2)) @ dk + db


def conv_params(k, c_in, c_out):
    return k * k * c_in * c_out + c_out


d_expected = (conv_params(3, 11, 64 // W) + conv_params(3, 64 // W, 128 // W)
              + 128 // W + 1)
g_expected = (138 * 7 * 7 * 138 + 7 * 7 * 138 + conv_params(4, 138, 128 // W)
              + conv_params(4, 128 // W, 128 // W) + conv_params(7, 128 // W, 1))
assert discriminator.count_params() == d_expected, (discriminator.count_params(), d_expected)
assert generator.count_params() == g_expected, (generator.count_params(), g_expected)
assert not FULL or (d_expected, g_expected) == (80385, 1491215)
assert discriminator.output_shape == (None, 1) and generator.output_shape == (None, 28, 28, 1)
probe = generator(em.random.normal((2, generator_in_channels)))
assert probe.shape == (2, 28, 28, 1), probe.shape
assert discriminator(em.zeros((2, 28, 28, 11))).shape == (2, 1)
untrained = generator(em.random.normal((64, generator_in_channels)))
untrained_deviation = float(em.reduce_mean(em.abs(untrained - 0.5)))
assert untrained_deviation < 0.02, untrained_deviation  # a sigmoid of near-zero outputs

"""
## Creating a `ConditionalGAN` model
"""


class ConditionalGAN(keras.Model):
    def __init__(self, discriminator, generator, latent_dim):
        super(ConditionalGAN, self).__init__()  # noqa: UP008 (upstream's call)
        self.discriminator = discriminator
        self.generator = generator
        self.latent_dim = latent_dim
        self.gen_loss_tracker = keras.metrics.Mean(name="generator_loss")
        self.disc_loss_tracker = keras.metrics.Mean(name="discriminator_loss")

    @property
    def metrics(self):
        return [self.gen_loss_tracker, self.disc_loss_tracker]

    def compile(self, d_optimizer, g_optimizer, loss_fn):
        super(ConditionalGAN, self).compile()  # noqa: UP008 (upstream's call)
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer
        self.loss_fn = loss_fn

    def train_step(self, data):
        # Unpack the data.
        real_images, one_hot_labels = data

        # Add dummy dimensions to the labels so that they can be concatenated with
        # the images. This is for the discriminator.
        image_one_hot_labels = one_hot_labels[:, :, None, None]
        image_one_hot_labels = em.repeat(
            image_one_hot_labels, repeats=[image_size * image_size]
        )
        image_one_hot_labels = em.reshape(
            image_one_hot_labels, (-1, image_size, image_size, num_classes)
        )

        # Sample random points in the latent space and concatenate the labels.
        # This is for the generator.
        batch_size = em.shape(real_images)[0]
        random_latent_vectors = em.random.normal(shape=(batch_size, self.latent_dim))
        random_vector_labels = em.concat(
            [random_latent_vectors, one_hot_labels], axis=1
        )

        # Decode the noise (guided by labels) to fake images.
        generated_images = self.generator(random_vector_labels)

        # Combine them with real images. Note that we are concatenating the labels
        # with these images here.
        fake_image_and_labels = em.concat([generated_images, image_one_hot_labels], -1)
        real_image_and_labels = em.concat([real_images, image_one_hot_labels], -1)
        combined_images = em.concat(
            [fake_image_and_labels, real_image_and_labels], axis=0
        )

        # Assemble labels discriminating real from fake images.
        labels = em.concat(
            [em.ones((batch_size, 1)), em.zeros((batch_size, 1))], axis=0
        )

        # Train the discriminator.
        with tape_lib.GradientTape() as tape:
            predictions = self.discriminator(combined_images)
            d_loss = self.loss_fn(labels, predictions)
        grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
        self.d_optimizer.apply_gradients(
            zip(grads, self.discriminator.trainable_weights)
        )

        # Sample random points in the latent space.
        random_latent_vectors = em.random.normal(shape=(batch_size, self.latent_dim))
        random_vector_labels = em.concat(
            [random_latent_vectors, one_hot_labels], axis=1
        )

        # Assemble labels that say "all real images".
        misleading_labels = em.zeros((batch_size, 1))

        # Train the generator (note that we should *not* update the weights
        # of the discriminator)!
        with tape_lib.GradientTape() as tape:
            fake_images = self.generator(random_vector_labels)
            fake_image_and_labels = em.concat([fake_images, image_one_hot_labels], -1)
            predictions = self.discriminator(fake_image_and_labels)
            g_loss = self.loss_fn(misleading_labels, predictions)
        grads = tape.gradient(g_loss, self.generator.trainable_weights)
        self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_weights))

        # Monitor loss.
        self.gen_loss_tracker.update_state(g_loss)
        self.disc_loss_tracker.update_state(d_loss)
        return {
            "g_loss": self.gen_loss_tracker.result(),
            "d_loss": self.disc_loss_tracker.result(),
        }


"""
## Added: train_step's label maps, the loss and the trackers against numpy
"""

# train_step's first three lines on three labels (repeat and reshape copy, so the map's
# value at (b, h, w, c) is element ((h * 28 + w) * 10 + c) // 784 of row b: TF's
# tf.repeat with no axis repeats each element of the flattened input)
few = all_labels[:3]
maps = em.reshape(keras.ops.repeat(few[:, :, None, None], repeats=[image_size * image_size]),
                  (-1, image_size, image_size, num_classes)).numpy()
expected_maps = np.repeat(few[:, :, None, None], 784).reshape(-1, 28, 28, 10)
np.testing.assert_array_equal(maps, expected_maps)
hh, ww, cc = np.meshgrid(np.arange(28), np.arange(28), np.arange(10), indexing="ij")
np.testing.assert_array_equal(maps[1], few[1][((hh * 28 + ww) * 10 + cc) // 784])
assert not np.array_equal(maps[1], np.broadcast_to(few[1], (28, 28, 10)))  # striped
np.testing.assert_array_equal(maps.sum(axis=(1, 2, 3)), [784.0] * 3)

bce = keras.losses.BinaryCrossentropy(from_logits=True)
rng = np.random.default_rng(1)
logits = rng.normal(0, 3, (8, 1)).astype(np.float32)
targets = (rng.uniform(size=(8, 1)) > 0.5).astype(np.float32)
np_bce = np.mean(np.maximum(logits, 0) - logits * targets + np.log1p(np.exp(-np.abs(logits))))
np.testing.assert_allclose(float(bce(em.constant(targets), em.constant(logits))), np_bce,
                           rtol=1e-5)
tracker = keras.metrics.Mean(name="check")
for v in (0.5, 2.0, 0.25):
    tracker.update_state(em.constant(v))
np.testing.assert_allclose(float(tracker.result()), np.mean([0.5, 2.0, 0.25]), rtol=1e-6)
tracker.reset_state()
assert float(tracker.result()) == 0.0 and float(tracker.count) == 0.0

"""
## Training the Conditional GAN
"""

cond_gan = ConditionalGAN(
    discriminator=discriminator, generator=generator, latent_dim=latent_dim
)
cond_gan.compile(
    d_optimizer=keras.optimizers.Adam(learning_rate=0.0003),
    g_optimizer=keras.optimizers.Adam(learning_rate=0.0003),
    loss_fn=keras.losses.BinaryCrossentropy(from_logits=True),
)


class BatchLogs(keras.callbacks.Callback):
    """Added: every batch's logs (the trackers' running means)."""

    def __init__(self):
        super().__init__()
        self.logs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.logs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.logs[-1].append({k: float(v) for k, v in logs.items()})


batch_logs = BatchLogs()
d_before = [v.numpy().copy() for v in discriminator.trainable_weights]
g_before = [v.numpy().copy() for v in generator.trainable_weights]

history = cond_gan.fit(dataset, epochs=EPOCHS, callbacks=[batch_logs], verbose=0)

"""
## Added: checks on training
"""

steps = math.ceil(n_all / batch_size)
assert [len(e) for e in batch_logs.logs] == [steps] * EPOCHS, [len(e) for e in batch_logs.logs]
# tf.keras's History holds what train_step returned, each epoch's last value
assert set(history.history) == {"g_loss", "d_loss"}, history.history.keys()
for key in ("g_loss", "d_loss"):
    assert len(history.history[key]) == EPOCHS
    for epoch in range(EPOCHS):
        np.testing.assert_allclose(history.history[key][epoch],
                                   batch_logs.logs[epoch][-1][key], rtol=1e-6)
# fit resets the `metrics` property's trackers at each epoch's start
assert float(cond_gan.disc_loss_tracker.count) == steps, float(cond_gan.disc_loss_tracker.count)
assert float(cond_gan.gen_loss_tracker.count) == steps
np.testing.assert_allclose(float(cond_gan.disc_loss_tracker.result()),
                           history.history["d_loss"][-1], rtol=1e-6)


def per_batch(epoch_logs, key):
    """Each batch's own loss from the running means (the trackers restart each epoch)."""
    means = np.array([lg[key] for lg in epoch_logs], dtype=np.float64)
    k = np.arange(1, len(means) + 1)
    return k * means - np.concatenate([[0.0], (k * means)[:-1]])


d_losses = np.concatenate([per_batch(e, "d_loss") for e in batch_logs.logs])
g_losses = np.concatenate([per_batch(e, "g_loss") for e in batch_logs.logs])
print("d_loss per epoch:", np.round(history.history["d_loss"], 4).tolist())
print("g_loss per epoch:", np.round(history.history["g_loss"], 4).tolist())
assert np.all(np.isfinite(d_losses)) and np.all(np.isfinite(g_losses))
assert d_losses.min() > -1e-4 and g_losses.min() > -1e-4, (d_losses.min(), g_losses.min())
# an untrained discriminator's logits are small: its first loss is near log(2)
assert abs(d_losses[0] - math.log(2)) < 0.25, d_losses[0]
assert all(not np.array_equal(a, v.numpy()) for a, v in zip(d_before, discriminator.trainable_weights))
assert all(not np.array_equal(a, v.numpy()) for a, v in zip(g_before, generator.trainable_weights))

check_labels = keras.utils.to_categorical(np.arange(64) % 10, 10).astype("float32")
check_fakes = generator(em.concat([em.random.normal((64, latent_dim)), check_labels], 1))
# the generator's pixels leave its untrained 0.5 towards black and white, as a digit's
deviation = float(em.reduce_mean(em.abs(check_fakes - 0.5)))
print(f"mean |pixel - 0.5|: generated {deviation:.4f} (untrained {untrained_deviation:.4f}), "
      f"real {float(np.abs(all_digits - 0.5).mean()):.4f}")
assert SHORT or deviation > 0.1, deviation
# the discriminator does better than chance (log(2)) in some epoch
assert SHORT or min(history.history["d_loss"]) < 0.67, history.history["d_loss"]

# both trained models against a float64 numpy forward pass (TF's "same" padding: the odd
# pixel of a strided Conv2D's padding goes last; Conv2DTranspose is that conv's gradient)
check_inputs = em.concat([em.random.normal((4, latent_dim)), check_labels[:4]], 1)
np.testing.assert_allclose(generator(check_inputs).numpy(),
                           np_generator(check_inputs.numpy()), rtol=1e-4, atol=1e-5)
check_images = np.concatenate([all_digits[:4], maps[:1].repeat(4, axis=0)], -1)
np.testing.assert_allclose(discriminator(check_images).numpy(),
                           np_discriminator(check_images), rtol=1e-4, atol=1e-5)

"""
## Interpolating between classes with the trained generator
"""

# We first extract the trained generator from our Conditiona GAN.
trained_gen = cond_gan.generator

# Choose the number of intermediate images that would be generated in
# between the interpolation + 2 (start and last images).
num_interpolation = 9  # @param {type:"integer"}

# Sample noise for the interpolation.
interpolation_noise = em.random.normal(shape=(1, latent_dim))
noise_row = interpolation_noise.numpy()  # added: for the check
interpolation_noise = em.repeat(interpolation_noise, repeats=num_interpolation)
interpolation_noise = em.reshape(interpolation_noise, (num_interpolation, latent_dim))
np.testing.assert_array_equal(interpolation_noise.numpy(),
                              np.repeat(noise_row, 9).reshape(9, latent_dim))
assert not np.array_equal(interpolation_noise.numpy()[0], noise_row[0])  # not copies


def interpolate_class(first_number, second_number):
    # Convert the start and end labels to one-hot encoded vectors.
    first_label = keras.utils.to_categorical([first_number], num_classes)
    second_label = keras.utils.to_categorical([second_number], num_classes)
    first_label = em.cast(first_label, em.float32)
    second_label = em.cast(second_label, em.float32)

    # Calculate the interpolation vector between the two labels.
    # GAP 3: percent_second_label = tf.linspace(0, 1, num_interpolation)[:, None]
    # (float32 in ember; TF's is float64, cast to float32 on the next line either way)
    percent_second_label = em.linspace(0, 1, num_interpolation)[:, None]
    percent_second_label = em.cast(percent_second_label, em.float32)
    interpolation_labels = (
        first_label * (1 - percent_second_label) + second_label * percent_second_label
    )
    np.testing.assert_allclose(  # added
        interpolation_labels.numpy(),
        np.outer(1 - np.linspace(0, 1, 9), np.eye(10)[first_number])
        + np.outer(np.linspace(0, 1, 9), np.eye(10)[second_number]), atol=1e-6)

    # Combine the noise and the labels and run inference with the generator.
    noise_and_labels = em.concat([interpolation_noise, interpolation_labels], 1)
    fake = trained_gen.predict(noise_and_labels)
    np.testing.assert_allclose(fake, trained_gen(noise_and_labels).numpy(),  # added
                               rtol=1e-5, atol=1e-6)
    return fake


start_class = 1  # @param {type:"slider", min:0, max:9, step:1}
end_class = 5  # @param {type:"slider", min:0, max:9, step:1}

fake_images = interpolate_class(start_class, end_class)
assert isinstance(fake_images, np.ndarray) and fake_images.shape == (9, 28, 28, 1)
assert fake_images.dtype == np.float32 and 0.0 <= fake_images.min() <= fake_images.max() <= 1.0

fake_images *= 255.0
converted_images = fake_images.astype(np.uint8)
converted_images = em.image.resize(converted_images, (96, 96)).numpy().astype(np.uint8)
resized = em.image.resize(fake_images.astype(np.uint8), (96, 96)).numpy()  # added
assert np.array_equal(converted_images, resized.astype(np.uint8))
# added: TF 2's bilinear resize (half-pixel centres, no antialiasing when enlarging)
reference = resize_bilinear(fake_images.astype(np.uint8).astype(np.float64), 96, 96)
assert resized.shape == (9, 96, 96, 1) and resized.dtype == np.float32
np.testing.assert_allclose(resized, reference, atol=1e-3)
# imageio.mimsave("animation.gif", converted_images, fps=1)  (imageio is not installed)
gif_path = os.path.join(workdir.name, "animation.gif")  # upstream: the working directory
frames = [Image.fromarray(frame[..., 0]) for frame in converted_images]
frames[0].save(gif_path, save_all=True, append_images=frames[1:], duration=1000, loop=0)
# embed.embed_file("animation.gif")  (the notebook display, dropped)
# (PIL merges a frame equal to the one before it into that one: count the changes)
distinct = 1 + sum(not np.array_equal(a, b) for a, b in zip(converted_images, converted_images[1:]))
with Image.open(gif_path) as gif:
    assert gif.n_frames == distinct and gif.size == (96, 96), (gif.n_frames, gif.size)
    gif.seek(gif.n_frames - 1)
    np.testing.assert_array_equal(np.asarray(gif.convert("L")), converted_images[-1, ..., 0])
print("Conditional GAN: OK")
