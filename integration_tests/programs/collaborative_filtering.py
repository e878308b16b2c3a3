"""Port of keras-team/keras-io examples/structured_data/collaborative_filtering_movielens.py
("Collaborative Filtering for Movie Recommendations": MovieLens's ratings.csv read with
pandas, users and movies encoded as integer indices, the data shuffled with
df.sample(frac=1, random_state=42) and split 90/10, a subclassed RecommenderNet (user and
movie Embedding(50) with he_normal and an l2(1e-6) regularizer, user and movie bias
Embedding(1), tf.tensordot(user_vector, movie_vector, 2), the biases added, a sigmoid)
trained with BinaryCrossentropy and Adam(1e-3) on the ratings scaled to [0, 1], batch 64,
5 epochs with validation_data, then the top 10 predicted movies a sampled user has not
rated, printed from movies.csv).

Upstream: https://github.com/keras-team/keras-io/blob/ff6a507b2737777a8845ff9a2f1caf7f53ce3e78/examples/structured_data/collaborative_filtering_movielens.py
(the tf.keras version; keras-io master's Keras 3 version differs in names only:
ops.tensordot, ops.nn.sigmoid, keras.losses.BinaryCrossentropy and super().__init__)
Changed: names only (tensorflow.keras / tensorflow.keras.layers -> ember.nn /
ember.nn.layers, tf.tensordot -> em.tensordot, tf.nn.sigmoid -> em.nn_ops.sigmoid,
tf.keras.losses -> nn.losses). Nothing can be downloaded here, so get_file writes a
ml-latest-small.zip this program generates with MovieLens's layout (ml-latest-small/
ratings.csv: userId,movieId,rating,timestamp sorted by user then movie, ratings 0.5 to 5.0
in half stars, every user with at least 20 ratings, non-contiguous movieIds up to 193,609;
ml-latest-small/movies.csv: movieId,title,genres, quoted titles with commas, and a few
movies nobody rated), which upstream's ZipFile code extracts. The ratings have a learnable
structure: 3.5 + a user bias + a movie bias + a rank-3 user-movie term + noise, rounded to
half stars and clipped to [0.5, 5]; the movies are chosen with a Zipf-like popularity.
pandas is not installed here: a DataFrame stand-in below (read_csv with pandas's int64 /
float64 / str columns, unique in order of appearance, map, apply, values, sample with
pandas's RandomState(random_state).permutation, boolean rows, isin, sort_values, head,
itertuples) does what the example asks of pandas (sort_values breaks ties stably). The
plot (matplotlib) is left out; what it would draw is checked.
Reduced (EMBER_PROGRAMS_FULL=1 restores MovieLens's sizes: 610 users, 9,742 movies, 9,724
of them rated, 100,836 ratings; about 15 s): 400 users, 3,000 movies (2,990 rated), 30,000
ratings, and upstream's 5 epochs; EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 40 users,
120 movies (115 rated), 1,600 ratings, 1 epoch and no threshold.
Added: seeds for numpy and ember; the CSVs read back whole with pandas's dtypes; the
encodings (users and movies numbered in order of first appearance, ratings 0.5 to 5), the
shuffle is RandomState(42)'s permutation, the split's shapes and y in [0, 1]; the model's
output for a batch equals numpy's (np.tensordot(u, m, 2) contracts both axes: one number
for the whole batch, added to every row's biases, so a prediction depends on the batch it
is in; output shape (batch, 1), float32); he_normal's and Embedding's default scales;
model.losses are the two l2 terms, 1e-6 * sum(w**2) over the whole embedding matrices;
evaluate() of the untrained model equals numpy's binary cross-entropy (Keras's clip to
[1e-7, 1 - 1e-7]) over batches of 32 plus the l2 terms; the history has Keras's keys and
one value per epoch, and its last val_loss equals numpy's over validation batches of 64
(fit's validation_batch_size defaults to batch_size) from the trained weights; predict()
equals numpy over batches of 32; the recommended movies are ones the user did not rate.
The same training from the same initial weights without shuffling was run with Keras
3.15.1 (torch backend, upstream's Keras 3 code): its loss and val_loss per epoch agree with
this program's to 1e-6 and its final weights to 2e-5; with shuffling it ends at val_loss
0.620 to 0.623 (this program: 0.619). val_loss swings between epochs in both (the
batch-wide dot product), so the thresholds look at the last epoch and at the biases.
Thresholds (CPU run): the last val_loss is at least 0.005 below predicting the training
mean everywhere (0.634; it reaches 0.619, upstream's MovieLens run 0.615 against 0.637)
and 0.05 below the untrained model's (0.695); the learnt bias embeddings correlate with
the user and movie biases the ratings were generated with (users above 0.7, movies above
0.5; they reach 0.93 and 0.76, an untrained model's are near 0: its biases are uniform
noise of 0.05), and the top 10 are movies the sampled user would like (bias plus the
rank-3 term) more than the average movie they did not rate (0.82 against 0.00).
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error): 1. (no network here) a local get_file writes
the generated zip and returns its path (nn.utils.get_file, Keras's, was missing when this
port was written; it exists now). Everything else upstream calls (subclassed Model,
Embedding with he_normal and an l2 regularizer, em.tensordot with axes=2,
em.nn_ops.sigmoid, BinaryCrossentropy, Adam, fit with validation_data, evaluate, predict)
runs as upstream's lines and gives Keras's numbers.
"""

