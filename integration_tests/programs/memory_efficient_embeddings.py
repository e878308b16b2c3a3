"""Port of keras-team/keras-io examples/keras_recipes/memory_efficient_embeddings.py
("Memory-efficient embeddings for recommendation systems"): MovieLens 1M's ratings.dat read
with pandas, users and movies made strings ("user_1", "movie_1193"), split 85/15 with
np.random.rand, written to "|"-separated CSVs and read back with make_csv_dataset (batches of
128); two models of (user_id, movie_id) strings -> sigmoid(dot(user, movie)) * 5 trained
with Adam(1e-3) on MeanSquaredError (MeanAbsoluteError as a metric), 3 epochs each: a
baseline (StringLookup + Embedding(64) per input) and a memory-efficient one (a
Quotient-Remainder embedding of the users: two Embedding(num_users // 50, 64) tables
multiplied; a Mixed-Dimension embedding of the movies: blocks of 400, 1,300 and the rest by
popularity, Embedding dimensions 64, 32 and 16, projected to 64 by Dense layers, picked by a
StaticHashTable of movie -> block).

Upstream: https://github.com/keras-team/keras-io/blob/8bda227c08adf855a8b9ec579840e2a7171fff60/examples/keras_recipes/memory_efficient_embeddings.py
(the tf.keras version; keras-io master's Keras 3 version, "Last modified 2023/11/15",
differs in names only: `import keras`, keras.layers.StringLookup, keras.losses, super()
without arguments, dtype="string" for the second model's Inputs)
Changed: names only (tensorflow.keras / tensorflow.keras.layers -> ember.nn /
ember.nn.layers, tf.math.floordiv/floormod, tf.zeros, tf.shape, tf.expand_dims, tf.cast,
tf.dtypes -> em.*, tf.data -> ember.data, tf.keras.losses -> nn.losses), except where a GAP
says otherwise. Nothing can be downloaded here: urlretrieve writes a movielens.zip this
program GENERATES in MovieLens 1M's layout (ml-1m/ratings.dat only, the file upstream reads:
UserID::MovieID::Rating::Timestamp, users 1..U contiguous and in order, each user's rows in
no particular order, every user with at least 20 ratings, integer ratings 1 to 5, MovieIDs
non-contiguous up to 3,952 in FULL, timestamps in ml-1m's range), which upstream's ZipFile
code extracts. The ratings have a learnable structure: 3.58 + a user bias (sd 0.45) + a
movie bias (sd 0.5) + a rank-3 user-movie term + noise (sd 0.6), rounded and clipped to
1..5; movies are picked with a Zipf-like popularity, every movie at least once. It runs in a
temporary working directory (upstream writes movielens.zip, ml-1m/ and the CSVs where it
runs). pandas and matplotlib are not installed: a small DataFrame/Series stand-in serves
read_csv(sep="::", names=...), Series.apply, del, attribute columns, unique (in order of
appearance), len(index), boolean rows, to_csv(index=False, sep="|", header=False) and
value_counts (counts descending, ties in order of first appearance, a stable sort); the
plots and movie_frequencies.hist(bins=10) are left out, what they would show is asserted.
Reduced (EMBER_PROGRAMS_FULL=1 restores MovieLens 1M's sizes: 6,040 users, 3,706 movies,
1,000,209 ratings, and asserts upstream's 623,744 and 117,968 parameters): 3,000 users (the
fewest for which num_users // 50 buckets still give each user a quotient below the bucket
count, as they do upstream: 2,999 // 60 = 49 < 60), 1,850 movies (upstream's blocks
[:400], [400:1700], [1700:] kept: 150 in the last), 20 + Poisson(6) ratings per user (about
78,000) and upstream's 3 epochs; EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 2,600 users
(52 buckets, 2,599 // 52 = 49), 1,800 movies, 5 ratings per user, 1 epoch, no threshold.
Seeds are set for numpy (upstream's split draws from it) and ember.
Added: the ratings read back (shape, columns, values against the generated ones); the split
replayed with RandomState(0).rand(n) <= 0.85; the CSVs' text; the vocabularies (in order of
first appearance); value_counts against numpy's counts; the pipeline's batches
(OrderedDicts, keys without the label, float32 labels, 128 rows but the last, the eval set
once in file order, every training row once a pass in a new order each pass); upstream's
StringLookup ids against numpy (position, + 1 behind one OOV index; OOV -> 0); the QR
indices (every user a distinct (quotient, remainder) pair, quotients below num_buckets); the
parameter counts (upstream's numbers in FULL, their formula otherwise); each model's output
for a batch against a numpy forward pass from its weights before training (shape (batch, 1),
float32, in (0, 5)); Keras's initial weights (Embedding uniform(-0.05, 0.05), Dense
glorot_uniform, zero biases); a dict of inputs is matched to the Inputs by name, not order;
the history's keys and lengths; the last val_loss and val_mae against numpy's MSE and MAE
over the eval split from the trained weights (Keras weighs each batch's loss by its size:
the mean over every row).
The same training from the same initial weights on the same unshuffled batches was run with
Keras 3.15.1 (torch backend; the lookups as the gathers below): loss, mae, val_loss and
val_mae per epoch agree to 1e-5 over 3 epochs of 520 steps, the final weights to 1.3e-4.
Thresholds (CPU run): each model's last val_loss is at least 0.15 below the MSE of predicting
the training mean everywhere (0.923 here: the best a model that ignores who rates what can
do; 1.25 on MovieLens 1M) and at least 1.0 below its untrained MSE (1.94: the untrained
output is 5 * sigmoid(~0) = 2.5). Over ember seeds 0 to 3 they reach 0.660 to 0.666
(baseline) and 0.704 to 0.714 (memory-efficient), the order upstream's MovieLens run shows
(0.745 and 0.881).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error; all three are loud):
2. (by design, docs/guide/preprocessing.md: ember tensors hold numbers only)
layers.Input(..., dtype=tf.string) has no spelling (no em.string; dtype="string" raises
TypeError "not a dtype: 'string'"): the Inputs take int64 indices of the strings, which the
input pipeline looks up (a StringLookup over every user and movie string).
3. no tf.lookup.StaticHashTable / KeyValueTensorInitializer (module 'ember.core' has no
attribute 'lookup'): a table over those strings, gathered on the device.
4. (by design, same page) StringLookup refuses a symbolic Input (TypeError "works on text on
the host ... got an ember Tensor of dtype int64"): upstream's StringLookup layers, with
their arguments, map every string once on the host, and a gather of their ids stands in.
Fixed in ember since the first version of this port: GAP 1, ember.data had no
experimental.make_csv_dataset (AttributeError: module 'ember.data' has no attribute
'experimental'; a stand-in after TF's readers.py read the CSVs); it exists now, and upstream's
make_csv_dataset call runs (its OrderedDict batches, which graph.function and fit once refused
as unhashable, pass too). GAP 5, ember had no tf.dtypes (module 'ember.core' has no attribute
'dtypes'; em.float32 stood in); em.dtypes now exists, and upstream's mask line runs.
Also seen (not GAPs): model.summary() leaves out the operation nodes the functional model
computes (sigmoid, * 5), which Keras 3 lists as "sigmoid (Sigmoid)" and "multiply
(Multiply)" (tf.keras as TFOpLambda rows); model.layers agrees with Keras 3's. A Sequential
called on a symbolic Input runs its layers on zeros of batch 1 one after the other, so a
later layer sees values the earlier ones computed from zeros (here the movie lookup's entry
for string 0, a user, once -1: Embedding raised "ids must be in [0, 1850)" while the model
was being built; Keras traces symbolically and builds it): the tables hold 0 there.
Models had no train_on_batch / test_on_batch (Keras's; not used here); they exist now.
"""

