"""Port of tensorflow/docs site/en/tutorials/generative/pix2pix.ipynb ("pix2pix:
Image-to-image translation with a conditional GAN"): the CMP facades archive fetched with
get_file(extract=True); each JPEG (photo on the left, label map on the right) read,
decoded, split in two and cast to float32; random jitter (nearest resize up, one
random_crop of both images stacked, a mirror when tf.random.uniform(()) > 0.5, under
@tf.function) and normalisation to [-1, 1] in a list_files -> map -> shuffle -> batch(1)
pipeline; a U-Net generator (Sequential downsamplers Conv2D/BatchNormalization/LeakyReLU
and upsamplers Conv2DTranspose/BatchNormalization/Dropout/ReLU joined by Concatenate skips,
random_normal_initializer(0, 0.02), a tanh Conv2DTranspose) and a PatchGAN discriminator
on the concatenated pair (ZeroPadding2D, valid Conv2Ds); BinaryCrossentropy(from_logits)
plus LAMBDA = 100 times the L1 loss; two GradientTapes and two Adam(2e-4, beta_1=0.5) in a
tf.function train_step that logs four tf.summary scalars; fit over
train_ds.repeat().take(steps).enumerate() with generate_images (training=True) and a
tf.train.Checkpoint; then the latest checkpoint restored and the test set translated.

Upstream: https://github.com/tensorflow/docs/blob/7c3650212740204359d4ceae481abc79345541be/site/en/tutorials/generative/pix2pix.ipynb
Changed: names only (tf.keras.* -> nn.*: layers, Sequential, Model, losses, optimizers,
utils.get_file; tf.* ops, tf.random_normal_initializer, tf.image.* -> em.*; tf.data ->
data; tf.GradientTape -> tape.GradientTape; @tf.function -> @graph.function;
tf.summary -> summary; tf.train.Checkpoint/latest_checkpoint -> ckpt_lib.*, as upstream
names its object `checkpoint`), except the GAPs below. The plots (plt.*, IPython's
display, %tensorboard, !ls) are dropped as comments; what they would show is asserted.
The facades download cannot be had: this program writes a SYNTHETIC facades.tar.gz, in
the archive's layout (facades/train/1..400.jpg, test/1..106.jpg, val/1..100.jpg), into a
temporary directory that is get_file's cache ($KERAS_HOME) and the working directory, so
upstream's get_file call finds it there and only extracts it, and upstream's loaders read
it unchanged. Each JPEG (quality 95, no chroma subsampling) is a made-up facade: the
"photo" on the left (a wall, a 2-4 x 2-4 grid of windows, a door, a cornice, each its own
colour, shaded towards the ground, with noise of sd 4) and its label map on the right
(one flat colour per class).
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream's 256 x 256 halves, jitter to 286,
filters, 8 downsamplers and 7 upsamplers, 40,000 steps and a checkpoint every 5,000):
64 x 64 halves, jitter to 72, every filter count divided by 8, the first 6 downsamplers
and the last 5 upsamplers (so one Dropout, not three; the discriminator gives 6 x 6
patches, upstream 30 x 30), 300 steps, a checkpoint every 100; EMBER_PROGRAMS_SHORT=1
(the strict-GPU run): 20 steps, a checkpoint every 10, the final L1 over 8 test images,
no thresholds. Seeds for numpy and ember.
Added: the extracted layout; the decoded JPEG against the written pixels (within JPEG's
error) and its split (input = the label map, real = the photo); the nearest resize
against a numpy one with TF's half-pixel centres; each of 40 jittered pairs is one window
of both resized images, mirrored together, with the windows moving and about half
mirrored; the file lists, the exception list_files raises for no file (what GAP 4's
except clause catches), a training batch (shape, dtype, range, label colours only) and a
test batch equal to a written test pair, normalised; every shape upstream prints or
comments; both models' parameter counts against Keras's formulas (upstream's widths:
54,425,859 and 2,770,433, as Keras's summary gives); the kernels drawn from an untruncated
normal of sd 0.02; the generator (inference mode, before and after training) and the
discriminator against a float64 PyTorch forward with TF's padding, Conv2DTranspose as the
gradient of a convolution and Keras's BatchNormalization (epsilon 1e-3); Dropout active in
training mode only; both losses against numpy; discriminator_loss and its 12 gradients in
training mode against PyTorch's autograd; every step's four losses finite, gen_total =
gan + 100 * l1, and equal to the scalars read back from the event file at step // 1000;
the checkpoint numbering, and the restore bringing back the zeroed generator exactly;
the images generate_images would show are in [0, 1]. Thresholds (CPU run): the
discriminator's loss, averaged over 50 steps, gets below 0.9 * 2 log 2 = 1.25 (an
untrained one stays at 2 log 2 = 1.39: it starts at 1.40; 5 seeds gave minima of
0.53-0.68), and the generator's mean L1 over the 106 test images (as generate_images runs
it, training=True) gets below 0.8 times that of the best image that ignores its input,
the per-pixel median of the 400 training photos (0.147, so below 0.118; the untrained
generator is at 0.34; 5 seeds gave 0.091-0.095).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it):
1. (by design: ember has no string tensors) no tf.io.read_file (no em.io: AttributeError):
Path.read_bytes stands in. 2. no tf.io.decode_jpeg (AttributeError): nn.utils.load_img on
the bytes, img_to_array(dtype=uint8) and em.convert_to_tensor stand in. 3. no
tf.image.ResizeMethod (em.image: AttributeError): its value 'nearest' stands in. 4. no
tf.errors (em.errors: AttributeError, met only when the except clause is evaluated), and
list_files of no file raises a plain ValueError where TF raises InvalidArgumentError, so
even `except em.InvalidArgumentError:` (ember has that class) would not catch it and
upstream's fallback to val/ would crash: `except ValueError:` stands in. 5. no
nn.utils.plot_model (AttributeError): dropped, the shapes and counts are asserted. 6.
(no error; 10x slower, with a warning) Dataset.enumerate's counter is a numpy.int64 (TF:
an int64 tf.Tensor), and graph.function keys a numpy scalar by its value (a 0-d numpy
array by its dtype and shape), so upstream's train_step(input_image, target, step) traces
anew at every step (300 steps: 94 s, against 10 s): em.convert_to_tensor(step) stands in.
Also seen, not GAPs here: em.image.random_crop reads its random offsets on the host, so
random_jitter's guard fails at every call and graph.function, with a warning, runs it
eagerly from then on (values right; TF: one graph); Conv2D.padding is 'SAME' where Keras's
is 'same'; Conv2D.get_config() has no 'activation' key (Keras's always has one).
"""