import collections
import csv
import os
import tempfile
import types
import zipfile
from pathlib import Path
from zipfile import ZipFile

import numpy as np

import ember.core as em
from ember import nn
from ember.nn import layers

keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
em.random.set_seed(0)
np.random.seed(0)
_tmp = tempfile.TemporaryDirectory()

NUM_USERS, NUM_MOVIES, NUM_RATED, NUM_RATINGS = (
    (610, 9742, 9724, 100836) if FULL else (40, 120, 115, 1600) if SHORT else
    (400, 3000, 2990, 30000))
MIN_PER_USER = 20
EPOCHS = 1 if SHORT else 5


# ---------------------------------------------------------------------------------------
# The stand-in for the MovieLens download, written with its layout.
_GENRES = ['Action', 'Adventure', 'Animation', 'Children', 'Comedy', 'Crime', 'Documentary',
           'Drama', 'Fantasy', 'Horror', 'IMAX', 'Musical', 'Mystery', 'Romance', 'Sci-Fi',
           'Thriller', 'War', 'Western']


def _movielens_like(rng):
  movie_ids = np.sort(rng.choice(np.arange(1, 193610), NUM_MOVIES, replace=False))
  rated = np.sort(rng.choice(NUM_MOVIES, NUM_RATED, replace=False))  # rows of movie_ids
  popularity = 1.0 / (np.arange(NUM_RATED) + 10.0) ** 0.9
  popularity = rng.permutation(popularity / popularity.sum())
  user_bias = rng.normal(0.0, 0.45, NUM_USERS)
  movie_bias = rng.normal(0.0, 0.5, NUM_RATED)
  p, q = rng.normal(0.0, 0.6, (NUM_USERS, 3)), rng.normal(0.0, 0.6, (NUM_RATED, 3))
  seen = [set() for _ in range(NUM_USERS)]
  for m in range(NUM_RATED):  # every movie rated at least once
    seen[rng.integers(NUM_USERS)].add(m)
  counts = np.array([max(MIN_PER_USER, len(s)) for s in seen])
  counts += rng.multinomial(NUM_RATINGS - counts.sum(), rng.dirichlet(np.full(NUM_USERS, 0.6)))
  counts = np.minimum(counts, NUM_RATED // 2)  # nobody rates more than half the movies
  while counts.sum() < NUM_RATINGS:
    counts[rng.choice(np.flatnonzero(counts < NUM_RATED // 2))] += 1
  rows = []
  for u in range(NUM_USERS):
    weights = popularity.copy()
    weights[list(seen[u])] = 0.0
    extra = rng.choice(NUM_RATED, counts[u] - len(seen[u]), replace=False, p=weights / weights.sum())
    movies = np.sort(np.concatenate([sorted(seen[u]), extra]).astype(np.int64))
    score = 3.5 + user_bias[u] + movie_bias[movies] + q[movies] @ p[u] + rng.normal(0, 0.3, len(movies))
    stars = np.clip(np.round(score * 2) / 2, 0.5, 5.0)
    stamps = rng.integers(828124615, 1537799251, len(movies))
    rows += [(u + 1, int(movie_ids[rated[m]]), float(s), int(t)) for m, s, t in zip(movies, stars, stamps)]
  titles = []
  for i, mid in enumerate(movie_ids):
    name = f'Movie {i + 1}' if i % 7 else f'Picture {i + 1}, The'  # a comma: quoted in the CSV
    genres = '|'.join(sorted(rng.choice(_GENRES, rng.integers(1, 4), replace=False)))
    titles.append((int(mid), f'{name} ({rng.integers(1902, 2019)})', genres))
  # (added) what each user would think of each rated movie, noise aside: checked below
  truth = dict(movie_ids=movie_ids[rated], user_bias=user_bias, movie_bias=movie_bias, p=p, q=q)
  return rows, titles, truth


def get_file(fname, origin, extract=False):  # GAP 1: keras.utils.get_file
  rows, titles, get_file.truth = _movielens_like(np.random.default_rng(0))
  get_file.rows, get_file.titles = rows, titles
  path = os.path.join(_tmp.name, fname)
  with zipfile.ZipFile(path, 'w') as z:
    with z.open('ml-latest-small/ratings.csv', 'w') as f:
      text = ['userId,movieId,rating,timestamp'] + [f'{u},{m},{r:.1f},{t}' for u, m, r, t in rows]
      f.write(('\n'.join(text) + '\n').encode())
    buf = []
    _w = csv.writer(types.SimpleNamespace(write=buf.append), lineterminator='\n')
    _w.writerow(['movieId', 'title', 'genres'])
    _w.writerows(titles)
    z.writestr('ml-latest-small/movies.csv', ''.join(buf))
  return path


# ---------------------------------------------------------------------------------------
# The stand-in for pandas (not installed here): what the example asks of a DataFrame.
class Series(np.ndarray):
  """A column: a numpy array with the few pandas methods the example calls."""

  def __iter__(self):  # pandas yields Python scalars
    return iter(self.tolist())

  @property
  def values(self):
    return np.asarray(self)

  def unique(self):  # in order of appearance, as pandas
    _, first = np.unique(np.asarray(self), return_index=True)
    return np.asarray(self)[np.sort(first)]

  def map(self, mapping):
    return np.array([mapping[v] for v in self.tolist()])

  def apply(self, f):  # pandas passes Python scalars and makes float results float64
    return np.array([f(v) for v in self.tolist()], dtype=np.float64).view(Series)

  def isin(self, values):
    return np.isin(np.asarray(self), np.asarray(values))

  def sample(self, n):  # pandas: the global numpy RandomState, without replacement
    return np.asarray(self)[np.random.choice(len(self), size=n, replace=False)].view(Series)

  @property
  def iloc(self):
    return np.asarray(self)


class DataFrame:
  """Named columns (numpy arrays, in order), as pd.read_csv gives these CSVs."""

  def __init__(self, columns):
    self._columns = dict(columns)

  @property
  def shape(self):
    return (len(self), len(self._columns))

  def __len__(self):
    return len(next(iter(self._columns.values())))

  def __getattr__(self, name):  # df.userId
    if name.startswith('_') or name not in self._columns:
      raise AttributeError(name)
    return self[name]

  def __getitem__(self, key):
    if isinstance(key, str):
      return self._columns[key].view(Series)
    if isinstance(key, list):
      return DataFrame({k: self._columns[k] for k in key})
    return DataFrame({k: v[key] for k, v in self._columns.items()})  # a boolean mask of rows

  def __setitem__(self, key, value):
    self._columns[key] = np.asarray(value)

  @property
  def values(self):
    return np.stack(list(self._columns.values()), axis=1)

  def sample(self, frac, random_state):  # pandas: RandomState(random_state).choice(n, n, False)
    order = np.random.RandomState(random_state).permutation(len(self))
    return self[order]

  def sort_values(self, by, ascending=True):
    key = self._columns[by]
    return self[np.argsort(key if ascending else -key, kind='stable')]

  def head(self, n=5):
    return self[np.arange(min(n, len(self)))]

  def itertuples(self):
    row = collections.namedtuple('Pandas', ['Index', *self._columns])
    for i in range(len(self)):
      yield row(i, *(v[i] for v in self._columns.values()))


def _read_csv(path):
  with open(path, newline='') as f:
    rows = list(csv.reader(f))
  header, rows = rows[0], rows[1:]
  columns = {}
  for i, name in enumerate(header):
    column = [row[i] for row in rows]
    for dtype in (np.int64, np.float64):
      try:
        columns[name] = np.array(column, dtype=dtype)
        break
      except ValueError:
        pass
    else:
      columns[name] = np.array(column, dtype=object)
  return DataFrame(columns)


pd = types.SimpleNamespace(read_csv=_read_csv)


def _bce(y, p):
  """Keras's binary cross-entropy of probabilities: clipped to [1e-7, 1 - 1e-7]."""
  p = np.clip(np.asarray(p, np.float64), 1e-7, 1 - 1e-7)
  return -(y * np.log(p) + (1 - y) * np.log(1 - p))


def _sigmoid(z):
  return 1 / (1 + np.exp(-z))


"""
## First, load the data and apply preprocessing
"""

# Download the actual data from http://files.grouplens.org/datasets/movielens/ml-latest-small.zip"
# Use the ratings.csv file
movielens_data_file_url = (
    "http://files.grouplens.org/datasets/movielens/ml-latest-small.zip"
)
# GAP 1: movielens_zipped_file = keras.utils.get_file(
movielens_zipped_file = get_file(
    "ml-latest-small.zip", movielens_data_file_url, extract=False
)
keras_datasets_path = Path(movielens_zipped_file).parents[0]
movielens_dir = keras_datasets_path / "ml-latest-small"

# Only extract the data the first time the script is run.
if not movielens_dir.exists():
    with ZipFile(movielens_zipped_file, "r") as zip:
        # Extract files
        print("Extracting all the files now...")
        zip.extractall(path=keras_datasets_path)
        print("Done!")

ratings_file = movielens_dir / "ratings.csv"
df = pd.read_csv(ratings_file)

# (added) the file reads back whole, with pandas's dtypes
assert df.shape == (len(get_file.rows), 4), df.shape
assert [df[c].dtype for c in ["userId", "movieId", "rating", "timestamp"]] == [
    np.int64, np.int64, np.float64, np.int64]
np.testing.assert_array_equal(df["rating"], [r[2] for r in get_file.rows])

"""
First, need to perform some preprocessing to encode users and movies as integer indices.
"""
user_ids = df["userId"].unique().tolist()
user2user_encoded = {x: i for i, x in enumerate(user_ids)}
userencoded2user = {i: x for i, x in enumerate(user_ids)}
movie_ids = df["movieId"].unique().tolist()
movie2movie_encoded = {x: i for i, x in enumerate(movie_ids)}
movie_encoded2movie = {i: x for i, x in enumerate(movie_ids)}
df["user"] = df["userId"].map(user2user_encoded)
df["movie"] = df["movieId"].map(movie2movie_encoded)

num_users = len(user2user_encoded)
num_movies = len(movie_encoded2movie)
df["rating"] = df["rating"].values.astype(np.float32)
# min and max ratings will be used to normalize the ratings later
min_rating = min(df["rating"])
max_rating = max(df["rating"])

print(
    "Number of users: {}, Number of Movies: {}, Min rating: {}, Max rating: {}".format(  # noqa: UP032
        num_users, num_movies, min_rating, max_rating
    )
)

# (added) users and movies numbered in order of first appearance; every rated movie counted
assert user_ids == sorted(user_ids) == list(range(1, NUM_USERS + 1))  # the file is sorted by user
assert num_users == NUM_USERS and num_movies == NUM_RATED, (num_users, num_movies)
first_seen = {}
for m in df["movieId"]:
    first_seen.setdefault(m, len(first_seen))
assert movie2movie_encoded == first_seen
assert (min_rating, max_rating) == (0.5, 5.0), (min_rating, max_rating)
assert all(movie_encoded2movie[df["movie"][i]] == df["movieId"][i] for i in range(0, len(df), 97))

"""
## Prepare training and validation data
"""
df = df.sample(frac=1, random_state=42)
x = df[["user", "movie"]].values
# Normalize the targets between 0 and 1. Makes it easy to train.
y = df["rating"].apply(lambda x: (x - min_rating) / (max_rating - min_rating)).values
# Assuming training on 90% of the data and validating on 10%.
train_indices = int(0.9 * df.shape[0])
x_train, x_val, y_train, y_val = (
    x[:train_indices],
    x[train_indices:],
    y[:train_indices],
    y[train_indices:],
)

# (added) the shuffle is RandomState(42)'s permutation; the shapes; y in [0, 1]
order = np.random.RandomState(42).permutation(len(get_file.rows))
np.testing.assert_array_equal(df["userId"], [get_file.rows[i][0] for i in order])
assert x.shape == (len(get_file.rows), 2) and x.dtype == np.int64, (x.shape, x.dtype)
assert x_train.shape == (int(0.9 * len(x)), 2) and len(y_val) == len(x) - len(x_train)
assert y.min() == 0.0 and y.max() == 1.0
np.testing.assert_allclose(y, (np.array([get_file.rows[i][2] for i in order]) - 0.5) / 4.5, rtol=1e-6)

"""
## Create the model

We embed both users and movies in to 50-dimensional vectors.

The model computes a match score between user and movie embeddings via a dot product,
and adds a per-movie and per-user bias. The match score is scaled to the `[0, 1]`
interval via a sigmoid (since our ratings are normalized to this range).
"""
EMBEDDING_SIZE = 50


class RecommenderNet(keras.Model):
    def __init__(self, num_users, num_movies, embedding_size, **kwargs):
        super(RecommenderNet, self).__init__(**kwargs)  # noqa: UP008
        self.num_users = num_users
        self.num_movies = num_movies
        self.embedding_size = embedding_size
        self.user_embedding = layers.Embedding(
            num_users,
            embedding_size,
            embeddings_initializer="he_normal",
            embeddings_regularizer=keras.regularizers.l2(1e-6),
        )
        self.user_bias = layers.Embedding(num_users, 1)
        self.movie_embedding = layers.Embedding(
            num_movies,
            embedding_size,
            embeddings_initializer="he_normal",
            embeddings_regularizer=keras.regularizers.l2(1e-6),
        )
        self.movie_bias = layers.Embedding(num_movies, 1)

    def call(self, inputs):
        user_vector = self.user_embedding(inputs[:, 0])
        user_bias = self.user_bias(inputs[:, 0])
        movie_vector = self.movie_embedding(inputs[:, 1])
        movie_bias = self.movie_bias(inputs[:, 1])
        dot_user_movie = em.tensordot(user_vector, movie_vector, 2)
        # Add all the components (including bias)
        x = dot_user_movie + user_bias + movie_bias
        # The sigmoid activation forces the rating to between 0 and 1
        return em.nn_ops.sigmoid(x)


model = RecommenderNet(num_users, num_movies, EMBEDDING_SIZE)
model.compile(
    loss=nn.losses.BinaryCrossentropy(),
    optimizer=keras.optimizers.Adam(learning_rate=0.001),
)


# (added) numpy's forward pass from the model's weights, over batches of `batch_size` rows
def weights_of(model):
    return [layer.embeddings.numpy().astype(np.float64) for layer in (
        model.user_embedding, model.user_bias, model.movie_embedding, model.movie_bias)]


def np_predict(w, xs, batch_size):
    u_emb, u_bias, m_emb, m_bias = w
    out = []
    for s in range(0, len(xs), batch_size):
        b = xs[s:s + batch_size]
        dot = np.tensordot(u_emb[b[:, 0]], m_emb[b[:, 1]], 2)  # one number for the batch
        out.append(_sigmoid(dot + u_bias[b[:, 0]] + m_bias[b[:, 1]]))
    return np.concatenate(out)


def np_loss(w, xs, ys, batch_size):
    """Keras's loss over batches: mean binary cross-entropy plus the l2 terms."""
    l2 = 1e-6 * (np.sum(w[0] ** 2) + np.sum(w[2] ** 2))
    return np.mean(_bce(ys, np_predict(w, xs, batch_size)[:, 0])) + l2


out = model(x_train[:64])
assert tuple(out.shape) == (64, 1) and out.dtype == em.float32, (out.shape, out.dtype)
w0 = weights_of(model)
assert [a.shape for a in w0] == [(num_users, 50), (num_users, 1), (num_movies, 50), (num_movies, 1)]
np.testing.assert_allclose(out.numpy(), np_predict(w0, x_train[:64], 64), rtol=1e-5, atol=1e-6)
assert abs(w0[0].std() - np.sqrt(2 / num_users)) < 0.15 * np.sqrt(2 / num_users)  # he_normal
assert np.abs(w0[1]).max() <= 0.05  # Embedding's default: uniform(-0.05, 0.05)
reg = sorted(float(t) for t in model.losses)
np.testing.assert_allclose(reg, sorted([1e-6 * np.sum(w0[0] ** 2), 1e-6 * np.sum(w0[2] ** 2)]), rtol=1e-4)
untrained_val = model.evaluate(x_val, y_val, verbose=0)
np.testing.assert_allclose(untrained_val, np_loss(w0, x_val, y_val, 32), rtol=1e-5)

"""
## Train the model based on the data split
"""
history = model.fit(
    x=x_train,
    y=y_train,
    batch_size=64,
    epochs=EPOCHS,
    verbose=1,
    validation_data=(x_val, y_val),
)

"""
## Plot training and validation loss
"""
# (left out: plt.plot(history.history["loss"]); plt.plot(history.history["val_loss"]);
#  the title, labels and legend; plt.show()) -- what it would draw:
assert sorted(history.history) == ["loss", "val_loss"], history.history.keys()
assert all(len(v) == EPOCHS for v in history.history.values()), history.history
w1 = weights_of(model)
np.testing.assert_allclose(history.history["val_loss"][-1], np_loss(w1, x_val, y_val, 64), rtol=1e-5)
mean_only = np.mean(_bce(y_val, np.full(len(y_val), y_train.mean())))
print(f"val_loss {history.history['val_loss']}, untrained {untrained_val:.4f}, "
      f"the training mean {mean_only:.4f}")

"""
## Show top 10 movie recommendations to a user
"""

movie_df = pd.read_csv(movielens_dir / "movies.csv")

# Let us get a user and see the top recommendations.
user_id = df.userId.sample(1).iloc[0]
movies_watched_by_user = df[df.userId == user_id]
movies_not_watched = movie_df[
    ~movie_df["movieId"].isin(movies_watched_by_user.movieId.values)
]["movieId"]
movies_not_watched = list(
    set(movies_not_watched).intersection(set(movie2movie_encoded.keys()))
)
movies_not_watched = [[movie2movie_encoded.get(x)] for x in movies_not_watched]
user_encoder = user2user_encoded.get(user_id)
user_movie_array = np.hstack(
    ([[user_encoder]] * len(movies_not_watched), movies_not_watched)
)
ratings = model.predict(user_movie_array).flatten()
top_ratings_indices = ratings.argsort()[-10:][::-1]
recommended_movie_ids = [
    movie_encoded2movie.get(movies_not_watched[x][0]) for x in top_ratings_indices
]

print("Showing recommendations for user: {}".format(user_id))  # noqa: UP032
print("====" * 9)
print("Movies with high ratings from user")
print("----" * 8)
top_movies_user = (
    movies_watched_by_user.sort_values(by="rating", ascending=False)
    .head(5)
    .movieId.values
)
movie_df_rows = movie_df[movie_df["movieId"].isin(top_movies_user)]
for row in movie_df_rows.itertuples():
    print(row.title, ":", row.genres)

print("----" * 8)
print("Top 10 movie recommendations")
print("----" * 8)
recommended_movies = movie_df[movie_df["movieId"].isin(recommended_movie_ids)]
for row in recommended_movies.itertuples():
    print(row.title, ":", row.genres)

# (added) the movies.csv read back; what was recommended was not rated by the user, and
# predict() is numpy's forward pass over batches of 32
assert len(movie_df) == NUM_MOVIES and movie_df["title"][0] == get_file.titles[0][1]
assert len(movies_not_watched) == num_movies - len(movies_watched_by_user)
assert user_movie_array.shape == (len(movies_not_watched), 2)
assert ratings.shape == (len(movies_not_watched),) and ratings.dtype == np.float32
np.testing.assert_allclose(ratings, np_predict(w1, user_movie_array, 32)[:, 0], rtol=1e-5, atol=1e-6)
assert not set(recommended_movie_ids) & set(movies_watched_by_user.movieId.values)
assert len(recommended_movies) == 10 and len(movie_df_rows) == 5

# (added) what training reached, against the generated ratings' own structure: the learnt
# biases follow the user and movie biases the ratings were made with, and the top 10 are
# movies this user would rate above the average of those not rated
truth = get_file.truth
movie_rows = np.searchsorted(truth["movie_ids"], [movie_encoded2movie[i] for i in range(num_movies)])
user_rows = np.array([userencoded2user[i] - 1 for i in range(num_users)])
movie_corr = np.corrcoef(w1[3][:, 0], truth["movie_bias"][movie_rows])[0, 1]
user_corr = np.corrcoef(w1[1][:, 0], truth["user_bias"][user_rows])[0, 1]
liking = truth["movie_bias"][movie_rows] + truth["q"][movie_rows] @ truth["p"][user_id - 1]
top_liking = liking[[movies_not_watched[i][0] for i in top_ratings_indices]].mean()
unwatched_liking = liking[[m[0] for m in movies_not_watched]].mean()
print(f"learnt biases against the true ones: movies {movie_corr:.3f}, users {user_corr:.3f}; "
      f"the top 10's liking {top_liking:.3f} (unrated: {unwatched_liking:.3f})")
if not SHORT:
    val_loss = history.history["val_loss"]
    assert val_loss[-1] < mean_only - 0.005, (val_loss, mean_only)
    assert val_loss[-1] < untrained_val - 0.05, (val_loss, untrained_val)
    assert movie_corr > 0.5 and user_corr > 0.7, (movie_corr, user_corr)
    assert top_liking > unwatched_liking, (top_liking, unwatched_liking)