import collections
import csv
import os
import tempfile
import types
from zipfile import ZIP_DEFLATED, ZipFile

import numpy as np

import ember.core as em
from ember import data, nn

keras = nn  # the example's `keras.` prefix
layers = nn.layers
StringLookup = nn.layers.StringLookup
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
np.random.seed(0)  # upstream's split (np.random.rand) draws from it
em.random.set_seed(0)
workdir = tempfile.TemporaryDirectory()
os.chdir(workdir.name)

# ---------------------------------------------------------------------------------------
# The stand-in for the download: ml-1m/ratings.dat in MovieLens 1M's layout, zipped.
NUM_USERS = 6040 if FULL else 2600 if SHORT else 3000
NUM_MOVIES = 3706 if FULL else 1800 if SHORT else 1850  # movies with a rating
NUM_RATINGS = 1000209 if FULL else None
_rng = np.random.default_rng(0)
_movie_ids = np.sort(_rng.choice(np.arange(1, 3953 if FULL else round(NUM_MOVIES * 3952 / 3706) + 1),
                                 NUM_MOVIES, replace=False))
_weights = _rng.lognormal(0, 1.1, NUM_USERS)
if FULL:  # MovieLens 1M: at least 20 a user, 1,000,209 in all, a long tail
    _counts = 20 + _rng.multinomial(NUM_RATINGS - 20 * NUM_USERS, _weights / _weights.sum())
elif SHORT:
    _counts = np.full(NUM_USERS, 5)
else:
    _counts = 20 + _rng.poisson(6, NUM_USERS)
_counts = np.minimum(_counts, NUM_MOVIES)
_popularity = 1.0 / (np.arange(NUM_MOVIES) + 10.0) ** 1.1
_popularity = _popularity[_rng.permutation(NUM_MOVIES)]  # popularity is not MovieID order
TRUTH = {
    "user_bias": _rng.normal(0, 0.45, NUM_USERS),
    "movie_bias": _rng.normal(0, 0.5, NUM_MOVIES),
    "p": _rng.normal(0, 0.45, (NUM_USERS, 3)),
    "q": _rng.normal(0, 0.45, (NUM_MOVIES, 3)),
}
_forced = _rng.permutation(NUM_MOVIES)  # movie _forced[j] goes to user j % NUM_USERS: all rated
RATINGS = []  # (user, movie, rating, timestamp) rows, in the file's order
for _u in range(NUM_USERS):
    _mine = _forced[_u::NUM_USERS]
    _p = _popularity.copy()
    _p[_mine] = 0
    _more = _rng.choice(NUM_MOVIES, _counts[_u] - len(_mine), replace=False, p=_p / _p.sum())
    _movies = _rng.permutation(np.concatenate([_mine, _more]))
    _score = (3.58 + TRUTH["user_bias"][_u] + TRUTH["movie_bias"][_movies]
              + TRUTH["q"][_movies] @ TRUTH["p"][_u] + _rng.normal(0, 0.6, len(_movies)))
    _stars = np.clip(np.round(_score), 1, 5).astype(np.int64)
    _times = _rng.integers(956703932, 1046454590, len(_movies))
    RATINGS += [(_u + 1, int(_movie_ids[m]), int(r), int(t))
                for m, r, t in zip(_movies, _stars, _times)]
