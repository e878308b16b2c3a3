"""Port of tensorflow/docs site/en/tutorials/generative/autoencoder.ipynb ("Intro to
Autoencoders"): a subclassed Model of two Sequentials (Flatten, Dense relu to a 64-d latent,
Dense sigmoid, Reshape) trained on images with MSE; a convolutional denoiser (strided Conv2D
encoder, Conv2DTranspose decoder) trained on tf.random.normal-noised, clipped images; and an
anomaly detector (Dense 32-16-8-16-32-140) trained with MAE on the normal rhythms of ECG5000,
its threshold one standard deviation above the mean training reconstruction error.

Upstream: https://github.com/tensorflow/docs/blob/9efadf0a84eae76e347787e344626650ea4ed85b/site/en/tutorials/generative/autoencoder.ipynb
(the notebook's last change, "Fix notebook failure with Keras 3"; unchanged at master
7c3650212740204359d4ceae481abc79345541be)
Changed: names only (tensorflow.keras.layers/losses/models.Model -> ember.nn.layers/losses/
Model, tf.keras.Sequential -> nn.Sequential, tf.math.reduce_prod/tf.reduce_min/reduce_max/
cast/float32/newaxis/clip_by_value/random.normal/math.less -> em.*), except where a GAP says
otherwise. Nothing can be downloaded: MNIST digits stand in for Fashion-MNIST (a local
fashion_mnist.load_data() reads them with ember.data.datasets.mnist(data_dir=...) in its
layout: uint8 (n, 28, 28) images, uint8 labels), and ecg.csv is a file this program writes
in the layout of the tutorial's: 4,998 rows of 140 z-normalized samples and a label (1.0
normal, 0.0 abnormal), 2,919 normal as in ECG5000; a normal beat is a deep dip at the start,
a slow rise and a T wave, each jittered, plus drift and noise; the abnormal ones are, a third
each, a wide late dip, an inverted T wave, an extra beat late in the window. pandas and
scikit-learn are not installed: read_csv (header=None: float64 columns, .values, .head()),
train_test_split (ShuffleSplit's RandomState(random_state).permutation, the first
ceil(0.2 n) rows for the test set) and accuracy/precision/recall_score stand in below. The
plots (matplotlib) are dropped. Reduced (EMBER_PROGRAMS_FULL=1 restores upstream's
60,000/10,000 images and 10 epochs in both image examples): the basic autoencoder on 6,000
training and 1,000 test digits for upstream's 10 epochs; the denoiser on 2,000 and 500, 3
epochs; the ECG example is not reduced (4,998 rows, 20 epochs of batch 512).
EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 512/128 and 256/128 digits, 1 epoch each, 3
ECG epochs, no thresholds.
Added: seeds for numpy and ember; the data's shapes; the basic autoencoder's parameter
count (101,200), its encoder and decoder outputs, predict() and the last val_loss against a
numpy forward pass from get_weights(); the noise is 0.2 N(0, 1) clipped (where a digit's
pixel is 0, half the noisy pixels stay 0 and their mean is 0.2 / sqrt(2 pi)); the
denoiser's summaries (1,320 and 1,897 parameters, 28x28 -> 7x7 -> 28x28), its output and its
MSE gradients on 64 images against the same model in PyTorch from get_weights() (TF's "same"
padding, the transposed kernel (h, w, out, in) unflipped), its last val_loss against numpy;
the CSV read back, the split's sizes (3,998/1,000) and rows against RandomState(21), min_val/
max_val against numpy, the boolean-mask rows against numpy's, the detector's parameter count
(10,484), its last val_loss and evaluate() against numpy's MAE over all 1,000 test rows
(Keras weighs the partial batch of 488 by its size), the per-row MAE, threshold and
predictions against numpy. Thresholds (CPU run): the basic autoencoder's test MSE below
0.35 of what predicting the mean training image gives (0.065; untrained ~0.23; it reaches
0.010); the ECG val_loss falls below 0.3 of its first epoch's, and the test accuracy passes
0.85 and the untrained model's (the same threshold rule on an untrained AnomalyDetector
gives ~0.48 accuracy, ~0.53 precision) by 0.3, with precision above 0.95 (it reaches 0.91 and
1.0). The denoiser's test MSE must fall below 0.6 of the untrained model's (0.23) and 1.05
of the all-black image's (0.1025), a bound that both of its outcomes on MNIST pass: on digits
(81% black pixels) this denoiser often falls, in its first epoch, into a plateau where its
sigmoid is saturated near 0 and its MSE is the all-black image's (9 of 11 ember seeds at
these sizes; the same model in PyTorch with Keras's Glorot init and Adam, 8 of 8 draws, up
to 5,600 steps), so it is MNIST's, not ember's: the model's output and gradients agree with
PyTorch's above. This run's draw leaves the plateau (0.028 after 3 epochs; the noisy inputs
have 0.021).
Fixed in ember since the first version of this port, upstream's lines restored: 1. (loud,
and the nearest name silent) there was no nn.losses.mae (tf.keras.losses.mae: Keras's
per-example mean(|y_true - y_pred|, axis=-1)), and nn.losses.mean_absolute_error was TF 1's
reduced absolute_difference: one scalar where Keras gives one value per row (the threshold
here would have been that scalar, std 0). Both are Keras's per-example functions now.
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
"""

