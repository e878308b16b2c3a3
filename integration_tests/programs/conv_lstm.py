"""Port of keras-team/keras-io examples/vision/conv_lstm.py ("Next-Frame Video Prediction
with Convolutional LSTMs": Moving MNIST read through keras.utils.get_file and np.load,
frames and sequences swapped, a channel axis added, a 90/10 shuffled split scaled to [0, 1],
inputs frames 0..18 and targets frames 1..19; a functional model of three ConvLSTM2D
layers (5x5, 3x3, 1x1, relu, return_sequences) with BatchNormalization between them and a
sigmoid Conv3D(3x3x3) over the sequence, compiled with binary_crossentropy and Adam, fit
with validation_data, EarlyStopping and ReduceLROnPlateau; then ten frames predicted one
after another from the first ten of a validation sequence, and five validation sequences
whose frames 11..20 are each predicted from the true frames before them, written as GIFs).

Upstream: https://github.com/keras-team/keras-io/blob/b8bb4c0d5068d64290003740c2ef9e703eefa751/examples/vision/conv_lstm.py
Changed: names only (tensorflow.keras / tensorflow.keras.layers -> ember.nn /
ember.nn.layers), except where a GAP says otherwise. Moving MNIST (mnist_test_seq.npy)
cannot be downloaded here: this program renders its own from the real MNIST training
digits ($EMBER_DATA) with Srivastava et al.'s generator (two digits per sequence, each
starting at a random place and heading in a random direction, 0.1 of the free range a
frame, bouncing off the edges, overlaid with a maximum) in the file's layout, uint8 of shape
(frames, sequences, height, width) (the file: (20, 10000, 64, 64)), and saves it as
$KERAS_HOME/datasets/moving_mnist.npy ($KERAS_HOME a temporary directory), where
upstream's keras.utils.get_file finds it and does not download. The figures (matplotlib)
are left out, what they would show is asserted; imageio is not installed, so a stand-in
mimsave writes the GIFs with PIL; the IPython/ipywidgets display is left out.
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream: 1,000 sequences of 64x64 frames, which
are all the 1,000 upstream's dataset[:1000] keeps, 64 filters a ConvLSTM2D, 20 epochs,
five GIF sequences): 160 sequences of 32x32 frames whose digits are MNIST's halved to 14x14
(means of 2x2 pixels), 8 filters, 3 epochs, two GIF sequences; EMBER_PROGRAMS_SHORT=1 (the
strict-GPU run): 12 sequences, 4 filters, 1 epoch, one GIF sequence and no thresholds.
Upstream's batch_size 5, callbacks and 20-frame sequences are kept.
Added: seeds for numpy and ember; the rendered file's layout and that every frame is the
maximum of its two pasted digits; the shapes and dtypes upstream prints, the split
(disjoint, complete) and that y is x shifted by one frame; the model's shapes and Keras's
parameter counts (a ConvLSTM2D has k*k*(channels + filters)*4*filters + 4*filters);
Keras's initial ConvLSTM2D weights (glorot_uniform kernels within their limit, the
recurrent kernel orthogonal as a (k*k*filters, 4*filters) matrix, the bias zero but ones
for the forget gate: unit_forget_bias) and BatchNormalization's moving statistics still
at 0 and 1 once the model is built; BatchNormalization on the 5-D ConvLSTM output
(training=True: statistics over batch, time, height and width, the moving statistics
updated with momentum 0.99) against numpy; the whole trained model's predict() against a
numpy forward pass written from Keras's ConvLSTMCell equations (and its float32 result
for upstream's float64 inputs); evaluate() against numpy's binary cross-entropy of those
predictions; the history (loss, val_loss and ReduceLROnPlateau's learning_rate, one an
epoch; the rate as the plateau rule gives it); the frame predictions' shapes and range, the
last of each loop against numpy's forward pass, and the GIFs (at most ten frames, as
Pillow merges equal ones; a truth GIF's first frame read back). Thresholds (CPU run): the
last epoch's training loss is below 0.8 times that of the best constant prediction, the
mean pixel of the training targets (0.19 on this data; an untrained model scores 0.69, and
a model must use the frames to beat the constant: it reaches 0.12), and val_loss falls
from the first epoch to the last. val_loss itself is not held to the constant: after 87
steps the BatchNormalization moving statistics (momentum 0.99, started at mean 0 and
variance 1) still hold 0.99**87 = 42% of their initial values, in Keras as here, so the
inference-mode losses (0.60, 0.51, 0.44) are far above the training ones (0.33, 0.15,
0.12); upstream's 180 steps an epoch for 20 epochs do not have this.
Found: nothing is left (no `# GAP n:` comment remains).
Fixed in ember since the first version of this port: GAP 1, there was no
layers.ConvLSTM2D (AttributeError; nor ConvLSTM1D/3D), so a Layer in this file ran Keras's
ConvLSTMCell equations over the time axis; upstream's three layers.ConvLSTM2D lines run now
(Keras 3's layers, their weights and numbers checked against Keras in ember's tests, and
against numpy below). GAP 2, there was no layers.Conv3D
(AttributeError) and no 3-D convolution at all (no em.nn_ops.conv3d; nn.ops.conv refused
rank-5 inputs), so a stand-in ran one conv2d over three time-shifted frames stacked on the
channel axis; upstream's layers.Conv3D line runs now (its output checked against numpy below).
Everything else upstream calls (get_file's cache, Input with a None time axis, the
functional Model, BatchNormalization on 5-D inputs, binary_crossentropy from the sigmoid's
logits, Adam, fit with validation_data, EarlyStopping, ReduceLROnPlateau, predict on
float64 arrays of any length) runs as upstream's lines and gives Keras's numbers. Outside
this program, the loss and every gradient of this model (training-mode BatchNormalization,
the first version's stand-ins) were checked against PyTorch in float64
(torch.nn.functional.conv2d/conv3d, binary_cross_entropy_with_logits): within 5e-5 relative.
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
"""

