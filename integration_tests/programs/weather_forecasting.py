"""Port of keras-team/keras-io examples/timeseries/timeseries_weather_forecasting.py
("Timeseries forecasting for weather prediction": the Jena climate CSV from a zip that
keras.utils.get_file fetches, read with pandas, the 14 features plotted and their
correlation heat map, 7 of them normalized with the statistics of the first 71.5% of the
rows, training and validation datasets of 120 hourly rows (sampling_rate=6 over 10-minute
rows) with the temperature 72 rows after the window as target, made by
keras.preprocessing.timeseries_dataset_from_array from arrays and pandas DataFrames, an
Input -> LSTM(32) -> Dense(1) functional model trained with Adam(0.001) and MSE under
EarlyStopping(patience=5) and a best-only weights ModelCheckpoint, the loss curves, and
predict on 5 validation batches for the "Single Step Prediction" plots).

Upstream: https://github.com/keras-team/keras-io/blob/0a57de48c864d63b80083820e8988368ee5c3149/examples/timeseries/timeseries_weather_forecasting.py
(the tf.keras version; e70ae747b458a92dfd71486bf65f4eb2d265f7b0 is the same code before the
"Accelerator: GPU" line and the Hugging Face note. keras-io's later Keras 3 rendering,
"Last modified 2023/11/22", runs the same code with `import keras`, without the heat-map
cell and with path_checkpoint = "model_checkpoint.weights.h5", GAP 2's stand-in.)
Changed: names only (tensorflow.keras -> ember.nn, bound to `keras` as the example spells
it: keras.utils.get_file, keras.preprocessing.timeseries_dataset_from_array, keras.layers,
keras.Model, keras.optimizers.Adam, keras.callbacks; `tf` itself is never used); the prose
cells are dropped. Nothing can be downloaded here: the program writes
jena_climate_2009_2016.csv.zip where get_file finds it in its cache ($KERAS_HOME, a
temporary directory, /datasets), so upstream's get_file line runs as written and returns
it. The zip holds a generated jena_climate_2009_2016.csv with Jena's 15 columns and header,
its "dd.mm.yyyy HH:MM:SS" times every 10 minutes from 01.01.2009 00:10:00 and two-decimal
values (the generator of time_series_forecasting.py, without its -9999 wind readings): a
temperature with daily (4 degC) and yearly (9 degC) cycles plus an AR(1) weather anomaly
(0.995 per step, 1.5 degC), pressure and relative humidity, the columns physics derives from
them (Tpot, Tdew, VPmax/VPact/VPdef, sh, H2OC, rho), wind speed, gust and direction.
pandas is not installed here: a DataFrame stand-in below (read_csv into float64 and str
columns, [] of a column or a list of columns, an assignable index, head, values,
pd.DataFrame(array) with columns 0..k-1, .loc label slices with both ends included and
.iloc position slices, np.asarray of the frame) does what the example asks of pandas. The
plots (matplotlib) are left out, kept as comments; show_raw_visualization,
visualize_loss and show_plot return what they would draw, which is checked; the heat map's
show_heatmap(df) is left out whole (pandas 2 refuses df.corr() over the Date Time strings;
keras-io dropped the cell) and np.corrcoef of the 14 features stands in.
Reduced (EMBER_PROGRAMS_FULL=1 restores Jena's 8 years: 2,922 days, 420,768 rows (Jena:
420,551), 1,173 batches an epoch): 60 days (8,640 rows; 5,463 training windows, 22
batches of 256, and 957 validation windows) and upstream's 10 epochs;
EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 38 days (the validation split keeps 54
windows; under 37 days it has none) and 1 epoch, no thresholds.
Added: seeds for numpy and ember; get_file returns the cached zip; the CSV reads back whole
(columns, first times, every value to 0.005); the 14 panels the raw plot would draw; the
split's sizes and the normalized frame against numpy (mean 0, std 1 over the training
rows); every batch of both datasets against windows numpy cuts from the normalized rows
(float64; inputs rows s, s+6, ..., s+714, target the temperature at row s+792; in order,
each window once, Keras 3's count of windows); the model's output_shape, its 5,153
parameters and Keras's initial weights (glorot_uniform kernels, an orthogonal recurrent
kernel, zero biases with the forget gate's at 1); predict (float32) before and after
training against numpy's LSTM (gates i, f, c, o) on the first validation batch, and
evaluate() equal to the MSE of predict over every validation window; the history's keys,
and its length is where EarlyStopping(patience=5, min_delta=0)'s rule, worked by hand from
val_loss, stops; the last val_loss is evaluate(); the weights ModelCheckpoint kept, loaded
into a clone, evaluate to the lowest val_loss (the best epoch's, not the last); what
show_plot would draw (120 hourly temperatures, the target, a float32 prediction at +12);
and one train_on_batch step from the trained weights against PyTorch (float64 autograd
through the same LSTM, then Keras's Adam step with epsilon 1e-7 outside the square root).
Thresholds (CPU run): the lowest val_loss below half of the best of three baselines: the
untrained model (1.64), predicting the training mean, 0 (E[y^2] = 1.02 on these validation
windows), and persistence, the window's last temperature 13 hours before the target (3.25:
the daily cycle has turned by then); this seed reaches 0.225 at epoch 6 and ends at 0.239
(overfitting the 43 training days; keras-io's runs on Jena read 0.127 to 0.164); and the last
epoch's training loss below half of the first's (1.35 -> 0.17). A model that does not
learn the daily cycle from the 120 hours it sees stays near 1.
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error): 1. (by design, docs/guide/input-pipelines.md)
elements of ember.data are numpy arrays, which have no .numpy() (AttributeError), so
upstream's inputs.numpy(), targets.numpy(), x[0][:, 1].numpy() and y[0].numpy() drop
`.numpy()`. 2. (loud) ModelCheckpoint(save_weights_only=True) refuses upstream's
"model_checkpoint.h5" (ValueError: the filepath must end in `.weights.h5`): Keras 3's
rule, where the tf.keras upstream ran with writes HDF5 weights to any .h5 name;
"model_checkpoint.weights.h5" stands in (as keras-io's Keras 3 version of the example).
Checked and the same as Keras 3 (ember's contract): timeseries_dataset_from_array makes
len - (sequence_length - 1) * sampling_rate windows (capped by the targets), where the
tf.keras of TF 2.3 that upstream was written for made len - sequence_length *
sampling_rate + 1, 5 fewer here; fit's loss and val_loss weigh batches by their size;
ModelCheckpoint's "improved from None to ..." is current Keras 3's message (older Keras
printed "inf"); float64 inputs are cast to the Input's float32.
"""

