"""Port of keras-team/keras-io examples/structured_data/tabtransformer.py ("Structured data
learning with TabTransformer", the Keras 3 version): the UCI census income ("Adult") files
read with pandas and written back as train_data.csv and test_data.csv (adult.test without
its first line and without the "." after its labels), vocabularies of the 8 categorical
columns from the training file, a make_csv_dataset pipeline (batches of 265, "?" as
na_value, the label looked up as 0/1, fnlwgt popped as the sample weight, the categories
looked up as ids by StringLookups in the pipeline, cache()); then two functional models
over a dict of 13 float32 Inputs, each compiled with AdamW(1e-3, weight_decay=1e-4),
BinaryCrossentropy and BinaryAccuracy, trained with validation_data and evaluated: a
baseline MLP (8 Embedding(16) beside the 5 raw numbers, two LayerNormalization + Dense(133,
gelu) + Dropout blocks, a BatchNormalization + Dense(selu) + Dropout MLP of 266 and 133,
Dense(1, sigmoid)) and the TabTransformer (the 8 embeddings stacked, 3 Transformer blocks of
MultiHeadAttention(4 heads, key_dim 16, dropout 0.2), Add, LayerNormalization and a gelu MLP,
flattened beside the LayerNormalized numbers, the same final MLP).

Upstream: https://github.com/keras-team/keras-io/blob/28d2577f440ffcea1ae6a0feea026a4d9efd29d6/examples/structured_data/tabtransformer.py
(keras-io's older tf.keras version, e.g. at ff6a507b2737777a8845ff9a2f1caf7f53ce3e78, differs:
tfa.optimizers.AdamW, string Inputs with the StringLookups inside the model, tf.stack,
tf.range, tf.expand_dims, and one normalization layer instance per MLP, not per Dense)
Changed: names only (keras.Sequential/Model/layers/activations/optimizers/losses/metrics ->
nn.*, keras.ops -> nn.ops, `from tensorflow import data as tf_data` -> `from ember import
data as tf_data`), except where a GAP says otherwise; upstream's unused matplotlib import is
dropped, and so are the plots (GAP 2).
Nothing can be downloaded here: the program writes a GENERATED adult.data and adult.test in
UCI's layout into a temporary working directory, and the read_csv stand-in reads them for
upstream's URLs: no header, ", " between fields (so every string keeps a leading space, as
upstream's TARGET_LABELS " <=50K" expect), 15 columns (age, workclass, fnlwgt, education,
education_num, marital_status, occupation, relationship, race, gender, capital_gain,
capital_loss, hours_per_week, native_country, income_bracket), adult.data's value sets (9
workclasses and 15 occupations with "?" among them, the 16 educations with their
education_num 1..16, 7 marital statuses, 6 relationships, 5 races, 2 genders, 42 countries
with "?"; every value occurs in the training file, as the vocabularies and upstream's lookups
without an out-of-vocabulary index need) and shares (70% Private, 90% United-States, 67%
Male, capital_gain non-zero in 8% of the rows, sometimes 99999, capital_loss in 5%, hours 40
for 48%), fnlwgt lognormal (median 165,000, mean 190,000; upstream's sample weight);
adult.test opens with "|1x3 Cross validator" and its labels end in "." (" <=50K."), and both
end with an empty line.
The label is drawn from a fixed logistic rule (education_num, being married, age, hours,
gender, occupation, a wife, capital gain over 5,000 and loss over 1,800 raise the odds of
>50K): 24% of the training rows and 26% of the test rows earn >50K (adult: 24%).
pandas is not installed: a small DataFrame/Series stand-in serves read_csv(header=None,
names=) with pandas's inference (int64 where every field is an integer, leading spaces
allowed; float64 where numbers have a missing field; else str objects kept as written, NaN
for a missing field: adult.test's first line makes its age column strings and its other
numbers float64, written back as "226802.0"), shape, rows by position (test_data[1:]),
attribute access and assignment of a column (test_data.income_bracket = ...), apply, unique
and to_csv(index=False, header=False).
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream's sizes: adult's 32,561 training and 16,281
test rows, 15 epochs): 12,000 training rows, 3,000 test rows, 10 epochs (460 steps of 265
rows); EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 600 and 300 rows, 1 epoch, no threshold.
Seeds are set for numpy and ember.
Added: the tables as read (shapes, pandas's dtypes, the values against the generated ones,
adult.test's first line), the cleaned test table and the files as written; the vocabularies
(sorted, with the leading space; adult's sizes 9, 16, 7, 15, 6, 5, 2, 42); the pipeline's
batches (the CSV's keys without the label and fnlwgt, float32 numbers, int64 ids in the
sorted vocabularies, int64 labels, float32 weights equal to fnlwgt, batches of 265, every
test row once in file order, every training row once a pass, shuffled, and cache() after the
shuffle replaying the first pass's order, as TF's does); both models' parameter counts
(110,693 and 88,543, formulas per layer: Keras 3.15.1 counts the same; upstream's text says
109,629 and 92,151, counted with its older tf.keras version), output shapes and the
Transformer blocks' (None, 8, 16); predict() of both trained models against a numpy forward
pass through their weights (Embedding lookups, LayerNormalization with epsilon 1e-3 by
default and 1e-6 where upstream says so, exact gelu, per-head softmax(q k^T / 4) v
attention, BatchNormalization with the moving statistics and epsilon 1e-3, selu, sigmoid);
evaluate()'s loss against numpy's sum of fnlwgt * binary cross-entropy over the test rows
divided by their number (Keras's sum_over_batch_size, each batch weighted by its size; from
the logits, as Keras 3 on TensorFlow and tf.keras take a sigmoid output's cross-entropy) and
its accuracy against numpy's unweighted one (Keras 3's compile `metrics` get no sample
weights); fit's last val_loss and val_accuracy equal evaluate's; the history's keys and
lengths.
What training reached (CPU run): each model's test accuracy must exceed both the test rows'
majority rate (0.742: the best a model that ignores the features can do) and its own
untrained accuracy (0.30 to 0.74 over seeds) by 0.02 (baseline) and 0.03 (TabTransformer);
the generating rule itself reaches 0.827 (the best any model can do). This program reaches
0.779 (baseline) and 0.805 (TabTransformer), over ember seeds 0 to 3 0.779 to 0.788 and 0.786
to 0.805: the TabTransformer ahead, as upstream reports (81% and 85% on the real data). The
baseline learns slowly (its LayerNormalization sees the raw numbers beside the embeddings,
capital_gain up to 99,999): its first 3 or 4 epochs stay at or below the majority rate. The
same models in Keras 3.15.1 (torch backend) from ember's initial weights, dropout 0, on the
same batches, train alike: after two steps every weight agrees to 1e-6; the per-step losses
agree to 2e-6 (TabTransformer) and 5e-4 (baseline: fnlwgt weights up to 1.5e6 on nearly
saturated rows) in the first epoch, 1e-4 after three; AdamW's updates (also with a weight
decay of 0.5, amsgrad or not) agree to 1e-6.
Fixed in ember since the first version of this port (upstream's lines run now):
1. there was no tf.data.experimental.make_csv_dataset (AttributeError: module 'ember.data' has
no attribute 'experimental'), and CsvDataset had no na_value: a stand-in after TF's readers.py
read the files; ember.data.experimental.make_csv_dataset now exists with TF's arguments.
3. graph.function refused an OrderedDict argument (TypeError "... of type OrderedDict is not
hashable"), so fit, evaluate and predict refused make_csv_dataset's OrderedDict features and a
map made them plain dicts; upstream's `.map(encode_categorical)` alone feeds them now.
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error):
2. no keras.utils.plot_model (AttributeError: loud): left out.
"""