RATINGS = np.array(RATINGS, np.int64)
assert NUM_RATINGS is None or len(RATINGS) == NUM_RATINGS
assert len(np.unique(RATINGS[:, 1])) == NUM_MOVIES


def urlretrieve(url, filename):
    """The stand-in for urllib's: writes the generated ml-1m.zip at `filename`."""
    assert url == "http://files.grouplens.org/datasets/movielens/ml-1m.zip"
    with ZipFile(filename, "w", ZIP_DEFLATED) as z:
        z.writestr("ml-1m/ratings.dat", "".join(f"{u}::{m}::{r}::{t}\n" for u, m, r, t in
                                                RATINGS.tolist()))
    return filename, None


# ---------------------------------------------------------------------------------------
# The stand-in for pandas (not installed here): what the example asks of it.
class Series:
    """A column: values (a numpy array) and row labels, as pandas holds them."""

    def __init__(self, values, index=None):
        self.values = np.asarray(values)
        self.index = np.arange(len(self.values)) if index is None else np.asarray(index)

    def __len__(self):
        return len(self.values)

    def __iter__(self):
        return iter(self.values.tolist())

    def apply(self, func):  # element by element, Python scalars in; str -> object, float -> float64
        return Series(np.array([func(v) for v in self.values.tolist()]).astype(
            object if isinstance(func(self.values.tolist()[0]), str) else None), self.index)

    def unique(self):  # in order of appearance, as pandas
        _, first = np.unique(self.values, return_index=True)
        return self.values[np.sort(first)]

    def value_counts(self):  # counts, descending; ties in order of first appearance
        keys = self.unique()
        position = {k: i for i, k in enumerate(keys.tolist())}
        counts = np.bincount([position[v] for v in self.values.tolist()], minlength=len(keys))
        order = np.argsort(-counts, kind="stable")
        return Series(counts[order], keys[order])

    def keys(self):
        return self.index


class DataFrame:
    """Named columns (numpy arrays, in order) and row labels, as pandas holds them."""

    def __init__(self, columns, index=None):
        self._columns = dict(columns)
        n = len(next(iter(self._columns.values())))
        self.index = np.arange(n) if index is None else np.asarray(index)

    @property
    def columns(self):
        return list(self._columns)

    def __getattr__(self, name):  # ratings_data.user_id
        if name.startswith("_") or name not in self._columns:
            raise AttributeError(name)
        return self[name]

    def __getitem__(self, key):
        if isinstance(key, str):
            return Series(self._columns[key], self.index)
        return DataFrame({k: v[key] for k, v in self._columns.items()}, self.index[key])  # rows

    def __setitem__(self, key, value):
        self._columns[key] = value.values if isinstance(value, Series) else np.asarray(value)

    def __delitem__(self, key):
        del self._columns[key]

    def to_csv(self, path, index, sep, header):
        assert not index and not header
        with open(path, "w", newline="") as f:
            csv.writer(f, delimiter=sep, lineterminator="\n").writerows(
                zip(*(v.tolist() for v in self._columns.values())))


def read_csv(path, sep, names):
    """pd.read_csv of integer columns (int64), the python engine's regex separator."""
    with open(path, encoding="latin-1") as f:
        rows = np.array([line.rstrip("\n").split(sep) for line in f], dtype=np.int64)
    return DataFrame({name: rows[:, j] for j, name in enumerate(names)})


pd = types.SimpleNamespace(read_csv=read_csv)


# ---------------------------------------------------------------------------------------
"""
## Prepare the data

## Download and process data
"""

urlretrieve("http://files.grouplens.org/datasets/movielens/ml-1m.zip", "movielens.zip")
ZipFile("movielens.zip", "r").extractall()

ratings_data = pd.read_csv(
    "ml-1m/ratings.dat",
    sep="::",
    names=["user_id", "movie_id", "rating", "unix_timestamp"],
)

# (added) the file reads back whole, as generated
assert ratings_data.columns == ["user_id", "movie_id", "rating", "unix_timestamp"]
np.testing.assert_array_equal(np.stack([ratings_data[c].values for c in ratings_data.columns], 1),
                              RATINGS)

ratings_data["movie_id"] = ratings_data["movie_id"].apply(lambda x: f"movie_{x}")
ratings_data["user_id"] = ratings_data["user_id"].apply(lambda x: f"user_{x}")
ratings_data["rating"] = ratings_data["rating"].apply(lambda x: float(x))
del ratings_data["unix_timestamp"]