import csv
import datetime
import io
import os
import tempfile
import time
import types
import zipfile

import numpy as np
import torch

import ember.core as em
from ember import nn

keras = nn  # the example's `keras.` prefix (`tf` itself is never used by the example)
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
np.random.seed(0)
em.random.set_seed(0)
T0 = time.time()
_tmp = tempfile.TemporaryDirectory()
os.environ["KERAS_HOME"] = _tmp.name  # get_file's cache: where the stand-in zip is put

# ---------------------------------------------------------------------------------------
# The stand-in for upstream's download: jena_climate_2009_2016.csv (in its zip) with Jena's
# 15 columns, header, date format and 10-minute steps from 01.01.2009 00:10:00.
JENA_COLUMNS = ["Date Time", "p (mbar)", "T (degC)", "Tpot (K)", "Tdew (degC)", "rh (%)",
                "VPmax (mbar)", "VPact (mbar)", "VPdef (mbar)", "sh (g/kg)",
                "H2OC (mmol/mol)", "rho (g/m**3)", "wv (m/s)", "max. wv (m/s)", "wd (deg)"]
DAYS = 2922 if FULL else 38 if SHORT else 60  # Jena: 2009-01-01 to 2017-01-01, 2,922 days
ROWS = DAYS * 144


def _wander(rng, n, phi, sigma):  # an AR(1) noise, one value per 10 minutes
    shocks = rng.normal(0.0, sigma, n)
    out = np.empty(n)
    acc = 0.0
    for i in range(n):
        acc = phi * acc + shocks[i]
        out[i] = acc
    return out