import collections
import csv
import math
import os
import tempfile
import time
import types
from functools import partial

import numpy as np

import ember.core as em
from ember import data as tf_data
from ember import nn
from ember.nn import ops

keras = nn  # the example's `keras.` prefix
layers = nn.layers
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
N_TRAIN = 32561 if FULL else 600 if SHORT else 12000
N_TEST = 16281 if FULL else 300 if SHORT else 3000
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

# ---------------------------------------------------------------------------------------
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
Remove the first record (because it is not a valid data example) and a trailing 'dot' in the class labels.
"""

test_data = test_data[1:]
test_data.income_bracket = test_data.income_bracket.apply(
    lambda value: value.replace(".", "")
)
# (added)
assert test_data.shape == (N_TEST, 15) and test_data.index[0] == 1
assert test_data["income_bracket"].to_numpy().tolist() == [" " + v for v in TEST_COLUMNS[14]]
assert test_data["age"].to_numpy().tolist() == [str(v) for v in TEST_COLUMNS[0]]

"""
Now we store the training and test data in separate CSV files.
"""

train_data_file = "train_data.csv"
test_data_file = "test_data.csv"

train_data.to_csv(train_data_file, index=False, header=False)
test_data.to_csv(test_data_file, index=False, header=False)

# (added) the files as written: the test file's numbers but age as floats ("226802.0")
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
the data into input features, and encoding the input features with respect to their types.
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
# Name of the column to be used as instances weight.
WEIGHT_COLUMN_NAME = "fnlwgt"
# A list of the categorical feature names.
CATEGORICAL_FEATURE_NAMES = list(CATEGORICAL_FEATURES_WITH_VOCABULARY.keys())
# A list of all the input features.
FEATURE_NAMES = NUMERIC_FEATURE_NAMES + CATEGORICAL_FEATURE_NAMES
# A list of column default values for each feature.
COLUMN_DEFAULTS = [
    [0.0] if feature_name in NUMERIC_FEATURE_NAMES + [WEIGHT_COLUMN_NAME] else ["NA"]
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
assert CATEGORICAL_FEATURES_WITH_VOCABULARY["gender"] == [" Female", " Male"]

"""
## Configure the hyperparameters

