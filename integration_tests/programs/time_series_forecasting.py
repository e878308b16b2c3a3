"""Port of tensorflow/docs site/en/tutorials/structured_data/time_series.ipynb ("Time series
forecasting": the Jena climate CSV sub-sampled to hours, wind and time-of-day/year features,
a 70/20/10 split normalized with the training statistics, the WindowGenerator class
(split_window, make_dataset over keras.utils.timeseries_dataset_from_array, plot), single-step
models (Baseline, Linear, Dense, multi-step Dense, Conv1D, LSTM) on one label column, the
multi-output models (Baseline, Dense, LSTM, a ResidualWrapper LSTM) on all 19 columns, the
multi-step models (Last and Repeat baselines, single-shot Linear, Dense, Conv1D and LSTM) and
the autoregressive FeedBack model built from an LSTMCell and an RNN wrapping it).

Upstream: https://github.com/tensorflow/docs/blob/b64768499123da8b2253a534277d62e20de3ec73/site/en/tutorials/structured_data/time_series.ipynb
(the last change to the notebook, "Fix notebook failure with Keras 3", March 2024)
Changed: names only (tf.keras.* -> nn.*, tf.stack/tile/transpose -> em.*). Nothing can be
downloaded here, so get_file writes a jena_climate_2009_2016.csv this program generates
with Jena's 15 columns and header, its date format and 10-minute steps from 01.01.2009
00:10:00: a temperature with daily and yearly cycles plus a slowly wandering noise,
pressure, relative humidity (against the temperature's daily cycle) and the columns physics
derives from them (Tpot, Tdew, VPmax/VPact/VPdef, sh, H2OC, rho), wind speed, gust and
direction, and three -9999 wind readings for the clean-up to find. pandas and seaborn are
not installed here: a DataFrame stand-in below (named float64 columns; row slices, pop,
mean, std with pandas's ddof=1, column-wise arithmetic with those statistics, np.array of
the frame) does what the tutorial asks of pandas, and pd.to_datetime/Timestamp.timestamp
become datetime.strptime and a UTC timestamp (pandas reads naive times as UTC). The plots
(matplotlib, seaborn, IPython.display) and the %%time magics are left out;
WindowGenerator.plot keeps its body and returns what it would draw, which is checked.
Elements of ember.data are numpy arrays (by design, docs/guide/input-pipelines.md), so a
window's inputs are numpy arrays where TF's are tensors; `_host` reads either.
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream's 8 years, 420,768 rows (Jena: 420,551),
and MAX_EPOCHS = 20): one year (52,560 rows, 8,760 hours) and MAX_EPOCHS = 3;
EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 30 days, MAX_EPOCHS = 1, no thresholds.
Added: seeds for numpy and ember; the CSV reads back whole, the hourly times start on the
hour, the clean-up leaves no -9999 (and finds the three), Day sin at 1 am is sin(2 pi/24);
the FFT's largest peak (past the lowest bins) sits at 1/day (1/year at full size); 19
features, 24 rows a day; the normalized training columns have mean 0 and std 1; the
windows' reprs (the tutorial's output) and every shape the tutorial prints, as TF gives
them; split_window's values; one pass over a dataset yields every window of the frame
once; each baseline's evaluate() (Baseline, multi-output Baseline, Last, Repeat) equals
its MSE and MAE worked out with numpy over every window (so evaluate weighs windows, not
batches); for each trained model, the history's keys are Keras 3's, its last val_loss
equals evaluate() on the validation set, and evaluate() on the test set equals the MSE and
MAE of its own predictions computed with numpy, below the model's untrained MAE; the conv
model, the LSTM and the FeedBack model give what numpy computes from their weights
(Keras's LSTM: gates i, f, c, o); the untrained ResidualWrapper (zero output kernel) is the
Baseline; the multi-step Dense raises ValueError on the wide window; the baseline's plotted
predictions are its inputs and its labels the next inputs. Thresholds (CPU run): the
dense, multi-step dense, conv and LSTM single-step models reach a test MAE below 0.8 of
persistence's (the generated temperature moves up to 1 degree an hour with the time of
day, which Day sin/cos let a model predict and persistence cannot: they reach 0.06-0.07
against 0.095); the linear model, whose random start is far off (test MAE 1.6) and which
3 epochs do not bring to persistence, below 0.3 of its untrained MAE (0.24); the
multi-output Dense and LSTM below 0.3 of their untrained MAE (about 1.0; they reach 0.17
and 0.23, near the multi-output Baseline's 0.155, which they beat only with more epochs),
the Residual LSTM (which starts as that Baseline) below 0.9 of it (0.11); the single-shot
models and the FeedBack model below 0.9 of the Last baseline's (0.51; they reach 0.24 to
0.38; untrained, the zero-initialized ones predict the mean, MAE 0.95).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error): 1. (no network here) the CSV is generated
where get_file would put it (nn.utils.get_file was missing when this port was written; it
exists now). 3. (by
design: ember.data's elements are numpy arrays) a window split inside a dataset's map has
no set_shape: a shape assertion stands in. 4. no em.signal (tf.signal.rfft:
AttributeError): np.fft.rfft. 6. no em.initializers (tf.initializers, Keras's initializers
under tf: AttributeError): nn.initializers.zeros(). 8. model.metrics is [Mean (the loss),
MeanAbsoluteError] where Keras 3's is [Mean, CompileMetrics], so upstream's
`lstm_model.metrics[1].metrics` raises AttributeError: model.metrics[1:] stands in.
Fixed in ember since the first version of this port: (GAP 7, silent) the element_spec of a
mapped dataset was the spec of its first element, so a batch axis read 32 where TF's reads
None (the last batch is smaller); em.newaxis was missing (GAP 5); no
nn.utils.timeseries_dataset_from_array (GAP 2, AttributeError; a numpy stand-in with
Keras's steps stood in). Upstream's lines and TF's element_spec are restored.
"""

import csv
import datetime
import os
import tempfile
import types

import numpy as np

import ember.core as em
from ember import nn

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
np.random.seed(0)
em.random.set_seed(0)
_tmp = tempfile.TemporaryDirectory()

# ---------------------------------------------------------------------------------------
# The stand-in for upstream's download: jena_climate_2009_2016.csv with Jena's columns.
JENA_COLUMNS = ['Date Time', 'p (mbar)', 'T (degC)', 'Tpot (K)', 'Tdew (degC)', 'rh (%)',
                'VPmax (mbar)', 'VPact (mbar)', 'VPdef (mbar)', 'sh (g/kg)',
                'H2OC (mmol/mol)', 'rho (g/m**3)', 'wv (m/s)', 'max. wv (m/s)', 'wd (deg)']
DAYS = 2922 if FULL else 30 if SHORT else 365  # 2009-01-01 to 2017-01-01: 2,922 days
BAD_WIND_ROWS = [6 * 17 + 5, 6 * 200 + 5, 6 * 333 + 5]  # rows df[5::6] keeps


