"""Port of keras-team/keras-io examples/vision/oxford_pets_image_segmentation.py ("Image
segmentation with a U-Net-like architecture", the tf.keras version, last modified
2020/04/20): the paths of the Oxford-IIIT Pets JPEGs (images/*.jpg) and of their trimaps
(annotations/trimaps/*.png, per-pixel classes 1 pet, 2 background, 3 border), sorted and
paired; a keras.utils.Sequence that loads a batch with load_img (resized to img_size,
nearest neighbour; the trimaps in grayscale, minus one); an Xception-style U-Net built with
the functional API (a strided Conv2D entry, three downsampling blocks of SeparableConv2D +
BatchNormalization + MaxPooling2D with strided 1x1 Conv2D residuals joined by layers.add,
four upsampling blocks of Conv2DTranspose + BatchNormalization + UpSampling2D with
upsampled 1x1 Conv2D residuals, a per-pixel softmax Conv2D); the paths shuffled with
random.Random(1337) and split into training and validation Sequences; compile("rmsprop",
"sparse_categorical_crossentropy"), fit with validation_data and a ModelCheckpoint
(save_best_only), predict on the validation Sequence, and one predicted mask made an image
(argmax, array_to_img, ImageOps.autocontrast).

Upstream: https://github.com/keras-team/keras-io/blob/0c3c019ffc3f2650b5bfe3c822e0c60a815cf9e8/examples/vision/oxford_pets_image_segmentation.py
Changed: names only (keras -> nn, keras.layers -> nn.layers, keras.Input/Model ->
nn.Input/Model, keras.callbacks.ModelCheckpoint -> nn.callbacks.ModelCheckpoint), except
the GAPs below. The Oxford-IIIT Pets archives cannot be downloaded here (no network):
SYNTHETIC files of the same layout are written with numpy and PIL into a temporary
directory that the program works in (upstream: the working directory), so upstream's
relative paths and os.listdir filters read them unchanged: images/<Breed>_<n>.jpg (RGB
JPEGs of varied sizes, as the photos; two .mat files beside them, as the archive has) and
annotations/trimaps/<Breed>_<n>.png (8-bit grey trimaps of values 1, 2, 3; macOS "._"
files beside them, as the archive has, which upstream's filter skips). Each image holds
one bright "pet" (an ellipse, a rectangle or a diamond, about a third of the picture) on a
dark, noisy background; its trimap marks the pet 1, the rest 2 and a band about the pet's
outline 3 (the real trimaps' "border"). The IPython displays (display, IPython's Image)
are dropped; the images they show are checked instead. Reduced (EMBER_PROGRAMS_FULL=1
restores upstream's 160x160 images, filter counts, batch 32, 1,000 validation images and
15 epochs, on 7,390 generated images, the archive's count): 32x32 images (the U-Net halves
the size four times, so it must be a multiple of 16), every filter count halved (16-128
down, 128-16 up), 448 images of which 64 validate, batch 8 (48 steps an epoch:
BatchNormalization's moving statistics, with momentum 0.99, need a few hundred steps
before inference mode follows training), 8 epochs; EMBER_PROGRAMS_SHORT=1 (the strict-GPU
run): 96 images of which 32 validate, 1 epoch, no check on what training reached.
Added: seeds for numpy and ember; the file layout (counts, the filters, each input paired
with its own trimap before and after the 1337 shuffle); a Sequence batch's shapes and
dtypes, its trimaps equal to a numpy nearest-neighbour resize of the written ones minus
one, its images equal to the same resize of PIL's own decoding of the JPEG and close to
the written pixels (JPEG smooths the noise), load_img's (height, width) order on a
non-square target_size, and the auto-contrasted trimap's three grey levels in class order;
the model's output shape, softmax rows summing to 1, and its parameter counts against
Keras's formulas (upstream's widths: 2,058,979 in all, 3,776 of them BatchNormalization's
moving statistics, as Keras's summary prints); RMSprop from the "rmsprop" string against
numpy (two steps of tf.keras's defaults: learning rate 1e-3, rho 0.9, epsilon 1e-7 added
to the root); fit's History (loss and val_loss, one value an epoch) and every epoch's loss
finite; the training loss falls by 30%; the checkpoint holds the epoch of the best
val_loss (loaded with nn.models.load_model, it evaluates to that epoch's val_loss);
evaluate on the validation Sequence equal to numpy's sparse categorical cross-entropy of
predict's probabilities and to tf.keras's, from the logits of a float64 numpy forward pass
of the whole trained U-Net (inference-mode BatchNormalization, TF's "same" padding,
Conv2DTranspose as the gradient of a convolution, nearest UpSampling2D), which predict's
probabilities also equal; predict's shape and dtype, equal to calling the model batch by
batch; and (CPU run) the predicted masks' pixel accuracy on the validation images passes
0.75 and the majority class's share (background, ~0.6-0.65: a model that learnt nothing
but the prior) by 0.1, where the untrained model gets 0.14-0.56 (6 seeds gave 0.83-0.89
after 8 epochs); display_mask's image is the mask's size with one grey level per predicted
class.
Fixed in ember since the port was written: GAP 5, "sparse_categorical_crossentropy" on the
softmax output was computed from probabilities clipped to [1e-7, 1 - 1e-7] (softmax([0, 20,
-20]) with label 2 gave 16.118 and no gradient; after one epoch a third of the validation
pixels were capped, val_loss 8.85 where tf.keras gives 12.03); it now comes from the logits
the softmax was given, as tf.keras's does, and the val_loss is checked against numpy's.
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it):
1. no keras.preprocessing (`from tensorflow.keras.preprocessing.image import load_img`,
keras.preprocessing.image.array_to_img: ModuleNotFoundError / AttributeError; Keras 3
keeps keras.preprocessing.image too): nn.utils.load_img and nn.utils.array_to_img stand
in. 2. no keras.utils.Sequence (AttributeError; Keras 3 exports it as an alias of
PyDataset): nn.utils.PyDataset stands in (fit shuffles its batch order each epoch, as
tf.keras does a Sequence's). 3. no keras.backend (clear_session, AttributeError; Keras 3
also has keras.utils.clear_session, missing too): dropped. 4. ModelCheckpoint("....h5")
raises ValueError (ember writes no HDF5 models; tf.keras saves the whole model in HDF5
there): a .keras file stands in. 6. silent: BatchNormalization's moving_variance follows
the biased batch variance (Keras 3's rule), where tf.keras's fused layer (4-D inputs, as all of this
model's) uses Bessel's correction: one training call on arange(8).reshape(2, 2, 2, 1)
gives 1.0425 in ember, 0.99 + 0.01 * 6.0 = 1.05 in tf.keras; n / (n - 1) is 3% at this
model's 2x2 bottleneck with batch 8, ~0.1% above it. Also seen: two runs of this program
with the same seeds differ from the first step on (~1e-6 relative in one forward pass,
~0.1% in the first epoch's loss, ~0.02 in the final accuracy): ember's convolution
autotuner times algorithms that round differently (em.config.deterministic stops that;
TensorFlow's CPU convolutions need no such switch).
"""