The hyperparameters includes model architecture and training configurations.
"""

LEARNING_RATE = 0.001
WEIGHT_DECAY = 0.0001
DROPOUT_RATE = 0.2
BATCH_SIZE = 265
NUM_EPOCHS = 15 if FULL else 1 if SHORT else 10

NUM_TRANSFORMER_BLOCKS = 3  # Number of transformer blocks.
NUM_HEADS = 4  # Number of attention heads.
EMBEDDING_DIMS = 16  # Embedding dimensions of the categorical features.
MLP_HIDDEN_UNITS_FACTORS = [
    2,
    1,
]  # MLP hidden layer units, as factors of the number of inputs.
NUM_MLP_BLOCKS = 2  # Number of MLP blocks in the baseline model.


"""
## Implement data reading pipeline

We define an input function that reads and parses the file, then converts features
and labels into a[`tf.data.Dataset`](https://www.tensorflow.org/guide/datasets)
for training or evaluation.
"""

target_label_lookup = layers.StringLookup(
    vocabulary=TARGET_LABELS, mask_token=None, num_oov_indices=0
)


def prepare_example(features, target):
    target_index = target_label_lookup(target)
    weights = features.pop(WEIGHT_COLUMN_NAME)
    return features, target_index, weights


lookup_dict = {}
for feature_name in CATEGORICAL_FEATURE_NAMES:
    vocabulary = CATEGORICAL_FEATURES_WITH_VOCABULARY[feature_name]
    # Create a lookup to convert a string values to an integer indices.
    # Since we are not using a mask token, nor expecting any out of vocabulary
    # (oov) token, we set mask_token to None and num_oov_indices to 0.
    lookup = layers.StringLookup(
        vocabulary=vocabulary, mask_token=None, num_oov_indices=0
    )
    lookup_dict[feature_name] = lookup


def encode_categorical(batch_x, batch_y, weights):
    for feature_name in CATEGORICAL_FEATURE_NAMES:
        batch_x[feature_name] = lookup_dict[feature_name](batch_x[feature_name])

    return batch_x, batch_y, weights


def get_dataset_from_csv(csv_file_path, batch_size=128, shuffle=False):
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
        .map(prepare_example, num_parallel_calls=tf_data.AUTOTUNE, deterministic=False)
        .map(encode_categorical)
    )
    return dataset.cache()


# (added) the pipeline: upstream's keys (the CSV's order, without the label and the weight
# column), numbers as float32 (TF's [0.0] defaults), the categories as their int64 ids in
# the sorted vocabulary, the label's id, the weights (fnlwgt) as float32; batches of 265; every
# test row once, in file order (the one shard keeps it, deterministic=False or not); every
# training row once a pass, shuffled, and cache() after the shuffle replaying the first
# pass's order in every later one, as TF's does
def pipeline_rows(dataset):
  """(added) the dataset's batches, joined: features, labels, weights as numpy arrays"""
  batches = list(dataset)
  features = {k: np.concatenate([host(b[0][k]) for b in batches]) for k in batches[0][0]}
  return (batches, features, np.concatenate([host(b[1]) for b in batches]),
          np.concatenate([host(b[2]) for b in batches]))


def host(value):
  """(added) a numpy array of a batch's column (an ember Tensor is read back by .numpy())"""
  return value.numpy() if isinstance(value, em.Tensor) else np.asarray(value)


def expected_ids(columns, j, name):
  vocabulary = CATEGORICAL_FEATURES_WITH_VOCABULARY[name]
  return np.array([vocabulary.index(" " + v) for v in columns[j]], np.int64)


FEATURE_KEYS = [c for c in CSV_HEADER if c not in (TARGET_FEATURE_NAME, WEIGHT_COLUMN_NAME)]
_batches, TEST_FEATURES, TEST_LABELS, TEST_WEIGHTS = pipeline_rows(
    get_dataset_from_csv(test_data_file, BATCH_SIZE))
assert [len(b[1]) for b in _batches] == [BATCH_SIZE] * (N_TEST // BATCH_SIZE) + (
    [N_TEST % BATCH_SIZE] if N_TEST % BATCH_SIZE else [])
assert list(_batches[0][0]) == FEATURE_KEYS
assert type(_batches[0][0]) is collections.OrderedDict  # make_csv_dataset's, as fit gets it
for _j, _name in enumerate(CSV_HEADER):
  if _name in NUMERIC_FEATURE_NAMES:
    assert TEST_FEATURES[_name].dtype == np.float32, _name
    np.testing.assert_array_equal(TEST_FEATURES[_name], TEST_COLUMNS[_j])
  elif _name in CATEGORICAL_FEATURE_NAMES:
    assert _batches[0][0][_name].dtype == em.int64 and _batches[0][0][_name].shape == (265,)
    np.testing.assert_array_equal(TEST_FEATURES[_name], expected_ids(TEST_COLUMNS, _j, _name))
assert _batches[0][1].dtype == em.int64 and TEST_WEIGHTS.dtype == np.float32
np.testing.assert_array_equal(TEST_LABELS, TEST_COLUMNS[14] == ">50K")
np.testing.assert_array_equal(TEST_WEIGHTS, TEST_COLUMNS[2].astype(np.float32))
_train_ds = get_dataset_from_csv(train_data_file, BATCH_SIZE, shuffle=True)
_, _pass1, _labels1, _weights1 = pipeline_rows(_train_ds)
_, _pass2, _, _ = pipeline_rows(_train_ds)
_order = np.lexsort([_pass1[c] for c in FEATURE_KEYS] + [_weights1])  # (rows as sorted)
_generated = np.lexsort([expected_ids(TRAIN_COLUMNS, CSV_HEADER.index(c), c)
                         if c in CATEGORICAL_FEATURE_NAMES else TRAIN_COLUMNS[CSV_HEADER.index(c)]
                         for c in FEATURE_KEYS] + [TRAIN_COLUMNS[2]])
for _c in FEATURE_KEYS:
  np.testing.assert_array_equal(_pass1[_c][_order], (
      expected_ids(TRAIN_COLUMNS, CSV_HEADER.index(_c), _c) if _c in CATEGORICAL_FEATURE_NAMES
      else TRAIN_COLUMNS[CSV_HEADER.index(_c)])[_generated])
np.testing.assert_array_equal(_weights1[_order], TRAIN_COLUMNS[2][_generated])
np.testing.assert_array_equal(_labels1[_order], TRAIN_COLUMNS[14][_generated] == ">50K")
assert not np.array_equal(_weights1, TRAIN_COLUMNS[2])  # shuffled
assert all(np.array_equal(_pass1[k], _pass2[k]) for k in FEATURE_KEYS)  # cache() replays it
MAJORITY = max(TEST_LABELS.mean(), 1 - TEST_LABELS.mean())

"""
## Implement a training and evaluation procedure
"""

results = {}  # (added) each experiment's history, accuracy and evaluate's numbers


def run_experiment(
    model,
    train_data_file,
    test_data_file,
    num_epochs,
    learning_rate,
    weight_decay,
    batch_size,
):
    optimizer = keras.optimizers.AdamW(
        learning_rate=learning_rate, weight_decay=weight_decay
    )

    model.compile(
        optimizer=optimizer,
        loss=keras.losses.BinaryCrossentropy(),
        metrics=[keras.metrics.BinaryAccuracy(name="accuracy")],
    )

    train_dataset = get_dataset_from_csv(train_data_file, batch_size, shuffle=True)
    validation_dataset = get_dataset_from_csv(test_data_file, batch_size)

    print("Start training the model...")
    history = model.fit(
        train_dataset, epochs=num_epochs, validation_data=validation_dataset
    )
    print("Model training finished")

    _, accuracy = model.evaluate(validation_dataset, verbose=0)

    print(f"Validation accuracy: {round(accuracy * 100, 2)}%")

    results[model] = history, accuracy, model.evaluate(validation_dataset, verbose=0)  # (added)
    return history


"""
## Create model inputs

Now, define the inputs for the models as a dictionary, where the key is the feature name,
and the value is a `keras.layers.Input` tensor with the corresponding feature shape
and data type.
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
                name=feature_name, shape=(), dtype="float32"
            )
    return inputs


"""
## Encode features

The `encode_inputs` method returns `encoded_categorical_feature_list` and `numerical_feature_list`.
We encode the categorical features as embeddings, using a fixed `embedding_dims` for all the features,
regardless their vocabulary sizes. This is required for the Transformer model.
"""


def encode_inputs(inputs, embedding_dims):
    encoded_categorical_feature_list = []
    numerical_feature_list = []

    for feature_name in inputs:
        if feature_name in CATEGORICAL_FEATURE_NAMES:
            vocabulary = CATEGORICAL_FEATURES_WITH_VOCABULARY[feature_name]
            # Create a lookup to convert a string values to an integer indices.
            # Since we are not using a mask token, nor expecting any out of vocabulary
            # (oov) token, we set mask_token to None and num_oov_indices to 0.

            # Convert the string input values into integer indices.

            # Create an embedding layer with the specified dimensions.
            embedding = layers.Embedding(
                input_dim=len(vocabulary), output_dim=embedding_dims
            )

            # Convert the index values to embedding representations.
            encoded_categorical_feature = embedding(inputs[feature_name])
            encoded_categorical_feature_list.append(encoded_categorical_feature)

        else:
            # Use the numerical features as-is.
            numerical_feature = ops.expand_dims(inputs[feature_name], -1)
            numerical_feature_list.append(numerical_feature)

    return encoded_categorical_feature_list, numerical_feature_list


"""
## Implement an MLP block
"""


def create_mlp(hidden_units, dropout_rate, activation, normalization_layer, name=None):
    mlp_layers = []
    for units in hidden_units:
        mlp_layers.append(normalization_layer()),
        mlp_layers.append(layers.Dense(units, activation=activation))
        mlp_layers.append(layers.Dropout(dropout_rate))

    return keras.Sequential(mlp_layers, name=name)


"""
## Experiment 1: a baseline model

In the first experiment, we create a simple multi-layer feed-forward network.
"""


def create_baseline_model(
    embedding_dims, num_mlp_blocks, mlp_hidden_units_factors, dropout_rate
):
    # Create model inputs.
    inputs = create_model_inputs()
    # encode features.
    encoded_categorical_feature_list, numerical_feature_list = encode_inputs(
        inputs, embedding_dims
    )
    # Concatenate all features.
    features = layers.concatenate(
        encoded_categorical_feature_list + numerical_feature_list
    )
    # Compute Feedforward layer units.
    feedforward_units = [features.shape[-1]]

    # Create several feedforwad layers with skip connections.
    for layer_idx in range(num_mlp_blocks):
        features = create_mlp(
            hidden_units=feedforward_units,
            dropout_rate=dropout_rate,
            activation=keras.activations.gelu,
            normalization_layer=layers.LayerNormalization,
            name=f"feedforward_{layer_idx}",
        )(features)

    # Compute MLP hidden_units.
    mlp_hidden_units = [
        factor * features.shape[-1] for factor in mlp_hidden_units_factors
    ]
    # Create final MLP.
    features = create_mlp(
        hidden_units=mlp_hidden_units,
        dropout_rate=dropout_rate,
        activation=keras.activations.selu,
        normalization_layer=layers.BatchNormalization,
        name="MLP",
    )(features)

    # Add a sigmoid as a binary classifer.
    outputs = layers.Dense(units=1, activation="sigmoid", name="sigmoid")(features)
    model = keras.Model(inputs=inputs, outputs=outputs)
    return model


baseline_model = create_baseline_model(
    embedding_dims=EMBEDDING_DIMS,
    num_mlp_blocks=NUM_MLP_BLOCKS,
    mlp_hidden_units_factors=MLP_HIDDEN_UNITS_FACTORS,
    dropout_rate=DROPOUT_RATE,
)

print("Total model weights:", baseline_model.count_params())
# GAP 2: keras.utils.plot_model(baseline_model, show_shapes=True, rankdir="LR")
# (AttributeError: ember has no plot_model): left out
assert not hasattr(keras.utils, "plot_model")


def dense_params(n_in, n_out):
  return n_in * n_out + n_out


WIDTH = EMBEDDING_DIMS * len(CATEGORICAL_FEATURE_NAMES) + len(NUMERIC_FEATURE_NAMES)  # 133
EMBEDDINGS = EMBEDDING_DIMS * sum(VOCABULARY_SIZES)
FINAL_MLP = (4 * WIDTH + dense_params(WIDTH, 2 * WIDTH) + 4 * 2 * WIDTH
             + dense_params(2 * WIDTH, WIDTH) + dense_params(WIDTH, 1))
# (added) Keras 3's count: a new normalization layer for each Dense of an MLP (upstream's
# text, 109,629 and 92,151, was counted with its older tf.keras version)
assert baseline_model.count_params() == (EMBEDDINGS + 2 * (2 * WIDTH + dense_params(WIDTH, WIDTH))
                                         + FINAL_MLP), baseline_model.count_params()
assert tuple(baseline_model.output.shape) == (None, 1)
assert [baseline_model.get_layer(n).count_params() for n in ("feedforward_0", "MLP")] == [
    2 * WIDTH + dense_params(WIDTH, WIDTH), FINAL_MLP - dense_params(WIDTH, 1)]


def predictions_and_accuracy(model):
  """(added) predict() over the test pipeline, and numpy's accuracy of it: threshold 0.5,
  unweighted (Keras 3's compile `metrics` get no sample weights; `weighted_metrics` do)"""
  p = model.predict(get_dataset_from_csv(test_data_file, BATCH_SIZE), verbose=0)
  assert p.shape == (N_TEST, 1) and p.dtype == np.float32
  return p, np.mean((p[:, 0] > 0.5) == TEST_LABELS)


def weighted_bce(logits):
  """(added) Keras's loss with sample weights: the sum of fnlwgt * binary cross-entropy
  over the rows, divided by the number of rows (sum_over_batch_size, each batch's loss
  weighted by its size). Keras 3 on TensorFlow, as tf.keras, takes the cross-entropy of a
  sigmoid output from its logits (output._keras_logits), not from the probabilities
  clipped to [1e-7, 1 - 1e-7] (Keras 3 on torch or JAX); ember does as TensorFlow does."""
  z, y = logits[:, 0], TEST_LABELS.astype(np.float64)
  bce = np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))
  return np.sum(TEST_WEIGHTS * bce) / N_TEST


