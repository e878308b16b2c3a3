"""Port of keras-team/keras-io examples/generative/pixelcnn.py ("PixelCNN": MNIST binarized
at 33% of 256, a PixelConvLayer that wraps a Conv2D and multiplies its kernel by a type A or
B mask before every call, residual blocks of 1x1 / masked 3x3 / 1x1 convolutions, a
functional model trained with binary cross-entropy to predict each pixel from the pixels
above and to the left of it, then four images sampled pixel by pixel, one predict() per
pixel, and saved as PNG files).

Upstream: https://github.com/keras-team/keras-io/blob/dad05faaae0b553f81d35175201035971725356d/examples/generative/pixelcnn.py
Changed: names only (tensorflow.keras / tensorflow.keras.layers -> ember.nn /
ember.nn.layers, tf.math.ceil -> em.ceil, tf.random.uniform -> em.random.uniform);
keras.datasets.mnist.load_data() -> ember.data.datasets.mnist(data_dir=...) (the real
MNIST, kept uint8 (n, 28, 28) as load_data() gives it; `data` is upstream's array, so
ember.data is imported as em_data); the IPython display() of the four PNG files is
dropped (the files are read back and checked instead). Reduced (EMBER_PROGRAMS_FULL=1
restores upstream: 60,000 + 10,000 digits, 128 filters, 5 residual blocks, 50 epochs):
3,600 + 400 digits (fit's validation split, the last 10%, is then exactly the 400 test
digits), 32 filters, 2 residual blocks, 3 epochs; EMBER_PROGRAMS_SHORT=1 (the strict-GPU
run): 32 + 4 digits, batch 16, 1 epoch, no threshold on what training reached (ember
tunes each convolution shape on first use, which the GPU double runs slowly: one training
batch shape and the sampling's batch of 4 keep it to ~30 s). The sampling loop is
upstream's (4 images, all 784 pixels, one predict() each).
Added: seeds for numpy and ember; the data is 0/1 and agrees with numpy's threshold of
the uint8 images; every PixelConvLayer's mask equals one built independently (1 strictly
before the centre in raster order, and at the centre for type B) and the kernel it
convolved with is 0 outside it; the first layer's output equals a numpy convolution
(masked kernel, bias, relu, "same" padding); the parameter count equals the formula for
the architecture (532,673 at upstream's size); the model is causal: flipping pixel p and
every pixel after it leaves the outputs at p and before it unchanged and changes some
later one; evaluate() is numpy's clipped binary cross-entropy of predict() (untrained:
0.695, ln 2 = 0.693); fit's History has one loss and val_loss per epoch and its last
val_loss is evaluate() of the last 10%; fit given (n, 28, 28) arrays for the (None, 28,
28, 1) input (as upstream) adds the channel axis, as Keras: predict() agrees on both;
(CPU run) the validation loss falls below 0.7 x the mean binary entropy of the validation
digits' per-position means (0.262), the least loss any model that does not read the
pixels above and to the left of a pixel can reach on them (3 epochs reach ~0.13; after 2
epochs, ~0.21, it is not yet there); the samples are 0/1 and, the model being causal,
each pixel's probability when it was drawn equals predict() of the finished images at
that pixel; (CPU run) their ink fraction is the digits' within 0.1 (~0.13 against 0.15;
an untrained model draws ~0.5); each PNG file holds its sample as deprocess_image() made
it (28x28 RGB uint8, 0 or 255).
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error):
4. no nn.preprocessing (keras.preprocessing.image.save_img: AttributeError; the same as
data_guide.py's GAP 6): nn.utils.save_img, Keras's other name for it, stands in.
Fixed in ember since the first version of this port: (GAP 1, silent) calling a layer's
build() directly left `built` False, so its first call built it again: Conv2D made a new
kernel and bias, dropped the ones build() made (here, the one call() had just masked) and
convolved with the new, unmasked kernel (a type-A layer's first output at the centre pixel
was 0.162 where Keras gives 0.0); build() now leaves the layer built, as Keras 3's
build_wrapper does. Variable and Tensor had no get_shape() (GAP 2), and functional and
Sequential models no input_shape / output_shape (GAP 3): upstream's lines are restored.
Also seen, not a gap here: `kernel * mask` (float32 variable, float64 numpy mask) is
float64 in ember (documented: numpy arrays are strongly typed), float32 in TF; assign()
casts it back to float32 without a word (TF refuses a float64 tensor), so the kernel is
the same. Layers built through the functional API see input_shape (1, 28, 28, 1) in
build() where Keras passes (None, 28, 28, 1).
"""

