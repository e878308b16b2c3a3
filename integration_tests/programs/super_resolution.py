"""Port of keras-team/keras-io examples/vision/super_resolution_sub_pixel.py ("Image
Super-Resolution using an Efficient Sub-Pixel CNN", ESPCN, the tf.keras version last modified
2020/08/27): BSDS500 fetched with get_file(untar=True); image_dataset_from_directory
(label_mode=None, an 80/20 split with seed 1337, images resized to crop_size x crop_size)
scaled to [0, 1]; the target is the Y channel of tf.image.rgb_to_yuv, the input its "area"
resize to a third; an ESPCN (four "same" Conv2D with relu and Orthogonal kernels on inputs
of any size, then tf.nn.depth_to_space); a callback printing each epoch's PSNR from the
test batches' losses and upscaling a test image every 20 epochs (PIL YCbCr, model.predict);
EarlyStopping and ModelCheckpoint(save_best_only, save_weights_only) on the loss; fit with
validation_data, load_weights; then tf.image.psnr of the model's and of PIL's bicubic
upscaling of 10 test images.

Upstream: https://github.com/keras-team/keras-io/blob/b8bb4c0d5068d64290003740c2ef9e703eefa751/examples/vision/super_resolution_sub_pixel.py
Changed: names only (tensorflow -> ember.core as em: tf.split -> em.split, tf.image.resize ->
em.image.resize; tensorflow.keras / keras.layers -> ember.nn / nn.layers: keras.Input/Model,
keras.utils.get_file, keras.callbacks.Callback/EarlyStopping/ModelCheckpoint,
keras.losses.MeanSquaredError, keras.optimizers.Adam; tensorflow.keras.preprocessing(.image)
-> ember.nn.preprocessing(.image): image_dataset_from_directory, load_img, array_to_img,
img_to_array), except the GAPs below. BSR_bsds500.tgz cannot be downloaded here (no
network), and MNIST would not do (upstream reads JPEG files of varied sizes and orientations
from folders): a SYNTHETIC archive of BSDS500's layout, GENERATED pictures, is written into
get_file's cache (KERAS_HOME is set to a temporary directory; the archive is put where
ember's get_file keeps an untarred download, datasets/BSR_archive, as Keras 3 does;
tf.keras's name is datasets/BSR.tar.gz), so upstream's get_file line finds it and only
extracts it: BSR/BSDS500/data/images/{train,val,test}/<6-digit id>.jpg, RGB JPEGs (quality
92), landscape or (30%) portrait, beside groundTruth/{train,val,test}/<id>.mat files and a
Thumbs.db in each image folder (neither is an image: the listing skips them). Each picture
is made up as photographs mix smooth areas and edges: a colour gradient with two
low-frequency waves per channel, 4 to 9 flat ellipses, rectangles and triangles of random
colours, 1 to 3 thin lines, and Gaussian noise (3 levels). IPython is not installed (and
there is no notebook): display() is a stand-in that keeps the images shown, which are
checked; the matplotlib figure of plot_results is dropped, and it keeps the array it would
plot, also checked. fit's History is kept (history = model.fit(...)) and two callbacks are
added (the weights of every epoch; ESPCNCallback also records its values).
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream's 481x321 pictures, 200 + 100 + 200 of
them, crop_size 300 and 100 epochs): 72x48 pictures, 40 train + 20 val + 60 test (96
training and 24 validation files; 60 test files so that upstream's test_img_paths[50:60]
holds 10), crop_size 48 (16x16 inputs), 40 epochs of 12 steps (upstream's batch 8);
EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 8 + 4 + 60 pictures, 1 epoch, no check on
what training reached.
Added: seeds for numpy and ember; the listing (every JPEG, nothing else, in Keras's order:
sorted, shuffled by np.random.RandomState(1337), the last int(0.2 * 120) = 24 validating);
a batch's shape, dtype and range, array_to_img's stretch to 0-255; one pass over the
validation set gives each validation file once, equal to a numpy TF-bilinear resize
(half-pixel centres) of PIL's decoding / 255; the pairs: the targets Y = 0.299 R + 0.587 G +
0.114 B (float32), the inputs their 3x3 block means (TF's "area" by a whole factor), on the
dataset and on the validation images against numpy, rgb_to_yuv against numpy's product with
TF's kernel (grey has U = V = 0), every validation target the luma of one validation image;
depth_to_space element by element against TF's definition (DCR order); the parameter count
against Keras's formulas (59,657), the output 3x a non-square input, the Orthogonal kernels
orthonormal and the biases zero; History (one loss and val_loss an epoch, finite, no early
stop), the weights load_weights restores equal the epoch of the lowest loss; the test
batches' logs["loss"] are running means (each epoch's last equals its val_loss, as in
tf.keras) and the printed PSNR is their mean; evaluate equals numpy's MSE of predict's
output; predict equals a float64 numpy forward pass (zero "same" padding, relu,
depth_to_space); the psnr values against numpy's 20 log10(255) - 10 log10(mse), the
reconstructions' sizes, and what plot_results kept (every 20 epochs, 3 per test image, in
[0, 1]). What training reached (CPU run): the validation PSNR above that of nearest-neighbour
upscaling (each input pixel repeated 3x3, which this network can express exactly; ~25 dB)
by 0.25 dB, and on the 10 test pictures the reconstructions above PIL's nearest-neighbour
upscaling by 1 dB and within 1 dB of PIL's bicubic (the published run of the example's
50-epoch version, examples/vision/md/super_resolution_sub_pixel.md at 0b85c58: 27.31 dB
against bicubic's 26.69 on the photographs). An untrained ESPCN scores 9.5-15.6 dB
(its first epoch's printed PSNR, 4 seeds); trained, 4 seeds of the data and weights gave
validation margins of 0.57-1.44 dB over nearest-neighbour upscaling, test margins of
1.4-2.0 dB over it, and -0.5 to +0.2 dB against bicubic.
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error):
1. (loud) get_file(origin=..., fname="BSR", untar=True) extracts the archive into
datasets/BSR/ and returns that folder (Keras 3's layout), where tf.keras, which this
upstream uses, extracts it into datasets/ (the archive's top folder BSR/ becoming
datasets/BSR) and returns datasets/BSR: upstream's root_dir, data_dir/BSDS500/data, does not
exist (image_dataset_from_directory raises ValueError); stand-in: data_dir/BSR/BSDS500/data.
4. (loud) ModelCheckpoint(save_weights_only=True) refuses upstream's "/tmp/checkpoint"
(ValueError: the filepath must end in `.weights.h5`): Keras 3's rule; tf.keras writes a
TensorFlow checkpoint at any prefix and load_weights reads it back; stand-in: a
`checkpoint.weights.h5` path in the temporary directory.
Also seen (not GAPs, upstream's lines run and give tf.keras's values): the batch hooks get
logs["loss"] as an ember Tensor (docs/guide/callbacks.md: device tensors), where tf.keras
hands a callback Python floats, so math.log10(1 / logs["loss"]) reads a tensor back every
test batch.
Fixed in ember since the first version of this port: no tf.image.rgb_to_yuv (GAP 2), no
tf.nn.depth_to_space (GAP 3; a reshape/transpose stand-in in a Lambda layer) and no
tf.image.psnr (GAP 5), all AttributeError, with TF's formulas standing in. Upstream's lines
run. (em.image.resize keeps a float64 image float64, by design, where TF returns float32;
not on this program's path: its images are float32.)
"""

