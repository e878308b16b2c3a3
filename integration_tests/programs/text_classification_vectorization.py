"""Port of keras-team/keras-io examples/nlp/text_classification_from_scratch.py ("Text
classification from scratch": TextVectorization with a custom standardization, adapted on a
text-only dataset, applied in the input pipeline; an Embedding + Conv1D classifier;
an end-to-end function from raw strings to predictions).

Upstream: https://github.com/keras-team/keras-io/blob/01ae2db402523e96f804c6fc3b0a59582e6a671e/examples/nlp/text_classification_from_scratch.py
Changed: names only (keras.layers -> nn.layers, keras.Model/Input -> nn.Model/Input,
tf.data -> ember.data), except where the example cannot run here: the IMDB archive cannot
be downloaded, so the reviews are a corpus this program generates (short reviews of
neutral words with a few words of their sentiment, a little noise, HTML <br /> tags and
punctuation), split 80/20 with seed 1337 as text_dataset_from_directory did, labels by
class_names ["pos", "neg"]; ember tensors hold no strings, so the custom standardization
works on the numpy string array TextVectorization hands it (tf.strings.lower/regex_replace
-> np.char.lower and re.sub), tf.expand_dims -> np.expand_dims, and the end-to-end
"model that accepts strings" is the vectorizer followed by the model in a function,
evaluated by hand on the raw test set; keras.Input(shape=(None,)) -> shape=(sequence_length,)
(ember's functional API builds a None axis at length 1, too short for the strided
Conv1D). Reduced (EMBER_PROGRAMS_FULL=1 restores the model's
sizes: 20,000 features, 128-dimensional embeddings, 128 filters and units): 2,000 features,
32 dimensions, filters and units, reviews padded to 60 tokens (upstream 500), 2,000
training and 1,000 test reviews; EMBER_PROGRAMS_SHORT=1: 400 and 200, 1 epoch, no accuracy
threshold. Added: the vocabulary holds the sentiment words and no <br /> or punctuation,
test accuracy passes 80% (CPU run) and the end-to-end function agrees with evaluate().
"""

import os
import re
import string

import numpy as np

import ember.core as em
from ember import data as tf_data
from ember import nn

keras = nn  # the example's `keras.` prefix
layers = nn.layers
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"
em.random.set_seed(0)

"""
## Load the data (generated here: IMDB cannot be downloaded)
"""

POSITIVE = ["great", "wonderful", "loved", "brilliant", "superb", "moving", "delightful",
            "excellent", "charming", "gripping"]
NEGATIVE = ["awful", "boring", "hated", "terrible", "dull", "waste", "poor", "mess",
            "tedious", "clumsy"]
NEUTRAL = ["the", "movie", "film", "plot", "actors", "story", "was", "and", "a", "it", "this",
           "i", "really", "quite", "ending", "music", "scenes", "director", "cast", "of",
           "to", "with", "but", "at", "times", "saw", "last", "night", "friends", "script"]


def make_reviews(n, seed):
    """``n`` reviews, half "pos" (label 0) and half "neg" (label 1)."""
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for i in range(n):
        label = i % 2
        words = list(rng.choice(NEUTRAL, rng.integers(15, 40)))
        own, other = (POSITIVE, NEGATIVE) if label == 0 else (NEGATIVE, POSITIVE)
        for w in rng.choice(own, rng.integers(2, 5)):
            words.insert(int(rng.integers(0, len(words))), w.capitalize() if rng.random() < .3
                         else w)
        if rng.random() < 0.3:  # a word of the other sentiment ("not a waste of time")
            words.insert(int(rng.integers(0, len(words))), str(rng.choice(other)))
        for _ in range(int(rng.integers(0, 3))):
            k = int(rng.integers(1, len(words)))
            words[k] = words[k] + str(rng.choice(list(".,!?;")))
        if rng.random() < 0.5:
            words.insert(int(rng.integers(1, len(words))), "<br /><br />")
        texts.append(" ".join(words))
        labels.append(label)
    return np.array(texts), np.array(labels, np.int32)


def text_dataset_from_reviews(texts, labels, batch_size, validation_split=None, subset=None,
                              seed=None):
    """text_dataset_from_directory over the generated reviews (shuffled by seed, split)."""
    order = np.random.default_rng(seed).permutation(len(texts))
    texts, labels = texts[order], labels[order]
    if validation_split:
        n_val = int(len(texts) * validation_split)
        part = slice(len(texts) - n_val, None) if subset == "validation" else slice(
            0, len(texts) - n_val)
        texts, labels = texts[part], labels[part]
    return tf_data.Dataset.from_tensor_slices((texts, labels)).batch(batch_size)


batch_size = 32
n_train, n_test = (400, 200) if SHORT else (2000, 1000)
train_texts, train_labels = make_reviews(n_train, seed=1)
test_texts, test_labels = make_reviews(n_test, seed=2)

