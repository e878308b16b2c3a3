"""Port of tensorflow/docs site/en/tutorials/keras/regression.ipynb ("Basic regression:
Predict fuel efficiency"): the Auto MPG table read with pandas, its unknown values dropped,
Origin one-hot encoded, an 80/20 train/test split, a Normalization layer adapted to the
features, then linear regression on Horsepower alone and on all nine features, and a DNN
(two Dense(64, relu) layers) on each, trained with mean absolute error and Adam using 20%
of the training rows for validation, compared on the test set, saved as dnn_model.keras
and reloaded.

Upstream: https://github.com/tensorflow/docs/blob/7c3650212740204359d4ceae481abc79345541be/site/en/tutorials/keras/regression.ipynb
Changed: names only (tf.keras.Sequential and keras.Sequential -> nn.Sequential,
tensorflow.keras.layers -> nn.layers (Normalization, Dense), tf.keras.optimizers.Adam ->
nn.optimizers.Adam, tf.keras.models.load_model -> nn.models.load_model, tf.linspace ->
em.linspace), except where a GAP says otherwise. The plots (matplotlib, the seaborn
pairplot, plot_loss, plot_horsepower, the scatter and histogram of the predictions) are left
out and what they show asserted; the %%time magics become a printed time.
auto-mpg.data cannot be downloaded here: this program writes a GENERATED auto-mpg.data in
the UCI file's layout (398 rows of eight space-padded columns MPG, Cylinders, Displacement,
Horsepower, Weight, Acceleration, Model Year, Origin (1 USA, 2 Europe, 3 Japan), then a tab
and a quoted car name; "?" for six unknown horsepowers) and read_csv reads it from its URL.
Its cars are drawn with plausible ranges and correlations (cylinders by origin,
displacement by cylinders, horsepower and weight by displacement, acceleration by both);
the learnable relation: MPG = 100 / (0.9 + 0.0011 Weight + 0.006 Horsepower - 0.09 (Model
Year - 70) - 0.15 [Japan]), times 6% log-normal noise. pandas is not installed: a small
DataFrame stand-in below (named numpy columns and row labels) serves read_csv (int64 and
float64 columns, as pandas infers them), copy, tail, isna().sum(), dropna, a column's map,
get_dummies, sample(frac, random_state) (pandas's RandomState(0).choice), drop, describe,
transpose, pop, row slices and np.array(df).
Not reduced: upstream's 398 cars and 100 epochs per fit take about 2 s on one CPU core
(EMBER_PROGRAMS_FULL=1 changes nothing). EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 3
epochs per fit, no threshold on what training reached. Seeds are set for numpy and ember.
Added: the table as read (columns, dtypes, values against the generated ones, six unknown
horsepowers, 392 rows left, the one-hot columns against Origin, 314/78 rows in the split);
the Normalization statistics against numpy's mean and population variance (shape (1, 9),
as Keras broadcasts them) and its output against numpy's; the parameter counts Keras's
summaries give (5, 4,356 and 4,884); predict's shapes ((10, 1), (251, 1)) and
horsepower_model's outputs and fitted line against numpy's (x - mean) / std * kernel +
bias; tf.linspace's float32 values; per fit: the history's keys and 100 epochs, the last
val_loss equal to numpy's MAE on the last 63 of the 314 training rows (Keras's
validation_split holds out the tail before shuffling), evaluate equal to numpy's MAE on the
test set; the prediction errors' mean absolute value is evaluate's; the reloaded model has
the same weights, outputs and test MAE. What training reached (CPU run): the model that
predicts the training mean has a test MAE of about 5.6 (the constant a model that learned
nothing from the features would give), the untrained horsepower_model more than that (it
predicts near 0 MPG; asserted); each single-input model and the linear model must end
below 0.7 of it (they reach 0.62, 0.61 and 0.35), the DNN on all features below 0.45 (it
reaches 0.28), and, as upstream reports, dnn_model < linear_model < horsepower_model.
Found: nothing in the end. Fixed in ember since the first version of this port (all
loud): a Normalization(axis=None) adapted on rank-1 data refused inputs of another rank
(GAP 1; Keras's scalar statistics broadcast); a model built for inputs (None, 1) refused
rank-1 inputs in predict, fit and evaluate (GAP 2; Keras expands an input one rank short
whose expected last dimension is 1); predict and fit(validation_split=...) took an
array-like with __array__ other than numpy arrays and tensors (a pandas DataFrame) for an
iterable of batches (GAP 3; Keras takes it as an array). Upstream's lines are restored.
"""

