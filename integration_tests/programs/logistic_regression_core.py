"""Port of tensorflow/docs site/en/guide/core/logistic_regression_core.ipynb ("Logistic
regression for binary classification with Core APIs"): the Wisconsin breast-cancer table
read with pandas, a 75/25 train/test split, the diagnosis mapped to 0/1, a Normalize module
(mean and std of the training features), the sigmoid, the log loss with
sigmoid_cross_entropy_with_logits, a LogisticRegression module that makes its weights on
its first call, an accuracy function, mini-batch gradient descent written by hand over
shuffled tf.data batches for 200 epochs, the confusion matrices, and an export module
(normalization, probabilities, classes) with an input signature, saved and loaded.

Upstream: https://github.com/tensorflow/docs/blob/7c3650212740204359d4ceae481abc79345541be/site/en/guide/core/logistic_regression_core.ipynb
Changed: names only (tf.__version__, tf.random.set_seed/convert_to_tensor/math.reduce_mean/
math.reduce_std/Variable/linspace/cast/math.sigmoid/sigmoid/reduce_mean/random.uniform/add/
matmul/squeeze/float32 -> em.*, tf.nn.sigmoid_cross_entropy_with_logits ->
em.nn_ops.sigmoid_cross_entropy_with_logits, tf.Module -> nn.Layer (which
docs/guide/coming-from.md maps it to), tf.GradientTape -> tape.GradientTape, tf.data.Dataset
-> data.Dataset, tf.function -> graph.function, tf.TensorSpec -> graph.TensorSpec), except
the GAPs below. wdbc.data cannot be downloaded here: this program writes a GENERATED
wdbc.data in the UCI file's layout (no header, comma-separated: an integer id, the diagnosis
'M' or 'B', then 30 measurements, the mean, standard error and largest value of radius,
texture, perimeter, area, smoothness, compactness, concavity, concave points, symmetry and
fractal dimension) with the real file's 569 rows, 212 of them malignant, and read_csv reads
it from its URL. Each measurement is drawn around the real data's mean for its class (e.g.
radius 12.1 benign, 17.5 malignant) with log-normal spread; the perimeter and area follow
from the radius, and one factor shared by each row's measurements makes them correlated,
so the label is learnable but not separable (a logistic regression fitted to all 569 rows
still misclassifies 3 of them). pandas, seaborn, sklearn and matplotlib are not installed:
a small DataFrame stand-in (below) serves read_csv (int64, float64 or str columns, as pandas
infers them), info, head, sample(frac, random_state) (pandas's RandomState(1).choice), drop
of row labels, iloc, a Series' map, describe, transpose, row slices and np.asarray; numpy's
confusion matrix stands in for sk_metrics.confusion_matrix; the plots (pairplot, the sigmoid,
loss and accuracy curves, the heatmaps) are left out and what they show asserted;
show_confusion_matrix returns its matrices to be checked.
Not reduced: upstream's 569 rows and 200 epochs of batch 64 take about 5 s on one CPU core
(EMBER_PROGRAMS_FULL=1 changes nothing). EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 3
epochs, no threshold on what training reached. A numpy seed is added beside upstream's
tf.random.set_seed(22).
Added: the table as read (32 columns, dtypes int64 / str / float64, values against the
generated ones, 427/142 rows in the split: the rows of RandomState(1).choice and the rest in
order); the tensors' shapes, dtypes and values (labels 0/1 from 'B'/'M'); what the pairplot
shows (radius, perimeter and area correlated, larger when malignant); describe's std against
numpy's; Normalize's mean and std against numpy's (population std, ddof=0), the normalized
training columns with mean 0 and std 1, unnorm undoing norm; linspace and the sigmoid
against numpy; log_loss against numpy's stable formula and the notebook's own -mean(y log p
+ (1 - y) log(1 - p)); the untrained model's five probabilities against numpy's sigmoid(Xw +
b), its weights in [0, 1); predict_class and accuracy against numpy; the batches (64 x 6 +
43 and 64, 64, 14; float32; every row once per epoch, a new order each epoch); the first
step's loss and gradients against the notebook's formulas dL/dw = X^T (sigmoid(Xw + b) - y)
/ m and dL/db = mean(sigmoid(Xw + b) - y), and its update against w - 0.01 g; each epoch's
loss and accuracy the mean of its batch values; every test batch's loss and accuracy in the
last epoch against numpy; the final probabilities and classes against numpy; the confusion
matrices against numpy counts; the loaded export module's weights equal to the trained ones
and its classes against numpy on the raw test features. What training reached (CPU run):
the untrained model (weights drawn in [0, 1): large logits) has a training log loss above
0.5 (here 1.02, accuracy 0.82); the final training and test log loss must be below 0.15 and
below a fifth of the untrained loss (they reach 0.068 and 0.096), and the training and test
accuracies above 0.93 (the majority class is 0.63, the untrained model 0.82; they reach
0.978 and 0.979; the same loop written in PyTorch from the same weights reaches 0.07 / 0.977
and 0.11 / 0.972, and a logistic regression fitted to all 569 rows classifies 99.5% of
them), the test error rates (FPR, FNR) each below 0.15 (they are 0.03 and 0.02).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value or behaviour and no error):
1. (silent, harmless here) em.linspace(-10, 10, 500) is float32; tf.linspace gives float64
for int start and stop (as mlp_core.py's GAP 4); upstream casts to float32 next.
4. (silent, harmless here) the order of model.variables: nn.Layer lists them in assignment
order ([w, b]; the export module [w, b, mean, std]), tf.Module by sorted attribute name
([b, w]; [b, w, mean, std]), as mlp_core.py's GAP 5; the gradients follow the same list.
5. no SavedModel (no tf.saved_model.save/load: AttributeError, loud; as mlp_core.py's GAP 3):
a checkpoint of the export module, restored into a new ExportModule around a new
LogisticRegression and a new Normalize (their variables take the saved values), stands in.
Fixed in ember since the first version of this port: GAP 2 (silent): the gradient of
em.nn_ops.sigmoid_cross_entropy_with_logits at a logit of exactly 0 was -labels (relu and abs
each have gradient 0 at 0); it is now sigmoid(0) - labels, as TF's ([-0.25, 0.25] asserted
for the mean over labels [1, 0]). GAP 3 (silent): em.sigmoid was (tanh(x / 2) + 1) / 2, exact
only to about 6e-8 in absolute terms (0.0 below x = -17.3); it is now accurate to a few ulps
in both tails, as TF's (asserted: its value at -20, 2.0611537e-09, and the untrained model's
probabilities to rtol 1e-6 against numpy's sigmoid of its logits). Upstream's lines run as
they are, with TF's values.
Also seen: graph.function traces once per size of a None dimension of its input_signature
(TF: once for all sizes; by design, docs/guide/graphs.md), and a method with an
input_signature, got from its instance, is a plain bound method with no
experimental_get_tracing_count (TF's bound tf.function has it; a method without a signature
has it in ember too).
"""