untrained = {baseline_model: predictions_and_accuracy(baseline_model)[1]}  # (added)

"""
Let's train and evaluate the baseline model:
"""

history = run_experiment(
    model=baseline_model,
    train_data_file=train_data_file,
    test_data_file=test_data_file,
    num_epochs=NUM_EPOCHS,
    learning_rate=LEARNING_RATE,
    weight_decay=WEIGHT_DECAY,
    batch_size=BATCH_SIZE,
)

"""
The baseline linear model achieves ~81% validation accuracy.
"""

"""
## Experiment 2: TabTransformer

The TabTransformer architecture works as follows:

1. All the categorical features are encoded as embeddings, using the same `embedding_dims`.
This means that each value in each categorical feature will have its own embedding vector.
2. A column embedding, one embedding vector for each categorical feature, is added (point-wise) to the
categorical feature embedding.
3. The embedded categorical features are fed into a stack of Transformer blocks.
Each Transformer block consists of a multi-head self-attention layer followed by a feed-forward layer.
3. The outputs of the final Transformer layer, which are the *contextual embeddings* of the categorical
features, are concatenated with the input numerical features, and fed into a final MLP block.
4. A `softmax` classifer is applied at the end of the model.

The [paper](https://arxiv.org/abs/2012.06678) discusses both addition and concatenation of the column
embedding in the *Appendix: Experiment and Model Details* section.
The architecture of TabTransformer is shown below, as presented in the paper.
"""