import io
import math
import os
import tarfile
import tempfile

import numpy as np
from PIL import Image as PILImage  # (added: writes the generated archive)
from PIL import ImageDraw

import ember.core as em
from ember import nn
from ember.nn import layers
from ember.nn.preprocessing import image_dataset_from_directory
from ember.nn.preprocessing.image import array_to_img, img_to_array, load_img

keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
np.random.seed(0)
em.random.set_seed(0)
workdir = tempfile.TemporaryDirectory()
os.environ["KERAS_HOME"] = workdir.name  # get_file's cache: the generated archive goes there

# (added) BSDS500's layout: images/{train,val,test}/<id>.jpg (481x321, landscape or portrait)
# and groundTruth/{train,val,test}/<id>.mat, under BSR/BSDS500/data in BSR_bsds500.tgz
COUNTS = {"train": 200, "val": 100, "test": 200} if FULL else \
    {"train": 8, "val": 4, "test": 60} if SHORT else {"train": 40, "val": 20, "test": 60}
LONG, SHORT_SIDE = (481, 321) if FULL else (72, 48)


def _picture(rng, w, h):
    """A made-up photograph: a smooth background (a gradient and two low-frequency waves
    per channel), 4 to 9 flat shapes with sharp edges, a few thin lines, and mild noise."""
    yy, xx = np.mgrid[0:h, 0:w] / max(w, h)
    img = np.empty((h, w, 3))
    for c in range(3):
        img[..., c] = rng.uniform(40, 200) + rng.uniform(-60, 60) * (xx - 0.5) \
            + rng.uniform(-60, 60) * (yy - 0.5)
        for _ in range(2):
            f = rng.uniform(0.5, 3, size=2)
            img[..., c] += rng.uniform(5, 25) * np.cos(2 * np.pi * (f[0] * xx + f[1] * yy)
                                                      + rng.uniform(0, 2 * np.pi))
    pil = PILImage.fromarray(np.clip(img, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(pil)
    for _ in range(rng.integers(4, 10)):
        x0, y0 = rng.uniform(-0.2, 0.9) * w, rng.uniform(-0.2, 0.9) * h
        x1, y1 = x0 + rng.uniform(0.1, 0.6) * w, y0 + rng.uniform(0.1, 0.6) * h
        colour = tuple(int(v) for v in rng.integers(0, 256, size=3))
        kind = rng.integers(3)
        if kind == 0:
            draw.ellipse([x0, y0, x1, y1], fill=colour)
        elif kind == 1:
            draw.rectangle([x0, y0, x1, y1], fill=colour)
        else:
            draw.polygon([(x0, y1), ((x0 + x1) / 2, y0), (x1, y1)], fill=colour)
    for _ in range(rng.integers(1, 4)):
        pts = rng.uniform(0, 1, size=4) * [w, h, w, h]
        draw.line(list(pts), fill=tuple(int(v) for v in rng.integers(0, 256, size=3)),
                  width=int(rng.integers(1, 3)))
    out = np.asarray(pil, dtype=np.float64) + rng.normal(0, 3, size=(h, w, 3))
    return PILImage.fromarray(np.clip(out, 0, 255).round().astype(np.uint8))


def write_synthetic_bsds500(archive, counts, seed=0):
    """Added: BSR_bsds500.tgz as the archive holds it (see the header), with made-up
    pictures. Returns {split: {file name: pixels as written (before JPEG)}}."""
    rng = np.random.default_rng(seed)
    ids = rng.choice(np.arange(100000, 400000), size=sum(counts.values()), replace=False)
    written = {}
    with tarfile.open(archive, "w:gz") as tar:
        def add(name, payload):
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))
        k = 0
        for split, n in counts.items():
            written[split] = {}
            for _ in range(n):
                portrait = rng.random() < 0.3
                w, h = (SHORT_SIDE, LONG) if portrait else (LONG, SHORT_SIDE)
                img = _picture(rng, w, h)
                buffer = io.BytesIO()
                img.save(buffer, format="JPEG", quality=92)
                add(f"BSR/BSDS500/data/images/{split}/{ids[k]}.jpg", buffer.getvalue())
                add(f"BSR/BSDS500/data/groundTruth/{split}/{ids[k]}.mat",
                    b"MATLAB 5.0 MAT-file (a stand-in)")
                written[split][f"{ids[k]}.jpg"] = np.asarray(img)
                k += 1
            add(f"BSR/BSDS500/data/images/{split}/Thumbs.db", b"\0" * 64)
    return written