import io
import os
import pathlib
import tempfile
import types
import unittest

import numpy as np
from PIL import Image as PILImage  # (added: the imageio stand-in)

import ember.core as em
from ember import data, nn
from ember.nn import layers

keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
np.random.seed(0)
em.random.set_seed(0)
_tmp = tempfile.TemporaryDirectory()
os.environ["KERAS_HOME"] = _tmp.name  # get_file's cache: where the rendered file is put

SEQUENCES = 1000 if FULL else 12 if SHORT else 160
SIZE = 64 if FULL else 32  # the frames' height and width; the digits are 28 or 14 pixels
FILTERS = 64 if FULL else 4 if SHORT else 8
N_GIFS = 5 if FULL else 1 if SHORT else 2

# ---------------------------------------------------------------------------------------
# The stand-in for mnist_test_seq.npy (see the header): Srivastava et al.'s Moving MNIST
# generator run on the real MNIST digits.
_x, _ = next(iter(data.datasets.mnist("train", data_dir=DATA_DIR).take(2 * SEQUENCES)
                  .batch(2 * SEQUENCES)))
_digits = (np.asarray(_x) * 255.0).round().reshape(-1, 28, 28)
if SIZE == 32:  # halved: each pixel the mean of a 2x2 block
    _digits = _digits.reshape(-1, 14, 2, 14, 2).mean(axis=(2, 4)).round()
_digits = _digits.astype(np.uint8)


def _trajectory(rng, frames, free):
    """Top-left corners (frames, 2) of a digit moving 0.1 of the free range a frame."""
    pos = rng.random(2)
    theta = rng.random() * 2 * np.pi
    vel = np.array([np.sin(theta), np.cos(theta)])
    out = np.zeros((frames, 2), np.int64)
    for t in range(frames):
        pos = pos + 0.1 * vel
        for k in range(2):  # bounce off the edges
            if pos[k] <= 0:
                pos[k], vel[k] = 0.0, -vel[k]
            if pos[k] >= 1:
                pos[k], vel[k] = 1.0, -vel[k]
        out[t] = (free * pos).astype(np.int64)
    return out


