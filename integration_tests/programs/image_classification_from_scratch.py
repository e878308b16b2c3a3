"""Port of keras-team/keras-io examples/vision/image_classification_from_scratch.py ("Image
classification from scratch", the tf.keras version): the Kaggle Cats vs Dogs JPEGs in
PetImages/Cat and PetImages/Dog, the files without "JFIF" in their first 10 bytes
deleted, image_dataset_from_directory (80/20 split with seed 1337, subset="both", images
resized to image_size, int labels from the folders), a data augmentation Sequential
(RandomFlip("horizontal"), RandomRotation(0.1)) shown on one batch and mapped over the
training set, prefetching, a small Xception-like network (Rescaling, a strided Conv2D
entry, residual blocks of SeparableConv2D + BatchNormalization + MaxPooling2D with strided
1x1 Conv2D projections joined by layers.add, GlobalAveragePooling2D, Dropout, a sigmoid
Dense), compile with Adam(1e-3), binary_crossentropy and accuracy, fit with
validation_data and a ModelCheckpoint per epoch, then predict on one image read with
load_img/img_to_array.

Upstream: https://github.com/keras-team/keras-io/blob/0e918412690b44285f82f699ce19d919fb14cee2/examples/vision/image_classification_from_scratch.py
Changed: names only (tensorflow -> ember.core as em: tf.expand_dims -> em.expand_dims;
tf.data.AUTOTUNE -> ember.data.AUTOTUNE; tensorflow.keras / keras.layers -> ember.nn /
nn.layers: keras.Sequential/Input/Model, keras.callbacks.ModelCheckpoint,
keras.optimizers.Adam, keras.preprocessing.image.load_img/img_to_array), except the GAPs
below. The 786 MB archive cannot be downloaded here (no network): SYNTHETIC files in its
layout are written with numpy and PIL into a temporary directory the program works in
(upstream: the working directory), so upstream's relative paths, filter and inference
path read them unchanged: PetImages/Cat/<n>.jpg and PetImages/Dog/<n>.jpg (n drawn from
0-12499 as in the archive; Cat/6779.jpg, upstream's inference image, among them), RGB
JPEGs of varied sizes (1.2 to 2 times image_size a side, as the photos are larger than
180x180). The two classes differ in texture, not colour: "cats" are smooth blobs on a
gradient, "dogs" 5 to 8 stripes across the picture at a random angle, both of a random
colour with noise. Beside them, 6 files the JFIF filter deletes, as the archive's 1,590:
a Thumbs.db in each folder and an empty Cat/666.jpg and Dog/11702.jpg (as in the archive),
a PNG named Cat/9000.jpg, and Dog/9001.jpg, a JPEG whose APP0 "JFIF" segment is stripped
(decodable; the filter deletes it anyway). The plots (matplotlib: the 3x3 grids of images
and of augmentations) are dropped; what they would show is checked. fit's History is kept
(`history = model.fit(...)`). Upstream's last print formats a 1-element array with
:.2f, which numpy refuses (TypeError) under TensorFlow too; the score is taken as a float
first, as later versions of the example do. Reduced (EMBER_PROGRAMS_FULL=1 restores
upstream's 180x180 images, batch 128, widths 32/64, 128-728 and 1024, and 25 epochs, on
2 x 12,000 generated images): 32x32 images, 2 x 200 images (320 train, 80 validate),
batch 16, entry widths 8 and 16, block widths 16 and 32, a top of 64, 6 epochs (120
steps); EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 2 x 40 images, 1 epoch, no check on
what training reached.
Added: seeds for numpy and ember; the filter deletes exactly the 6 bad files and keeps
every image; the dataset's class names, Keras's file order (sorted per class folder,
shuffled by np.random.RandomState(1337)) and split (int(0.2 * 400) = 80 validate), the
batches' shapes and dtypes (float32 images, int32 labels), each validation label equal to
its folder and each image equal to a numpy resize, with TF's bilinear kernel (half-pixel
centres, two taps), of PIL's decoding of its file (whose colour is what was written);
the augmentation: float32 and the shape kept, nothing outside the input's range, a new
draw on each call and on each pass over the mapped dataset, inference (training=False)
returning the images, a quarter turn equal to np.rot90 (counter-clockwise, as tf.keras
documents) and the horizontal flip reversing the width axis of about half the images;
the training set reshuffled on each pass; the model's parameter count against Keras's
formulas and its output shape (None, 1); History's keys and one finite value an epoch,
a checkpoint file per epoch, the last reloaded with nn.models.load_model predicting as
the model; evaluate equal to the last epoch's val_loss/val_accuracy and to numpy's
binary accuracy and clipped cross-entropy of predict's probabilities; the logits (the
Dense layer on the features reaching it) equal, on 8 validation images, to a float64
numpy forward pass of the whole trained network in inference mode (TF's "same" padding,
the odd pixel after; depthwise then pointwise convolutions; BatchNormalization from the
moving statistics with epsilon 1e-3; -inf padding for max pooling), and predict's
probabilities their sigmoid; load_img's nearest-neighbour (height, width) resize of the
inference image against numpy's, and its score against the numpy forward pass. What
training reached (CPU run): training accuracy above 0.9 with the loss halved (an
untrained model is at ~0.5; runs of 4 seeds reached 0.99-1.0), and the validation
accuracy computed with each batch's statistics (training=True on a reloaded copy) above
0.85 (untrained: 0.41-0.59 over 4 seeds; trained: 0.95-0.99 over 4 seeds and repeated
runs: the classes' textures generalise). The validation accuracy
of inference mode is only printed: after 120 steps it is still the share of the
commoner class (0.41), because BatchNormalization's moving variances (from 1, momentum
0.99: 0.99 ** 120 = 0.30 of it left) are still ~0.3 where the batches' are 0.001-0.06,
so every image scores about the same; so would tf.keras (upstream's own log reads
val_accuracy 0.4957 for its first 3 epochs, 441 steps).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error):
1. no em.compat (tf.compat.as_bytes: AttributeError): b"JFIF" stands in.
3. (by design, docs: elements of ember.data are numpy arrays) images[i].numpy() on a
dataset element: AttributeError; upstream's .numpy() is dropped.
4. silent: BatchNormalization's moving_variance follows the biased batch variance (Keras
3's rule), where tf.keras's fused layer (4-D inputs, as all of this model's) uses
Bessel's correction: one training call on arange(8).reshape(2, 2, 2, 1) gives 0.99 +
0.01 * 5.25 = 1.0425 in ember, 0.99 + 0.01 * 6.0 = 1.05 in tf.keras (asserted; the
oxford_pets_segmentation port found it first). At batch 16 and this model's sizes
(4x4 to 16x16 maps) n / (n - 1) is 0.4% down to 0.02%.
5. no nn.utils.plot_model (AttributeError): left out.
6. silent: the random layers draw from ember's one global random state, from whichever
thread calls them; a Dataset.map run ahead by prefetch (or num_parallel_calls) calls
them on the pipeline's thread while the training step draws (Dropout) on the main one,
so the draws interleave by timing: em.random.set_seed(0) does not make this program
repeatable (three runs with the same seeds: first-epoch losses 0.596, 0.616, 0.616), nor
does em.config.enable_op_determinism(). In tf.keras the map's random ops are ops of the
traced map function with their own seeds and state, so a sequential map behind prefetch
repeats with tf.random.set_seed, and enable_op_determinism makes a parallel map with
random ops deterministic too (TensorFlow's documentation of enable_op_determinism).
Upstream's line is kept.
8. compile(jit_compile=True) raises ValueError (ember has no XLA; "auto" or False only):
the argument is dropped (asserted).
Fixed in ember since the port was written: no image_dataset_from_directory, neither
nn.preprocessing's (tf.keras's name used upstream) nor nn.utils's (Keras 3's):
AttributeError (GAP 2; a function of Keras's steps stood in). nn.preprocessing.
image_dataset_from_directory now lists, shuffles and splits the files as Keras does (the
order and split are asserted); upstream's line is restored. It decodes with Pillow where
TF decodes with its own libjpeg build: the pixels of the two decoders may differ by a
level or so. Also (GAP 7, silent): "binary_crossentropy" on the sigmoid output was
computed from the probabilities clipped to [1e-7, 1 - 1e-7], where tf.keras
(backend.binary_crossentropy reads the logits the sigmoid activation caches on its
output, _keras_logits; Keras 3 on TensorFlow likewise) uses the logits: a sigmoid Dense
giving logit 20 for label 0 cost -log(2 ** -23) = 15.94 in ember, with gradient 0, where
tf.keras gives softplus(20) = 20.0. Ember now takes the logits too: both asserted (the
validation loss against the logits' cross-entropy, and the 20.0).
"""