print(f"Number of users: {len(ratings_data.user_id.unique())}")
print(f"Number of movies: {len(ratings_data.movie_id.unique())}")
print(f"Number of ratings: {len(ratings_data.index)}")

# (added) what upstream prints (MovieLens 1M: 6040, 3706, 1000209)
assert len(ratings_data.user_id.unique()) == NUM_USERS
assert len(ratings_data.movie_id.unique()) == NUM_MOVIES
assert len(ratings_data.index) == len(RATINGS)
assert ratings_data["rating"].values.dtype == np.float64 and ratings_data.columns == [
    "user_id", "movie_id", "rating"]
assert ratings_data["movie_id"].values[0] == f"movie_{RATINGS[0, 1]}"

"""
## Create train and eval data splits
"""

random_selection = np.random.rand(len(ratings_data.index)) <= 0.85
train_data = ratings_data[random_selection]
eval_data = ratings_data[~random_selection]

train_data.to_csv("train_data.csv", index=False, sep="|", header=False)
eval_data.to_csv("eval_data.csv", index=False, sep="|", header=False)
print(f"Train data split: {len(train_data.index)}")
print(f"Eval data split: {len(eval_data.index)}")
print("Train and eval data files are saved.")

# (added) the split replayed: numpy's RandomState(0), one uniform draw a row, <= 0.85 trains
_in_train = np.random.RandomState(0).rand(len(RATINGS)) <= 0.85
np.testing.assert_array_equal(random_selection, _in_train)
TRAIN_ROWS, EVAL_ROWS = RATINGS[_in_train], RATINGS[~_in_train]
assert abs(len(TRAIN_ROWS) / len(RATINGS) - 0.85) < 0.01
with open("eval_data.csv") as _f:
    _lines = _f.read().splitlines()
assert _lines[:2] == [f"user_{u}|movie_{m}|{float(r)}" for u, m, r, _ in EVAL_ROWS[:2]], _lines[:2]
assert len(_lines) == len(EVAL_ROWS)

"""
## Define dataset metadata and hyperparameters
"""

csv_header = list(ratings_data.columns)
user_vocabulary = list(ratings_data.user_id.unique())
movie_vocabulary = list(ratings_data.movie_id.unique())
target_feature_name = "rating"
learning_rate = 0.001
batch_size = 128
num_epochs = 1 if SHORT else 3
base_embedding_dim = 64

# (added) the vocabularies: every user and movie, in order of first appearance
assert user_vocabulary == [f"user_{u}" for u in range(1, NUM_USERS + 1)]
_first = np.sort(np.unique(RATINGS[:, 1], return_index=True)[1])
assert movie_vocabulary == [f"movie_{m}" for m in RATINGS[_first, 1]]


# ---------------------------------------------------------------------------------------
# GAP 2 and 4's stand-in (by design, docs/guide/preprocessing.md: ember tensors hold numbers
# only, and StringLookup runs on the host, refusing a symbolic Input): the CSV's strings
# become their index among every user and movie string (STRINGS) in the input pipeline; in
# the model, upstream's StringLookup layers (its arguments as they are) run once on the host
# over STRINGS, and a gather of what they gave maps the inputs' indices on the device.
STRINGS = user_vocabulary + movie_vocabulary
STRING_IDS = StringLookup(vocabulary=STRINGS, mask_token=None, num_oov_indices=0)


def string_ids(features, label):  # keeps make_csv_dataset's OrderedDict
    return type(features)((name, STRING_IDS(value)) for name, value in features.items()), label


class OnStringIds(layers.Layer):
    """`lookup` (a StringLookup) applied to inputs that hold indices into STRINGS."""

    def __init__(self, lookup):
        super().__init__(dtype="int64")  # as a StringLookup's: int ids out (Keras builds a
        # Sequential's input with its first layer's dtype)
        self.lookup = lookup
        vocabulary = set(lookup.get_vocabulary())
        known = [s for s in STRINGS if lookup.num_oov_indices or s in vocabulary]
        ids = dict(zip(known, lookup(np.array(known, dtype=object)).numpy().tolist()))
        # a string this lookup would refuse (num_oov_indices=0: a user's for the movies) is
        # never looked up, but the functional API calls layers on zeros to learn shapes
        self.table = em.constant(np.array([ids.get(s, 0) for s in STRINGS], np.int64))

    def call(self, inputs):
        return em.gather(self.table, inputs)


# GAP 3's stand-in: tf.lookup.StaticHashTable(KeyValueTensorInitializer(keys, values),
# default_value) with .lookup(), likewise a table over STRINGS gathered by the inputs.
class KeyValueTensorInitializer:
    def __init__(self, keys, values):
        self.keys, self.values = list(keys), list(values)


class StaticHashTable:
    def __init__(self, initializer, default_value):
        found = dict(zip(initializer.keys, initializer.values))
        self.table = em.constant(np.array([found.get(s, default_value) for s in STRINGS],
                                          np.int64))

    def lookup(self, keys):
        return em.gather(self.table, keys)