def _moving_mnist(n, frames=20, size=SIZE, per_sequence=2, rng=None):
    d = _digits.shape[-1]
    seqs = np.zeros((frames, n, size, size), np.uint8)
    pasted = []  # (added) what went where, checked below
    for i in range(n):
        for j in range(per_sequence):
            digit = _digits[per_sequence * i + j]
            corners = _trajectory(rng, frames, size - d)
            pasted.append((i, digit, corners))
            for t, (y, x) in enumerate(corners):
                np.maximum(seqs[t, i, y:y + d, x:x + d], digit, out=seqs[t, i, y:y + d, x:x + d])
    return seqs, pasted


_rendered, _pasted = _moving_mnist(SEQUENCES, rng=np.random.default_rng(0))
os.makedirs(os.path.join(_tmp.name, "datasets"))
np.save(os.path.join(_tmp.name, "datasets", "moving_mnist.npy"), _rendered)

# (added) the file's layout, and every frame is the maximum of its two digits
assert _rendered.shape == (20, SEQUENCES, SIZE, SIZE) and _rendered.dtype == np.uint8
for _i in range(min(SEQUENCES, 8)):
    for _t in (0, 7, 19):
        _canvas = np.zeros((SIZE, SIZE), np.uint8)
        for _k, _digit, _corners in _pasted[2 * _i:2 * _i + 2]:
            _y, _x = _corners[_t]
            _d = _digit.shape[0]
            _canvas[_y:_y + _d, _x:_x + _d] = np.maximum(_canvas[_y:_y + _d, _x:_x + _d], _digit)
        assert (_rendered[_t, _i] == _canvas).all(), (_i, _t)
assert np.diff(np.stack([c for _, _, c in _pasted]), axis=1).std() > 0  # the digits move

"""
## Dataset Construction
"""

# Download and load the dataset.
fpath = keras.utils.get_file(
    "moving_mnist.npy",
    "http://www.cs.toronto.edu/~nitish/unsupervised_video/mnist_test_seq.npy",
)
dataset = np.load(fpath)
assert fpath == os.path.join(_tmp.name, "datasets", "moving_mnist.npy"), fpath  # (added)

# Swap the axes representing the number of frames and number of data samples.
dataset = np.swapaxes(dataset, 0, 1)
# We'll pick out 1000 of the 10000 total examples and use those.
dataset = dataset[:1000, ...]
# Add a channel dimension since the images are grayscale.
dataset = np.expand_dims(dataset, axis=-1)

# Split into train and validation sets using indexing to optimize memory.
indexes = np.arange(dataset.shape[0])
np.random.shuffle(indexes)
train_index = indexes[: int(0.9 * dataset.shape[0])]
val_index = indexes[int(0.9 * dataset.shape[0]) :]
train_dataset = dataset[train_index]
val_dataset = dataset[val_index]

# Normalize the data to the 0-1 range.
train_dataset = train_dataset / 255
val_dataset = val_dataset / 255

# We'll define a helper function to shift the frames, where
# `x` is frames 0 to n - 1, and `y` is frames 1 to n.
def create_shifted_frames(data):
    x = data[:, 0 : data.shape[1] - 1, :, :]
    y = data[:, 1 : data.shape[1], :, :]
    return x, y


# Apply the processing function to the datasets.
x_train, y_train = create_shifted_frames(train_dataset)
x_val, y_val = create_shifted_frames(val_dataset)

# Inspect the dataset.
print("Training Dataset Shapes: " + str(x_train.shape) + ", " + str(y_train.shape))
print("Validation Dataset Shapes: " + str(x_val.shape) + ", " + str(y_val.shape))