import os
import tempfile
import time

import numpy as np
from PIL import Image as PILImage

import ember.core as em
from ember import data, nn

keras = nn  # the example's `keras.` prefix
layers = nn.layers
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
np.random.seed(0)
em.random.set_seed(0)
T0 = time.time()
workdir = tempfile.TemporaryDirectory()
os.chdir(workdir.name)  # upstream unzips PetImages/ into the working directory
PER_CLASS = 12000 if FULL else 40 if SHORT else 200
SIDE = (180, 180) if FULL else (32, 32)  # the image_size below


def write_synthetic_pet_images(per_class, seed=0):
    """Added: PetImages/Cat and PetImages/Dog as kagglecatsanddogs_5340.zip unpacks, with
    made-up pictures (see the header): JPEGs of varied sizes named <n>.jpg, and files the
    JFIF filter below removes. Returns {path: (label, mean colour)} of the good ones, and
    the paths of the bad ones."""
    rng = np.random.default_rng(seed)
    good, bad = {}, []
    lo, hi = int(1.2 * SIDE[0]), int(2.0 * SIDE[0])
    for label, folder in enumerate(("Cat", "Dog")):
        os.makedirs(os.path.join("PetImages", folder))
        corrupt = {"Cat": (666, 9000), "Dog": (11702, 9001)}[folder]
        ids = rng.choice([i for i in range(12500) if i not in corrupt + (6779,)], per_class,
                         replace=False)
        if folder == "Cat":
            ids[0] = 6779  # upstream's inference image
        for n in ids:
            h, w = (int(s) for s in rng.integers(lo, hi + 1, 2))
            yy, xx = np.mgrid[0:h, 0:w].astype(np.float64) / max(h, w)
            colour = rng.uniform(60, 195, 3)
            if label == 0:  # "cats": smooth blobs on a gentle gradient
                pixels = colour + rng.uniform(-30, 30, 3) * (xx - 0.5)[..., None]
                for _ in range(3):
                    cy, cx, r = rng.uniform(0.2, 0.8), rng.uniform(0.2, 0.8), rng.uniform(0.1, 0.25)
                    blob = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r * r))
                    pixels = pixels + rng.uniform(-60, 60, 3) * blob[..., None]
            else:  # "dogs": stripes at a random angle, 5 to 8 across the picture
                theta, period = rng.uniform(0, np.pi), rng.uniform(1 / 8, 1 / 5)
                wave = np.sin(2 * np.pi * (xx * np.cos(theta) + yy * np.sin(theta)) / period)
                pixels = colour + rng.uniform(35, 60) * rng.choice([-1, 1], 3) * wave[..., None]
            pixels = np.clip(pixels + rng.normal(0, 6, (h, w, 3)), 0, 255).round()
            path = os.path.join("PetImages", folder, f"{n}.jpg")
            PILImage.fromarray(pixels.astype(np.uint8), "RGB").save(path, quality=90)
            good[path] = (label, pixels.mean(axis=(0, 1)))
        # as in the archive: a Windows thumbnail cache and an empty .jpg (Cat/666.jpg and
        # Dog/11702.jpg are empty there), and a .jpg that is not JFIF (a PNG; a JPEG whose
        # APP0 "JFIF" segment is stripped: decodable, but the filter drops it too)
        bad_files = {"Thumbs.db": b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(200),
                     f"{corrupt[0]}.jpg": b""}
        with open(path, "rb") as f:
            any_jpeg = f.read()
        if folder == "Cat":
            bad_files[f"{corrupt[1]}.jpg"] = b"\x89PNG\r\n\x1a\n" + bytes(64)
        else:
            app0 = 4 + int.from_bytes(any_jpeg[4:6], "big")
            assert any_jpeg[6:10] == b"JFIF"
            bad_files[f"{corrupt[1]}.jpg"] = any_jpeg[:2] + any_jpeg[app0:]
        for name, content in bad_files.items():
            with open(os.path.join("PetImages", folder, name), "wb") as f:
                f.write(content)
            bad.append(os.path.join("PetImages", folder, name))
    return good, bad


