"""Port of tensorflow/docs site/en/guide/data.ipynb ("tf.data: Build TensorFlow input
pipelines"): basic mechanics and dataset structure, reading NumPy arrays, Python generators,
TFRecord, text and CSV files and sets of files, batching (simple and padded), training
workflows (epochs, shuffling), preprocessing (decoding and resizing images, arbitrary Python
logic, tf.Example parsing, time-series windowing, resampling), iterator checkpointing, and
datasets with Model.fit/evaluate/predict.

Upstream: https://github.com/tensorflow/docs/blob/master/site/en/guide/data.ipynb
Changed: names only (tf.data -> ember.data, tf.data.experimental.CsvDataset ->
data.CsvDataset, tf.* ops -> em.*, tf.keras -> nn, tf.train.Checkpoint/CheckpointManager ->
checkpoint.*). Nothing can be downloaded here, so
each download is a file this program writes into a temporary directory with upstream's
structure, and a local get_file (tf.keras.utils.get_file) returns its path: the Titanic
train.csv (627 generated passengers, upstream's ten columns and header), three small Iliad
text files, flower_photos (LICENSE.txt and five class folders of 8 generated JPEGs of
varied sizes), a TFRecord file of 12 tf.train.Example records shaped like FSNS's
(image/encoded a 600x150 PNG, image/text a street name; written with data.TFRecordWriter, the
Example protos encoded by a few lines below, as ember has no tf.train.Example), and
creditcard.csv (1024 rows of upstream's 31 quoted columns, 20 of class 1);
tf.keras.datasets.fashion_mnist is MNIST from $EMBER_DATA (same shapes and dtypes, read
with data.read_idx). pandas and scipy are not installed here: a csv-module reader stands in
for pd.read_csv (columns as int64/float64/str arrays, as pandas infers them), np.rot90 for
scipy.ndimage.rotate. The plotting (plt.*, the body of show and plot_batch_sizes) is
dropped; what it would show is asserted. ember has no string tensors (by design): text
elements are Python str (TF: bytes), and the string ops are Python's. Elements of
ember.data are numpy arrays, so upstream's `.numpy()` on an element is dropped (GAP 1).
Reduced (EMBER_PROGRAMS_FULL=1 restores it): the Keras model trains on 6,000 of the
60,000 images (EMBER_PROGRAMS_SHORT=1: 1,200 and no accuracy threshold). A seed is set.
Added: every element, shape, dtype, batch, count and order the guide prints is asserted
against TF's (worked out by hand or with numpy): generator batches across repeats, padded
batches and their zero padding (against the regenerated series), the shuffle buffer's bound
(output t comes from the first buffer_size + t inputs), epoch boundaries of shuffle/repeat,
reshuffling on each epoch, interleave order, CSV parsing with defaults and selected
columns, file bytes and labels, resized images against a numpy bilinear resize (TF's half
pixel centres), decoded Example fields, every window, class fractions, class balance after
resampling (within a tolerance), the iterator restored from a checkpoint, and the shapes
Keras returns.
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error):
1. (by design, docs/guide/input-pipelines.md) elements are numpy arrays, which have no
.numpy() (AttributeError); upstream's `.numpy()` is dropped. 4. no tf.SparseTensor (AttributeError).
5. TensorSpec has no value_type (AttributeError). 6. no
nn.preprocessing.image.ImageDataGenerator (AttributeError): a generator over the folders
stands in. 7. no tf.train.Example / tf.io.parse_example / FixedLenFeature (AttributeError;
ember reads and writes TFRecord files but not the Example protos in them): a small decoder
stands in. 8. (by design) no string tensors: tf.strings.split/substr, tf.io.read_file and
tf.string columns become Python str operations, open().read() and str. 11. no tf.io.decode_jpeg/decode_png
(em.io: AttributeError): nn.utils.load_img stands in (tf.image.convert_image_dtype and
tf.image.resize are em.image's now).
15. no Dataset.rejection_resample (AttributeError): a generator stands in.
GAPs 3, 9, 10, 12 and 14 (Dataset.reduce, tf.data.experimental.make_csv_dataset and
Counter, list_files, sample_from_datasets, em.py_function, Tensor.set_shape:
AttributeError; CsvDataset, map, shuffle, repeat and batch stood in for make_csv_dataset,
Dataset.range(0, None) for Counter) were fixed in ember; upstream's lines are restored.
Fixed in ember since the first version of this port: Python ints and floats became
int64/float64 where TF makes int32/float32 (GAP 2, silent): from_tensor_slices([8, 3, ...])
had dtype int64, CsvDataset's record_defaults [999, ...] gave int64 columns and
column_defaults [float()]*30+[int()] float64/int64; ember.data now types Python numbers as
TF does (numpy arrays and scalars keep their dtypes), so TF's int32/float32 checks are
restored. window(size, shift, stride) with stride > 1 took every stride-th of `size`
consecutive inputs, so the guide's make_window_dataset(window_size=10, shift=5, stride=3)
gave no element at all (GAP 13, silent); a window now holds `size` inputs `stride` apart,
as TF's, so upstream's make_window_dataset is restored, its windows ([0 3 ... 27],
[5 8 ... 32], ...) asserted, and the stand-in gone. reshuffle_each_iteration counted passes
per Dataset object, so the guide's pass over `shuffled` after shuffled.skip(60).take(5)
repeated that order (GAP 16, silent); as in TF, every new iterator over anything built on a
shuffle now gets a new order, and TF's check is restored.
"""

import csv
import io
import os
import pathlib
import tempfile
import types
import unittest

import numpy as np
from PIL import Image

import ember.core as em
from ember import checkpoint, data, nn

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
  raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)
np.random.seed(0)

# ---------------------------------------------------------------------------------------
# The stand-ins for upstream's downloads, written with upstream's structure.
_tmp = tempfile.TemporaryDirectory()
TMP = pathlib.Path(_tmp.name)
_rng = np.random.default_rng(0)

TITANIC_COLUMNS = ['survived', 'sex', 'age', 'n_siblings_spouses', 'parch', 'fare', 'class',
                   'deck', 'embark_town', 'alone']
TITANIC_ROWS = [['0', 'male', '22.0', '1', '0', '7.25', 'Third', 'unknown', 'Southampton',
                 'n']]
for _ in range(626):
  TITANIC_ROWS.append([
      str(int(_rng.random() < 0.38)), str(_rng.choice(['male', 'female'])),
      f'{_rng.integers(1, 80)}.0', str(_rng.integers(0, 5)), str(_rng.integers(0, 4)),
      f'{_rng.uniform(5, 100):.4f}', str(_rng.choice(['First', 'Second', 'Third'])),
      str(_rng.choice(['unknown', 'A', 'B', 'C', 'D', 'E', 'F'])),
      str(_rng.choice(['Southampton', 'Cherbourg', 'Queenstown', 'unknown'])),
      str(_rng.choice(['y', 'n']))])
