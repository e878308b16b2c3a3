"""Port of keras-team/keras-io examples/structured_data/deep_neural_decision_forests.py
("Classification with Neural Decision Forests", the Keras 3 version): the UCI census income
("Adult") files read with pandas and written back as train_data.csv and test_data.csv
(adult.test without its first line and without the "." after its labels), vocabularies of
the 8 categorical columns from the training file, a make_csv_dataset pipeline (batches of
265, "?" as na_value, the label and the categories looked up as ids by StringLookups in
the pipeline, cache()); then two functional models over a dict of 13 Inputs (float32
numbers, int32 ids), each an Embedding per category beside the 5 raw numbers, concatenated,
BatchNormalization, and a subclassed keras.Model: a deep neural decision tree (depth 10 on
all 53 features: a Dense of 1,024 sigmoid routing units, the probability of reaching each
of the 1,024 leaves built level by level with reshape, tile and slices, times the leaves'
softmax(pi)), then a forest of 25 trees of depth 5, each on 26 features picked by
np.random.choice, averaged; each compiled with Adam(0.01), SparseCategoricalCrossentropy
and SparseCategoricalAccuracy, fit for 10 epochs and evaluated on the test file.

Upstream: https://github.com/keras-team/keras-io/blob/1152d883930e8ab91a8c16366d5a21c67d771e82/examples/structured_data/deep_neural_decision_forests.py
(keras-io's older tf.keras version, e.g. at 8bda227c08adf855a8b9ec579840e2a7171fff60, differs:
string Inputs with a new StringLookup per feature inside the model, tf.Variable for pi,
tf.matmul(transpose_b=True), and each Embedding sized by its own vocabulary)
Changed: names only (keras.Model/layers/activations/optimizers/losses/metrics -> nn.*,
keras.ops -> nn.ops, `from keras.layers import StringLookup` -> `from ember.nn.layers import
StringLookup`, `from tensorflow import data as tf_data` -> `from ember import data as
tf_data`); `history =` is added to the fit call, and upstream's unused `vocabulary = ...`
line in encode_inputs gets a `# noqa: F841`. Every upstream line runs as it is.
Nothing can be downloaded here: the program writes a GENERATED adult.data and adult.test in
UCI's layout into a temporary working directory (the generator of tabtransformer.py), and
the read_csv stand-in reads them for upstream's URLs: no header, ", " between fields (so
every string keeps a leading space, as upstream's TARGET_LABELS " <=50K" expect), the 15
columns (age, workclass, fnlwgt, education, education_num, marital_status, occupation,
relationship, race, gender, capital_gain, capital_loss, hours_per_week, native_country,
income_bracket), adult.data's value sets (9 workclasses and 15 occupations with "?" among
them, 16 educations with their education_num, 7 marital statuses, 6 relationships, 5
races, 2 genders, 42 countries with "?"; every value occurs in the training file) and
shares (capital_gain non-zero in 8% of the rows, sometimes 99999, and so on); adult.test
opens with "|1x3 Cross validator" and its labels end in ".". The label is drawn from a fixed
logistic rule (education_num, being married, age, hours, gender, occupation, a wife,
capital gain over 5,000 and loss over 1,800 raise the odds of >50K), about a quarter >50K.
pandas is not installed: a small DataFrame/Series stand-in serves read_csv(header=None,
names=) with pandas's inference, shape, rows by position (test_data[1:]), attribute access
and assignment of a column, apply, unique and to_csv(index=False, header=False).
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream's sizes: adult's 32,561 training and
16,281 test rows): 6,000 training rows and 2,000 test rows, upstream's 10 epochs (230 steps
of 265 rows per model); EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 600 and 300 rows, 1
epoch, no threshold. Seeds are set for numpy (its global generator picks the trees'
features, as upstream) and ember.
Added: the tables as read (shapes, pandas's dtypes, values against the generated ones,
adult.test's first line), the cleaned test table and the files as written; the vocabularies
(sorted, with the leading space; adult's sizes 9, 16, 7, 15, 6, 5, 2, 42); the pipeline's
batches (the CSV's keys without the label, fnlwgt among them, float32 numbers, int64 ids in
the sorted vocabularies, int64 labels, batches of 265, every test row once in file order,
every training row once a pass, shuffled, cache() replaying the first pass's order); that
encode_inputs' `lookup` is the vocabulary loop's last one (native_country's, size 42:
upstream's Keras 3 version gives every category Embedding(42, 6), 53 features); each model
as built: its trees' depth, leaves, pi and routing Dense shapes, each tree's
used_features_mask equal to np.eye(53) rows of np.random.choice replayed from a copy of
numpy's global generator (all 25 forest masks distinct), the parameter counts (59,572 and
25,428; Keras 3.15.1 counts the same) and trainable variables, the output shape (None, 2);
the warning naming 'fnlwgt' (see Found); predict() before and after training against a numpy
forward pass through the weights (Embedding lookups by the Inputs' names, BatchNormalization
with the moving statistics and epsilon 1e-3, the mask, the sigmoid Dense, and each leaf's
probability computed another way: the product of the routing probabilities on its heap path,
node n to 2n with d[n] and to 2n + 1 with 1 - d[n]; softmax(pi); the forest's mean), its
rows summing to 1; before training, one training batch's loss and every gradient
(BatchNormalization on the batch's statistics) against torch's in float64, the weights put
back afterwards; fit's history (keys, lengths); evaluate()'s loss against numpy's
cross-entropy (clipped to [1e-7, 1 - 1e-7]) of predict()'s probabilities over every test row
(Keras weights each batch's loss by its size) and its accuracy against numpy's argmax
accuracy, equal to upstream's printed one.
What training reached (CPU run): each model's test accuracy must exceed both the test rows'
majority rate (0.764: the best a model that ignores the features can do) and its own
untrained accuracy (0.23 to 0.76 over seeds: upstream feeds the raw numbers, capital_gain up
to 99,999, so untrained routing saturates) by 0.03; the generating rule itself reaches 0.837
(the best any model can do). This program reaches 0.817 (tree) and 0.817 (forest), over
ember seeds 0 to 3 0.817 to 0.825 and 0.817 to 0.826 (upstream's text gives no numbers).
The same models in Keras 3.15.1 (torch backend) from ember's initial weights, on the same
batches, train alike: after 12 Adam steps every weight agrees to 2e-5 (relative), fit's
per-epoch loss and accuracy and evaluate's agree to 1e-6.
Found (no `# GAP n:` comment: every upstream line runs, and no value differs from what
Keras computes). Noted, not gaps: (1) fit, evaluate and predict get make_csv_dataset's
dicts with 'fnlwgt', which no Input takes: ember takes each Input's column by its name and
warns once naming 'fnlwgt', as tf.keras did and as Keras does since keras-team/keras#23261
(Keras 3.15.1 itself, its torch backend checked here, warns but zips its Inputs with the
whole dict flattened, 'fnlwgt' included: a plain dict by sorted key, an OrderedDict such as
make_csv_dataset's in its own order, so Inputs get other columns: keras-team/keras#23258);
the predict() checks above take the columns by name, and the warning is asserted. (2) While
building the functional models ember runs each layer's call on zeros of batch 1 (so
ops.shape(features)[0] is 1 there, where Keras has None or a symbolic size); the models'
output shape is still (None, 2).
"""