lookup = types.SimpleNamespace(StaticHashTable=StaticHashTable,
                               KeyValueTensorInitializer=KeyValueTensorInitializer)

"""
## Train and evaluate the model
"""


def get_dataset_from_csv(csv_file_path, batch_size=128, shuffle=True):
    return data.experimental.make_csv_dataset(
        csv_file_path,
        batch_size=batch_size,
        column_names=csv_header,
        label_name=target_feature_name,
        num_epochs=1,
        header=False,
        field_delim="|",
        shuffle=shuffle,
    ).map(string_ids)  # GAP 2's stand-in: the strings' indices in STRINGS


results = {}  # (added) each model's history


def run_experiment(model):
    # Compile the model.
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate),
        loss=nn.losses.MeanSquaredError(),
        metrics=[keras.metrics.MeanAbsoluteError(name="mae")],
    )
    # Read the training data.
    train_dataset = get_dataset_from_csv("train_data.csv", batch_size)
    # Read the test data.
    eval_dataset = get_dataset_from_csv("eval_data.csv", batch_size, shuffle=False)
    # Fit the model with the training data.
    history = model.fit(
        train_dataset,
        epochs=num_epochs,
        validation_data=eval_dataset,
    )
    results[model] = history, train_dataset, eval_dataset  # (added)
    return history


"""
## Experiment 1: baseline collaborative filtering model

### Implement embedding encoder
"""


def embedding_encoder(vocabulary, embedding_dim, num_oov_indices=0, name=None):
    return keras.Sequential(
        [
            # GAP 4: StringLookup(
            #     vocabulary=vocabulary, mask_token=None, num_oov_indices=num_oov_indices
            # ),
            OnStringIds(StringLookup(
                vocabulary=vocabulary, mask_token=None, num_oov_indices=num_oov_indices
            )),
            layers.Embedding(
                input_dim=len(vocabulary) + num_oov_indices, output_dim=embedding_dim
            ),
        ],
        name=f"{name}_embedding" if name else None,
    )


"""
### Implement the baseline model
"""


def create_baseline_model():
    # Receive the user as an input.
    # GAP 2: user_input = layers.Input(name="user_id", shape=(), dtype=tf.string)
    user_input = layers.Input(name="user_id", shape=(), dtype="int64")
    # Get user embedding.
    user_embedding = embedding_encoder(
        vocabulary=user_vocabulary, embedding_dim=base_embedding_dim, name="user"
    )(user_input)

    # Receive the movie as an input.
    # GAP 2: movie_input = layers.Input(name="movie_id", shape=(), dtype=tf.string)
    movie_input = layers.Input(name="movie_id", shape=(), dtype="int64")
    # Get embedding.
    movie_embedding = embedding_encoder(
        vocabulary=movie_vocabulary, embedding_dim=base_embedding_dim, name="movie"
    )(movie_input)

    # Compute dot product similarity between user and movie embeddings.
    logits = layers.Dot(axes=1, name="dot_similarity")(
        [user_embedding, movie_embedding]
    )
    # Convert to rating scale.
    prediction = keras.activations.sigmoid(logits) * 5
    # Create the model.
    model = keras.Model(
        inputs=[user_input, movie_input], outputs=prediction, name="baseline_model"
    )
    return model


baseline_model = create_baseline_model()
baseline_model.summary()

"""
Notice that the number of trainable parameters is 623,744
"""
# (added) (users + movies) * 64: upstream's 623,744 on MovieLens 1M
assert baseline_model.count_params() == (NUM_USERS + NUM_MOVIES) * 64
assert not FULL or baseline_model.count_params() == 623744


# (added) numpy's ids and forward passes, from the models' weights
USER_INDEX = {f"user_{u}": i for i, u in enumerate(range(1, NUM_USERS + 1))}
MOVIE_INDEX = {s: i for i, s in enumerate(movie_vocabulary)}


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def np_baseline(model, users, movies):
    u_emb = model.get_layer("user_embedding").layers[-1].embeddings.numpy().astype(np.float64)
    m_emb = model.get_layer("movie_embedding").layers[-1].embeddings.numpy().astype(np.float64)
    u = u_emb[[USER_INDEX[s] for s in users]]
    m = m_emb[[MOVIE_INDEX[s] for s in movies]]
    return _sigmoid(np.sum(u * m, axis=1, keepdims=True)) * 5


_STRING_INDEX = {s: i for i, s in enumerate(STRINGS)}


def as_ids(strings):  # what the pipeline's lookup (GAP 2's stand-in) gives
    return np.array([_STRING_INDEX[s] for s in strings], np.int64)


_users = [f"user_{u}" for u in EVAL_ROWS[:7, 0]]
_movies = [f"movie_{m}" for m in EVAL_ROWS[:7, 1]]
_out = baseline_model({"user_id": as_ids(_users), "movie_id": as_ids(_movies)})
assert tuple(_out.shape) == (7, 1) and _out.dtype == em.float32, (_out.shape, _out.dtype)
np.testing.assert_allclose(_out.numpy(), np_baseline(baseline_model, _users, _movies), rtol=1e-5)
assert np.all(np.abs(_out.numpy() - 2.5) < 0.05)  # dot products of uniform(-0.05, 0.05) rows
# the inputs are matched to the dict's keys by name, not by order
np.testing.assert_array_equal(
    baseline_model({"movie_id": as_ids(_movies), "user_id": as_ids(_users)}).numpy(), _out.numpy())