import os
import pathlib
import tempfile
import time
import types

import numpy as np

import ember.core as em
from ember import nn

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
np.random.seed(0)
em.random.set_seed(0)
workdir = tempfile.TemporaryDirectory()
os.chdir(workdir.name)  # upstream writes dnn_model.keras where it runs

EPOCHS = 100 if not SHORT else 3

# ---------------------------------------------------------------------------------------
# The stand-in for the download: auto-mpg.data in the UCI file's layout (398 cars, eight
# space-padded columns, then a tab and the quoted car name; '?' for six unknown horsepowers).
_rng = np.random.default_rng(0)
N_CARS = 398
_origin = _rng.choice([1, 2, 3], N_CARS, p=[0.625, 0.176, 0.199])
_cylinders = np.array([
    _rng.choice([4, 6, 8], p=[0.3, 0.28, 0.42]) if o == 1 else
    _rng.choice([4, 5, 6], p=[0.9, 0.04, 0.06]) if o == 2 else
    _rng.choice([3, 4, 6], p=[0.05, 0.87, 0.08]) for o in _origin])
_displacement = np.round(_cylinders * _rng.uniform(22, 46, N_CARS))
_horsepower = np.clip(np.round(15 + 0.45 * _displacement + _rng.normal(0, 14, N_CARS)), 46, 230)
_weight = np.clip(np.round(1100 + 10 * _displacement + _rng.normal(0, 300, N_CARS)), 1613, 5140)
_acceleration = np.clip(np.round(15.5 - 0.06 * (_horsepower - 104) + 0.0015 * (_weight - 2970)
                                 + _rng.normal(0, 1.8, N_CARS), 1), 8.0, 24.8)
_model_year = _rng.integers(70, 83, N_CARS)
# the learnable relation: fuel use (gallons per 100 miles) grows with weight and power and
# falls with the model year, then 6% noise
_gallons = (0.9 + 0.0011 * _weight + 0.006 * _horsepower - 0.09 * (_model_year - 70)
            - 0.15 * (_origin == 3))
_mpg = np.clip(np.round(100 / _gallons * np.exp(_rng.normal(0, 0.06, N_CARS)), 1), 9.0, 46.6)
_unknown_hp = _rng.choice(N_CARS, 6, replace=False)
_makes = {1: ['chevrolet', 'ford', 'plymouth', 'amc', 'dodge', 'buick'],
          2: ['volkswagen', 'peugeot', 'fiat', 'volvo', 'audi'],
          3: ['toyota', 'datsun', 'honda', 'mazda', 'subaru']}
AUTO_MPG_DATA = pathlib.Path('auto-mpg.data')
with open(AUTO_MPG_DATA, 'w') as f:
  for i in range(N_CARS):
    hp = '?' if i in _unknown_hp else f'{_horsepower[i]:.1f}'
    name = f'{_rng.choice(_makes[_origin[i]])} model {i}'
    f.write(f'{_mpg[i]:<7.1f}{_cylinders[i]:<4d}{_displacement[i]:<11.1f}{hp:<11s}'
            f'{_weight[i]:.0f}.      {_acceleration[i]:<7.1f}{_model_year[i]:<4d}{_origin[i]}'
            f'\t"{name}"\n')
AUTO_MPG = np.stack([_mpg, _cylinders, _displacement, _horsepower, _weight, _acceleration,
                     _model_year, _origin], axis=1)  # (added) what the checks compare with