os.makedirs(os.path.join(workdir.name, "datasets"))
# (ember's get_file keeps an untarred download as datasets/<fname>_archive: it is found
# there and only extracted, so upstream's get_file line runs as written)
WRITTEN = write_synthetic_bsds500(os.path.join(workdir.name, "datasets", "BSR_archive"), COUNTS)

"""
## Setup
"""
# (the imports are above: import tensorflow as tf -> import ember.core as em, from
# tensorflow import keras -> keras = nn, tensorflow.keras.preprocessing -> ember.nn.preprocessing;
# from IPython.display import display: IPython is not installed here, see display below)

shown = []  # (added)


def display(img):
    """IPython.display.display stand-in (IPython is not installed here, and there is no
    notebook): keeps what would be shown, for the checks."""
    shown.append(img)


"""
## Load data: BSDS500 dataset
"""

dataset_url = "http://www.eecs.berkeley.edu/Research/Projects/CS/vision/grouping/BSR/BSR_bsds500.tgz"
data_dir = keras.utils.get_file(origin=dataset_url, fname="BSR", untar=True)
# GAP 1: root_dir = os.path.join(data_dir, "BSDS500/data")
root_dir = os.path.join(data_dir, "BSR", "BSDS500/data")
assert os.path.isdir(root_dir), root_dir  # (added)

crop_size = 300 if FULL else 48
upscale_factor = 3
input_size = crop_size // upscale_factor
batch_size = 8

train_ds = image_dataset_from_directory(
    root_dir,
    batch_size=batch_size,
    image_size=(crop_size, crop_size),
    validation_split=0.2,
    subset="training",
    seed=1337,
    label_mode=None,
)

valid_ds = image_dataset_from_directory(
    root_dir,
    batch_size=batch_size,
    image_size=(crop_size, crop_size),
    validation_split=0.2,
    subset="validation",
    seed=1337,
    label_mode=None,
)

# (added) the listing: every image of images/ (the .mat files and Thumbs.db skipped), in
# Keras's order (sorted, shuffled with RandomState(1337)), the last 20% to validate
all_jpgs = sorted(os.path.join(root_dir, "images", split, name)
                  for split in ("test", "train", "val") for name in WRITTEN[split])