untrained = {"baseline": np.mean((np_baseline(baseline_model, [f"user_{u}" for u in EVAL_ROWS[:, 0]],
                                              [f"movie_{m}" for m in EVAL_ROWS[:, 1]])[:, 0]
                                  - EVAL_ROWS[:, 2]) ** 2)}

history = run_experiment(baseline_model)

# (left out: plt.plot(history.history["loss"]); plt.plot(history.history["val_loss"]);
#  the title, labels and legend; plt.show()) -- what it would draw is checked at the end

"""
## Experiment 2: memory-efficient model
"""

"""
### Implement Quotient-Remainder embedding as a layer
"""


class QREmbedding(keras.layers.Layer):
    def __init__(self, vocabulary, embedding_dim, num_buckets, name=None):
        super(QREmbedding, self).__init__(name=name)  # noqa: UP008
        self.num_buckets = num_buckets

        # GAP 4: self.index_lookup = StringLookup(
        #     vocabulary=vocabulary, mask_token=None, num_oov_indices=0
        # )
        self.index_lookup = OnStringIds(StringLookup(
            vocabulary=vocabulary, mask_token=None, num_oov_indices=0
        ))
        self.q_embeddings = layers.Embedding(
            num_buckets,
            embedding_dim,
        )
        self.r_embeddings = layers.Embedding(
            num_buckets,
            embedding_dim,
        )

    def call(self, inputs):
        # Get the item index.
        embedding_index = self.index_lookup(inputs)
        # Get the quotient index.
        quotient_index = em.math.floordiv(embedding_index, self.num_buckets)
        # Get the reminder index.
        remainder_index = em.math.floormod(embedding_index, self.num_buckets)
        # Lookup the quotient_embedding using the quotient_index.
        quotient_embedding = self.q_embeddings(quotient_index)
        # Lookup the remainder_embedding using the remainder_index.
        remainder_embedding = self.r_embeddings(remainder_index)
        # Use multiplication as a combiner operation
        return quotient_embedding * remainder_embedding


"""
### Implement Mixed Dimension embedding as a layer
"""


class MDEmbedding(keras.layers.Layer):
    def __init__(
        self, blocks_vocabulary, blocks_embedding_dims, base_embedding_dim, name=None
    ):
        super(MDEmbedding, self).__init__(name=name)  # noqa: UP008
        self.num_blocks = len(blocks_vocabulary)

        # Create vocab to block lookup.
        keys = []
        values = []
        for block_idx, block_vocab in enumerate(blocks_vocabulary):
            keys.extend(block_vocab)
            values.extend([block_idx] * len(block_vocab))
        # GAP 3: self.vocab_to_block = tf.lookup.StaticHashTable(
        self.vocab_to_block = lookup.StaticHashTable(
            lookup.KeyValueTensorInitializer(keys, values), default_value=-1
        )

        self.block_embedding_encoders = []
        self.block_embedding_projectors = []

        # Create block embedding encoders and projectors.
        for idx in range(self.num_blocks):
            vocabulary = blocks_vocabulary[idx]
            embedding_dim = blocks_embedding_dims[idx]
            block_embedding_encoder = embedding_encoder(
                vocabulary, embedding_dim, num_oov_indices=1
            )
            self.block_embedding_encoders.append(block_embedding_encoder)
            if embedding_dim == base_embedding_dim:
                self.block_embedding_projectors.append(layers.Lambda(lambda x: x))
            else:
                self.block_embedding_projectors.append(
                    layers.Dense(units=base_embedding_dim)
                )

    def call(self, inputs):
        # Get block index for each input item.
        block_indicies = self.vocab_to_block.lookup(inputs)
        # Initialize output embeddings to zeros.
        embeddings = em.zeros(shape=(em.shape(inputs)[0], base_embedding_dim))
        # Generate embeddings from blocks.
        for idx in range(self.num_blocks):
            # Lookup embeddings from the current block.
            block_embeddings = self.block_embedding_encoders[idx](inputs)
            # Project embeddings to base_embedding_dim.
            block_embeddings = self.block_embedding_projectors[idx](block_embeddings)
            # Create a mask to filter out embeddings of items that do not belong to the current block.
            mask = em.expand_dims(em.cast(block_indicies == idx, em.dtypes.float32), 1)
            # Set the embeddings for the items not belonging to the current block to zeros.
            block_embeddings = block_embeddings * mask
            # Add the block embeddings to the final embeddings.
            embeddings += block_embeddings

        return embeddings


"""
### Implement the memory-efficient model
"""

movie_frequencies = ratings_data["movie_id"].value_counts()
# (left out: movie_frequencies.hist(bins=10)) -- what it would show: a long tail
_counts_np = collections.Counter(RATINGS[:, 1].tolist())
assert sorted(movie_frequencies.values.tolist(), reverse=True) == movie_frequencies.values.tolist()
assert {k: int(v) for k, v in zip(movie_frequencies.keys(), movie_frequencies.values)} == {
    f"movie_{m}": c for m, c in _counts_np.items()}