def _wander(rng, n, phi, sigma):  # a slowly wandering noise, one value per 10 minutes
  shocks = rng.normal(0.0, sigma, n)
  out = np.empty(n)
  acc = 0.0
  for i in range(n):
    acc = phi * acc + shocks[i]
    out[i] = acc
  return out


def _write_jena_like_csv(path):
  rng = np.random.default_rng(0)
  n = DAYS * 144
  start = datetime.datetime(2009, 1, 1, 0, 10)
  times = [start + datetime.timedelta(minutes=10 * i) for i in range(n)]
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
  wv[BAD_WIND_ROWS], max_wv[BAD_WIND_ROWS] = -9999.0, -9999.0
  columns = [p, temp, tpot, tdew, rh, vp_max, vp_act, vp_max - vp_act, sh, h2oc, rho, wv,
             max_wv, wd]
  with open(path, 'w', newline='') as f:
    writer = csv.writer(f)
    writer.writerow(JENA_COLUMNS)
    for i in range(n):
      writer.writerow([times[i].strftime('%d.%m.%Y %H:%M:%S')]
                      + [f'{c[i]:.2f}' for c in columns])
  return n


def get_file(origin, fname, extract=False):  # GAP 1: tf.keras.utils.get_file
  csv_name, _ = os.path.splitext(fname)
  get_file.rows = _write_jena_like_csv(os.path.join(_tmp.name, csv_name))
  return os.path.join(_tmp.name, fname)  # extract=True: the .csv lies beside the .zip


# ---------------------------------------------------------------------------------------
# The stand-in for pandas (not installed here): what the tutorial asks of a DataFrame.
class DataFrame:
  """Named float64 columns (numpy arrays, in order), as pd.read_csv gives this CSV."""

  def __init__(self, columns):
    self._columns = dict(columns)

  @property
  def columns(self):
    return list(self._columns)

  def keys(self):
    return self.columns

  @property
  def shape(self):
    return (len(self), len(self._columns))

  def __len__(self):
    return len(next(iter(self._columns.values())))

  def __getitem__(self, key):
    if isinstance(key, str):  # a column (a view: in-place edits reach the frame)
      return self._columns[key]
    if isinstance(key, list):  # columns
      return DataFrame({k: self._columns[k] for k in key})
    return DataFrame({k: v[key] for k, v in self._columns.items()})  # a slice of rows

  def __setitem__(self, key, value):
    self._columns[key] = np.asarray(value, dtype=np.float64)

  def pop(self, key):
    return self._columns.pop(key)

  def head(self, n=5):
    return self[:n]

  def mean(self):
    return {k: v.mean() for k, v in self._columns.items()}

  def std(self):
    return {k: v.std(ddof=1) for k, v in self._columns.items()}  # pandas: ddof=1

  def __sub__(self, other):
    return DataFrame({k: v - other[k] for k, v in self._columns.items()})

  def __truediv__(self, other):
    return DataFrame({k: v / other[k] for k, v in self._columns.items()})

  def __array__(self, dtype=None, copy=None):
    return np.stack(list(self._columns.values()), axis=1).astype(dtype or np.float64)


class _Series(np.ndarray):
  def map(self, f):
    return np.array([f(v) for v in self])


def _read_csv(path):
  with open(path, newline='') as f:
    rows = list(csv.reader(f))
  header, rows = rows[0], rows[1:]
  cols = {name: [row[i] for row in rows] for i, name in enumerate(header)}
  return DataFrame({name: np.array(v) if name == 'Date Time' else np.array(v, dtype=np.float64)
                    for name, v in cols.items()})


def _to_datetime(strings, format):
  return np.array([datetime.datetime.strptime(s, format) for s in strings],
                  dtype=object).view(_Series)


pd = types.SimpleNamespace(
    read_csv=_read_csv, to_datetime=_to_datetime,
    Timestamp=types.SimpleNamespace(  # a naive pd.Timestamp is UTC
        timestamp=lambda t: t.replace(tzinfo=datetime.timezone.utc).timestamp()))


def _host(x):  # an element of ember.data is a numpy array, an op's result a tensor
  return x.numpy() if hasattr(x, 'numpy') else np.asarray(x)


def _sigmoid(z):
  return 1 / (1 + np.exp(-z))


def _np_lstm(x, kernel, recurrent_kernel, bias, state=None):
  """(added) Keras's LSTM (gates i, f, c, o; sigmoid and tanh) in numpy: outputs, [h, c]."""
  units = recurrent_kernel.shape[0]
  h, c = state if state is not None else (np.zeros((len(x), units)), np.zeros((len(x), units)))
  outputs = []
  for t in range(x.shape[1]):
    i, f, g, o = np.split(x[:, t] @ kernel + h @ recurrent_kernel + bias, 4, axis=-1)
    c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    h = _sigmoid(o) * np.tanh(c)
    outputs.append(h)
  return np.stack(outputs, axis=1), [h, c]


def _np_dense(x, kernel, bias, relu=False):
  y = x @ kernel + bias
  return np.maximum(y, 0) if relu else y


# ---------------------------------------------------------------------------------------
# (left out: import IPython, matplotlib, seaborn; mpl.rcParams[...])

# ## The weather dataset
zip_path = get_file(
    origin='https://storage.googleapis.com/tensorflow/tf-keras-datasets/jena_climate_2009_2016.csv.zip',
    fname='jena_climate_2009_2016.csv.zip',
    extract=True)
csv_path, _ = os.path.splitext(zip_path)

df = pd.read_csv(csv_path)
# Slice [start:stop:step], starting from index 5 take every 6th record.
assert len(df) == get_file.rows and df.columns == JENA_COLUMNS  # (added)
df = df[5::6]

date_time = pd.to_datetime(df.pop('Date Time'), format='%d.%m.%Y %H:%M:%S')
assert date_time[0] == datetime.datetime(2009, 1, 1, 1, 0)  # (added) on the hour
assert date_time[1] - date_time[0] == datetime.timedelta(hours=1)

df.head()

# plot_features = df[plot_cols] ... .plot(subplots=True)  (left out: plots)

# ### Inspect and cleanup
# df.describe().transpose()  (left out: a table; what it shows, the -9999 minimum:)
assert df['wv (m/s)'].min() == -9999.0 and df['max. wv (m/s)'].min() == -9999.0  # (added)

wv = df['wv (m/s)']
bad_wv = wv == -9999.0
wv[bad_wv] = 0.0

max_wv = df['max. wv (m/s)']
bad_max_wv = max_wv == -9999.0
max_wv[bad_max_wv] = 0.0

# The above inplace edits are reflected in the DataFrame.
df['wv (m/s)'].min()
assert df['wv (m/s)'].min() == 0.0 and df['max. wv (m/s)'].min() == 0.0  # (added)
assert int(bad_wv.sum()) == len(BAD_WIND_ROWS)