# (added) the shapes printed, the split, the scaling and the shift
n_train, n_val = int(0.9 * SEQUENCES), SEQUENCES - int(0.9 * SEQUENCES)
assert x_train.shape == y_train.shape == (n_train, 19, SIZE, SIZE, 1), x_train.shape
assert x_val.shape == y_val.shape == (n_val, 19, SIZE, SIZE, 1), x_val.shape
assert sorted(np.concatenate([train_index, val_index]).tolist()) == list(range(SEQUENCES))
assert x_train.dtype == np.float64 and 0.0 <= x_train.min() and x_train.max() <= 1.0
np.testing.assert_array_equal(val_dataset[:, 3, ..., 0], _rendered[3, val_index] / 255)
np.testing.assert_array_equal(y_train[:, :-1], x_train[:, 1:])

"""
## Data Visualization
"""

# Construct a figure on which we will visualize the images.
# (left out: fig, axes = plt.subplots(4, 5, figsize=(10, 8)))

# Plot each of the sequential images for one random data example.
data_choice = np.random.choice(range(len(train_dataset)), size=1)[0]
shown = []  # (added) what the figure would show, in place of matplotlib's calls
for idx in range(20):  # (for idx, ax in enumerate(axes.flat):)
    shown.append(np.squeeze(train_dataset[data_choice][idx]))  # (ax.imshow(..., cmap="gray"))
    # (ax.set_title(f"Frame {idx + 1}"); ax.axis("off"))

# Print information and display the figure.
print(f"Displaying frames for example {data_choice}.")
# (left out: plt.show())
assert len(shown) == 20 and shown[0].shape == (SIZE, SIZE)  # (added)

"""
## Model Construction
"""

# Construct the input layer with no definite frame size.
inp = layers.Input(shape=(None, *x_train.shape[2:]))

# We will construct 3 `ConvLSTM2D` layers with batch normalization,
# followed by a `Conv3D` layer for the spatiotemporal outputs.
x = layers.ConvLSTM2D(
    filters=FILTERS,
    kernel_size=(5, 5),
    padding="same",
    return_sequences=True,
    activation="relu",
)(inp)
x = layers.BatchNormalization()(x)
x = layers.ConvLSTM2D(
    filters=FILTERS,
    kernel_size=(3, 3),
    padding="same",
    return_sequences=True,
    activation="relu",
)(x)
x = layers.BatchNormalization()(x)
x = layers.ConvLSTM2D(
    filters=FILTERS,
    kernel_size=(1, 1),
    padding="same",
    return_sequences=True,
    activation="relu",
)(x)
x = layers.Conv3D(
    filters=1, kernel_size=(3, 3, 3), activation="sigmoid", padding="same"
)(x)

# Next, we will build the complete model and compile it.
model = keras.models.Model(inp, x)
model.compile(
    loss=keras.losses.binary_crossentropy,
    optimizer=keras.optimizers.Adam(),
)

# (added) Keras's shapes and parameter counts, and its initial ConvLSTM2D weights
F = FILTERS
assert model.output_shape == (None, None, SIZE, SIZE, 1), model.output_shape
lstm1, bn1, lstm2, bn2, lstm3, conv3d = model.layers[1:]
assert [lstm.count_params() for lstm in (lstm1, lstm2, lstm3)] == [
    k * k * (cin + F) * 4 * F + 4 * F for k, cin in ((5, 1), (3, F), (1, F))]
assert bn1.count_params() == 4 * F and conv3d.count_params() == 27 * F + 1
assert model.count_params() == sum(layer.count_params() for layer in model.layers)
assert len(model.trainable_weights) == 3 * 3 + 2 * 2 + 2
for bn in (bn1, bn2):  # building the model (a None time axis) left the statistics alone
    np.testing.assert_array_equal(bn.get_weights()[2:], [np.zeros(F), np.ones(F)])