def create_tabtransformer_classifier(
    num_transformer_blocks,
    num_heads,
    embedding_dims,
    mlp_hidden_units_factors,
    dropout_rate,
    use_column_embedding=False,
):
    # Create model inputs.
    inputs = create_model_inputs()
    # encode features.
    encoded_categorical_feature_list, numerical_feature_list = encode_inputs(
        inputs, embedding_dims
    )
    # Stack categorical feature embeddings for the Tansformer.
    encoded_categorical_features = ops.stack(encoded_categorical_feature_list, axis=1)
    # Concatenate numerical features.
    numerical_features = layers.concatenate(numerical_feature_list)

    # Add column embedding to categorical feature embeddings.
    if use_column_embedding:
        num_columns = encoded_categorical_features.shape[1]
        column_embedding = layers.Embedding(
            input_dim=num_columns, output_dim=embedding_dims
        )
        column_indices = ops.arange(start=0, stop=num_columns, step=1)
        encoded_categorical_features = encoded_categorical_features + column_embedding(
            column_indices
        )

    # Create multiple layers of the Transformer block.
    for block_idx in range(num_transformer_blocks):
        # Create a multi-head attention layer.
        attention_output = layers.MultiHeadAttention(
            num_heads=num_heads,
            key_dim=embedding_dims,
            dropout=dropout_rate,
            name=f"multihead_attention_{block_idx}",
        )(encoded_categorical_features, encoded_categorical_features)
        # Skip connection 1.
        x = layers.Add(name=f"skip_connection1_{block_idx}")(
            [attention_output, encoded_categorical_features]
        )
        # Layer normalization 1.
        x = layers.LayerNormalization(name=f"layer_norm1_{block_idx}", epsilon=1e-6)(x)
        # Feedforward.
        feedforward_output = create_mlp(
            hidden_units=[embedding_dims],
            dropout_rate=dropout_rate,
            activation=keras.activations.gelu,
            normalization_layer=partial(
                layers.LayerNormalization, epsilon=1e-6
            ),  # using partial to provide keyword arguments before initialization
            name=f"feedforward_{block_idx}",
        )(x)
        # Skip connection 2.
        x = layers.Add(name=f"skip_connection2_{block_idx}")([feedforward_output, x])
        # Layer normalization 2.
        encoded_categorical_features = layers.LayerNormalization(
            name=f"layer_norm2_{block_idx}", epsilon=1e-6
        )(x)

    # Flatten the "contextualized" embeddings of the categorical features.
    categorical_features = layers.Flatten()(encoded_categorical_features)
    # Apply layer normalization to the numerical features.
    numerical_features = layers.LayerNormalization(epsilon=1e-6)(numerical_features)
    # Prepare the input for the final MLP block.
    features = layers.concatenate([categorical_features, numerical_features])

    # Compute MLP hidden_units.
    mlp_hidden_units = [
        factor * features.shape[-1] for factor in mlp_hidden_units_factors
    ]
    # Create final MLP.
    features = create_mlp(
        hidden_units=mlp_hidden_units,
        dropout_rate=dropout_rate,
        activation=keras.activations.selu,
        normalization_layer=layers.BatchNormalization,
        name="MLP",
    )(features)

    # Add a sigmoid as a binary classifer.
    outputs = layers.Dense(units=1, activation="sigmoid", name="sigmoid")(features)
    model = keras.Model(inputs=inputs, outputs=outputs)
    return model