# ### Feature engineering
# plt.hist2d(df['wd (deg)'], df['wv (m/s)'], ...)  (left out: a plot)
wv = df.pop('wv (m/s)')
max_wv = df.pop('max. wv (m/s)')

# Convert to radians.
wd_rad = df.pop('wd (deg)')*np.pi / 180

# Calculate the wind x and y components.
df['Wx'] = wv*np.cos(wd_rad)
df['Wy'] = wv*np.sin(wd_rad)

# Calculate the max wind x and y components.
df['max Wx'] = max_wv*np.cos(wd_rad)
df['max Wy'] = max_wv*np.sin(wd_rad)

# plt.hist2d(df['Wx'], df['Wy'], ...)  (left out: a plot)
timestamp_s = date_time.map(pd.Timestamp.timestamp)

day = 24*60*60
year = (365.2425)*day

df['Day sin'] = np.sin(timestamp_s * (2 * np.pi / day))
df['Day cos'] = np.cos(timestamp_s * (2 * np.pi / day))
df['Year sin'] = np.sin(timestamp_s * (2 * np.pi / year))
df['Year cos'] = np.cos(timestamp_s * (2 * np.pi / year))
# plt.plot(np.array(df['Day sin'])[:25]) ...  (left out: a plot; what it shows, 1 am:)
np.testing.assert_allclose(df['Day sin'][0], np.sin(2 * np.pi / 24), atol=1e-9)  # (added)

# GAP 4: fft = tf.signal.rfft(df['T (degC)'])   (AttributeError: ember.core has no signal)
fft = np.fft.rfft(df['T (degC)'])
f_per_dataset = np.arange(0, len(fft))

n_samples_h = len(df['T (degC)'])
hours_per_year = 24*365.2524
years_per_dataset = n_samples_h/(hours_per_year)

f_per_year = f_per_dataset/years_per_dataset
# plt.step(f_per_year, np.abs(fft)) ...  (left out: a plot; what it shows:)
peak = np.argmax(np.abs(fft[1:])) + 1 if FULL else np.argmax(np.abs(fft[5:])) + 5  # (added)
assert abs(f_per_year[peak] - (1 if FULL else 365.2524)) < 2 / years_per_dataset, peak

# ### Split the data
column_indices = {name: i for i, name in enumerate(df.columns)}

n = len(df)
train_df = df[0:int(n*0.7)]
val_df = df[int(n*0.7):int(n*0.9)]
test_df = df[int(n*0.9):]

num_features = df.shape[1]
assert num_features == 19 and n == DAYS * 24, (num_features, n)  # (added)

# ### Normalize the data
train_mean = train_df.mean()
train_std = train_df.std()

train_df = (train_df - train_mean) / train_std
val_df = (val_df - train_mean) / train_std
test_df = (test_df - train_mean) / train_std
np.testing.assert_allclose(np.array(train_df).mean(axis=0), 0, atol=1e-9)  # (added)
np.testing.assert_allclose(np.array(train_df).std(axis=0, ddof=1), 1, rtol=1e-9)

df_std = (df - train_mean) / train_std
# df_std = df_std.melt(...); sns.violinplot(...)  (left out: a plot)


# ## Data windowing
# ### 1. Indexes and offsets
class WindowGenerator():  # noqa: UP039
  def __init__(self, input_width, label_width, shift,
               train_df=train_df, val_df=val_df, test_df=test_df,
               label_columns=None):
    # Store the raw data.
    self.train_df = train_df
    self.val_df = val_df
    self.test_df = test_df

    # Work out the label column indices.
    self.label_columns = label_columns
    if label_columns is not None:
      self.label_columns_indices = {name: i for i, name in
                                    enumerate(label_columns)}
    self.column_indices = {name: i for i, name in
                           enumerate(train_df.columns)}

    # Work out the window parameters.
    self.input_width = input_width
    self.label_width = label_width
    self.shift = shift

    self.total_window_size = input_width + shift

    self.input_slice = slice(0, input_width)
    self.input_indices = np.arange(self.total_window_size)[self.input_slice]

    self.label_start = self.total_window_size - self.label_width
    self.labels_slice = slice(self.label_start, None)
    self.label_indices = np.arange(self.total_window_size)[self.labels_slice]

  def __repr__(self):
    return '\n'.join([
        f'Total window size: {self.total_window_size}',
        f'Input indices: {self.input_indices}',
        f'Label indices: {self.label_indices}',
        f'Label column name(s): {self.label_columns}'])


w1 = WindowGenerator(input_width=24, label_width=1, shift=24,
                     label_columns=['T (degC)'])
w1
assert repr(w1) == ('Total window size: 48\nInput indices: [ 0  1  2  3  4  5  6  7  8  9 10 11'
                    ' 12 13 14 15 16 17 18 19 20 21 22 23]\nLabel indices: [47]\nLabel column'
                    " name(s): ['T (degC)']"), repr(w1)  # (added) the tutorial's output

w2 = WindowGenerator(input_width=6, label_width=1, shift=1,
                     label_columns=['T (degC)'])
w2
assert repr(w2) == ("Total window size: 7\nInput indices: [0 1 2 3 4 5]\nLabel indices: [6]\n"
                    "Label column name(s): ['T (degC)']"), repr(w2)  # (added)


# ### 2. Split
def split_window(self, features):
  inputs = features[:, self.input_slice, :]
  labels = features[:, self.labels_slice, :]
  if self.label_columns is not None:
    labels = em.stack(
        [labels[:, :, self.column_indices[name]] for name in self.label_columns],
        axis=-1)

  # Slicing doesn't preserve static shape information, so set the shapes
  # manually. This way the `tf.data.Datasets` are easier to inspect.
  # GAP 3 (by design): inputs.set_shape([None, self.input_width, None])   (the window is a
  # numpy array in a dataset's map, which has no set_shape; em.Tensor.set_shape checks)
  # GAP 3: labels.set_shape([None, self.label_width, None])
  assert tuple(inputs.shape)[1] == self.input_width  # what set_shape would check
  assert tuple(labels.shape)[1] == self.label_width

  return inputs, labels


WindowGenerator.split_window = split_window

# Stack three slices, the length of the total window.
example_window = em.stack([np.array(train_df[:w2.total_window_size]),
                           np.array(train_df[100:100+w2.total_window_size]),
                           np.array(train_df[200:200+w2.total_window_size])])

example_inputs, example_labels = w2.split_window(example_window)

