"""Port of the TensorFlow tutorial "Word embeddings" (the IMDb reviews fetched with get_file and
read with text_dataset_from_directory, cache and prefetch, the Embedding layer on its own, a
TextVectorization with a custom standardization adapted on the training texts, a "continuous
bag of words" Sequential model of TextVectorization, Embedding, GlobalAveragePooling1D and two
Dense layers trained with BinaryCrossentropy(from_logits=True) and a TensorBoard callback,
model.summary(), and the learnt embeddings written to vectors.tsv / metadata.tsv for the
Embedding Projector).

Upstream: https://github.com/tensorflow/text/blob/4539b679b92d2728ee8bd7cd6489ebb8dbae1558/docs/tutorials/word_embeddings.ipynb
(its current home; until 2021 it was tensorflow/docs site/en/tutorials/text/word_embeddings.ipynb,
whose last version, a7c567d2a730e0e6e6b3741e5be66b1c813549cb, has the same code except TF
2.4's names tf.keras.layers.experimental.preprocessing.TextVectorization and
tf.keras.preprocessing.text_dataset_from_directory; ember, as Keras 3, has neither alias:
ModuleNotFoundError / AttributeError).
Changed: names only (tf.keras.Sequential / layers -> nn.Sequential / nn.layers,
tf.keras.utils.get_file / text_dataset_from_directory -> nn.utils.*, tf.data.AUTOTUNE ->
data.AUTOTUNE, tf.keras.losses / callbacks -> nn.losses / nn.callbacks, tf.constant ->
em.constant), except where ember behaves otherwise (GAPs below). The notebook magics
(%load_ext / %tensorboard) are dropped. Nothing can be downloaded here, so the IMDb archive
is generated: aclImdb_v1.tar.gz, with the archive's layout (aclImdb/README, imdb.vocab,
imdbEr.txt; train/ with pos, neg and unsup folders of <id>_<rating>.txt reviews beside
labeledBow.feat, unsupBow.feat and urls_*.txt; test/ the same without unsup), is written
where get_file(cache_dir='.') keeps its download, so upstream's get_file line finds it and
downloads nothing. The program runs in a temporary directory (upstream: the notebook's
directory, where aclImdb, logs, vectors.tsv and metadata.tsv go). A review is neutral movie
words with 2 to 5 words of its sentiment (12 positive, 12 negative words; one review in 3
also has a word of the other sentiment, one in 3 a made-up name), some capitalised, a little
punctuation, HTML <br /> tags, 20 to 150 words long (so TextVectorization both pads and cuts
to 100).
Reduced (EMBER_PROGRAMS_FULL=1 restores upstream's 12,500 reviews per class in train and in
test, 50,000 unsup reviews and batch 1024): 1,000 reviews per class in train (1,600 train,
400 validate), 25 per class in test, 20 unsup, batch 64 (1024 would make 2 steps an epoch);
upstream's vocab_size 10000, sequence_length 100, embedding_dim 16 and 15 epochs are kept.
EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): 200 reviews per class, 2 epochs, no thresholds.
Added: seeds for numpy and ember; the fit's history is kept.
Added assertions: the extracted directories hold the archive's entries, and no unsup after
rmtree; the datasets hold Keras's files in Keras's order (each class folder sorted, shuffled
by np.random.RandomState(123), the last int(0.2 * n) validate), 2 classes (neg 0, pos 1),
cardinality, texts (each its file's bytes) and int32 labels; cache() after the datasets'
shuffle replays the first pass's order (as TF's); the Embedding's lookups are rows of its
weights, which are Keras's RandomUniform(-0.05, 0.05), in upstream's shapes (3, 5) and
(2, 3, 5); the vocabulary equals one counted with collections.Counter ('' and '[UNK]', then
by count, then token, both descending) and every validation review vectorizes to its tokens'
ids (1 out of vocabulary) padded or cut to 100; the untrained model's output equals numpy's
(embedding rows averaged over all 100 steps, padding included: no mask, as upstream's caution
says; then the two Dense layers) and its loss is log(2); model.summary() names upstream's
layers and its 160,289 parameters (10000*16 + 16*16+16 + 16+1); 'accuracy' is Keras's
binary accuracy, threshold 0.5 on the logits, and the loss the mean over reviews (not over
batches), both against numpy on predict(); TensorBoard wrote epoch_loss and epoch_accuracy
at steps 0..14 under logs/train and logs/validation, equal to the history; exactly the
embedding rows that some training review looks up have moved; vectors.tsv and metadata.tsv
hold the embeddings and tokens of the vocabulary but padding.
Thresholds (CPU run): the last epoch's val_accuracy passes 0.85 and its val_loss falls below
0.5 (untrained: 0.5, as the classes are balanced, and log(2) = 0.69; it reaches 0.955 and
0.29: a review's sentiment words decide its label); the sentiment words' embeddings separate:
the mean cosine similarity of words of the same sentiment is at least 1.0 above that of
words of opposite sentiment (untrained: within 0.15 of 0, asserted; it reaches 1.99), and,
read back from vectors.tsv as the Projector does, the 5 nearest neighbours of "beautiful"
(upstream's example) are all positive words.
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value and no error):
1. (current Keras 3's get_file, not tf.keras 2's) get_file("aclImdb_v1.tar.gz", url,
untar=True, cache_dir='.', cache_subdir='') extracts into ./aclImdb_v1_extracted and
returns that path; tf.keras 2 extracted into cache_dir and returned './aclImdb_v1.tar.gz',
so upstream's dataset_dir ('./aclImdb') and its 'aclImdb/train' do not exist (os.listdir:
FileNotFoundError): one line moves the extracted aclImdb where tf.keras puts it, and
upstream's lines are kept.
2. (by design, docs/guide/preprocessing.md) no string tensors: elements of ember.data are
numpy arrays, which have no .numpy() (AttributeError), so `.numpy()` is dropped in the print;
tf.strings.lower / regex_replace in the standardization become np.char.lower and re.sub on
the numpy string array TextVectorization hands over (the same on this ASCII text;
tf.strings.lower lowercases ASCII letters only).
3. (by design, docs/guide/preprocessing.md) a model cannot hold TextVectorization: upstream's
Sequential([vectorize_layer, Embedding(...), ...]) builds, but calling it, or fit, on strings
raises a TypeError that says to map the data through vectorize_layer in the input
pipeline (it was a DTypeError, "cannot make a tensor from ndarray data of dtype object");
the model is the other four layers, and fit takes the datasets mapped through
vectorize_layer.
"""

