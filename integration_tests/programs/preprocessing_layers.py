"""Port of keras-team/keras-io guides/preprocessing_layers.py ("Working with preprocessing
layers": adapt(), preprocessing inside the model or in the input pipeline, and the quick
recipes: image augmentation, normalizing numerical features, one-hot encoding string and
integer categories, the hashing trick, text as token indices, as multi-hot n-grams and as
TF-IDF n-grams).

Upstream: https://github.com/keras-team/keras-io/blob/04bfdf8adc4ea39646c3d09f3cd397f32f1a0923/guides/preprocessing_layers.py
Changed: names only (tf.keras.layers -> nn.layers, keras.Model/Input/Sequential ->
nn.Model/Input/Sequential, tf.data.Dataset -> ember.data.Dataset), except where ember cannot
do what the guide does: ember tensors hold no strings, so text is numpy string arrays
(tf.constant([...strings]) -> np.array([...])) and the "end-to-end model that accepts
strings" is the vectorizer followed by the model in a function (a model's inputs are
tensors); keras.datasets.cifar10 cannot be had here, so the image recipes use the real MNIST
digits (28x28x1; 2,000 of them, 600 with EMBER_PROGRAMS_SHORT=1) and the recipe's
keras.applications.ResNet50 (ember has no applications module) is a small convnet ending in
the same 10-way softmax. Added: assertions on what the guide prints (normalized mean 0 and
std 1, the Keras vocabulary and encodings, shapes), and that each fit lowers its loss or runs.
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist).
"""

import os
import pathlib
import unittest

import numpy as np

import ember.core as em
from ember import data as tf_data
from ember import nn

keras = nn  # the guide's `keras.` prefix
layers = nn.layers
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)


def load_mnist(n):
    """(x_train, y_train) like keras.datasets.*.load_data(): uint8 images, int labels."""
    x, y = next(iter(tf_data.datasets.mnist("train", data_dir=DATA_DIR).take(n).batch(n)))
    x = (np.asarray(x).reshape(-1, 28, 28, 1) * 255).round().astype(np.uint8)
    return (x, np.asarray(y)), None


N_IMAGES = 600 if SHORT else 2000

"""
## The `adapt()` method
"""

data = np.array(
    [
        [0.1, 0.2, 0.3],
        [0.8, 0.9, 1.0],
        [1.5, 1.6, 1.7],
    ]
)
layer = layers.Normalization()
layer.adapt(data)
normalized_data = layer(data)

print("Features mean: %.2f" % (normalized_data.numpy().mean()))  # noqa: UP031 (upstream's)
print("Features std: %.2f" % (normalized_data.numpy().std()))  # noqa: UP031 (upstream's)
assert abs(normalized_data.numpy().mean()) < 1e-6
assert abs(normalized_data.numpy().std() - 1.0) < 1e-4

data = [
    "ξεῖν᾽, ἦ τοι μὲν ὄνειροι ἀμήχανοι ἀκριτόμυθοι",
    "γίγνοντ᾽, οὐδέ τι πάντα τελείεται ἀνθρώποισι.",
    "δοιαὶ γάρ τε πύλαι ἀμενηνῶν εἰσὶν ὀνείρων:",
    "αἱ μὲν γὰρ κεράεσσι τετεύχαται, αἱ δ᾽ ἐλέφαντι:",
    "τῶν οἳ μέν κ᾽ ἔλθωσι διὰ πριστοῦ ἐλέφαντος,",
    "οἵ ῥ᾽ ἐλεφαίρονται, ἔπε᾽ ἀκράαντα φέροντες:",
    "οἱ δὲ διὰ ξεστῶν κεράων ἔλθωσι θύραζε,",
    "οἵ ῥ᾽ ἔτυμα κραίνουσι, βροτῶν ὅτε κέν τις ἴδηται.",
]
layer = layers.TextVectorization()
layer.adapt(data)
vectorized_text = layer(data)
print(vectorized_text)
assert vectorized_text.shape == (8, 9) and layer.get_vocabulary()[:2] == ["", "[UNK]"]
v = vectorized_text.numpy()
assert v[v > 0].min() >= 2  # every word was seen by adapt() (0 pads)

vocab = ["a", "b", "c", "d"]
data = np.array([["a", "c", "d"], ["d", "z", "b"]])
layer = layers.StringLookup(vocabulary=vocab)
vectorized_data = layer(data)
print(vectorized_data)
np.testing.assert_array_equal(vectorized_data.numpy(), [[1, 3, 4], [4, 0, 2]])

"""
## Quick recipes

### Image data augmentation
"""

# Create a data augmentation stage with horizontal flipping, rotations, zooms
data_augmentation = keras.Sequential(
    [
        layers.RandomFlip("horizontal"),
        layers.RandomRotation(0.1),
        layers.RandomZoom(0.1),
    ]
)