print('All shapes are: (batch, time, features)')
print(f'Window shape: {example_window.shape}')
print(f'Inputs shape: {example_inputs.shape}')
print(f'Labels shape: {example_labels.shape}')
# (added) TF's: (3, 7, 19), (3, 6, 19), (3, 1, 1), float64 as the frame; the values
assert tuple(example_window.shape) == (3, 7, 19) and example_window.dtype == em.float64
assert tuple(example_inputs.shape) == (3, 6, 19) and tuple(example_labels.shape) == (3, 1, 1)
_T = column_indices['T (degC)']
np.testing.assert_array_equal(
    _host(example_labels)[:, 0, 0], np.array(train_df['T (degC)'])[[6, 106, 206]])
np.testing.assert_array_equal(_host(example_inputs)[1], np.array(train_df[100:106]))

# ### 3. Plot
w2.example = example_inputs, example_labels


def plot(self, model=None, plot_col='T (degC)', max_subplots=3):
  inputs, labels = self.example
  drawn = []  # (added) what the figure would show, in place of matplotlib's calls
  plot_col_index = self.column_indices[plot_col]
  max_n = min(max_subplots, len(inputs))
  for n in range(max_n):
    # plt.subplot(max_n, 1, n+1); plt.ylabel(f'{plot_col} [normed]')
    # plt.plot(self.input_indices, inputs[n, :, plot_col_index], label='Inputs', ...)
    shown = {'inputs': (self.input_indices, _host(inputs[n, :, plot_col_index]))}
    drawn.append(shown)

    if self.label_columns:
      label_col_index = self.label_columns_indices.get(plot_col, None)
    else:
      label_col_index = plot_col_index

    if label_col_index is None:
      continue

    # plt.scatter(self.label_indices, labels[n, :, label_col_index], ...)
    shown['labels'] = (self.label_indices, _host(labels[n, :, label_col_index]))
    if model is not None:
      predictions = model(inputs)
      # plt.scatter(self.label_indices, predictions[n, :, label_col_index], marker='X', ...)
      shown['predictions'] = (self.label_indices, _host(predictions[n, :, label_col_index]))

    # if n == 0: plt.legend()

  # plt.xlabel('Time [h]')
  return drawn


WindowGenerator.plot = plot

drawn = w2.plot()
assert len(drawn) == 3 and np.array_equal(drawn[0]['labels'][0], [6])  # (added)
drawn = w2.plot(plot_col='p (mbar)')
assert 'labels' not in drawn[0]  # (added) w2 has labels for T (degC) only


# ### 4. Create `tf.data.Dataset`s
def make_dataset(self, data):
  data = np.array(data, dtype=np.float32)
  ds = nn.utils.timeseries_dataset_from_array(
      data=data,
      targets=None,
      sequence_length=self.total_window_size,
      sequence_stride=1,
      shuffle=True,
      batch_size=32,)

  ds = ds.map(self.split_window)

  return ds


WindowGenerator.make_dataset = make_dataset


@property
def train(self):
  return self.make_dataset(self.train_df)


@property
def val(self):
  return self.make_dataset(self.val_df)


@property
def test(self):
  return self.make_dataset(self.test_df)


@property
def example(self):
  """Get and cache an example batch of `inputs, labels` for plotting."""
  result = getattr(self, '_example', None)
  if result is None:
    # No example batch was found, so get one from the `.train` dataset
    result = next(iter(self.train))
    # And cache it for next time
    self._example = result
  return result


WindowGenerator.train = train
WindowGenerator.val = val
WindowGenerator.test = test
WindowGenerator.example = example

# Each element is an (inputs, label) pair.
spec = w2.train.element_spec
print(spec)
# (added) TF: (TensorSpec(shape=(None, 6, 19), dtype=tf.float32, name=None),
#              TensorSpec(shape=(None, 1, 1), dtype=tf.float32, name=None))
assert [tuple(s.shape) for s in spec] == [(None, 6, 19), (None, 1, 1)], spec
assert all(s.dtype == em.float32 for s in spec), spec

for example_inputs, example_labels in w2.train.take(1):
  print(f'Inputs shape (batch, time, features): {example_inputs.shape}')
  print(f'Labels shape (batch, time, features): {example_labels.shape}')
assert tuple(example_inputs.shape) == (32, 6, 19) and tuple(example_labels.shape) == (32, 1, 1)


def _windows(frame, size):  # (added) every window of `size` consecutive rows, with numpy
  rows = np.array(frame, dtype=np.float32)
  return np.stack([rows[p:p + size] for p in range(len(rows) - size + 1)])


# (added) one pass over w2.val yields every window once: the frame's rows, in order
_seen = np.concatenate([np.concatenate([_host(i).reshape(len(i), -1),
                                        _host(lab).reshape(len(lab), -1)], axis=1)
                        for i, lab in w2.val])
_all = _windows(w2.val_df, 7)
_all = np.concatenate([_all[:, :6].reshape(len(_all), -1), _all[:, 6:, _T]], axis=1)
assert len(_seen) == len(_all) == len(val_df) - 6, (len(_seen), len(_all))
_key = lambda a: np.lexsort(a.T[::-1])  # noqa: E731
np.testing.assert_array_equal(_seen[_key(_seen)], _all[_key(_all)])

# ## Single step models
single_step_window = WindowGenerator(
    input_width=1, label_width=1, shift=1,
    label_columns=['T (degC)'])
single_step_window

for example_inputs, example_labels in single_step_window.train.take(1):
  print(f'Inputs shape (batch, time, features): {example_inputs.shape}')
  print(f'Labels shape (batch, time, features): {example_labels.shape}')
assert tuple(example_inputs.shape) == (32, 1, 19) and tuple(example_labels.shape) == (32, 1, 1)


# ### Baseline
class Baseline(nn.Model):
  def __init__(self, label_index=None):
    super().__init__()
    self.label_index = label_index

  def call(self, inputs):
    if self.label_index is None:
      return inputs
    result = inputs[:, :, self.label_index]
    return result[:, :, em.newaxis]


def _numpy_metrics(predict, window, frame):  # (added) MSE and MAE over every window
  w = _windows(frame, window.total_window_size)
  inputs, labels = w[:, window.input_slice, :], w[:, window.labels_slice, :]
  if window.label_columns is not None:
    labels = labels[:, :, [window.column_indices[c] for c in window.label_columns]]
  err = (predict(inputs) - labels).astype(np.float64)
  return {'loss': np.mean(err ** 2), 'mean_absolute_error': np.mean(np.abs(err))}


def _check(result, expected, rtol=1e-5):  # (added)
  assert list(result) == ['loss', 'mean_absolute_error'], list(result)
  for k in expected:
    np.testing.assert_allclose(result[k], expected[k], rtol=rtol, err_msg=k)


baseline = Baseline(label_index=column_indices['T (degC)'])

baseline.compile(loss=nn.losses.MeanSquaredError(),
                 metrics=[nn.metrics.MeanAbsoluteError()])

