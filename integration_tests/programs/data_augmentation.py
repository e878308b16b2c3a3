"""Port of tensorflow/docs site/en/tutorials/images/data_augmentation.ipynb ("Data
augmentation"): the Keras preprocessing layers (Resizing and Rescaling, RandomFlip and
RandomRotation applied to one image, inside a model and mapped over a dataset, a small
convnet trained on the augmented set), custom augmentation (a Lambda layer and a Layer
subclass that randomly invert colours), then tf.image (flip, grayscale, saturation,
brightness, central crop, rot90, the stateless random brightness, contrast and crop) and
an input pipeline whose augment function takes explicit seeds, from a Counter zipped
with the dataset or from a tf.random.Generator's make_seeds.

Upstream: https://github.com/tensorflow/docs/blob/8b36191001b53bfce4fe15b77e243fbd7f382e41/site/en/tutorials/images/data_augmentation.ipynb
Changed: names only (tf.keras.Sequential -> nn.Sequential, tensorflow.keras.layers ->
ember.nn.layers, tf.cast/expand_dims/squeeze/clip_by_value/random.uniform -> em.*,
tf.data -> ember.data, tf.keras.losses.SparseCategoricalCrossentropy ->
nn.losses.SparseCategoricalCrossentropy, tf.random.Generator/split -> em.random.*,
tf.image -> em.image), except the GAPs below. tf_flowers cannot be downloaded here: a
local tfds.load with tfds's arguments returns the same splits (train[:80%],
train[80%:90%], train[90%:]) and metadata (features['label'].num_classes, int2str) of
GENERATED pictures in tf_flowers' layout: uint8 RGB images of varied sizes (each side
5/3 to 8/3 of IMG_SIZE, as the photos are larger than 180x180), int64 labels of 5
classes. Each picture is a real MNIST digit 0-4 (its label; first ones of the training
file in order) upscaled with PIL's bilinear filter and painted in two random colours (a
dark background, a bright stroke), so that the colour operations have colour to act on
and the model has shapes to learn. The plots (matplotlib) are dropped: `visualize` and
the image grids check what they would show. Reduced (EMBER_PROGRAMS_FULL=1 restores
upstream's 3,670 images, IMG_SIZE 180 and the crop size [210, 300, 3]): 1,000 images,
IMG_SIZE 28, crop [32, 46, 3] (upstream's 7/6 and 5/3 of IMG_SIZE); batch 32 and 5
epochs as upstream; EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 200 images, 1 epoch, no
accuracy threshold.
Added: seeds for numpy and ember; the metadata, the element shapes and dtypes (uint8 (h,
w, 3) images, int64 labels) and the splits' sizes; Resizing + Rescaling against a numpy
bilinear resize (half-pixel centres, clamped edges; rounded back to uint8 as Keras 3
does for integer input, then / 255); the augmentation keeping the shape and the value
range, drawing anew on each call and returning the image with training=False; the Option
1 model's output shape, repeatable in inference, not in training; RandomFlip
("horizontal_and_vertical") giving the image or its half turn (Keras 3's one draw); the
prepared datasets' batch shapes, dtypes and ranges, the validation set unaugmented and
equal to the resized images; training: the History, evaluate's loss and accuracy against
numpy's on predict's logits, training accuracy above 0.6 in the last epoch and test
accuracy above 0.7 (5 balanced classes: an untrained model scores about 0.2; four runs
reached 0.76-0.80 and 0.84-0.94; the parallel maps draw in thread order, so runs
differ); random_invert giving the image or 255 - image, both seen; every tf.image result
against numpy computed independently (np.fliplr, the ITU-R 601 grayscale weights,
colorsys's HSV round trip for the saturation, brightness with TF's uint8 <-> float
conversions, TF's central-crop box, np.rot90), the stateless ops repeating for a seed,
differing across seeds, and giving a brightness shift in [-max_delta, max_delta) (read
from a float image, which is not clipped, as the delta depends on the seed alone; where
the uint8 image is not saturated, its own shift agrees), a contrast factor in [lower,
upper] and a crop at some offset of the image; tf.image.resize against the
numpy resize and resize_with_crop_or_pad against np.pad; augment's output (IMG_SIZE
square, in [0, 1], repeatable for a seed) and the batches of both seeded pipelines
(every image once an epoch), with make_seeds giving new seeds on each call. Upstream's
Option 2 maps and batches val_ds and test_ds a second time (they are already batched),
so iterating them would fail, in TensorFlow as here (batches of 32 and of the remainder
cannot be stacked): upstream never iterates them; the program checks that the error is
raised.
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error):
1. (loud, as Keras 3; tf.keras 2 defers the build) Option 1's tf.keras.Sequential([
resize_and_rescale, data_augmentation, Conv2D, MaxPooling2D]) raises ValueError:
resize_and_rescale was built by its call on one unbatched (h, w, 3) image, so the new
Sequential builds at once from that shape read as (batch, w, 3) and Conv2D gets a rank-3
(IMG_SIZE, IMG_SIZE, 3) image. Stand-in: new Resizing and Rescaling layers of the same
configuration, unbuilt.
Fixed in ember since the first version of this port: 4. there was no
tf.data.experimental.Counter (AttributeError; data.Dataset.range(0, None) stood in): it
exists now, and upstream's line runs. 2. ember had no
tf.image at all (em.image: AttributeError), so flip_left_right, rgb_to_grayscale,
adjust_saturation, adjust_brightness, central_crop, rot90, stateless_random_brightness,
stateless_random_contrast, stateless_random_crop, resize_with_crop_or_pad and (added
later: nn.ops.image.resize stood in) resize were stand-ins written here after
TensorFlow's definitions; em.image has them now, and
upstream's lines run (against the same numpy checks). 3. there was no tf.random.split
(AttributeError; full-range int64 draws of a generator keyed by the seed stood in):
em.random.split exists now, and upstream's line runs. 5. tf.random.Generator.from_seed
took no `alg` (TypeError; it was dropped): it accepts alg='philox' now, and upstream's
line runs. 6. there was no Generator.make_seeds (AttributeError; TF's definition with
Generator.uniform stood in): it exists now, and upstream's lines run.
Noted, as Keras 3 (ember's contract) where the tf.keras 2 of the tutorial's time
differs: Resizing returns uint8 for uint8 input, rounded (tf.keras 2: float32, not
rounded; Rescaling after it makes the two differ by under half a level), and
RandomFlip("horizontal_and_vertical") flips both ways on one draw (tf.keras 2: two
draws, four orientations).
"""