np.random.RandomState(1337).shuffle(all_jpgs)
n_val = int(0.2 * len(all_jpgs))
assert train_ds.file_paths == all_jpgs[:-n_val], train_ds.file_paths[:3]
assert valid_ds.file_paths == all_jpgs[-n_val:]

"""
We rescale the images to take values in the range [0, 1].
"""


def scaling(input_image):
    input_image = input_image / 255.0
    return input_image


valid_file_paths = valid_ds.file_paths  # (added, for the checks: map's dataset has none)
# Scale from (0, 255) to (0, 1)
train_ds = train_ds.map(scaling)
valid_ds = valid_ds.map(scaling)

"""
Let's visualize a few sample images:
"""

for batch in train_ds.take(1):
    for img in batch:
        display(array_to_img(img))

# (added) a batch: float32 in [0, 1], (batch, crop, crop, 3); array_to_img makes PIL images
# of it, stretched to 0-255 (scale=True)
assert batch.shape == (batch_size, crop_size, crop_size, 3) and batch.dtype == np.float32
assert 0.0 <= batch.min() and batch.max() <= 1.0
assert len(shown) == batch_size and shown[0].size == (crop_size, crop_size)
x0 = np.asarray(batch[0], np.float64)
np.testing.assert_allclose(np.asarray(shown[0], np.float64),
                           np.floor((x0 - x0.min()) / (x0 - x0.min()).max() * 255), atol=1)


def bilinear(a, out_h, out_w):
    """(added) TF's bilinear resize (half-pixel centres, no antialiasing), in numpy."""
    def taps(n_in, n_out):
        c = (np.arange(n_out) + 0.5) * n_in / n_out - 0.5
        lo = np.floor(c).astype(int)
        f = c - lo
        return np.clip(lo, 0, n_in - 1), np.clip(lo + 1, 0, n_in - 1), f
    y0, y1, fy = taps(a.shape[0], out_h)
    x0_, x1, fx = taps(a.shape[1], out_w)
    rows = a[y0] * (1 - fy)[:, None, None] + a[y1] * fy[:, None, None]
    return rows[:, x0_] * (1 - fx)[None, :, None] + rows[:, x1] * fx[None, :, None]


# (added) one pass over the validation set gives each validation file once (in a shuffled
# order): PIL's decoding of the JPEG resized as TF resizes (bilinear), divided by 255
expected = []
for path in valid_file_paths:
    with PILImage.open(path) as f:
        decoded = np.asarray(f.convert("RGB"), np.float64)
    expected.append(bilinear(decoded, crop_size, crop_size) / 255.0)
expected = np.stack(expected)
got = np.concatenate(list(valid_ds))
assert got.shape == expected.shape, got.shape
order = [int(np.argmin(np.abs(expected - g).reshape(len(expected), -1).max(axis=1))) for g in got]
assert sorted(order) == list(range(len(expected))), order
np.testing.assert_allclose(got, expected[order], atol=1e-5)

"""
We prepare a dataset of test image paths that we will use for
visual evaluation at the end of this example.
"""

dataset = os.path.join(root_dir, "images")
test_path = os.path.join(dataset, "test")

test_img_paths = sorted(
    [
        os.path.join(test_path, fname)
        for fname in os.listdir(test_path)
        if fname.endswith(".jpg")
    ]
)
assert [os.path.basename(p) for p in test_img_paths] == sorted(WRITTEN["test"])  # (added)

"""
## Crop and resize images

Let's process image data.
First, we convert our images from the RGB color space to the
[YUV colour space](https://en.wikipedia.org/wiki/YUV).

For the input data (low-resolution images),
we crop the image, retrieve the `y` channel (luninance),
and resize it with the `area` method (use `BICUBIC` if you use PIL).
We only consider the luminance channel
in the YUV color space because humans are more sensitive to
luminance change.

For the target data (high-resolution images), we just crop the image
and retrieve the `y` channel.
"""


# (added, for the check below) TF's kernel (image_ops_impl.py)
_rgb_to_yuv_kernel = [[0.299, -0.14714119, 0.61497538],
                      [0.587, -0.28886916, -0.51496512],
                      [0.114, 0.43601035, -0.10001026]]


# Use TF Ops to process.
def process_input(input, input_size, upscale_factor):
    input = em.image.rgb_to_yuv(input)
    last_dimension_axis = len(input.shape) - 1
    y, u, v = em.split(input, 3, axis=last_dimension_axis)
    return em.image.resize(y, [input_size, input_size], method="area")