val_performance = {}
performance = {}
val_performance['Baseline'] = baseline.evaluate(single_step_window.val, return_dict=True)
performance['Baseline'] = baseline.evaluate(single_step_window.test, verbose=0, return_dict=True)
# (added) persistence, worked out with numpy over every window
_check(val_performance['Baseline'],
       _numpy_metrics(lambda x: x[:, :, _T:_T + 1], single_step_window, val_df))
_check(performance['Baseline'],
       _numpy_metrics(lambda x: x[:, :, _T:_T + 1], single_step_window, test_df))

wide_window = WindowGenerator(
    input_width=24, label_width=24, shift=1,
    label_columns=['T (degC)'])

wide_window

print('Input shape:', wide_window.example[0].shape)
print('Output shape:', baseline(wide_window.example[0]).shape)
assert tuple(wide_window.example[0].shape) == (32, 24, 19)  # (added)
assert tuple(baseline(wide_window.example[0]).shape) == (32, 24, 1)

drawn = wide_window.plot(baseline)
for shown in drawn:  # (added) the prediction is the input, the label the next input
  np.testing.assert_array_equal(shown['predictions'][1], shown['inputs'][1])
  np.testing.assert_array_equal(shown['labels'][1][:-1], shown['inputs'][1][1:])

# ### Linear model
linear = nn.Sequential([
    nn.layers.Dense(units=1)
])

print('Input shape:', single_step_window.example[0].shape)
print('Output shape:', linear(single_step_window.example[0]).shape)
assert tuple(linear(single_step_window.example[0]).shape) == (32, 1, 1)  # (added)

MAX_EPOCHS = 20 if FULL else 1 if SHORT else 3
histories = {}  # (added) every history and EarlyStopping, checked below
untrained = {}  # (added) each model's test MSE and MAE before training


def compile_and_fit(model, window, patience=2):
  untrained[model.name] = _numpy_metrics(lambda x: _host(model(x)), window,  # (added)
                                         window.test_df)
  early_stopping = nn.callbacks.EarlyStopping(monitor='val_loss',
                                              patience=patience,
                                              mode='min')

  model.compile(loss=nn.losses.MeanSquaredError(),
                optimizer=nn.optimizers.Adam(),
                metrics=[nn.metrics.MeanAbsoluteError()])

  history = model.fit(window.train, epochs=MAX_EPOCHS,
                      validation_data=window.val,
                      callbacks=[early_stopping])
  histories[model.name] = history, early_stopping  # (added)
  return history


def _check_trained(model, window, val_result, test_result):
  """(added) evaluate() agrees with fit's last val_loss and with numpy on the predictions."""
  history, stop = histories[model.name]
  assert list(history.history) == ['loss', 'mean_absolute_error', 'val_loss',
                                   'val_mean_absolute_error'], list(history.history)
  losses = history.history['val_loss']
  assert len(losses) == MAX_EPOCHS or (  # stopped: no improvement in the last 2 epochs
      len(losses) >= 3 and min(losses[-2:]) >= min(losses[:-2])), losses
  np.testing.assert_allclose(val_result['loss'], losses[-1], rtol=1e-4)
  _check(test_result, _numpy_metrics(lambda x: _host(model(x)), window, window.test_df),
         rtol=1e-4)
  mae = test_result['mean_absolute_error']
  assert SHORT or mae < untrained[model.name]['mean_absolute_error'], (model.name, mae)


history = compile_and_fit(linear, single_step_window)

val_performance['Linear'] = linear.evaluate(single_step_window.val, return_dict=True)
performance['Linear'] = linear.evaluate(single_step_window.test, verbose=0, return_dict=True)
_check_trained(linear, single_step_window, val_performance['Linear'], performance['Linear'])

print('Input shape:', wide_window.example[0].shape)
print('Output shape:', linear(wide_window.example[0]).shape)
assert tuple(linear(wide_window.example[0]).shape) == (32, 24, 1)  # (added)

drawn = wide_window.plot(linear)
# plt.bar(x = range(len(train_df.columns)), height=linear.layers[0].kernel[:,0].numpy()) ...
height = linear.layers[0].kernel[:, 0].numpy()
assert height.shape == (len(train_df.columns),)  # (added)

# ### Dense
dense = nn.Sequential([
    nn.layers.Dense(units=64, activation='relu'),
    nn.layers.Dense(units=64, activation='relu'),
    nn.layers.Dense(units=1)
])

history = compile_and_fit(dense, single_step_window)

val_performance['Dense'] = dense.evaluate(single_step_window.val, return_dict=True)
performance['Dense'] = dense.evaluate(single_step_window.test, verbose=0, return_dict=True)
_check_trained(dense, single_step_window, val_performance['Dense'], performance['Dense'])

# ### Multi-step dense
CONV_WIDTH = 3
conv_window = WindowGenerator(
    input_width=CONV_WIDTH,
    label_width=1,
    shift=1,
    label_columns=['T (degC)'])

conv_window

drawn = conv_window.plot()
# plt.suptitle("Given 3 hours of inputs, predict 1 hour into the future.")

multi_step_dense = nn.Sequential([
    # Shape: (time, features) => (time*features)
    nn.layers.Flatten(),
    nn.layers.Dense(units=32, activation='relu'),
    nn.layers.Dense(units=32, activation='relu'),
    nn.layers.Dense(units=1),
    # Add back the time dimension.
    # Shape: (outputs) => (1, outputs)
    nn.layers.Reshape([1, -1]),
])

print('Input shape:', conv_window.example[0].shape)
print('Output shape:', multi_step_dense(conv_window.example[0]).shape)
assert tuple(multi_step_dense(conv_window.example[0]).shape) == (32, 1, 1)  # (added)

history = compile_and_fit(multi_step_dense, conv_window)

# IPython.display.clear_output()
val_performance['Multi step dense'] = multi_step_dense.evaluate(conv_window.val, return_dict=True)
performance['Multi step dense'] = multi_step_dense.evaluate(conv_window.test, verbose=0, return_dict=True)
_check_trained(multi_step_dense, conv_window, val_performance['Multi step dense'],
               performance['Multi step dense'])

drawn = conv_window.plot(multi_step_dense)

print('Input shape:', wide_window.example[0].shape)
error = None  # (added)
try:
  print('Output shape:', multi_step_dense(wide_window.example[0]).shape)
except Exception as e:
  print(f'\n{type(e).__name__}:{e}')
  error = e  # (added)
assert isinstance(error, ValueError), error  # (added) Keras: ValueError, 57 != 456

# ### Convolution neural network
conv_model = nn.Sequential([
    nn.layers.Conv1D(filters=32,
                     kernel_size=(CONV_WIDTH,),
                     activation='relu'),
    nn.layers.Dense(units=32, activation='relu'),
    nn.layers.Dense(units=1),
])

print("Conv model on `conv_window`")
print('Input shape:', conv_window.example[0].shape)
print('Output shape:', conv_model(conv_window.example[0]).shape)
assert tuple(conv_model(conv_window.example[0]).shape) == (32, 1, 1)  # (added)