DOWNLOADS = {'http://archive.ics.uci.edu/ml/machine-learning-databases/auto-mpg/auto-mpg.data':
             AUTO_MPG_DATA}


# ---------------------------------------------------------------------------------------
# The stand-in for pandas (not installed here): what the tutorial asks of it.
class Series(np.ndarray):
  """A column: a numpy array (with the row labels) and the pandas methods upstream calls."""

  def map(self, mapping):
    return np.array([mapping[v] for v in self.tolist()], dtype=object)


class DataFrame:
  """Named columns (numpy arrays, in order) and row labels, as pandas holds them."""

  def __init__(self, columns, index=None):
    self._columns = {k: np.asarray(v) for k, v in dict(columns).items()}
    if index is not None:  # pd.DataFrame({name: scalar}, index=[...]): one row a label
      self._columns = {k: np.full(len(index), v) if v.ndim == 0 else v
                       for k, v in self._columns.items()}
    n = len(next(iter(self._columns.values()))) if self._columns else 0
    self.index = np.arange(n) if index is None else np.asarray(index)

  @property
  def columns(self):
    return list(self._columns)

  @property
  def shape(self):
    return (len(self.index), len(self._columns))

  def __len__(self):
    return len(self.index)

  def __iter__(self):  # pandas iterates over the column names
    return iter(self._columns)

  def __getitem__(self, key):
    if isinstance(key, str):
      return self._columns[key].view(Series)
    if isinstance(key, list):
      return DataFrame({k: self._columns[k] for k in key}, self.index)
    return DataFrame({k: v[key] for k, v in self._columns.items()}, self.index[key])  # rows

  def __setitem__(self, key, value):
    self._columns[key] = np.asarray(value)

  def __array__(self, dtype=None, copy=None):
    return np.stack(list(self._columns.values()), axis=1).astype(dtype)

  def copy(self):
    return DataFrame({k: v.copy() for k, v in self._columns.items()}, self.index.copy())

  def pop(self, key):
    return self._columns.pop(key).view(Series)

  def tail(self, n=5):
    return self[len(self) - min(n, len(self)):]

  def isna(self):
    return DataFrame({k: (v != v) if v.dtype.kind == 'f' else np.zeros(len(v), bool)
                      for k, v in self._columns.items()}, self.index)

  def sum(self):  # of each column
    return {k: int(v.sum()) for k, v in self._columns.items()}

  def dropna(self):
    return self[~np.any(np.array(self.isna()).astype(bool), axis=1)]

  def sample(self, frac, random_state):
    # pandas: RandomState(random_state).choice(n, size=round(frac * n), replace=False)
    rows = np.random.RandomState(random_state).choice(len(self), size=round(frac * len(self)),
                                                      replace=False)
    return self[rows]

  def drop(self, labels):  # rows by label
    return self[~np.isin(self.index, labels)]

  def describe(self):  # pandas's statistics of each column (std with ddof=1)
    stats = {'count': len, 'mean': np.mean, 'std': lambda v: np.std(v, ddof=1), 'min': np.min,
             '25%': lambda v: np.percentile(v, 25), '50%': np.median,
             '75%': lambda v: np.percentile(v, 75), 'max': np.max}
    return DataFrame({k: np.array([float(f(v)) for f in stats.values()])
                      for k, v in self._columns.items()}, list(stats))

  def transpose(self):
    return DataFrame({str(label): np.array([v[i] for v in self._columns.values()])
                      for i, label in enumerate(self.index)}, self.columns)

  T = property(transpose)

  def __repr__(self):
    width = 12
    head = ''.join(f'{str(k)[:width - 1]:>{width}}' for k in self._columns)
    rows = [f'{str(label)[:width - 1]:<{width}}' + ''.join(
        f'{(f"{v[i]:.3f}" if np.asarray(v).dtype.kind == "f" else str(v[i]))[:width - 1]:>{width}}'
        for v in self._columns.values()) for i, label in enumerate(self.index)]
    return '\n'.join([' ' * width + head] + rows)