TITANIC_LINES = [','.join(TITANIC_COLUMNS)] + [','.join(row) for row in TITANIC_ROWS]
(TMP / 'train.csv').write_text('\n'.join(TITANIC_LINES) + '\n')

ILIAD = {}
for name in ['cowper.txt', 'derby.txt', 'butler.txt']:
  ILIAD[name] = [f'{name[:-4].title()}, book I, line {i}: of wrath and of Achilles'
                 for i in range(12)]
  (TMP / name).write_text('\n'.join(ILIAD[name]) + '\n')

FLOWER_CLASSES = ['daisy', 'dandelion', 'roses', 'sunflowers', 'tulips']
FLOWER_PIXELS = {}  # path -> the array written (JPEG changes it a little)
(TMP / 'flower_photos').mkdir()
(TMP / 'flower_photos' / 'LICENSE.txt').write_text('All images in this archive are CC-BY.\n')
for k, flower in enumerate(FLOWER_CLASSES):
  (TMP / 'flower_photos' / flower).mkdir()
  for _ in range(8):
    h, w = (int(v) for v in _rng.integers(40, 100, size=2))
    yy, xx = np.mgrid[0:h, 0:w]
    pixels = np.stack([(yy * 255 // h), (xx * 255 // w), np.full((h, w), 50 * k)], axis=-1)
    path = TMP / 'flower_photos' / flower / f'{_rng.integers(10**9, 10**10)}_n.jpg'
    Image.fromarray(pixels.astype(np.uint8)).save(path, quality=95)
    FLOWER_PIXELS[str(path)] = pixels.astype(np.uint8)


def _varint(n):
  out = bytearray()
  while True:
    out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
    n >>= 7
    if not n:
      return bytes(out)


def _field(number, payload):  # a length-delimited protobuf field
  return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def serialize_example(feature):  # tf.train.Example(features=tf.train.Features(feature=...))
  entries = b''
  for key, values in feature.items():
    if isinstance(values[0], bytes):  # Feature.bytes_list (1) of BytesList.value (1)
      value = _field(1, b''.join(_field(1, v) for v in values))
    else:  # Feature.int64_list (3), packed
      value = _field(3, _field(1, b''.join(_varint(v) for v in values)))
    entries += _field(1, _field(1, key.encode()) + _field(2, value))
  return _field(1, entries)


FSNS_TEXTS = [b'Rue Perreyon', b'Avenue de la Gare', b'Rue du Port', b'Place Carnot',
              b'Rue des Ecoles', b'Chemin du Moulin', b'Rue Victor Hugo', b'Rue de Paris',
              b'Impasse des Lilas', b'Rue Pasteur', b'Boulevard Gambetta', b'Rue Haute']
FSNS_PNGS = []
with data.TFRecordWriter(str(TMP / 'fsns.tfrec')) as writer:
  for i, text in enumerate(FSNS_TEXTS):
    pixels = np.zeros((150, 600, 3), np.uint8)
    pixels[..., i % 3] = np.arange(600, dtype=np.uint8)[None, :] // 3 + 10 * i
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format='PNG')
    FSNS_PNGS.append(buffer.getvalue())
    writer.write(serialize_example({'image/encoded': [buffer.getvalue()],
                                    'image/format': [b'PNG'], 'image/text': [text],
                                    'image/width': [600], 'image/class': [3, 1, 4]}))

CREDIT_POSITIVE = set(_rng.choice(1024, size=20, replace=False).tolist())
with open(TMP / 'creditcard.csv', 'w') as f:  # quoted like upstream's file
  f.write(','.join(f'"{c}"' for c in ['Time'] + [f'V{i}' for i in range(1, 29)]
                   + ['Amount', 'Class']) + '\n')
  for i in range(1024):
    values = [float(i)] + [float(v) for v in _rng.normal(size=28)] + [float(_rng.uniform(0, 200))]
    f.write(','.join(repr(v) for v in values) + f',"{int(i in CREDIT_POSITIVE)}"\n')


def get_file(fname=None, origin=None, untar=False, extract=False):
  """tf.keras.utils.get_file, offline: the path of the stand-in written above."""
  return str(TMP / fname)


def read_csv(path):
  """pd.read_csv stand-in (pandas is not installed here): {column: array}, typed as pandas
  types them (int64, float64, else str objects)."""
  with open(path, newline='') as f:
    header, *rows = list(csv.reader(f))
  df = {}
  for name, column in zip(header, zip(*rows)):
    for kind in (np.int64, np.float64):
      try:
        df[name] = np.array([kind(v) for v in column])
        break
      except ValueError:
        continue
    else:
      df[name] = np.array(column, dtype=object)
  return df


def resize_bilinear(image, height, width):
  """tf.image.resize's default (bilinear, half-pixel centres, no antialiasing) in numpy."""
  def axis(n_out, n_in):
    x = np.clip((np.arange(n_out) + 0.5) * n_in / n_out - 0.5, 0, n_in - 1)
    lo = np.floor(x).astype(int)
    return lo, np.minimum(lo + 1, n_in - 1), x - lo
  y0, y1, fy = axis(height, image.shape[0])
  x0, x1, fx = axis(width, image.shape[1])
  fy, fx = fy[:, None, None], fx[None, :, None]
  top = image[y0][:, x0] * (1 - fx) + image[y0][:, x1] * fx
  bottom = image[y1][:, x0] * (1 - fx) + image[y1][:, x1] * fx
  return top * (1 - fy) + bottom * fy


def ints(batch):
  return np.asarray(batch).tolist()


# ---------------------------------------------------------------------------------------
# Setup
np.set_printoptions(precision=4)

# Basic mechanics
dataset = data.Dataset.from_tensor_slices([8, 3, 0, 8, 2, 1])
dataset
# (GAP 2, fixed: ember made Python ints int64; TF's element_spec is TensorSpec(shape=(),
# dtype=tf.int32).)
assert dataset.element_spec.dtype == em.int32
assert len(dataset) == 6

printed = []
for elem in dataset:
  # GAP 1 (by design): print(elem.numpy())   (AttributeError: numpy arrays have no .numpy())
  print(elem)
  printed.append(int(elem))
assert printed == [8, 3, 0, 8, 2, 1]

it = iter(dataset)

print(next(it))
assert next(iter(dataset)) == 8 and int(next(it)) == 3

# GAP 1 (by design): print(dataset.reduce(0, lambda state, value: state + value).numpy())
state = dataset.reduce(0, lambda state, value: state + value)
print(state)
assert state == 22

# Dataset structure
dataset1 = data.Dataset.from_tensor_slices(em.random.uniform([4, 10]))

dataset1.element_spec
assert dataset1.element_spec == data.TensorSpec((10,), np.float32)

dataset2 = data.Dataset.from_tensor_slices(
   (em.random.uniform([4]),
    em.random.uniform([4, 100], maxval=100, dtype=em.int32)))

dataset2.element_spec
assert dataset2.element_spec == (data.TensorSpec((), np.float32),
                                 data.TensorSpec((100,), np.int32))

dataset3 = data.Dataset.zip((dataset1, dataset2))

dataset3.element_spec
assert dataset3.element_spec == (dataset1.element_spec, dataset2.element_spec)

# Dataset containing a sparse tensor.
# GAP 4: dataset4 = tf.data.Dataset.from_tensors(tf.SparseTensor(indices=[[0, 0], [1, 2]],
#   values=[1, 2], dense_shape=[3, 4]))   (AttributeError: ember.core has no SparseTensor)
assert not hasattr(em, 'SparseTensor')
dense = np.zeros((3, 4), np.int32)
dense[0, 0], dense[1, 2] = 1, 2
dataset4 = data.Dataset.from_tensors(dense)

dataset4.element_spec
assert dataset4.element_spec == data.TensorSpec((3, 4), np.int32)

# Use value_type to see the type of value represented by the element spec
# GAP 5: dataset4.element_spec.value_type   (AttributeError: 'TensorSpec' object has no
# attribute 'value_type'; TF gives tensorflow.python.framework.sparse_tensor.SparseTensor)
assert not hasattr(dataset4.element_spec, 'value_type')

uniform = em.random.uniform([4, 10], minval=1, maxval=10, dtype=em.int32)
dataset1 = data.Dataset.from_tensor_slices(uniform)

dataset1
assert dataset1.element_spec == data.TensorSpec((10,), np.int32) and len(dataset1) == 4

rows = []
for z in dataset1:
  print(z)
  rows.append(z)
np.testing.assert_array_equal(np.stack(rows), uniform.numpy())
assert np.stack(rows).min() >= 1 and np.stack(rows).max() <= 9

dataset2 = data.Dataset.from_tensor_slices(
   (em.random.uniform([4]),
    em.random.uniform([4, 100], maxval=100, dtype=em.int32)))

dataset2

dataset3 = data.Dataset.zip((dataset1, dataset2))

dataset3

shapes = []
for a, (b, c) in dataset3:
  print(f'shapes: {a.shape}, {b.shape}, {c.shape}')
  shapes.append((a.shape, b.shape, c.shape))
assert shapes == [((10,), (), (100,))] * 4

# ---------------------------------------------------------------------------------------
# Reading input data: consuming NumPy arrays
# tf.keras.datasets.fashion_mnist.load_data() -> MNIST's files (same shapes and dtypes)
train = (data.read_idx(os.path.join(DATA_DIR, 'train-images-idx3-ubyte.gz')),
         data.read_idx(os.path.join(DATA_DIR, 'train-labels-idx1-ubyte.gz')))
test = (data.read_idx(os.path.join(DATA_DIR, 't10k-images-idx3-ubyte.gz')),
        data.read_idx(os.path.join(DATA_DIR, 't10k-labels-idx1-ubyte.gz')))

images, labels = train
images = images/255

dataset = data.Dataset.from_tensor_slices((images, labels))
dataset
assert dataset.element_spec == (data.TensorSpec((28, 28), np.float64),
                                data.TensorSpec((), np.uint8))
assert len(dataset) == 60000
first_image, first_label = next(iter(dataset))
np.testing.assert_array_equal(first_image, train[0][0] / 255)
assert first_label == train[1][0]


# Consuming Python generators
def count(stop):
  i = 0
  while i<stop:
    yield i
    i += 1


for n in count(5):
  print(n)

ds_counter = data.Dataset.from_generator(count, args=[25], output_types=em.int32, output_shapes = (), )

expected = np.tile(np.arange(25), 4)[:100].reshape(10, 10)
got = []
for count_batch in ds_counter.repeat().batch(10).take(10):
  print(count_batch)
  got.append(count_batch)
assert np.stack(got).dtype == np.int32
np.testing.assert_array_equal(np.stack(got), expected)  # [20 .. 24 0 .. 4] across the repeat


def gen_series():
  i = 0
  while True:
    size = np.random.randint(0, 10)
    yield i, np.random.normal(size=(size,))
    i += 1


for i, series in gen_series():
  print(i, ":", str(series))
  if i > 5:
    break

ds_series = data.Dataset.from_generator(
    gen_series,
    output_types=(em.int32, em.float32),
    output_shapes=((), (None,)))

ds_series
assert ds_series.element_spec == (data.TensorSpec((), np.int32),
                                  data.TensorSpec((None,), np.float32))

np.random.seed(1)  # to regenerate the series below
ds_series_batch = ds_series.shuffle(20).padded_batch(10)

ids, sequence_batch = next(iter(ds_series_batch))
print(ids)
print()
print(sequence_batch)
np.random.seed(1)
series_by_id = dict(item for item, _ in zip(gen_series(), range(40)))
assert ids.dtype == np.int32 and sequence_batch.dtype == np.float32
assert len(set(ids.tolist())) == 10 and max(ids) < 29  # output t is one of the first 20 + t
width = max(len(series_by_id[i]) for i in ids.tolist())
assert sequence_batch.shape == (10, width)
for i, row in zip(ids.tolist(), sequence_batch):  # each series, then zeros to the widest
  expected = np.zeros(width, np.float32)
  expected[:len(series_by_id[i])] = series_by_id[i]
  np.testing.assert_array_equal(row, expected)

flowers = get_file(
    'flower_photos',
    'https://storage.googleapis.com/download.tensorflow.org/example_images/flower_photos.tgz',
    untar=True)


# GAP 6: img_gen = tf.keras.preprocessing.image.ImageDataGenerator(rescale=1./255,
#   rotation_range=20)   (AttributeError: nn.preprocessing.image has no ImageDataGenerator);
# a generator of what flow_from_directory yields (batches of 32 shuffled images at 256x256,
# scaled by 1/255, one-hot labels of the sorted class folders) stands in, without the
# rotation:
assert not hasattr(nn.preprocessing.image, 'ImageDataGenerator')


class img_gen:  # upstream's name

  @staticmethod
  def flow_from_directory(directory, target_size=(256, 256), batch_size=32):
    classes = sorted(p.name for p in pathlib.Path(directory).iterdir() if p.is_dir())
    files = [(str(f), k) for k, c in enumerate(classes)
             for f in sorted((pathlib.Path(directory) / c).iterdir())]
    print(f'Found {len(files)} images belonging to {len(classes)} classes.')
    rng = np.random.default_rng(0)
    while True:
      order = rng.permutation(len(files))
      for start in range(0, len(files), batch_size):
        chosen = [files[j] for j in order[start:start + batch_size]]
        images = np.stack([nn.utils.img_to_array(nn.utils.load_img(f, target_size=target_size))
                           for f, _ in chosen]) * np.float32(1. / 255)
        yield images, np.eye(len(classes), dtype=np.float32)[[k for _, k in chosen]]


images, labels = next(img_gen.flow_from_directory(flowers))

print(images.dtype, images.shape)
print(labels.dtype, labels.shape)
assert images.dtype == np.float32 and images.shape == (32, 256, 256, 3)
assert labels.dtype == np.float32 and labels.shape == (32, 5)

ds = data.Dataset.from_generator(
    lambda: img_gen.flow_from_directory(flowers),
    output_types=(em.float32, em.float32),
    output_shapes=([32,256,256,3], [32,5])
)

ds.element_spec
assert ds.element_spec == (data.TensorSpec((32, 256, 256, 3), np.float32),
                           data.TensorSpec((32, 5), np.float32))

for images, labels in ds.take(1):
  print('images.shape: ', images.shape)
  print('labels.shape: ', labels.shape)
assert images.shape == (32, 256, 256, 3) and labels.shape == (32, 5)
assert 0 <= images.min() and images.max() <= 1 and (labels.sum(axis=1) == 1).all()

# ---------------------------------------------------------------------------------------
# Consuming TFRecord data
# Creates a dataset that reads all of the examples from two files.
fsns_test_file = get_file("fsns.tfrec", "https://storage.googleapis.com/download.tensorflow.org/data/fsns-20160927/testdata/fsns-00000-of-00001")

dataset = data.TFRecordDataset(filenames = [fsns_test_file])
dataset


def _read_varint(buf, pos):
  shift = result = 0
  while True:
    b = buf[pos]
    result |= (b & 0x7F) << shift
    pos, shift = pos + 1, shift + 7
    if not b & 0x80:
      return result, pos


def _fields(buf):  # (number, payload) of each length-delimited field
  pos = 0
  while pos < len(buf):
    key, pos = _read_varint(buf, pos)
    assert key & 7 == 2, key
    size, pos = _read_varint(buf, pos)
    yield key >> 3, buf[pos:pos + size]
    pos += size


def example_from_string(raw):
  """tf.train.Example.FromString stand-in: .features.feature[key].bytes_list/int64_list."""
  feature = {}
  for _, features in _fields(raw):
    for _, entry in _fields(features):
      parts = dict(_fields(entry))
      kind, values = next(_fields(parts[2]))
      lists = {'bytes_list': types.SimpleNamespace(value=[]),
               'int64_list': types.SimpleNamespace(value=[])}
      if kind == 1:
        lists['bytes_list'].value = [v for _, v in _fields(values)]
      else:
        packed, pos = next(_fields(values))[1], 0
        while pos < len(packed):
          v, pos = _read_varint(packed, pos)
          lists['int64_list'].value.append(v)
      feature[parts[1].decode()] = types.SimpleNamespace(**lists)
  return types.SimpleNamespace(features=types.SimpleNamespace(feature=feature))


raw_example = next(iter(dataset))
# GAP 7: parsed = tf.train.Example.FromString(raw_example.numpy())   (AttributeError: no
# tf.train.Example in ember)
parsed = example_from_string(raw_example)

parsed.features.feature['image/text']
assert isinstance(raw_example, bytes)
assert parsed.features.feature['image/text'].bytes_list.value == [b'Rue Perreyon']
assert parsed.features.feature['image/class'].int64_list.value == [3, 1, 4]
assert [example_from_string(r).features.feature['image/text'].bytes_list.value[0]
        for r in dataset] == FSNS_TEXTS

# ---------------------------------------------------------------------------------------
# Consuming text data
directory_url = 'https://storage.googleapis.com/download.tensorflow.org/data/illiad/'
file_names = ['cowper.txt', 'derby.txt', 'butler.txt']

file_paths = [
    get_file(file_name, directory_url + file_name)
    for file_name in file_names
]

dataset = data.TextLineDataset(file_paths)

lines = []
for line in dataset.take(5):
  print(line)
  lines.append(line)
assert lines == ILIAD['cowper.txt'][:5]  # str without the newline (TF: bytes)
assert len(list(dataset)) == 36  # every line of the three files

files_ds = data.Dataset.from_tensor_slices(file_paths)
lines_ds = files_ds.interleave(data.TextLineDataset, cycle_length=3)

lines = []
for i, line in enumerate(lines_ds.take(9)):
  if i % 3 == 0:
    print()
  print(line)
  lines.append(line)
assert lines == [ILIAD[f][i] for i in range(3) for f in file_names]  # line i of each file

titanic_file = get_file("train.csv", "https://storage.googleapis.com/tf-datasets/titanic/train.csv")
titanic_lines = data.TextLineDataset(titanic_file)

lines = []
for line in titanic_lines.take(10):
  print(line)
  lines.append(line)
assert lines == TITANIC_LINES[:10]


def survived(line):
  # GAP 8 (by design): return tf.not_equal(tf.strings.substr(line, 0, 1), "0")
  return line[0:1] != "0"


survivors = titanic_lines.skip(1).filter(survived)

lines = []
for line in survivors.take(10):
  print(line)
  lines.append(line)
assert lines == [line for line in TITANIC_LINES[1:] if line[0] != '0'][:10]

# ---------------------------------------------------------------------------------------
# Consuming CSV data
titanic_file = get_file("train.csv", "https://storage.googleapis.com/tf-datasets/titanic/train.csv")

df = read_csv(titanic_file)  # pd.read_csv(titanic_file)
for row in zip(*(column[:5] for column in df.values())):  # df.head()
  print(row)

titanic_slices = data.Dataset.from_tensor_slices(dict(df))

for feature_batch in titanic_slices.take(1):
  for key, value in feature_batch.items():
    print(f"  {key!r:20s}: {value}")
assert list(feature_batch) == TITANIC_COLUMNS
assert [feature_batch[k] for k in TITANIC_COLUMNS] == [0, 'male', 22.0, 1, 0, 7.25, 'Third',
                                                        'unknown', 'Southampton', 'n']
assert [type(feature_batch[k]) for k in TITANIC_COLUMNS] == [
    np.int64, str, np.float64, np.int64, np.int64, np.float64, str, str, str, str]


titanic_batches = data.experimental.make_csv_dataset(
    titanic_file, batch_size=4,
    label_name="survived")

for feature_batch, label_batch in titanic_batches.take(1):
  print(f"'survived': {label_batch}")
  print("features:")
  for key, value in feature_batch.items():
    print(f"  {key!r:20s}: {value}")
assert label_batch.dtype == np.int32 and label_batch.shape == (4,)
assert list(feature_batch) == TITANIC_COLUMNS[1:]
assert feature_batch['age'].dtype == np.float32 and feature_batch['parch'].dtype == np.int32
for k in range(4):  # each example is a row of the file
  row = [str(label_batch[k])] + [str(feature_batch[c][k]) for c in TITANIC_COLUMNS[1:]]
  assert any(row[:2] + row[3:5] + row[6:] == r[:2] + r[3:5] + r[6:]
             and float(row[2]) == float(r[2]) and np.float32(row[5]) == np.float32(r[5])
             for r in TITANIC_ROWS), row

titanic_batches = data.experimental.make_csv_dataset(
    titanic_file, batch_size=4,
    label_name="survived", select_columns=['class', 'fare', 'survived'])

for feature_batch, label_batch in titanic_batches.take(1):
  print(f"'survived': {label_batch}")
  for key, value in feature_batch.items():
    print(f"  {key!r:20s}: {value}")
assert list(feature_batch) == ['fare', 'class'] and label_batch.shape == (4,)
for k in range(4):
  assert any((str(label_batch[k]), np.float32(feature_batch['fare'][k]),
              feature_batch['class'][k]) == (r[0], np.float32(r[5]), r[6])
             for r in TITANIC_ROWS)

# GAP 8 (by design): tf.string -> str
titanic_types  = [em.int32, str, em.float32, em.int32, em.int32, em.float32, str, str, str, str]
dataset = data.CsvDataset(titanic_file, titanic_types , header=True)

got = []
for line in dataset.take(10):
  print([item for item in line])
  got.append(line)
for line, row in zip(got, TITANIC_ROWS[:10], strict=True):
  assert [type(item) for item in line] == [
      np.int32, str, np.float32, np.int32, np.int32, np.float32] + [str] * 4
  assert list(line) == [int(row[0]), row[1], np.float32(row[2]), int(row[3]), int(row[4]),
                        np.float32(row[5])] + row[6:]

# %%writefile missing.csv
(TMP / 'missing.csv').write_text("""1,2,3,4
,2,3,4
1,,3,4
1,2,,4
1,2,3,
,,,
""")

# Creates a dataset that reads all of the records from two CSV files, each with
# four float columns which may have missing values.

record_defaults = [999,999,999,999]
dataset = data.CsvDataset(str(TMP / "missing.csv"), record_defaults)
dataset = dataset.map(lambda *items: em.stack(items))
dataset

got = []
for line in dataset:
  print(line)
  got.append(line.numpy())
np.testing.assert_array_equal(np.stack(got), [[1, 2, 3, 4], [999, 2, 3, 4], [1, 999, 3, 4],
                                              [1, 2, 999, 4], [1, 2, 3, 999],
                                              [999, 999, 999, 999]])
# (GAP 2, fixed: ember typed the Python int defaults' columns int64; TF's are int32.)
assert got[0].dtype == np.int32

# Creates a dataset that reads all of the records from two CSV files with
# headers, extracting float data from columns 2 and 4.
record_defaults = [999, 999] # Only provide defaults for the selected columns
dataset = data.CsvDataset(str(TMP / "missing.csv"), record_defaults, select_cols=[1, 3])
dataset = dataset.map(lambda *items: em.stack(items))
dataset

got = []
for line in dataset:
  print(line)
  got.append(line.numpy())
np.testing.assert_array_equal(np.stack(got), [[2, 4], [2, 4], [999, 4], [2, 4], [2, 999],
                                              [999, 999]])

# ---------------------------------------------------------------------------------------
# Consuming sets of files
flowers_root = get_file(
    'flower_photos',
    'https://storage.googleapis.com/download.tensorflow.org/example_images/flower_photos.tgz',
    untar=True)
flowers_root = pathlib.Path(flowers_root)


names = []
for item in flowers_root.glob("*"):
  print(item.name)
  names.append(item.name)
assert sorted(names) == ['LICENSE.txt'] + FLOWER_CLASSES

list_ds = data.Dataset.list_files(str(flowers_root/'*/*'))

got = []
for f in list_ds.take(5):
  print(f)
  got.append(str(f))
assert len(set(got)) == 5 and set(got) <= set(FLOWER_PIXELS)
assert sorted(str(f) for f in list_ds) == sorted(FLOWER_PIXELS)  # all 40, once each


def process_path(file_path):
  # GAP 8 (by design): label = tf.strings.split(file_path, os.sep)[-2]
  label = str(file_path).split(os.sep)[-2]
  # GAP 8 (by design): return tf.io.read_file(file_path), label
  return pathlib.Path(file_path).read_bytes(), label


labeled_ds = list_ds.map(process_path)

for image_raw, label_text in labeled_ds.take(1):
  print(repr(image_raw[:100]))
  print()
  print(label_text)
assert image_raw[:4] == b'\xff\xd8\xff\xe0' and image_raw[6:10] == b'JFIF'  # a JPEG
assert [pathlib.Path(f).parent.name for f in FLOWER_PIXELS
        if pathlib.Path(f).read_bytes() == image_raw] == [label_text]  # its file's folder

# ---------------------------------------------------------------------------------------
# Batching dataset elements: simple batching
inc_dataset = data.Dataset.range(100)
dec_dataset = data.Dataset.range(0, -100, -1)
dataset = data.Dataset.zip((inc_dataset, dec_dataset))
batched_dataset = dataset.batch(4)

got = []
for batch in batched_dataset.take(4):
  print([arr for arr in batch])
  got.append([ints(arr) for arr in batch])
assert got == [[[4 * k + j for j in range(4)], [-(4 * k + j) for j in range(4)]]
               for k in range(4)]

batched_dataset
assert batched_dataset.element_spec == (data.TensorSpec((None,), np.int64),) * 2

batched_dataset = dataset.batch(7, drop_remainder=True)
batched_dataset
assert batched_dataset.element_spec == (data.TensorSpec((7,), np.int64),) * 2
assert len(batched_dataset) == 14 and len(dataset.batch(7)) == 15

# Batching tensors with padding
dataset = data.Dataset.range(100)
dataset = dataset.map(lambda x: em.fill([em.cast(x, em.int32)], x))
dataset = dataset.padded_batch(4, padded_shapes=(None,))

got = []
for batch in dataset.take(2):
  print(batch)
  print()
  got.append(batch)
np.testing.assert_array_equal(got[0], [[0, 0, 0], [1, 0, 0], [2, 2, 0], [3, 3, 3]])
np.testing.assert_array_equal(got[1], [[4, 4, 4, 4, 0, 0, 0], [5, 5, 5, 5, 5, 0, 0],
                                       [6, 6, 6, 6, 6, 6, 0], [7, 7, 7, 7, 7, 7, 7]])
assert got[0].dtype == np.int64
# the padding value, the padded shape and the last, short batch
last = list(data.Dataset.range(10).map(lambda x: em.fill([em.cast(x, em.int32)], x))
            .padded_batch(4, padded_shapes=(12,), padding_values=np.int64(-1)))
assert [b.shape for b in last] == [(4, 12), (4, 12), (2, 12)]
np.testing.assert_array_equal(last[2], [[8] * 8 + [-1] * 4, [9] * 9 + [-1] * 3])

# ---------------------------------------------------------------------------------------
# Training workflows: processing multiple epochs
titanic_file = get_file("train.csv", "https://storage.googleapis.com/tf-datasets/titanic/train.csv")
titanic_lines = data.TextLineDataset(titanic_file)


def plot_batch_sizes(ds):
  batch_sizes = [batch.shape[0] for batch in ds]
  return batch_sizes  # plt.bar(range(len(batch_sizes)), batch_sizes) and its labels


titanic_batches = titanic_lines.repeat(3).batch(128)
assert plot_batch_sizes(titanic_batches) == [128] * 14 + [92]  # 3 * 628 lines, no boundary

titanic_batches = titanic_lines.batch(128).repeat(3)

assert plot_batch_sizes(titanic_batches) == [128, 128, 128, 128, 116] * 3

epochs = 3
dataset = titanic_lines.batch(128)

shapes = []
for epoch in range(epochs):
  for batch in dataset:
    print(batch.shape)
    shapes.append(batch.shape)
  print("End of epoch: ", epoch)
assert shapes == [(128,)] * 4 + [(116,)] + [(128,)] * 4 + [(116,)] + [(128,)] * 4 + [(116,)]

# Randomly shuffling input data
lines = data.TextLineDataset(titanic_file)
counter = data.experimental.Counter()

dataset = data.Dataset.zip((counter, lines))
dataset = dataset.shuffle(buffer_size=100)
dataset = dataset.batch(20)
dataset

n,line_batch = next(iter(dataset))
print(n)
assert n.shape == (20,) and len(set(n.tolist())) == 20 and n.max() < 120
for k, line in zip(n.tolist(), line_batch):
  assert line == TITANIC_LINES[k]  # the pairs stay together

dataset = data.Dataset.zip((counter, lines))
shuffled = dataset.shuffle(buffer_size=100).batch(10).repeat(2)

print("Here are the item ID's near the epoch boundary:\n")
near = []
for n, line_batch in shuffled.skip(60).take(5):  # noqa: B007
  print(n)
  near.append(n.tolist())
assert [len(b) for b in near] == [10, 10, 8, 10, 10]  # 628 = 62 * 10 + 8: the epoch ends

shuffle_repeat = [n.mean() for n, line_batch in shuffled]
# plt.plot(shuffle_repeat, label="shuffle().repeat()"), plt.ylabel, plt.legend
assert len(shuffle_repeat) == 126
# (GAP 16, fixed: ember counted shuffle passes per Dataset object, so this pass over
# `shuffled` repeated the order of the pass over shuffled.skip(60).take(5); as in TF, each
# new iterator over anything built on the shuffle now gets a new order.)
assert shuffle_repeat[60:63] != [np.mean(b) for b in near[:3]]
ids = np.concatenate([n for n, _ in shuffled])  # another pass over `shuffled`: reshuffled
assert len(ids) == 1256 and not np.allclose([b.mean() for b in np.split(ids, range(10, 1256, 10))],
                                            shuffle_repeat)
assert sorted(ids[:628]) == list(range(628)) and sorted(ids[628:]) == list(range(628))
assert (ids[:628] != ids[628:]).any()  # reshuffled on the second epoch
assert all(k < 100 + t for t, k in enumerate(ids[:628]))  # output t: one of 100 + t inputs

dataset = data.Dataset.zip((counter, lines))
shuffled = dataset.repeat(2).shuffle(buffer_size=100).batch(10)

print("Here are the item ID's near the epoch boundary:\n")
near = []
for n, line_batch in shuffled.skip(55).take(15):  # noqa: B007
  print(n)
  near.append(n)
assert [len(b) for b in near] == [10] * 15

repeat_shuffle = [n.mean() for n, line_batch in shuffled]
ids = np.concatenate([n for n, _ in shuffled])
assert len(repeat_shuffle) == 126 and sorted(ids) == sorted(list(range(628)) * 2)
assert len(set(ids[:529].tolist())) == 529  # no second-epoch item before output 529
assert sorted(ids[:628]) != list(range(628))  # the epochs mix at the boundary
near_ids = np.concatenate(near)
assert (near_ids < 100).any() and (near_ids >= 528).any()  # both epochs near the boundary

# plt.plot(shuffle_repeat, ...); plt.plot(repeat_shuffle, ...); plt.ylabel; plt.legend

# ---------------------------------------------------------------------------------------
# Preprocessing data: decoding image data and resizing it
list_ds = data.Dataset.list_files(str(flowers_root/'*/*'))


# Reads an image from a file, decodes it into a dense tensor, and resizes it
# to a fixed shape.
def parse_image(filename):
  # GAP 8 (by design): parts = tf.strings.split(filename, os.sep)
  parts = str(filename).split(os.sep)
  label = parts[-2]

  # GAP 8 (by design): image = tf.io.read_file(filename)
  image = pathlib.Path(filename).read_bytes()
  # GAP 11: image = tf.io.decode_jpeg(image)   (AttributeError: no em.io)
  image = nn.utils.img_to_array(nn.utils.load_img(io.BytesIO(image)), dtype=np.uint8)
  image = em.image.convert_image_dtype(image, em.float32)
  image = em.image.resize(image, [128, 128])
  return image, label


assert not hasattr(em, 'io')

file_path = next(iter(list_ds))
image, label = parse_image(file_path)


def show(image, label):  # upstream plots the image with its label as the title
  assert image.shape == (128, 128, 3) and image.dtype == em.float32
  assert label in FLOWER_CLASSES
  return image.numpy()


pixels = show(image, label)
assert label == pathlib.Path(file_path).parent.name
decoded = np.asarray(Image.open(file_path).convert('RGB'), np.float32) / 255
assert np.abs(decoded * 255 - FLOWER_PIXELS[str(file_path)]).mean() < 4  # JPEG's small loss
np.testing.assert_allclose(pixels, resize_bilinear(decoded, 128, 128), atol=2e-6)

images_ds = list_ds.map(parse_image)

for image, label in images_ds.take(2):
  show(image, label)

# Applying arbitrary Python logic
# scipy is not installed here: np.rot90 by a random quarter turn stands in for
# ndimage.rotate(image, np.random.uniform(-30, 30), reshape=False)


@em.py_function(Tout=em.float32)
def random_rotate_image(image):
  image = np.rot90(image.numpy(), np.random.randint(0, 4))
  return em.convert_to_tensor(np.ascontiguousarray(image), dtype=em.float32)


image, label = next(iter(images_ds))
before = image.numpy()
image = random_rotate_image(image)
show(image, label)
assert any(np.array_equal(image.numpy(), np.rot90(before, k)) for k in range(4))


def tf_random_rotate_image(image, label):
  im_shape = image.shape
  image = random_rotate_image(image)
  image.set_shape(im_shape)
  return image, label


rot_ds = images_ds.map(tf_random_rotate_image)

for image, label in rot_ds.take(2):
  show(image, label)

# Parsing tf.Example protocol buffer messages
fsns_test_file = get_file("fsns.tfrec", "https://storage.googleapis.com/download.tensorflow.org/data/fsns-20160927/testdata/fsns-00000-of-00001")
dataset = data.TFRecordDataset(filenames = [fsns_test_file])
dataset

raw_example = next(iter(dataset))
# GAP 7: parsed = tf.train.Example.FromString(raw_example.numpy())
parsed = example_from_string(raw_example)

feature = parsed.features.feature
raw_img = feature['image/encoded'].bytes_list.value[0]
# GAP 11: img = tf.image.decode_png(raw_img)
img = nn.utils.img_to_array(nn.utils.load_img(io.BytesIO(raw_img)), dtype=np.uint8)
# plt.imshow(img); plt.axis('off'); _ = plt.title(feature["image/text"].bytes_list.value[0])
assert img.shape == (150, 600, 3) and raw_img == FSNS_PNGS[0]
assert feature["image/text"].bytes_list.value[0] == b'Rue Perreyon'

raw_example = next(iter(dataset))


def tf_parse(eg):
  # GAP 7: example = tf.io.parse_example(
  #     eg[tf.newaxis], {
  #         'image/encoded': tf.io.FixedLenFeature(shape=(), dtype=tf.string),
  #         'image/text': tf.io.FixedLenFeature(shape=(), dtype=tf.string)
  #     })
  # return example['image/encoded'][0], example['image/text'][0]
  feature = example_from_string(eg).features.feature
  return feature['image/encoded'].bytes_list.value[0], feature['image/text'].bytes_list.value[0]


img, txt = tf_parse(raw_example)
print(txt)
print(repr(img[:20]), "...")
assert txt == b'Rue Perreyon' and img[:8] == b'\x89PNG\r\n\x1a\n' and img == FSNS_PNGS[0]

decoded = dataset.map(tf_parse)
decoded

image_batch, text_batch = next(iter(decoded.batch(10)))
image_batch.shape
assert image_batch.shape == (10,) and text_batch.shape == (10,)
assert list(text_batch) == FSNS_TEXTS[:10] and list(image_batch) == FSNS_PNGS[:10]

# ---------------------------------------------------------------------------------------
# Time series windowing
range_ds = data.Dataset.range(100000)

# Using batch
batches = range_ds.batch(10, drop_remainder=True)

got = []
for batch in batches.take(5):
  print(batch)
  got.append(ints(batch))
assert got == [list(range(10 * k, 10 * k + 10)) for k in range(5)]


def dense_1_step(batch):
  # Shift features and labels one step relative to each other.
  return batch[:-1], batch[1:]


predict_dense_1_step = batches.map(dense_1_step)

got = []
for features, label in predict_dense_1_step.take(3):
  print(features, " => ", label)
  got.append((ints(features), ints(label)))
assert got == [(list(range(10 * k, 10 * k + 9)), list(range(10 * k + 1, 10 * k + 10)))
               for k in range(3)]

batches = range_ds.batch(15, drop_remainder=True)


def label_next_5_steps(batch):
  return (batch[:-5],   # Inputs: All except the last 5 steps
          batch[-5:])   # Labels: The last 5 steps


predict_5_steps = batches.map(label_next_5_steps)

got = []
for features, label in predict_5_steps.take(3):
  print(features, " => ", label)
  got.append((ints(features), ints(label)))
assert got == [(list(range(15 * k, 15 * k + 10)), list(range(15 * k + 10, 15 * k + 15)))
               for k in range(3)]

feature_length = 10
label_length = 3

features = range_ds.batch(feature_length, drop_remainder=True)
labels = range_ds.batch(feature_length).skip(1).map(lambda labels: labels[:label_length])

predicted_steps = data.Dataset.zip((features, labels))

got = []
for features, label in predicted_steps.take(5):
  print(features, " => ", label)
  got.append((ints(features), ints(label)))
assert got == [(list(range(10 * k, 10 * k + 10)), list(range(10 * k + 10, 10 * k + 13)))
               for k in range(5)]

# Using window
window_size = 5

windows = range_ds.window(window_size, shift=1)
got = []
for sub_ds in windows.take(5):
  print(sub_ds)
  assert isinstance(sub_ds, data.Dataset) and sub_ds.element_spec == data.TensorSpec((), np.int64)
  got.append(ints(list(sub_ds)))
assert got == [list(range(k, k + 5)) for k in range(5)]

got = []
for x in windows.flat_map(lambda x: x).take(30):
  print(x, end=' ')
  got.append(int(x))
print()
assert got == [k + j for k in range(6) for j in range(5)]  # 0 1 2 3 4 1 2 3 4 5 2 ...


def sub_to_batch(sub):
  return sub.batch(window_size, drop_remainder=True)


got = []
for example in windows.flat_map(sub_to_batch).take(5):
  print(example)
  got.append(ints(example))
assert got == [list(range(k, k + 5)) for k in range(5)]


def make_window_dataset(ds, window_size=5, shift=1, stride=1):
  windows = ds.window(window_size, shift=shift, stride=stride)

  def sub_to_batch(sub):
    return sub.batch(window_size, drop_remainder=True)

  windows = windows.flat_map(sub_to_batch)
  return windows


ds = make_window_dataset(range_ds, window_size=10, shift = 5, stride=3)

got = []
for example in ds.take(10):
  print(example)
  got.append(ints(example))
assert got == [list(range(5 * k, 5 * k + 28, 3)) for k in range(10)]  # [0 3 ... 27] ...
# (GAP 13, fixed: ember's window(size, shift, stride) took every stride-th of `size`
# consecutive inputs, so these windows held [0 3 6 9] and the loop printed nothing; as in
# TF, a window now holds `size` inputs `stride` apart.)
assert ([ints(list(w)) for w in data.Dataset.range(7).window(3, 1, 2)]
        == [[0, 2, 4], [1, 3, 5], [2, 4, 6], [3, 5], [4, 6], [5], [6]])

dense_labels_ds = ds.map(dense_1_step)

got = []
for inputs,labels in dense_labels_ds.take(3):
  print(inputs, "=>", labels)
  got.append((ints(inputs), ints(labels)))
assert got == [(list(range(5 * k, 5 * k + 25, 3)), list(range(5 * k + 3, 5 * k + 28, 3)))
               for k in range(3)]

# ---------------------------------------------------------------------------------------
# Resampling
zip_path = get_file(
    origin='https://storage.googleapis.com/download.tensorflow.org/data/creditcard.zip',
    fname='creditcard.zip',
    extract=True)

csv_path = zip_path.replace('.zip', '.csv')

creditcard_ds = data.experimental.make_csv_dataset(
    csv_path, batch_size=1024, label_name="Class",
    # Set the column types: 30 floats and an int.
    column_defaults=[float()]*30+[int()])  # noqa: UP018
first_features, first_labels = next(iter(creditcard_ds))
assert first_labels.shape == (1024,) and len(first_features) == 30
# (GAP 2, fixed: ember typed the columns of float() and int() float64 and int64; TF's are
# float32 and int32.)
assert first_features['V1'].dtype == np.float32 and first_labels.dtype == np.int32


def count(counts, batch):  # upstream reuses the name
  features, labels = batch
  class_1 = labels == 1
  class_1 = em.cast(class_1, em.int32)

  class_0 = labels == 0
  class_0 = em.cast(class_0, em.int32)

  counts['class_0'] += em.reduce_sum(class_0)
  counts['class_1'] += em.reduce_sum(class_1)

  return counts


counts = creditcard_ds.take(10).reduce(
    initial_state={'class_0': 0, 'class_1': 0},
    reduce_func = count)

# GAP 1 (by design): counts = np.array([counts['class_0'].numpy(),
#                                       counts['class_1'].numpy()]).astype(np.float32)
counts = np.array([counts['class_0'],
                   counts['class_1']]).astype(np.float32)

fractions = counts/counts.sum()
print(fractions)
# 10 batches of 1024 are 10 whole passes over the 1024 rows (shuffled, then repeated)
np.testing.assert_array_equal(counts, [10 * 1004, 10 * 20])
np.testing.assert_allclose(fractions, [1004 / 1024, 20 / 1024], rtol=1e-6)

negative_ds = (
  creditcard_ds
    .unbatch()
    .filter(lambda features, label: label==0)
    .repeat())
positive_ds = (
  creditcard_ds
    .unbatch()
    .filter(lambda features, label: label==1)
    .repeat())

for features, label in positive_ds.batch(10).take(1):  # noqa: B007
  print(label)
assert label.tolist() == [1] * 10 and features['V1'].shape == (10,)
assert set(features['Time'].astype(int).tolist()) <= CREDIT_POSITIVE  # rows of class 1


balanced_ds = data.Dataset.sample_from_datasets(
    [negative_ds, positive_ds], [0.5, 0.5]).batch(10)

got = []
for features, labels in balanced_ds.take(10):
  print(labels)
  got.extend(labels.tolist())
  # each label is its row's: Time is the row number, and the class-1 rows are known
  assert [int(t) in CREDIT_POSITIVE for t in features['Time']] == [bool(v) for v in labels]
assert len(got) == 100 and 30 <= sum(got) <= 70  # 50/50 within 4 standard deviations


def class_func(features, label):
  return label


# GAP 15: resample_ds = (creditcard_ds.unbatch()
#     .rejection_resample(class_func, target_dist=[0.5,0.5], initial_dist=fractions)
#     .batch(10))   (AttributeError: no Dataset.rejection_resample); a generator stands in,
# keeping each example of class c with probability proportional to target[c] / initial[c]:
def rejection_resample(ds, class_func, target_dist, initial_dist, seed=0):
  ratio = np.asarray(target_dist) / np.asarray(initial_dist)
  accept = ratio / ratio.max()

  def generate():
    rng = np.random.default_rng(seed)
    for element in ds:
      c = int(class_func(*element))
      if rng.random() < accept[c]:
        yield c, element
  return data.Dataset.from_generator(generate)


assert not hasattr(data.Dataset, 'rejection_resample')
resample_ds = (
    creditcard_ds
    .unbatch()
    .apply(lambda ds: rejection_resample(ds, class_func, target_dist=[0.5,0.5],
                                         initial_dist=fractions))
    .batch(10))

balanced_ds = resample_ds.map(lambda extra_label, features_and_label: features_and_label)

got = []
for features, labels in balanced_ds.take(10):
  print(labels)
  got.extend(labels.tolist())
  assert [int(t) in CREDIT_POSITIVE for t in features['Time']] == [bool(v) for v in labels]
assert len(got) == 100 and 30 <= sum(got) <= 70

# ---------------------------------------------------------------------------------------
# Iterator checkpointing
range_ds = data.Dataset.range(20)

iterator = iter(range_ds)
ckpt = checkpoint.Checkpoint(step=em.Variable(0), iterator=iterator)
manager = checkpoint.CheckpointManager(ckpt, str(TMP / 'my_ckpt'), max_to_keep=3)

got = [[next(iterator) for _ in range(5)]]
print(got[-1])

save_path = manager.save()

got.append([next(iterator) for _ in range(5)])
print(got[-1])

ckpt.restore(manager.latest_checkpoint)

got.append([next(iterator) for _ in range(5)])
print(got[-1])
assert got == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [5, 6, 7, 8, 9]]
assert save_path == manager.latest_checkpoint

# the same through a shuffle, a map and a batch
shuffled_ds = data.Dataset.range(100).shuffle(30).map(lambda x: x * 2).batch(7)
iterator = iter(shuffled_ds)
ckpt = checkpoint.Checkpoint(iterator=iterator)
[next(iterator) for _ in range(3)]
save_path = ckpt.save(str(TMP / 'shuffled' / 'ckpt'))
rest = [ints(b) for b in iterator]
ckpt.restore(save_path)
assert [ints(b) for b in iterator] == rest and len(rest) == 12
assert sorted(sum(rest, [])) != list(range(0, 200, 2))  # a part of the epoch

# ---------------------------------------------------------------------------------------
# Using tf.data with tf.keras
# tf.keras.datasets.fashion_mnist.load_data() -> MNIST, read above
n_train = 60000 if FULL else 1200 if SHORT else 6000
train = (train[0][:n_train], train[1][:n_train])

images, labels = train
images = images/255.0
labels = labels.astype(np.int32)

fmnist_train_ds = data.Dataset.from_tensor_slices((images, labels))
fmnist_train_ds = fmnist_train_ds.shuffle(5000).batch(32)

model = nn.Sequential([
  nn.layers.Flatten(),
  nn.layers.Dense(10)
])

model.compile(optimizer='adam',
              loss=nn.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=['accuracy'])

history = model.fit(fmnist_train_ds, epochs=2)
assert len(history.history['loss']) == 2
assert history.history['loss'][1] < history.history['loss'][0]

history = model.fit(fmnist_train_ds.repeat(), epochs=2, steps_per_epoch=20)
assert len(history.history['loss']) == 2

loss, accuracy = model.evaluate(fmnist_train_ds)
print("Loss :", loss)
print("Accuracy :", accuracy)
if not SHORT:
  assert accuracy > 0.85, accuracy

loss, accuracy = model.evaluate(fmnist_train_ds.repeat(), steps=10)
print("Loss :", loss)
print("Accuracy :", accuracy)
assert 0 <= accuracy <= 1 and loss > 0

predict_ds = data.Dataset.from_tensor_slices(images).batch(32)
result = model.predict(predict_ds, steps = 10)
print(result.shape)
assert result.shape == (320, 10)
np.testing.assert_allclose(result, model.predict(images[:320].astype(np.float32)),
                           rtol=1e-4, atol=1e-5)

result = model.predict(fmnist_train_ds, steps = 10)
print(result.shape)
assert result.shape == (320, 10)