tabtransformer_model = create_tabtransformer_classifier(
    num_transformer_blocks=NUM_TRANSFORMER_BLOCKS,
    num_heads=NUM_HEADS,
    embedding_dims=EMBEDDING_DIMS,
    mlp_hidden_units_factors=MLP_HIDDEN_UNITS_FACTORS,
    dropout_rate=DROPOUT_RATE,
)

print("Total model weights:", tabtransformer_model.count_params())
# GAP 2: keras.utils.plot_model(tabtransformer_model, show_shapes=True, rankdir="LR")
# (added) the count: per block, the attention (query, key, value: 16 -> 4 heads x 16, and
# the output projection back to 16), two LayerNormalizations and the feedforward MLP
BLOCK = (3 * dense_params(EMBEDDING_DIMS, NUM_HEADS * EMBEDDING_DIMS)
         + dense_params(NUM_HEADS * EMBEDDING_DIMS, EMBEDDING_DIMS) + 2 * 2 * EMBEDDING_DIMS
         + 2 * EMBEDDING_DIMS + dense_params(EMBEDDING_DIMS, EMBEDDING_DIMS))
assert tabtransformer_model.count_params() == (
    EMBEDDINGS + NUM_TRANSFORMER_BLOCKS * BLOCK + 2 * len(NUMERIC_FEATURE_NAMES) + FINAL_MLP)