def read_csv(filepath_or_buffer, names, na_values, comment, sep, skipinitialspace):
  """pd.read_csv for this file: `comment` ends a line, `sep` (runs of it, with
  skipinitialspace) parts the fields, `na_values` is NaN; a column of whole numbers is
  int64, else float64 (a NaN makes it float64), as pandas infers them."""
  assert sep == ' ' and skipinitialspace
  rows = []
  with open(DOWNLOADS.get(filepath_or_buffer, filepath_or_buffer)) as f:
    for line in f:
      line = line.split(comment, 1)[0]
      if line.strip():
        rows.append([field for field in line.split(sep) if field])
  columns = {}
  for name, column in zip(names, zip(*rows, strict=True), strict=True):
    values = np.array([np.nan if v == na_values else float(v) for v in column])
    whole = all(v != na_values and '.' not in v for v in column)
    columns[name] = values.astype(np.int64) if whole else values
  return DataFrame(columns)


def get_dummies(data, columns, prefix, prefix_sep, dtype):
  """pd.get_dummies: each column replaced by one column per value (sorted), at the end."""
  out = DataFrame({k: v for k, v in data._columns.items() if k not in columns}, data.index)
  for name in columns:
    for value in sorted(set(data[name].tolist())):
      out[f'{prefix}{prefix_sep}{value}'] = (np.asarray(data[name]) == value).astype(dtype)
  return out


pd = types.SimpleNamespace(read_csv=read_csv, DataFrame=DataFrame, get_dummies=get_dummies)


def mae(predictions, labels):
  """(added) numpy's mean absolute error of (N, 1) predictions against (N,) labels."""
  assert predictions.shape == (len(labels), 1)
  return np.mean(np.abs(predictions[:, 0].astype(np.float64) - np.asarray(labels)))


def check_history(history, model, train_x, test_x, name):
  """(added) fit's history and evaluate's result, against numpy: Keras's validation_split
  holds out the last 20% of the rows (63 of 314, before shuffling), so the last epoch's
  val_loss is the MAE of the trained model there, and evaluate gives the test MAE."""
  assert list(history.history) == ['loss', 'val_loss'], list(history.history)
  assert len(history.history['loss']) == EPOCHS and history.epoch == list(range(EPOCHS))
  at = int(np.floor(len(train_x) * (1 - 0.2)))
  assert at == 251
  np.testing.assert_allclose(
      history.history['val_loss'][-1],
      mae(model.predict(train_x[at:], verbose=0), train_labels[at:]), rtol=1e-5)
  np.testing.assert_allclose(test_results[name], mae(model.predict(test_x, verbose=0),
                                                     test_labels), rtol=1e-5)
  print(f'{name}: loss {history.history["loss"][-1]:.3f}, val_loss '
        f'{history.history["val_loss"][-1]:.3f}, test MAE {test_results[name]:.3f}')

# ---------------------------------------------------------------------------------------
# !pip install -q seaborn; import matplotlib.pyplot as plt; import seaborn as sns  (left
# out: the plots; what they show is asserted)

# Make NumPy printouts easier to read.
np.set_printoptions(precision=3, suppress=True)

layers = nn.layers

print(em.__version__)

# The Auto MPG dataset
# Get the data
url = 'http://archive.ics.uci.edu/ml/machine-learning-databases/auto-mpg/auto-mpg.data'
column_names = ['MPG', 'Cylinders', 'Displacement', 'Horsepower', 'Weight',
                'Acceleration', 'Model Year', 'Origin']

raw_dataset = pd.read_csv(url, names=column_names,
                          na_values='?', comment='\t',
                          sep=' ', skipinitialspace=True)

dataset = raw_dataset.copy()
print(dataset.tail())
# (added) the table as pandas reads it
assert dataset.columns == column_names and dataset.shape == (398, 8)
assert [dataset[c].dtype for c in column_names] == [
    np.float64, np.int64, np.float64, np.float64, np.float64, np.float64, np.int64, np.int64]