import colorsys
import os
import pathlib
import types
import unittest

import numpy as np
from PIL import Image as PILImage

import ember.core as em
from ember import data, nn
from ember.nn import layers

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
  raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
np.random.seed(0)
em.random.set_seed(0)

NUM_IMAGES = 3670 if FULL else 200 if SHORT else 1000  # tf_flowers has 3,670
IMG_SIZE = 180 if FULL else 28  # upstream's IMG_SIZE, defined here for the stand-in
CROP_SIZE = [IMG_SIZE * 7 // 6, IMG_SIZE * 5 // 3, 3]  # upstream: [210, 300, 3]
EPOCHS = 1 if SHORT else 5

# ---------------------------------------------------------------------------------------
# Added: the stand-in for tfds.load('tf_flowers', ...) (see the header).
_mnist_x, _mnist_y = next(iter(data.datasets.mnist("train", data_dir=DATA_DIR)
                                .take(3 * NUM_IMAGES).batch(3 * NUM_IMAGES)))
_keep = np.flatnonzero(np.asarray(_mnist_y) < 5)[:NUM_IMAGES]
assert len(_keep) == NUM_IMAGES
DIGITS = (np.asarray(_mnist_x)[_keep].reshape(-1, 28, 28) * 255).round().astype(np.uint8)
LABELS = np.asarray(_mnist_y)[_keep].astype(np.int64)


def flower(i):
  """Picture i: digit i upscaled to a random size, in two random colours."""
  rng = np.random.default_rng([7, i])
  h, w = (int(s) for s in rng.integers(IMG_SIZE * 5 // 3, IMG_SIZE * 8 // 3 + 1, 2))
  digit = np.asarray(PILImage.fromarray(DIGITS[i]).resize((w, h), PILImage.BILINEAR))
  background, stroke = rng.uniform(0, 90, 3), rng.uniform(150, 255, 3)
  d = digit[..., None].astype(np.float64) / 255
  return (background * (1 - d) + stroke * d).round().astype(np.uint8)


def _split_range(split, n):  # tfds's percent slices ('train[:80%]'), rounded as tfds does
  lo, hi = split[len('train['):-1].split(':')
  lo = round(n * int(lo.rstrip('%')) / 100) if lo else 0
  hi = round(n * int(hi.rstrip('%')) / 100) if hi else n
  return lo, hi


def _tfds_load(name, split, with_info, as_supervised):
  assert name == 'tf_flowers' and with_info and as_supervised
  signature = (data.TensorSpec(shape=(None, None, 3), dtype=em.uint8),
               data.TensorSpec(shape=(), dtype=em.int64))
  datasets = []
  for s in split:
    lo, hi = _split_range(s, NUM_IMAGES)
    datasets.append(data.Dataset.from_generator(
        lambda lo=lo, hi=hi: ((flower(i), LABELS[i]) for i in range(lo, hi)),
        output_signature=signature))
  names = ['zero', 'one', 'two', 'three', 'four']
  label = types.SimpleNamespace(num_classes=len(names), names=names,
                                int2str=lambda i: names[int(i)])
  return datasets, types.SimpleNamespace(features={'label': label})


tfds = types.SimpleNamespace(load=_tfds_load)


def np_resize(image, height, width):
  """Added: TF's bilinear resize in numpy (half-pixel centres, edges clamped), float64."""
  def matrix(n_out, n_in):
    pos = (np.arange(n_out) + 0.5) * n_in / n_out - 0.5
    low = np.floor(pos)
    frac = pos - low
    m = np.zeros((n_out, n_in))
    np.add.at(m, (np.arange(n_out), np.clip(low, 0, n_in - 1).astype(int)), 1 - frac)
    np.add.at(m, (np.arange(n_out), np.clip(low + 1, 0, n_in - 1).astype(int)), frac)
    return m
  image = np.asarray(image, np.float64)
  return np.einsum('ij,jkc,lk->ilc', matrix(height, image.shape[0]), image,
                   matrix(width, image.shape[1]))


def np_to_float(image):  # tf.image.convert_image_dtype(uint8 -> float32): x * (1 / 255)
  return np.asarray(image).astype(np.float32) * np.float32(1 / 255)


def np_to_uint8(image, saturate=False):  # convert_image_dtype(float -> uint8): x * 255.5
  scaled = np.asarray(image, np.float32) * np.float32(255.5)
  return (np.clip(scaled, 0, 255) if saturate else scaled).astype(np.uint8)


# ---------------------------------------------------------------------------------------
# ## Download a dataset

(train_ds, val_ds, test_ds), metadata = tfds.load(
    'tf_flowers',
    split=['train[:80%]', 'train[80%:90%]', 'train[90%:]'],
    with_info=True,
    as_supervised=True,
)

num_classes = metadata.features['label'].num_classes
print(num_classes)
assert num_classes == 5
n_train, n_val = (hi - lo for lo, hi in (_split_range(s, NUM_IMAGES)
                                          for s in ('train[:80%]', 'train[80%:90%]')))

get_label_name = metadata.features['label'].int2str

image, label = next(iter(train_ds))
# _ = plt.imshow(image)
# _ = plt.title(get_label_name(label))
assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
assert label.dtype == np.int64 and int(label) == LABELS[0]
assert get_label_name(label) == ['zero', 'one', 'two', 'three', 'four'][LABELS[0]]
np.testing.assert_array_equal(image, flower(0))
first_image = image

# ## Use Keras preprocessing layers
# ### Resizing and rescaling

resize_and_rescale = nn.Sequential([
  layers.Resizing(IMG_SIZE, IMG_SIZE),
  layers.Rescaling(1./255)
])

result = resize_and_rescale(image)
# _ = plt.imshow(result)

print("Min and max pixel values:", result.numpy().min(), result.numpy().max())
assert result.shape == (IMG_SIZE, IMG_SIZE, 3) and result.dtype == em.float32
assert 0 <= result.numpy().min() and result.numpy().max() <= 1
# Added: Keras 3 resizes uint8 input in float, rounds back to uint8, then Rescaling / 255
# (exact ties, x.5, may go either way in float32: a level off on under 1% of pixels)
expected = np.round(np_resize(image, IMG_SIZE, IMG_SIZE)) / 255
np.testing.assert_allclose(result.numpy(), expected, atol=1 / 255 + 1e-6)
assert np.mean(np.abs(result.numpy() - expected) < 1e-6) > 0.99

# ### Data augmentation

data_augmentation = nn.Sequential([
  layers.RandomFlip("horizontal_and_vertical"),
  layers.RandomRotation(0.2),
])

# Add the image to a batch.
image = em.cast(em.expand_dims(image, 0), em.float32)

# plt.figure(figsize=(10, 10))
augmented = []
for i in range(9):  # noqa: B007 (upstream's; i placed the subplot)
  augmented_image = data_augmentation(image)
  # ax = plt.subplot(3, 3, i + 1)
  # plt.imshow(augmented_image[0])
  # plt.axis("off")
  augmented.append(augmented_image.numpy())
# Added: shape and range kept, a new draw each call, no augmentation in inference
assert all(a.shape == (1,) + first_image.shape and a.dtype == np.float32 for a in augmented)
assert all(a.min() >= -1e-3 and a.max() <= 255 + 1e-3 for a in augmented)
assert len({a.tobytes() for a in augmented}) == 9
np.testing.assert_array_equal(data_augmentation(image, training=False).numpy(),
                              first_image[None].astype(np.float32))
# Added: as Keras 3, one draw per image flips it both ways or not at all (a half turn or
# the image; tf.keras 2 drew left-right and up-down apart, giving four orientations)
flips = data_augmentation.layers[0](em.tile(image, [16, 1, 1, 1])).numpy()
half_turn = np.array([np.array_equal(f, first_image[::-1, ::-1]) for f in flips])
unflipped = np.array([np.array_equal(f, first_image) for f in flips])
assert np.all(half_turn | unflipped) and half_turn.any() and unflipped.any()

# #### Option 1: Make the preprocessing layers part of your model

# GAP 1 (loud; as Keras 3 does, where tf.keras 2 defers the build):
# model = tf.keras.Sequential([
#   # Add the preprocessing layers you created earlier.
#   resize_and_rescale,
#   data_augmentation,
#   layers.Conv2D(16, 3, padding='same', activation='relu'),
#   layers.MaxPooling2D(),
#   # Rest of your model.
# ])
# resize_and_rescale was built by its call on one unbatched image, so its input shape is
# (h, w, 3) read as a batch; the new Sequential builds itself from it at once and its
# Conv2D gets one (IMG_SIZE, IMG_SIZE, 3) image: ValueError. Stand-in: the same
# preprocessing in new, unbuilt layers of the same configuration.
try:
  model = nn.Sequential([
    # Add the preprocessing layers you created earlier.
    resize_and_rescale,
    data_augmentation,
    layers.Conv2D(16, 3, padding='same', activation='relu'),
    layers.MaxPooling2D(),
    # Rest of your model.
  ])
  raise AssertionError("GAP 1 is fixed: restore upstream's line")
except ValueError as e:
  assert 'rank 4' in str(e), e
model = nn.Sequential([
  # Add the preprocessing layers you created earlier.
  nn.Sequential([layers.Resizing(IMG_SIZE, IMG_SIZE), layers.Rescaling(1./255)]),
  data_augmentation,
  layers.Conv2D(16, 3, padding='same', activation='relu'),
  layers.MaxPooling2D(),
  # Rest of your model.
])
# Added: the model runs on a batch; in inference it does not augment
features = model(image, training=False)
assert features.shape == (1, IMG_SIZE // 2, IMG_SIZE // 2, 16)
np.testing.assert_array_equal(features.numpy(), model(image, training=False).numpy())
assert not np.array_equal(features.numpy(), model(image, training=True).numpy())

# #### Option 2: Apply the preprocessing layers to your dataset

aug_ds = train_ds.map(
  lambda x, y: (resize_and_rescale(x, training=True), y))
x0, y0 = next(iter(aug_ds))
assert x0.shape == (IMG_SIZE, IMG_SIZE, 3) and int(y0) == LABELS[0]

# ### Apply the preprocessing layers to the datasets

batch_size = 32
AUTOTUNE = data.AUTOTUNE


def prepare(ds, shuffle=False, augment=False):
  # Resize and rescale all datasets.
  ds = ds.map(lambda x, y: (resize_and_rescale(x), y),
              num_parallel_calls=AUTOTUNE)

  if shuffle:
    ds = ds.shuffle(1000)

  # Batch all datasets.
  ds = ds.batch(batch_size)

  # Use data augmentation only on the training set.
  if augment:
    ds = ds.map(lambda x, y: (data_augmentation(x, training=True), y),
                num_parallel_calls=AUTOTUNE)

  # Use buffered prefetching on all datasets.
  return ds.prefetch(buffer_size=AUTOTUNE)


train_ds = prepare(train_ds, shuffle=True, augment=True)
val_ds = prepare(val_ds)
test_ds = prepare(test_ds)

# Added: the batches (the validation set resized, not augmented)
xb, yb = next(iter(train_ds))
assert xb.shape == (batch_size, IMG_SIZE, IMG_SIZE, 3) and xb.dtype == em.float32
assert yb.shape == (batch_size,) and yb.dtype == np.int64
assert float(em.reduce_min(xb)) >= -1e-6 and float(em.reduce_max(xb)) <= 1 + 1e-6
xv, yv = next(iter(val_ds))
np.testing.assert_array_equal(np.asarray(yv), LABELS[n_train:n_train + len(yv)])
for k in range(3):
  expected = np.clip(np.round(np_resize(flower(n_train + k), IMG_SIZE, IMG_SIZE)), 0, 255)
  np.testing.assert_allclose(np.asarray(xv[k]), expected / 255, atol=1 / 255 + 1e-6)

# ### Train a model

model = nn.Sequential([
  layers.Conv2D(16, 3, padding='same', activation='relu'),
  layers.MaxPooling2D(),
  layers.Conv2D(32, 3, padding='same', activation='relu'),
  layers.MaxPooling2D(),
  layers.Conv2D(64, 3, padding='same', activation='relu'),
  layers.MaxPooling2D(),
  layers.Flatten(),
  layers.Dense(128, activation='relu'),
  layers.Dense(num_classes)
])

model.compile(optimizer='adam',
              loss=nn.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=['accuracy'])

epochs = EPOCHS
history = model.fit(
  train_ds,
  validation_data=val_ds,
  epochs=epochs
)

loss, acc = model.evaluate(test_ds)
print("Accuracy", acc)
print("training accuracy by epoch", np.round(history.history['accuracy'], 3))
# Added: evaluate's loss and accuracy against numpy's on predict's logits (test_ds keeps
# the split's order)
logits = np.asarray(model.predict(test_ds), np.float64)
test_labels = LABELS[n_train + n_val:]
assert logits.shape == (len(test_labels), num_classes)
np_loss = np.mean(np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1))
                  + logits.max(-1) - logits[np.arange(len(test_labels)), test_labels])
np.testing.assert_allclose(acc, np.mean(logits.argmax(-1) == test_labels), atol=1e-6)
np.testing.assert_allclose(loss, np_loss, rtol=1e-4)
assert sorted(history.history) == ['accuracy', 'loss', 'val_accuracy', 'val_loss']
assert all(len(v) == epochs and np.all(np.isfinite(v)) for v in history.history.values())
assert np.isfinite(loss) and 0 <= acc <= 1
assert SHORT or history.history['accuracy'][-1] > 0.6, history.history
assert SHORT or acc > 0.7, (loss, acc)

# ### Custom data augmentation


def random_invert_img(x, p=0.5):
  if  em.random.uniform([]) < p:
    x = (255-x)
  else:
    x
  return x


def random_invert(factor=0.5):
  return layers.Lambda(lambda x: random_invert_img(x, factor))


random_invert = random_invert()

# plt.figure(figsize=(10, 10))
inverted = 0
for i in range(9):  # noqa: B007 (upstream's; i placed the subplot)
  augmented_image = random_invert(image)
  # ax = plt.subplot(3, 3, i + 1)
  shown = augmented_image[0].numpy().astype("uint8")  # plt.imshow(...)
  # plt.axis("off")
  if np.array_equal(shown, 255 - first_image):
    inverted += 1
  else:
    np.testing.assert_array_equal(shown, first_image)
assert 0 < inverted < 9, inverted


class RandomInvert(layers.Layer):
  def __init__(self, factor=0.5, **kwargs):
    super().__init__(**kwargs)
    self.factor = factor

  def call(self, x):
    return random_invert_img(x)


shown = RandomInvert()(image)[0]  # _ = plt.imshow(RandomInvert()(image)[0])
assert shown.shape == first_image.shape
assert (np.array_equal(shown.numpy(), first_image)
        or np.array_equal(shown.numpy(), 255 - first_image.astype(np.float32)))

# ## Using tf.image

(train_ds, val_ds, test_ds), metadata = tfds.load(
    'tf_flowers',
    split=['train[:80%]', 'train[80%:90%]', 'train[90%:]'],
    with_info=True,
    as_supervised=True,
)

image, label = next(iter(train_ds))
# _ = plt.imshow(image)
# _ = plt.title(get_label_name(label))
np.testing.assert_array_equal(image, first_image)
assert int(label) == LABELS[0]
shown_pairs = []


def visualize(original, augmented):
  # fig = plt.figure()
  # plt.subplot(1,2,1)
  # plt.title('Original image')
  # plt.imshow(original)
  #
  # plt.subplot(1,2,2)
  # plt.title('Augmented image')
  # plt.imshow(augmented)
  original, augmented = np.asarray(original), np.asarray(augmented)  # what imshow reads
  assert original.ndim == 3 and augmented.ndim in (2, 3), (original.shape, augmented.shape)
  shown_pairs.append((original, augmented))


# ### Data augmentation
# #### Flip an image

flipped = em.image.flip_left_right(image)
visualize(image, flipped)
np.testing.assert_array_equal(flipped.numpy(), np.fliplr(first_image))

# #### Grayscale an image

grayscaled = em.image.rgb_to_grayscale(image)
visualize(image, em.squeeze(grayscaled))
# _ = plt.colorbar()
gray = np_to_uint8((np_to_float(first_image) * np.float32([0.2989, 0.5870, 0.1140])).sum(-1))
assert grayscaled.shape == first_image.shape[:2] + (1,) and grayscaled.dtype == em.uint8
assert np.abs(grayscaled.numpy()[..., 0].astype(int) - gray).max() <= 1
assert np.mean(grayscaled.numpy()[..., 0] == gray) > 0.99

# #### Saturate an image

saturated = em.image.adjust_saturation(image, 3)
visualize(image, saturated)


def np_saturate(rgb, factor):  # colorsys's HSV round trip, pixel by pixel
  out = np.empty(rgb.shape, np.float32)
  for idx in np.ndindex(rgb.shape[:2]):
    h, s, v = colorsys.rgb_to_hsv(*rgb[idx].astype(np.float64))
    out[idx] = colorsys.hsv_to_rgb(h, min(s * factor, 1.), v)
  return out


expected = np_saturate(np_to_float(first_image), 3)
assert saturated.shape == first_image.shape and saturated.dtype == em.uint8
assert np.abs(saturated.numpy().astype(int) - np_to_uint8(expected)).max() <= 1
assert np.mean(saturated.numpy() == np_to_uint8(expected)) > 0.99
assert saturated.numpy().astype(int).std(-1).mean() > first_image.astype(int).std(-1).mean()

# #### Change image brightness

bright = em.image.adjust_brightness(image, 0.4)
visualize(image, bright)
np.testing.assert_array_equal(bright.numpy(), np_to_uint8(np_to_float(first_image)
                                                          + np.float32(0.4), saturate=True))

# #### Center crop an image

cropped = em.image.central_crop(image, central_fraction=0.5)
visualize(image, cropped)
h, w = first_image.shape[:2]
top, left = int((h - h * 0.5) / 2), int((w - w * 0.5) / 2)  # TF's box: (h - 2 top) tall
np.testing.assert_array_equal(cropped.numpy(), first_image[top:h - top, left:w - left])

# #### Rotate an image

rotated = em.image.rot90(image)
visualize(image, rotated)
np.testing.assert_array_equal(rotated.numpy(), np.rot90(first_image))

# ### Random transformations
# #### Randomly change image brightness

deltas = []
for i in range(3):
  seed = (i, 0)  # tuple of size (2,)
  stateless_random_brightness = em.image.stateless_random_brightness(
      image, max_delta=0.95, seed=seed)
  visualize(image, stateless_random_brightness)
  # Added: the same seed, the same image; one shift in [-0.95, 0.95) for all pixels
  np.testing.assert_array_equal(em.image.stateless_random_brightness(
      image, max_delta=0.95, seed=seed).numpy(), stateless_random_brightness.numpy())
  # The delta depends on the seed alone (TF's definition), so a float image, which is not
  # clipped, shows it exactly; a large one can saturate every pixel of the uint8 image.
  delta = float(em.image.stateless_random_brightness(
      np.full((1, 1, 1), 0.5, np.float32), max_delta=0.95, seed=seed).numpy()[0, 0, 0]) - 0.5
  out = stateless_random_brightness.numpy()
  expected = np_to_uint8(np_to_float(first_image) + np.float32(delta), saturate=True)
  assert np.abs(out.astype(int) - expected).max() <= 1, delta
  assert np.mean(out == expected) > 0.99, delta
  inside = (out > 0) & (out < 255)  # where unsaturated, the image itself gives the delta
  if inside.any():
    shift = np.median(out[inside] / np.float32(255.5) - np_to_float(first_image)[inside])
    assert abs(shift - delta) < 1 / 255, (shift, delta)
  deltas.append(delta)
assert all(-0.95 <= d < 0.95 for d in deltas), deltas
assert len({round(d, 3) for d in deltas}) == 3, deltas

# #### Randomly change image contrast

factors = []
for i in range(3):
  seed = (i, 0)  # tuple of size (2,)
  stateless_random_contrast = em.image.stateless_random_contrast(
      image, lower=0.1, upper=0.9, seed=seed)
  visualize(image, stateless_random_contrast)
  # Added: deviations from each channel's mean scaled by one factor in [0.1, 0.9]
  flt = np_to_float(first_image)
  out = np_to_float(stateless_random_contrast.numpy()) * np.float32(255 / 255.5)
  dev_in, dev_out = flt - flt.mean((0, 1)), out - flt.mean((0, 1))
  factor = float((dev_in * dev_out).sum() / (dev_in * dev_in).sum())
  assert 0.1 - 0.01 <= factor <= 0.9 + 0.01, factor
  expected = np_to_uint8(dev_in * np.float32(factor) + flt.mean((0, 1)), saturate=True)
  assert np.abs(stateless_random_contrast.numpy().astype(int) - expected).max() <= 2
  factors.append(factor)
assert len({round(f, 3) for f in factors}) == 3, factors

# #### Randomly crop an image

offsets = []
for i in range(3):
  seed = (i, 0)  # tuple of size (2,)
  stateless_random_crop = em.image.stateless_random_crop(
      image, size=CROP_SIZE, seed=seed)  # upstream: size=[210, 300, 3] (CROP_SIZE in full)
  visualize(image, stateless_random_crop)
  # Added: a window of the image, found by search
  out = stateless_random_crop.numpy()
  assert out.shape == tuple(CROP_SIZE)
  found = [(y, x) for y in range(h - CROP_SIZE[0] + 1) for x in range(w - CROP_SIZE[1] + 1)
           if np.array_equal(first_image[y:y + CROP_SIZE[0], x:x + CROP_SIZE[1]], out)]
  assert found, i
  offsets.append(found[0])
print("crop offsets", offsets)
assert len(set(offsets)) > 1, offsets
assert len(shown_pairs) == 15

# ### Apply augmentation to a dataset

(train_datasets, val_ds, test_ds), metadata = tfds.load(
    'tf_flowers',
    split=['train[:80%]', 'train[80%:90%]', 'train[90%:]'],
    with_info=True,
    as_supervised=True,
)


def resize_and_rescale(image, label):
  image = em.cast(image, em.float32)
  image = em.image.resize(image, [IMG_SIZE, IMG_SIZE])
  image = (image / 255.0)
  return image, label


def augment(image_label, seed):
  image, label = image_label
  image, label = resize_and_rescale(image, label)
  image = em.image.resize_with_crop_or_pad(image, IMG_SIZE + 6, IMG_SIZE + 6)
  # Make a new seed.
  new_seed = em.random.split(seed, num=1)[0, :]
  # Random crop back to the original size.
  image = em.image.stateless_random_crop(
      image, size=[IMG_SIZE, IMG_SIZE, 3], seed=seed)
  # Random brightness.
  image = em.image.stateless_random_brightness(
      image, max_delta=0.5, seed=new_seed)
  image = em.clip_by_value(image, 0, 1)
  return image, label

# Added: augment's output, repeatable for a seed, new for another
resized_a, _ = resize_and_rescale(first_image, LABELS[0])
np.testing.assert_allclose(resized_a.numpy(), np_resize(first_image, IMG_SIZE, IMG_SIZE) / 255,
                           atol=1e-5)
np.testing.assert_array_equal(
    em.image.resize_with_crop_or_pad(resized_a, IMG_SIZE + 6, IMG_SIZE + 6).numpy(),
    np.pad(resized_a.numpy(), [(3, 3), (3, 3), (0, 0)]))
aug_a, lab_a = augment((first_image, LABELS[0]), (5, 5))
aug_b, _ = augment((first_image, LABELS[0]), (5, 5))
aug_c, _ = augment((first_image, LABELS[0]), (6, 5))
assert aug_a.shape == (IMG_SIZE, IMG_SIZE, 3) and aug_a.dtype == em.float32
assert float(em.reduce_min(aug_a)) >= 0 and float(em.reduce_max(aug_a)) <= 1
np.testing.assert_array_equal(aug_a.numpy(), aug_b.numpy())
assert not np.array_equal(aug_a.numpy(), aug_c.numpy())
new_seeds = em.random.split((5, 5), num=1)  # TF's: the seed's dtype (int32 from Python ints)
assert new_seeds.shape == (1, 2) and new_seeds.dtype == em.int32
np.testing.assert_array_equal(new_seeds.numpy(), em.random.split((5, 5), num=1).numpy())
assert not np.array_equal(new_seeds.numpy(), em.random.split((6, 5), num=1).numpy())

# #### Option 1: Using tf.data.experimental.Counter

# Create a `Counter` object and `Dataset.zip` it together with the training set.
counter = data.experimental.Counter()
train_ds = data.Dataset.zip((train_datasets, (counter, counter)))
(x0, y0), (c0, c1) = next(iter(train_ds))
assert int(c0) == int(c1) == 0 and c0.dtype == np.int64 and int(y0) == LABELS[0]

train_ds = (
    train_ds
    .shuffle(1000)
    .map(augment, num_parallel_calls=AUTOTUNE)
    .batch(batch_size)
    .prefetch(AUTOTUNE)
)

val_ds = (
    val_ds
    .map(resize_and_rescale, num_parallel_calls=AUTOTUNE)
    .batch(batch_size)
    .prefetch(AUTOTUNE)
)

test_ds = (
    test_ds
    .map(resize_and_rescale, num_parallel_calls=AUTOTUNE)
    .batch(batch_size)
    .prefetch(AUTOTUNE)
)


def check_batches(ds, n_images, augmented):  # Added: shapes, dtypes, ranges, count
  count = 0
  for images, labels in ds:
    assert images.shape[1:] == (IMG_SIZE, IMG_SIZE, 3) and images.dtype == np.float32
    assert labels.dtype == np.int64 and images.shape[0] == labels.shape[0] <= batch_size
    images = np.asarray(images)
    assert images.min() >= 0 and images.max() <= 1 + (0 if augmented else 1e-5)
    count += labels.shape[0]
  assert count == n_images, (count, n_images)


check_batches(train_ds, n_train, True)
check_batches(val_ds, n_val, False)
xv, _ = next(iter(val_ds))
np.testing.assert_allclose(np.asarray(xv[0]), np_resize(flower(n_train), IMG_SIZE, IMG_SIZE)
                           / 255, atol=1e-4)

# #### Option 2: Using tf.random.Generator

# Create a generator.
rng = em.random.Generator.from_seed(123, alg='philox')


# Create a wrapper function for updating seeds.
def f(x, y):
  seed = rng.make_seeds(1)[:, 0]
  image, label = augment((x, y), seed)
  return image, label


# Added: each call makes a new seed
s1, s2 = rng.make_seeds(1)[:, 0], rng.make_seeds(1)[:, 0]
assert s1.shape == (2,) and s1.dtype == em.int64 and int(s1[1]) == 0
assert int(s1[0]) != int(s2[0])

train_ds = (
    train_datasets
    .shuffle(1000)
    .map(f, num_parallel_calls=AUTOTUNE)
    .batch(batch_size)
    .prefetch(AUTOTUNE)
)

val_ds = (
    val_ds
    .map(resize_and_rescale, num_parallel_calls=AUTOTUNE)
    .batch(batch_size)
    .prefetch(AUTOTUNE)
)

test_ds = (
    test_ds
    .map(resize_and_rescale, num_parallel_calls=AUTOTUNE)
    .batch(batch_size)
    .prefetch(AUTOTUNE)
)

check_batches(train_ds, n_train, True)
# Added: upstream maps and batches val_ds and test_ds a second time here, so their
# elements are batches of batches, and the last (smaller) batch cannot be stacked with
# the others: iterating them fails as in TensorFlow ("Cannot batch tensors with different
# shapes"), which upstream never does ("These datasets can now be used ...").
n_test = NUM_IMAGES - n_train - n_val
if n_test > batch_size and n_test % batch_size:
  try:
    next(iter(test_ds))
    raise AssertionError("a batch of batches of different sizes was stacked")
  except ValueError as e:
    assert 'cannot stack' in str(e), e