"""
You can see that we can group the movies into three blocks, and assign them 64, 32, and 16
embedding dimensions, respectively. Feel free to experiment with different number of blocks
and dimensions.
"""

sorted_movie_vocabulary = list(movie_frequencies.keys())

movie_blocks_vocabulary = [
    sorted_movie_vocabulary[:400],  # high popularity movies block
    sorted_movie_vocabulary[400:1700],  # normal popularity movies block
    sorted_movie_vocabulary[1700:],  # low popularity movies block
]

movie_blocks_embedding_dims = [64, 32, 16]

user_embedding_num_buckets = len(user_vocabulary) // 50

# (added) the blocks cover every movie once; every user gets a distinct (quotient, remainder)
# pair with the quotient below the bucket count (else the q table is read out of range)
BLOCK_SIZES = [len(b) for b in movie_blocks_vocabulary]
assert BLOCK_SIZES == [400, 1300, NUM_MOVIES - 1700], BLOCK_SIZES
_quotients = np.arange(NUM_USERS) // user_embedding_num_buckets
assert _quotients.max() < user_embedding_num_buckets, (_quotients.max(), user_embedding_num_buckets)
assert len(set(zip(_quotients, np.arange(NUM_USERS) % user_embedding_num_buckets))) == NUM_USERS


def create_memory_efficient_model():
    # Take the user as an input.
    # GAP 2: user_input = layers.Input(name="user_id", shape=(), dtype=tf.string)
    user_input = layers.Input(name="user_id", shape=(), dtype="int64")
    # Get user embedding.
    user_embedding = QREmbedding(
        vocabulary=user_vocabulary,
        embedding_dim=base_embedding_dim,
        num_buckets=user_embedding_num_buckets,
        name="user_embedding",
    )(user_input)

    # Take the movie as an input.
    # GAP 2: movie_input = layers.Input(name="movie_id", shape=(), dtype=tf.string)
    movie_input = layers.Input(name="movie_id", shape=(), dtype="int64")
    # Get embedding.
    movie_embedding = MDEmbedding(
        blocks_vocabulary=movie_blocks_vocabulary,
        blocks_embedding_dims=movie_blocks_embedding_dims,
        base_embedding_dim=base_embedding_dim,
        name="movie_embedding",
    )(movie_input)

    # Compute dot product similarity between user and movie embeddings.
    logits = layers.Dot(axes=1, name="dot_similarity")(
        [user_embedding, movie_embedding]
    )
    # Convert to rating scale.
    prediction = keras.activations.sigmoid(logits) * 5
    # Create the model.
    model = keras.Model(
        inputs=[user_input, movie_input], outputs=prediction, name="baseline_model"
    )
    return model


memory_efficient_model = create_memory_efficient_model()
memory_efficient_model.summary()

"""
Notice that the number of trainable parameters is 117,968, which is more than 5x less than
the number of parameters in the baseline model.
"""
# (added) 2 * buckets * 64 + the blocks' tables (one OOV row each) + the projections
_md_params = sum((n + 1) * d + (0 if d == 64 else d * 64 + 64)
                 for n, d in zip(BLOCK_SIZES, movie_blocks_embedding_dims))
assert memory_efficient_model.count_params() == 2 * user_embedding_num_buckets * 64 + _md_params
assert not FULL or memory_efficient_model.count_params() == 117968


