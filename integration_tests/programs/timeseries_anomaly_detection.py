"""Port of keras-team/keras-io examples/timeseries/timeseries_anomaly_detection.py
("Timeseries anomaly detection using an Autoencoder": two NAB CSVs read with pandas, the
training series normalized with its own mean and std, TIME_STEPS = 288 sliding windows, a
Sequential convolutional autoencoder (Conv1D strides 2, Dropout, Conv1D, Conv1DTranspose,
Dropout, Conv1DTranspose, Conv1DTranspose), fit on x_train -> x_train with
validation_split=0.1 and EarlyStopping, the maximum training MAE as the threshold, the test
windows above it as anomalies, and the data points all of whose windows are anomalies).

Upstream: https://github.com/keras-team/keras-io/blob/35480756038c16ea129e392380d638e1181f4c28/examples/timeseries/timeseries_anomaly_detection.py
(the Keras 3 version, `import keras` / `from keras import layers`, as its rendered
examples/timeseries/md/timeseries_anomaly_detection.md at that commit shows; the last
tf.keras version, 3aca0563e5cebb3e442bee3f7c30adc53cfe3102, differs only in its imports and
line breaks)
Changed: names only (keras -> ember.nn, keras.layers -> ember.nn.layers), except where the
example cannot run here. Nothing can be downloaded, so the two NAB files are CSVs this
program writes in NAB's layout (a `timestamp,value` header, "2014-04-01 00:00:00" onwards
in 5-minute steps, 288 a day, 14 days = 4,032 rows): art_daily_small_noise.csv, a daily
pattern (20 at night, a ramp from 07:00 to 08:00 up to 80, a plateau to 17:00, a ramp down
to 18:00) plus uniform noise of +-2, and art_daily_jumpsup.csv, the same pattern with other
noise and, on day 11 (0-based day 10) from 09:00 to 18:00 (rows 2,988 to 3,095; the NAB
file's jump shows in upstream's output as anomalous windows 2,702 to 3,094), the values
raised by 85. pandas is not installed here: a DataFrame stand-in below (a timestamp index
and float64 columns; read_csv of these files by their URL's name, head, mean, std with
pandas's ddof=1, arithmetic with those statistics, len, .values, .iloc) does what the
example asks of pandas. The plots (matplotlib) are left out.
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream's 50 epochs): 8 epochs on upstream's 14
days; EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 5 days (the jump on day 1), 2 epochs,
no thresholds.
Added: seeds for numpy and ember; the CSVs read back whole, 288 rows a day from
2014-04-01 00:00:00; the normalized training values have mean 0 and std 1 (ddof=1); every
window equals numpy's sliding_window_view; the layers' output shapes and parameter counts
that Keras prints (9,505 in all); the history holds Keras's keys, one entry an epoch, and
EarlyStopping(patience=5) stopped exactly when Keras's rule says (else ran every epoch);
the last val_loss equals evaluate() on the last 10% of the windows (validation_split keeps
floor(0.9 n) for training, as Keras), and evaluate()'s MSE is numpy's MSE of predict();
predict() equals a numpy forward pass from get_weights() (Conv1D and Conv1DTranspose with
TF's "same" padding: total k - s = 5 for stride 2, 2 of it before; Conv1DTranspose's
kernel (k, filters, in), not flipped; Dropout the identity); the threshold is the maximum
of the per-window MAE computed in numpy. Thresholds (CPU run): the final val_loss below
0.1 (the series is normalized, so predicting 0 or any constant gives an MSE near 1; the
untrained model gives about 1.0; upstream reaches 0.05 after 2 epochs, this run about
0.02); the trained threshold below 0.25 of the untrained model's; every test window that
holds at least half of the jump is an anomaly, at most 1% of the windows that do not touch
it are; and upstream's anomalous data indices are not empty and all lie in the jump.
(An untrained model flags the jump's windows too, since their mean |x| is larger; the
thresholds on training are the val_loss and the threshold's fall.)
Found: no GAP: every upstream line runs as written, and every value checked agrees with
what Keras gives. Outside upstream's lines: model.summary() runs "conv1d_transpose
(Conv1DTranspose)" into the Output Shape column (Keras wraps it). Fixed in ember since the
first version of this port: a Sequential built from an nn.Input defined its layers'
`output` only once model.output_shape, inputs, outputs or get_layer had been asked for
(Keras 3 at construction); the added check reads the layers' outputs first now.
"""