assert tuple(tabtransformer_model.get_layer("layer_norm2_2").output.shape) == (
    None, len(CATEGORICAL_FEATURE_NAMES), EMBEDDING_DIMS)
assert tuple(tabtransformer_model.output.shape) == (None, 1)
untrained[tabtransformer_model] = predictions_and_accuracy(tabtransformer_model)[1]  # (added)

"""
Let's train and evaluate the TabTransformer model:
"""

history = run_experiment(
    model=tabtransformer_model,
    train_data_file=train_data_file,
    test_data_file=test_data_file,
    num_epochs=NUM_EPOCHS,
    learning_rate=LEARNING_RATE,
    weight_decay=WEIGHT_DECAY,
    batch_size=BATCH_SIZE,
)

"""
The TabTransformer model achieves ~85% validation accuracy.
Note that, with the default parameter configurations, both the baseline and the TabTransformer
have similar number of trainable weights: 109,629 and 92,151 respectively, and both use the same training
hyperparameters.
"""

# ---------------------------------------------------------------------------------------
# (added) what the experiments did, checked against numpy


def np_weights(layer):
  return [v.numpy().astype(np.float64) for v in layer.weights]


def np_layer_norm(x, layer, epsilon):
  gamma, beta = np_weights(layer)
  mean, variance = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
  return (x - mean) / np.sqrt(variance + epsilon) * gamma + beta


def np_batch_norm(x, layer):  # at inference: the moving statistics, Keras's epsilon 1e-3
  gamma, beta, moving_mean, moving_variance = np_weights(layer)
  return (x - moving_mean) / np.sqrt(moving_variance + 1e-3) * gamma + beta


_erf = np.frompyfunc(math.erf, 1, 1)


def np_gelu(x):  # Keras's default: the exact form, approximate=False
  return 0.5 * x * (1 + _erf(x / math.sqrt(2)).astype(np.float64))


def np_selu(x):
  return 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(np.minimum(x, 0)))


def np_dense(x, layer, activation=None):
  kernel, bias = np_weights(layer)
  y = x @ kernel + bias
  return y if activation is None else activation(y)