def _jena_like(rng):
    """The 14 numeric columns (Jena's order): temperature with daily and yearly cycles and
    a wandering weather anomaly; pressure and humidity; the columns physics derives."""
    n = ROWS
    start = datetime.datetime(2009, 1, 1, 0, 10)
    secs = (start - datetime.datetime(1970, 1, 1)).total_seconds() + 600.0 * np.arange(n)
    day_phase = 2 * np.pi * secs / 86400.0
    year_phase = 2 * np.pi * secs / (365.2425 * 86400.0)
    temp = (9.0 - 9.0 * np.cos(year_phase - 0.35) - 4.0 * np.cos(day_phase - 0.6)
            + _wander(rng, n, 0.995, 0.15))
    p = 989.0 + _wander(rng, n, 0.999, 0.15)
    rh = np.clip(75.0 + 15.0 * np.cos(day_phase - 0.6) + _wander(rng, n, 0.99, 1.0), 15, 100)
    vp_max = 6.1078 * np.exp(17.27 * temp / (temp + 237.3))
    vp_act = vp_max * rh / 100.0
    a = np.log(vp_act / 6.1078)
    tdew = 237.3 * a / (17.27 - a)
    tpot = (temp + 273.15) * (1000.0 / p) ** 0.286
    sh = 1000.0 * 0.622 * vp_act / (p - 0.378 * vp_act)
    h2oc = 1000.0 * vp_act / p
    rho = p * 100.0 / (287.05 * (temp + 273.15)) * 1000.0
    wv = np.abs(2.0 + _wander(rng, n, 0.98, 0.3))
    max_wv = 1.6 * wv + 0.5 * np.abs(rng.normal(size=n))
    wd = (200.0 + 40.0 * _wander(rng, n, 0.99, 0.2)) % 360.0
    return np.stack([p, temp, tpot, tdew, rh, vp_max, vp_act, vp_max - vp_act, sh, h2oc, rho,
                     wv, max_wv, wd], axis=1)


def _write_jena_zip(path):
    values = _jena_like(np.random.default_rng(0))
    start = datetime.datetime(2009, 1, 1, 0, 10)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(JENA_COLUMNS)
    for i, row in enumerate(values):
        when = start + datetime.timedelta(minutes=10 * i)
        writer.writerow([when.strftime("%d.%m.%Y %H:%M:%S")] + [f"{v:.2f}" for v in row])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("jena_climate_2009_2016.csv", buf.getvalue())
    return values


# where get_file finds it without downloading: $KERAS_HOME/datasets/<fname>
JENA_VALUES = _write_jena_zip(os.path.join(_tmp.name, "datasets", "jena_climate_2009_2016.csv.zip"))


# ---------------------------------------------------------------------------------------
# The stand-in for pandas (not installed here): what the example asks of a DataFrame.
class DataFrame:
    """Named columns (numpy arrays, in order) over an index, as pandas.DataFrame."""

    def __init__(self, data, index=None):
        if isinstance(data, dict):
            self._columns = dict(data)
        else:  # pd.DataFrame(array): columns 0, 1, ... and a RangeIndex
            array = np.asarray(data)
            self._columns = {j: array[:, j] for j in range(array.shape[1])}
        n = len(next(iter(self._columns.values())))
        self.index = np.arange(n) if index is None else np.asarray(index)
        self.loc = _Indexer(self, by_label=True)
        self.iloc = _Indexer(self, by_label=False)

    @property
    def columns(self):
        return list(self._columns)

    @property
    def shape(self):
        return (len(self), len(self._columns))

    def __len__(self):
        return len(self.index)

    def __getitem__(self, key):
        if isinstance(key, list):  # columns
            return DataFrame({k: self._columns[k] for k in key}, index=self.index)
        return self._columns[key]  # a column (pandas: a Series)

    def _rows(self, rows):
        return DataFrame({k: v[rows] for k, v in self._columns.items()}, index=self.index[rows])

    def head(self, n=5):
        return self._rows(slice(0, n))

    @property
    def values(self):  # numbers only here: float64, as pandas gives
        return np.stack(list(self._columns.values()), axis=1)

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)