written, corrupted = write_synthetic_pet_images(PER_CLASS)
print(f"wrote {len(written)} images in {time.time() - T0:.1f} s")

"""
## Filter out corrupted images
"""

num_skipped = 0
for folder_name in ("Cat", "Dog"):
    folder_path = os.path.join("PetImages", folder_name)
    for fname in os.listdir(folder_path):
        fpath = os.path.join(folder_path, fname)
        try:
            fobj = open(fpath, "rb")
            # GAP 1: is_jfif = tf.compat.as_bytes("JFIF") in fobj.peek(10)
            is_jfif = b"JFIF" in fobj.peek(10)
        finally:
            fobj.close()

        if not is_jfif:
            num_skipped += 1
            # Delete corrupted image
            os.remove(fpath)

print("Deleted %d images" % num_skipped)  # noqa: UP031
assert not hasattr(em, "compat")  # GAP 1
assert num_skipped == len(corrupted) == 6
assert not any(os.path.exists(p) for p in corrupted)
assert sorted(os.path.join("PetImages", d, f) for d in ("Cat", "Dog")
              for f in os.listdir(os.path.join("PetImages", d))) == sorted(written)

"""
## Generate a `Dataset`
"""

image_size = SIDE
batch_size = 128 if FULL else 16

train_ds, val_ds = keras.preprocessing.image_dataset_from_directory(
    "PetImages",
    validation_split=0.2,
    subset="both",
    seed=1337,
    image_size=image_size,
    batch_size=batch_size,
)
# Added: Keras's order (the files of each class folder sorted, the classes in sorted
# order, all shuffled by np.random.RandomState(1337); the last 20% validate)
assert train_ds.class_names == val_ds.class_names == ["Cat", "Dog"]
listed = [os.path.join("PetImages", d, f) for d in ("Cat", "Dog")
          for f in sorted(os.listdir(os.path.join("PetImages", d)))]