import collections
import io
import math
import os
import re
import shutil
import string
import tarfile
import tempfile

import numpy as np

import ember.core as em
from ember import data, nn, summary
from ember.nn import Sequential
from ember.nn.layers import Dense, Embedding, GlobalAveragePooling1D, TextVectorization

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
np.random.seed(0)
em.random.set_seed(0)
_tmp = tempfile.TemporaryDirectory()
os.chdir(_tmp.name)  # upstream works in the notebook's directory: here, a temporary one

N_PER_CLASS = 12500 if FULL else 200 if SHORT else 1000
N_TEST_PER_CLASS = 12500 if FULL else 25
N_UNSUP = 50000 if FULL else 20
EPOCHS = 2 if SHORT else 15

# ---------------------------------------------------------------------------------------
# The stand-in for upstream's download: aclImdb_v1.tar.gz with the archive's layout.

POSITIVE = ["great", "wonderful", "loved", "brilliant", "superb", "moving", "delightful",
            "excellent", "charming", "gripping", "beautiful", "best"]
NEGATIVE = ["awful", "boring", "hated", "terrible", "dull", "waste", "poor", "mess",
            "tedious", "clumsy", "worst", "bad"]
NEUTRAL = ("the movie film plot actors story was and a it this i really quite ending music "
           "scenes director cast of to with but at times saw last night friends script is in "
           "that as for its on his her they one all there some character characters about "
           "from watch watching time seen first after again while who what more people").split()