import math
import os
import tempfile

import numpy as np
from PIL import Image as PILImage
from PIL import ImageOps

import ember.core as em
from ember import nn

keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
np.random.seed(0)
em.random.set_seed(0)
workdir = tempfile.TemporaryDirectory()
os.chdir(workdir.name)  # upstream reads images/ and annotations/ in the working directory
N_IMAGES = 7390 if FULL else 96 if SHORT else 448
VAL_SAMPLES = 1000 if FULL else 32 if SHORT else 64
EPOCHS = 15 if FULL else 1 if SHORT else 8
W = 1 if FULL else 2  # the width divisor: every filter count is divided by it
BREEDS = ["Abyssinian", "Bengal", "Birman", "Persian", "beagle", "boxer", "pug", "shiba_inu"]


def write_synthetic_pets(n, seed=0):
    """Added: images/ and annotations/trimaps/ as the two Oxford-IIIT Pets archives unpack,
    with made-up pictures (see the header). Returns {file stem: (pixels, trimap)} as
    written, for the checks."""
    rng = np.random.default_rng(seed)
    os.makedirs("images")
    os.makedirs(os.path.join("annotations", "trimaps"))
    written = {}
    lo, hi = (160, 400) if FULL else (24, 48)
    for i in range(n):
        stem = f"{BREEDS[i % len(BREEDS)]}_{i // len(BREEDS) + 1}"
        h, w = (int(s) for s in rng.integers(lo, hi + 1, 2))
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
        cy, cx = rng.uniform(0.35, 0.65) * h, rng.uniform(0.35, 0.65) * w
        ry, rx = rng.uniform(0.25, 0.4) * h, rng.uniform(0.25, 0.4) * w
        kind = rng.integers(3)
        u, v = (yy - cy) / ry, (xx - cx) / rx
        if kind == 0:  # ellipse
            level = np.hypot(u, v)
        elif kind == 1:  # rectangle
            level = np.maximum(np.abs(u), np.abs(v))
        else:  # diamond
            level = np.abs(u) + np.abs(v)
        signed = (level - 1.0) * min(ry, rx)  # about the distance to the outline, in pixels
        band = max(1.0, 0.02 * min(h, w))
        trimap = np.where(signed < -band, 1, np.where(signed > band, 2, 3)).astype(np.uint8)
        background = rng.uniform(0, 110, 3)
        pet = rng.uniform(140, 255, 3)
        pixels = np.where((signed < 0)[..., None], pet, background)
        pixels = np.clip(pixels + rng.normal(0, 20, (h, w, 3)), 0, 255).round().astype(np.uint8)
        PILImage.fromarray(pixels, "RGB").save(os.path.join("images", stem + ".jpg"),
                                               quality=95)
        PILImage.fromarray(trimap, "L").save(os.path.join("annotations", "trimaps",
                                                          stem + ".png"))
        written[stem] = (pixels, trimap)
    for stem in ("Abyssinian_100", "Abyssinian_101"):  # as the archive: not images
        with open(os.path.join("images", stem + ".mat"), "wb") as f:
            f.write(b"MATLAB 5.0 MAT-file")
        with open(os.path.join("annotations", "trimaps", "._" + stem + ".png"), "wb") as f:
            f.write(b"\x00\x05\x16\x07")  # an AppleDouble header, not a PNG
    return written