for lstm, k, cin in ((lstm1, 5, 1), (lstm2, 3, F), (lstm3, 1, F)):
    kernel, recurrent, bias = lstm.get_weights()
    limit = np.sqrt(6.0 / (k * k * cin + k * k * 4 * F))  # glorot_uniform
    assert np.abs(kernel).max() <= limit and np.abs(kernel).max() > 0.9 * limit
    r = recurrent.reshape(-1, 4 * F)
    gram = r.T @ r if r.shape[0] >= r.shape[1] else r @ r.T
    np.testing.assert_allclose(gram, np.eye(len(gram)), atol=1e-5)  # orthogonal
    np.testing.assert_array_equal(bias, np.repeat([0.0, 1.0, 0.0, 0.0], F))

"""
## Model Training
"""

# Define some callbacks to improve training.
early_stopping = keras.callbacks.EarlyStopping(monitor="val_loss", patience=10)
reduce_lr = keras.callbacks.ReduceLROnPlateau(monitor="val_loss", patience=5)

# Define modifiable training hyperparameters.
epochs = 20 if FULL else 1 if SHORT else 3
batch_size = 5

# Fit the model to the training data.
history = model.fit(  # (added: history =)
    x_train,
    y_train,
    batch_size=batch_size,
    epochs=epochs,
    validation_data=(x_val, y_val),
    callbacks=[early_stopping, reduce_lr],
    verbose=2,  # (added: one line an epoch)
)


# ---------------------------------------------------------------------------------------
# (added) the checks: numpy's forward pass, from Keras's ConvLSTMCell equations
def np_conv2d(x, k):  # "same", stride 1, odd kernels: x (n, h, w, c), k (kh, kw, c, o)
    kh, kw = k.shape[:2]
    xp = np.pad(x, ((0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)))
    h, w = x.shape[1:3]
    return sum(xp[:, i:i + h, j:j + w] @ k[i, j] for i in range(kh) for j in range(kw))


def np_sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def np_conv_lstm(xs, kernel, recurrent, bias):  # xs (n, t, h, w, c); relu activation
    k_i, k_f, k_c, k_o = np.split(kernel, 4, axis=-1)
    r_i, r_f, r_c, r_o = np.split(recurrent, 4, axis=-1)
    b_i, b_f, b_c, b_o = np.split(bias, 4)
    h = c = np.zeros(xs.shape[:1] + xs.shape[2:4] + (recurrent.shape[2],))
    out = []
    for x in np.moveaxis(xs, 1, 0):
        i = np_sigmoid(np_conv2d(x, k_i) + b_i + np_conv2d(h, r_i))
        f = np_sigmoid(np_conv2d(x, k_f) + b_f + np_conv2d(h, r_f))
        c = f * c + i * np.maximum(np_conv2d(x, k_c) + b_c + np_conv2d(h, r_c), 0)
        o = np_sigmoid(np_conv2d(x, k_o) + b_o + np_conv2d(h, r_o))
        h = o * np.maximum(c, 0)
        out.append(h)
    return np.stack(out, axis=1)


def np_batch_norm(x, gamma, beta, mean, var):
    return gamma * (x - mean) / np.sqrt(var + 1e-3) + beta


def np_conv3d(x, kernel, bias):  # "same" in time and space, sigmoid
    xp = np.pad(x, ((0, 0), (1, 1), (0, 0), (0, 0), (0, 0)))
    n, t = x.shape[:2]
    z = np.zeros(x.shape[:4] + (kernel.shape[-1],))
    for s in range(t):
        for d in range(3):
            z[:, s] += np_conv2d(xp[:, s + d], kernel[d])
    return np_sigmoid(z + bias)


def np_model(xs):
    w = [layer.get_weights() for layer in model.layers[1:]]
    z = np_batch_norm(np_conv_lstm(xs, *w[0]), *w[1])
    z = np_batch_norm(np_conv_lstm(z, *w[2]), *w[3])
    return np_conv3d(np_conv_lstm(z, *w[4]), *w[5])


def np_bce(y, p):  # Keras's: the probabilities clipped to [1e-7, 1 - 1e-7]
    p = np.clip(p, 1e-7, 1 - 1e-7)
    return -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean()