def make_review(rng, positive):
  words = list(rng.choice(NEUTRAL, rng.integers(20, 150)))
  own, other = (POSITIVE, NEGATIVE) if positive else (NEGATIVE, POSITIVE)
  for w in rng.choice(own, rng.integers(2, 6)):  # within the first 100 words
    words.insert(int(rng.integers(0, min(len(words), 90))),
                 w.capitalize() if rng.random() < 0.3 else w)
  if rng.random() < 0.3:  # a word of the other sentiment ("not a waste of time")
    words.insert(int(rng.integers(0, len(words))), str(rng.choice(other)))
  for _ in range(int(rng.integers(0, 4))):
    k = int(rng.integers(1, len(words)))
    words[k] = words[k] + str(rng.choice(list(".,!?;")))
  if rng.random() < 0.5:
    words.insert(int(rng.integers(1, len(words))), "<br /><br />")
  if rng.random() < 0.3:  # a name, mostly seen once (out of vocabulary in validation)
    words.insert(int(rng.integers(0, len(words))), "".join(
        rng.choice(list("bdfgklmnprstvz")) + rng.choice(list("aeiou")) for _ in range(3)).title())
  return " ".join(words)


def write_archive(path):
  """The archive, its members written from memory; returns {path under ./aclImdb: text}."""
  rng = np.random.default_rng(1)
  members, texts = {}, {}
  for split, n in (("train", N_PER_CLASS), ("test", N_TEST_PER_CLASS)):
    for folder in ("pos", "neg") + (("unsup",) if split == "train" else ()):
      count = N_UNSUP if folder == "unsup" else n
      urls = []
      for i in range(count):
        rating = 0 if folder == "unsup" else 7 + i % 4 if folder == "pos" else 1 + i % 4
        name = os.path.join("aclImdb", split, folder, f"{i}_{rating}.txt")
        members[name] = texts[name] = make_review(
            rng, folder == "pos" or (folder == "unsup" and i % 2 == 1))
        urls.append(f"http://www.imdb.com/title/tt{1000000 + i}/usercomments")
      members[os.path.join("aclImdb", split, f"urls_{folder}.txt")] = "\n".join(urls) + "\n"
    members[os.path.join("aclImdb", split, "labeledBow.feat")] = "".join(
        f"{7 + i % 4 if i < n else 1 + i % 4} {i % len(NEUTRAL)}:1\n" for i in range(2 * n))
  members["aclImdb/train/unsupBow.feat"] = "".join(
      f"0 {i % len(NEUTRAL)}:1\n" for i in range(N_UNSUP))
  vocab = NEUTRAL + POSITIVE + NEGATIVE
  members["aclImdb/imdb.vocab"] = "\n".join(vocab) + "\n"
  members["aclImdb/imdbEr.txt"] = "\n".join(
      f"{v:.6f}" for v in rng.normal(0, 1, len(vocab))) + "\n"
  members["aclImdb/README"] = "Large Movie Review Dataset v1.0 (generated stand-in)\n"
  with tarfile.open(path, "w:gz") as tar:
    for directory in sorted({os.path.dirname(m) for m in members}):
      info = tarfile.TarInfo(directory)
      info.type, info.mode = tarfile.DIRTYPE, 0o755
      tar.addfile(info)
    for name, text in members.items():
      raw = text.encode("utf-8")
      info = tarfile.TarInfo(name)
      info.size, info.mode = len(raw), 0o644
      tar.addfile(info, io.BytesIO(raw))
  return texts


REVIEWS = write_archive("aclImdb_v1.tar.gz")  # where get_file(cache_dir='.') keeps it

# ---------------------------------------------------------------------------------------
# Setup

# Download the IMDb Dataset

url = "https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz"

dataset = nn.utils.get_file("aclImdb_v1.tar.gz", url,
                            untar=True, cache_dir='.',
                            cache_subdir='')