_known = ~np.isin(np.arange(N_CARS), _unknown_hp)
np.testing.assert_array_equal(np.array(dataset)[_known], AUTO_MPG[_known])

# Clean the data
print(dataset.isna().sum())
assert dataset.isna().sum() == {**dict.fromkeys(column_names, 0), 'Horsepower': 6}

dataset = dataset.dropna()
assert len(dataset) == 392

dataset['Origin'] = dataset['Origin'].map({1: 'USA', 2: 'Europe', 3: 'Japan'})

dataset = pd.get_dummies(dataset, columns=['Origin'], prefix='', prefix_sep='', dtype=float)
print(dataset.tail())
assert dataset.columns == column_names[:-1] + ['Europe', 'Japan', 'USA']
_origin_known = _origin[_known]
for k, name in enumerate(['USA', 'Europe', 'Japan']):
  np.testing.assert_array_equal(dataset[name], (_origin_known == k + 1).astype(np.float64))

# Split the data into training and test sets
train_dataset = dataset.sample(frac=0.8, random_state=0)
test_dataset = dataset.drop(train_dataset.index)
assert len(train_dataset) == 314 and len(test_dataset) == 78  # (added) pandas's sizes

# Inspect the data
# sns.pairplot(train_dataset[['MPG', 'Cylinders', 'Displacement', 'Weight']], diag_kind='kde')
# (left out: a plot)

print(train_dataset.describe().transpose())
# (added) the two parts hold every row once
assert sorted(np.concatenate([train_dataset.index, test_dataset.index])) == sorted(dataset.index)

# Split features from labels
train_features = train_dataset.copy()
test_features = test_dataset.copy()

train_labels = train_features.pop('MPG')
test_labels = test_features.pop('MPG')

# Normalization
print(train_dataset.describe().transpose()[['mean', 'std']])

# The Normalization layer
normalizer = nn.layers.Normalization(axis=-1)

normalizer.adapt(np.array(train_features))

print(normalizer.mean.numpy())
# (added) Keras's statistics: the population mean and variance of each feature, broadcast to
# the input's rank, (1, 9)
TRAIN_X = np.array(train_features)
assert TRAIN_X.shape == (314, 9) and TRAIN_X.dtype == np.float64
assert normalizer.mean.shape == (1, 9) and normalizer.variance.shape == (1, 9)
np.testing.assert_allclose(normalizer.mean.numpy()[0], TRAIN_X.mean(0), rtol=1e-6)
np.testing.assert_allclose(normalizer.variance.numpy()[0], TRAIN_X.var(0), rtol=1e-5)

first = np.array(train_features[:1])

with np.printoptions(precision=2, suppress=True):
  print('First example:', first)
  print()
  print('Normalized:', normalizer(first).numpy())
# (added) against numpy; every feature of the training set then has mean 0 and std 1
np.testing.assert_allclose(normalizer(first).numpy(),
                           (first - TRAIN_X.mean(0)) / TRAIN_X.std(0), rtol=1e-4, atol=1e-5)
np.testing.assert_allclose(normalizer(TRAIN_X).numpy().mean(0), 0, atol=1e-5)
np.testing.assert_allclose(normalizer(TRAIN_X).numpy().std(0), 1, rtol=1e-4)

# Linear regression
# Linear regression with one variable
horsepower = np.array(train_features['Horsepower'])

horsepower_normalizer = layers.Normalization(input_shape=[1,], axis=None)
horsepower_normalizer.adapt(horsepower)

horsepower_model = nn.Sequential([
    horsepower_normalizer,
    layers.Dense(units=1)
])

horsepower_model.summary()
# (added) Keras's counts: the Normalization's mean, variance and count, then 1 kernel + 1 bias
assert horsepower_model.count_params() == 5
assert [v.shape for v in horsepower_model.trainable_variables] == [(1, 1), (1,)]
np.testing.assert_allclose(horsepower_normalizer.mean.numpy().ravel(), horsepower.mean(), rtol=1e-6)