written = write_synthetic_pets(N_IMAGES)

"""
## Prepare paths of input images and target segmentation masks
"""

input_dir = "images/"
target_dir = "annotations/trimaps/"
img_size = (160, 160) if FULL else (32, 32)
num_classes = 3
batch_size = 32 if FULL else 8

input_img_paths = sorted(
    [
        os.path.join(input_dir, fname)
        for fname in os.listdir(input_dir)
        if fname.endswith(".jpg")
    ]
)
target_img_paths = sorted(
    [
        os.path.join(target_dir, fname)
        for fname in os.listdir(target_dir)
        if fname.endswith(".png") and not fname.startswith(".")
    ]
)

print("Number of samples:", len(input_img_paths))

for input_path, target_path in zip(input_img_paths[:10], target_img_paths[:10]):
    print(input_path, "|", target_path)


def stem_of(path):
    return os.path.splitext(os.path.basename(path))[0]


assert len(input_img_paths) == len(target_img_paths) == N_IMAGES
assert [stem_of(p) for p in input_img_paths] == [stem_of(p) for p in target_img_paths]
assert sorted(stem_of(p) for p in input_img_paths) == sorted(written)

"""
## What does one input image and corresponding segmentation mask look like?
"""

# from IPython.display import Image, display   (the notebook display, dropped)
# GAP 1: from tensorflow.keras.preprocessing.image import load_img
from ember.nn.utils import load_img  # noqa: E402