import os
import pathlib
import tempfile
import types
import unittest

import numpy as np
import torch
import torch.nn.functional as F

import ember.core as em
from ember import data, nn, tape
from ember.nn import Model, layers, losses

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
  raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
np.random.seed(0)
em.random.set_seed(0)
workdir = tempfile.TemporaryDirectory()

N_TRAIN = 60000 if FULL else 512 if SHORT else 6000
N_TEST = 10000 if FULL else 128 if SHORT else 1000
N_TRAIN_CONV = 60000 if FULL else 256 if SHORT else 2000
N_TEST_CONV = 10000 if FULL else 128 if SHORT else 500
EPOCHS_DENSE = 1 if SHORT else 10
EPOCHS_CONV = 10 if FULL else 1 if SHORT else 3
EPOCHS_ECG = 3 if SHORT else 20


class fashion_mnist:  # (added) MNIST digits in fashion_mnist.load_data()'s layout
  n_train, n_test = N_TRAIN, N_TEST

  @classmethod
  def load_data(cls):
    def split(name, n):
      x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
      return ((np.asarray(x).reshape(-1, 28, 28) * 255).round().astype(np.uint8),
              np.asarray(y).astype(np.uint8))
    return split("train", cls.n_train), split("test", cls.n_test)


# ---------------------------------------------------------------------------------------
# The stand-in for the ECG5000 download (ecg.csv): 4,998 rows of 140 z-normalized samples
# and a label (1.0 normal, 0.0 abnormal), 2,919 of them normal, as the tutorial's file.
ECG_ROWS, ECG_NORMAL = 4998, 2919
_rng = np.random.default_rng(0)
_t = np.arange(140.0)


def _bumps(n, center, width, amp):
  c = center + _rng.normal(0, 1.5, (n, 1))
  a = amp * _rng.normal(1, 0.1, (n, 1))
  return a * np.exp(-0.5 * ((_t - c) / width) ** 2)


def _beats(n, kind):
  """Normal beats (kind 0): a deep Q/S dip near the start, a slow rise, a T wave; abnormal
  ones: a wide late dip (1), an inverted T wave (2), or an extra beat late in the window (3)."""
  if kind == 1:
    x = _bumps(n, 30, 8, -3.0) + _bumps(n, 60, 10, 1.5) + _bumps(n, 110, 20, 0.5)
  else:
    x = (_bumps(n, 5, 2.5, -4.0) + _bumps(n, 12, 3, 0.8) + _bumps(n, 75, 22, 1.0)
         + _bumps(n, 118, 9, -0.9 if kind == 2 else 0.9))
  if kind == 3:
    x = x + _bumps(n, 95, 3, -3.5)
  x = x + _rng.normal(0, 0.003, (n, 1)) * (_t - 70) + _rng.normal(0, 0.08, x.shape)
  return (x - x.mean(1, keepdims=True)) / x.std(1, keepdims=True)