# GAP 1: dataset_dir = os.path.join(os.path.dirname(dataset), 'aclImdb')   (tf.keras 2
# extracted into cache_dir, '.', and returned './aclImdb_v1.tar.gz'; ember, as Keras 3,
# extracts into ./aclImdb_v1_extracted and returns that, so './aclImdb' does not exist):
# the stand-in moves aclImdb where tf.keras 2 puts it, and upstream's lines are kept
assert os.path.normpath(dataset) == "aclImdb_v1_extracted" and not os.path.exists("aclImdb")
os.replace(os.path.join(dataset, 'aclImdb'), 'aclImdb')

dataset_dir = os.path.join(os.path.dirname(dataset), 'aclImdb')
os.listdir(dataset_dir)
assert sorted(os.listdir(dataset_dir)) == ['README', 'imdb.vocab', 'imdbEr.txt', 'test', 'train']

train_dir = os.path.join(dataset_dir, 'train')
os.listdir(train_dir)
assert sorted(os.listdir(train_dir)) == ['labeledBow.feat', 'neg', 'pos', 'unsup',
                                         'unsupBow.feat', 'urls_neg.txt', 'urls_pos.txt',
                                         'urls_unsup.txt']

remove_dir = os.path.join(train_dir, 'unsup')
shutil.rmtree(remove_dir)
assert 'unsup' not in os.listdir(train_dir)

batch_size = 1024 if FULL else 64
seed = 123
train_ds = nn.utils.text_dataset_from_directory(
    'aclImdb/train', batch_size=batch_size, validation_split=0.2,
    subset='training', seed=seed)
val_ds = nn.utils.text_dataset_from_directory(
    'aclImdb/train', batch_size=batch_size, validation_split=0.2,
    subset='validation', seed=seed)

# added: Keras's classes, files, order and split, and the texts and labels
n_train = 2 * N_PER_CLASS
n_val = int(0.2 * n_train)
assert train_ds.class_names == val_ds.class_names == ['neg', 'pos']
listed = [os.path.join('aclImdb/train', d, f) for d in ('neg', 'pos')
          for f in sorted(os.listdir(os.path.join('aclImdb/train', d)))]
order = np.random.RandomState(seed).permutation(len(listed))
assert len(listed) == n_train
assert train_ds.file_paths + val_ds.file_paths == [listed[i] for i in order]
assert len(val_ds.file_paths) == n_val
train_paths, val_paths = train_ds.file_paths, val_ds.file_paths  # (cache() drops them, as TF)
assert train_ds.cardinality() == math.ceil((n_train - n_val) / batch_size)
assert val_ds.cardinality() == math.ceil(n_val / batch_size)

for text_batch, label_batch in train_ds.take(1):
  for i in range(5):
    # GAP 2 (by design): print(label_batch[i].numpy(), text_batch.numpy()[i])
    print(label_batch[i], text_batch[i])
  assert label_batch.dtype == np.int32 and label_batch.shape == (batch_size,)
  assert text_batch.shape == (batch_size,) and all(isinstance(t, bytes) for t in text_batch)
  for text, label in zip(text_batch, label_batch):
    [path] = [p for p, t in REVIEWS.items() if t.encode() == text and 'unsup' not in p]
    assert path.split(os.sep)[-2] == ['neg', 'pos'][label], (path, label)

# Configure the dataset for performance

AUTOTUNE = data.AUTOTUNE

train_ds = train_ds.cache().prefetch(buffer_size=AUTOTUNE)
val_ds = val_ds.cache().prefetch(buffer_size=AUTOTUNE)

# added: as TF's, the cache after the shuffle replays the first pass's order
first_pass = [b.tolist() for b, _ in train_ds]
assert [b.tolist() for b, _ in train_ds] == first_pass
train_texts = [t.decode() for b in first_pass for t in b]
assert sorted(train_texts) == sorted(REVIEWS[p] for p in train_paths)

# ---------------------------------------------------------------------------------------
# Using the Embedding layer