# (added) the history: Keras's keys, one value an epoch, the rate the plateau rule gives
hist = history.history
print({k: [round(v, 4) for v in vals] for k, vals in hist.items()})
assert sorted(hist) == ["learning_rate", "loss", "val_loss"], sorted(hist)
assert len(hist["loss"]) == len(hist["val_loss"]) == len(hist["learning_rate"]) == epochs
best, wait, lr = np.inf, 0, 1e-3
for epoch_val_loss, epoch_lr in zip(hist["val_loss"], hist["learning_rate"]):
    np.testing.assert_allclose(epoch_lr, lr, rtol=1e-6)
    if epoch_val_loss < best - 1e-4:
        best, wait = epoch_val_loss, 0
    else:
        wait += 1
        if wait >= 5:
            lr, wait = lr * 0.1, 0
np.testing.assert_allclose(float(model.optimizer.learning_rate.numpy()), lr, rtol=1e-6)

# (added) predict() is numpy's forward pass of the trained weights, in float32; evaluate()
# is numpy's binary cross-entropy of those predictions
val_pred = model.predict(x_val)
assert val_pred.shape == y_val.shape and val_pred.dtype == np.float32, val_pred.dtype
np_val_pred = np_model(x_val[:2])
np.testing.assert_allclose(val_pred[:2], np_val_pred, rtol=2e-4, atol=2e-5)
np.testing.assert_allclose(model.evaluate(x_val, y_val, verbose=0), np_bce(y_val, val_pred),
                           rtol=1e-4)
np.testing.assert_allclose(hist["val_loss"][-1], np_bce(y_val, val_pred), rtol=1e-4)

# (added) BatchNormalization on the 5-D ConvLSTM output, training=True: the batch's
# statistics over (batch, time, height, width) and the moving ones updated by momentum 0.99
feats = lstm1(em.constant(x_val[:2], dtype=em.float32)).numpy()
gamma, beta, mean0, var0 = bn1.get_weights()
normed = bn1(em.constant(feats), training=True).numpy()
mu, var = feats.mean(axis=(0, 1, 2, 3)), feats.var(axis=(0, 1, 2, 3))
np.testing.assert_allclose(normed, np_batch_norm(feats, gamma, beta, mu, var), rtol=1e-3,
                           atol=1e-4)
np.testing.assert_allclose(bn1.get_weights()[2], 0.99 * mean0 + 0.01 * mu, rtol=1e-5,
                           atol=1e-7)
np.testing.assert_allclose(bn1.get_weights()[3], 0.99 * var0 + 0.01 * var, rtol=1e-5,
                           atol=1e-7)
bn1.set_weights([gamma, beta, mean0, var0])  # as it was

# (added) thresholds: the training loss well below the best constant prediction's, and the
# validation loss falls (see the header)
constant = np_bce(y_train, np.full_like(y_train, y_train.mean()))
print(f"constant prediction: {constant:.4f}, untrained: {np.log(2):.4f}")
assert SHORT or hist["loss"][-1] < 0.8 * constant, (hist["loss"], constant)
assert SHORT or hist["val_loss"][-1] < hist["val_loss"][0], hist["val_loss"]

"""
## Frame Prediction Visualizations
"""

# Select a random example from the validation dataset.
example = val_dataset[np.random.choice(range(len(val_dataset)), size=1)[0]]

# Pick the first/last ten frames from the example.
frames = example[:10, ...]
original_frames = example[10:, ...]

# Predict a new set of 10 frames.
for _ in range(10):
    # Extract the model's prediction and post-process it.
    new_prediction = model.predict(np.expand_dims(frames, axis=0))
    new_prediction = np.squeeze(new_prediction, axis=0)
    predicted_frame = np.expand_dims(new_prediction[-1, ...], axis=0)

    # Extend the set of prediction frames.
    frames = np.concatenate((frames, predicted_frame), axis=0)