import os
import pathlib
import tempfile
import types

import numpy as np

import ember.core as em
from ember import checkpoint, data, graph, nn
from ember import tape as tape_lib

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
np.random.seed(0)
workdir = tempfile.TemporaryDirectory()

# ---------------------------------------------------------------------------------------
# The stand-in for the download: wdbc.data in the UCI file's layout (see the header).
_rng = np.random.default_rng(0)
N_ROWS, N_MALIGNANT = 569, 212
_malignant = np.zeros(N_ROWS, bool)
_malignant[_rng.choice(N_ROWS, N_MALIGNANT, replace=False)] = True
_ids = 8670 + _rng.choice(911320502 - 8670, N_ROWS, replace=False)  # unique ids, as the file's
# the real data's class means (benign, malignant) of the ten measurements' mean values, and
# the spread (log-normal sigma) of each
_MEANS = {'radius': (12.15, 17.46, 0.14), 'texture': (17.91, 21.60, 0.2),
          'smoothness': (0.0925, 0.1029, 0.13), 'compactness': (0.080, 0.145, 0.4),
          'concavity': (0.046, 0.161, 0.7), 'concave_poinits': (0.0257, 0.088, 0.5),
          'symmetry': (0.174, 0.193, 0.14), 'fractal_dimension': (0.0629, 0.0627, 0.1)}
# standard errors and largest values, as multiples of the mean value (benign, malignant)
_STE = {'radius': (0.023, 0.035), 'texture': (0.068, 0.056), 'perimeter': (0.026, 0.037),
        'area': (0.046, 0.074), 'smoothness': (0.078, 0.066), 'compactness': (0.27, 0.22),
        'concavity': (0.56, 0.26), 'concave_poinits': (0.39, 0.17), 'symmetry': (0.12, 0.11),
        'fractal_dimension': (0.057, 0.066)}
_LARGEST = {'radius': (1.10, 1.21), 'texture': (1.31, 1.36), 'perimeter': (1.11, 1.23),
            'area': (1.21, 1.45), 'smoothness': (1.35, 1.41), 'compactness': (2.3, 2.6),
            'concavity': (3.6, 2.8), 'concave_poinits': (2.9, 2.1), 'symmetry': (1.55, 1.67),
            'fractal_dimension': (1.26, 1.46)}
_shared = _rng.normal(0, 1, N_ROWS)  # one factor per row that all its measurements share


def _draw(mean_b, mean_m, sigma, size=N_ROWS):
  centre = np.where(_malignant, mean_m, mean_b)
  noise = 0.6 * _shared + 0.8 * _rng.normal(0, 1, size)
  return centre * np.exp(sigma * noise)


_mean_values = {k: _draw(*v) for k, v in _MEANS.items()}
_mean_values['perimeter'] = 2 * np.pi * _mean_values['radius'] * _rng.normal(1.02, 0.02, N_ROWS)
_mean_values['area'] = np.pi * _mean_values['radius'] ** 2 * _rng.normal(1.0, 0.03, N_ROWS)
FEATURE_ORDER = ['radius', 'texture', 'perimeter', 'area', 'smoothness', 'compactness',
                 'concavity', 'concave_poinits', 'symmetry', 'fractal_dimension']