import csv
import math
import os
import tempfile
import time
import types
import warnings

import numpy as np

import ember.core as em
from ember import data as tf_data
from ember import nn, tape
from ember.nn import layers, ops
from ember.nn.layers import StringLookup

keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
np.random.seed(0)
em.random.set_seed(0)
workdir = tempfile.TemporaryDirectory()
os.chdir(workdir.name)  # upstream writes train_data.csv and test_data.csv where it runs
_start = time.time()

# ---------------------------------------------------------------------------------------
# The stand-in for the download: adult.data and adult.test in UCI's layout (no header, ", "
# between fields, the strings with their leading space; adult.test opens with the line
# "|1x3 Cross validator" and its labels end in "."), drawn from a fixed rule.
N_TRAIN = 32561 if FULL else 600 if SHORT else 6000
N_TEST = 16281 if FULL else 300 if SHORT else 2000
_rng = np.random.default_rng(0)


def _draw(values_and_weights, n):
  values, weights = zip(*values_and_weights.items())
  p = np.array(weights, np.float64)
  return np.array(values, dtype=object)[_rng.choice(len(values), n, p=p / p.sum())]


WORKCLASS = {"Private": 22696, "Self-emp-not-inc": 2541, "Local-gov": 2093, "?": 1836,
             "State-gov": 1298, "Self-emp-inc": 1116, "Federal-gov": 960, "Without-pay": 14,
             "Never-worked": 7}
EDUCATION = {"HS-grad": (10501, 9), "Some-college": (7291, 10), "Bachelors": (5355, 13),
             "Masters": (1723, 14), "Assoc-voc": (1382, 11), "11th": (1175, 7),
             "Assoc-acdm": (1067, 12), "10th": (933, 6), "7th-8th": (646, 4),
             "Prof-school": (576, 15), "9th": (514, 5), "12th": (433, 8),
             "Doctorate": (413, 16), "5th-6th": (333, 3), "1st-4th": (168, 2),
             "Preschool": (51, 1)}  # count in adult.data, education_num
MARITAL = {"Married-civ-spouse": 14976, "Never-married": 10683, "Divorced": 4443,
           "Separated": 1025, "Widowed": 993, "Married-spouse-absent": 418,
           "Married-AF-spouse": 23}
OCCUPATION = {"Prof-specialty": (4140, 0.9), "Craft-repair": (4099, 0.0),
              "Exec-managerial": (4066, 1.0), "Adm-clerical": (3770, -0.3),
              "Sales": (3650, 0.3), "Other-service": (3295, -1.3),
              "Machine-op-inspct": (2002, -0.4), "Transport-moving": (1597, -0.1),
              "Handlers-cleaners": (1370, -0.9), "Farming-fishing": (994, -0.9),
              "Tech-support": (928, 0.5), "Protective-serv": (649, 0.4),
              "Priv-house-serv": (149, -2.0), "Armed-Forces": (9, 0.0)}  # count, log-odds
RACE = {"White": 27816, "Black": 3124, "Asian-Pac-Islander": 1039, "Amer-Indian-Eskimo": 311,
        "Other": 271}
COUNTRIES = ["United-States", "Mexico", "?", "Philippines", "Germany", "Canada",
             "Puerto-Rico", "El-Salvador", "India", "Cuba", "England", "Jamaica", "South",
             "China", "Italy", "Dominican-Republic", "Vietnam", "Guatemala", "Japan", "Poland",
             "Columbia", "Taiwan", "Haiti", "Iran", "Portugal", "Nicaragua", "Peru", "France",
             "Greece", "Ecuador", "Ireland", "Hong", "Cambodia", "Trinadad&Tobago", "Laos",
             "Thailand", "Yugoslavia", "Outlying-US(Guam-USVI-etc)", "Honduras", "Hungary",
             "Scotland", "Holand-Netherlands"]
COUNTRY = dict(zip(COUNTRIES, [29170, 643, 583] + [int(200 * 0.88 ** k) + 1 for k in range(39)]))
B0 = -2.7  # (the rule's intercept: about a quarter of the rows earn >50K, as in adult.data)


def income_logit(age, education_num, marital, relationship, occupation, gender,
                 capital_gain, capital_loss, hours):
  """(added) the log-odds of >50K under the rule the rows are drawn from"""
  married = np.isin(marital, ["Married-civ-spouse", "Married-AF-spouse"])
  occupation_effect = np.array([OCCUPATION.get(o, (0, -0.5))[1] for o in occupation])
  return (B0 + 0.45 * (education_num - 10) + 2.2 * married - 0.0016 * (age - 50) ** 2
          + 0.035 * (np.minimum(hours, 60) - 40) + 0.3 * (gender == "Male")
          + occupation_effect + 0.4 * (relationship == "Wife")
          + 3.5 * (capital_gain > 5000) + 1.2 * (capital_loss > 1800))


RELATIONSHIPS = {"Not-in-family": 8305, "Own-child": 5068, "Unmarried": 3446, "Other-relative": 981}