class _Indexer:
    """.loc (labels, both ends included, on a sorted index) and .iloc (positions)."""

    def __init__(self, frame, by_label):
        self.frame, self.by_label = frame, by_label

    def __getitem__(self, key):
        assert isinstance(key, slice) and key.step is None
        if not self.by_label:
            return self.frame._rows(key)
        index = self.frame.index
        lo = 0 if key.start is None else int(np.searchsorted(index, key.start, "left"))
        hi = len(index) if key.stop is None else int(np.searchsorted(index, key.stop, "right"))
        return self.frame._rows(slice(lo, hi))


def _read_csv(path):
    """pd.read_csv: the header names the columns; a column of numbers is float64, else
    object (str)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    columns = {}
    for name, cells in zip(rows[0], zip(*rows[1:])):
        try:
            columns[name] = np.array([float(c) for c in cells], dtype=np.float64)
        except ValueError:
            columns[name] = np.array(cells, dtype=object)
    return DataFrame(columns)


pd = types.SimpleNamespace(read_csv=_read_csv, DataFrame=DataFrame)

"""
## Setup
This example requires TensorFlow 2.3 or higher.
"""

# import pandas as pd  (the stand-in above)
# import matplotlib.pyplot as plt  (the plots are left out)
# import tensorflow as tf
# from tensorflow import keras  (ember.nn, bound to `keras` above)

"""
## Climate Data Time-Series
"""

from zipfile import ZipFile  # noqa: E402  (upstream's `import os` beside it is above)

uri = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/jena_climate_2009_2016.csv.zip"
zip_path = keras.utils.get_file(origin=uri, fname="jena_climate_2009_2016.csv.zip")
zip_file = ZipFile(zip_path)
zip_file.extractall()
csv_path = "jena_climate_2009_2016.csv"

df = pd.read_csv(csv_path)

# Added: get_file returned the cached zip without downloading; the CSV reads back whole
assert zip_path == os.path.join(_tmp.name, "datasets", "jena_climate_2009_2016.csv.zip")
assert df.columns == JENA_COLUMNS and df.shape == (ROWS, 15), df.shape
assert df["Date Time"][0] == "01.01.2009 00:10:00" and df["Date Time"][143] == "02.01.2009 00:00:00"
for j, key in enumerate(JENA_COLUMNS[1:]):
    assert df[key].dtype == np.float64
    np.testing.assert_allclose(df[key], JENA_VALUES[:, j], rtol=0, atol=0.005 + 1e-9)

"""
## Raw Data Visualization
"""

titles = [
    "Pressure",
    "Temperature",
    "Temperature in Kelvin",
    "Temperature (dew point)",
    "Relative Humidity",
    "Saturation vapor pressure",
    "Vapor pressure",
    "Vapor pressure deficit",
    "Specific humidity",
    "Water vapor concentration",
    "Airtight",
    "Wind speed",
    "Maximum wind speed",
    "Wind direction in degrees",
]

feature_keys = [
    "p (mbar)",
    "T (degC)",
    "Tpot (K)",
    "Tdew (degC)",
    "rh (%)",
    "VPmax (mbar)",
    "VPact (mbar)",
    "VPdef (mbar)",
    "sh (g/kg)",
    "H2OC (mmol/mol)",
    "rho (g/m**3)",
    "wv (m/s)",
    "max. wv (m/s)",
    "wd (deg)",
]

colors = [
    "blue",
    "orange",
    "green",
    "red",
    "purple",
    "brown",
    "pink",
    "gray",
    "olive",
    "cyan",
]

date_time_key = "Date Time"


def show_raw_visualization(data):
    time_data = data[date_time_key]
    # (plot left out: fig, axes = plt.subplots(nrows=7, ncols=2, figsize=(15, 20), dpi=80,
    #  facecolor="w", edgecolor="k"))
    drawn = []  # Added: what it would draw
    for i in range(len(feature_keys)):
        key = feature_keys[i]
        c = colors[i % (len(colors))]
        t_data = data[key]
        # (t_data.index = time_data; t_data.head(); ax = t_data.plot(ax=axes[i // 2, i % 2],
        #  color=c, title="{} - {}".format(titles[i], key), rot=25);
        #  ax.legend([titles[i]]))
        drawn.append((i // 2, i % 2, c, "{} - {}".format(titles[i], key), t_data))  # noqa: UP032
    # (plt.tight_layout())
    return time_data, drawn


time_data, drawn = show_raw_visualization(df)
# Added: 14 panels of 7 x 2, one a feature, against the 10-minute times
assert len(drawn) == 14 and drawn[13][:4] == (6, 1, "red", "Wind direction in degrees - wd (deg)")
assert all(len(t_data) == len(time_data) == ROWS for *_, t_data in drawn)

"""
This heat map shows the correlation between different features.
"""

# (plot left out: show_heatmap(df) draws plt.matshow(data.corr()) with the column names as
# ticks, a colorbar and the title "Feature Correlation Heatmap"; pandas 2 refuses corr() of
# the Date Time strings unless numeric_only=True)
corr = np.corrcoef(df[feature_keys].values.T)  # Added: what the heat map would show
assert corr.shape == (14, 14) and corr[1, 2] > 0.99  # T and Tpot move together


"""
## Data Preprocessing
"""

split_fraction = 0.715
train_split = int(split_fraction * int(df.shape[0]))
step = 6

past = 720
future = 72
learning_rate = 0.001
batch_size = 256
epochs = 1 if SHORT else 10


def normalize(data, train_split):
    data_mean = data[:train_split].mean(axis=0)
    data_std = data[:train_split].std(axis=0)
    return (data - data_mean) / data_std


"""
We can see from the correlation heatmap, few parameters like Relative Humidity and
Specific Humidity are redundant. Hence we will be using select features, not all.
"""

print(
    "The selected parameters are:",
    ", ".join([titles[i] for i in [0, 1, 5, 7, 8, 10, 11]]),
)
selected_features = [feature_keys[i] for i in [0, 1, 5, 7, 8, 10, 11]]
features = df[selected_features]
features.index = df[date_time_key]
features.head()

features = normalize(features.values, train_split)
features = pd.DataFrame(features)
features.head()

train_data = features.loc[0 : train_split - 1]
val_data = features.loc[train_split:]

# Added: the split, and the selected columns normalized with the training rows' statistics,
# worked out with numpy from the generated values
RAW = np.stack([df[k] for k in selected_features], axis=1)
NORM = (RAW - RAW[:train_split].mean(axis=0)) / RAW[:train_split].std(axis=0)
assert train_split == int(0.715 * ROWS) and len(train_data) == train_split
assert len(val_data) == ROWS - train_split
np.testing.assert_array_equal(features.values, NORM)
np.testing.assert_allclose(train_data.values.mean(axis=0), 0.0, atol=1e-9)
np.testing.assert_allclose(train_data.values.std(axis=0), 1.0, rtol=1e-9)

"""
# Training dataset