history = compile_and_fit(conv_model, conv_window)

# IPython.display.clear_output()
val_performance['Conv'] = conv_model.evaluate(conv_window.val, return_dict=True)
performance['Conv'] = conv_model.evaluate(conv_window.test, verbose=0, return_dict=True)
_check_trained(conv_model, conv_window, val_performance['Conv'], performance['Conv'])

print("Wide window")
print('Input shape:', wide_window.example[0].shape)
print('Labels shape:', wide_window.example[1].shape)
print('Output shape:', conv_model(wide_window.example[0]).shape)
assert tuple(wide_window.example[1].shape) == (32, 24, 1)  # (added)
assert tuple(conv_model(wide_window.example[0]).shape) == (32, 22, 1)

LABEL_WIDTH = 24
INPUT_WIDTH = LABEL_WIDTH + (CONV_WIDTH - 1)
wide_conv_window = WindowGenerator(
    input_width=INPUT_WIDTH,
    label_width=LABEL_WIDTH,
    shift=1,
    label_columns=['T (degC)'])

wide_conv_window

print("Wide conv window")
print('Input shape:', wide_conv_window.example[0].shape)
print('Labels shape:', wide_conv_window.example[1].shape)
print('Output shape:', conv_model(wide_conv_window.example[0]).shape)
assert tuple(wide_conv_window.example[0].shape) == (32, 26, 19)  # (added)
assert tuple(wide_conv_window.example[1].shape) == (32, 24, 1)
assert tuple(conv_model(wide_conv_window.example[0]).shape) == (32, 24, 1)

drawn = wide_conv_window.plot(conv_model)
# (added) the conv model's output, worked out with numpy (a 'valid' Conv1D, then two Dense)
_x = _host(wide_conv_window.example[0]).astype(np.float64)
(_k, _b), _d1, _d2 = (layer.get_weights() for layer in conv_model.layers)
_h = np.maximum(sum(_x[:, k:k + LABEL_WIDTH] @ _k[k] for k in range(CONV_WIDTH)) + _b, 0)
np.testing.assert_allclose(_host(conv_model(wide_conv_window.example[0])),
                           _np_dense(_np_dense(_h, *_d1, relu=True), *_d2), rtol=1e-4, atol=1e-5)

# ### Recurrent neural network
lstm_model = nn.models.Sequential([
    # Shape [batch, time, features] => [batch, time, lstm_units]
    nn.layers.LSTM(32, return_sequences=True),
    # Shape => [batch, time, features]
    nn.layers.Dense(units=1)
])

print('Input shape:', wide_window.example[0].shape)
print('Output shape:', lstm_model(wide_window.example[0]).shape)
assert tuple(lstm_model(wide_window.example[0]).shape) == (32, 24, 1)  # (added)

history = compile_and_fit(lstm_model, wide_window)

# IPython.display.clear_output()
val_performance['LSTM'] = lstm_model.evaluate(wide_window.val, return_dict=True)
performance['LSTM'] = lstm_model.evaluate(wide_window.test, verbose=0, return_dict=True)
_check_trained(lstm_model, wide_window, val_performance['LSTM'], performance['LSTM'])

drawn = wide_window.plot(lstm_model)
# (added) the LSTM's output, worked out with numpy from its weights
_x = _host(wide_window.example[0]).astype(np.float64)
np.testing.assert_allclose(
    _host(lstm_model(wide_window.example[0])),
    _np_dense(_np_lstm(_x, *lstm_model.layers[0].get_weights())[0],
              *lstm_model.layers[1].get_weights()), rtol=1e-4, atol=1e-5)

# ### Performance
cm = lstm_model.metrics[1]
# GAP 8: cm.metrics   (AttributeError: ember's model.metrics is [Mean (the loss),
# MeanAbsoluteError], Keras 3's [Mean (the loss), CompileMetrics], whose .metrics lists the MAE)
cm_metrics = lstm_model.metrics[1:]
assert [type(m).__name__ for m in cm_metrics] == ['MeanAbsoluteError'], cm_metrics  # (added)

val_performance

x = np.arange(len(performance))
width = 0.3
metric_name = 'mean_absolute_error'
val_mae = [v[metric_name] for v in val_performance.values()]
test_mae = [v[metric_name] for v in performance.values()]
# plt.bar(x - 0.17, val_mae, width, label='Validation') ...  (left out: a plot)

for name, value in performance.items():
  print(f'{name:12s}: {value[metric_name]:0.4f}')
# (added) the trained single-step models beat persistence by 20%, the linear model (which
# starts far from it, see the header) its untrained self by 70%
assert SHORT or all(performance[k][metric_name] < 0.8 * performance['Baseline'][metric_name]
                    for k in ['Dense', 'Multi step dense', 'Conv', 'LSTM']), performance
assert SHORT or (performance['Linear'][metric_name]
                 < 0.3 * untrained[linear.name][metric_name]), performance

# ### Multi-output models
single_step_window = WindowGenerator(
    # `WindowGenerator` returns all features as labels if you
    # don't set the `label_columns` argument.
    input_width=1, label_width=1, shift=1)

wide_window = WindowGenerator(
    input_width=24, label_width=24, shift=1)

for example_inputs, example_labels in wide_window.train.take(1):
  print(f'Inputs shape (batch, time, features): {example_inputs.shape}')
  print(f'Labels shape (batch, time, features): {example_labels.shape}')
assert tuple(example_labels.shape) == (32, 24, 19)  # (added)

baseline = Baseline()
baseline.compile(loss=nn.losses.MeanSquaredError(),
                 metrics=[nn.metrics.MeanAbsoluteError()])

val_performance = {}
performance = {}
val_performance['Baseline'] = baseline.evaluate(wide_window.val, return_dict=True)
performance['Baseline'] = baseline.evaluate(wide_window.test, verbose=0, return_dict=True)
_check(val_performance['Baseline'], _numpy_metrics(lambda x: x, wide_window, val_df))  # (added)
_check(performance['Baseline'], _numpy_metrics(lambda x: x, wide_window, test_df))

dense = nn.Sequential([
    nn.layers.Dense(units=64, activation='relu'),
    nn.layers.Dense(units=64, activation='relu'),
    nn.layers.Dense(units=num_features)
])

history = compile_and_fit(dense, single_step_window)

# IPython.display.clear_output()
val_performance['Dense'] = dense.evaluate(single_step_window.val, return_dict=True)
performance['Dense'] = dense.evaluate(single_step_window.test, verbose=0, return_dict=True)
_check_trained(dense, single_step_window, val_performance['Dense'], performance['Dense'])

# %%time
wide_window = WindowGenerator(
    input_width=24, label_width=24, shift=1)

