"""Port of keras-team/keras-io guides/functional_api.py ("The Functional API": a functional
MNIST model trained and evaluated, one graph of layers in an encoder and an autoencoder,
models called like layers and nested, an ensemble through layers.average, a model of three
inputs and two outputs compiled with a loss and a loss weight per output (as lists and as
dicts by output name) and trained on dicts of inputs and targets, a toy ResNet with
layers.add, a shared Embedding, a custom Dense layer, and a custom RNN layer mixed with a
functional model).

Upstream: https://github.com/keras-team/keras-io/blob/14a2af7ef8d0558837cb98378504421e55f0d980/guides/functional_api.py
Changed: names only (keras -> nn, layers -> nn.layers, tf.matmul/tf.zeros/tf.stack ->
em.*); keras.datasets.mnist.load_data() -> ember.data.datasets.mnist(data_dir=...). Not
run: keras.utils.plot_model (no plotting), VGG19 with ImageNet weights (not available
offline). keras.datasets.cifar10 is not available offline either: the toy ResNet trains on
random images of CIFAR10's shape.
Reduced (EMBER_PROGRAMS_FULL=1 restores it): 6,000 MNIST training and 1,000 test images
(upstream 60,000 and 10,000) and 1,280 tickets of 10 title and 30 body words (upstream
100 body words); EMBER_PROGRAMS_SHORT=1: 1,200 and 200 images, 1 epoch, 320 tickets, no
accuracy threshold. Added: assertions of what the guide prints or says (the shapes, the
ensemble's average, the per-output losses and their weighted sum, test accuracy over 85%).
Skips only when the MNIST files are absent ($EMBER_DATA, else ~/.cache/ember/datasets/mnist;
the test runner sets EMBER_DATA to ../shared/datasets/mnist beside the checkout if there).
"""

import os
import pathlib
import unittest

import numpy as np

import ember.core as em
from ember import data, nn
from ember.nn import layers

tf = em  # the guide's `tf.`
keras = nn  # and its `keras.`
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)
np.random.seed(0)

"""
## Introduction
"""

inputs = keras.Input(shape=(784,))
img_inputs = keras.Input(shape=(32, 32, 3))
assert inputs.shape == (None, 784) and inputs.dtype == np.float32

dense = layers.Dense(64, activation="relu")
x = dense(inputs)
x = layers.Dense(64, activation="relu")(x)
outputs = layers.Dense(10)(x)

model = keras.Model(inputs=inputs, outputs=outputs, name="mnist_model")
model.summary()

"""
## Training, evaluation, and inference
"""


def load_data(n_train, n_test):
    def split(name, n):
        x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
        return (np.asarray(x).reshape(-1, 28, 28) * 255).round().astype(np.uint8), np.asarray(y)

    return split("train", n_train), split("test", n_test)


n_train, n_test = (60000, 10000) if FULL else (1200, 200) if SHORT else (6000, 1000)
(x_train, y_train), (x_test, y_test) = load_data(n_train, n_test)

x_train = x_train.reshape(n_train, 784).astype("float32") / 255
x_test = x_test.reshape(n_test, 784).astype("float32") / 255

model.compile(
    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    optimizer=keras.optimizers.RMSprop(),
    metrics=["accuracy"],
)

history = model.fit(x_train, y_train, batch_size=64, epochs=1 if SHORT else 2,
                    validation_split=0.2, verbose=0)

test_scores = model.evaluate(x_test, y_test, verbose=2)
print("Test loss:", test_scores[0])
print("Test accuracy:", test_scores[1])
if not SHORT:
    assert test_scores[1] > 0.85, test_scores

"""
## Save and serialize
"""

model.save("my_model.keras")
saved_predictions = model.predict(x_test[:8], verbose=0)  # (added)
del model
# Recreate the exact same model purely from the file:
model = keras.models.load_model("my_model.keras")
np.testing.assert_array_equal(model.predict(x_test[:8], verbose=0), saved_predictions)

"""
## Use the same graph of layers to define multiple models
"""

encoder_input = keras.Input(shape=(28, 28, 1), name="img")
x = layers.Conv2D(16, 3, activation="relu")(encoder_input)
x = layers.Conv2D(32, 3, activation="relu")(x)
x = layers.MaxPooling2D(3)(x)
x = layers.Conv2D(32, 3, activation="relu")(x)
x = layers.Conv2D(16, 3, activation="relu")(x)
encoder_output = layers.GlobalMaxPooling2D()(x)