def draw_people(n, every_value):
  """n rows of the 15 columns (numbers as int64, strings without their leading space) and
  the rule's log-odds of each. every_value: every value of every category occurs (as in
  adult.data, where the vocabularies come from: upstream's lookups have no
  out-of-vocabulary index), in 42 rows chosen at random that take each value in turn."""
  gender = np.where(_rng.random(n) < 0.669, "Male", "Female").astype(object)
  age = np.clip(np.round(17 + _rng.gamma(2.1, 10.0, n)), 17, 90).astype(np.int64)
  education = _draw({k: v[0] for k, v in EDUCATION.items()}, n)
  marital = _draw(MARITAL, n)
  young = age < 25
  marital[young & (_rng.random(n) < 0.75)] = "Never-married"
  relationship = np.where(gender == "Male", "Husband", "Wife").astype(object)
  single = ~np.isin(marital, ["Married-civ-spouse", "Married-AF-spouse"])
  relationship[single] = _draw(RELATIONSHIPS, int(single.sum()))
  relationship[single & young & (_rng.random(n) < 0.6)] = "Own-child"
  race = _draw(RACE, n)
  workclass = _draw(WORKCLASS, n)
  occupation = _draw({k: v[0] for k, v in OCCUPATION.items()}, n)
  occupation[np.isin(workclass, ["?", "Never-worked"])] = "?"
  country = _draw(COUNTRY, n)
  if every_value:
    rows = _rng.choice(n, len(COUNTRY), replace=False)
    for column, values in [(workclass, WORKCLASS), (education, EDUCATION), (marital, MARITAL),
                           (occupation, list(OCCUPATION) + ["?"]),
                           (relationship, ["Husband", "Wife", *RELATIONSHIPS]), (race, RACE),
                           (gender, ["Male", "Female"]), (country, COUNTRY)]:
      column[rows[:len(values)]] = list(values)
  education_num = np.array([EDUCATION[e][1] for e in education], np.int64)
  gain = np.where(_rng.random(n) < 0.083,
                  np.minimum(np.round(np.exp(_rng.normal(8.6, 0.9, n))), 99999), 0)
  gain[(gain > 0) & (_rng.random(n) < 0.06)] = 99999
  loss = np.where((gain == 0) & (_rng.random(n) < 0.047),
                  np.clip(np.round(_rng.normal(1900, 350, n)), 155, 4356), 0)
  hours = np.where(_rng.random(n) < 0.47, 40, np.clip(np.round(_rng.normal(40, 13, n)), 1, 99))
  fnlwgt = np.clip(np.round(np.exp(_rng.normal(12.0, 0.55, n))), 12285, 1484705)
  logit = income_logit(age, education_num, marital, relationship, occupation, gender, gain,
                       loss, hours)
  income = np.where(_rng.random(n) < 1 / (1 + np.exp(-logit)), ">50K", "<=50K").astype(object)
  columns = [age, workclass, fnlwgt, education, education_num, marital, occupation,
             relationship, race, gender, gain, loss, hours, country, income]
  return [c.astype(np.int64) if c.dtype != object else c for c in columns], logit


TRAIN_COLUMNS, TRAIN_LOGIT = draw_people(N_TRAIN, every_value=True)
TEST_COLUMNS, TEST_LOGIT = draw_people(N_TEST, every_value=False)
_STRING_SETS = {1: WORKCLASS, 3: EDUCATION, 5: MARITAL, 6: list(OCCUPATION) + ["?"],
                7: ["Husband", "Wife", *RELATIONSHIPS], 8: RACE, 9: ["Male", "Female"],
                13: COUNTRY}
assert all(set(TRAIN_COLUMNS[j]) == set(v) for j, v in _STRING_SETS.items())
assert all(set(TEST_COLUMNS[j]) <= set(v) for j, v in _STRING_SETS.items())


def write_adult(path, columns, first_line=None, label_suffix=""):
  with open(path, "w") as f:
    if first_line is not None:
      f.write(first_line + "\n")
    for row in zip(*(c.tolist() for c in columns)):
      f.write(", ".join(map(str, row[:-1])) + f", {row[-1]}{label_suffix}\n")
    f.write("\n")  # adult.data and adult.test end with an empty line


write_adult("adult.data", TRAIN_COLUMNS)
write_adult("adult.test", TEST_COLUMNS, first_line="|1x3 Cross validator", label_suffix=".")


# ---------------------------------------------------------------------------------------
# The stand-in for pandas (not installed here): what the example asks of it. read_csv of
# upstream's URL reads the generated file of that name in the working directory.
class Series:
  """A column: values (a numpy array) and row labels, as pandas holds them."""

  def __init__(self, values, index=None):
    self.values = np.asarray(values)
    self.index = np.arange(len(self.values)) if index is None else np.asarray(index)

  def __len__(self):
    return len(self.values)

  def to_numpy(self):
    return self.values

  @property
  def dtype(self):
    return self.values.dtype

  def apply(self, func):
    return Series(np.array([func(v) for v in self.values.tolist()], dtype=object), self.index)

  def unique(self):  # in order of appearance, as pandas
    _, first = np.unique(self.values.astype(str), return_index=True)
    return self.values[np.sort(first)]


class DataFrame:
  """Named columns (numpy arrays, in order) and row labels, as pandas holds them."""

  def __init__(self, columns, index=None):
    object.__setattr__(self, "_columns", {k: np.asarray(v) for k, v in dict(columns).items()})
    n = len(next(iter(self._columns.values())))
    object.__setattr__(self, "index", np.arange(n) if index is None else np.asarray(index))

  @property
  def columns(self):
    return list(self._columns)

  @property
  def shape(self):
    return (len(self.index), len(self._columns))

  @property
  def dtypes(self):
    return {k: v.dtype for k, v in self._columns.items()}

  def __getitem__(self, key):
    if isinstance(key, str):
      return Series(self._columns[key], self.index)
    assert isinstance(key, slice)  # df[1:]: rows by position
    return DataFrame({k: v[key] for k, v in self._columns.items()}, self.index[key])

  def __getattr__(self, name):  # df.income_bracket
    if name.startswith("_") or name not in self._columns:
      raise AttributeError(name)
    return self[name]

  def __setattr__(self, name, value):  # df.income_bracket = series
    assert name in self._columns, name
    assert isinstance(value, Series) and np.array_equal(value.index, self.index)
    self._columns[name] = value.values

  def to_csv(self, path, index, header):
    """pandas's text for each value: integers as they are, floats as repr() ("226802.0"),
    strings as they are (quoted only where the csv module must), NaN as an empty field"""
    assert not index and not header

    def text(v):
      if isinstance(v, float):
        return "" if math.isnan(v) else repr(v)
      return str(v)

    with open(path, "w", newline="") as f:
      writer = csv.writer(f, lineterminator="\n")
      writer.writerows(zip(*([text(v) for v in c.tolist()] for c in self._columns.values())))