# Display input image #7
# display(Image(filename=input_img_paths[9]))   (the notebook display, dropped)
with PILImage.open(input_img_paths[9]) as shown:  # added: what it would show
    assert shown.format == "JPEG" and shown.mode == "RGB"

# Display auto-contrast version of corresponding target (per-pixel categories)
img = ImageOps.autocontrast(load_img(target_img_paths[9]))
# display(img)   (the notebook display, dropped)
shown_trimap = written[stem_of(target_img_paths[9])][1]
assert img.mode == "RGB" and img.size == shown_trimap.shape[::-1], (img.mode, img.size)
contrast = np.asarray(img)
# the trimap's classes 1 < 2 < 3 become three greys in that order, stretched to 0 and 255
greys = [np.unique(contrast[shown_trimap == value]) for value in (1, 2, 3)]
assert all(len(g) == 1 for g in greys), greys
assert greys[0][0] == 0 < greys[1][0] < greys[2][0] == 255, greys

"""
## Prepare `Sequence` class to load & vectorize batches of data
"""


# GAP 2: class OxfordPets(keras.utils.Sequence):
class OxfordPets(keras.utils.PyDataset):
    """Helper to iterate over the data (as Numpy arrays)."""

    def __init__(self, batch_size, img_size, input_img_paths, target_img_paths):
        self.batch_size = batch_size
        self.img_size = img_size
        self.input_img_paths = input_img_paths
        self.target_img_paths = target_img_paths

    def __len__(self):
        return len(self.target_img_paths) // self.batch_size

    def __getitem__(self, idx):
        """Returns tuple (input, target) correspond to batch #idx."""
        i = idx * self.batch_size
        batch_input_img_paths = self.input_img_paths[i : i + self.batch_size]
        batch_target_img_paths = self.target_img_paths[i : i + self.batch_size]
        x = np.zeros((self.batch_size,) + self.img_size + (3,), dtype="float32")
        for j, path in enumerate(batch_input_img_paths):
            img = load_img(path, target_size=self.img_size)
            x[j] = img
        y = np.zeros((self.batch_size,) + self.img_size + (1,), dtype="uint8")
        for j, path in enumerate(batch_target_img_paths):
            img = load_img(path, target_size=self.img_size, color_mode="grayscale")
            y[j] = np.expand_dims(img, 2)
            # Ground truth labels are 1, 2, 3. Subtract one to make them 0, 1, 2:
            y[j] -= 1
        return x, y


def nearest_resize(a, size):
    """Added: PIL's nearest-neighbour resize in numpy: output pixel i reads input pixel
    floor((i + 0.5) * n_in / n_out)."""
    rows = np.floor((np.arange(size[0]) + 0.5) * a.shape[0] / size[0]).astype(int)
    cols = np.floor((np.arange(size[1]) + 0.5) * a.shape[1] / size[1]).astype(int)
    return a[rows][:, cols]


# Added: the Sequence's first batch against the files as written
probe_gen = OxfordPets(batch_size, img_size, input_img_paths, target_img_paths)
assert len(probe_gen) == N_IMAGES // batch_size
bx, by = probe_gen[0]
assert bx.shape == (batch_size,) + img_size + (3,) and bx.dtype == np.float32
assert by.shape == (batch_size,) + img_size + (1,) and by.dtype == np.uint8
for j in range(batch_size):
    pixels, trimap = written[stem_of(target_img_paths[j])]
    np.testing.assert_array_equal(by[j, :, :, 0], nearest_resize(trimap, img_size) - 1)
    with PILImage.open(input_img_paths[j]) as f:  # the JPEG decoded by PIL alone
        decoded = np.asarray(f.convert("RGB"))
    np.testing.assert_array_equal(bx[j], nearest_resize(decoded, img_size))
    # and it is the picture written (JPEG smooths the noise: ~11 grey levels on average)
    assert np.abs(bx[j] - nearest_resize(pixels, img_size)).mean() < 16.0