# Embed a 1,000 word vocabulary into 5 dimensions.
embedding_layer = nn.layers.Embedding(1000, 5)

result = embedding_layer(em.constant([1, 2, 3]))
result.numpy()
# added: the lookup is the rows of the table, which starts as RandomUniform(-0.05, 0.05)
table = embedding_layer.get_weights()[0]
assert result.shape == (3, 5) and result.dtype == em.float32
np.testing.assert_array_equal(result.numpy(), table[[1, 2, 3]])
assert table.shape == (1000, 5) and np.abs(table).max() <= 0.05
assert abs(table.std() - 0.1 / math.sqrt(12)) < 0.002, table.std()

result = embedding_layer(em.constant([[0, 1, 2], [3, 4, 5]]))
result.shape
assert result.shape == (2, 3, 5)
np.testing.assert_array_equal(result.numpy(), table[[[0, 1, 2], [3, 4, 5]]])

# ---------------------------------------------------------------------------------------
# Text preprocessing


# Create a custom standardization function to strip HTML break tags '<br />'.
def custom_standardization(input_data):
  # GAP 2 (by design): lowercase = tf.strings.lower(input_data)
  lowercase = np.char.lower(input_data)
  # GAP 2 (by design): stripped_html = tf.strings.regex_replace(lowercase, '<br />', ' ')
  stripped_html = np.vectorize(lambda s: re.sub('<br />', ' ', s), otypes=[str])(lowercase)
  # GAP 2 (by design): return tf.strings.regex_replace(stripped_html,
  #                                 '[%s]' % re.escape(string.punctuation), '')
  return np.vectorize(lambda s: re.sub('[%s]' % re.escape(string.punctuation), '', s),  # noqa: UP031
                      otypes=[str])(stripped_html)


# Vocabulary size and number of words in a sequence.
vocab_size = 10000
sequence_length = 100

# Use the text vectorization layer to normalize, split, and map strings to
# integers. Note that the layer uses the custom standardization defined above.
# Set maximum_sequence length as all samples are not of the same length.
vectorize_layer = TextVectorization(
    standardize=custom_standardization,
    max_tokens=vocab_size,
    output_mode='int',
    output_sequence_length=sequence_length)

# Make a text-only dataset (no labels) and call adapt to build the vocabulary.
text_ds = train_ds.map(lambda x, y: x)
vectorize_layer.adapt(text_ds)


# added: the vocabulary counted here (count, then token, both descending), and each review
# vectorized by hand
def tokens(text):
  text = re.sub('<br />', ' ', text.lower())
  return re.sub('[%s]' % re.escape(string.punctuation), '', text).split()  # noqa: UP031


counts = collections.Counter(w for t in train_texts for w in tokens(t))
expected_vocab = ['', '[UNK]'] + [w for w, _ in sorted(counts.items(), key=lambda kv: (
    kv[1], kv[0]), reverse=True)][:vocab_size - 2]
assert vectorize_layer.get_vocabulary() == expected_vocab, vectorize_layer.get_vocabulary()[:10]
assert set(POSITIVE + NEGATIVE) <= set(expected_vocab) and 'br' not in expected_vocab
ids_of = {w: i for i, w in enumerate(expected_vocab)}
val_texts = [REVIEWS[p] for p in val_paths]
expected_ids = np.array([([ids_of.get(w, 1) for w in tokens(t)] + [0] * sequence_length)
                         [:sequence_length] for t in val_texts])
val_ids = vectorize_layer(np.array([t.encode() for t in val_texts], dtype=object))
assert val_ids.dtype == em.int64 and val_ids.shape == (n_val, sequence_length)
np.testing.assert_array_equal(val_ids.numpy(), expected_ids)
assert (expected_ids == 1).any() and (expected_ids[:, -1] == 0).any()  # OOV, padded
assert (expected_ids[:, -1] != 0).any()  # and cut

# ---------------------------------------------------------------------------------------
# Create a classification model