def _infer_column(fields):
  """pandas's C parser: int64 if every field is an integer (leading spaces allowed),
  float64 if every present field is a number and some are missing (NaN), else str objects
  (as written, spaces kept) with NaN for the missing fields"""
  present = [f for f in fields if f is not None and f != ""]
  try:
    ints = [int(f) for f in present]
    if len(present) == len(fields):
      return np.array(ints, np.int64)
  except ValueError:
    pass
  try:
    return np.array([float(f) if f not in (None, "") else np.nan for f in fields], np.float64)
  except ValueError:
    return np.array([f if f not in (None, "") else np.nan for f in fields], dtype=object)


def read_csv(filepath_or_url, header="infer", names=None):
  """pd.read_csv(header=None, names=...): empty lines skipped, short rows filled with NaN"""
  assert header is None and names is not None
  with open(os.path.basename(filepath_or_url), newline="") as f:
    rows = [row for row in csv.reader(f) if row]
  assert all(len(row) <= len(names) for row in rows)
  rows = [row + [None] * (len(names) - len(row)) for row in rows]
  return DataFrame({name: _infer_column([row[j] for row in rows])
                    for j, name in enumerate(names)})


pd = types.SimpleNamespace(read_csv=read_csv)

"""
## Prepare the data
"""

CSV_HEADER = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education_num",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "gender",
    "capital_gain",
    "capital_loss",
    "hours_per_week",
    "native_country",
    "income_bracket",
]

train_data_url = (
    "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.data"
)
train_data = pd.read_csv(train_data_url, header=None, names=CSV_HEADER)

test_data_url = (
    "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.test"
)
test_data = pd.read_csv(test_data_url, header=None, names=CSV_HEADER)

print(f"Train dataset shape: {train_data.shape}")
print(f"Test dataset shape: {test_data.shape}")

# (added) the tables as pandas reads them: numbers as int64, strings with their leading
# space; adult.test's first line makes its age column strings and its other numbers float64
NUMBER_COLUMNS = [0, 2, 4, 10, 11, 12]
assert train_data.shape == (N_TRAIN, 15) and test_data.shape == (N_TEST + 1, 15)
for _j, _name in enumerate(CSV_HEADER):
  _want = TRAIN_COLUMNS[_j] if _j in NUMBER_COLUMNS else " " + TRAIN_COLUMNS[_j].astype(object)
  np.testing.assert_array_equal(train_data[_name].to_numpy(), _want)
  assert train_data[_name].dtype == (np.int64 if _j in NUMBER_COLUMNS else object), _name
  assert test_data[_name].dtype == (object if _j not in NUMBER_COLUMNS[1:] else np.float64)
assert test_data["age"].to_numpy()[0] == "|1x3 Cross validator"

"""
Remove the first record (because it is not a valid data example) and a trailing
'dot' in the class labels.
"""

test_data = test_data[1:]
test_data.income_bracket = test_data.income_bracket.apply(
    lambda value: value.replace(".", "")
)

"""
We store the training and test data splits locally as CSV files.
"""

train_data_file = "train_data.csv"
test_data_file = "test_data.csv"

train_data.to_csv(train_data_file, index=False, header=False)
test_data.to_csv(test_data_file, index=False, header=False)

# (added) the cleaned test table and the files as written (the test file's numbers but age
# as floats, "226802.0")
assert test_data.shape == (N_TEST, 15) and test_data.index[0] == 1
assert test_data["income_bracket"].to_numpy().tolist() == [" " + v for v in TEST_COLUMNS[14]]
with open(train_data_file) as _f:
  _first_train_line = _f.readline()
with open(test_data_file) as _f:
  _first_test_line = _f.readline()
assert _first_train_line == ",".join(
    [str(TRAIN_COLUMNS[j][0]) if j in NUMBER_COLUMNS else " " + TRAIN_COLUMNS[j][0]
     for j in range(15)]) + "\n", _first_train_line
assert _first_test_line.split(",")[:3] == [str(TEST_COLUMNS[0][0]), " " + TEST_COLUMNS[1][0],
                                           f"{float(TEST_COLUMNS[2][0])!r}"], _first_test_line

"""
## Define dataset metadata

Here, we define the metadata of the dataset that will be useful for reading and parsing
and encoding input features.
"""

# A list of the numerical feature names.
NUMERIC_FEATURE_NAMES = [
    "age",
    "education_num",
    "capital_gain",
    "capital_loss",
    "hours_per_week",
]
# A dictionary of the categorical features and their vocabulary.
CATEGORICAL_FEATURES_WITH_VOCABULARY = {
    "workclass": sorted(list(train_data["workclass"].unique())),
    "education": sorted(list(train_data["education"].unique())),
    "marital_status": sorted(list(train_data["marital_status"].unique())),
    "occupation": sorted(list(train_data["occupation"].unique())),
    "relationship": sorted(list(train_data["relationship"].unique())),
    "race": sorted(list(train_data["race"].unique())),
    "gender": sorted(list(train_data["gender"].unique())),
    "native_country": sorted(list(train_data["native_country"].unique())),
}
# A list of the columns to ignore from the dataset.
IGNORE_COLUMN_NAMES = ["fnlwgt"]
# A list of the categorical feature names.
CATEGORICAL_FEATURE_NAMES = list(CATEGORICAL_FEATURES_WITH_VOCABULARY.keys())
# A list of all the input features.
FEATURE_NAMES = NUMERIC_FEATURE_NAMES + CATEGORICAL_FEATURE_NAMES
# A list of column default values for each feature.
COLUMN_DEFAULTS = [
    [0.0] if feature_name in NUMERIC_FEATURE_NAMES + IGNORE_COLUMN_NAMES else ["NA"]
    for feature_name in CSV_HEADER
]
# The name of the target feature.
TARGET_FEATURE_NAME = "income_bracket"
# A list of the labels of the target features.
TARGET_LABELS = [" <=50K", " >50K"]