# Load some data
(x_train, y_train), _ = load_mnist(N_IMAGES)
input_shape = x_train.shape[1:]
classes = 10

# Create a tf.data pipeline of augmented images (and their labels)
train_dataset = tf_data.Dataset.from_tensor_slices((x_train, y_train))
train_dataset = train_dataset.batch(16).map(lambda x, y: (data_augmentation(x), y))


# Create a model and train it on the augmented image data
inputs = keras.Input(shape=input_shape)
x = layers.Rescaling(1.0 / 255)(inputs)  # Rescale inputs
outputs = keras.Sequential([  # Add the rest of the model (ResNet50 upstream)
    layers.Conv2D(8, 3, strides=2, activation="relu"),
    layers.GlobalAveragePooling2D(),
    layers.Dense(classes, activation="softmax"),
])(x)
model = keras.Model(inputs, outputs)
model.compile(optimizer="rmsprop", loss="sparse_categorical_crossentropy")
history = model.fit(train_dataset, steps_per_epoch=5)
assert np.isfinite(history.history["loss"][-1])

"""
### Normalizing numerical features
"""

# Load some data
(x_train, y_train), _ = load_mnist(N_IMAGES)
x_train = x_train.reshape((len(x_train), -1))
input_shape = x_train.shape[1:]
classes = 10

# Create a Normalization layer and set its internal state using the training data
normalizer = layers.Normalization()
normalizer.adapt(x_train)

# Create a model that include the normalization layer
inputs = keras.Input(shape=input_shape)
x = normalizer(inputs)
outputs = layers.Dense(classes, activation="softmax")(x)
model = keras.Model(inputs, outputs)

# Train the model
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
history = model.fit(x_train, y_train, epochs=2)
assert history.history["loss"][1] < history.history["loss"][0], history.history
np.testing.assert_allclose(normalizer.adapt_mean.numpy(), x_train.mean(0), rtol=1e-4, atol=1e-4)

"""
### Encoding string categorical features via one-hot encoding
"""

# Define some toy data
data = np.array([["a"], ["b"], ["c"], ["b"], ["c"], ["a"]])

# Use StringLookup to build an index of the feature values and encode output.
lookup = layers.StringLookup(output_mode="one_hot")
lookup.adapt(data)

# Convert new test data (which includes unknown feature values)
test_data = np.array([["a"], ["b"], ["c"], ["d"], ["e"], [""]])
encoded_data = lookup(test_data)
print(encoded_data)
np.testing.assert_array_equal(encoded_data.numpy(), np.eye(4)[[3, 2, 1, 0, 0, 0]])

"""
### Encoding integer categorical features via one-hot encoding
"""

# Define some toy data
data = np.array([[10], [20], [20], [10], [30], [0]])

# Use IntegerLookup to build an index of the feature values and encode output.
lookup = layers.IntegerLookup(output_mode="one_hot")
lookup.adapt(data)

# Convert new test data (which includes unknown feature values)
test_data = np.array([[10], [10], [20], [50], [60], [0]])
encoded_data = lookup(test_data)
print(encoded_data)
assert lookup.get_vocabulary() == [-1, 20, 10, 30, 0]
np.testing.assert_array_equal(encoded_data.numpy(), np.eye(5)[[2, 2, 1, 0, 0, 4]])

"""
### Applying the hashing trick to an integer categorical feature
"""

# Sample data: 10,000 random integers with values between 0 and 100,000
data = np.random.randint(0, 100000, size=(1000 if SHORT else 10000, 1))

# Use the Hashing layer to hash the values to the range [0, 64]
hasher = layers.Hashing(num_bins=64, salt=1337)

# Use the CategoryEncoding layer to multi-hot encode the hashed values
encoder = layers.CategoryEncoding(num_tokens=64, output_mode="multi_hot")
encoded_data = encoder(hasher(data))
print(encoded_data.shape)
assert encoded_data.shape == (len(data), 64)
np.testing.assert_array_equal(encoded_data.numpy().sum(axis=1), 1.0)

"""
### Encoding text as a sequence of token indices
"""

# Define some text data to adapt the layer
adapt_data = np.array(
    [
        "The Brain is wider than the Sky",
        "For put them side by side",
        "The one the other will contain",
        "With ease and You beside",
    ]
)

# Create a TextVectorization layer
text_vectorizer = layers.TextVectorization(output_mode="int")
# Index the vocabulary via `adapt()`
text_vectorizer.adapt(adapt_data)

# Try out the layer
print(
    "Encoded text:\n",
    text_vectorizer(["The Brain is deeper than the sea"]).numpy(),
)
encoded = text_vectorizer(["The Brain is deeper than the sea"]).numpy()
assert encoded.shape == (1, 7) and encoded[0, 0] == encoded[0, 5] == 2  # "the", most frequent
assert encoded[0, 3] == encoded[0, 6] == 1  # "deeper" and "sea" are out of vocabulary