print(horsepower_model.predict(horsepower[:10]))
assert horsepower_model.predict(horsepower[:10], verbose=0).shape == (10, 1)


def linear_horsepower(hp):
  """(added) horsepower_model in numpy: (hp - mean) / std * kernel + bias."""
  kernel, bias = (v.numpy() for v in horsepower_model.layers[1].weights)
  return (np.asarray(hp, np.float64)[:, None] - horsepower.mean()) / horsepower.std() \
      * kernel + bias


np.testing.assert_allclose(horsepower_model.predict(horsepower[:10, None], verbose=0),
                           linear_horsepower(horsepower[:10]), rtol=1e-4, atol=1e-5)
# (added) the untrained model predicts near 0 MPG: far off, as the threshold below needs
untrained_mae = mae(horsepower_model.predict(test_features['Horsepower'][:, None], verbose=0),
                    test_labels)
print(f'untrained horsepower_model test MAE {untrained_mae:.3f}')

horsepower_model.compile(
    optimizer=nn.optimizers.Adam(learning_rate=0.1),
    loss='mean_absolute_error')

start = time.perf_counter()  # %%time
history = horsepower_model.fit(
    train_features['Horsepower'],
    train_labels,
    epochs=EPOCHS,
    # Suppress logging.
    verbose=0,
    # Calculate validation results on 20% of the training data.
    validation_split = 0.2)
print(f'{time.perf_counter() - start:.2f} s')

hist = pd.DataFrame(history.history)
hist['epoch'] = history.epoch
print(hist.tail())

test_results = {}

test_results['horsepower_model'] = horsepower_model.evaluate(
    test_features['Horsepower'],
    test_labels, verbose=0)
check_history(history, horsepower_model, train_features['Horsepower'][:, None],
              test_features['Horsepower'][:, None], 'horsepower_model')

x = em.linspace(0.0, 250, 251)
y = horsepower_model.predict(x)
# (added) tf.linspace's float32 values; the fitted line, as plot_horsepower draws it
assert x.dtype == em.float32 and x.shape == (251,)
np.testing.assert_array_equal(x.numpy(), np.linspace(0.0, 250, 251, dtype=np.float32))
assert y.shape == (251, 1) and y.dtype == np.float32
np.testing.assert_allclose(y, linear_horsepower(x.numpy()), rtol=1e-4, atol=1e-4)

# Linear regression with multiple inputs
linear_model = nn.Sequential([
    normalizer,
    layers.Dense(units=1)
])

print(linear_model.predict(train_features[:10]))
assert linear_model.predict(train_features[:10], verbose=0).shape == (10, 1)

print(linear_model.layers[1].kernel)
assert linear_model.layers[1].kernel.shape == (9, 1)

linear_model.compile(
    optimizer=nn.optimizers.Adam(learning_rate=0.1),
    loss='mean_absolute_error')

start = time.perf_counter()  # %%time
history = linear_model.fit(
    train_features,
    train_labels,
    epochs=EPOCHS,
    # Suppress logging.
    verbose=0,
    # Calculate validation results on 20% of the training data.
    validation_split = 0.2)
print(f'{time.perf_counter() - start:.2f} s')

test_results['linear_model'] = linear_model.evaluate(
    test_features, test_labels, verbose=0)
check_history(history, linear_model, TRAIN_X, np.array(test_features), 'linear_model')


# Regression with a deep neural network (DNN)
def build_and_compile_model(norm):
  model = nn.Sequential([
      norm,
      layers.Dense(64, activation='relu'),
      layers.Dense(64, activation='relu'),
      layers.Dense(1)
  ])

  model.compile(loss='mean_absolute_error',
                optimizer=nn.optimizers.Adam(0.001))
  return model


# Regression using a DNN and a single input
dnn_horsepower_model = build_and_compile_model(horsepower_normalizer)