embedding_dim = 16

# GAP 3: model = Sequential([
#   vectorize_layer,
#   Embedding(vocab_size, embedding_dim, name="embedding"),
#   GlobalAveragePooling1D(),
#   Dense(16, activation='relu'),
#   Dense(1)
# ])   (it builds; calling it on strings raises a TypeError saying where strings go)
model = Sequential([
  Embedding(vocab_size, embedding_dim, name="embedding"),
  GlobalAveragePooling1D(),
  Dense(16, activation='relu'),
  Dense(1)
])
try:
  Sequential([vectorize_layer, Dense(1)])(np.array([b'a great film'], dtype=object))
  raise AssertionError("GAP 3 is fixed: restore upstream's model")
except TypeError as e:
  assert "map the data through them in the input pipeline" in str(e), e


def vectorize(text, label):  # GAP 3: the model's first layer, in the input pipeline
  return vectorize_layer(text), label


# Compile and train the model

tensorboard_callback = nn.callbacks.TensorBoard(log_dir="logs")

model.compile(optimizer='adam',
              loss=nn.losses.BinaryCrossentropy(from_logits=True),
              metrics=['accuracy'])

# added: the untrained model against numpy (averaged over all 100 steps, padding included:
# there is no mask), and its loss
untrained = model.evaluate(val_ds.map(vectorize), verbose=0, return_dict=True)
weights0 = model.get_layer('embedding').get_weights()[0]
(w1, b1), (w2, b2) = (model.layers[2].get_weights(), model.layers[3].get_weights())
logits = model(val_ids).numpy()
expected_logits = np.maximum(weights0[expected_ids].mean(1) @ w1 + b1, 0) @ w2 + b2
assert logits.shape == (n_val, 1) and logits.dtype == np.float32
np.testing.assert_allclose(logits, expected_logits, rtol=1e-4, atol=1e-6)
assert abs(untrained['loss'] - math.log(2)) < 0.01, untrained


def sentiment_gap(weights):
  """Mean cosine similarity of sentiment words of the same sentiment minus the opposite."""
  v = weights[[ids_of[w] for w in POSITIVE + NEGATIVE]]
  v = v / np.linalg.norm(v, axis=1, keepdims=True)
  positive = np.array([w in POSITIVE for w in POSITIVE + NEGATIVE])
  cos, same = v @ v.T, np.equal.outer(positive, positive)
  off_diagonal = ~np.eye(len(v), dtype=bool)
  return cos[same & off_diagonal].mean() - cos[~same].mean()


untrained_gap = sentiment_gap(weights0)

# GAP 3: model.fit(
#     train_ds,
#     validation_data=val_ds,
#     epochs=15,
#     callbacks=[tensorboard_callback])
history = model.fit(  # added: history
    train_ds.map(vectorize),
    validation_data=val_ds.map(vectorize),
    epochs=EPOCHS,
    callbacks=[tensorboard_callback])
print({k: [round(v, 4) for v in vs] for k, vs in history.history.items()})
assert sorted(history.history) == ['accuracy', 'loss', 'val_accuracy', 'val_loss']
assert all(len(v) == EPOCHS for v in history.history.values())

model.summary()
# added: upstream's parameter count (its TextVectorization has none)
printed = []
model.summary(print_fn=printed.append)
lines = "\n".join(printed).splitlines()
assert "Total params: 160,289" in lines and lines[0] == 'Model: "sequential"', lines
assert [line.split()[0] for line in lines[4:8]] == [
    'embedding', 'global_average_pooling1d', 'dense', 'dense_1'], lines
assert model.count_params() == vocab_size * embedding_dim + 16 * 16 + 16 + 16 + 1 == 160289