The training dataset labels starts from the 792nd observation (720 + 72).
"""

start = past + future
end = start + train_split

x_train = train_data[[i for i in range(7)]].values
y_train = features.iloc[start:end][[1]]

sequence_length = int(past / step)

dataset_train = keras.preprocessing.timeseries_dataset_from_array(
    x_train,
    y_train,
    sequence_length=sequence_length,
    sampling_rate=step,
    batch_size=batch_size,
)

"""
## Validation dataset
"""

x_end = len(val_data) - past - future

label_start = train_split + past + future

x_val = val_data.iloc[:x_end][[i for i in range(7)]].values
y_val = features.iloc[label_start:][[1]]

dataset_val = keras.preprocessing.timeseries_dataset_from_array(
    x_val,
    y_val,
    sequence_length=sequence_length,
    sampling_rate=step,
    batch_size=batch_size,
)


for batch in dataset_train.take(1):
    inputs, targets = batch

# GAP 1 (by design): print("Input shape:", inputs.numpy().shape)   (AttributeError: the
# elements of ember.data are numpy arrays, which have no .numpy())
print("Input shape:", inputs.shape)
# GAP 1 (by design): print("Target shape:", targets.numpy().shape)
print("Target shape:", targets.shape)


# Added: every window of both datasets against numpy's. Window s of the training set is
# the normalized rows s, s+6, ..., s+714 (120 hourly rows, 5 days) and its target the
# temperature at row s+792 (13 hours after the window's last row); the validation windows
# the same from row train_split. Batches come in order (shuffle=False), float64 as the data.
def np_windows(first, lo, hi):  # windows lo .. hi-1 of the split that starts at row `first`
    s = first + np.arange(lo, hi)
    rows = s[:, None] + step * np.arange(sequence_length)[None, :]
    return NORM[rows], NORM[s + past + future, 1][:, None]


N_TRAIN = train_split - (sequence_length - 1) * step
N_VAL = ROWS - train_split - past - future - (sequence_length - 1) * step
Y_VAL = np_windows(train_split, 0, N_VAL)[1]


def check_dataset(dataset, first, count):
    batches = 0
    for b, (bx, by) in enumerate(dataset):
        assert bx.dtype == np.float64 and by.dtype == np.float64, (bx.dtype, by.dtype)
        x_np, y_np = np_windows(first, b * batch_size, min((b + 1) * batch_size, count))
        np.testing.assert_array_equal(bx, x_np)
        np.testing.assert_array_equal(by, y_np)
        batches += 1
    assert batches == -(-count // batch_size), (batches, count)


assert inputs.shape == (batch_size, 120, 7) and targets.shape == (batch_size, 1)
check_dataset(dataset_train, 0, N_TRAIN)
check_dataset(dataset_val, train_split, N_VAL)
print(f"{N_TRAIN} training windows, {N_VAL} validation windows")

"""
## Training
"""

inputs = keras.layers.Input(shape=(inputs.shape[1], inputs.shape[2]))
lstm_out = keras.layers.LSTM(32)(inputs)
outputs = keras.layers.Dense(1)(lstm_out)

model = keras.Model(inputs=inputs, outputs=outputs)
model.compile(optimizer=keras.optimizers.Adam(learning_rate=learning_rate), loss="mse")
model.summary()


# Added: Keras's shapes, parameter count and initial weights (glorot_uniform kernels, an
# orthogonal recurrent kernel, zero biases but the forget gate's ones), and the model is
# numpy's forward pass with its weights (gates i, f, c, o; tanh and a sigmoid)
def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def np_forward(m, x):
    kernel, recurrent, bias, dense_kernel, dense_bias = (
        np.asarray(w, np.float64) for w in m.get_weights())
    h = np.zeros((len(x), 32))
    c = np.zeros((len(x), 32))
    for t in range(x.shape[1]):
        i, f, g, o = np.split(x[:, t] @ kernel + h @ recurrent + bias, 4, axis=-1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
    return h @ dense_kernel + dense_bias


assert model.output_shape == (None, 1), model.output_shape
assert model.count_params() == 4 * 32 * (7 + 32 + 1) + 32 + 1 == 5153
weights = model.get_weights()
assert [w.shape for w in weights] == [(7, 128), (32, 128), (128,), (32, 1), (1,)]
assert 0.5 * np.sqrt(6 / 135) < np.abs(weights[0]).max() <= np.sqrt(6 / 135)
np.testing.assert_allclose(weights[1] @ weights[1].T, np.eye(32), atol=1e-5)
np.testing.assert_array_equal(weights[2], np.r_[np.zeros(32), np.ones(32), np.zeros(64)])
assert np.abs(weights[3]).max() <= np.sqrt(6 / 33) and not weights[4].any()
X_FIRST = np_windows(train_split, 0, min(batch_size, N_VAL))[0]  # the first validation batch
untrained = model.predict(dataset_val, verbose=0)
assert untrained.shape == (N_VAL, 1) and untrained.dtype == np.float32, untrained.dtype
np.testing.assert_allclose(untrained[:len(X_FIRST)], np_forward(model, X_FIRST), rtol=1e-4,
                           atol=1e-5)
UNTRAINED_MSE = float(np.mean((untrained - Y_VAL) ** 2))
np.testing.assert_allclose(model.evaluate(dataset_val, verbose=0), UNTRAINED_MSE, rtol=1e-5)

"""
We'll use the `ModelCheckpoint` callback to regularly save checkpoints, and
the `EarlyStopping` callback to interrupt training when the validation loss
is not longer improving.
"""

# GAP 2: path_checkpoint = "model_checkpoint.h5"   (ModelCheckpoint(save_weights_only=True)
# refuses it: ValueError, the filepath must end in `.weights.h5`, Keras 3's rule)
path_checkpoint = "model_checkpoint.weights.h5"
es_callback = keras.callbacks.EarlyStopping(monitor="val_loss", min_delta=0, patience=5)

modelckpt_callback = keras.callbacks.ModelCheckpoint(
    monitor="val_loss",
    filepath=path_checkpoint,
    verbose=1,
    save_weights_only=True,
    save_best_only=True,
)

history = model.fit(
    dataset_train,
    epochs=epochs,
    validation_data=dataset_val,
    callbacks=[es_callback, modelckpt_callback],
)

"""
We can visualize the loss with the function below. After one point, the loss stops
decreasing.
"""


def visualize_loss(history, title):
    loss = history.history["loss"]
    val_loss = history.history["val_loss"]
    epochs = range(len(loss))
    # (plot left out: plt.figure(); plt.plot(epochs, loss, "b", label="Training loss");
    #  plt.plot(epochs, val_loss, "r", label="Validation loss"); plt.title(title);
    #  plt.xlabel("Epochs"); plt.ylabel("Loss"); plt.legend(); plt.show())
    return epochs, loss, val_loss  # Added: what it would draw


plotted_epochs, loss, val_loss = visualize_loss(history, "Training and Validation Loss")
print("loss:", [round(v, 4) for v in loss])
print("val_loss:", [round(v, 4) for v in val_loss])

"""
## Prediction