lstm_model = nn.models.Sequential([
    # Shape [batch, time, features] => [batch, time, lstm_units]
    nn.layers.LSTM(32, return_sequences=True),
    # Shape => [batch, time, features]
    nn.layers.Dense(units=num_features)
])

history = compile_and_fit(lstm_model, wide_window)

# IPython.display.clear_output()
val_performance['LSTM'] = lstm_model.evaluate( wide_window.val, return_dict=True)
performance['LSTM'] = lstm_model.evaluate( wide_window.test, verbose=0, return_dict=True)
_check_trained(lstm_model, wide_window, val_performance['LSTM'], performance['LSTM'])

print()


class ResidualWrapper(nn.Model):
  def __init__(self, model):
    super().__init__()
    self.model = model

  def call(self, inputs, *args, **kwargs):
    delta = self.model(inputs, *args, **kwargs)

    # The prediction for each time step is the input
    # from the previous time step plus the delta
    # calculated by the model.
    return inputs + delta


# %%time
residual_lstm = ResidualWrapper(
    nn.Sequential([
    nn.layers.LSTM(32, return_sequences=True),
    nn.layers.Dense(
        num_features,
        # The predicted deltas should start small.
        # Therefore, initialize the output layer with zeros.
        # GAP 6: kernel_initializer=tf.initializers.zeros())   (AttributeError: no em.initializers)
        kernel_initializer=nn.initializers.zeros())
]))
# (added) with a zero output kernel, the untrained wrapper is the Baseline
np.testing.assert_array_equal(_host(residual_lstm(wide_window.example[0])),
                              _host(wide_window.example[0]))

history = compile_and_fit(residual_lstm, wide_window)

# IPython.display.clear_output()
val_performance['Residual LSTM'] = residual_lstm.evaluate(wide_window.val, return_dict=True)
performance['Residual LSTM'] = residual_lstm.evaluate(wide_window.test, verbose=0, return_dict=True)
_check_trained(residual_lstm, wide_window, val_performance['Residual LSTM'],
               performance['Residual LSTM'])
print()

x = np.arange(len(performance))
width = 0.3

metric_name = 'mean_absolute_error'
val_mae = [v[metric_name] for v in val_performance.values()]
test_mae = [v[metric_name] for v in performance.values()]
# plt.bar(x - 0.17, val_mae, width, label='Validation') ...  (left out: a plot)

for name, value in performance.items():
  print(f'{name:15s}: {value[metric_name]:0.4f}')
# (added) the residual LSTM (which starts as persistence) beats persistence by 10%, the
# dense and LSTM models their untrained selves by 70%
assert SHORT or (performance['Residual LSTM'][metric_name]
                 < 0.9 * performance['Baseline'][metric_name]), performance
assert SHORT or all(performance[k][metric_name] < 0.3 * untrained[m.name][metric_name]
                    for k, m in [('Dense', dense), ('LSTM', lstm_model)]), performance

# ## Multi-step models
OUT_STEPS = 24
multi_window = WindowGenerator(input_width=24,
                               label_width=OUT_STEPS,
                               shift=OUT_STEPS)

drawn = multi_window.plot()
multi_window
assert list(multi_window.label_indices) == list(range(24, 48))  # (added)


# ### Baselines
class MultiStepLastBaseline(nn.Model):
  def call(self, inputs):
    return em.tile(inputs[:, -1:, :], [1, OUT_STEPS, 1])


last_baseline = MultiStepLastBaseline()
last_baseline.compile(loss=nn.losses.MeanSquaredError(),
                      metrics=[nn.metrics.MeanAbsoluteError()])

multi_val_performance = {}
multi_performance = {}

multi_val_performance['Last'] = last_baseline.evaluate(multi_window.val, return_dict=True)
multi_performance['Last'] = last_baseline.evaluate(multi_window.test, verbose=0, return_dict=True)
drawn = multi_window.plot(last_baseline)
_last = lambda x: np.repeat(x[:, -1:, :], OUT_STEPS, axis=1)  # noqa: E731  (added)
_check(multi_val_performance['Last'], _numpy_metrics(_last, multi_window, val_df))
_check(multi_performance['Last'], _numpy_metrics(_last, multi_window, test_df))


class RepeatBaseline(nn.Model):
  def call(self, inputs):
    return inputs


repeat_baseline = RepeatBaseline()
repeat_baseline.compile(loss=nn.losses.MeanSquaredError(),
                        metrics=[nn.metrics.MeanAbsoluteError()])

multi_val_performance['Repeat'] = repeat_baseline.evaluate(multi_window.val, return_dict=True)
multi_performance['Repeat'] = repeat_baseline.evaluate(multi_window.test, verbose=0, return_dict=True)
drawn = multi_window.plot(repeat_baseline)
_check(multi_performance['Repeat'], _numpy_metrics(lambda x: x, multi_window, test_df))  # (added)

# ### Single-shot models
multi_linear_model = nn.Sequential([
    # Take the last time-step.
    # Shape [batch, time, features] => [batch, 1, features]
    nn.layers.Lambda(lambda x: x[:, -1:, :]),
    # Shape => [batch, 1, out_steps*features]
    nn.layers.Dense(OUT_STEPS*num_features,
                    # GAP 6: kernel_initializer=tf.initializers.zeros()),
                    kernel_initializer=nn.initializers.zeros()),
    # Shape => [batch, out_steps, features]
    nn.layers.Reshape([OUT_STEPS, num_features])
])

history = compile_and_fit(multi_linear_model, multi_window)

# IPython.display.clear_output()
multi_val_performance['Linear'] = multi_linear_model.evaluate(multi_window.val, return_dict=True)
multi_performance['Linear'] = multi_linear_model.evaluate(multi_window.test, verbose=0, return_dict=True)
_check_trained(multi_linear_model, multi_window, multi_val_performance['Linear'],
               multi_performance['Linear'])
drawn = multi_window.plot(multi_linear_model)

multi_dense_model = nn.Sequential([
    # Take the last time step.
    # Shape [batch, time, features] => [batch, 1, features]
    nn.layers.Lambda(lambda x: x[:, -1:, :]),
    # Shape => [batch, 1, dense_units]
    nn.layers.Dense(512, activation='relu'),
    # Shape => [batch, out_steps*features]
    nn.layers.Dense(OUT_STEPS*num_features,
                    # GAP 6: kernel_initializer=tf.initializers.zeros()),
                    kernel_initializer=nn.initializers.zeros()),
    # Shape => [batch, out_steps, features]
    nn.layers.Reshape([OUT_STEPS, num_features])
])

history = compile_and_fit(multi_dense_model, multi_window)

# IPython.display.clear_output()
multi_val_performance['Dense'] = multi_dense_model.evaluate(multi_window.val, return_dict=True)
multi_performance['Dense'] = multi_dense_model.evaluate(multi_window.test, verbose=0, return_dict=True)
_check_trained(multi_dense_model, multi_window, multi_val_performance['Dense'],
               multi_performance['Dense'])