_columns = [_mean_values[k] for k in FEATURE_ORDER]
_columns += [_mean_values[k] * _draw(*_STE[k], 0.3) for k in FEATURE_ORDER]
_columns += [_mean_values[k] * _draw(*_LARGEST[k], 0.1) for k in FEATURE_ORDER]
_text = [[f'{v:.4g}' for v in column] for column in _columns]
WDBC = pathlib.Path(workdir.name) / 'wdbc.data'
with open(WDBC, 'w') as f:
  for i in range(N_ROWS):
    f.write(','.join([str(_ids[i]), 'M' if _malignant[i] else 'B'] + [c[i] for c in _text])
            + '\n')
WDBC_VALUES = np.array([[float(c[i]) for c in _text] for i in range(N_ROWS)])  # as written
DOWNLOADS = {'https://archive.ics.uci.edu/ml/machine-learning-databases/breast-cancer-wisconsin/'
             'wdbc.data': WDBC}


# ---------------------------------------------------------------------------------------
# The stand-in for pandas (not installed here): what the tutorial asks of it.
class Series(np.ndarray):
  """A column: a numpy array and the pandas method upstream calls."""

  def map(self, mapping):  # a dict of ints gives an int64 column, as pandas's
    return np.array([mapping[v] for v in self.tolist()]).view(Series)


class _ILoc:
  def __init__(self, frame):
    self.frame = frame

  def __getitem__(self, key):
    rows, cols = key
    names = self.frame.columns[cols]
    if isinstance(names, str):
      return self.frame._columns[names][rows].view(Series)
    return DataFrame({k: self.frame._columns[k][rows] for k in names}, self.frame.index[rows])


class DataFrame:
  """Named columns (numpy arrays, in order) and row labels, as pandas holds them."""

  def __init__(self, columns, index=None):
    self._columns = {k: np.asarray(v) for k, v in dict(columns).items()}
    n = len(next(iter(self._columns.values())))
    self.index = np.arange(n) if index is None else np.asarray(index)

  @property
  def columns(self):
    return list(self._columns)

  @property
  def shape(self):
    return (len(self.index), len(self._columns))

  @property
  def iloc(self):
    return _ILoc(self)

  def __len__(self):
    return len(self.index)

  def __getitem__(self, rows):  # a row slice
    return DataFrame({k: v[rows] for k, v in self._columns.items()}, self.index[rows])

  def __array__(self, dtype=None, copy=None):
    return np.stack(list(self._columns.values()), axis=1).astype(dtype)

  def info(self):
    print(f'RangeIndex: {len(self)} entries\nData columns (total {len(self._columns)} columns):')
    for i, (k, v) in enumerate(self._columns.items()):
      print(f' {i:<3d} {k:<24s} {len(v)} non-null  {v.dtype if v.dtype != object else "object"}')

  def head(self, n=5):
    return self[:n]

  def sample(self, frac, random_state):
    # pandas: RandomState(random_state).choice(n, size=round(frac * n), replace=False)
    rows = np.random.RandomState(random_state).choice(len(self), size=round(frac * len(self)),
                                                      replace=False)
    return self[rows]

  def drop(self, labels):  # rows by label
    return self[~np.isin(self.index, labels)]

  def describe(self):  # pandas's statistics of each numeric column (std with ddof=1)
    stats = {'count': len, 'mean': np.mean, 'std': lambda v: np.std(v, ddof=1), 'min': np.min,
             '25%': lambda v: np.percentile(v, 25), '50%': np.median,
             '75%': lambda v: np.percentile(v, 75), 'max': np.max}
    return DataFrame({k: np.array([float(f(v)) for f in stats.values()])
                      for k, v in self._columns.items() if v.dtype != object}, list(stats))

  def transpose(self):
    return DataFrame({str(label): np.array([v[i] for v in self._columns.values()])
                      for i, label in enumerate(self.index)}, self.columns)

  def __repr__(self):
    width = 11
    names = list(self._columns)[:8]
    head = ''.join(f'{str(k)[:width - 1]:>{width}}' for k in names)
    rows = [f'{str(label)[:width - 1]:<{width}}' + ''.join(
        f'{(f"{v[i]:.4g}" if v.dtype.kind == "f" else str(v[i]))[:width - 1]:>{width}}'
        for v in (self._columns[k] for k in names)) for i, label in enumerate(self.index)]
    return '\n'.join([' ' * width + head + ' ...'] + rows)


def read_csv(filepath_or_buffer, names):
  """pd.read_csv of a headerless comma-separated file: a column of whole numbers is int64,
  of numbers float64, else str objects, as pandas infers them."""
  with open(DOWNLOADS.get(filepath_or_buffer, filepath_or_buffer)) as f:
    rows = [line.rstrip('\n').split(',') for line in f if line.strip()]
  columns = {}
  for name, column in zip(names, zip(*rows, strict=True), strict=True):
    try:
      values = np.array([float(v) for v in column])
    except ValueError:
      columns[name] = np.array(column, dtype=object)
      continue
    whole = all(v.lstrip('-').isdigit() for v in column)
    columns[name] = values.astype(np.int64) if whole else values
  return DataFrame(columns)