import datetime
import os
import tempfile
import types

import numpy as np

import ember.core as em
from ember import nn
from ember.nn import layers

keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
np.random.seed(0)
em.random.set_seed(0)
_tmp = tempfile.TemporaryDirectory()

# ---------------------------------------------------------------------------------------
# The stand-in for upstream's download: NAB's two files, written in NAB's layout.
DAYS = 5 if SHORT else 14
JUMP_DAY = DAYS - 4  # NAB's jump: day 11 of 14 (0-based day 10)
JUMP = (JUMP_DAY * 288 + 9 * 12, JUMP_DAY * 288 + 18 * 12)  # rows 09:00 to 17:55
START = datetime.datetime(2014, 4, 1)


def _daily_pattern(n):
    hours = (np.arange(n) % 288) / 12.0
    on = np.clip(hours - 7.0, 0.0, 1.0) - np.clip(hours - 17.0, 0.0, 1.0)
    return 20.0 + 60.0 * on


def _write_nab_like_csv(path, seed, jump):
    rng = np.random.default_rng(seed)
    n = DAYS * 288
    value = _daily_pattern(n) + rng.uniform(-2.0, 2.0, n)
    if jump:
        value[JUMP[0]:JUMP[1]] += 85.0
    with open(path, "w") as f:
        f.write("timestamp,value\n")
        for i in range(n):
            t = START + datetime.timedelta(minutes=5 * i)
            f.write(f"{t:%Y-%m-%d %H:%M:%S},{float(value[i])!r}\n")
    return value


_written = {
    "art_daily_small_noise.csv": _write_nab_like_csv(
        os.path.join(_tmp.name, "art_daily_small_noise.csv"), 0, jump=False),
    "art_daily_jumpsup.csv": _write_nab_like_csv(
        os.path.join(_tmp.name, "art_daily_jumpsup.csv"), 1, jump=True),
}


# ---------------------------------------------------------------------------------------
# The stand-in for pandas (not installed here): what the example asks of a DataFrame.
class DataFrame:
    """A timestamp index and named float64 columns, as pd.read_csv(parse_dates=True,
    index_col="timestamp") gives these CSVs."""

    def __init__(self, index, columns, index_name="timestamp"):
        self.index, self._columns, self.index_name = index, dict(columns), index_name

    def __len__(self):
        return len(self.index)

    def head(self, n=5):
        return self._rows(slice(0, n))

    def _rows(self, key):
        return DataFrame(self.index[key], {k: v[key] for k, v in self._columns.items()},
                         self.index_name)

    @property
    def iloc(self):
        return _ILoc(self)

    @property
    def values(self):
        return np.stack(list(self._columns.values()), axis=1)

    def mean(self):
        return {k: v.mean() for k, v in self._columns.items()}

    def std(self):
        return {k: v.std(ddof=1) for k, v in self._columns.items()}  # pandas: ddof=1

    def __sub__(self, other):
        return DataFrame(self.index, {k: v - other[k] for k, v in self._columns.items()},
                         self.index_name)

    def __truediv__(self, other):
        return DataFrame(self.index, {k: v / other[k] for k, v in self._columns.items()},
                         self.index_name)

    def __repr__(self):  # pandas's layout
        stamps = [f"{t:%Y-%m-%d %H:%M:%S}" for t in self.index]
        width = max([len(s) for s in stamps] + [len(self.index_name)])
        cells = {k: [f"{x:.6f}" for x in v] for k, v in self._columns.items()}
        cols = {k: max([len(c) for c in v] + [len(k)]) for k, v in cells.items()}
        lines = [" " * width + "".join(f"  {k:>{w}}" for k, w in cols.items()),
                 f"{self.index_name:<{width}}" + "".join(" " * (w + 2) for w in cols.values())]
        for i, s in enumerate(stamps):
            lines.append(f"{s:<{width}}" + "".join(f"  {cells[k][i]:>{w}}"
                                                   for k, w in cols.items()))
        return "\n".join(lines)


class _ILoc:
    def __init__(self, frame):
        self._frame = frame

    def __getitem__(self, key):
        return self._frame._rows(np.asarray(key, dtype=np.int64))