# (added) the vocabularies: every value, with its leading space, sorted (adult.data's sizes)
VOCABULARY_SIZES = [9, 16, 7, 15, 6, 5, 2, 42]
assert [len(v) for v in CATEGORICAL_FEATURES_WITH_VOCABULARY.values()] == VOCABULARY_SIZES
for _j, (_name, _vocabulary) in zip([1, 3, 5, 6, 7, 8, 9, 13],
                                    CATEGORICAL_FEATURES_WITH_VOCABULARY.items()):
  assert _vocabulary == sorted(" " + v for v in _STRING_SETS[_j]), _name
assert COLUMN_DEFAULTS[2] == [0.0] and COLUMN_DEFAULTS[1] == ["NA"]

"""
## Create `tf_data.Dataset` objects for training and validation

We create an input function to read and parse the file, and convert features and labels
into a [`tf_data.Dataset`](https://www.tensorflow.org/guide/datasets)
for training and validation. We also preprocess the input by mapping the target label
to an index.
"""


target_label_lookup = StringLookup(
    vocabulary=TARGET_LABELS, mask_token=None, num_oov_indices=0
)


lookup_dict = {}
for feature_name in CATEGORICAL_FEATURE_NAMES:
    vocabulary = CATEGORICAL_FEATURES_WITH_VOCABULARY[feature_name]
    # Create a lookup to convert a string values to an integer indices.
    # Since we are not using a mask token, nor expecting any out of vocabulary
    # (oov) token, we set mask_token to None and num_oov_indices to 0.
    lookup = StringLookup(vocabulary=vocabulary, mask_token=None, num_oov_indices=0)
    lookup_dict[feature_name] = lookup


def encode_categorical(batch_x, batch_y):
    for feature_name in CATEGORICAL_FEATURE_NAMES:
        batch_x[feature_name] = lookup_dict[feature_name](batch_x[feature_name])

    return batch_x, batch_y


def get_dataset_from_csv(csv_file_path, shuffle=False, batch_size=128):
    dataset = (
        tf_data.experimental.make_csv_dataset(
            csv_file_path,
            batch_size=batch_size,
            column_names=CSV_HEADER,
            column_defaults=COLUMN_DEFAULTS,
            label_name=TARGET_FEATURE_NAME,
            num_epochs=1,
            header=False,
            na_value="?",
            shuffle=shuffle,
        )
        .map(lambda features, target: (features, target_label_lookup(target)))
        .map(encode_categorical)
    )

    return dataset.cache()


# (added) the pipeline: the CSV's keys but the label (fnlwgt among them: upstream ignores it
# only by giving the model no input of that name), the numbers as float32 (TF's [0.0]
# defaults), the categories as their int64 ids in the sorted vocabulary (" ?" keeps its
# leading space, so na_value="?" does not replace it), the label's id as int64; batches of
# 265; every test row once, in file order; every training row once a pass, shuffled, and
# cache() after the shuffle replaying the first pass's order, as TF's does
def host(value):
  """(added) a numpy array of a batch's column (an ember Tensor is read back by .numpy())"""
  return value.numpy() if isinstance(value, em.Tensor) else np.asarray(value)


def pipeline_rows(dataset):
  """(added) the dataset's batches, and their features and labels joined as numpy arrays"""
  batches = list(dataset)
  features = {k: np.concatenate([host(b[0][k]) for b in batches]) for k in batches[0][0]}
  return batches, features, np.concatenate([host(b[1]) for b in batches])


def expected_column(columns, name):
  """(added) a column of the generated rows as the pipeline should give it"""
  j = CSV_HEADER.index(name)
  if name in CATEGORICAL_FEATURE_NAMES:
    vocabulary = CATEGORICAL_FEATURES_WITH_VOCABULARY[name]
    return np.array([vocabulary.index(" " + v) for v in columns[j]], np.int64)
  return columns[j].astype(np.float32)


FEATURE_KEYS = [c for c in CSV_HEADER if c != TARGET_FEATURE_NAME]
_batches, TEST_FEATURES, TEST_LABELS = pipeline_rows(get_dataset_from_csv(test_data_file, batch_size=265))
assert [len(b[1]) for b in _batches] == [265] * (N_TEST // 265) + (
    [N_TEST % 265] if N_TEST % 265 else [])
assert list(_batches[0][0]) == FEATURE_KEYS
for _name in FEATURE_KEYS:
  assert _batches[0][0][_name].dtype == (
      em.int64 if _name in CATEGORICAL_FEATURE_NAMES else em.float32), _name
  assert _batches[0][0][_name].shape == (265,), _name
  np.testing.assert_array_equal(TEST_FEATURES[_name], expected_column(TEST_COLUMNS, _name))
assert _batches[0][1].dtype == em.int64
np.testing.assert_array_equal(TEST_LABELS, TEST_COLUMNS[14] == ">50K")
_train_ds = get_dataset_from_csv(train_data_file, shuffle=True, batch_size=265)
_, _pass1, _labels1 = pipeline_rows(_train_ds)
_, _pass2, _ = pipeline_rows(_train_ds)
_order = np.lexsort([_pass1[c] for c in FEATURE_KEYS])  # (the rows, sorted)
_generated = np.lexsort([expected_column(TRAIN_COLUMNS, c) for c in FEATURE_KEYS])
for _c in FEATURE_KEYS:
  np.testing.assert_array_equal(_pass1[_c][_order],
                                expected_column(TRAIN_COLUMNS, _c)[_generated])
np.testing.assert_array_equal(_labels1[_order], TRAIN_COLUMNS[14][_generated] == ">50K")
assert not np.array_equal(_pass1["fnlwgt"], TRAIN_COLUMNS[2])  # shuffled
assert all(np.array_equal(_pass1[k], _pass2[k]) for k in FEATURE_KEYS)  # cache() replays it
MAJORITY = max(TEST_LABELS.mean(), 1 - TEST_LABELS.mean())
RULE_ACCURACY = np.mean((TEST_LOGIT > 0) == TEST_LABELS)  # the best any model can do


"""
## Create model inputs
"""


def create_model_inputs():
    inputs = {}
    for feature_name in FEATURE_NAMES:
        if feature_name in NUMERIC_FEATURE_NAMES:
            inputs[feature_name] = layers.Input(
                name=feature_name, shape=(), dtype="float32"
            )
        else:
            inputs[feature_name] = layers.Input(
                name=feature_name, shape=(), dtype="int32"
            )
    return inputs


"""
## Encode input features
"""