order = np.random.RandomState(1337).permutation(len(listed))
assert train_ds.file_paths + val_ds.file_paths == [listed[i] for i in order]
train_file_paths, val_file_paths = train_ds.file_paths, val_ds.file_paths

"""
## Visualize the data
"""

for images, labels in train_ds.take(1):
    for i in range(9):
        # GAP 3: plt.imshow(images[i].numpy().astype("uint8"))
        shown = images[i].astype("uint8")
        assert not hasattr(images, "numpy")  # GAP 3: elements are numpy arrays
        assert shown.shape == image_size + (3,)
        assert int(labels[i]) in (0, 1)
assert images.shape == (batch_size,) + image_size + (3,) and images.dtype == np.float32
assert labels.shape == (batch_size,) and labels.dtype == np.int32  # TF: int32 labels

"""
## Using image data augmentation
"""

data_augmentation = keras.Sequential(
    [
        layers.RandomFlip("horizontal"),
        layers.RandomRotation(0.1),
    ]
)

augmented = []
for images, _ in train_ds.take(1):
    for i in range(9):  # noqa: B007
        augmented_images = data_augmentation(images)
        augmented.append(augmented_images[0].numpy().astype("uint8"))  # plt.imshow(...)
        assert augmented_images.shape == images.shape and augmented_images.dtype == em.float32
        # bilinear reads between pixels and reflects at the edges: nothing outside the input's range
        assert images.min() - 1e-3 <= float(em.reduce_min(augmented_images))
        assert float(em.reduce_max(augmented_images)) <= images.max() + 1e-3
assert len({a.tobytes() for a in augmented}) == 9  # each call draws anew
assert not np.array_equal(augmented[0], images[0].astype("uint8"))
# inference leaves the images alone (fit passes training=True; evaluate/predict False)
np.testing.assert_array_equal(data_augmentation(images, training=False).numpy(), images)
# Added: the two layers' transforms against numpy. A quarter turn is counter-clockwise
# (tf.keras: "positive values means rotating counter clock-wise"), as np.rot90 turns; the
# horizontal flip reverses the width axis of each image drawn (about half of them).
quarter = layers.RandomRotation((0.25, 0.25))(images).numpy()
np.testing.assert_allclose(quarter, np.rot90(images, 1, axes=(1, 2)), atol=0.05)
flipped = layers.RandomFlip("horizontal")(images).numpy()
was_flipped = [np.array_equal(f, x[:, ::-1]) for f, x in zip(flipped, images)]
assert all(w or np.array_equal(f, x) for w, f, x in zip(was_flipped, flipped, images))
assert 0 < sum(was_flipped) < len(images), was_flipped