assert set(np.unique(by).tolist()) == {0, 1, 2}
# load_img's target_size is (height, width): a non-square one
odd = np.asarray(load_img(target_img_paths[0], target_size=(24, 40), color_mode="grayscale"))
assert odd.shape == (24, 40), odd.shape
np.testing.assert_array_equal(odd, nearest_resize(written[stem_of(target_img_paths[0])][1],
                                                  (24, 40)))

"""
## Prepare U-Net Xception-style model
"""

layers = keras.layers  # from tensorflow.keras import layers


def get_model(img_size, num_classes):
    inputs = keras.Input(shape=img_size + (3,))

    ### [First half of the network: downsampling inputs] ###

    # Entry block
    x = layers.Conv2D(32 // W, 3, strides=2, padding="same")(inputs)
    # GAP 6 (silent; this and every BatchNormalization below): x = layers.BatchNormalization()(x)
    # (tf.keras's fused layer moves moving_variance towards the batch variance with Bessel's
    #  correction, n / (n - 1); ember's towards the biased one, as Keras 3's: same line)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("relu")(x)

    previous_block_activation = x  # Set aside residual

    # Blocks 1, 2, 3 are identical apart from the feature depth.
    for filters in [64 // W, 128 // W, 256 // W]:
        x = layers.Activation("relu")(x)
        x = layers.SeparableConv2D(filters, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)

        x = layers.Activation("relu")(x)
        x = layers.SeparableConv2D(filters, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)

        x = layers.MaxPooling2D(3, strides=2, padding="same")(x)

        # Project residual
        residual = layers.Conv2D(filters, 1, strides=2, padding="same")(
            previous_block_activation
        )
        x = layers.add([x, residual])  # Add back residual
        previous_block_activation = x  # Set aside next residual

    ### [Second half of the network: upsampling inputs] ###

    for filters in [256 // W, 128 // W, 64 // W, 32 // W]:
        x = layers.Activation("relu")(x)
        x = layers.Conv2DTranspose(filters, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)

        x = layers.Activation("relu")(x)
        x = layers.Conv2DTranspose(filters, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)

        x = layers.UpSampling2D(2)(x)

        # Project residual
        residual = layers.UpSampling2D(2)(previous_block_activation)
        residual = layers.Conv2D(filters, 1, padding="same")(residual)
        x = layers.add([x, residual])  # Add back residual
        previous_block_activation = x  # Set aside next residual

    # Add a per-pixel classification layer
    outputs = layers.Conv2D(num_classes, 3, activation="softmax", padding="same")(x)

    # Define the model
    model = keras.Model(inputs, outputs)
    return model


# Free up RAM in case the model definition cells were run multiple times
# GAP 3: keras.backend.clear_session()
# (no stand-in: ember keeps no session to clear)

# Build model
model = get_model(img_size, num_classes)
model.summary()


def param_counts(W):
    """Added: Keras's parameter counts of get_model(W): (all, BatchNormalization's moving
    statistics, the non-trainable part)."""
    conv = lambda k, c_in, c_out: k * k * c_in * c_out + c_out  # noqa: E731
    sep = lambda c_in, c_out: 9 * c_in + c_in * c_out + c_out  # noqa: E731
    bn = []  # the channels of every BatchNormalization
    total = conv(3, 3, 32 // W)
    bn.append(32 // W)
    prev = 32 // W
    for f in (64 // W, 128 // W, 256 // W):
        total += sep(prev, f) + sep(f, f) + conv(1, prev, f)
        bn += [f, f]
        prev = f
    for f in (256 // W, 128 // W, 64 // W, 32 // W):
        total += conv(3, prev, f) + conv(3, f, f) + conv(1, prev, f)
        bn += [f, f]
        prev = f
    total += conv(3, prev, num_classes) + 4 * sum(bn)
    return total, 2 * sum(bn)


expected_total, expected_frozen = param_counts(W)
assert model.count_params() == expected_total, (model.count_params(), expected_total)
n_trainable = sum(int(np.prod(v.shape)) for v in model.trainable_weights)
assert expected_total - n_trainable == expected_frozen, (n_trainable, expected_frozen)
assert param_counts(1) == (2058979, 3776)  # Keras's summary of upstream's model
assert model.output_shape == (None,) + img_size + (num_classes,), model.output_shape
probe = model(bx[:2])
assert probe.shape == (2,) + img_size + (num_classes,)
np.testing.assert_allclose(probe.numpy().sum(-1), 1.0, rtol=1e-5)

"""
## Set aside a validation split
"""

import random  # noqa: E402

# Split our img paths into a training and a validation set
val_samples = VAL_SAMPLES
random.Random(1337).shuffle(input_img_paths)
random.Random(1337).shuffle(target_img_paths)
train_input_img_paths = input_img_paths[:-val_samples]
train_target_img_paths = target_img_paths[:-val_samples]
val_input_img_paths = input_img_paths[-val_samples:]
val_target_img_paths = target_img_paths[-val_samples:]

# Instantiate data Sequences for each split
train_gen = OxfordPets(
    batch_size, img_size, train_input_img_paths, train_target_img_paths
)
val_gen = OxfordPets(batch_size, img_size, val_input_img_paths, val_target_img_paths)

# Added: the same shuffle keeps each image with its own trimap
assert [stem_of(p) for p in input_img_paths] == [stem_of(p) for p in target_img_paths]
assert len(train_gen) == (N_IMAGES - VAL_SAMPLES) // batch_size
assert len(val_gen) == VAL_SAMPLES // batch_size
val_x = np.concatenate([b[0] for b in val_gen])
val_y = np.concatenate([b[1] for b in val_gen])[..., 0]
class_share = np.bincount(val_y.ravel(), minlength=3) / val_y.size


def pixel_accuracy(probabilities):
    return float((np.argmax(probabilities, axis=-1) == val_y).mean())


untrained_accuracy = pixel_accuracy(model.predict(val_x, verbose=0))
print(f"classes in the validation masks: {np.round(class_share, 3).tolist()}; "
      f"untrained pixel accuracy {untrained_accuracy:.3f}")

"""
## Added: RMSprop ("rmsprop") against numpy
"""

check_opt = keras.optimizers.get("rmsprop")
w0 = np.array([0.5, -1.0, 2.0], np.float32)
check_var = em.Variable(w0)
grads = [np.array([0.1, -0.2, 0.3], np.float32), np.array([-0.05, 0.4, 0.3], np.float32)]
ref, rms = w0.astype(np.float64), np.zeros(3)
for g in grads:
    check_opt.apply_gradients([(em.constant(g), check_var)])
    rms = 0.9 * rms + 0.1 * g.astype(np.float64) ** 2
    ref = ref - 1e-3 * g / (np.sqrt(rms) + 1e-7)
np.testing.assert_allclose(check_var.numpy(), ref, rtol=1e-5)

"""
## Train the model
"""

# Configure the model for training.
# We use the "sparse" version of categorical_crossentropy
# because our target data is integers.
model.compile(optimizer="rmsprop", loss="sparse_categorical_crossentropy")

callbacks = [
    # GAP 4: keras.callbacks.ModelCheckpoint("oxford_segmentation.h5", save_best_only=True)
    keras.callbacks.ModelCheckpoint("oxford_segmentation.keras", save_best_only=True)
]

# Train the model, doing validation at the end of each epoch.
epochs = EPOCHS
history = model.fit(train_gen, epochs=epochs, validation_data=val_gen, callbacks=callbacks)

"""
## Added: checks on training
"""

print("loss:", np.round(history.history["loss"], 4).tolist())
print("val_loss:", np.round(history.history["val_loss"], 4).tolist())
assert set(history.history) == {"loss", "val_loss"}, history.history.keys()
assert all(len(v) == EPOCHS for v in history.history.values())
assert all(math.isfinite(v) for v in history.history["loss"] + history.history["val_loss"])
assert SHORT or history.history["loss"][-1] < 0.7 * history.history["loss"][0], history.history
# save_best_only: the file holds the model of the epoch of the lowest val_loss
best = keras.models.load_model("oxford_segmentation.keras")
best_val = best.evaluate(val_gen, verbose=0)
np.testing.assert_allclose(best_val, min(history.history["val_loss"]), rtol=1e-4)

"""
## Visualize predictions
"""

# Generate predictions for all images in the validation set

val_gen = OxfordPets(batch_size, img_size, val_input_img_paths, val_target_img_paths)
val_preds = model.predict(val_gen)

"""
## Added: predict, evaluate and the trained U-Net against numpy
"""

assert isinstance(val_preds, np.ndarray) and val_preds.dtype == np.float32
assert val_preds.shape == (len(val_gen) * batch_size,) + img_size + (num_classes,)
np.testing.assert_allclose(val_preds, np.concatenate(
    [model(val_x[i:i + batch_size]).numpy() for i in range(0, len(val_x), batch_size)]),
    rtol=1e-5, atol=1e-6)
np.testing.assert_allclose(val_preds.sum(-1), 1.0, rtol=1e-5)
val_loss_now = model.evaluate(val_gen, verbose=0)  # (against numpy's logits below)
np.testing.assert_allclose(history.history["val_loss"][-1], val_loss_now, rtol=1e-4)


def same_pads(size, k, stride):
    """TF's "same" padding (before, after) of one axis: the odd pixel goes after."""
    total = max((math.ceil(size / stride) - 1) * stride + k - size, 0)
    return total // 2, total - total // 2


def np_conv(x, kernel, bias, stride=1):
    """Conv2D(padding="same") in numpy: x (n, h, w, c_in), kernel (k, k, c_in, c_out)."""
    k, out = kernel.shape[0], math.ceil(x.shape[1] / stride)
    pad = same_pads(x.shape[1], k, stride)
    xp = np.pad(x, ((0, 0), pad, pad, (0, 0)))
    return sum(xp[:, i:i + stride * out:stride, j:j + stride * out:stride] @ kernel[i, j]
               for i in range(k) for j in range(k)) + bias


def np_separable(x, depthwise, pointwise, bias):
    """SeparableConv2D(padding="same"): depthwise (3, 3, c, 1), pointwise (1, 1, c, f)."""
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    h, w = x.shape[1:3]
    d = sum(xp[:, i:i + h, j:j + w] * depthwise[i, j, :, 0] for i in range(3) for j in range(3))
    return d @ pointwise[0, 0] + bias


def np_conv_transpose(x, kernel, bias):
    """Conv2DTranspose(padding="same", strides=1), the gradient of np_conv: kernel
    (k, k, c_out, c_in)."""
    k, h, w = kernel.shape[0], x.shape[1], x.shape[2]
    full = np.zeros((x.shape[0], h + k - 1, w + k - 1, kernel.shape[2]))
    for i in range(k):
        for j in range(k):
            full[:, i:i + h, j:j + w] += x @ kernel[i, j].T
    before = same_pads(h, k, 1)[0]
    return full[:, before:before + h, before:before + w] + bias


def np_max_pool(x):
    """MaxPooling2D(3, strides=2, padding="same"): the padding never wins (-inf)."""
    out = math.ceil(x.shape[1] / 2)
    pad = same_pads(x.shape[1], 3, 2)
    xp = np.pad(x, ((0, 0), pad, pad, (0, 0)), constant_values=-np.inf)
    return np.max([xp[:, i:i + 2 * out:2, j:j + 2 * out:2] for i in range(3) for j in range(3)],
                  axis=0)


def np_forward(model, x):
    """Added: get_model's network in float64 numpy, with the trained weights (inference:
    BatchNormalization uses its moving statistics, epsilon 1e-3)."""
    by_type = {}
    for layer in model.layers:
        by_type.setdefault(type(layer).__name__, []).append(layer)
    its = {k: iter(v) for k, v in by_type.items()}

    def weights(kind):
        return [v.numpy().astype(np.float64) for v in next(its[kind]).weights]

    def bn(x):
        gamma, beta, mean, var = weights("BatchNormalization")
        return (x - mean) / np.sqrt(var + 1e-3) * gamma + beta

    relu = lambda x: np.maximum(x, 0.0)  # noqa: E731
    up = lambda x: x.repeat(2, axis=1).repeat(2, axis=2)  # noqa: E731
    x = relu(bn(np_conv(x.astype(np.float64), *weights("Conv2D"), stride=2)))
    previous = x
    for _ in range(3):
        x = bn(np_separable(relu(x), *weights("SeparableConv2D")))
        x = bn(np_separable(relu(x), *weights("SeparableConv2D")))
        x = np_max_pool(x) + np_conv(previous, *weights("Conv2D"), stride=2)
        previous = x
    for _ in range(4):
        x = bn(np_conv_transpose(relu(x), *weights("Conv2DTranspose")))
        x = bn(np_conv_transpose(relu(x), *weights("Conv2DTranspose")))
        x = up(x) + np_conv(up(previous), *weights("Conv2D"))
        previous = x
    return np_conv(x, *weights("Conv2D"))  # the logits


np_logits = np.concatenate([np_forward(model, val_x[i:i + 32]) for i in range(0, len(val_x), 32)])
top = np_logits.max(-1, keepdims=True)
np_log_sum = np.log(np.exp(np_logits - top).sum(-1, keepdims=True)) + top
np.testing.assert_allclose(val_preds, np.exp(np_logits - np_log_sum), rtol=1e-3, atol=1e-5)
# tf.keras's loss, from the logits the softmax was given (ember's too): no pixel capped
np_true = np.take_along_axis(np_logits - np_log_sum, val_y[..., None].astype(int), -1)
saturated = float((np_true < math.log(1e-7)).mean())
print(f"val loss: ember {val_loss_now:.4f}, tf.keras's from the logits {-np_true.mean():.4f} "
      f"({saturated:.2%} of the pixels below 1e-7)")
np.testing.assert_allclose(val_loss_now, -np_true.mean(), rtol=1e-3)

accuracy = pixel_accuracy(val_preds)
print(f"validation pixel accuracy: {accuracy:.3f} (untrained {untrained_accuracy:.3f}, "
      f"majority class {class_share.max():.3f})")
assert SHORT or (accuracy > 0.75 and accuracy > class_share.max() + 0.1), accuracy


def display_mask(i):
    """Quick utility to display a model's prediction."""
    mask = np.argmax(val_preds[i], axis=-1)
    mask = np.expand_dims(mask, axis=-1)
    # GAP 1: img = ImageOps.autocontrast(keras.preprocessing.image.array_to_img(mask))
    img = ImageOps.autocontrast(keras.utils.array_to_img(mask))
    # display(img)   (the notebook display, dropped)
    return img  # added: for the checks


# Display results for validation image #10
i = 10

# Display input image
# display(Image(filename=val_input_img_paths[i]))   (the notebook display, dropped)

# Display ground-truth target mask
img = ImageOps.autocontrast(load_img(val_target_img_paths[i]))
# display(img)   (the notebook display, dropped)
assert img.size == written[stem_of(val_target_img_paths[i])][1].shape[::-1]

# Display mask predicted by our model
shown_mask = display_mask(i)  # Note that the model only sees inputs at 150x150.
assert shown_mask.mode == "L" and shown_mask.size == img_size[::-1], shown_mask.size
grey = np.asarray(shown_mask)
predicted = np.argmax(val_preds[i], axis=-1)
levels = []  # one grey level per predicted class, rising with the class
for value in np.unique(predicted):
    assert len(np.unique(grey[predicted == value])) == 1
    levels.append(int(grey[predicted == value][0]))
assert levels == sorted(set(levels)), levels
assert SHORT or len(np.unique(grey)) >= 2
print("Oxford pets segmentation: OK")