encoder = keras.Model(encoder_input, encoder_output, name="encoder")
encoder.summary()

x = layers.Reshape((4, 4, 1))(encoder_output)
x = layers.Conv2DTranspose(16, 3, activation="relu")(x)
x = layers.Conv2DTranspose(32, 3, activation="relu")(x)
x = layers.UpSampling2D(3)(x)
x = layers.Conv2DTranspose(16, 3, activation="relu")(x)
decoder_output = layers.Conv2DTranspose(1, 3, activation="relu")(x)

autoencoder = keras.Model(encoder_input, decoder_output, name="autoencoder")
autoencoder.summary()
assert encoder_output.shape == (None, 16) and decoder_output.shape == (None, 28, 28, 1)

"""
## All models are callable, just like layers
"""

encoder_input = keras.Input(shape=(28, 28, 1), name="original_img")
x = layers.Conv2D(16, 3, activation="relu")(encoder_input)
x = layers.Conv2D(32, 3, activation="relu")(x)
x = layers.MaxPooling2D(3)(x)
x = layers.Conv2D(32, 3, activation="relu")(x)
x = layers.Conv2D(16, 3, activation="relu")(x)
encoder_output = layers.GlobalMaxPooling2D()(x)

encoder = keras.Model(encoder_input, encoder_output, name="encoder")
encoder.summary()

decoder_input = keras.Input(shape=(16,), name="encoded_img")
x = layers.Reshape((4, 4, 1))(decoder_input)
x = layers.Conv2DTranspose(16, 3, activation="relu")(x)
x = layers.Conv2DTranspose(32, 3, activation="relu")(x)
x = layers.UpSampling2D(3)(x)
x = layers.Conv2DTranspose(16, 3, activation="relu")(x)
decoder_output = layers.Conv2DTranspose(1, 3, activation="relu")(x)

decoder = keras.Model(decoder_input, decoder_output, name="decoder")
decoder.summary()

autoencoder_input = keras.Input(shape=(28, 28, 1), name="img")
encoded_img = encoder(autoencoder_input)
decoded_img = decoder(encoded_img)
autoencoder = keras.Model(autoencoder_input, decoded_img, name="autoencoder")
autoencoder.summary()
images = x_test[:4].reshape(4, 28, 28, 1)
assert np.allclose(autoencoder(images).numpy(), decoder(encoder(images)).numpy(), atol=1e-6)


def get_model():
    inputs = keras.Input(shape=(128,))
    outputs = layers.Dense(1)(inputs)
    return keras.Model(inputs, outputs)


model1 = get_model()
model2 = get_model()
model3 = get_model()

inputs = keras.Input(shape=(128,))
y1 = model1(inputs)
y2 = model2(inputs)
y3 = model3(inputs)
outputs = layers.average([y1, y2, y3])
ensemble_model = keras.Model(inputs=inputs, outputs=outputs)
batch = np.random.standard_normal((5, 128)).astype("float32")
want = (model1(batch).numpy() + model2(batch).numpy() + model3(batch).numpy()) / 3
assert np.allclose(ensemble_model(batch).numpy(), want, atol=1e-6)

"""
## Manipulate complex graph topologies

### Models with multiple inputs and outputs
"""

num_tags = 12  # Number of unique issue tags
num_words = 10000  # Size of vocabulary obtained when preprocessing text data
num_departments = 4  # Number of departments for predictions

title_input = keras.Input(
    shape=(None,), name="title"
)  # Variable-length sequence of ints
body_input = keras.Input(shape=(None,), name="body")  # Variable-length sequence of ints
tags_input = keras.Input(
    shape=(num_tags,), name="tags"
)  # Binary vectors of size `num_tags`

# Embed each word in the title into a 64-dimensional vector
title_features = layers.Embedding(num_words, 64)(title_input)
# Embed each word in the text into a 64-dimensional vector
body_features = layers.Embedding(num_words, 64)(body_input)

# Reduce sequence of embedded words in the title into a single 128-dimensional vector
title_features = layers.LSTM(128)(title_features)
# Reduce sequence of embedded words in the body into a single 32-dimensional vector
body_features = layers.LSTM(32)(body_features)