# Create a simple model
inputs = keras.Input(shape=(None,), dtype="int64")
x = layers.Embedding(input_dim=text_vectorizer.vocabulary_size(), output_dim=16)(inputs)
x = layers.GRU(8)(x)
outputs = layers.Dense(1)(x)
model = keras.Model(inputs, outputs)

# Create a labeled dataset (which includes unknown tokens)
train_dataset = tf_data.Dataset.from_tensor_slices(
    (np.array(["The Brain is deeper than the sea", "for if they are held Blue to Blue"]),
     np.array([1, 0]))
)

# Preprocess the string inputs, turning them into int sequences
train_dataset = train_dataset.batch(2).map(lambda x, y: (text_vectorizer(x), y))
# Train the model on the int sequences
print("\nTraining model...")
model.compile(optimizer="rmsprop", loss="mse")
model.fit(train_dataset)


# For inference, the vectorizer and the model, one after the other (ember models take
# tensors, and ember tensors hold no strings)
def end_to_end_model(text):
    return model(text_vectorizer(text))


# Call the end-to-end model on test data (which includes unknown tokens)
print("\nCalling end-to-end model on test string...")
test_data = np.array(["The one the other will absorb"])
test_output = end_to_end_model(test_data)
print("Model output:", test_output)
assert test_output.shape == (1, 1)

"""
### Encoding text as a dense matrix of N-grams with multi-hot encoding
"""

# Instantiate TextVectorization with "multi_hot" output_mode
# and ngrams=2 (index all bigrams)
text_vectorizer = layers.TextVectorization(output_mode="multi_hot", ngrams=2)
# Index the bigrams via `adapt()`
text_vectorizer.adapt(adapt_data)

# Try out the layer
print(
    "Encoded text:\n",
    text_vectorizer(["The Brain is deeper than the sea"]).numpy(),
)
multi_hot = text_vectorizer(["The Brain is deeper than the sea"]).numpy()
assert multi_hot.shape == (1, text_vectorizer.vocabulary_size()) and multi_hot[0, 0] == 1

# Create a simple model
inputs = keras.Input(shape=(text_vectorizer.vocabulary_size(),))
outputs = layers.Dense(1)(inputs)
model = keras.Model(inputs, outputs)

# Create a labeled dataset (which includes unknown tokens)
train_dataset = tf_data.Dataset.from_tensor_slices(
    (np.array(["The Brain is deeper than the sea", "for if they are held Blue to Blue"]),
     np.array([1, 0]))
)

# Preprocess the string inputs, turning them into int sequences
train_dataset = train_dataset.batch(2).map(lambda x, y: (text_vectorizer(x), y))
# Train the model on the int sequences
print("\nTraining model...")
model.compile(optimizer="rmsprop", loss="mse")
model.fit(train_dataset)

# For inference, the vectorizer and the model, one after the other
test_output = model(text_vectorizer(np.array(["The one the other will absorb"])))
print("Model output:", test_output)
assert test_output.shape == (1, 1)

"""
### Encoding text as a dense matrix of N-grams with TF-IDF weighting
"""

# Instantiate TextVectorization with "tf-idf" output_mode
# (multi-hot with TF-IDF weighting) and ngrams=2 (index all bigrams)
text_vectorizer = layers.TextVectorization(output_mode="tf-idf", ngrams=2)
# Index the bigrams and learn the TF-IDF weights via `adapt()`
text_vectorizer.adapt(adapt_data)

# Try out the layer
print(
    "Encoded text:\n",
    text_vectorizer(["The Brain is deeper than the sea"]).numpy(),
)
tf_idf = text_vectorizer(["The Brain is deeper than the sea"]).numpy()
the = text_vectorizer.get_vocabulary().index("the")
np.testing.assert_allclose(tf_idf[0, the], 2 * np.log(1 + 4 / (1 + 2)), rtol=1e-6)

# Create a simple model
inputs = keras.Input(shape=(text_vectorizer.vocabulary_size(),))
outputs = layers.Dense(1)(inputs)
model = keras.Model(inputs, outputs)

# Create a labeled dataset (which includes unknown tokens)
train_dataset = tf_data.Dataset.from_tensor_slices(
    (np.array(["The Brain is deeper than the sea", "for if they are held Blue to Blue"]),
     np.array([1, 0]))
)

# Preprocess the string inputs, turning them into int sequences
train_dataset = train_dataset.batch(2).map(lambda x, y: (text_vectorizer(x), y))
# Train the model on the int sequences
print("\nTraining model...")
model.compile(optimizer="rmsprop", loss="mse")
model.fit(train_dataset)

# For inference, the vectorizer and the model, one after the other
print("\nCalling end-to-end model on test string...")
test_output = model(text_vectorizer(np.array(["The one the other will absorb"])))
print("Model output:", test_output)
assert test_output.shape == (1, 1)