"""
## Configure the dataset for performance
"""

train_ds = train_ds.prefetch(buffer_size=32)
val_ds = val_ds.prefetch(buffer_size=32)

"""
## Build a model
"""

entry_sizes = [32, 64] if FULL else [8, 16]
block_sizes = [128, 256, 512, 728] if FULL else [16, 32]
top_size = 1024 if FULL else 64


def make_model(input_shape, num_classes):
    inputs = keras.Input(shape=input_shape)

    # Entry block
    x = layers.Rescaling(1.0 / 255)(inputs)
    x = layers.Conv2D(entry_sizes[0], 3, strides=2, padding="same")(x)
    # GAP 4 (silent; this and every BatchNormalization below): x = layers.BatchNormalization()(x)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("relu")(x)

    x = layers.Conv2D(entry_sizes[1], 3, padding="same")(x)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("relu")(x)

    previous_block_activation = x  # Set aside residual

    for size in block_sizes:
        x = layers.Activation("relu")(x)
        x = layers.SeparableConv2D(size, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)

        x = layers.Activation("relu")(x)
        x = layers.SeparableConv2D(size, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)

        x = layers.MaxPooling2D(3, strides=2, padding="same")(x)

        # Project residual
        residual = layers.Conv2D(size, 1, strides=2, padding="same")(
            previous_block_activation
        )
        x = layers.add([x, residual])  # Add back residual
        previous_block_activation = x  # Set aside next residual

    x = layers.SeparableConv2D(top_size, 3, padding="same")(x)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("relu")(x)

    x = layers.GlobalAveragePooling2D()(x)
    if num_classes == 2:
        activation = "sigmoid"
        units = 1
    else:
        activation = "softmax"
        units = num_classes

    x = layers.Dropout(0.5)(x)
    outputs = layers.Dense(units, activation=activation)(x)
    return keras.Model(inputs, outputs)


model = make_model(input_shape=image_size + (3,), num_classes=2)
# GAP 5: keras.utils.plot_model(model, show_shapes=True)
assert not hasattr(keras.utils, "plot_model")
# GAP 4 (silent): tf.keras's BatchNormalization (fused, on these 4-D inputs) moves its
# moving_variance towards the batch variance with Bessel's correction, n / (n - 1);
# ember towards the biased one (Keras 3's rule). One training call on 8 values:
probe_bn = layers.BatchNormalization()
probe_bn(np.arange(8, dtype="float32").reshape(2, 2, 2, 1), training=True)
np.testing.assert_allclose(probe_bn.moving_variance.numpy(), [0.99 + 0.01 * 5.25])  # tf.keras: 6.0


def keras_param_count(input_channels):
    """Added: Keras's parameter formulas for make_model (BatchNormalization: gamma, beta
    and the two moving statistics, of which only gamma and beta train)."""
    def conv(k, c_in, c_out):
        return k * k * c_in * c_out + c_out

    def separable(c_in, c_out):  # 3x3 depthwise (multiplier 1), 1x1 pointwise, bias
        return 9 * c_in + c_in * c_out + c_out

    total = conv(3, input_channels, entry_sizes[0]) + 4 * entry_sizes[0]
    total += conv(3, entry_sizes[0], entry_sizes[1]) + 4 * entry_sizes[1]
    previous = entry_sizes[1]
    for size in block_sizes:
        total += separable(previous, size) + separable(size, size) + 8 * size
        total += conv(1, previous, size)
        previous = size
    total += separable(previous, top_size) + 4 * top_size + top_size + 1
    bn_stats = 2 * (sum(entry_sizes) + 2 * sum(block_sizes) + top_size)
    return total, bn_stats


total_params, bn_stats = keras_param_count(3)
assert model.count_params() == total_params, (model.count_params(), total_params)
assert sum(int(np.prod(w.shape)) for w in model.trainable_weights) == total_params - bn_stats
assert model.output_shape == (None, 1)