import math
import os
import pathlib
import unittest

import numpy as np
from tqdm import tqdm

import ember.core as em
from ember import data as em_data
from ember import nn
from ember.nn import layers

keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)
np.random.seed(0)
N_TRAIN, N_TEST = (60000, 10000) if FULL else (32, 4) if SHORT else (3600, 400)
FILTERS = 128 if FULL else 32
EPOCHS = 50 if FULL else 1 if SHORT else 3
BATCH_SIZE = 16 if SHORT else 128  # the strict double tunes its convolutions per shape


def load_data():
    """keras.datasets.mnist.load_data(), in its layout (uint8 (n, 28, 28) images, uint8
    labels), from the real MNIST files."""
    def split(name, n):
        x, y = next(iter(em_data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
        return ((np.asarray(x).reshape(-1, 28, 28) * 255).round().astype(np.uint8),
                np.asarray(y).astype(np.uint8))
    return split("train", N_TRAIN), split("test", N_TEST)


"""
## Getting the Data
"""

# Model / data parameters
num_classes = 10
input_shape = (28, 28, 1)
n_residual_blocks = 5 if FULL else 2
# The data, split between train and test sets
(x, _), (y, _) = load_data()
# Concatenate all of the images together
data = np.concatenate((x, y), axis=0)
# Round all pixel values less than 33% of the max 256 value to 0
# anything above this value gets rounded up to 1 so that all values are either
# 0 or 1
data = np.where(data < (0.33 * 256), 0, 1)
data = data.astype(np.float32)

# Added: (n, 28, 28) float32 of 0s and 1s: 1 where the uint8 pixel is 85 or more
assert data.shape == (N_TRAIN + N_TEST, 28, 28) and data.dtype == np.float32, data.shape
raw = np.concatenate([x, y]).astype(np.int64)
np.testing.assert_array_equal(data, (raw >= 85).astype(np.float32))  # 0.33 * 256 = 84.48
print(f"{len(data)} images, {data.mean():.3f} of the pixels are 1")

"""
## Create two classes for the requisite Layers for the model
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


"""
## Build the model based on the original paper
"""

inputs = keras.Input(shape=input_shape)
x = PixelConvLayer(
    mask_type="A", filters=FILTERS, kernel_size=7, activation="relu", padding="same"
)(inputs)

for _ in range(n_residual_blocks):
    x = ResidualBlock(filters=FILTERS)(x)

for _ in range(2):
    x = PixelConvLayer(
        mask_type="B",
        filters=FILTERS,
        kernel_size=1,
        strides=1,
        activation="relu",
        padding="valid",
    )(x)

out = keras.layers.Conv2D(
    filters=1, kernel_size=1, strides=1, activation="sigmoid", padding="valid"
)(x)

pixel_cnn = keras.Model(inputs, out)
adam = keras.optimizers.Adam(learning_rate=0.0005)
pixel_cnn.compile(optimizer=adam, loss="binary_crossentropy")

pixel_cnn.summary()

# Added: each PixelConvLayer's mask is 1 strictly before the kernel's centre in raster
# order (and at the centre for type B), and the kernel it convolved with is 0 outside it
blocks = [layer for layer in pixel_cnn.layers if isinstance(layer, ResidualBlock)]
pixel_layers = [layer for layer in pixel_cnn.layers if isinstance(layer, PixelConvLayer)]
pixel_layers += [block.pixel_conv for block in blocks]
assert len(blocks) == n_residual_blocks and len(pixel_layers) == 3 + n_residual_blocks


def raster_mask(shape, mask_type):
    kh, kw, c_in, c_out = shape
    i, j = np.meshgrid(np.arange(kh), np.arange(kw), indexing="ij")
    seen = (i * kw + j < (kh // 2) * kw + kw // 2) | (
        (mask_type == "B") & (i == kh // 2) & (j == kw // 2))
    return np.broadcast_to(seen[:, :, None, None], shape).astype(np.float64)


for layer in pixel_layers:
    kernel = layer.conv.kernel.numpy()
    np.testing.assert_array_equal(layer.mask, raster_mask(kernel.shape, layer.mask_type))
    assert not np.any(kernel[layer.mask == 0]), (layer.name, "the kernel is not masked")
assert pixel_layers[0].mask[:, :, 0, 0].sum() == 24  # type A, 7x7: 3 rows and 3 pixels

# Added: the first layer is a masked convolution: numpy's, "same" padding, bias and relu
first = pixel_layers[0]
imgs = data[:3, :, :, None]
kernel, bias = first.conv.kernel.numpy(), first.conv.bias.numpy()
padded = np.pad(imgs[..., 0], ((0, 0), (3, 3), (3, 3)))
windows = np.lib.stride_tricks.sliding_window_view(padded, (7, 7), axis=(1, 2))
expected = np.maximum(np.einsum("nrcij,ijf->nrcf", windows, kernel[:, :, 0, :]) + bias, 0)
np.testing.assert_allclose(first(imgs).numpy(), expected, rtol=1e-5, atol=1e-6)
np.testing.assert_array_equal(first.mask[:, :, 0, :] * kernel[:, :, 0, :], kernel[:, :, 0, :])

# Added: the parameter count of the architecture (532,673 at upstream's size)
F = FILTERS
expected_params = (7 * 7 * F + F) + n_residual_blocks * (
    (F * F + F) + (3 * 3 * F * (F // 2) + F // 2) + ((F // 2) * F + F)) + 2 * (F * F + F) + F + 1
assert pixel_cnn.count_params() == expected_params, (pixel_cnn.count_params(), expected_params)
assert not FULL or expected_params == 532673

# Added: the model is causal. Flipping pixel p and every pixel after it (raster order)
# leaves the outputs at p and before it as they were, and changes later ones
probe_images = data[:4, :, :, None]
before = pixel_cnn.predict(probe_images, verbose=0)
assert before.shape == (4, 28, 28, 1) and before.dtype == np.float32, before.shape
for p in (0, 57, 300, 405, 783):
    flipped = probe_images.reshape(4, -1).copy()
    flipped[:, p:] = 1 - flipped[:, p:]
    after = pixel_cnn.predict(flipped.reshape(4, 28, 28, 1), verbose=0)
    np.testing.assert_allclose(after.reshape(4, -1)[:, :p + 1], before.reshape(4, -1)[:, :p + 1],
                               rtol=0, atol=1e-6)
    assert p == 783 or np.abs(after - before).reshape(4, -1)[:, p + 1:].max() > 1e-4, p

# Added: the loss (Keras's binary_crossentropy, clipped at 1e-7) of the validation part,
# the last 10% that fit keeps apart, before training
split_at = int(math.floor(len(data) * (1 - 0.1)))
val = data[split_at:]


def numpy_bce(target, probs):
    probs = np.clip(probs.astype(np.float64), 1e-7, 1 - 1e-7)
    return float(np.mean(-(target * np.log(probs) + (1 - target) * np.log(1 - probs))))


untrained = pixel_cnn.evaluate(val, val, verbose=0)
np.testing.assert_allclose(untrained, numpy_bce(val, pixel_cnn.predict(val, verbose=0)[..., 0]),
                           rtol=1e-4)
# the best a model that reads no other pixel can do on the validation part:
# each position's own mean there, i.e. the mean binary entropy of the positions
q = val.mean(axis=0)
context_free = float(np.mean(-(q * np.log(np.where(q > 0, q, 1))
                               + (1 - q) * np.log(np.where(q < 1, 1 - q, 1)))))
print(f"validation loss untrained {untrained:.4f}, context-free best {context_free:.4f}")

history = pixel_cnn.fit(  # added: history =
    x=data, y=data, batch_size=BATCH_SIZE, epochs=EPOCHS, validation_split=0.1, verbose=2
)

# Added: fit kept the last 10% apart (its final val_loss is evaluate() of them) and
# trained: (CPU run) the model reads the pixels above and to the left, as no context-free
# model could do as well
val_loss = history.history["val_loss"]
assert len(val_loss) == EPOCHS and len(history.history["loss"]) == EPOCHS, history.history
np.testing.assert_allclose(pixel_cnn.evaluate(val, val, verbose=0), val_loss[-1], rtol=1e-4)
assert SHORT or val_loss[-1] < 0.7 * context_free, (val_loss, context_free)
# fit was given (n, 28, 28) images for a (None, 28, 28, 1) input, as upstream does: Keras
# adds the channel axis (and to the targets), so predict() gives the same either way
np.testing.assert_array_equal(pixel_cnn.predict(val, verbose=0),
                              pixel_cnn.predict(val[..., None], verbose=0))

"""
## Demonstration

The PixelCNN cannot generate the full image at once. Instead, it must generate each pixel in
order, append the last generated pixel to the current image, and feed the image back into the
model to repeat the process.

You can use the trained model hosted on [Hugging Face Hub](https://huggingface.co/keras-io/pixel-cnn-mnist)
and try the demo on [Hugging Face Spaces](https://huggingface.co/spaces/keras-io/pixelcnn-mnist-image-generation).
"""

# Create an empty array of pixels.
batch = 4
pixels = np.zeros(shape=(batch,) + (pixel_cnn.input_shape)[1:])
batch, rows, cols, channels = pixels.shape
drawn_with = np.zeros_like(pixels)  # added: the probability each pixel was drawn with

# Iterate over the pixels because generation has to be done sequentially pixel by pixel.
for row in tqdm(range(rows)):
    for col in range(cols):
        for channel in range(channels):
            # Feed the whole array and retrieving the pixel value probabilities for the next
            # pixel.
            probs = pixel_cnn.predict(pixels)[:, row, col, channel]
            drawn_with[:, row, col, channel] = probs  # added
            # Use the probabilities to pick pixel values and append the values to the image
            # frame.
            pixels[:, row, col, channel] = em.ceil(
                probs - em.random.uniform(probs.shape)
            )

# Added: the samples are 0/1 images; the model being causal, each pixel's probability when
# it was drawn is predict() of the finished images there; (CPU run) as much ink as digits
assert pixels.shape == (4, 28, 28, 1), pixels.shape
assert set(np.unique(pixels)) <= {0.0, 1.0}, np.unique(pixels)
np.testing.assert_allclose(pixel_cnn.predict(pixels, verbose=0), drawn_with, rtol=0, atol=1e-5)
print(f"samples: {pixels.mean():.3f} of the pixels are 1 (digits: {data.mean():.3f}); "
      f"mean probability drawn with {drawn_with.mean():.3f}")
assert SHORT or abs(pixels.mean() - data.mean()) < 0.1, (pixels.mean(), data.mean())


def deprocess_image(x):
    # Stack the single channeled black and white image to rgb values.
    x = np.stack((x, x, x), 2)
    # Undo preprocessing
    x *= 255.0
    # Convert to uint8 and clip to the valid range [0, 255]
    x = np.clip(x, 0, 255).astype("uint8")
    return x


# Iterate over the generated images and plot them with matplotlib.
for i, pic in enumerate(pixels):
    # GAP 4: keras.preprocessing.image.save_img(
    keras.utils.save_img(
        "generated_image_{}.png".format(i), deprocess_image(np.squeeze(pic, -1))  # noqa: UP032
    )

# Added: (display(Image(...)) of the four files dropped) each file holds its sample
for i, pic in enumerate(pixels):
    png = np.asarray(keras.utils.load_img("generated_image_{}.png".format(i)))  # noqa: UP032
    assert png.shape == (28, 28, 3) and png.dtype == np.uint8, (png.shape, png.dtype)
    np.testing.assert_array_equal(png, np.repeat(pic * 255, 3, axis=-1).astype(np.uint8))