raw_train_ds = text_dataset_from_reviews(train_texts, train_labels, batch_size=batch_size,
                                         validation_split=0.2, subset="training", seed=1337)
raw_val_ds = text_dataset_from_reviews(train_texts, train_labels, batch_size=batch_size,
                                       validation_split=0.2, subset="validation", seed=1337)
raw_test_ds = text_dataset_from_reviews(test_texts, test_labels, batch_size=batch_size,
                                        seed=7)

print(f"Number of batches in raw_train_ds: {raw_train_ds.cardinality()}")
print(f"Number of batches in raw_val_ds: {raw_val_ds.cardinality()}")
print(f"Number of batches in raw_test_ds: {raw_test_ds.cardinality()}")

for text_batch, label_batch in raw_train_ds.take(1):
    for i in range(5):
        print(text_batch[i])
        print(label_batch[i])

"""
## Prepare the data

In particular, we remove `<br />` tags.
"""


def custom_standardization(input_data):
    lowercase = np.char.lower(input_data)
    stripped_html = np.vectorize(lambda s: re.sub("<br />", " ", s))(lowercase)
    return np.vectorize(lambda s: re.sub(f"[{re.escape(string.punctuation)}]", "", s))(
        stripped_html
    )


# Model constants.
max_features = 20000 if FULL else 2000
embedding_dim = 128 if FULL else 32
sequence_length = 60

vectorize_layer = keras.layers.TextVectorization(
    standardize=custom_standardization,
    max_tokens=max_features,
    output_mode="int",
    output_sequence_length=sequence_length,
)

# Let's make a text-only dataset (no labels):
text_ds = raw_train_ds.map(lambda x, y: x)
# Let's call `adapt`:
vectorize_layer.adapt(text_ds)
vocabulary = vectorize_layer.get_vocabulary()
assert set(POSITIVE + NEGATIVE) <= set(vocabulary)
assert not any("<" in w or "br" == w or any(c in w for c in ".,!?;") for w in vocabulary)

"""
## Vectorize the data (option 2: in the input pipeline)
"""


def vectorize_text(text, label):
    text = np.expand_dims(text, -1)
    return vectorize_layer(text), label


# Vectorize the data.
train_ds = raw_train_ds.map(vectorize_text)
val_ds = raw_val_ds.map(vectorize_text)
test_ds = raw_test_ds.map(vectorize_text)

# Do async prefetching / buffering of the data for best performance on GPU.
train_ds = train_ds.cache().prefetch(buffer_size=10)
val_ds = val_ds.cache().prefetch(buffer_size=10)
test_ds = test_ds.cache().prefetch(buffer_size=10)

"""
## Build a model
"""

width = 128 if FULL else 32

# A integer input for vocab indices.
inputs = keras.Input(shape=(sequence_length,), dtype="int64")

# Next, we add a layer to map those vocab indices into a space of dimensionality
# 'embedding_dim'.
x = layers.Embedding(max_features, embedding_dim)(inputs)
x = layers.Dropout(0.5)(x)

# Conv1D + global max pooling
x = layers.Conv1D(width, 7, padding="valid", activation="relu", strides=3)(x)
x = layers.Conv1D(width, 7, padding="valid", activation="relu", strides=3)(x)
x = layers.GlobalMaxPooling1D()(x)

# We add a vanilla hidden layer:
x = layers.Dense(width, activation="relu")(x)
x = layers.Dropout(0.5)(x)

# We project onto a single unit output layer, and squash it with a sigmoid:
predictions = layers.Dense(1, activation="sigmoid", name="predictions")(x)

model = keras.Model(inputs, predictions)

# Compile the model with binary crossentropy loss and an adam optimizer.
model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])

"""
## Train the model
"""

epochs = 1 if SHORT else 3

# Fit the model using the train and test datasets.
model.fit(train_ds, validation_data=val_ds, epochs=epochs)

"""
## Evaluate the model on the test set
"""

test_loss, test_accuracy = model.evaluate(test_ds)
print("test accuracy:", test_accuracy)
assert SHORT or test_accuracy > 0.8, test_accuracy

"""
## Make an end-to-end model (a function: ember models take tensors, not strings)
"""


def end_to_end_model(raw_text):
    # Turn strings into vocab indices, then vocab indices into predictions
    return model(vectorize_layer(np.expand_dims(raw_text, -1)), training=False)


# Test it with `raw_test_ds`, which yields raw strings
hits = n = 0
for text_batch, label_batch in raw_test_ds:
    probs = end_to_end_model(text_batch).numpy()[:, 0]
    hits += int(np.sum((probs > 0.5) == (label_batch == 1)))
    n += len(label_batch)
print("end-to-end accuracy:", hits / n)
np.testing.assert_allclose(hits / n, test_accuracy, atol=1e-6)