pd = types.SimpleNamespace(read_csv=read_csv)

# sklearn is not installed here: sk_metrics.confusion_matrix(y_true, y_pred) for the labels
# 0 and 1 stands in as numpy (rows: the true label, columns: the predicted one)
sk_metrics = types.SimpleNamespace(confusion_matrix=lambda a, b: np.bincount(
    2 * np.asarray(a).astype(np.int64) + np.asarray(b).astype(np.int64),
    minlength=4).reshape(2, 2))


def np_sigmoid(z):  # Added: numpy's, in float64
  return 1 / (1 + np.exp(-np.asarray(z, np.float64)))


def np_log_loss(logits, y):  # Added: numpy's stable sigmoid cross-entropy, its mean
  z, y = np.asarray(logits, np.float64), np.asarray(y, np.float64)
  return np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))


# ---------------------------------------------------------------------------------------
# ## Setup
# (!pip install -q seaborn; import matplotlib, pyplot, seaborn; rcParams: left out with the
# plots)

print(em.__version__)
# To make the results reproducible, set the random seed value.
em.random.set_seed(22)

# ## Load the data

url = 'https://archive.ics.uci.edu/ml/machine-learning-databases/breast-cancer-wisconsin/wdbc.data'

features = ['radius', 'texture', 'perimeter', 'area', 'smoothness', 'compactness',
            'concavity', 'concave_poinits', 'symmetry', 'fractal_dimension']
column_names = ['id', 'diagnosis']

for attr in ['mean', 'ste', 'largest']:
  for feature in features:
    column_names.append(feature + "_" + attr)

dataset = pd.read_csv(url, names=column_names)

dataset.info()

print(dataset.head())

# Added: the table as pandas reads it
assert dataset.shape == (569, 32) and dataset.columns == column_names
assert dataset.iloc[:, 0].dtype == np.int64 and dataset.iloc[:, 1].dtype == object
assert all(dataset.iloc[:, j].dtype == np.float64 for j in range(2, 32))
np.testing.assert_array_equal(dataset.iloc[:, 0], _ids)
assert dataset.iloc[:, 1].tolist() == ['M' if m else 'B' for m in _malignant]
np.testing.assert_array_equal(np.asarray(dataset.iloc[:, 2:]), WDBC_VALUES)

train_dataset = dataset.sample(frac=0.75, random_state=1)

print(len(train_dataset))

test_dataset = dataset.drop(train_dataset.index)

print(len(test_dataset))

# Added: the split (pandas's rows) and its sizes
assert len(train_dataset) == 427 and len(test_dataset) == 142
_train_rows = np.random.RandomState(1).choice(569, size=427, replace=False)
np.testing.assert_array_equal(train_dataset.index, _train_rows)
np.testing.assert_array_equal(test_dataset.index, np.setdiff1d(np.arange(569), _train_rows))

# The `id` column can be dropped since each row is unique
x_train, y_train = train_dataset.iloc[:, 2:], train_dataset.iloc[:, 1]
x_test, y_test = test_dataset.iloc[:, 2:], test_dataset.iloc[:, 1]

# ## Preprocess the data

y_train, y_test = y_train.map({'B': 0, 'M': 1}), y_test.map({'B': 0, 'M': 1})
x_train, y_train = em.convert_to_tensor(x_train, dtype=em.float32), em.convert_to_tensor(y_train, dtype=em.float32)  # noqa: E501
x_test, y_test = em.convert_to_tensor(x_test, dtype=em.float32), em.convert_to_tensor(y_test, dtype=em.float32)  # noqa: E501

# Added: the tensors
assert x_train.shape == (427, 30) and x_test.shape == (142, 30)
assert y_train.shape == (427,) and y_test.shape == (142,)
assert x_train.dtype == x_test.dtype == y_train.dtype == y_test.dtype == em.float32
np.testing.assert_array_equal(x_train.numpy(), WDBC_VALUES[_train_rows].astype(np.float32))
np.testing.assert_array_equal(y_train.numpy(), _malignant[_train_rows].astype(np.float32))
np.testing.assert_array_equal(y_test.numpy(), _malignant[test_dataset.index].astype(np.float32))
print(f'malignant: {y_train.numpy().mean():.3f} of the training rows, '
      f'{y_test.numpy().mean():.3f} of the test rows')

# sns.pairplot(train_dataset.iloc[:, 1:6], hue = 'diagnosis', diag_kind='kde') is left out;
# what it shows: radius, perimeter and area are highly correlated, and larger when malignant
_pairs = np.asarray(train_dataset.iloc[:, 1:6].iloc[:, 1:], np.float64)
assert train_dataset.iloc[:, 1:6].columns == ['diagnosis', 'radius_mean', 'texture_mean',
                                                'perimeter_mean', 'area_mean']