def np_memory_efficient(model, users, movies):
    qr = model.get_layer("user_embedding")
    q = qr.q_embeddings.embeddings.numpy().astype(np.float64)
    r = qr.r_embeddings.embeddings.numpy().astype(np.float64)
    index = np.array([USER_INDEX[s] for s in users])
    u = q[index // user_embedding_num_buckets] * r[index % user_embedding_num_buckets]
    md = model.get_layer("movie_embedding")
    m = np.zeros((len(movies), 64))
    for row, s in enumerate(movies):
        block = next(k for k, b in enumerate(movie_blocks_vocabulary) if s in b)
        table = md.block_embedding_encoders[block].layers[-1].embeddings.numpy().astype(np.float64)
        e = table[movie_blocks_vocabulary[block].index(s) + 1]  # index 0: the OOV row
        if block > 0:
            dense = md.block_embedding_projectors[block]
            e = e @ dense.kernel.numpy() + dense.bias.numpy()
        m[row] = e
    return _sigmoid(np.sum(u * m, axis=1, keepdims=True)) * 5


# (added) upstream's lookups give numpy's ids: position in the vocabulary, behind one OOV
# index where there is one (unknown -> 0)
_md = memory_efficient_model.get_layer("movie_embedding")
_probe = [sorted_movie_vocabulary[0], sorted_movie_vocabulary[500], sorted_movie_vocabulary[-1]]
np.testing.assert_array_equal(
    _md.block_embedding_encoders[1].layers[0](as_ids(_probe)).numpy(), [0, 101, 0])
np.testing.assert_array_equal(_md.vocab_to_block.lookup(as_ids(_probe)).numpy(), [0, 1, 2])
np.testing.assert_array_equal(
    memory_efficient_model.get_layer("user_embedding").index_lookup(as_ids(["user_1", "user_42"])),
    [0, 41])
# Keras's initial weights: Embedding uniform(-0.05, 0.05), Dense glorot_uniform, zero biases
_qr = memory_efficient_model.get_layer("user_embedding")
_tables = [_qr.q_embeddings.embeddings, _qr.r_embeddings.embeddings] + [
    e.layers[-1].embeddings for e in _md.block_embedding_encoders]
_dense = [p for p in _md.block_embedding_projectors if isinstance(p, layers.Dense)]
assert len(_tables) + 2 * len(_dense) == len(memory_efficient_model.trainable_variables) == 9
for _w, _limit in [(t.numpy(), 0.05) for t in _tables] + [
        (d.kernel.numpy(), np.sqrt(6 / sum(d.kernel.shape))) for d in _dense]:
    assert np.abs(_w).max() <= _limit and abs(_w.std() / (_limit / np.sqrt(3)) - 1) < 0.1, (
        _w.shape, _w.std())
assert not any(d.bias.numpy().any() for d in _dense)
_out = memory_efficient_model({"user_id": as_ids(_users), "movie_id": as_ids(_movies)})
assert tuple(_out.shape) == (7, 1) and _out.dtype == em.float32, (_out.shape, _out.dtype)
np.testing.assert_allclose(_out.numpy(), np_memory_efficient(memory_efficient_model, _users, _movies),
                           rtol=1e-5)
_eval_users = [f"user_{u}" for u in EVAL_ROWS[:, 0]]
_eval_movies = [f"movie_{m}" for m in EVAL_ROWS[:, 1]]
untrained["memory_efficient"] = np.mean(
    (np_memory_efficient(memory_efficient_model, _eval_users, _eval_movies)[:, 0]
     - EVAL_ROWS[:, 2]) ** 2)

history = run_experiment(memory_efficient_model)

# (left out: the same plot of history.history["loss"] and ["val_loss"]; plt.show())

# ---------------------------------------------------------------------------------------
# (added) the pipeline: the eval set once, in file order, in batches of 128 (the last
# shorter), float32 labels, the features without the label; every training row once a pass,
# in a new order each pass
_, _train_ds, _eval_ds = results[memory_efficient_model]
_batches = list(_eval_ds)
assert [len(y) for _, y in _batches[:-1]] == [128] * (len(_batches) - 1)
assert 0 < len(_batches[-1][1]) <= 128
assert list(_batches[0][0]) == ["user_id", "movie_id"]
assert all(type(x) is collections.OrderedDict for x, _ in _batches)  # as TF's make_csv_dataset
assert all(np.asarray(y).dtype == np.float32 for _, y in _batches)
np.testing.assert_array_equal(np.concatenate([np.asarray(y) for _, y in _batches]), EVAL_ROWS[:, 2])
np.testing.assert_array_equal(np.concatenate([np.asarray(x["user_id"]) for x, _ in _batches]),
                              as_ids(_eval_users))
_passes = [np.concatenate([np.asarray(x["movie_id"]) * 10 ** 5 + np.asarray(x["user_id"])
                           for x, _ in _train_ds]) for _ in range(2)]
_expected = np.sort(as_ids([f"movie_{m}" for m in TRAIN_ROWS[:, 1]]) * 10 ** 5
                    + as_ids([f"user_{u}" for u in TRAIN_ROWS[:, 0]]))
assert all(np.array_equal(np.sort(p), _expected) for p in _passes)
assert not np.array_equal(_passes[0], _passes[1])

# (added) the histories, and the last epoch's val_loss / val_mae against numpy's MSE / MAE
# over the eval split from the trained weights
mean_only = np.mean((EVAL_ROWS[:, 2] - TRAIN_ROWS[:, 2].mean()) ** 2)
for name, model, forward in [("baseline", baseline_model, np_baseline),
                             ("memory_efficient", memory_efficient_model, np_memory_efficient)]:
    history = results[model][0]
    assert sorted(history.history) == ["loss", "mae", "val_loss", "val_mae"], history.history.keys()
    assert all(len(v) == num_epochs for v in history.history.values()), history.history
    predicted = forward(model, _eval_users, _eval_movies)[:, 0]
    np.testing.assert_allclose(history.history["val_loss"][-1],
                               np.mean((predicted - EVAL_ROWS[:, 2]) ** 2), rtol=1e-4)
    np.testing.assert_allclose(history.history["val_mae"][-1],
                               np.mean(np.abs(predicted - EVAL_ROWS[:, 2])), rtol=1e-4)
    val_loss = history.history["val_loss"]
    print(f"{name}: val_loss {[round(v, 4) for v in val_loss]}, untrained "
          f"{untrained[name]:.4f}, the training mean {mean_only:.4f}")
    if not SHORT:
        assert val_loss[-1] < mean_only - 0.15, (name, val_loss, mean_only)
        assert val_loss[-1] < untrained[name] - 1.0, (name, val_loss, untrained[name])