drawn = multi_window.plot(multi_dense_model)

CONV_WIDTH = 3
multi_conv_model = nn.Sequential([
    # Shape [batch, time, features] => [batch, CONV_WIDTH, features]
    nn.layers.Lambda(lambda x: x[:, -CONV_WIDTH:, :]),
    # Shape => [batch, 1, conv_units]
    nn.layers.Conv1D(256, activation='relu', kernel_size=(CONV_WIDTH)),
    # Shape => [batch, 1,  out_steps*features]
    nn.layers.Dense(OUT_STEPS*num_features,
                    # GAP 6: kernel_initializer=tf.initializers.zeros()),
                    kernel_initializer=nn.initializers.zeros()),
    # Shape => [batch, out_steps, features]
    nn.layers.Reshape([OUT_STEPS, num_features])
])

history = compile_and_fit(multi_conv_model, multi_window)

# IPython.display.clear_output()

multi_val_performance['Conv'] = multi_conv_model.evaluate(multi_window.val, return_dict=True)
multi_performance['Conv'] = multi_conv_model.evaluate(multi_window.test, verbose=0, return_dict=True)
_check_trained(multi_conv_model, multi_window, multi_val_performance['Conv'],
               multi_performance['Conv'])
drawn = multi_window.plot(multi_conv_model)

multi_lstm_model = nn.Sequential([
    # Shape [batch, time, features] => [batch, lstm_units].
    # Adding more `lstm_units` just overfits more quickly.
    nn.layers.LSTM(32, return_sequences=False),
    # Shape => [batch, out_steps*features].
    nn.layers.Dense(OUT_STEPS*num_features,
                    # GAP 6: kernel_initializer=tf.initializers.zeros()),
                    kernel_initializer=nn.initializers.zeros()),
    # Shape => [batch, out_steps, features].
    nn.layers.Reshape([OUT_STEPS, num_features])
])

history = compile_and_fit(multi_lstm_model, multi_window)

# IPython.display.clear_output()

multi_val_performance['LSTM'] = multi_lstm_model.evaluate(multi_window.val, return_dict=True)
multi_performance['LSTM'] = multi_lstm_model.evaluate(multi_window.test, verbose=0, return_dict=True)
_check_trained(multi_lstm_model, multi_window, multi_val_performance['LSTM'],
               multi_performance['LSTM'])
drawn = multi_window.plot(multi_lstm_model)


# ### Advanced: Autoregressive model
class FeedBack(nn.Model):
  def __init__(self, units, out_steps):
    super().__init__()
    self.out_steps = out_steps
    self.units = units
    self.lstm_cell = nn.layers.LSTMCell(units)
    # Also wrap the LSTMCell in an RNN to simplify the `warmup` method.
    self.lstm_rnn = nn.layers.RNN(self.lstm_cell, return_state=True)
    self.dense = nn.layers.Dense(num_features)


feedback_model = FeedBack(units=32, out_steps=OUT_STEPS)


def warmup(self, inputs):
  # inputs.shape => (batch, time, features)
  # x.shape => (batch, lstm_units)
  x, *state = self.lstm_rnn(inputs)

  # predictions.shape => (batch, features)
  prediction = self.dense(x)
  return prediction, state


FeedBack.warmup = warmup

prediction, state = feedback_model.warmup(multi_window.example[0])
prediction.shape
assert tuple(prediction.shape) == (32, 19) and len(state) == 2  # (added)
assert all(tuple(s.shape) == (32, 32) for s in state)


def call(self, inputs, training=None):
  # Use a TensorArray to capture dynamically unrolled outputs.
  predictions = []
  # Initialize the LSTM state.
  prediction, state = self.warmup(inputs)

  # Insert the first prediction.
  predictions.append(prediction)

  # Run the rest of the prediction steps.
  for n in range(1, self.out_steps):  # noqa: B007
    # Use the last prediction as input.
    x = prediction
    # Execute one lstm step.
    x, state = self.lstm_cell(x, states=state,
                              training=training)
    # Convert the lstm output to a prediction.
    prediction = self.dense(x)
    # Add the prediction to the output.
    predictions.append(prediction)

  # predictions.shape => (time, batch, features)
  predictions = em.stack(predictions)
  # predictions.shape => (batch, time, features)
  predictions = em.transpose(predictions, [1, 0, 2])
  return predictions


FeedBack.call = call

print('Output shape (batch, time, features): ', feedback_model(multi_window.example[0]).shape)
assert tuple(feedback_model(multi_window.example[0]).shape) == (32, OUT_STEPS, 19)  # (added)
# (added) its first step is warmup's prediction
np.testing.assert_allclose(_host(feedback_model(multi_window.example[0]))[:, 0],
                           _host(feedback_model.warmup(multi_window.example[0])[0]), rtol=1e-6)

history = compile_and_fit(feedback_model, multi_window)

# IPython.display.clear_output()

multi_val_performance['AR LSTM'] = feedback_model.evaluate(multi_window.val, return_dict=True)
multi_performance['AR LSTM'] = feedback_model.evaluate(multi_window.test, verbose=0, return_dict=True)
_check_trained(feedback_model, multi_window, multi_val_performance['AR LSTM'],
               multi_performance['AR LSTM'])
drawn = multi_window.plot(feedback_model)
# (added) the autoregressive forecast, worked out with numpy: the shared cell's weights run
# over the 24 inputs, then on each prediction for 23 more steps
_x = _host(multi_window.example[0]).astype(np.float64)
_cell = feedback_model.lstm_cell.get_weights()
_dw = feedback_model.dense.get_weights()
_out, _state = _np_lstm(_x, *_cell)
_steps = [_np_dense(_out[:, -1], *_dw)]
for _ in range(1, OUT_STEPS):
  _out, _state = _np_lstm(_steps[-1][:, None], *_cell, state=_state)
  _steps.append(_np_dense(_out[:, -1], *_dw))
np.testing.assert_allclose(_host(feedback_model(multi_window.example[0])),
                           np.stack(_steps, axis=1), rtol=1e-4, atol=1e-5)

# ### Performance
x = np.arange(len(multi_performance))
width = 0.3

metric_name = 'mean_absolute_error'
val_mae = [v[metric_name] for v in multi_val_performance.values()]
test_mae = [v[metric_name] for v in multi_performance.values()]
# plt.bar(x - 0.17, val_mae, width, label='Validation') ...  (left out: a plot)

for name, value in multi_performance.items():
  print(f'{name:8s}: {value[metric_name]:0.4f}')
# (added) the trained multi-step models beat the Last baseline by 10% (see the header)
assert SHORT or all(multi_performance[k][metric_name] < 0.9 * multi_performance['Last'][metric_name]
                    for k in ['Linear', 'Dense', 'Conv', 'LSTM', 'AR LSTM']), multi_performance