# Merge all available features into a single large vector via concatenation
x = layers.concatenate([title_features, body_features, tags_input])

# Stick a logistic regression for priority prediction on top of the features
priority_pred = layers.Dense(1, name="priority")(x)
# Stick a department classifier on top of the features
department_pred = layers.Dense(num_departments, name="department")(x)

# Instantiate an end-to-end model predicting both priority and department
model = keras.Model(
    inputs=[title_input, body_input, tags_input],
    outputs=[priority_pred, department_pred],
)
assert model.output_names == ["priority", "department"]

model.compile(
    optimizer=keras.optimizers.RMSprop(1e-3),
    loss=[
        keras.losses.BinaryCrossentropy(from_logits=True),
        keras.losses.CategoricalCrossentropy(from_logits=True),
    ],
    loss_weights=[1.0, 0.2],
)

model.compile(
    optimizer=keras.optimizers.RMSprop(1e-3),
    loss={
        "priority": keras.losses.BinaryCrossentropy(from_logits=True),
        "department": keras.losses.CategoricalCrossentropy(from_logits=True),
    },
    loss_weights={"priority": 1.0, "department": 0.2},
)

# Dummy input data
n_tickets, body_words = (1280, 100) if FULL else (320, 30) if SHORT else (1280, 30)
title_data = np.random.randint(num_words, size=(n_tickets, 10))
body_data = np.random.randint(num_words, size=(n_tickets, body_words))
tags_data = np.random.randint(2, size=(n_tickets, num_tags)).astype("float32")

# Dummy target data
priority_targets = np.random.random(size=(n_tickets, 1))
dept_targets = np.random.randint(2, size=(n_tickets, num_departments))

history = model.fit(
    {"title": title_data, "body": body_data, "tags": tags_data},
    {"priority": priority_targets, "department": dept_targets},
    epochs=1 if SHORT else 2,
    batch_size=32,
    verbose=0,
)
logs = history.history
assert list(logs) == ["department_loss", "loss", "priority_loss"], list(logs)  # sorted (Keras 3)
for total, p, d in zip(logs["loss"], logs["priority_loss"], logs["department_loss"]):
    assert abs(total - (1.0 * p + 0.2 * d)) < 1e-4 * max(1.0, total), (total, p, d)

"""
### A toy ResNet model
"""

inputs = keras.Input(shape=(32, 32, 3), name="img")
x = layers.Conv2D(32, 3, activation="relu")(inputs)
x = layers.Conv2D(64, 3, activation="relu")(x)
block_1_output = layers.MaxPooling2D(3)(x)

x = layers.Conv2D(64, 3, activation="relu", padding="same")(block_1_output)
x = layers.Conv2D(64, 3, activation="relu", padding="same")(x)
block_2_output = layers.add([x, block_1_output])

x = layers.Conv2D(64, 3, activation="relu", padding="same")(block_2_output)
x = layers.Conv2D(64, 3, activation="relu", padding="same")(x)
block_3_output = layers.add([x, block_2_output])

x = layers.Conv2D(64, 3, activation="relu")(block_3_output)
x = layers.GlobalAveragePooling2D()(x)
x = layers.Dense(256, activation="relu")(x)
x = layers.Dropout(0.5)(x)
outputs = layers.Dense(10)(x)

model = keras.Model(inputs, outputs, name="toy_resnet")
model.summary()
assert block_1_output.shape == (None, 9, 9, 64) and block_3_output.shape == (None, 9, 9, 64)

# keras.datasets.cifar10 is not available offline: random images of its shape
n_images = 200 if SHORT else 1000
x_train = np.random.random((n_images, 32, 32, 3)).astype("float32")
y_train = em.one_hot(np.random.randint(10, size=n_images), 10).numpy()

model.compile(
    optimizer=keras.optimizers.RMSprop(1e-3),
    loss=keras.losses.CategoricalCrossentropy(from_logits=True),
    metrics=["acc"],
)
# We restrict the data to the first 1000 samples so as to limit execution time
# on Colab. Try to train on the entire dataset until convergence!
history = model.fit(x_train[:1000], y_train[:1000], batch_size=64, epochs=1,
                    validation_split=0.2, verbose=0)
assert set(history.history) == {"loss", "acc", "val_loss", "val_acc"}

"""
## Shared layers
"""