_corr = np.corrcoef(_pairs.T)
assert _corr[0, 2] > 0.95 and _corr[0, 3] > 0.95 and _corr[2, 3] > 0.95, _corr
_is_m = _malignant[_train_rows]
assert np.all(_pairs[_is_m].mean(0) > _pairs[~_is_m].mean(0))

_stats = train_dataset.describe().transpose()[:10]
print(_stats)
# Added: the statistics (the first ten numeric columns: id and the nine first means)
assert _stats.columns == ['count', 'mean', 'std', 'min', '25%', '50%', '75%', 'max']
np.testing.assert_array_equal(_stats.index, column_names[:1] + column_names[2:11])
np.testing.assert_allclose(np.asarray(_stats)[1:, 2],
                           WDBC_VALUES[_train_rows, :9].std(axis=0, ddof=1), rtol=1e-12)


class Normalize(nn.Layer):
  def __init__(self, x):
    # Initialize the mean and standard deviation for normalization
    self.mean = em.Variable(em.math.reduce_mean(x, axis=0))
    self.std = em.Variable(em.math.reduce_std(x, axis=0))

  def norm(self, x):
    # Normalize the input
    return (x - self.mean)/self.std

  def unnorm(self, x):
    # Unnormalize the input
    return (x * self.std) + self.mean


norm_x = Normalize(x_train)
x_train_norm, x_test_norm = norm_x.norm(x_train), norm_x.norm(x_test)

# Added: the statistics against numpy's (population std, as tf.math.reduce_std), the result
_xt = x_train.numpy().astype(np.float64)
assert norm_x.mean.shape == norm_x.std.shape == (30,) and norm_x.std.dtype == em.float32
np.testing.assert_allclose(norm_x.mean.numpy(), _xt.mean(0), rtol=1e-5)
np.testing.assert_allclose(norm_x.std.numpy(), _xt.std(0), rtol=1e-4)
assert len(norm_x.variables) == 2
np.testing.assert_allclose(x_train_norm.numpy(), (_xt - _xt.mean(0)) / _xt.std(0),
                           rtol=1e-3, atol=1e-4)
np.testing.assert_allclose(x_train_norm.numpy().mean(0), 0, atol=1e-5)
np.testing.assert_allclose(x_train_norm.numpy().std(0), 1, rtol=1e-4)
np.testing.assert_allclose(norm_x.unnorm(x_test_norm).numpy(), x_test.numpy(), rtol=1e-5)

# ## Logistic regression

x = em.linspace(-10, 10, 500)
# GAP 1 (silent): TF's x is float64 here (int start and stop); ember's is float32
assert x.dtype == em.float32
x = em.cast(x, em.float32)
f = lambda x : (1/20)*x + 0.6  # noqa: E731 (upstream's line, unused there too)
# plt.plot(x, tf.math.sigmoid(x)) is left out with the plot; what it plots:
_sig = em.math.sigmoid(x)
assert _sig.shape == (500,) and _sig.dtype == em.float32  # Added
np.testing.assert_allclose(x.numpy(), np.linspace(-10, 10, 500), atol=1e-5)
np.testing.assert_allclose(_sig.numpy(), np_sigmoid(x.numpy()), rtol=1e-6, atol=1e-7)
assert 0 < _sig.numpy().min() < 1e-4 and 1 - 1e-4 < _sig.numpy().max() <= 1
assert np.all(np.diff(_sig.numpy()) >= 0)


# ### The log loss function

def log_loss(y_pred, y):
  # Compute the log loss function
  ce = em.nn_ops.sigmoid_cross_entropy_with_logits(labels=y, logits=y_pred)
  return em.reduce_mean(ce)


# Added: against numpy's stable formula, and the notebook's equation where it is finite
_z = np.array([-30., -4., -0.5, 0., 0.5, 4., 30.], np.float32)
_y = np.array([1., 0., 1., 0., 0., 1., 0.], np.float32)
_ll = log_loss(em.constant(_z), em.constant(_y))
assert _ll.shape == () and _ll.dtype == em.float32
np.testing.assert_allclose(float(_ll), np_log_loss(_z, _y), rtol=1e-6)
_p = np_sigmoid(_z[1:-1])
np.testing.assert_allclose(
    float(log_loss(em.constant(_z[1:-1]), em.constant(_y[1:-1]))),
    -np.mean(_y[1:-1] * np.log(_p) + (1 - _y[1:-1]) * np.log(1 - _p)), rtol=1e-6)
# Added: the gradient at a logit of exactly 0 is (sigmoid(0) - labels) / m, as TF's
_z0 = em.Variable(em.zeros([2]))
with tape_lib.GradientTape() as _t0:
  _l0 = log_loss(_z0, em.constant([1., 0.]))
assert _t0.gradient(_l0, _z0).numpy().tolist() == [-0.25, 0.25]