def encode_inputs(inputs):
    encoded_features = []
    for feature_name in inputs:
        if feature_name in CATEGORICAL_FEATURE_NAMES:
            vocabulary = CATEGORICAL_FEATURES_WITH_VOCABULARY[feature_name]  # noqa: F841 (unused upstream)
            # Create a lookup to convert a string values to an integer indices.
            # Since we are not using a mask token, nor expecting any out of vocabulary
            # (oov) token, we set mask_token to None and num_oov_indices to 0.
            value_index = inputs[feature_name]
            embedding_dims = int(math.sqrt(lookup.vocabulary_size()))
            # Create an embedding layer with the specified dimensions.
            embedding = layers.Embedding(
                input_dim=lookup.vocabulary_size(), output_dim=embedding_dims
            )
            # Convert the index values to embedding representations.
            encoded_feature = embedding(value_index)
        else:
            # Use the numerical features as-is.
            encoded_feature = inputs[feature_name]
            if inputs[feature_name].shape[-1] is None:
                encoded_feature = keras.ops.expand_dims(encoded_feature, -1)

        encoded_features.append(encoded_feature)

    encoded_features = layers.concatenate(encoded_features)
    return encoded_features


# (added) upstream's Keras 3 version sizes every Embedding by `lookup`, the module-level name
# the vocabulary loop left bound to the last lookup (native_country's, 42 values as in
# adult.data): each category gets Embedding(42, int(sqrt(42)) = 6), its ids all below 42
assert lookup is lookup_dict["native_country"] and lookup.vocabulary_size() == 42
EMBEDDING_DIMS = int(math.sqrt(42))  # 6
NUM_FEATURES = len(NUMERIC_FEATURE_NAMES) + EMBEDDING_DIMS * len(CATEGORICAL_FEATURE_NAMES)  # 53


"""
## Deep Neural Decision Tree

A neural decision tree model has two sets of weights to learn. The first set is `pi`,
which represents the probability distribution of the classes in the tree leaves.
The second set is the weights of the routing layer `decision_fn`, which represents the probability
of going to each leave. The forward pass of the model works as follows:

1. The model expects input `features` as a single vector encoding all the features of an instance
in the batch. This vector can be generated from a Convolution Neural Network (CNN) applied to images
or dense transformations applied to structured data features.
2. The model first applies a `used_features_mask` to randomly select a subset of input features to use.
3. Then, the model computes the probabilities (`mu`) for the input instances to reach the tree leaves
by iteratively performing a *stochastic* routing throughout the tree levels.
4. Finally, the probabilities of reaching the leaves are combined by the class probabilities at the
leaves to produce the final `outputs`.
"""


class NeuralDecisionTree(keras.Model):
    def __init__(self, depth, num_features, used_features_rate, num_classes):
        super().__init__()
        self.depth = depth
        self.num_leaves = 2**depth
        self.num_classes = num_classes

        # Create a mask for the randomly selected features.
        num_used_features = int(num_features * used_features_rate)
        one_hot = np.eye(num_features)
        sampled_feature_indices = np.random.choice(
            np.arange(num_features), num_used_features, replace=False
        )
        self.used_features_mask = ops.convert_to_tensor(
            one_hot[sampled_feature_indices], dtype="float32"
        )

        # Initialize the weights of the classes in leaves.
        self.pi = self.add_weight(
            initializer="random_normal",
            shape=[self.num_leaves, self.num_classes],
            dtype="float32",
            trainable=True,
        )

        # Initialize the stochastic routing layer.
        self.decision_fn = layers.Dense(
            units=self.num_leaves, activation="sigmoid", name="decision"
        )

    def call(self, features):
        batch_size = ops.shape(features)[0]

        # Apply the feature mask to the input features.
        features = ops.matmul(
            features, ops.transpose(self.used_features_mask)
        )  # [batch_size, num_used_features]
        # Compute the routing probabilities.
        decisions = ops.expand_dims(
            self.decision_fn(features), axis=2
        )  # [batch_size, num_leaves, 1]
        # Concatenate the routing probabilities with their complements.
        decisions = layers.concatenate(
            [decisions, 1 - decisions], axis=2
        )  # [batch_size, num_leaves, 2]

        mu = ops.ones([batch_size, 1, 1])

        begin_idx = 1
        end_idx = 2
        # Traverse the tree in breadth-first order.
        for level in range(self.depth):
            mu = ops.reshape(mu, [batch_size, -1, 1])  # [batch_size, 2 ** level, 1]
            mu = ops.tile(mu, (1, 1, 2))  # [batch_size, 2 ** level, 2]
            level_decisions = decisions[
                :, begin_idx:end_idx, :
            ]  # [batch_size, 2 ** level, 2]
            mu = mu * level_decisions  # [batch_size, 2**level, 2]
            begin_idx = end_idx
            end_idx = begin_idx + 2 ** (level + 1)

        mu = ops.reshape(mu, [batch_size, self.num_leaves])  # [batch_size, num_leaves]
        probabilities = keras.activations.softmax(self.pi)  # [num_leaves, num_classes]
        outputs = ops.matmul(mu, probabilities)  # [batch_size, num_classes]
        return outputs


"""
## Deep Neural Decision Forest

The neural decision forest model consists of a set of neural decision trees that are
trained simultaneously. The output of the forest model is the average outputs of its trees.
"""


class NeuralDecisionForest(keras.Model):
    def __init__(self, num_trees, depth, num_features, used_features_rate, num_classes):
        super().__init__()
        self.ensemble = []
        # Initialize the ensemble by adding NeuralDecisionTree instances.
        # Each tree will have its own randomly selected input features to use.
        for _ in range(num_trees):
            self.ensemble.append(
                NeuralDecisionTree(depth, num_features, used_features_rate, num_classes)
            )

    def call(self, inputs):
        # Initialize the outputs: a [batch_size, num_classes] matrix of zeros.
        batch_size = ops.shape(inputs)[0]
        outputs = ops.zeros([batch_size, num_classes])

        # Aggregate the outputs of trees in the ensemble.
        for tree in self.ensemble:
            outputs += tree(inputs)
        # Divide the outputs by the ensemble size to get the average.
        outputs /= len(self.ensemble)
        return outputs


"""
Finally, let's set up the code that will train and evaluate the model.
"""

results = {}  # (added) each experiment's history, accuracy and evaluate's [loss, accuracy]
learning_rate = 0.01
batch_size = 265
num_epochs = 1 if SHORT else 10