def np_mlp(x, block, kind, normalize, activation):
  """create_mlp's Sequential at inference: normalization, Dense, Dropout (the identity)"""
  assert [type(l) for l in block.layers] == [kind, layers.Dense, layers.Dropout] * (
      len(block.layers) // 3)
  for k in range(0, len(block.layers), 3):
    x = np_dense(normalize(x, block.layers[k]), block.layers[k + 1], activation)
  return x


def np_inputs(model):
  """the test rows' embeddings (one Embedding per category, found by its vocabulary size)
  and numbers"""
  embeddings = {l.weights[0].shape[0]: np_weights(l)[0] for l in model.layers
                if isinstance(l, layers.Embedding)}
  assert sorted(embeddings) == sorted(VOCABULARY_SIZES)
  embedded = [embeddings[len(CATEGORICAL_FEATURES_WITH_VOCABULARY[name])][TEST_FEATURES[name]]
              for name in CATEGORICAL_FEATURE_NAMES]
  numbers = np.stack([TEST_FEATURES[n].astype(np.float64) for n in NUMERIC_FEATURE_NAMES], 1)
  return embedded, numbers


def np_head(x, model):
  """the final MLP and the last Dense: the logits (the sigmoid's input)"""
  x = np_mlp(x, model.get_layer("MLP"), layers.BatchNormalization, np_batch_norm, np_selu)
  return np_dense(x, model.get_layer("sigmoid"))


def np_baseline(model):
  embedded, numbers = np_inputs(model)
  x = np.concatenate(embedded + [numbers], axis=1)
  assert x.shape == (N_TEST, WIDTH)
  for k in range(NUM_MLP_BLOCKS):  # LayerNormalization with Keras's default epsilon, 1e-3
    x = np_mlp(x, model.get_layer(f"feedforward_{k}"), layers.LayerNormalization,
               partial(np_layer_norm, epsilon=1e-3), np_gelu)
  return np_head(x, model)


def np_attention(x, layer):
  """Keras's MultiHeadAttention, self-attention at inference: per head, softmax(q k^T /
  sqrt(key_dim)) v; the heads side by side into the output projection (ember keeps each
  projection as one 2-D kernel, the heads' columns side by side)"""
  wq, bq, wk, bk, wv, bv, wo, bo = np_weights(layer)
  n, t, d = x.shape

  def heads(w, b):
    return (x @ w + b).reshape(n, t, NUM_HEADS, EMBEDDING_DIMS).transpose(0, 2, 1, 3)

  q, k, v = heads(wq, bq), heads(wk, bk), heads(wv, bv)
  scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(EMBEDDING_DIMS)
  scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
  context = (scores / scores.sum(axis=-1, keepdims=True)) @ v
  return context.transpose(0, 2, 1, 3).reshape(n, t, NUM_HEADS * EMBEDDING_DIMS) @ wo + bo


def np_tabtransformer(model):
  embedded, numbers = np_inputs(model)
  x = np.stack(embedded, axis=1)
  for k in range(NUM_TRANSFORMER_BLOCKS):
    x = np_layer_norm(np_attention(x, model.get_layer(f"multihead_attention_{k}")) + x,
                      model.get_layer(f"layer_norm1_{k}"), 1e-6)
    feedforward = np_mlp(x, model.get_layer(f"feedforward_{k}"), layers.LayerNormalization,
                         partial(np_layer_norm, epsilon=1e-6), np_gelu)
    x = np_layer_norm(feedforward + x, model.get_layer(f"layer_norm2_{k}"), 1e-6)
  numbers_norm = [l for l in model.layers if isinstance(l, layers.LayerNormalization)
                  and l.weights[0].shape == (len(NUMERIC_FEATURE_NAMES),)]
  assert len(numbers_norm) == 1
  x = np.concatenate([x.reshape(N_TEST, -1), np_layer_norm(numbers, numbers_norm[0], 1e-6)], 1)
  return np_head(x, model)


RULE_ACCURACY = np.mean((TEST_LOGIT > 0) == TEST_LABELS)  # the best any model can do
for (_label, _forward, _margin), (_model, (_history, _accuracy, _evaluated)) in zip(
    [("baseline", np_baseline, 0.02), ("TabTransformer", np_tabtransformer, 0.03)],
    results.items()):
  assert sorted(_history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]
  assert all(len(v) == NUM_EPOCHS for v in _history.history.values())
  _p, _np_accuracy = predictions_and_accuracy(_model)
  # predict() against numpy's forward pass through the trained weights
  _logits = _forward(_model)
  np.testing.assert_allclose(_p, 1 / (1 + np.exp(-_logits)), rtol=1e-4, atol=1e-6)
  # evaluate(): the weighted loss (numpy's, from the logits) and the (unweighted) accuracy
  # of predict(); fit's last validation equals it (the same weights)
  np.testing.assert_allclose(_evaluated, [weighted_bce(_logits), _np_accuracy], rtol=1e-4)
  assert _evaluated[1] == _accuracy
  np.testing.assert_allclose([_history.history["val_loss"][-1],
                              _history.history["val_accuracy"][-1]], _evaluated, rtol=1e-5)
  print(f"{_label}: test accuracy {_accuracy:.3f} (untrained {untrained[_model]:.3f}), "
        f"val_accuracy {np.round(_history.history['val_accuracy'], 3).tolist()}")
  if not SHORT:
    assert _accuracy > max(MAJORITY, untrained[_model]) + _margin, (_label, _accuracy, MAJORITY)
print(f"majority rate {MAJORITY:.3f}, the rule's accuracy {RULE_ACCURACY:.3f}; "
      f"{time.time() - _start:.1f} s")