# added: 'accuracy' is Keras's binary_accuracy (threshold 0.5 on the logits), the loss the
# mean over the reviews (not over the batches), against numpy on predict()
evaluated = model.evaluate(val_ds.map(vectorize), verbose=0, return_dict=True)
predicted = model.predict(val_ds.map(vectorize), verbose=0)
y_val = np.concatenate([y for _, y in val_ds]).astype(np.float32)[:, None]
assert predicted.shape == (n_val, 1)
np.testing.assert_allclose(evaluated['accuracy'], np.mean((predicted > 0.5) == y_val), atol=1e-6)
np_loss = np.mean(np.maximum(predicted, 0) - predicted * y_val + np.log1p(np.exp(-np.abs(predicted))))
np.testing.assert_allclose(evaluated['loss'], np_loss, rtol=1e-4)
np.testing.assert_allclose(evaluated['loss'], history.history['val_loss'][-1], rtol=1e-5)

# added: what the TensorBoard callback wrote, at steps 0 .. EPOCHS-1
for run, prefix in (("train", ""), ("validation", "val_")):
  [events] = [os.path.join("logs", run, f) for f in os.listdir(os.path.join("logs", run))]
  scalars = collections.defaultdict(dict)
  for e in summary.read_events(events):
    for v in e.summary.value:
      if v.tag.startswith("epoch_"):
        scalars[v.tag][e.step] = v.simple_value
  for name in ("loss", "accuracy"):
    assert sorted(scalars[f"epoch_{name}"]) == list(range(EPOCHS)), (run, scalars.keys())
    np.testing.assert_allclose([scalars[f"epoch_{name}"][s] for s in range(EPOCHS)],
                               history.history[prefix + name], rtol=1e-6)

# Retrieve the trained word embeddings and save them to disk

weights = model.get_layer('embedding').get_weights()[0]
vocab = vectorize_layer.get_vocabulary()

# added: the rows that no training review looks up (beyond the vocabulary, or words only
# seen after the 100th) have not moved; the others have
looked_up = {ids_of[w] for t in train_texts for w in tokens(t)[:sequence_length]} | {0}
moved = (weights != weights0).any(axis=1)
assert weights.shape == (vocab_size, embedding_dim) and weights.dtype == np.float32
assert set(np.flatnonzero(moved).tolist()) == looked_up, sorted(looked_up ^ set(np.flatnonzero(moved)))

out_v = io.open('vectors.tsv', 'w', encoding='utf-8')  # noqa: UP020 (upstream's call)
out_m = io.open('metadata.tsv', 'w', encoding='utf-8')  # noqa: UP020

for index, word in enumerate(vocab):
  if index == 0:
    continue  # skip 0, it's padding.
  vec = weights[index]
  out_v.write('\t'.join([str(x) for x in vec]) + "\n")
  out_m.write(word + "\n")
out_v.close()
out_m.close()

try:
  from google.colab import files
  files.download('vectors.tsv')
  files.download('metadata.tsv')
except Exception:
  pass

# added: the files, and what training reached
vectors = np.loadtxt('vectors.tsv', delimiter='\t', dtype=np.float32)
assert vectors.shape == (len(vocab) - 1, embedding_dim)
np.testing.assert_array_equal(vectors, weights[1:len(vocab)])
with open('metadata.tsv', encoding='utf-8') as f:
  metadata = f.read().splitlines()
assert metadata == vocab[1:]

unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
query = metadata.index('beautiful')
neighbours = [metadata[i] for i in np.argsort(-(unit @ unit[query]))[1:6]]
trained_gap = sentiment_gap(weights)
print(f"val_accuracy {history.history['val_accuracy'][-1]:.4f}, val_loss "
      f"{history.history['val_loss'][-1]:.4f}, sentiment gap {untrained_gap:.3f} -> "
      f"{trained_gap:.3f}, nearest to 'beautiful': {neighbours}")
assert abs(untrained_gap) < 0.15, untrained_gap
assert SHORT or history.history['val_accuracy'][-1] > 0.85, history.history
assert SHORT or history.history['val_loss'][-1] < 0.5, history.history
assert SHORT or trained_gap > 1.0, trained_gap
assert SHORT or set(neighbours) <= set(POSITIVE), neighbours