# (added) each prediction was one frame more, in (0, 1); the last agrees with numpy's
assert frames.shape == (20, SIZE, SIZE, 1) and new_prediction.shape == (19, SIZE, SIZE, 1)
assert 0.0 < frames[10:].min() and frames[10:].max() < 1.0
np.testing.assert_allclose(frames[19], np_model(frames[None, :19])[0, -1], rtol=2e-4, atol=2e-5)

# Construct a figure for the original and new frames.
# (left out: fig, axes = plt.subplots(2, 10, figsize=(20, 4)))

# Plot the original frames.
# (left out: ax.imshow(np.squeeze(original_frames[idx]), cmap="gray") for each of axes[0],
#  titled f"Frame {idx + 11}")

# Plot the new frames.
new_frames = frames[10:, ...]
# (left out: ax.imshow(np.squeeze(new_frames[idx]), cmap="gray") for each of axes[1],
#  titled f"Frame {idx + 11}")

# Display the figure.
# (left out: plt.show())
assert original_frames.shape == new_frames.shape == (10, SIZE, SIZE, 1)  # (added)

"""
## Predicted Videos
"""

# (added) imageio is not installed: the one call the example makes, with PIL
imageio = types.SimpleNamespace(mimsave=lambda f, ims, fmt, fps: PILImage.fromarray(ims[0]).save(
    f, format=fmt, save_all=True, append_images=[PILImage.fromarray(im) for im in ims[1:]],
    duration=1000 // fps, loop=0))

# Select a few random examples from the dataset.
examples = val_dataset[np.random.choice(range(len(val_dataset)), size=N_GIFS)]  # (size=5)

# Iterate over the examples and predict the frames.
predicted_videos = []
for example in examples:
    # Pick the first/last ten frames from the example.
    frames = example[:10, ...]
    original_frames = example[10:, ...]
    new_predictions = np.zeros(shape=(10, *frames[0].shape))

    # Predict a new set of 10 frames.
    for i in range(10):
        # Extract the model's prediction and post-process it.
        frames = example[: 10 + i + 1, ...]
        new_prediction = model.predict(np.expand_dims(frames, axis=0))
        new_prediction = np.squeeze(new_prediction, axis=0)
        predicted_frame = np.expand_dims(new_prediction[-1, ...], axis=0)

        # Extend the set of prediction frames.
        new_predictions[i] = predicted_frame

    # Create and save GIFs for each of the ground truth/prediction images.
    for frame_set in [original_frames, new_predictions]:
        # Construct a GIF from the selected video frames.
        current_frames = np.squeeze(frame_set)
        current_frames = current_frames[..., np.newaxis] * np.ones(3)
        current_frames = (current_frames * 255).astype(np.uint8)
        current_frames = list(current_frames)

        # Construct a GIF from the frames.
        with io.BytesIO() as gif:
            imageio.mimsave(gif, current_frames, "GIF", fps=5)
            predicted_videos.append(gif.getvalue())

# (added) the last sequence's predictions: each from the true frames before it; the GIFs
# hold ten 32x32 (64x64) RGB frames, the truth's first frame as written
assert new_predictions.shape == (10, SIZE, SIZE, 1) and frames.shape == (20, SIZE, SIZE, 1)
assert 0.0 < new_predictions.min() and new_predictions.max() < 1.0
np.testing.assert_allclose(new_predictions[9], np_model(example[None, :20])[0, -1], rtol=2e-4,
                           atol=2e-5)
assert len(predicted_videos) == 2 * N_GIFS
for video in predicted_videos:
    gif = PILImage.open(io.BytesIO(video))
    assert video[:6] == b"GIF89a" and gif.size == (SIZE, SIZE) and gif.n_frames <= 10
_first = np.asarray(PILImage.open(io.BytesIO(predicted_videos[-2])).convert("L"))
np.testing.assert_array_equal(_first, (examples[-1][10, ..., 0] * 255).astype(np.uint8))

# Display the videos.
print(" Truth\tPrediction")
# (left out: an HBox of widgets.Image(value=predicted_videos[i]) and
#  widgets.Image(value=predicted_videos[i + 1]) displayed for each i in range(0, len, 2))