import datetime
import io
import math
import os
import pathlib
import tarfile
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

import ember.core as em
from ember import checkpoint as ckpt_lib
from ember import data, graph, nn, summary, tape

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
np.random.seed(0)
em.random.set_seed(0)
workdir = tempfile.TemporaryDirectory()
os.chdir(workdir.name)  # upstream writes logs/ and training_checkpoints/ in the working directory

# --- the stand-in for the download (added) ------------------------------------------------
SIDE = 256 if FULL else 64  # each half of a facades image is SIDE x SIDE (the archive's: 256)
SPLITS = {'train': 400, 'test': 106, 'val': 100}  # the archive's counts
# the label map's colours (wall, window, door, cornice) and the "photo"'s colours for them
LABEL_COLOURS = np.array([[0, 0, 170], [0, 255, 255], [255, 85, 0], [170, 255, 85]])
PHOTO_COLOURS = np.array([[190, 160, 120], [45, 55, 80], [120, 60, 30], [215, 215, 205]])


def synthetic_facade(rng):
  """A made-up facade: its "photo" and its label map (a cornice along the top, a grid of
  2-4 x 2-4 windows, a door at a random place along the bottom), both uint8 RGB."""
  s = SIDE
  labels = np.zeros((s, s), np.int64)
  labels[:max(s // 16, 2)] = 3
  rows, cols = rng.integers(2, 5, 2)
  wh, ww = s // (2 * rows + 1), s // (2 * cols + 1)
  for r in range(rows):
    for c in range(cols):
      y = s // 16 + (2 * r + 1) * (s - s // 4) // (2 * rows + 1)
      x = (2 * c + 1) * s // (2 * cols + 1)
      labels[y:y + wh, x:x + ww] = 1
  door = int(rng.integers(s // 8, s - s // 4))
  labels[s - s // 4:, door:door + s // 8] = 2
  shade = 20 * np.linspace(-1, 1, s)[:, None, None]  # lighter towards the ground
  photo = PHOTO_COLOURS[labels] + shade + rng.normal(0, 4, (s, s, 3))
  return np.clip(photo, 0, 255).round().astype(np.uint8), LABEL_COLOURS[labels].astype(np.uint8)


rng = np.random.default_rng(0)
written = {}  # (split, number) -> (photo, label map) as written
archive = pathlib.Path(workdir.name) / 'datasets' / 'facades.tar.gz'
archive.parent.mkdir()
with tarfile.open(archive, 'w:gz') as tar:
  for split, count in SPLITS.items():
    for number in range(1, count + 1):
      photo, label_map = synthetic_facade(rng)
      buf = io.BytesIO()  # as the archive's JPEGs: the photo on the left, the labels right
      Image.fromarray(np.concatenate([photo, label_map], axis=1)).save(
          buf, format='JPEG', quality=95, subsampling=0)
      info = tarfile.TarInfo(f'facades/{split}/{number}.jpg')
      info.size = buf.tell()
      buf.seek(0)
      tar.addfile(info, buf)
      written[split, number] = photo, label_map
# get_file finds facades.tar.gz in its cache ($KERAS_HOME/datasets) and only extracts it
os.environ['KERAS_HOME'] = workdir.name

# --- upstream --------------------------------------------------------------------------------

dataset_name = "facades" #@param ["cityscapes", "edges2handbags", "edges2shoes", "facades", "maps", "night2day"]  # noqa: E501

_URL = f'http://efrosgans.eecs.berkeley.edu/pix2pix/datasets/{dataset_name}.tar.gz'

path_to_zip = nn.utils.get_file(
    fname=f"{dataset_name}.tar.gz",
    origin=_URL,
    extract=True)

path_to_zip  = pathlib.Path(path_to_zip)

extraction_dir = f'{dataset_name}_extracted/{dataset_name}'

PATH = path_to_zip.parent/extraction_dir

list(PATH.parent.iterdir())
assert list(PATH.parent.iterdir()) == [PATH]  # added
assert {p.name: len(list(p.iterdir())) for p in PATH.iterdir()} == SPLITS  # added

# GAP 1 (by design): sample_image = tf.io.read_file(str(PATH / 'train/1.jpg'))
sample_image = (PATH / 'train/1.jpg').read_bytes()
# GAP 2: sample_image = tf.io.decode_jpeg(sample_image)
sample_image = em.convert_to_tensor(
    nn.utils.img_to_array(nn.utils.load_img(io.BytesIO(sample_image)), dtype=np.uint8))
print(sample_image.shape)
assert sample_image.shape == (SIDE, 2 * SIDE, 3) and sample_image.dtype == em.uint8  # added
# added: the JPEG decodes to what was written, within JPEG's error
error = np.abs(sample_image.numpy().astype(int) - np.concatenate(written['train', 1], 1))
assert error.mean() < 3 and error.max() < 40, (error.mean(), error.max())

# plt.figure()
# plt.imshow(sample_image)


def load(image_file):
  # Read and decode an image file to a uint8 tensor
  # GAP 1 (by design): image = tf.io.read_file(image_file)
  image = pathlib.Path(image_file).read_bytes()
  # GAP 2: image = tf.io.decode_jpeg(image)
  image = em.convert_to_tensor(
      nn.utils.img_to_array(nn.utils.load_img(io.BytesIO(image)), dtype=np.uint8))

  # Split each image tensor into two tensors:
  # - one with a real building facade image
  # - one with an architecture label image
  w = em.shape(image)[1]
  w = w // 2
  input_image = image[:, w:, :]
  real_image = image[:, :w, :]

  # Convert both images to float32 tensors
  input_image = em.cast(input_image, em.float32)
  real_image = em.cast(real_image, em.float32)

  return input_image, real_image


# Plot a sample of the input (architecture label image) and real (building facade photo) images:
inp, re = load(str(PATH / 'train/100.jpg'))
# Casting to int for matplotlib to display the images
# plt.figure()
# plt.imshow(inp / 255.0)
# plt.figure()
# plt.imshow(re / 255.0)
# added: the input is the right half (the label map), the real image the left (the photo)
assert inp.shape == re.shape == (SIDE, SIDE, 3) and inp.dtype == re.dtype == em.float32
photo_100, labels_100 = written['train', 100]
assert np.abs(inp.numpy() - labels_100).mean() < 3 and np.abs(re.numpy() - photo_100).mean() < 3

# The facade training set consist of 400 images
BUFFER_SIZE = 400
# The batch size of 1 produced better results for the U-Net in the original pix2pix experiment
BATCH_SIZE = 1
# Each image is 256x256 in size
IMG_WIDTH = SIDE
IMG_HEIGHT = SIDE
JITTER = 286 if FULL else 72  # added: the size random_jitter resizes to (upstream's 286)


def resize(input_image, real_image, height, width):
  # GAP 3: input_image = tf.image.resize(input_image, [height, width],
  #                                      method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)
  input_image = em.image.resize(input_image, [height, width],
                                method='nearest')
  # GAP 3: real_image = tf.image.resize(real_image, [height, width],
  #                                     method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)
  real_image = em.image.resize(real_image, [height, width],
                               method='nearest')

  return input_image, real_image


def random_crop(input_image, real_image):
  stacked_image = em.stack([input_image, real_image], axis=0)
  cropped_image = em.image.random_crop(
      stacked_image, size=[2, IMG_HEIGHT, IMG_WIDTH, 3])

  return cropped_image[0], cropped_image[1]


# Normalizing the images to [-1, 1]
def normalize(input_image, real_image):
  input_image = (input_image / 127.5) - 1
  real_image = (real_image / 127.5) - 1

  return input_image, real_image


@graph.function()
def random_jitter(input_image, real_image):
  # Resizing to 286x286
  input_image, real_image = resize(input_image, real_image, JITTER, JITTER)

  # Random cropping back to 256x256
  input_image, real_image = random_crop(input_image, real_image)

  if em.random.uniform(()) > 0.5:
    # Random mirroring
    input_image = em.image.flip_left_right(input_image)
    real_image = em.image.flip_left_right(real_image)

  return input_image, real_image


jittered = []  # added: the four below, checked after
# plt.figure(figsize=(6, 6))
for i in range(4):  # noqa: B007 (upstream's plotting used i)
  rj_inp, rj_re = random_jitter(inp, re)
  jittered.append((rj_inp.numpy(), rj_re.numpy()))  # added
  # plt.subplot(2, 2, i + 1)
  # plt.imshow(rj_inp / 255.0)
  # plt.axis('off')
# plt.show()

# added: TF's nearest resize (half-pixel centres: source index floor((i + 0.5) * in / out))
source = np.minimum(np.floor((np.arange(JITTER) + 0.5) * SIDE / JITTER).astype(int), SIDE - 1)
big_inp, big_re = inp.numpy()[source][:, source], re.numpy()[source][:, source]
assert all(np.array_equal(a.numpy(), b) for a, b in
           zip(resize(inp, re, JITTER, JITTER), (big_inp, big_re)))
# added: each jittered pair is one window of both resized images, both mirrored or neither;
# over 40 calls the windows move and half or so are mirrored
jittered += [tuple(t.numpy() for t in random_jitter(inp, re)) for _ in range(36)]


def window_of(rj_inp, rj_re):
  """(y, x, mirrored) of the window of the resized pair that the jittered pair is."""
  for mirrored in (False, True):
    a, b = (rj_inp[:, ::-1], rj_re[:, ::-1]) if mirrored else (rj_inp, rj_re)
    for y in range(JITTER - IMG_HEIGHT + 1):
      for x in range(JITTER - IMG_WIDTH + 1):
        if (np.array_equal(b[0], big_re[y, x:x + IMG_WIDTH])  # a cheap first look
            and np.array_equal(a, big_inp[y:y + IMG_HEIGHT, x:x + IMG_WIDTH])
            and np.array_equal(b, big_re[y:y + IMG_HEIGHT, x:x + IMG_WIDTH])):
          return y, x, mirrored
  raise AssertionError('a jittered pair is not a window of the resized pair')


windows = [window_of(rj_inp, rj_re) for rj_inp, rj_re in jittered]
assert all(a.shape == b.shape == (IMG_HEIGHT, IMG_WIDTH, 3) for a, b in jittered)
assert len({w[:2] for w in windows}) > 10, windows
assert 8 <= sum(w[2] for w in windows) <= 32, windows


def host(x):  # added: elements of ember.data are numpy arrays, model outputs tensors
  return x if isinstance(x, np.ndarray) else x.numpy()


def load_image_train(image_file):
  input_image, real_image = load(image_file)
  input_image, real_image = random_jitter(input_image, real_image)
  input_image, real_image = normalize(input_image, real_image)

  return input_image, real_image


def load_image_test(image_file):
  input_image, real_image = load(image_file)
  input_image, real_image = resize(input_image, real_image,
                                   IMG_HEIGHT, IMG_WIDTH)
  input_image, real_image = normalize(input_image, real_image)

  return input_image, real_image


train_dataset = data.Dataset.list_files(str(PATH / 'train/*.jpg'))
train_dataset = train_dataset.map(load_image_train,
                                  num_parallel_calls=data.AUTOTUNE)
train_dataset = train_dataset.shuffle(BUFFER_SIZE)
train_dataset = train_dataset.batch(BATCH_SIZE)

try:
  test_dataset = data.Dataset.list_files(str(PATH / 'test/*.jpg'))
# GAP 4: except tf.errors.InvalidArgumentError:
except ValueError:
  test_dataset = data.Dataset.list_files(str(PATH / 'val/*.jpg'))
test_dataset = test_dataset.map(load_image_test)
test_dataset = test_dataset.batch(BATCH_SIZE)

# added: the file lists, and the fallback's exception (TF: InvalidArgumentError)
test_files = sorted(data.Dataset.list_files(str(PATH / 'test/*.jpg'), shuffle=False))
assert test_files == sorted(str(PATH / f'test/{n}.jpg') for n in range(1, 107)), test_files[:3]
assert len(list(data.Dataset.list_files(str(PATH / 'train/*.jpg')))) == 400
try:
  data.Dataset.list_files(str(PATH / 'missing/*.jpg'))
  raise AssertionError('list_files of no file did not raise')
except ValueError:
  pass
# added: a training batch is jittered and normalised; a test batch is a test file's pair,
# normalised (the file found as the written pair nearest to it)
train_input, train_target = next(iter(train_dataset))
assert train_input.shape == train_target.shape == (1, IMG_HEIGHT, IMG_WIDTH, 3)
assert train_input.dtype == train_target.dtype == em.float32
assert -1 <= float(em.reduce_min(train_input)) and float(em.reduce_max(train_input)) <= 1
nearest_label = np.abs((host(train_input)[0, :, :, None] + 1) * 127.5 - LABEL_COLOURS).sum(-1).min(-1)
assert np.mean(nearest_label < 40) > 0.97  # label colours only, but at JPEG's edges
test_pair = [(host(t)[0] + 1) * 127.5 for t in next(iter(test_dataset))]
errors = {n: [np.abs(got - want).mean() for got, want in zip(test_pair, written['test', n][::-1])]
          for n in range(1, 107)}
assert max(min(errors.values(), key=sum)) < 3, min(errors.values(), key=sum)

OUTPUT_CHANNELS = 3
W = 1 if FULL else 8  # added: the width divisor, every filter count is divided by it
DEPTH = 8 if FULL else 6  # added: the U-Net halves the size DEPTH times (2 ** DEPTH == SIDE)


def downsample(filters, size, apply_batchnorm=True):
  initializer = em.random_normal_initializer(0., 0.02)

  result = nn.Sequential()
  result.add(
      nn.layers.Conv2D(filters, size, strides=2, padding='same',
                       kernel_initializer=initializer, use_bias=False))

  if apply_batchnorm:
    result.add(nn.layers.BatchNormalization())

  result.add(nn.layers.LeakyReLU())

  return result


down_model = downsample(3, 4)
down_result = down_model(em.expand_dims(inp, 0))
print (down_result.shape)
assert down_result.shape == (1, SIDE // 2, SIDE // 2, 3)  # added


def upsample(filters, size, apply_dropout=False):
  initializer = em.random_normal_initializer(0., 0.02)

  result = nn.Sequential()
  result.add(
    nn.layers.Conv2DTranspose(filters, size, strides=2,
                              padding='same',
                              kernel_initializer=initializer,
                              use_bias=False))

  result.add(nn.layers.BatchNormalization())

  if apply_dropout:
      result.add(nn.layers.Dropout(0.5))

  result.add(nn.layers.ReLU())

  return result


up_model = upsample(3, 4)
up_result = up_model(down_result)
print (up_result.shape)
assert up_result.shape == (1, SIDE, SIDE, 3)  # added


def Generator():
  inputs = nn.layers.Input(shape=[IMG_HEIGHT, IMG_WIDTH, 3])

  down_stack = [
    downsample(64 // W, 4, apply_batchnorm=False),  # (batch_size, 128, 128, 64)
    downsample(128 // W, 4),  # (batch_size, 64, 64, 128)
    downsample(256 // W, 4),  # (batch_size, 32, 32, 256)
    downsample(512 // W, 4),  # (batch_size, 16, 16, 512)
    downsample(512 // W, 4),  # (batch_size, 8, 8, 512)
    downsample(512 // W, 4),  # (batch_size, 4, 4, 512)
    downsample(512 // W, 4),  # (batch_size, 2, 2, 512)
    downsample(512 // W, 4),  # (batch_size, 1, 1, 512)
  ][:DEPTH]  # added: the first DEPTH

  up_stack = [
    upsample(512 // W, 4, apply_dropout=True),  # (batch_size, 2, 2, 1024)
    upsample(512 // W, 4, apply_dropout=True),  # (batch_size, 4, 4, 1024)
    upsample(512 // W, 4, apply_dropout=True),  # (batch_size, 8, 8, 1024)
    upsample(512 // W, 4),  # (batch_size, 16, 16, 1024)
    upsample(256 // W, 4),  # (batch_size, 32, 32, 512)
    upsample(128 // W, 4),  # (batch_size, 64, 64, 256)
    upsample(64 // W, 4),  # (batch_size, 128, 128, 128)
  ][8 - DEPTH:]  # added: the last DEPTH - 1

  initializer = em.random_normal_initializer(0., 0.02)
  last = nn.layers.Conv2DTranspose(OUTPUT_CHANNELS, 4,
                                   strides=2,
                                   padding='same',
                                   kernel_initializer=initializer,
                                   activation='tanh')  # (batch_size, 256, 256, 3)

  x = inputs

  # Downsampling through the model
  skips = []
  for down in down_stack:
    x = down(x)
    skips.append(x)

  skips = reversed(skips[:-1])

  # Upsampling and establishing the skip connections
  for up, skip in zip(up_stack, skips):
    x = up(x)
    x = nn.layers.Concatenate()([x, skip])

  x = last(x)

  return nn.Model(inputs=inputs, outputs=x)


generator = Generator()
# GAP 5: tf.keras.utils.plot_model(generator, show_shapes=True, dpi=64)
# (no stand-in: the shapes and parameter counts are asserted below)

gen_output = generator(inp[em.newaxis, ...], training=False)
# plt.imshow(gen_output[0, ...])
assert gen_output.shape == (1, SIDE, SIDE, OUTPUT_CHANNELS)  # added
assert float(em.reduce_max(em.abs(gen_output))) <= 1  # added: tanh (of 0-255 inputs, as upstream)

LAMBDA = 100

loss_object = nn.losses.BinaryCrossentropy(from_logits=True)


def generator_loss(disc_generated_output, gen_output, target):
  gan_loss = loss_object(em.ones_like(disc_generated_output), disc_generated_output)

  # Mean absolute error
  l1_loss = em.reduce_mean(em.abs(target - gen_output))

  total_gen_loss = gan_loss + (LAMBDA * l1_loss)

  return total_gen_loss, gan_loss, l1_loss


def Discriminator():
  initializer = em.random_normal_initializer(0., 0.02)

  inp = nn.layers.Input(shape=[IMG_HEIGHT, IMG_WIDTH, 3], name='input_image')
  tar = nn.layers.Input(shape=[IMG_HEIGHT, IMG_WIDTH, 3], name='target_image')

  x = nn.layers.concatenate([inp, tar])  # (batch_size, 256, 256, channels*2)

  down1 = downsample(64 // W, 4, False)(x)  # (batch_size, 128, 128, 64)
  down2 = downsample(128 // W, 4)(down1)  # (batch_size, 64, 64, 128)
  down3 = downsample(256 // W, 4)(down2)  # (batch_size, 32, 32, 256)

  zero_pad1 = nn.layers.ZeroPadding2D()(down3)  # (batch_size, 34, 34, 256)
  conv = nn.layers.Conv2D(512 // W, 4, strides=1,
                          kernel_initializer=initializer,
                          use_bias=False)(zero_pad1)  # (batch_size, 31, 31, 512)

  batchnorm1 = nn.layers.BatchNormalization()(conv)

  leaky_relu = nn.layers.LeakyReLU()(batchnorm1)

  zero_pad2 = nn.layers.ZeroPadding2D()(leaky_relu)  # (batch_size, 33, 33, 512)

  last = nn.layers.Conv2D(1, 4, strides=1,
                          kernel_initializer=initializer)(zero_pad2)  # (batch_size, 30, 30, 1)

  return nn.Model(inputs=[inp, tar], outputs=last)


discriminator = Discriminator()
# GAP 5: tf.keras.utils.plot_model(discriminator, show_shapes=True, dpi=64)

disc_out = discriminator([inp[em.newaxis, ...], gen_output], training=False)
# plt.imshow(disc_out[0, ..., -1], vmin=-20, vmax=20, cmap='RdBu_r')
# plt.colorbar()
PATCHES = SIDE // 8 - 2  # added: upstream's 30 x 30 patches of a 256 x 256 image
assert disc_out.shape == (1, PATCHES, PATCHES, 1)  # added


def discriminator_loss(disc_real_output, disc_generated_output):
  real_loss = loss_object(em.ones_like(disc_real_output), disc_real_output)

  generated_loss = loss_object(em.zeros_like(disc_generated_output), disc_generated_output)

  total_disc_loss = real_loss + generated_loss

  return total_disc_loss


# --- added: the models against Keras's parameter counts and a float64 PyTorch forward ------


def param_counts(w, depth):
  """Keras's (total, non-trainable) counts of the two models, from the layer formulas."""
  downs = [f // w for f in [64, 128, 256, 512, 512, 512, 512, 512][:depth]]
  ups = [f // w for f in [512, 512, 512, 512, 256, 128, 64][8 - depth:]]
  total, frozen, cin = 0, 0, 3
  for i, f in enumerate(downs):  # conv without bias, then BatchNormalization (not the first)
    total, frozen, cin = total + 16 * cin * f + (4 * f if i else 0), frozen + (2 * f if i else 0), f
  for f, skip in zip(ups, downs[-2::-1]):  # conv-transpose, BatchNormalization, concatenate
    total, frozen, cin = total + 16 * cin * f + 4 * f, frozen + 2 * f, f + skip
  gen = (total + 16 * cin * OUTPUT_CHANNELS + OUTPUT_CHANNELS, frozen)
  d = [64 // w, 128 // w, 256 // w, 512 // w]
  disc = (16 * 6 * d[0] + 16 * d[0] * d[1] + 4 * d[1] + 16 * d[1] * d[2] + 4 * d[2]
          + 16 * d[2] * d[3] + 4 * d[3] + 16 * d[3] + 1, 2 * (d[1] + d[2] + d[3]))
  return gen, disc


def counts(model):
  return model.count_params(), sum(int(np.prod(v.shape)) for v in model.non_trainable_variables)


assert param_counts(1, 8) == ((54425859, 10880), (2770433, 1792))  # Keras's summary of upstream
assert (counts(generator), counts(discriminator)) == param_counts(W, DEPTH)
kernels = np.concatenate([v.numpy().ravel() for v in generator.trainable_variables
                          if 'kernel' in v.name])  # random_normal_initializer: not truncated
assert abs(kernels.std() / 0.02 - 1) < 0.05 and np.abs(kernels).max() > 3 * 0.02, kernels.std()


leaves = {}  # id(variable) -> its PyTorch leaf, for the gradient check


def t64(v):
  return leaves[id(v)] if id(v) in leaves else torch.tensor(v.numpy(), dtype=torch.float64)


def torch_layer(layer, h, training):
  """One Keras layer in float64 PyTorch (NCHW): TF's "same" padding (even sizes here, so
  symmetric), Conv2DTranspose as that convolution's gradient, BatchNormalization with the
  batch's (biased) statistics in training mode and its moving ones otherwise."""
  name = type(layer).__name__
  if name == 'Sequential':
    for sub in layer.layers:
      h = torch_layer(sub, h, training)
    return h
  if name in ('Conv2D', 'Conv2DTranspose'):
    pad = 1 if layer.padding.lower() == 'same' else 0  # kernel 4, stride 2: 1 each side
    kernel = t64(layer.kernel).permute(3, 2, 0, 1).contiguous()
    conv = F.conv2d if name == 'Conv2D' else F.conv_transpose2d
    h = conv(h, kernel, t64(layer.bias) if layer.use_bias else None, stride=layer.strides, padding=pad)
    return torch.tanh(h) if layer.activation.__name__ == 'tanh' else h
  if name == 'BatchNormalization':
    if training:
      mean, var = h.mean((0, 2, 3), keepdim=True), h.var((0, 2, 3), unbiased=False, keepdim=True)
    else:
      mean, var = (t64(v)[:, None, None] for v in (layer.moving_mean, layer.moving_variance))
    return (t64(layer.gamma)[:, None, None] * (h - mean) / torch.sqrt(var + 1e-3)
            + t64(layer.beta)[:, None, None])  # Keras's epsilon 1e-3
  if name == 'LeakyReLU':
    return F.leaky_relu(h, 0.3)  # Keras's default slope
  if name == 'ReLU':
    return torch.relu(h)
  if name == 'Dropout':
    assert not training
    return h
  if name == 'ZeroPadding2D':
    return F.pad(h, (1, 1, 1, 1))
  raise AssertionError(name)


def torch_generator(x):
  """The U-Net in inference mode, walking the functional model's layers in order: the
  downsamplers' outputs are the skips, joined to the upsamplers' deepest first."""
  h, downs, ups = x.permute(0, 3, 1, 2), [], 0
  for layer in generator.layers[1:]:
    if type(layer).__name__ == 'Concatenate':
      h, ups = torch.cat([h, downs[-2 - ups]], 1), ups + 1
    else:
      h = torch_layer(layer, h, False)
      if type(layer).__name__ == 'Sequential' and type(layer.layers[0]).__name__ == 'Conv2D':
        downs.append(h)
  return h.permute(0, 2, 3, 1)


def torch_discriminator(x, y, training):
  h = torch.cat([x, y], -1).permute(0, 3, 1, 2)
  for layer in discriminator.layers[3:]:  # after the two inputs and the concatenate
    h = torch_layer(layer, h, training)
  return h.permute(0, 2, 3, 1)


def torch_bce(logits, label):  # Keras's from_logits BCE: the mean over every patch
  return F.binary_cross_entropy_with_logits(logits, torch.full_like(logits, label))


def allclose(got, want, rtol=1e-4):
  got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
  np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())


x32, target = normalize(inp[em.newaxis, ...], re[em.newaxis, ...])
x64 = t64(x32)
allclose(generator(x32, training=False).numpy(), torch_generator(x64).numpy())
allclose(gen_output.numpy(), torch_generator(t64(inp[em.newaxis, ...])).numpy())
allclose(disc_out.numpy(), torch_discriminator(t64(inp[em.newaxis, ...]), t64(gen_output), False))
# Dropout is active in training mode only (training reaches the Sequentials in the Model);
# a batch of two, as with one image the batch statistics at the 1 x 1 bottleneck make
# everything up to the first upsampler's Dropout zero
pair = em.concat([x32, em.convert_to_tensor(train_input)], axis=0)
assert not np.array_equal(generator(pair, training=True).numpy(), generator(pair, training=True).numpy())
np.testing.assert_array_equal(generator(pair, training=False).numpy(),
                              generator(pair, training=False).numpy())
# the two losses against numpy (sigmoid cross-entropy: log(1 + exp(-z)) for label 1)
z = disc_out.numpy().astype(np.float64)
total, gan, l1 = generator_loss(disc_out, gen_output, target)
want_l1 = np.abs(target.numpy() - gen_output.numpy()).astype(np.float64).mean()
allclose([float(total), float(gan), float(l1)],
         [np.logaddexp(0, -z).mean() + 100 * want_l1, np.logaddexp(0, -z).mean(), want_l1])
allclose(float(discriminator_loss(-disc_out, disc_out)), 2 * np.logaddexp(0, z).mean())
# discriminator_loss and its gradients in training mode (batch statistics), as train_step's,
# against PyTorch's autograd on the same weights
fake = generator(x32, training=False)
with tape.GradientTape() as check_tape:
  d_loss = discriminator_loss(discriminator([x32, target], training=True),
                              discriminator([x32, fake], training=True))
d_grads = check_tape.gradient(d_loss, discriminator.trainable_variables)
leaves.update({id(v): torch.tensor(v.numpy(), dtype=torch.float64, requires_grad=True)
               for v in discriminator.trainable_variables})
want_loss = (torch_bce(torch_discriminator(x64, t64(target), True), 1.)
             + torch_bce(torch_discriminator(x64, t64(fake), True), 0.))
want_grads = torch.autograd.grad(want_loss, [leaves[id(v)] for v in discriminator.trainable_variables])
allclose(float(d_loss), want_loss.item())
assert len(d_grads) == len(want_grads) == 5 + 3 * 2 + 1  # 5 kernels, 3 gammas and betas, a bias
# (by their norms: a float32 pre-activation within rounding of LeakyReLU's kink can take the
# other slope; at 256 x 256 one such of the 492,032 before the last LeakyReLU moved the
# gradients by 0.1%, where a wrong backward pass moves them by far more than 1%)
for got, want in zip(d_grads, want_grads):
  got, want = got.numpy().astype(np.float64), want.numpy()
  assert np.linalg.norm(got - want) < 1e-2 * np.linalg.norm(want), np.linalg.norm(got - want)
leaves.clear()

# --- upstream --------------------------------------------------------------------------------

generator_optimizer = nn.optimizers.Adam(2e-4, beta_1=0.5)
discriminator_optimizer = nn.optimizers.Adam(2e-4, beta_1=0.5)

checkpoint_dir = './training_checkpoints'
checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt")
checkpoint = ckpt_lib.Checkpoint(generator_optimizer=generator_optimizer,
                                 discriminator_optimizer=discriminator_optimizer,
                                 generator=generator,
                                 discriminator=discriminator)

shown = []  # added: what generate_images would plot


def generate_images(model, test_input, tar):
  prediction = model(test_input, training=True)
  # plt.figure(figsize=(15, 15))

  display_list = [test_input[0], tar[0], prediction[0]]
  title = ['Input Image', 'Ground Truth', 'Predicted Image']

  # for i in range(3):
  #   plt.subplot(1, 3, i+1)
  #   plt.title(title[i])
  #   # Getting the pixel values in the [0, 1] range to plot.
  #   plt.imshow(display_list[i] * 0.5 + 0.5)
  #   plt.axis('off')
  # plt.show()
  shown.append(([host(d) * 0.5 + 0.5 for d in display_list], title))  # added


for example_input, example_target in test_dataset.take(1):
  generate_images(generator, example_input, example_target)
assert len(shown) == 1 and all(d.shape == (IMG_HEIGHT, IMG_WIDTH, 3) for d in shown[0][0])
assert all(0 <= d.min() and d.max() <= 1 for d in shown[0][0])  # added: the range plotted

log_dir="logs/"

summary_writer = summary.create_file_writer(
  log_dir + "fit/" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))

logged = []  # added: each step's four losses


@graph.function
def train_step(input_image, target, step):
  with tape.GradientTape() as gen_tape, tape.GradientTape() as disc_tape:
    gen_output = generator(input_image, training=True)

    disc_real_output = discriminator([input_image, target], training=True)
    disc_generated_output = discriminator([input_image, gen_output], training=True)

    gen_total_loss, gen_gan_loss, gen_l1_loss = generator_loss(disc_generated_output, gen_output, target)
    disc_loss = discriminator_loss(disc_real_output, disc_generated_output)

  generator_gradients = gen_tape.gradient(gen_total_loss,
                                          generator.trainable_variables)
  discriminator_gradients = disc_tape.gradient(disc_loss,
                                               discriminator.trainable_variables)

  generator_optimizer.apply_gradients(zip(generator_gradients,
                                          generator.trainable_variables))
  discriminator_optimizer.apply_gradients(zip(discriminator_gradients,
                                              discriminator.trainable_variables))

  with summary_writer.as_default():
    summary.scalar('gen_total_loss', gen_total_loss, step=step//1000)
    summary.scalar('gen_gan_loss', gen_gan_loss, step=step//1000)
    summary.scalar('gen_l1_loss', gen_l1_loss, step=step//1000)
    summary.scalar('disc_loss', disc_loss, step=step//1000)
  return gen_total_loss, gen_gan_loss, gen_l1_loss, disc_loss  # added: checked below


SAVE_EVERY = 5000 if FULL else 10 if SHORT else 100  # added: upstream's 5k


def fit(train_ds, test_ds, steps):
  example_input, example_target = next(iter(test_ds.take(1)))
  start = time.time()

  for step, (input_image, target) in train_ds.repeat().take(steps).enumerate():
    if (step) % 1000 == 0:
      # display.clear_output(wait=True)

      if step != 0:
        print(f'Time taken for 1000 steps: {time.time()-start:.2f} sec\n')

      start = time.time()

      generate_images(generator, example_input, example_target)
      print(f"Step: {step//1000}k")

    # GAP 6: train_step(input_image, target, step)
    losses = train_step(input_image, target, em.convert_to_tensor(step))
    logged.append([float(v) for v in losses])  # added

    # Training step
    if (step+1) % 10 == 0:
      print('.', end='', flush=True)


    # Save (checkpoint) the model every 5k steps
    if (step + 1) % SAVE_EVERY == 0:
      checkpoint.save(file_prefix=checkpoint_prefix)


# %load_ext tensorboard
# %tensorboard --logdir {log_dir}

STEPS = 40000 if FULL else 20 if SHORT else 300  # added
fit(train_dataset, test_dataset, steps=STEPS)
print()

# --- added: what training logged and reached ------------------------------------------------
logged = np.array(logged)
assert logged.shape == (STEPS, 4) and np.isfinite(logged).all()
allclose(logged[:, 0], logged[:, 1] + LAMBDA * logged[:, 2])  # gen_total = gan + 100 * l1
summary_writer.flush()
events = {}
for event_file in pathlib.Path(log_dir, 'fit').glob('*/events.out.tfevents.*'):
  for event in summary.read_events(event_file):
    for value in event.summary.value:
      events.setdefault(value.tag, []).append((event.step, value.simple_value))
names = ['gen_total_loss', 'gen_gan_loss', 'gen_l1_loss', 'disc_loss']
assert sorted(events) == sorted(names), events.keys()
for k, name in enumerate(names):
  assert [s for s, _ in events[name]] == [s // 1000 for s in range(STEPS)]
  allclose([v for _, v in events[name]], logged[:, k], rtol=1e-6)
for k in range(0, STEPS, 50):
  print(k, logged[k:k + 50].mean(0).round(3))
# the discriminator tells real pairs from generated ones better than chance (2 log 2: a
# discriminator that learns nothing stays there)
assert SHORT or min(logged[k:k + 50, 3].mean() for k in range(0, STEPS, 50)) < 0.9 * 2 * math.log(2)

# "Restore the latest checkpoint and test the network"
after_training = generator(x32, training=False).numpy()
allclose(after_training, torch_generator(x64).numpy(), rtol=1e-3)  # the trained statistics too
for v in generator.variables:
  v.assign(em.zeros_like(v))

# --- upstream --------------------------------------------------------------------------------

# !ls {checkpoint_dir}
assert 'checkpoint' in os.listdir(checkpoint_dir)  # added: one save every SAVE_EVERY steps
assert ckpt_lib.latest_checkpoint(checkpoint_dir).endswith(f'ckpt-{STEPS // SAVE_EVERY}')

# Restoring the latest checkpoint in checkpoint_dir
checkpoint.restore(ckpt_lib.latest_checkpoint(checkpoint_dir))
np.testing.assert_array_equal(generator(x32, training=False).numpy(), after_training)

# Run the trained model on a few examples from the test set
for inp, tar in test_dataset.take(5):
  generate_images(generator, inp, tar)

# --- added: the generator translates label maps into photos ----------------------------------
assert len(shown) == 1 + (STEPS + 999) // 1000 + 5
# As generate_images runs it (training=True: the image's own statistics), over the test set;
# the best image that ignores its input, the per-pixel median of the 400 training photos,
# is off by 0.147; the untrained generator (tanh of ~0) by 0.34 (its first gen_l1_loss)
test_l1 = np.mean([float(em.reduce_mean(em.abs(generator(i, training=True) - t)))
                   for i, t in (test_dataset.take(8) if SHORT else test_dataset)])
median = np.median([written['train', n][0] for n in range(1, 401)], axis=0) / 127.5 - 1
median_l1 = np.mean([np.abs(median - (written['test', n][0] / 127.5 - 1)).mean()
                     for n in range(1, 107)])
print(f'test L1 {test_l1:.4f} (the median training photo: {median_l1:.4f}; '
      f'first step {logged[0, 2]:.4f}, last 50 steps {logged[-50:, 2].mean():.4f})')
assert SHORT or test_l1 < 0.8 * median_l1, (test_l1, median_l1)