def _read_csv(url, parse_dates=False, index_col=None):
    # the URL's file is the one this program wrote (nothing is downloaded)
    with open(os.path.join(_tmp.name, os.path.basename(url))) as f:
        header, *rows = [line.rstrip("\n").split(",") for line in f]
    cols = {name: [row[i] for row in rows] for i, name in enumerate(header)}
    index = cols.pop(index_col)
    if parse_dates:
        index = [datetime.datetime.strptime(s, "%Y-%m-%d %H:%M:%S") for s in index]
    return DataFrame(np.array(index, dtype=object),
                     {k: np.array(v, dtype=np.float64) for k, v in cols.items()}, index_col)


pd = types.SimpleNamespace(read_csv=_read_csv)


# ---------------------------------------------------------------------------------------
# (added) the model in numpy, from its weights: TF's "same" padding (total
# max((out - 1) * s + k - n, 0), the smaller half first)
def _np_conv1d(x, kernel, bias, strides, relu):
    n, k = x.shape[1], kernel.shape[0]
    out = -(-n // strides)
    total = max((out - 1) * strides + k - n, 0)
    xp = np.pad(x, ((0, 0), (total // 2, total - total // 2), (0, 0)))
    y = sum(xp[:, j:j + strides * (out - 1) + 1:strides] @ kernel[j] for j in range(k)) + bias
    return np.maximum(y, 0) if relu else y


def _np_conv1d_transpose(x, kernel, bias, strides, relu):
    # Keras's kernel is (kernel_size, filters, input channels); input step i adds
    # kernel[j] @ x[i] to the full output's step i * strides + j
    n, k = x.shape[1], kernel.shape[0]
    full = np.zeros((x.shape[0], (n - 1) * strides + k, kernel.shape[1]))
    for j in range(k):
        full[:, j:j + strides * (n - 1) + 1:strides] += x @ kernel[j].T
    total = max((n - 1) * strides + k - n * strides, 0)
    y = full[:, total // 2:total // 2 + n * strides] + bias
    return np.maximum(y, 0) if relu else y


def _np_model(weights, x):
    w = [np.asarray(a, dtype=np.float64) for a in weights]
    x = _np_conv1d(x, w[0], w[1], 2, True)  # Dropout: the identity outside training
    x = _np_conv1d(x, w[2], w[3], 2, True)
    x = _np_conv1d_transpose(x, w[4], w[5], 2, True)
    x = _np_conv1d_transpose(x, w[6], w[7], 2, True)
    return _np_conv1d_transpose(x, w[8], w[9], 1, False)


# ---------------------------------------------------------------------------------------
"""
## Load the data
"""

master_url_root = "https://raw.githubusercontent.com/numenta/NAB/master/data/"

df_small_noise_url_suffix = "artificialNoAnomaly/art_daily_small_noise.csv"
df_small_noise_url = master_url_root + df_small_noise_url_suffix
df_small_noise = pd.read_csv(
    df_small_noise_url, parse_dates=True, index_col="timestamp"
)

df_daily_jumpsup_url_suffix = "artificialWithAnomaly/art_daily_jumpsup.csv"
df_daily_jumpsup_url = master_url_root + df_daily_jumpsup_url_suffix
df_daily_jumpsup = pd.read_csv(
    df_daily_jumpsup_url, parse_dates=True, index_col="timestamp"
)

# (added) the files read back whole: 288 rows a day from 2014-04-01 00:00:00
for df, name in ((df_small_noise, "art_daily_small_noise.csv"),
                 (df_daily_jumpsup, "art_daily_jumpsup.csv")):
    assert len(df) == DAYS * 288 and df.values.shape == (DAYS * 288, 1), df.values.shape
    assert df.values.dtype == np.float64
    np.testing.assert_array_equal(df.values[:, 0], _written[name])
    assert df.index[0] == START and df.index[288] == START + datetime.timedelta(days=1)

"""
## Quick look at the data
"""

print(df_small_noise.head())

print(df_daily_jumpsup.head())

"""
## Visualize the data (the plots are left out)
"""

"""
## Prepare training data
"""


# Normalize and save the mean and std we get,
# for normalizing test data.
training_mean = df_small_noise.mean()
training_std = df_small_noise.std()
df_training_value = (df_small_noise - training_mean) / training_std
print("Number of training samples:", len(df_training_value))

# (added) mean 0 and std 1, as pandas computes them
np.testing.assert_allclose(df_training_value.values.mean(), 0.0, atol=1e-12)
np.testing.assert_allclose(df_training_value.values.std(ddof=1), 1.0, rtol=1e-12)

"""
### Create sequences
"""

TIME_STEPS = 288


# Generated training sequences for use in the model.
def create_sequences(values, time_steps=TIME_STEPS):
    output = []
    for i in range(len(values) - time_steps + 1):
        output.append(values[i : (i + time_steps)])
    return np.stack(output)


x_train = create_sequences(df_training_value.values)
print("Training input shape: ", x_train.shape)

# (added) upstream's (3745, 288, 1), every window numpy's sliding window
assert x_train.shape == (DAYS * 288 - TIME_STEPS + 1, TIME_STEPS, 1), x_train.shape
np.testing.assert_array_equal(
    x_train[:, :, 0],
    np.lib.stride_tricks.sliding_window_view(df_training_value.values[:, 0], TIME_STEPS))

"""
## Build a model
"""

model = keras.Sequential(
    [
        layers.Input(shape=(x_train.shape[1], x_train.shape[2])),
        layers.Conv1D(
            filters=32,
            kernel_size=7,
            padding="same",
            strides=2,
            activation="relu",
        ),
        layers.Dropout(rate=0.2),
        layers.Conv1D(
            filters=16,
            kernel_size=7,
            padding="same",
            strides=2,
            activation="relu",
        ),
        layers.Conv1DTranspose(
            filters=16,
            kernel_size=7,
            padding="same",
            strides=2,
            activation="relu",
        ),
        layers.Dropout(rate=0.2),
        layers.Conv1DTranspose(
            filters=32,
            kernel_size=7,
            padding="same",
            strides=2,
            activation="relu",
        ),
        layers.Conv1DTranspose(filters=1, kernel_size=7, padding="same"),
    ]
)
model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.001), loss="mse")
model.summary()

# (added) what Keras's summary prints: each layer's output shape and parameters
expected = [("conv1d", (None, 144, 32), 256), ("dropout", (None, 144, 32), 0),
            ("conv1d_1", (None, 72, 16), 3600),
            ("conv1d_transpose", (None, 144, 16), 1808), ("dropout_1", (None, 144, 16), 0),
            ("conv1d_transpose_1", (None, 288, 32), 3616),
            ("conv1d_transpose_2", (None, 288, 1), 225)]
got = [(lyr.name, tuple(lyr.output.shape), lyr.count_params()) for lyr in model.layers]
assert got == expected, got
assert model.count_params() == 9505 and model.output_shape == (None, 288, 1)
assert [tuple(w.shape) for w in model.get_weights()] == [
    (7, 1, 32), (32,), (7, 32, 16), (16,), (7, 16, 16), (16,), (7, 32, 16), (32,),
    (7, 1, 32), (1,)], [w.shape for w in model.get_weights()]

# (added) the untrained model, for the thresholds below
untrained_train_mae = np.mean(np.abs(model.predict(x_train, verbose=0) - x_train), axis=1)

"""
## Train the model
"""

epochs = 50 if FULL else 2 if SHORT else 8  # upstream: 50
history = model.fit(
    x_train,
    x_train,
    epochs=epochs,
    batch_size=128,
    validation_split=0.1,
    callbacks=[
        keras.callbacks.EarlyStopping(monitor="val_loss", patience=5, mode="min")
    ],
)

"""
Let's plot training and validation loss to see how the training went (the plot is left
out).
"""

# (added) the history Keras gives, and EarlyStopping's rule: training stops at the end of
# the first epoch that is the patience-th (5th) since the last improvement of val_loss
assert list(history.history) == ["loss", "val_loss"], list(history.history)
val_losses = history.history["val_loss"]
print("val_loss by epoch:", np.round(val_losses, 4))
n_epochs = len(val_losses)
assert len(history.history["loss"]) == n_epochs, history.history
best, stop = 0, None
for e in range(1, n_epochs):
    if val_losses[e] < val_losses[best]:
        best = e
    elif e - best >= 5:
        stop = e
        break
assert stop == (n_epochs - 1 if n_epochs < epochs else None), (stop, n_epochs, val_losses)

# (added) validation_split=0.1: the last 10% of the windows (after floor(0.9 n)), not
# shuffled; the weights are the last epoch's (restore_best_weights is False), so evaluate
# gives the last val_loss
split_at = int(np.floor(len(x_train) * 0.9))
x_val = x_train[split_at:]
val_loss = model.evaluate(x_val, x_val, verbose=0)
np.testing.assert_allclose(val_loss, val_losses[-1], rtol=1e-4)

"""
## Detecting anomalies
"""

# Get train MAE loss.
x_train_pred = model.predict(x_train)
train_mae_loss = np.mean(np.abs(x_train_pred - x_train), axis=1)

# (plt.hist of train_mae_loss left out)

# Get reconstruction loss threshold.
threshold = np.max(train_mae_loss)
print("Reconstruction error threshold: ", threshold)

# (added) predict() against numpy's forward pass from the weights; evaluate's MSE against
# numpy's from predict(); the threshold against numpy's per-window MAE
assert x_train_pred.shape == x_train.shape and x_train_pred.dtype == np.float32, (
    x_train_pred.shape, x_train_pred.dtype)
some = np.r_[0:16, len(x_train) - 16:len(x_train)]
np.testing.assert_allclose(x_train_pred[some], _np_model(model.get_weights(), x_train[some]),
                           rtol=1e-4, atol=1e-4)
np.testing.assert_allclose(val_loss, np.mean((x_train_pred[split_at:] - x_val) ** 2),
                           rtol=1e-4)
assert train_mae_loss.shape == (len(x_train), 1), train_mae_loss.shape
np.testing.assert_allclose(
    threshold, max(np.abs(x_train_pred[i, :, 0] - x_train[i, :, 0]).sum() / TIME_STEPS
                   for i in range(len(x_train))), rtol=1e-12)
if not SHORT:
    assert val_losses[-1] < 0.1, val_losses
    assert threshold < 0.25 * np.max(untrained_train_mae), (threshold, untrained_train_mae.max())

"""
### Compare recontruction (the plot of x_train[0] and x_train_pred[0] is left out)
"""

"""
### Prepare test data
"""


df_test_value = (df_daily_jumpsup - training_mean) / training_std
# (the plot of df_test_value is left out)

# Create sequences from test values.
x_test = create_sequences(df_test_value.values)
print("Test input shape: ", x_test.shape)

# Get test MAE loss.
x_test_pred = model.predict(x_test)
test_mae_loss = np.mean(np.abs(x_test_pred - x_test), axis=1)
test_mae_loss = test_mae_loss.reshape((-1))  # noqa: UP034 (upstream's line)

# (plt.hist of test_mae_loss left out)

# Detect all the samples which are anomalies.
anomalies = test_mae_loss > threshold
print("Number of anomaly samples: ", np.sum(anomalies))
print("Indices of anomaly samples: ", np.where(anomalies))

# (added) the windows that hold at least half of the jump are anomalies, and few that do
# not touch it are
assert x_test.shape == x_train.shape and test_mae_loss.shape == (len(x_test),)
starts = np.arange(len(x_test))
overlap = np.minimum(starts + TIME_STEPS, JUMP[1]) - np.maximum(starts, JUMP[0])
if not SHORT:
    assert np.all(anomalies[overlap >= (JUMP[1] - JUMP[0]) / 2]), np.where(anomalies)
    assert np.mean(anomalies[overlap <= 0]) <= 0.01, np.where(anomalies[overlap <= 0])

"""
## Plot anomalies
"""

# data i is an anomaly if samples [(i - timesteps + 1) to (i)] are anomalies
anomalous_data_indices = []
for data_idx in range(TIME_STEPS - 1, len(df_test_value) - TIME_STEPS + 1):
    if np.all(anomalies[data_idx - TIME_STEPS + 1 : data_idx]):
        anomalous_data_indices.append(data_idx)

df_subset = df_daily_jumpsup.iloc[anomalous_data_indices]
# (the plot of df_daily_jumpsup with df_subset in red is left out)

# (added) the anomalous points lie in the jump; df_subset holds their rows
assert len(df_subset) == len(anomalous_data_indices)
np.testing.assert_array_equal(df_subset.values[:, 0],
                              _written["art_daily_jumpsup.csv"][anomalous_data_indices])
print("Anomalous data points:", len(anomalous_data_indices),
      "rows", anomalous_data_indices[:1], "to", anomalous_data_indices[-1:])
if not SHORT:
    assert anomalous_data_indices, np.where(anomalies)
    assert JUMP[0] <= min(anomalous_data_indices) and max(anomalous_data_indices) <= JUMP[1], (
        anomalous_data_indices, JUMP)
_tmp.cleanup()