def run_experiment(model):
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate=learning_rate),
        loss=keras.losses.SparseCategoricalCrossentropy(),
        metrics=[keras.metrics.SparseCategoricalAccuracy()],
    )

    print("Start training the model...")
    train_dataset = get_dataset_from_csv(
        train_data_file, shuffle=True, batch_size=batch_size
    )

    history = model.fit(train_dataset, epochs=num_epochs)  # (added: `history =`)
    print("Model training finished")

    print("Evaluating the model on the test data...")
    test_dataset = get_dataset_from_csv(test_data_file, batch_size=batch_size)

    _, accuracy = model.evaluate(test_dataset)
    print(f"Test accuracy: {round(accuracy * 100, 2)}%")

    results[model] = history, accuracy, model.evaluate(test_dataset, verbose=0)  # (added)


# ---------------------------------------------------------------------------------------
# (added) the models checked against numpy (forward pass) and torch (gradients)


def np_weights(layer):
  return [v.numpy().astype(np.float64) for v in layer.weights]


def np_features(model, features):
  """the rows' numbers and embeddings side by side in the Inputs' order (FEATURE_NAMES),
  through BatchNormalization at inference (the moving statistics, Keras's epsilon 1e-3)"""
  embeddings = {l.input.name: np_weights(l)[0] for l in model.layers
                if isinstance(l, layers.Embedding)}
  assert sorted(embeddings) == sorted(CATEGORICAL_FEATURE_NAMES)
  assert all(e.shape == (42, EMBEDDING_DIMS) for e in embeddings.values())
  x = np.concatenate([features[n].astype(np.float64)[:, None] if n in NUMERIC_FEATURE_NAMES
                      else embeddings[n][features[n]] for n in FEATURE_NAMES], axis=1)
  (batch_norm,) = [l for l in model.layers if isinstance(l, layers.BatchNormalization)]
  assert [v.name.split("/")[-1].split(":")[0] for v in batch_norm.weights] == [
      "gamma", "beta", "moving_mean", "moving_variance"]
  gamma, beta, moving_mean, moving_variance = np_weights(batch_norm)
  return (x - moving_mean) / np.sqrt(moving_variance + 1e-3) * gamma + beta


def np_tree(tree, x):
  """a tree's class probabilities, computed another way: the heap's node n (the root is 1)
  sends a row to its child 2n with probability d[n] = sigmoid(Dense(features))[n] and to
  2n + 1 with 1 - d[n]; leaf l is node 2**depth + l, reached with the product of the
  probabilities on its path; the leaves' classes are softmax(pi)"""
  kernel, bias = np_weights(tree.decision_fn)
  z = x @ tree.used_features_mask.numpy().T.astype(np.float64) @ kernel + bias
  d = 0.5 * (1 + np.tanh(z / 2))  # sigmoid(z), without overflow
  leaves = 2 ** tree.depth
  mu = np.ones((len(x), leaves))
  for level in range(tree.depth):  # each leaf's ancestor on this level, and the child taken
    ancestor = (leaves + np.arange(leaves)) >> (tree.depth - level)
    child = (leaves + np.arange(leaves)) >> (tree.depth - level - 1)
    mu *= np.where(child % 2 == 0, d[:, ancestor], 1 - d[:, ancestor])
  pi = tree.pi.numpy().astype(np.float64)
  leaf_classes = np.exp(pi - pi.max(axis=1, keepdims=True))
  return mu @ (leaf_classes / leaf_classes.sum(axis=1, keepdims=True))


def trees_of(model):
  (top,) = [l for l in model.layers if isinstance(l, (NeuralDecisionTree, NeuralDecisionForest))]
  return [top] if isinstance(top, NeuralDecisionTree) else top.ensemble


def np_model(model, features):
  x = np_features(model, features)
  return np.mean([np_tree(tree, x) for tree in trees_of(model)], axis=0)


def predictions_and_accuracy(model):
  """predict() over the test pipeline, and numpy's accuracy of it (argmax against the label)"""
  p = model.predict(get_dataset_from_csv(test_data_file, batch_size=batch_size), verbose=0)
  assert p.shape == (N_TEST, 2) and p.dtype == np.float32
  return p, np.mean(np.argmax(p, axis=1) == TEST_LABELS)


untrained = {}  # (added) each model's test accuracy before training