dnn_horsepower_model.summary()
# (added) Keras's counts: 3 + (64 + 64) + (64 * 64 + 64) + (64 + 1)
assert dnn_horsepower_model.count_params() == 4356
assert sum(int(np.prod(v.shape)) for v in dnn_horsepower_model.trainable_variables) == 4353

start = time.perf_counter()  # %%time
history = dnn_horsepower_model.fit(
    train_features['Horsepower'],
    train_labels,
    validation_split=0.2,
    verbose=0, epochs=EPOCHS)
print(f'{time.perf_counter() - start:.2f} s')

x = em.linspace(0.0, 250, 251)
y = dnn_horsepower_model.predict(x)

test_results['dnn_horsepower_model'] = dnn_horsepower_model.evaluate(
    test_features['Horsepower'], test_labels,
    verbose=0)
check_history(history, dnn_horsepower_model, train_features['Horsepower'][:, None],
              test_features['Horsepower'][:, None], 'dnn_horsepower_model')
assert y.shape == (251, 1)

# Regression using a DNN and multiple inputs
dnn_model = build_and_compile_model(normalizer)
dnn_model.summary()

start = time.perf_counter()  # %%time
history = dnn_model.fit(
    train_features,
    train_labels,
    validation_split=0.2,
    verbose=0, epochs=EPOCHS)
print(f'{time.perf_counter() - start:.2f} s')

test_results['dnn_model'] = dnn_model.evaluate(test_features, test_labels, verbose=0)
check_history(history, dnn_model, TRAIN_X, np.array(test_features), 'dnn_model')
# (added) Keras's counts, now that fit built the model: 19 + 640 + 4160 + 65
assert dnn_model.count_params() == 4884
# (added) the adapted statistics stayed out of training (non-trainable), in all four fits
np.testing.assert_allclose(normalizer.mean.numpy()[0], TRAIN_X.mean(0), rtol=1e-6)
np.testing.assert_allclose(horsepower_normalizer.mean.numpy().ravel(), horsepower.mean(), rtol=1e-6)

# Performance
print(pd.DataFrame(test_results, index=['Mean absolute error [MPG]']).T)
assert all(isinstance(v, float) for v in test_results.values())  # (added) Keras's floats

# Make predictions
test_predictions = dnn_model.predict(test_features).flatten()

error = test_predictions - test_labels

dnn_model.save('dnn_model.keras')

reloaded = nn.models.load_model('dnn_model.keras')

test_results['reloaded'] = reloaded.evaluate(
    test_features, test_labels, verbose=0)

print(pd.DataFrame(test_results, index=['Mean absolute error [MPG]']).T)
# (added) the error plt.hist shows, and its mean absolute value is evaluate's
assert test_predictions.shape == (78,) and error.shape == (78,)
np.testing.assert_allclose(np.mean(np.abs(error)), test_results['dnn_model'], rtol=1e-5)
# (added) the reloaded model is the saved one: same statistics, weights and outputs
assert test_results['reloaded'] == test_results['dnn_model']
np.testing.assert_array_equal(reloaded.predict(np.array(test_features), verbose=0).flatten(),
                              test_predictions)
for saved, loaded in zip(dnn_model.weights, reloaded.weights, strict=True):
  np.testing.assert_array_equal(saved.numpy(), loaded.numpy())

# (added) what training reached: see the header
baseline = np.mean(np.abs(test_labels - np.mean(train_labels)))
print(f'test MAE of predicting the training mean: {baseline:.3f}')
assert untrained_mae > baseline
if not SHORT:
  for name in ['horsepower_model', 'linear_model', 'dnn_horsepower_model']:
    assert test_results[name] < 0.7 * baseline, (name, test_results, baseline)
  assert test_results['dnn_model'] < 0.45 * baseline, (test_results, baseline)
  assert test_results['dnn_model'] < test_results['linear_model'] < test_results[
      'horsepower_model'], test_results
print('all assertions hold')