The trained model above is now able to make predictions for 5 sets of values from
validation set.
"""


def show_plot(plot_data, delta, title):
    labels = ["History", "True Future", "Model Prediction"]
    marker = [".-", "rx", "go"]
    time_steps = list(range(-(plot_data[0].shape[0]), 0))
    if delta:
        future = delta
    else:
        future = 0

    # (plot left out: plt.title(title))
    drawn = []  # Added: what it would draw
    for i, val in enumerate(plot_data):  # noqa: B007
        if i:
            # (plt.plot(future, plot_data[i], marker[i], markersize=10, label=labels[i]))
            drawn.append((future, plot_data[i], marker[i], labels[i]))
        else:
            # (plt.plot(time_steps, plot_data[i].flatten(), marker[i], label=labels[i]))
            drawn.append((time_steps, plot_data[i].flatten(), marker[i], labels[i]))
    # (plt.legend(); plt.xlim([time_steps[0], (future + 5) * 2]); plt.xlabel("Time-Step");
    #  plt.show())
    return drawn


shown = []  # Added
for x, y in dataset_val.take(5):
    shown.append(show_plot(
        # GAP 1 (by design): [x[0][:, 1].numpy(), y[0].numpy(), model.predict(x)[0]],
        [x[0][:, 1], y[0], model.predict(x)[0]],
        12,
        "Single Step Prediction",
    ))

# ---------------------------------------------------------------------------------------
# Added: what the plots would show, the history, the callbacks, and what training reached
for b, drawn in enumerate(shown):
    (steps, hist, _, _), (at, true, _, _), (at2, pred, _, _) = drawn
    assert steps == list(range(-120, 0)) and at == at2 == 12
    history_rows = train_split + b * batch_size + step * np.arange(sequence_length)
    np.testing.assert_array_equal(hist, NORM[history_rows, 1])  # the batch's first window
    np.testing.assert_array_equal(true, Y_VAL[b * batch_size])
    assert pred.shape == (1,) and pred.dtype == np.float32
assert len(shown) == min(5, -(-N_VAL // batch_size))

assert sorted(history.history) == ["loss", "val_loss"], sorted(history.history)
assert list(plotted_epochs) == list(range(len(loss))) and len(val_loss) == len(loss)


def keras_stop_epoch(val_loss, patience=5):  # EarlyStopping(min_delta=0)'s rule, by hand
    best, wait = None, 0
    for epoch, v in enumerate(val_loss):
        wait += 1
        if best is None or v < best:
            best, wait = v, 0
        elif wait >= patience and epoch > 0:
            return epoch + 1
    return len(val_loss)


assert len(loss) == keras_stop_epoch(val_loss) and len(loss) <= epochs, (len(loss), val_loss)
trained = model.predict(dataset_val, verbose=0)
np.testing.assert_allclose(trained[:len(X_FIRST)], np_forward(model, X_FIRST), rtol=1e-4,
                           atol=1e-5)
TRAINED_MSE = float(np.mean((trained - Y_VAL) ** 2))
np.testing.assert_allclose(model.evaluate(dataset_val, verbose=0), TRAINED_MSE, rtol=1e-5)
np.testing.assert_allclose(val_loss[-1], TRAINED_MSE, rtol=1e-5)

# the checkpoint holds the weights of the best epoch: a fresh model loading it evaluates
# to the lowest val_loss
best_model = keras.models.clone_model(model)
best_model.compile(optimizer=keras.optimizers.Adam(learning_rate=learning_rate), loss="mse")
best_model.load_weights(path_checkpoint)
np.testing.assert_allclose(best_model.evaluate(dataset_val, verbose=0), min(val_loss), rtol=1e-5)

# One step of fit against PyTorch (float64, autograd) from the trained weights: the MSE,
# its gradients through the LSTM, and Keras's Adam (epsilon 1e-7 outside the square root)
xb, yb = np_windows(0, 0, batch_size)
step_model = keras.models.clone_model(model)
step_model.set_weights(model.get_weights())
step_model.compile(optimizer=keras.optimizers.Adam(learning_rate=learning_rate), loss="mse")
torch_weights = [torch.tensor(np.asarray(w, np.float64), requires_grad=True)
                 for w in model.get_weights()]
kernel, recurrent, bias, dense_kernel, dense_bias = torch_weights
tx = torch.tensor(xb.astype(np.float32).astype(np.float64))
h = torch.zeros(batch_size, 32, dtype=torch.float64)
c = torch.zeros(batch_size, 32, dtype=torch.float64)
for t in range(sequence_length):
    i, f, g, o = torch.split(tx[:, t] @ kernel + h @ recurrent + bias, 32, dim=-1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    h = torch.sigmoid(o) * torch.tanh(c)
torch_loss = torch.mean((h @ dense_kernel + dense_bias - torch.tensor(yb)) ** 2)
torch_loss.backward()
step_loss = step_model.train_on_batch(xb, yb)
np.testing.assert_allclose(step_loss, torch_loss.item(), rtol=1e-5)
for w_before, tw, w_after in zip(model.get_weights(), torch_weights, step_model.get_weights()):
    grad = tw.grad.numpy()
    m, v = 0.1 * grad, 0.001 * grad ** 2
    alpha = learning_rate * np.sqrt(1 - 0.999) / (1 - 0.9)
    want = w_before - alpha * m / (np.sqrt(v) + 1e-7)
    np.testing.assert_allclose(w_after, want, rtol=1e-4, atol=1e-6)

# Thresholds: predicting the training mean (0) scores E[y^2] on the validation windows, and
# persistence (the last hour's temperature, 13 hours before the target) more
MEAN_MSE = float(np.mean(Y_VAL ** 2))
LAST_HOUR = NORM[train_split + np.arange(N_VAL) + (sequence_length - 1) * step, 1][:, None]
PERSIST_MSE = float(np.mean((LAST_HOUR - Y_VAL) ** 2))
print(f"val MSE: untrained {UNTRAINED_MSE:.4f}, trained {TRAINED_MSE:.4f}, best "
      f"{min(val_loss):.4f}; mean {MEAN_MSE:.4f}, persistence {PERSIST_MSE:.4f}; "
      f"{time.time() - T0:.1f} s")
if not SHORT:
    assert min(val_loss) < 0.5 * min(UNTRAINED_MSE, MEAN_MSE, PERSIST_MSE), val_loss
    assert loss[-1] < 0.5 * loss[0], loss