# Embedding for 1000 unique words mapped to 128-dimensional vectors
shared_embedding = layers.Embedding(1000, 128)

# Variable-length sequence of integers
text_input_a = keras.Input(shape=(None,), dtype="int32")

# Variable-length sequence of integers
text_input_b = keras.Input(shape=(None,), dtype="int32")

# Reuse the same layer to encode both inputs
encoded_input_a = shared_embedding(text_input_a)
encoded_input_b = shared_embedding(text_input_b)
shared = keras.Model([text_input_a, text_input_b], [encoded_input_a, encoded_input_b])
assert len(shared.trainable_variables) == 1  # one table for both inputs

"""
## Extend the API using custom layers
"""


class CustomDense(layers.Layer):
    def __init__(self, units=32):
        super(CustomDense, self).__init__()  # noqa: UP008 (upstream spelling)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(
            shape=(input_shape[-1], self.units),
            initializer="random_normal",
            trainable=True,
        )
        self.b = self.add_weight(
            shape=(self.units,), initializer="random_normal", trainable=True
        )

    def call(self, inputs):
        return tf.matmul(inputs, self.w) + self.b

    def get_config(self):
        return {"units": self.units}


inputs = keras.Input((4,))
outputs = CustomDense(10)(inputs)

model = keras.Model(inputs, outputs)
assert model(np.ones((2, 4), "float32")).shape == (2, 10)
assert CustomDense.from_config(model.layers[1].get_config()).units == 10  # (added; [0]: its InputLayer)

config = model.get_config()

new_model = keras.Model.from_config(config, custom_objects={"CustomDense": CustomDense})
assert type(new_model.layers[1]) is CustomDense and new_model.layers[1].units == 10  # (added)

"""
## Mix-and-match API styles
"""

units = 32
timesteps = 10
input_dim = 5

# Define a Functional model
inputs = keras.Input((None, units))
x = layers.GlobalAveragePooling1D()(inputs)
outputs = layers.Dense(1)(x)
model = keras.Model(inputs, outputs)


class CustomRNN(layers.Layer):
    def __init__(self):
        super(CustomRNN, self).__init__()  # noqa: UP008 (upstream spelling)
        self.units = units
        self.projection_1 = layers.Dense(units=units, activation="tanh")
        self.projection_2 = layers.Dense(units=units, activation="tanh")
        # Our previously-defined Functional model
        self.classifier = model

    def call(self, inputs):
        outputs = []
        state = tf.zeros(shape=(inputs.shape[0], self.units))
        for t in range(inputs.shape[1]):
            x = inputs[:, t, :]
            h = self.projection_1(x)
            y = h + self.projection_2(state)
            state = y
            outputs.append(y)
        features = tf.stack(outputs, axis=1)
        print(features.shape)
        return self.classifier(features)


rnn_model = CustomRNN()
_ = rnn_model(tf.zeros((1, timesteps, input_dim)))
assert _.shape == (1, 1)

units = 32
timesteps = 10
input_dim = 5
batch_size = 16


class CustomRNN(layers.Layer):
    def __init__(self):
        super(CustomRNN, self).__init__()  # noqa: UP008 (upstream spelling)
        self.units = units
        self.projection_1 = layers.Dense(units=units, activation="tanh")
        self.projection_2 = layers.Dense(units=units, activation="tanh")
        self.classifier = layers.Dense(1)

    def call(self, inputs):
        outputs = []
        state = tf.zeros(shape=(inputs.shape[0], self.units))
        for t in range(inputs.shape[1]):
            x = inputs[:, t, :]
            h = self.projection_1(x)
            y = h + self.projection_2(state)
            state = y
            outputs.append(y)
        features = tf.stack(outputs, axis=1)
        return self.classifier(features)


# Note that you specify a static batch size for the inputs with the `batch_shape`
# arg, because the inner computation of `CustomRNN` requires a static batch size
# (when you create the `state` zeros tensor).
inputs = keras.Input(batch_shape=(batch_size, timesteps, input_dim))
x = layers.Conv1D(32, 3)(inputs)
outputs = CustomRNN()(x)

model = keras.Model(inputs, outputs)
assert model(np.zeros((batch_size, timesteps, input_dim), "float32")).shape == (16, 8, 1)

rnn_model = CustomRNN()
_ = rnn_model(tf.zeros((1, 10, 5)))
print("functional_api: done")