def check_model(model, depths, used):
  """(added) the model as built: its trees (depth, leaves, pi, the Dense of 2**depth sigmoid
  units over the features np.random.choice picked, replayed from numpy's global generator),
  the parameter count, the output shape; predict() against numpy's forward pass"""
  trees = trees_of(model)
  assert [t.depth for t in trees] == depths and [t.num_leaves for t in trees] == [
      2 ** d for d in depths]
  for tree, depth, n in zip(trees, depths, used):
    picked = _masks.choice(np.arange(NUM_FEATURES), n, replace=False)
    assert tree.used_features_mask.dtype == em.float32
    np.testing.assert_array_equal(tree.used_features_mask.numpy(), np.eye(NUM_FEATURES)[picked])
    assert tree.pi.shape == (2 ** depth, num_classes) and tree.pi.trainable
    assert tree.decision_fn.kernel.shape == (n, 2 ** depth)
  assert len({t.used_features_mask.numpy().tobytes() for t in trees}) == len(trees)
  # the embeddings (8 x 42 x 6), BatchNormalization's 4 x 53, each tree's pi and Dense
  assert model.count_params() == 8 * 42 * EMBEDDING_DIMS + 4 * NUM_FEATURES + sum(
      2 ** d * num_classes + n * 2 ** d + 2 ** d for d, n in zip(depths, used))
  assert len(model.trainable_variables) == 8 + 2 + 3 * len(trees)
  assert tuple(model.output.shape) == (None, num_classes)
  with warnings.catch_warnings(record=True) as caught:  # the model's first call with data
    warnings.simplefilter("always")
    p, untrained[model] = predictions_and_accuracy(model)
  assert any("fnlwgt" in str(w.message) for w in caught), [str(w.message) for w in caught]
  np.testing.assert_allclose(p, np_model(model, TEST_FEATURES), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(p.sum(axis=1), 1, rtol=1e-5)


def check_gradients(model):
  """(added) one training batch's loss and gradients (BatchNormalization with the batch's
  statistics, the biased variance) against torch's, in float64; the weights (and
  BatchNormalization's moving statistics the call updates) are put back afterwards"""
  import torch

  x, y = next(iter(get_dataset_from_csv(train_data_file, shuffle=True, batch_size=batch_size)))
  x = {k: v for k, v in x.items() if k in FEATURE_NAMES}
  saved = model.get_weights()
  with tape.GradientTape() as g:
    loss = keras.losses.SparseCategoricalCrossentropy()(y, model(x, training=True))
  grads = g.gradient(loss, model.trainable_variables)
  model.set_weights(saved)

  t = {id(v): torch.tensor(v.numpy(), dtype=torch.float64, requires_grad=True)
       for v in model.trainable_variables}
  embeddings = {l.input.name: t[id(l.weights[0])] for l in model.layers
                if isinstance(l, layers.Embedding)}
  h = torch.cat([torch.tensor(host(x[n]), dtype=torch.float64)[:, None]
                 if n in NUMERIC_FEATURE_NAMES else embeddings[n][torch.tensor(host(x[n]))]
                 for n in FEATURE_NAMES], dim=1)
  (batch_norm,) = [l for l in model.layers if isinstance(l, layers.BatchNormalization)]
  h = ((h - h.mean(0)) / torch.sqrt(h.var(0, unbiased=False) + 1e-3)
       * t[id(batch_norm.gamma)] + t[id(batch_norm.beta)])
  p = 0
  for tree in trees_of(model):
    mask = torch.tensor(tree.used_features_mask.numpy(), dtype=torch.float64)
    d = torch.sigmoid(h @ mask.T @ t[id(tree.decision_fn.kernel)]
                      + t[id(tree.decision_fn.bias)])
    mu = torch.ones(len(h), 1, dtype=torch.float64)
    for level in range(tree.depth):  # children of the nodes 2**level ... 2**(level+1) - 1
      nodes = d[:, 2 ** level:2 ** (level + 1)]
      mu = torch.stack([mu * nodes, mu * (1 - nodes)], dim=2).reshape(len(h), -1)
    p = p + mu @ torch.softmax(t[id(tree.pi)], dim=1)
  p = p / len(trees_of(model))
  p_label = p[torch.arange(len(h)), torch.tensor(host(y))]
  torch_loss = -torch.log(torch.clamp(p_label, 1e-7, 1 - 1e-7)).mean()
  torch_grads = torch.autograd.grad(torch_loss, list(t.values()))
  np.testing.assert_allclose(float(loss), torch_loss.item(), rtol=1e-5)
  for grad, torch_grad, v in zip(grads, torch_grads, model.trainable_variables):
    np.testing.assert_allclose(host(grad), torch_grad.numpy(), rtol=1e-3,
                               atol=1e-4 * float(torch_grad.abs().max()) + 1e-9, err_msg=v.name)


"""
## Experiment 1: train a decision tree model

In this experiment, we train a single neural decision tree model
where we use all input features.
"""

num_trees = 10
depth = 10
used_features_rate = 1.0
num_classes = len(TARGET_LABELS)


def create_tree_model():
    inputs = create_model_inputs()
    features = encode_inputs(inputs)
    features = layers.BatchNormalization()(features)
    num_features = features.shape[1]

    tree = NeuralDecisionTree(depth, num_features, used_features_rate, num_classes)

    outputs = tree(features)
    model = keras.Model(inputs=inputs, outputs=outputs)
    return model


_masks = np.random.RandomState()  # (added) a copy of numpy's global generator, to replay
_masks.set_state(np.random.get_state())  # the trees' np.random.choice of their features
tree_model = create_tree_model()
check_model(tree_model, depths=[10], used=[53])  # (added)
check_gradients(tree_model)  # (added)
run_experiment(tree_model)


"""
## Experiment 2: train a forest model

In this experiment, we train a neural decision forest with `num_trees` trees
where each tree uses randomly selected 50% of the input features. You can control the number
of features to be used in each tree by setting the `used_features_rate` variable.
In addition, we set the depth to 5 instead of 10 compared to the previous experiment.
"""

num_trees = 25
depth = 5
used_features_rate = 0.5


def create_forest_model():
    inputs = create_model_inputs()
    features = encode_inputs(inputs)
    features = layers.BatchNormalization()(features)
    num_features = features.shape[1]

    forest_model = NeuralDecisionForest(
        num_trees, depth, num_features, used_features_rate, num_classes
    )

    outputs = forest_model(features)
    model = keras.Model(inputs=inputs, outputs=outputs)
    return model


forest_model = create_forest_model()
check_model(forest_model, depths=[5] * 25, used=[26] * 25)  # (added)

run_experiment(forest_model)

# ---------------------------------------------------------------------------------------
# (added) what the experiments did: fit's history; predict() of the trained models against
# numpy's forward pass; evaluate()'s loss against numpy's cross-entropy of those
# probabilities over every test row (Keras weights each batch's loss by its size) and its
# accuracy against numpy's; the threshold on the test accuracy
for (_label, _margin), (_model, (_history, _accuracy, _evaluated)) in zip(
    [("tree", 0.03), ("forest", 0.03)], results.items()):
  assert sorted(_history.history) == ["loss", "sparse_categorical_accuracy"]
  assert all(len(v) == num_epochs for v in _history.history.values())
  _p, _np_accuracy = predictions_and_accuracy(_model)
  np.testing.assert_allclose(_p, np_model(_model, TEST_FEATURES), rtol=1e-4, atol=1e-6)
  _p_label = _p.astype(np.float64)[np.arange(N_TEST), TEST_LABELS.astype(int)]
  np.testing.assert_allclose(
      _evaluated, [-np.mean(np.log(np.clip(_p_label, 1e-7, 1 - 1e-7))), _np_accuracy], rtol=1e-5)
  assert _accuracy == _evaluated[1]
  print(f"{_label}: test accuracy {_accuracy:.3f} (untrained {untrained[_model]:.3f}), "
        f"loss {np.round(_history.history['loss'], 3).tolist()}")
  if not SHORT:
    assert _accuracy > max(MAJORITY, untrained[_model]) + _margin, (_label, _accuracy, MAJORITY)
print(f"majority rate {MAJORITY:.3f}, the rule's accuracy {RULE_ACCURACY:.3f}; "
      f"{time.time() - _start:.1f} s")