_ecg = np.concatenate([  # one row a beat: 140 samples and the label; a third each abnormal kind
    np.concatenate([_beats(n, kind), np.full((n, 1), float(kind == 0))], axis=1)
    for kind, n in enumerate([ECG_NORMAL] + [(ECG_ROWS - ECG_NORMAL) // 3] * 3)])
_ecg = _ecg[_rng.permutation(ECG_ROWS)]
ECG_CSV = os.path.join(workdir.name, "ecg.csv")
with open(ECG_CSV, "w") as f:
  for row in _ecg:
    f.write(",".join(f"{v:.8f}" for v in row[:-1]) + f",{row[-1]:.1f}\n")
DOWNLOADS = {"http://storage.googleapis.com/download.tensorflow.org/data/ecg.csv": ECG_CSV}


# ---------------------------------------------------------------------------------------
# Stand-ins for pandas and scikit-learn (not installed here): what the tutorial asks of them.
class DataFrame:
  """Numbered float64 columns, as pd.read_csv(header=None) reads this file."""

  def __init__(self, values):
    self.values = values

  def head(self, n=5):
    return DataFrame(self.values[:n])

  def __repr__(self):
    cols = list(range(3)) + ["..."] + list(range(self.values.shape[1] - 2, self.values.shape[1]))
    rows = ["     " + "".join(f"{c!s:>11}" for c in cols)]
    for i, r in enumerate(self.values):
      cells = [f"{v:11.6f}" for v in r[:3]] + [f"{'...':>11}"] + [f"{v:11.6f}" for v in r[-2:]]
      rows.append(f"{i:<5}" + "".join(cells))
    return "\n".join(rows) + f"\n\n[{len(self.values)} rows x {self.values.shape[1]} columns]"


def read_csv(filepath_or_buffer, header):
  assert header is None
  return DataFrame(np.loadtxt(DOWNLOADS[filepath_or_buffer], delimiter=",", dtype=np.float64))


pd = types.SimpleNamespace(read_csv=read_csv)


def train_test_split(*arrays, test_size, random_state):
  """sklearn's: ShuffleSplit's permutation by RandomState(random_state), the first
  ceil(test_size * n) rows for the test set, the next n - that for training."""
  n = len(arrays[0])
  n_test = int(np.ceil(test_size * n))
  permutation = np.random.RandomState(random_state).permutation(n)
  test, train = permutation[:n_test], permutation[n_test:]
  return [part for a in arrays for part in (a[train], a[test])]


def accuracy_score(y_true, y_pred):
  return float(np.mean(np.asarray(y_true) == np.asarray(y_pred)))


def precision_score(y_true, y_pred):
  y_true, y_pred = np.asarray(y_true).astype(bool), np.asarray(y_pred).astype(bool)
  return float(np.sum(y_true & y_pred) / np.sum(y_pred))


def recall_score(y_true, y_pred):
  y_true, y_pred = np.asarray(y_true).astype(bool), np.asarray(y_pred).astype(bool)
  return float(np.sum(y_true & y_pred) / np.sum(y_true))


# =======================================================================================
# Load the dataset
(x_train, _), (x_test, _) = fashion_mnist.load_data()

x_train = x_train.astype('float32') / 255.
x_test = x_test.astype('float32') / 255.

print (x_train.shape)
print (x_test.shape)
assert x_train.shape == (N_TRAIN, 28, 28) and x_test.shape == (N_TEST, 28, 28)  # (added)


# First example: Basic autoencoder
class Autoencoder(Model):
  def __init__(self, latent_dim, shape):
    super(Autoencoder, self).__init__()  # noqa: UP008 (upstream spelling)
    self.latent_dim = latent_dim
    self.shape = shape
    self.encoder = nn.Sequential([
      layers.Flatten(),
      layers.Dense(latent_dim, activation='relu'),
    ])
    self.decoder = nn.Sequential([
      layers.Dense(em.reduce_prod(shape).numpy(), activation='sigmoid'),
      layers.Reshape(shape)
    ])

  def call(self, x):
    encoded = self.encoder(x)
    decoded = self.decoder(encoded)
    return decoded


shape = x_test.shape[1:]
latent_dim = 64
autoencoder = Autoencoder(latent_dim, shape)

autoencoder.compile(optimizer='adam', loss=losses.MeanSquaredError())

# (added) `history =`, and the print after it: what fit reports is checked below
history = autoencoder.fit(x_train, x_train,
                epochs=EPOCHS_DENSE,
                shuffle=True,
                validation_data=(x_test, x_test))
print(history.history)

encoded_imgs = autoencoder.encoder(x_test).numpy()
decoded_imgs = autoencoder.decoder(encoded_imgs).numpy()
# (plots of x_test[i] and decoded_imgs[i] dropped)

# (added) the checks of the first example
assert autoencoder.count_params() == 784 * 64 + 64 + 64 * 784 + 784 == 101200
assert encoded_imgs.shape == (N_TEST, 64) and decoded_imgs.shape == (N_TEST, 28, 28)
assert encoded_imgs.dtype == decoded_imgs.dtype == np.float32
k1, b1, k2, b2 = autoencoder.get_weights()
np_encoded = np.maximum(x_test.reshape(-1, 784) @ k1 + b1, 0)  # Flatten, Dense relu
np_decoded = (1 / (1 + np.exp(-(np_encoded @ k2 + b2)))).reshape(-1, 28, 28)  # sigmoid, Reshape
np.testing.assert_allclose(encoded_imgs, np_encoded, rtol=1e-4, atol=1e-5)
np.testing.assert_allclose(decoded_imgs, np_decoded, rtol=1e-4, atol=1e-6)
np.testing.assert_allclose(autoencoder.predict(x_test, verbose=0), np_decoded, rtol=1e-4, atol=1e-6)
assert list(history.history) == ['loss', 'val_loss'] and len(history.history['loss']) == EPOCHS_DENSE
np.testing.assert_allclose(history.history['val_loss'][-1], np.mean((np_decoded - x_test) ** 2),
                           rtol=1e-4)
mean_image_mse = float(np.mean((x_train.mean(0) - x_test) ** 2))
print('test MSE: trained', history.history['val_loss'][-1], 'mean training image', mean_image_mse)
assert SHORT or history.history['val_loss'][-1] < 0.35 * mean_image_mse, history.history

# Second example: Image denoising
fashion_mnist.n_train, fashion_mnist.n_test = N_TRAIN_CONV, N_TEST_CONV  # (added) the reduction
(x_train, _), (x_test, _) = fashion_mnist.load_data()

x_train = x_train.astype('float32') / 255.
x_test = x_test.astype('float32') / 255.

x_train = x_train[..., em.newaxis]
x_test = x_test[..., em.newaxis]

print(x_train.shape)

noise_factor = 0.2
x_train_noisy = x_train + noise_factor * em.random.normal(shape=x_train.shape)
x_test_noisy = x_test + noise_factor * em.random.normal(shape=x_test.shape)

x_train_noisy = em.clip_by_value(x_train_noisy, clip_value_min=0., clip_value_max=1.)
x_test_noisy = em.clip_by_value(x_test_noisy, clip_value_min=0., clip_value_max=1.)

# (plot of tf.squeeze(x_test_noisy[i]) dropped)
# (added) shapes, and the noise is 0.2 N(0, 1) clipped: where a pixel is 0, half the noisy
# pixels stay 0 and their mean is 0.2 E[max(0, z)] = 0.2 / sqrt(2 pi) = 0.0798
assert x_train.shape == (N_TRAIN_CONV, 28, 28, 1) and x_test.shape == (N_TEST_CONV, 28, 28, 1)
assert isinstance(x_train_noisy, em.Tensor) and x_train_noisy.dtype == em.float32
assert tuple(x_train_noisy.shape) == x_train.shape and tuple(em.squeeze(x_test_noisy[0]).shape) == (28, 28)
_noisy, _black = x_train_noisy.numpy(), x_train == 0
assert _noisy.min() == 0.0 and _noisy.max() == 1.0
assert abs(np.mean(_noisy[_black] == 0) - 0.5) < 0.01, np.mean(_noisy[_black] == 0)
assert abs(np.mean(_noisy[_black]) - 0.2 / np.sqrt(2 * np.pi)) < 0.002, np.mean(_noisy[_black])


class Denoise(Model):
  def __init__(self):
    super(Denoise, self).__init__()  # noqa: UP008 (upstream spelling)
    self.encoder = nn.Sequential([
      layers.Input(shape=(28, 28, 1)),
      layers.Conv2D(16, (3, 3), activation='relu', padding='same', strides=2),
      layers.Conv2D(8, (3, 3), activation='relu', padding='same', strides=2)])

    self.decoder = nn.Sequential([
      layers.Conv2DTranspose(8, kernel_size=3, strides=2, activation='relu', padding='same'),
      layers.Conv2DTranspose(16, kernel_size=3, strides=2, activation='relu', padding='same'),
      layers.Conv2D(1, kernel_size=(3, 3), activation='sigmoid', padding='same')])

  def call(self, x):
    encoded = self.encoder(x)
    decoded = self.decoder(encoded)
    return decoded

autoencoder = Denoise()

autoencoder.compile(optimizer='adam', loss=losses.MeanSquaredError())
untrained_mse = autoencoder.evaluate(x_test_noisy, x_test, verbose=0)  # (added)

# (added) `history =`, and the print after it: what fit reports is checked below
history = autoencoder.fit(x_train_noisy, x_train,
                epochs=EPOCHS_CONV,
                shuffle=True,
                validation_data=(x_test_noisy, x_test))
print(history.history)

autoencoder.encoder.summary()

autoencoder.decoder.summary()

encoded_imgs = autoencoder.encoder(x_test_noisy).numpy()
decoded_imgs = autoencoder.decoder(encoded_imgs).numpy()
# (plots of tf.squeeze(x_test_noisy[i]) and tf.squeeze(decoded_imgs[i]) dropped)


# (added) the checks of the second example: the summaries' shapes and counts, then the model
# against PyTorch from its weights (TF's "same" padding: for stride 2 on an even size the
# one padded row and column go after; Conv2DTranspose's kernel is (h, w, out, in), not
# flipped, its "same" output the first 2n of the 2n + 1 of a full transposed convolution)
def torch_denoise(weights, x):
  k1, b1, k2, b2, k3, b3, k4, b4, k5, b5 = (torch.tensor(w, dtype=torch.float64, requires_grad=True)
                                            for w in weights)
  w = lambda k: k.permute(3, 2, 0, 1).contiguous()  # noqa: E731 (added)
  h = torch.tensor(np.asarray(x), dtype=torch.float64).permute(0, 3, 1, 2)
  h = torch.relu(F.conv2d(F.pad(h, (0, 1, 0, 1)), w(k1), b1, stride=2))
  h = torch.relu(F.conv2d(F.pad(h, (0, 1, 0, 1)), w(k2), b2, stride=2))
  h = torch.relu(F.conv_transpose2d(h, w(k3), stride=2)[:, :, :-1, :-1] + b3[:, None, None])
  h = torch.relu(F.conv_transpose2d(h, w(k4), stride=2)[:, :, :-1, :-1] + b4[:, None, None])
  h = torch.sigmoid(F.conv2d(F.pad(h, (1, 1, 1, 1)), w(k5), b5))
  return h.permute(0, 2, 3, 1), [k1, b1, k2, b2, k3, b3, k4, b4, k5, b5]


assert autoencoder.encoder.count_params() == 160 + 1160 == 1320
assert autoencoder.decoder.count_params() == 584 + 1168 + 145 == 1897
assert autoencoder.encoder.output_shape == (None, 7, 7, 8)
assert [layer.output.shape for layer in autoencoder.decoder.layers] == [
    (None, 14, 14, 8), (None, 28, 28, 16), (None, 28, 28, 1)]
assert encoded_imgs.shape == (N_TEST_CONV, 7, 7, 8) and decoded_imgs.shape == x_test.shape
torch_decoded, _ = torch_denoise(autoencoder.get_weights(), x_test_noisy[:500])
np.testing.assert_allclose(decoded_imgs[:500], torch_decoded.detach().numpy(), atol=2e-6)
with tape.GradientTape() as g:
  batch_loss = losses.MeanSquaredError()(x_train[:64], autoencoder(x_train_noisy[:64]))
torch_out, torch_weights = torch_denoise(autoencoder.get_weights(), x_train_noisy[:64])
torch_loss = torch.mean((torch_out - torch.tensor(x_train[:64], dtype=torch.float64)) ** 2)
np.testing.assert_allclose(float(batch_loss), torch_loss.item(), rtol=1e-5)
for grad, torch_grad, v in zip(g.gradient(batch_loss, autoencoder.trainable_variables),
                               torch.autograd.grad(torch_loss, torch_weights),
                               autoencoder.trainable_variables):
  np.testing.assert_allclose(grad.numpy(), torch_grad.numpy(), rtol=1e-3,
                             atol=1e-4 * float(torch_grad.abs().max()) + 1e-9, err_msg=v.name)
np.testing.assert_allclose(history.history['val_loss'][-1], np.mean((decoded_imgs - x_test) ** 2),
                           rtol=1e-4)
noisy_mse = float(np.mean((x_test_noisy.numpy() - x_test) ** 2))
black_mse = float(np.mean(x_test ** 2))
print('test MSE: untrained', untrained_mse, 'denoised', history.history['val_loss'][-1],
      'noisy input', noisy_mse, 'all-black image', black_mse)
assert SHORT or history.history['val_loss'][-1] < min(0.6 * untrained_mse, 1.05 * black_mse)


# Third example: Anomaly detection
# Download the dataset
dataframe = pd.read_csv('http://storage.googleapis.com/download.tensorflow.org/data/ecg.csv', header=None)
raw_data = dataframe.values
print(dataframe.head())  # (upstream shows it as the cell's output)

# The last element contains the labels
labels = raw_data[:, -1]

# The other data points are the electrocadriogram data
data = raw_data[:, 0:-1]  # noqa: F811 (upstream's name; ember.data is not used below)

train_data, test_data, train_labels, test_labels = train_test_split(
    data, labels, test_size=0.2, random_state=21
)

min_val = em.reduce_min(train_data)
max_val = em.reduce_max(train_data)

train_data = (train_data - min_val) / (max_val - min_val)
test_data = (test_data - min_val) / (max_val - min_val)

train_data = em.cast(train_data, em.float32)
test_data = em.cast(test_data, em.float32)

train_labels = train_labels.astype(bool)
test_labels = test_labels.astype(bool)

normal_train_data = train_data[train_labels]
normal_test_data = test_data[test_labels]

anomalous_train_data = train_data[~train_labels]
anomalous_test_data = test_data[~test_labels]

# (plots of normal_train_data[0] and anomalous_train_data[0] dropped)


class AnomalyDetector(Model):
  def __init__(self):
    super(AnomalyDetector, self).__init__()  # noqa: UP008 (upstream spelling)
    self.encoder = nn.Sequential([
      layers.Dense(32, activation="relu"),
      layers.Dense(16, activation="relu"),
      layers.Dense(8, activation="relu")])

    self.decoder = nn.Sequential([
      layers.Dense(16, activation="relu"),
      layers.Dense(32, activation="relu"),
      layers.Dense(140, activation="sigmoid")])

  def call(self, x):
    encoded = self.encoder(x)
    decoded = self.decoder(encoded)
    return decoded

autoencoder = AnomalyDetector()

autoencoder.compile(optimizer='adam', loss='mae')

history = autoencoder.fit(normal_train_data, normal_train_data,
          epochs=EPOCHS_ECG,
          batch_size=512,
          validation_data=(test_data, test_data),
          shuffle=True)
print(history.history)  # (added; upstream plots it)

encoded_data = autoencoder.encoder(normal_test_data).numpy()
decoded_data = autoencoder.decoder(encoded_data).numpy()

encoded_data = autoencoder.encoder(anomalous_test_data).numpy()
decoded_data = autoencoder.decoder(encoded_data).numpy()

reconstructions = autoencoder.predict(normal_train_data)
train_loss = nn.losses.mae(reconstructions, normal_train_data)

threshold = np.mean(train_loss) + np.std(train_loss)
print("Threshold: ", threshold)

reconstructions = autoencoder.predict(anomalous_test_data)
test_loss = nn.losses.mae(reconstructions, anomalous_test_data)


def predict(model, data, threshold):
  reconstructions = model(data)
  loss = nn.losses.mae(reconstructions, data)
  return em.less(loss, threshold)

def print_stats(predictions, labels):
  print("Accuracy = {}".format(accuracy_score(labels, predictions)))  # noqa: UP032 (upstream's)
  print("Precision = {}".format(precision_score(labels, predictions)))  # noqa: UP032 (upstream's)
  print("Recall = {}".format(recall_score(labels, predictions)))  # noqa: UP032 (upstream's)

preds = predict(autoencoder, test_data, threshold)
print_stats(preds, test_labels)

# (added) the checks of the third example
np.testing.assert_allclose(raw_data, _ecg, atol=6e-9)  # the file, read back
assert raw_data.shape == (4998, 141) and raw_data.dtype == np.float64
assert train_data.shape == (3998, 140) and test_data.shape == (1000, 140)  # 1000 = ceil(0.2 n)
assert train_data.dtype == test_data.dtype == em.float32
assert float(em.reduce_min(train_data)) == 0.0 and float(em.reduce_max(train_data)) == 1.0
_perm = np.random.RandomState(21).permutation(ECG_ROWS)
np_train, np_test = raw_data[_perm[1000:], :-1], raw_data[_perm[:1000], :-1]
np.testing.assert_array_equal(float(min_val), np_train.min())
np.testing.assert_array_equal(float(max_val), np_train.max())
_lo, _hi = np_train.min(), np_train.max()
np.testing.assert_allclose(test_data.numpy(), ((np_test - _lo) / (_hi - _lo)).astype(np.float32))
np.testing.assert_array_equal(normal_train_data.numpy(), train_data.numpy()[train_labels])
np.testing.assert_array_equal(anomalous_test_data.numpy(), test_data.numpy()[~test_labels])
assert len(normal_train_data) + len(normal_test_data) == ECG_NORMAL
assert autoencoder.count_params() == (140 * 32 + 32 + 32 * 16 + 16 + 16 * 8 + 8 + 8 * 16 + 16
                                      + 16 * 32 + 32 + 32 * 140 + 140) == 10484
assert list(history.history) == ['loss', 'val_loss'] and len(history.history['loss']) == EPOCHS_ECG
np_reconstructions = autoencoder.predict(test_data, verbose=0)
np_loss = np.mean(np.abs(np_reconstructions - test_data.numpy()), axis=-1)
np.testing.assert_allclose(history.history['val_loss'][-1], np_loss.mean(), rtol=1e-5)
np.testing.assert_allclose(autoencoder.evaluate(test_data, test_data, verbose=0), np_loss.mean(),
                           rtol=1e-5)
assert tuple(train_loss.shape) == (len(normal_train_data),) and tuple(train_loss[None, :].shape) == (
    1, len(normal_train_data))
np_train_loss = np.mean(np.abs(autoencoder.predict(normal_train_data, verbose=0)
                               - normal_train_data.numpy()), axis=-1)
np.testing.assert_allclose(train_loss.numpy(), np_train_loss, rtol=1e-5, atol=1e-7)
np.testing.assert_allclose(threshold, np_train_loss.mean() + np_train_loss.std(), rtol=1e-5)
assert preds.dtype == em.bool and tuple(preds.shape) == (1000,)
_clear = np.abs(np_loss - threshold) > 1e-6  # rows not within rounding of the threshold
np.testing.assert_array_equal(preds.numpy()[_clear], (np_loss < threshold)[_clear])
np.testing.assert_allclose(test_loss.numpy(), np_loss[~test_labels], rtol=1e-5, atol=1e-7)
accuracy = accuracy_score(test_labels, preds)
assert accuracy == np.mean(preds.numpy() == test_labels)


def untrained_stats():  # the same threshold rule on an untrained AnomalyDetector
  model = AnomalyDetector()
  loss = lambda x: np.mean(np.abs(model.predict(x, verbose=0) - np.asarray(x)), -1)  # noqa: E731
  untrained_threshold = np.mean(loss(normal_train_data)) + np.std(loss(normal_train_data))
  p = loss(test_data) < untrained_threshold
  return accuracy_score(test_labels, p), precision_score(test_labels, p), recall_score(test_labels, p)


untrained = untrained_stats()
print('untrained: accuracy, precision, recall', untrained)
assert SHORT or history.history['val_loss'][-1] < 0.3 * history.history['val_loss'][0], history.history
assert SHORT or accuracy > max(0.85, untrained[0] + 0.3), (accuracy, untrained)
assert SHORT or precision_score(test_labels, preds) > 0.95