"""
And let's apply data augmentation to our training dataset:
"""

# Apply `data_augmentation` to the training images.
# GAP 6 (silent): train_ds = train_ds.map(  (kept: the map's draws race the training's)
train_ds = train_ds.map(
    lambda img, label: (data_augmentation(img), label),
    num_parallel_calls=data.AUTOTUNE,
)
# Prefetching samples in GPU memory helps maximize GPU utilization.
train_ds = train_ds.prefetch(data.AUTOTUNE)

"""
## Train the model
"""

epochs = 25 if FULL else 1 if SHORT else 6

callbacks = [
    keras.callbacks.ModelCheckpoint("save_at_{epoch}.keras"),
]
model.compile(
    optimizer=keras.optimizers.Adam(1e-3),
    loss="binary_crossentropy",
    metrics=["accuracy"],
    # GAP 8: jit_compile=True,  # Enable XLA compilation for faster execution
)
try:  # GAP 8
    keras.Sequential([keras.Input((1,)), layers.Dense(1)]).compile(loss="mse", jit_compile=True)
    raise AssertionError("compile(jit_compile=True) works now: restore upstream's line")
except ValueError:
    pass
T1 = time.time()
history = model.fit(
    train_ds,
    epochs=epochs,
    callbacks=callbacks,
    validation_data=val_ds,
)
print(f"fit in {time.time() - T1:.1f} s")
print({k: np.round(v, 3).tolist() for k, v in history.history.items()})

"""
We get to ~96% validation accuracy after training for 25 epochs on the full dataset.
"""

# Added: what fit logged, and what it left.
assert sorted(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]
assert all(len(v) == epochs for v in history.history.values())
assert np.isfinite(history.history["loss"]).all() and np.isfinite(history.history["val_loss"]).all()
assert all(os.path.exists(f"save_at_{e}.keras") for e in range(1, epochs + 1))


def take_all(ds):
    xs, ys = zip(*((np.asarray(x), np.asarray(y)) for x, y in ds))
    return np.concatenate(xs), np.concatenate(ys)


val_images, val_labels = take_all(val_ds)
val_paths = val_file_paths
assert val_images.shape == (len(val_paths),) + image_size + (3,)
# the labels are the folders, and the images the files read as TF reads them: decoded,
# then resized by TF's bilinear kernel (half-pixel centres; two taps per axis), in numpy


def tf_resize_bilinear(img, size):
    def taps(n_in, n_out):
        src = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
        lower = np.floor(src)
        return (np.clip(lower, 0, n_in - 1).astype(int),
                np.clip(np.ceil(src), 0, n_in - 1).astype(int), src - lower)
    (y0, y1, fy), (x0, x1, fx) = taps(img.shape[0], size[0]), taps(img.shape[1], size[1])
    top = img[y0][:, x0] + (img[y0][:, x1] - img[y0][:, x0]) * fx[None, :, None]
    bottom = img[y1][:, x0] + (img[y1][:, x1] - img[y1][:, x0]) * fx[None, :, None]
    return top + (bottom - top) * fy[:, None, None]


for path, img, label in zip(val_paths[:batch_size], val_images, val_labels):
    decoded = np.asarray(PILImage.open(path).convert("RGB"), np.float64)
    assert label == written[path][0]
    # the file holds the picture written (JPEG keeps each channel's mean)
    np.testing.assert_allclose(decoded.mean(axis=(0, 1)), written[path][1], atol=3)
    np.testing.assert_allclose(img, tf_resize_bilinear(decoded, image_size), atol=2e-3)
assert sorted(val_paths + train_file_paths) == sorted(written)
assert len(val_paths) == int(0.2 * len(written))  # Keras's split

# the augmentation runs anew on every pass over the mapped dataset (tf.data re-runs the
# map function; a traced function that froze its draws would repeat them), and the
# training set is reshuffled on each pass (shuffle(..., seed) reshuffles each iteration)
val_augmented = val_ds.map(lambda img, label: (data_augmentation(img), label))
first, second = next(iter(val_augmented))[0].numpy(), next(iter(val_augmented))[0].numpy()
assert not np.allclose(first, second)
order1 = np.concatenate([np.asarray(y) for _, y in train_ds])
order2 = np.concatenate([np.asarray(y) for _, y in train_ds])
assert sorted(order1) == sorted(order2) and not np.array_equal(order1, order2)