class LogisticRegression(nn.Layer):

  def __init__(self):
    self.built = False

  def __call__(self, x, train=True):
    # Initialize the model parameters on the first call
    if not self.built:
      # Randomly generate the weights and the bias term
      rand_w = em.random.uniform(shape=[x.shape[-1], 1], seed=22)
      rand_b = em.random.uniform(shape=[], seed=22)
      self.w = em.Variable(rand_w)
      self.b = em.Variable(rand_b)
      self.built = True
    # Compute the model output
    z = em.add(em.matmul(x, self.w), self.b)
    z = em.squeeze(z, axis=1)
    if train:
      return z
    return em.sigmoid(z)


log_reg = LogisticRegression()

y_pred = log_reg(x_train_norm[:5], train=False)
print(y_pred.numpy())

# Added: the untrained model's probabilities against numpy; its weights
assert y_pred.shape == (5,) and y_pred.dtype == em.float32
assert log_reg.w.shape == (30, 1) and log_reg.b.shape == () and log_reg.built
_w0, _b0 = log_reg.w.numpy().copy(), float(log_reg.b.numpy())
assert 0 <= _w0.min() and _w0.max() < 1 and 0 <= _b0 < 1 and _w0.std() > 0.1
np.testing.assert_allclose(y_pred.numpy(), np_sigmoid(x_train_norm.numpy()[:5] @ _w0 + _b0)[:, 0],
                           rtol=1e-5)  # (float32 logits: a few 1e-7 relative, times |logit|)
# the sigmoid itself, on the model's own float32 logits, to rtol 1e-6
_logits5 = log_reg(x_train_norm[:5]).numpy()
np.testing.assert_allclose(y_pred.numpy(), np_sigmoid(_logits5), rtol=1e-6)
# the sigmoid keeps its relative precision far into the tail: TF's value, to a few ulps
np.testing.assert_allclose(em.sigmoid(em.constant(-20.)).numpy(), 2.0611537e-09, rtol=1e-6)
assert np.all((y_pred.numpy() >= 0) & (y_pred.numpy() <= 1))  # (float32 rounds to 0 or 1 far out)
# GAP 4 (silent): TF's log_reg.variables is (b, w) (sorted names); ember's [w, b]
assert [tuple(v.shape) for v in log_reg.variables] == [(30, 1), ()]


def predict_class(y_pred, thresh=0.5):
  # Return a tensor with  `1` if `y_pred` > `0.5`, and `0` otherwise
  return em.cast(y_pred > thresh, em.float32)


def accuracy(y_pred, y):
  # Return the proportion of matches between `y_pred` and `y`
  y_pred = em.math.sigmoid(y_pred)
  y_pred_class = predict_class(y_pred)
  check_equal = em.cast(y_pred_class == y,em.float32)
  acc_val = em.reduce_mean(check_equal)
  return acc_val


# Added: predict_class and accuracy against numpy, and the untrained model's scores
_pc = predict_class(em.constant([0.1, 0.5, 0.50001, 0.9]))
assert _pc.dtype == em.float32 and _pc.numpy().tolist() == [0., 0., 1., 1.]
assert float(accuracy(em.constant([-2., 3., 0., 1.]), em.constant([0., 1., 1., 0.]))) == 0.5
_logits0 = x_train_norm.numpy().astype(np.float64) @ _w0[:, 0] + _b0
untrained_loss = float(log_loss(log_reg(x_train_norm), y_train))
untrained_acc = float(accuracy(log_reg(x_train_norm), y_train))
np.testing.assert_allclose(untrained_loss, np_log_loss(_logits0, y_train.numpy()), rtol=1e-5)
assert abs(untrained_acc - np.mean((_logits0 > 0) == y_train.numpy())) < 1e-6
print(f'untrained: log loss {untrained_loss:.3f}, accuracy {untrained_acc:.3f}')

# ### Train the model

batch_size = 64
train_dataset = data.Dataset.from_tensor_slices((x_train_norm, y_train))
train_dataset = train_dataset.shuffle(buffer_size=x_train.shape[0]).batch(batch_size)
test_dataset = data.Dataset.from_tensor_slices((x_test_norm, y_test))
test_dataset = test_dataset.shuffle(buffer_size=x_test.shape[0]).batch(batch_size)

# Added: the batches (the last keeps the remainder); each epoch every row once, a new order
_x_train_norm_np = x_train_norm.numpy()
_orders = []
for _ in range(2):
  _xs, _ys = zip(*[(np.asarray(xb), np.asarray(yb)) for xb, yb in train_dataset])
  assert [len(b) for b in _xs] == [64] * 6 + [43]
  assert all(b.dtype == np.float32 for b in _xs + _ys)
  _xb = np.concatenate(_xs)
  _order = np.array([np.flatnonzero((_x_train_norm_np == r).all(1))[0] for r in _xb])
  assert sorted(_order.tolist()) == list(range(427))
  np.testing.assert_array_equal(np.concatenate(_ys), y_train.numpy()[_order])
  _orders.append(_order)