def process_target(input):
    input = em.image.rgb_to_yuv(input)
    last_dimension_axis = len(input.shape) - 1
    y, u, v = em.split(input, 3, axis=last_dimension_axis)
    return y


train_ds = train_ds.map(
    lambda x: (process_input(x, input_size, upscale_factor), process_target(x))
)
train_ds = train_ds.prefetch(buffer_size=32)

valid_ds = valid_ds.map(
    lambda x: (process_input(x, input_size, upscale_factor), process_target(x))
)
valid_ds = valid_ds.prefetch(buffer_size=32)

"""
Let's take a look at the input and target data.
"""

shown.clear()  # (added)
for batch in train_ds.take(1):
    for img in batch[0]:
        display(array_to_img(img))
    for img in batch[1]:
        display(array_to_img(img))

# (added) the pairs: Y = 0.299 R + 0.587 G + 0.114 B of the [0, 1] image (the target) and its
# 3x3 block means (TF's "area" resize by a whole factor), float32, checked against numpy
lowres, highres = (np.asarray(t) for t in batch)
assert lowres.shape == (batch_size, input_size, input_size, 1) and lowres.dtype == np.float32
assert highres.shape == (batch_size, crop_size, crop_size, 1) and highres.dtype == np.float32
assert len(shown) == 2 * batch_size and shown[0].size == (input_size, input_size)
assert shown[-1].size == (crop_size, crop_size) and shown[0].mode == "L"