# evaluate agrees with the last epoch's validation, and with numpy from predict's
# probabilities ("accuracy" with this loss is Keras's binary accuracy: p > 0.5)
val_loss, val_accuracy = model.evaluate(val_ds, verbose=0)
np.testing.assert_allclose([val_loss, val_accuracy], [history.history["val_loss"][-1],
                                                      history.history["val_accuracy"][-1]],
                           rtol=1e-5)
probabilities = model.predict(val_images, verbose=0)
assert probabilities.shape == (len(val_paths), 1) and probabilities.dtype == np.float32
p = np.clip(probabilities[:, 0].astype(np.float64), 1e-7, 1 - 1e-7)
np.testing.assert_allclose(val_accuracy, np.mean((p > 0.5) == val_labels), rtol=1e-6)
np.testing.assert_allclose(
    val_loss, np.mean(-val_labels * np.log(p) - (1 - val_labels) * np.log(1 - p)), rtol=1e-4)


def numpy_forward(x):
    """Added: the trained model in inference mode in float64 numpy: TF's "same" padding
    (the odd pixel of padding after, not before), depthwise then pointwise separable
    convolutions, BatchNormalization from its moving statistics with Keras's epsilon
    1e-3, max pooling over the padded window, the residual adds; returns the logits."""
    def of_type(kind):
        found = [lay for lay in model.layers if type(lay).__name__ == kind]
        return iter(sorted(found, key=lambda lay: int(("_0" + lay.name).rsplit("_", 1)[1])
                           if lay.name.rsplit("_", 1)[-1].isdigit() else 0))
    convs, seps, bns = of_type("Conv2D"), of_type("SeparableConv2D"), of_type("BatchNormalization")

    def pad_same(x, k, stride, value=0.0):
        pads = [max((-(-n // stride) - 1) * stride + k - n, 0) for n in x.shape[1:3]]
        return np.pad(x, [(0, 0)] + [(q // 2, q - q // 2) for q in pads] + [(0, 0)],
                      constant_values=value)

    def windows(x, k, stride, value=0.0):
        out = [-(-n // stride) for n in x.shape[1:3]]
        xp = pad_same(x, k, stride, value)
        for i in range(k):
            for j in range(k):
                yield i, j, xp[:, i:i + stride * out[0]:stride, j:j + stride * out[1]:stride]

    def conv(x, stride=1):
        kernel, bias = (w.astype(np.float64) for w in next(convs).get_weights())
        return sum(win @ kernel[i, j] for i, j, win in windows(x, kernel.shape[0], stride)) + bias

    def separable(x):
        depthwise, pointwise, bias = (w.astype(np.float64) for w in next(seps).get_weights())
        x = sum(win * depthwise[i, j, :, 0] for i, j, win in windows(x, 3, 1))
        return x @ pointwise[0, 0] + bias

    def bn(x):
        gamma, beta, mean, var = (w.astype(np.float64) for w in next(bns).get_weights())
        return (x - mean) / np.sqrt(var + 1e-3) * gamma + beta

    def relu(x):
        return np.maximum(x, 0)

    x = relu(bn(conv(x.astype(np.float64) / 255, stride=2)))
    x = relu(bn(conv(x)))
    previous = x
    for _ in block_sizes:
        x = bn(separable(relu(x)))
        x = bn(separable(relu(x)))
        x = np.max([win for _, _, win in windows(x, 3, 2, -np.inf)], axis=0)
        x = x + conv(previous, stride=2)
        previous = x
    x = relu(bn(separable(x))).mean(axis=(1, 2))
    kernel, bias = model.layers[-1].get_weights()
    return x @ kernel.astype(np.float64) + bias


# the logits: the Dense layer on the features that reach it (checked against numpy on
# the first images: the whole network, then the probabilities predict gave)
features = keras.Model(model.input, model.layers[-2].output).predict(val_images, verbose=0)
kernel, bias = model.layers[-1].get_weights()
logits = (features.astype(np.float64) @ kernel + bias)[:, 0]
np.testing.assert_allclose(numpy_forward(val_images[:8])[:, 0], logits[:8], rtol=1e-4, atol=1e-5)
np.testing.assert_allclose(probabilities[:, 0], 1 / (1 + np.exp(-logits)), rtol=1e-4, atol=1e-6)
# the loss, as tf.keras computes it, from the logits the sigmoid was given (its output's
# probabilities clipped to [1e-7, 1 - 1e-7] part from it where |logit| > ~16)
tf_val_loss = np.mean(np.maximum(logits, 0) - logits * val_labels
                      + np.log1p(np.exp(-np.abs(logits))))
print(f"val_loss {val_loss:.4f} (tf.keras, from the logits: {tf_val_loss:.4f}); largest "
      f"|logit| {np.abs(logits).max():.1f}")
np.testing.assert_allclose(val_loss, tf_val_loss, rtol=1e-4)
one_sigmoid = keras.Sequential([keras.Input((1,)), layers.Dense(1, activation="sigmoid",
                                                                kernel_initializer="ones")])
one_sigmoid.compile(loss="binary_crossentropy")
# sigmoid(20) is 1.0 in float32; from the logit, softplus(20) = 20.0 (the clipped
# probability, 1 - 2 ** -23 in float32, would give -log(2 ** -23) = 15.94)
np.testing.assert_allclose(one_sigmoid.evaluate(np.array([[20.0]]), np.array([0]), verbose=0),
                           20.0, rtol=1e-5)

# the checkpoint of the last epoch holds the model as fit left it
restored = keras.models.load_model(f"save_at_{epochs}.keras")
np.testing.assert_allclose(restored.predict(val_images, verbose=0), probabilities, rtol=1e-5,
                           atol=1e-7)

# What training reached (CPU run). In inference mode the validation accuracy is still the
# share of the commoner class: after 6 x 20 steps BatchNormalization's moving variances
# (from 1, momentum 0.99: 0.99 ** 120 = 0.30 of it left) are ~0.3 where the batches'
# are 0.001-0.06, so every image gets about the same score (upstream's own log reads
# val_accuracy 0.4957 for its first 3 epochs, 441 steps). With the batches' statistics
# (training=True, on a copy: that call moves the statistics) the validation images are
# told apart: the features learnt generalise. An untrained model gets ~50% both ways.
copy = keras.models.load_model(f"save_at_{epochs}.keras")
batch_stats_accuracy = np.concatenate([
    (copy(x, training=True).numpy()[:, 0] > 0.5) == np.asarray(y) for x, y in val_ds]).mean()
accuracy = history.history["accuracy"][-1]
print(f"training accuracy {accuracy:.3f}; validation accuracy {val_accuracy:.3f} "
      f"(inference mode), {batch_stats_accuracy:.3f} (batch statistics)")
assert SHORT or accuracy > 0.9 and history.history["loss"][-1] < 0.5 * history.history["loss"][0]
assert SHORT or batch_stats_accuracy > 0.85

"""
## Run inference on new data

Note that data augmentation and dropout are inactive at inference time.
"""

img = keras.preprocessing.image.load_img(
    "PetImages/Cat/6779.jpg", target_size=image_size
)
img_array = keras.preprocessing.image.img_to_array(img)
img_array = em.expand_dims(img_array, 0)  # Create batch axis

predictions = model.predict(img_array)
score = predictions[0]
# upstream's f"{100 * (1 - score):.2f}" formats a 1-element array, which numpy refuses
# (TypeError) under TensorFlow as here; later versions of the example take the float:
score = float(score[0])
print(f"This image is {100 * (1 - score):.2f}% cat and {100 * score:.2f}% dog.")
# Added: load_img resizes (height, width) with PIL's nearest neighbour (Keras's default)
decoded = np.asarray(PILImage.open("PetImages/Cat/6779.jpg").convert("RGB"), np.float32)
rows = ((np.arange(image_size[0]) + 0.5) * decoded.shape[0] / image_size[0]).astype(int)
cols = ((np.arange(image_size[1]) + 0.5) * decoded.shape[1] / image_size[1]).astype(int)
np.testing.assert_array_equal(img_array.numpy()[0], decoded[rows][:, cols])
assert predictions.shape == (1, 1)
np.testing.assert_allclose(score, 1 / (1 + np.exp(-numpy_forward(img_array.numpy())[0, 0])),
                           rtol=1e-4)
print(f"done in {time.time() - T0:.1f} s")