assert not np.array_equal(*_orders)
assert [len(np.asarray(yb)) for _, yb in test_dataset] == [64, 64, 14]

# Set training parameters
epochs = 200 if not SHORT else 3  # upstream: 200 (the short run: 3)
learning_rate = 0.01
train_losses, test_losses = [], []
train_accs, test_accs = [], []

# Set up the training loop and begin training
for epoch in range(epochs):
  batch_losses_train, batch_accs_train = [], []
  batch_losses_test, batch_accs_test = [], []

  # Iterate over the training data
  for x_batch, y_batch in train_dataset:
    with tape_lib.GradientTape() as tape:
      y_pred_batch = log_reg(x_batch)
      batch_loss = log_loss(y_pred_batch, y_batch)
    batch_acc = accuracy(y_pred_batch, y_batch)
    if epoch == 0 and not batch_losses_train:  # Added: the first step, against numpy
      _xb, _yb = np.asarray(x_batch, np.float64), np.asarray(y_batch, np.float64)
      _wb = [v.numpy().copy() for v in log_reg.variables]
      _err = np_sigmoid(_xb @ _w0[:, 0] + _b0) - _yb
      np_grads = [(_xb.T @ _err / len(_yb))[:, None], np.mean(_err)]  # the notebook's formulas
      np.testing.assert_allclose(float(batch_loss), np_log_loss(_xb @ _w0[:, 0] + _b0, _yb),
                                 rtol=1e-5)
    # Update the parameters with respect to the gradient calculations
    grads = tape.gradient(batch_loss, log_reg.variables)
    for g,v in zip(grads, log_reg.variables):
      v.assign_sub(learning_rate * g)
    if epoch == 0 and not batch_losses_train:  # Added
      for g, v, before, expected in zip(grads, log_reg.variables, _wb, np_grads):
        assert g.shape == v.shape and g.dtype == em.float32
        np.testing.assert_allclose(g.numpy(), expected, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(v.numpy(), before - 0.01 * expected, rtol=1e-5, atol=1e-7)
    # Keep track of batch-level training performance
    batch_losses_train.append(batch_loss)
    batch_accs_train.append(batch_acc)

  # Iterate over the testing data
  for x_batch, y_batch in test_dataset:
    y_pred_batch = log_reg(x_batch)
    batch_loss = log_loss(y_pred_batch, y_batch)
    batch_acc = accuracy(y_pred_batch, y_batch)
    if epoch == epochs - 1:  # Added: each test batch of the last epoch against numpy
      _logits = np.asarray(x_batch, np.float64) @ log_reg.w.numpy()[:, 0] + float(log_reg.b)
      np.testing.assert_allclose(float(batch_loss), np_log_loss(_logits, y_batch), rtol=1e-4)
      _near = np.abs(_logits) < 1e-4  # leave out near ties, which float32 may flip
      assert abs(float(batch_acc) - np.mean((_logits > 0) == np.asarray(y_batch))) \
          <= _near.mean() + 1e-6
    # Keep track of batch-level testing performance
    batch_losses_test.append(batch_loss)
    batch_accs_test.append(batch_acc)

  # Keep track of epoch-level model performance
  train_loss, train_acc = em.reduce_mean(batch_losses_train), em.reduce_mean(batch_accs_train)
  test_loss, test_acc = em.reduce_mean(batch_losses_test), em.reduce_mean(batch_accs_test)
  train_losses.append(train_loss)
  train_accs.append(train_acc)
  test_losses.append(test_loss)
  test_accs.append(test_acc)
  if epoch % 20 == 0:
    print(f"Epoch: {epoch}, Training log loss: {train_loss:.3f}")
  if epoch in (0, epochs - 1):  # Added: the epoch values are the means of the batch values
    assert len(batch_losses_train) == 7 and len(batch_accs_test) == 3
    for mean, values in ((train_loss, batch_losses_train), (train_acc, batch_accs_train),
                         (test_loss, batch_losses_test), (test_acc, batch_accs_test)):
      assert mean.shape == () and mean.dtype == em.float32
      assert abs(float(mean) - np.mean([float(b) for b in values])) < 1e-6

# ### Performance evaluation
# (the loss and accuracy curves are left out; what they show is asserted below)

print(f"Final training log loss: {train_losses[-1]:.3f}")
print(f"Final testing log Loss: {test_losses[-1]:.3f}")

print(f"Final training accuracy: {train_accs[-1]:.3f}")
print(f"Final testing accuracy: {test_accs[-1]:.3f}")

assert len(train_losses) == len(test_losses) == len(train_accs) == len(test_accs) == epochs
if not SHORT:  # Added: what training reached (see the header)
  assert untrained_loss > 0.5, untrained_loss
  for _losses in (train_losses, test_losses):
    assert float(_losses[-1]) < min(0.15, untrained_loss / 5), (untrained_loss, _losses[-1])
  assert float(train_losses[-1]) < float(train_losses[0])
  assert float(train_accs[-1]) > 0.93 and float(test_accs[-1]) > 0.93, (train_accs[-1],
                                                                         test_accs[-1])


def show_confusion_matrix(y, y_classes, typ):
  # Compute the confusion matrix and normalize it
  # (plt.figure and the seaborn heatmap with its title and labels are left out)
  confusion = sk_metrics.confusion_matrix(y.numpy(), y_classes.numpy())
  confusion_normalized = confusion / confusion.sum(axis=1, keepdims=True)
  print(f"Confusion matrix: {typ}\n{np.round(confusion_normalized, 4)}")
  return confusion, confusion_normalized  # Added: returned to be checked


y_pred_train, y_pred_test = log_reg(x_train_norm, train=False), log_reg(x_test_norm, train=False)
train_classes, test_classes = predict_class(y_pred_train), predict_class(y_pred_test)

# Added: the probabilities and classes against numpy
_w, _b = log_reg.w.numpy()[:, 0].astype(np.float64), float(log_reg.b)
for probs, classes, xn in ((y_pred_train, train_classes, x_train_norm),
                           (y_pred_test, test_classes, x_test_norm)):
  _logits = xn.numpy().astype(np.float64) @ _w + _b
  assert probs.shape == classes.shape == (xn.shape[0],) and classes.dtype == em.float32
  np.testing.assert_allclose(probs.numpy(), np_sigmoid(_logits), rtol=1e-4, atol=1e-6)
  _clear = np.abs(_logits) > 1e-3
  np.testing.assert_array_equal(classes.numpy()[_clear], (_logits > 0)[_clear])

for y_true, classes, typ in ((y_train, train_classes, 'Training'),
                             (y_test, test_classes, 'Testing')):
  confusion, confusion_normalized = show_confusion_matrix(y_true, classes, typ)
  # Added: the counts against numpy; the error rates
  _t, _c = y_true.numpy(), classes.numpy()
  assert confusion.sum() == len(_t) and confusion[1].sum() == _t.sum()
  assert confusion[0, 1] == np.sum((_t == 0) & (_c == 1))  # false positives
  assert confusion[1, 0] == np.sum((_t == 1) & (_c == 0))  # false negatives
  np.testing.assert_allclose(confusion_normalized.sum(1), 1)
  fpr, fnr = confusion_normalized[0, 1], confusion_normalized[1, 0]
  print(f"{typ}: FPR {fpr:.3f}, FNR {fnr:.3f}")
  if not SHORT:
    assert fpr < 0.15 and fnr < 0.15, (fpr, fnr)


# ## Save the model

class ExportModule(nn.Layer):
  def __init__(self, model, norm_x, class_pred):
    # Initialize pre- and post-processing functions
    self.model = model
    self.norm_x = norm_x
    self.class_pred = class_pred

  @graph.function(input_signature=[graph.TensorSpec(shape=[None, None], dtype=em.float32)])
  def __call__(self, x):
    # Run the `ExportModule` for new data points
    x = self.norm_x.norm(x)
    y = self.model(x, train=False)
    y = self.class_pred(y)
    return y


log_reg_export = ExportModule(model=log_reg,
                              norm_x=norm_x,
                              class_pred=predict_class)

models = tempfile.mkdtemp(dir=workdir.name)
save_path = os.path.join(models, 'log_reg_export')
# GAP 5: tf.saved_model.save(log_reg_export, save_path)
saved = checkpoint.Checkpoint(model=log_reg_export).save(save_path)

# GAP 5: log_reg_loaded = tf.saved_model.load(save_path)
log_reg_loaded = ExportModule(model=LogisticRegression(),
                              norm_x=Normalize(em.zeros_like(x_train)),
                              class_pred=predict_class)
checkpoint.Checkpoint(model=log_reg_loaded).restore(saved)
test_preds = log_reg_loaded(x_test)
print(test_preds[:10].numpy())

# Added: the loaded module's variables (GAP 4: TF's order is b, w, mean, std) and classes
assert [tuple(v.shape) for v in log_reg_export.variables] == [(30, 1), (), (30,), (30,)]
for trained, loaded in zip(log_reg_export.variables, log_reg_loaded.variables, strict=True):
  np.testing.assert_array_equal(loaded.numpy(), trained.numpy())
assert test_preds.shape == (142,) and test_preds.dtype == em.float32
assert set(test_preds[:10].numpy().tolist()) <= {0.0, 1.0}
_mu, _sd = norm_x.mean.numpy().astype(np.float64), norm_x.std.numpy().astype(np.float64)
_raw_logits = (x_test.numpy().astype(np.float64) - _mu) / _sd @ _w + _b
_clear = np.abs(_raw_logits) > 1e-3
assert _clear.mean() > 0.95
np.testing.assert_array_equal(test_preds.numpy()[_clear], (_raw_logits > 0)[_clear])
np.testing.assert_array_equal(test_preds.numpy(), test_classes.numpy())
np.testing.assert_array_equal(log_reg_export(x_test[:7]).numpy(), test_classes.numpy()[:7])
assert log_reg_loaded(x_test[:3]).shape == (3,)