def block_mean(a, k):
    """(added) a (n, h, w, c) batch averaged over k x k blocks, in numpy."""
    n, h, w, c = a.shape
    return a.reshape(n, h // k, k, w // k, k, c).mean(axis=(2, 4))


luma = np.array([0.299, 0.587, 0.114])
np.testing.assert_allclose(lowres, block_mean(highres.astype(np.float64), upscale_factor),
                           atol=1e-6)
y_valid = expected @ luma  # the validation images read above, (n, crop, crop)
targets = np.asarray(process_target(expected.astype(np.float32)))
inputs = np.asarray(process_input(expected.astype(np.float32), input_size, upscale_factor))
assert targets.shape == expected.shape[:3] + (1,) and targets.dtype == np.float32
np.testing.assert_allclose(targets[..., 0], y_valid, atol=1e-6)
np.testing.assert_allclose(inputs[..., 0], block_mean(y_valid[..., None], 3)[..., 0],
                           atol=1e-6)
# the U and V channels, and rgb_to_yuv against numpy's product with TF's kernel
yuv = np.asarray(em.image.rgb_to_yuv(expected[:2].astype(np.float32)))
np.testing.assert_allclose(yuv, expected[:2] @ np.array(_rgb_to_yuv_kernel), atol=1e-6)
grey = np.full((1, 1, 3), 0.5, np.float32)  # a grey has no colour: U = V = 0
np.testing.assert_allclose(np.asarray(em.image.rgb_to_yuv(grey)), [[[0.5, 0, 0]]], atol=1e-6)
# a validation pass of the pairs: every target is the luma of one validation image
val_pairs = list(valid_ds)
val_targets = np.concatenate([b[1] for b in val_pairs])[..., 0]
assert len(val_targets) == len(expected)
for t in val_targets:
    assert np.abs(y_valid - t).reshape(len(y_valid), -1).max(axis=1).min() < 1e-5

"""
## Build a model

Compared to the paper, we add one more layer and we use the `relu` activation function
instead of `tanh`.
It achieves better performance even though we train the model for fewer epochs.
"""


def get_model(upscale_factor=3, channels=1):
    conv_args = {
        "activation": "relu",
        "kernel_initializer": "Orthogonal",
        "padding": "same",
    }
    inputs = keras.Input(shape=(None, None, channels))
    x = layers.Conv2D(64, 5, **conv_args)(inputs)
    x = layers.Conv2D(64, 3, **conv_args)(x)
    x = layers.Conv2D(32, 3, **conv_args)(x)
    x = layers.Conv2D(channels * (upscale_factor**2), 3, **conv_args)(x)
    outputs = em.nn_ops.depth_to_space(x, upscale_factor)

    return keras.Model(inputs, outputs)


# (added) depth_to_space's order against TF's definition, element by element
d2s_in = np.random.default_rng(1).normal(size=(2, 3, 4, 18)).astype(np.float32)
d2s_out = np.asarray(em.nn_ops.depth_to_space(em.constant(d2s_in), 3))
assert d2s_out.shape == (2, 9, 12, 2)
for h, w, i, j, c in np.ndindex(3, 4, 3, 3, 2):
    assert d2s_out[:, h * 3 + i, w * 3 + j, c].tolist() == d2s_in[:, h, w, (i * 3 + j) * 2 + c].tolist()

"""
## Define utility functions

We need to define several utility functions to monitor our results:

- `plot_results` to plot an save an image.
- `get_lowres_image` to convert an image to its low-resolution version.
- `upscale_image` to turn a low-resolution image to
a high-resolution version reconstructed by the model.
In this function, we use the `y` channel from the YUV color space
as input to the model and then combine the output with the
other channels to obtain an RGB image.
"""

# (matplotlib dropped: import matplotlib.pyplot as plt; from mpl_toolkits.axes_grid1.
#  inset_locator import zoomed_inset_axes, mark_inset)
import PIL  # noqa: E402 (upstream's place)

plotted = {}  # (added) what plot_results would save, by file name


def plot_results(img, prefix, title):
    """Plot the result with zoom-in area."""
    img_array = img_to_array(img)
    img_array = img_array.astype("float32") / 255.0

    # (matplotlib dropped: the figure of img_array, its 2x zoomed inset of x 200-300,
    #  y 100-200 marked in blue, plt.savefig(str(prefix) + "-" + title + ".png") and
    #  plt.show(); what would be saved is kept instead)
    plotted[str(prefix) + "-" + title + ".png"] = img_array


def get_lowres_image(img, upscale_factor):
    """Return low-resolution image to use as model input."""
    return img.resize(
        (img.size[0] // upscale_factor, img.size[1] // upscale_factor),
        PIL.Image.BICUBIC,
    )


def upscale_image(model, img):
    """Predict the result based on input image and restore the image as RGB."""
    ycbcr = img.convert("YCbCr")
    y, cb, cr = ycbcr.split()
    y = img_to_array(y)
    y = y.astype("float32") / 255.0

    input = np.expand_dims(y, axis=0)
    out = model.predict(input)

    out_img_y = out[0]
    out_img_y *= 255.0

    # Restore the image in RGB color space.
    out_img_y = out_img_y.clip(0, 255)
    out_img_y = out_img_y.reshape((np.shape(out_img_y)[0], np.shape(out_img_y)[1]))
    out_img_y = PIL.Image.fromarray(np.uint8(out_img_y), mode="L")
    out_img_cb = cb.resize(out_img_y.size, PIL.Image.BICUBIC)
    out_img_cr = cr.resize(out_img_y.size, PIL.Image.BICUBIC)
    out_img = PIL.Image.merge("YCbCr", (out_img_y, out_img_cb, out_img_cr)).convert(
        "RGB"
    )
    return out_img


"""
## Define callbacks to monitor training

The `ESPCNCallback` object will compute and display
the [PSNR](https://en.wikipedia.org/wiki/Peak_signal-to-noise_ratio) metric.
This is the main metric we use to evaluate super-resolution performance.
"""


class ESPCNCallback(keras.callbacks.Callback):
    def __init__(self):
        super(ESPCNCallback, self).__init__()  # noqa: UP008 (upstream's)
        self.test_img = get_lowres_image(load_img(test_img_paths[0]), upscale_factor)
        self.epoch_psnr = []  # (added) every epoch's mean, for the checks
        self.test_losses = []  # (added) the logs["loss"] of every test batch

    # Store PSNR value in each epoch.
    def on_epoch_begin(self, epoch, logs=None):
        self.psnr = []

    def on_epoch_end(self, epoch, logs=None):
        print("Mean PSNR for epoch: %.2f" % (np.mean(self.psnr)))  # noqa: UP031 (upstream's)
        self.epoch_psnr.append((np.mean(self.psnr), logs))  # (added)
        if epoch % 20 == 0:
            prediction = upscale_image(self.model, self.test_img)
            plot_results(prediction, "epoch-" + str(epoch), "prediction")

    def on_test_batch_end(self, batch, logs=None):
        self.psnr.append(10 * math.log10(1 / logs["loss"]))
        self.test_losses.append(float(logs["loss"]))  # (added)


class EpochWeights(keras.callbacks.Callback):
    """(added) the weights at the end of every epoch, to check what load_weights restores."""

    def __init__(self):
        super().__init__()
        self.weights = []

    def on_epoch_end(self, epoch, logs=None):
        self.weights.append([np.array(w) for w in self.model.get_weights()])


"""
Define `ModelCheckpoint` and `EarlyStopping` callbacks.
"""

early_stopping_callback = keras.callbacks.EarlyStopping(monitor="loss", patience=10)

# GAP 4: checkpoint_filepath = "/tmp/checkpoint"
checkpoint_filepath = os.path.join(workdir.name, "checkpoint.weights.h5")

model_checkpoint_callback = keras.callbacks.ModelCheckpoint(
    filepath=checkpoint_filepath,
    save_weights_only=True,
    monitor="loss",
    mode="min",
    save_best_only=True,
)

model = get_model(upscale_factor=upscale_factor, channels=1)
model.summary()

# (added) Keras's parameter count (kh * kw * in * out + out per layer): 1,664 + 36,928 +
# 18,464 + 2,601; the output 3x the input on a non-square image; the Orthogonal kernels
# (flattened to (kh * kw * in, out): orthonormal columns, or rows when fewer) and zero biases
assert model.count_params() == 1664 + 36928 + 18464 + 2601 == 59657
assert model.output_shape == (None, None, None, 1)
assert model(np.zeros((2, 5, 7, 1), np.float32)).shape == (2, 15, 21, 1)
for kernel, bias in zip(model.get_weights()[::2], model.get_weights()[1::2]):
    flat = np.asarray(kernel, np.float64).reshape(-1, kernel.shape[-1])
    gram = flat.T @ flat if flat.shape[0] >= flat.shape[1] else flat @ flat.T
    np.testing.assert_allclose(gram, np.eye(len(gram)), atol=1e-5)
    assert not np.asarray(bias).any()

espcn_callback = ESPCNCallback()  # (added: named, for the checks)
epoch_weights = EpochWeights()  # (added)
callbacks = [espcn_callback, early_stopping_callback, model_checkpoint_callback, epoch_weights]
loss_fn = keras.losses.MeanSquaredError()
optimizer = keras.optimizers.Adam(learning_rate=0.001)

"""
## Train the model
"""

epochs = 100 if FULL else 1 if SHORT else 40

model.compile(
    optimizer=optimizer,
    loss=loss_fn,
)

history = model.fit(  # (added: history = )
    train_ds, epochs=epochs, callbacks=callbacks, validation_data=valid_ds, verbose=2
)

# The model weights (that are considered the best) are loaded into the model.
model.load_weights(checkpoint_filepath)

# (added) fit's History, one value an epoch; the weights loaded are those of the epoch of
# the lowest training loss (save_best_only on "loss"); no early stop (the loss falls)
losses = history.history["loss"]
ran = early_stopping_callback.stopped_epoch + 1 if early_stopping_callback.stopped_epoch else epochs
assert len(losses) == len(history.history["val_loss"]) == ran, history.history.keys()
assert all(np.isfinite(losses)) and (FULL or ran == epochs)
best = int(np.argmin(losses))
for got_w, saved_w in zip(model.get_weights(), epoch_weights.weights[best]):
    np.testing.assert_array_equal(np.asarray(got_w), saved_w)
# the test batches' logs["loss"] are running means over the epoch's validation batches (as
# in tf.keras), so each epoch's last one is its val_loss, and the PSNRs printed are theirs
n_val_batches = math.ceil(n_val / batch_size)
assert len(espcn_callback.test_losses) == n_val_batches * ran
np.testing.assert_allclose(espcn_callback.test_losses[n_val_batches - 1::n_val_batches],
                           history.history["val_loss"], rtol=1e-5)
last = espcn_callback.test_losses[-n_val_batches:]
np.testing.assert_allclose(espcn_callback.epoch_psnr[-1][0],
                           np.mean([10 * math.log10(1 / v) for v in last]), rtol=1e-6)

# (added) evaluate on the validation pairs equals numpy's mean squared error of predict's
# output; predict equals a float64 numpy forward pass of the convolutions ("same": k // 2
# zeros a side), relus and depth_to_space on two validation images
val_lowres = np.concatenate([np.asarray(a) for a, _ in val_pairs])
val_highres = np.concatenate([np.asarray(b) for _, b in val_pairs])
val_pred = model.predict(val_lowres, verbose=0)
assert val_pred.shape == val_highres.shape and val_pred.dtype == np.float32
val_mse = float(np.mean((val_pred.astype(np.float64) - val_highres) ** 2))
np.testing.assert_allclose(model.evaluate(val_lowres, val_highres, verbose=0), val_mse,
                           rtol=1e-4)


def numpy_forward(x, weights):
    for kernel, bias in zip(weights[::2], weights[1::2]):
        k = kernel.shape[0]
        padded = np.pad(x, ((0, 0), (k // 2, k // 2), (k // 2, k // 2), (0, 0)))
        windows = np.lib.stride_tricks.sliding_window_view(padded, (k, k), axis=(1, 2))
        x = np.maximum(np.einsum("nhwcij,ijco->nhwo", windows, kernel) + bias, 0)
    n, h, w, _ = x.shape
    return x.reshape(n, h, w, 3, 3, 1).transpose(0, 1, 3, 2, 4, 5).reshape(n, 3 * h, 3 * w, 1)


np.testing.assert_allclose(
    val_pred[:2], numpy_forward(val_lowres[:2].astype(np.float64),
                                [np.asarray(v, np.float64) for v in model.get_weights()]),
    atol=1e-5)

# (added) what training reached (see the header): the validation PSNR (10 log10(1 / mse),
# images in [0, 1]) above that of repeating each low-resolution pixel 3x3 (nearest-neighbour
# upscaling, which this network can express exactly), computed in numpy on the same pairs
nearest = val_lowres.repeat(3, axis=1).repeat(3, axis=2)
nearest_psnr = 10 * math.log10(1 / np.mean((nearest.astype(np.float64) - val_highres) ** 2))
val_psnr = 10 * math.log10(1 / val_mse)
print(f"(added) validation PSNR {val_psnr:.2f} dB; nearest-neighbour upscaling: "
      f"{nearest_psnr:.2f} dB; the first epoch's: {espcn_callback.epoch_psnr[0][0]:.2f} dB")
assert SHORT or val_psnr > nearest_psnr + 0.25, (val_psnr, nearest_psnr)

"""
## Run model prediction and plot the results

Let's compute the reconstructed version of a few images and save the results.
"""


total_bicubic_psnr = 0.0
total_test_psnr = 0.0
total_nearest_psnr = 0.0  # (added)

for index, test_img_path in enumerate(test_img_paths[50:60]):
    img = load_img(test_img_path)
    lowres_input = get_lowres_image(img, upscale_factor)
    w = lowres_input.size[0] * upscale_factor
    h = lowres_input.size[1] * upscale_factor
    highres_img = img.resize((w, h))
    prediction = upscale_image(model, lowres_input)
    lowres_img = lowres_input.resize((w, h))
    lowres_img_arr = img_to_array(lowres_img)
    highres_img_arr = img_to_array(highres_img)
    predict_img_arr = img_to_array(prediction)
    bicubic_psnr = em.image.psnr(lowres_img_arr, highres_img_arr, max_val=255)
    test_psnr = em.image.psnr(predict_img_arr, highres_img_arr, max_val=255)

    total_bicubic_psnr += bicubic_psnr
    total_test_psnr += test_psnr

    # (added) the sizes; psnr against numpy's 20 log10(255) - 10 log10(mse) in float64; a
    # nearest-neighbour upscaling of the same input, to compare with below
    assert prediction.size == highres_img.size == lowres_img.size == (w, h)
    assert predict_img_arr.shape == (h, w, 3) and predict_img_arr.dtype == np.float32
    for value, arr in ((bicubic_psnr, lowres_img_arr), (test_psnr, predict_img_arr)):
        mse = np.mean((arr.astype(np.float64) - highres_img_arr) ** 2)
        np.testing.assert_allclose(float(value), 20 * math.log10(255) - 10 * math.log10(mse),
                                   rtol=1e-5)
    nearest_img_arr = img_to_array(lowres_input.resize((w, h), PIL.Image.NEAREST))
    total_nearest_psnr += float(em.image.psnr(nearest_img_arr, highres_img_arr, max_val=255))

    print(
        "PSNR of low resolution image and high resolution image is %.4f" % bicubic_psnr  # noqa: UP031
    )
    print("PSNR of predict and high resolution is %.4f" % test_psnr)  # noqa: UP031 (upstream's)
    plot_results(lowres_img, index, "lowres")
    plot_results(highres_img, index, "highres")
    plot_results(prediction, index, "prediction")

print("Avg. PSNR of lowres images is %.4f" % (total_bicubic_psnr / 10))
print("Avg. PSNR of reconstructions is %.4f" % (total_test_psnr / 10))

# (added) what was plotted: the predictions on test_img_paths[0] every 20 epochs, at 3x its
# low resolution, and 3 images for each of the 10 test images, in [0, 1]; the reconstructions
# (the model on the Y channel, PIL's bicubic Cb and Cr) above nearest-neighbour upscaling
# by 1 dB on average, and within 1 dB of PIL's bicubic
first = load_img(test_img_paths[0])
assert plotted["epoch-0-prediction.png"].shape == (first.size[1] // 3 * 3, first.size[0] // 3 * 3, 3)
assert len(plotted) == len(range(0, ran, 20)) + 30
assert all(0 <= a.min() and a.max() <= 1 for a in plotted.values())
avg_test, avg_bicubic = float(total_test_psnr) / 10, float(total_bicubic_psnr) / 10
print(f"(added) Avg. PSNR of nearest-neighbour upscaling is {total_nearest_psnr / 10:.4f}")
assert SHORT or avg_test > total_nearest_psnr / 10 + 1.0, (avg_test, total_nearest_psnr / 10)
assert SHORT or avg_test > avg_bicubic - 1.0, (avg_test, avg_bicubic)
