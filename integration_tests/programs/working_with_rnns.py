"""Port of keras-team/keras-io guides/working_with_rnns.py ("Working with RNNs": Embedding
+ LSTM/GRU/SimpleRNN models, return_sequences and return_state, an encoder-decoder whose
decoder starts from the encoder's states (functional API, inputs of any length), a
stateful LSTM and reset_states, reusing layer.states as an initial state, Bidirectional,
and LSTM against RNN(LSTMCell) on MNIST rows with set_weights/get_weights and
predict_on_batch).

Upstream: https://github.com/keras-team/keras-io/blob/4849412cb6cd6089949fb97edf1758083c964416/guides/working_with_rnns.py
Changed: names only (keras / keras.layers / keras.models -> nn / nn.layers / nn.models,
tf.device("CPU:0") -> em.device("/cpu:0"), tf.argmax / tf.expand_dims -> em.argmax /
em.expand_dims);
keras.datasets.mnist.load_data() -> ember.data.datasets.mnist(data_dir=...); the plot of
the sample is dropped. Reduced (EMBER_PROGRAMS_FULL=1 restores it): 2,000 training and
500 test images for the MNIST models (upstream 60,000 and 10,000); EMBER_PROGRAMS_SHORT=1:
256 / 128 images, no thresholds. Not ported: the last section, "RNNs with list/dict
inputs, or nested inputs" (a custom cell whose inputs, outputs and states are pairs, in
RNN, trained by fit on two outputs): ember's RNN takes one (batch, steps, features)
input, and compile/fit train models with one output (fit says so for a list of targets).
Added: the shapes each section prints or implies; the decoder really starts
from the encoder's states; a stateful layer carries its states and reset_states clears
them; the LSTM and RNN(LSTMCell) models give the same predictions once they share weights;
the MNIST model trained past chance.
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

keras = nn  # the example's `keras.` prefix
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
DATA_DIR = os.environ.get("EMBER_DATA") or os.path.expanduser("~/.cache/ember/datasets/mnist")
if not (pathlib.Path(DATA_DIR) / "train-images-idx3-ubyte.gz").exists():
    raise unittest.SkipTest(f"MNIST files are not in {DATA_DIR} (set EMBER_DATA)")
em.random.set_seed(0)
np.random.seed(0)

"""
## Built-in RNN layers: a simple example
"""

model = keras.Sequential()
# Add an Embedding layer expecting input vocab of size 1000, and
# output embedding dimension of size 64.
model.add(layers.Embedding(input_dim=1000, output_dim=64))

# Add a LSTM layer with 128 internal units.
model.add(layers.LSTM(128))

# Add a Dense layer with 10 units.
model.add(layers.Dense(10))

model.summary()
assert model(np.zeros((2, 7), np.int32)).shape == (2, 10)

"""
## Outputs and states
"""

model = keras.Sequential()
model.add(layers.Embedding(input_dim=1000, output_dim=64))

# The output of GRU will be a 3D tensor of shape (batch_size, timesteps, 256)
model.add(layers.GRU(256, return_sequences=True))

# The output of SimpleRNN will be a 2D tensor of shape (batch_size, 128)
model.add(layers.SimpleRNN(128))

model.add(layers.Dense(10))

model.summary()
assert model(np.zeros((2, 7), np.int32)).shape == (2, 10)

encoder_vocab = 1000
decoder_vocab = 2000

encoder_input = layers.Input(shape=(None,))
encoder_embedded = layers.Embedding(input_dim=encoder_vocab, output_dim=64)(
    encoder_input
)

# Return states in addition to output
output, state_h, state_c = layers.LSTM(64, return_state=True, name="encoder")(
    encoder_embedded
)
encoder_state = [state_h, state_c]

decoder_input = layers.Input(shape=(None,))
decoder_embedded = layers.Embedding(input_dim=decoder_vocab, output_dim=64)(
    decoder_input
)

# Pass the 2 states to a new LSTM layer, as initial state
decoder_output = layers.LSTM(64, name="decoder")(
    decoder_embedded, initial_state=encoder_state
)
output = layers.Dense(10)(decoder_output)

model = keras.Model([encoder_input, decoder_input], output)
model.summary()

# Added: sequences of any length, and the decoder does start from the encoder's states
enc = np.random.randint(0, encoder_vocab, (3, 5))
dec = np.random.randint(0, decoder_vocab, (3, 4))
got = model([enc, dec]).numpy()
assert got.shape == (3, 10)
assert model([enc[:, :2], dec[:, :6]]).shape == (3, 10)
other = model([np.random.randint(0, encoder_vocab, (3, 5)), dec]).numpy()
assert not np.allclose(got, other)  # only the encoder's input changed

"""
## Cross-batch statefulness
"""

paragraph1 = np.random.random((20, 10, 50)).astype(np.float32)
paragraph2 = np.random.random((20, 10, 50)).astype(np.float32)
paragraph3 = np.random.random((20, 10, 50)).astype(np.float32)

lstm_layer = layers.LSTM(64, stateful=True)
output = lstm_layer(paragraph1)
output = lstm_layer(paragraph2)
output = lstm_layer(paragraph3)

# Added: the carried states matter, and reset_states clears them
fresh = layers.LSTM(64)
fresh(paragraph3)
fresh.set_weights(lstm_layer.get_weights())
assert not np.allclose(output.numpy(), fresh(paragraph3).numpy())

# reset_states() will reset the cached state to the original initial_state.
# If no initial_state was provided, zero-states will be used by default.
lstm_layer.reset_states()

np.testing.assert_allclose(lstm_layer(paragraph3).numpy(), fresh(paragraph3).numpy(),
                           rtol=1e-5, atol=1e-6)

"""
### RNN State Reuse
"""

paragraph1 = np.random.random((20, 10, 50)).astype(np.float32)
paragraph2 = np.random.random((20, 10, 50)).astype(np.float32)
paragraph3 = np.random.random((20, 10, 50)).astype(np.float32)

lstm_layer = layers.LSTM(64, stateful=True)
output = lstm_layer(paragraph1)
output = lstm_layer(paragraph2)

existing_state = lstm_layer.states

new_lstm_layer = layers.LSTM(64)
new_output = new_lstm_layer(paragraph3, initial_state=existing_state)

# Added: with the same weights, the new layer continues where the stateful one stopped
new_lstm_layer.set_weights(lstm_layer.get_weights())
np.testing.assert_allclose(new_lstm_layer(paragraph3, initial_state=existing_state).numpy(),
                           lstm_layer(paragraph3).numpy(), rtol=1e-5, atol=1e-6)

"""
## Bidirectional RNNs
"""

model = keras.Sequential()

model.add(
    layers.Bidirectional(layers.LSTM(64, return_sequences=True), input_shape=(5, 10))
)
model.add(layers.Bidirectional(layers.LSTM(32)))
model.add(layers.Dense(10))

model.summary()
assert model(np.zeros((2, 5, 10), np.float32)).shape == (2, 10)

"""
### Using CuDNN kernels when available
"""

batch_size = 64
# Each MNIST image batch is a tensor of shape (batch_size, 28, 28).
# Each input sequence will be of size (28, 28) (height is treated like time).
input_dim = 28

units = 64
output_size = 10  # labels are from 0 to 9


# Build the RNN model
def build_model(allow_cudnn_kernel=True):
    # CuDNN is only available at the layer level, and not at the cell level.
    # This means `LSTM(units)` will use the CuDNN kernel,
    # while RNN(LSTMCell(units)) will run on non-CuDNN kernel.
    if allow_cudnn_kernel:
        # The LSTM layer with default options uses CuDNN.
        lstm_layer = keras.layers.LSTM(units, input_shape=(None, input_dim))
    else:
        # Wrapping a LSTMCell in a RNN layer will not use CuDNN.
        lstm_layer = keras.layers.RNN(
            keras.layers.LSTMCell(units), input_shape=(None, input_dim)
        )
    model = keras.models.Sequential(
        [
            lstm_layer,
            keras.layers.BatchNormalization(),
            keras.layers.Dense(output_size),
        ]
    )
    return model


def load_data(n_train, n_test):
    def split(name, n):
        x, y = next(iter(data.datasets.mnist(name, data_dir=DATA_DIR).take(n).batch(n)))
        return (np.asarray(x).reshape(-1, 28, 28) * 255).round().astype(np.uint8), np.asarray(y)
    return split("train", n_train), split("test", n_test)


(x_train, y_train), (x_test, y_test) = load_data(
    60000 if FULL else 256 if SHORT else 2000, 10000 if FULL else 128 if SHORT else 500)
x_train, x_test = x_train / 255.0, x_test / 255.0
sample, sample_label = x_train[0], y_train[0]

model = build_model(allow_cudnn_kernel=True)

model.compile(
    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    optimizer="sgd",
    metrics=["accuracy"],
)


history = model.fit(
    x_train, y_train, validation_data=(x_test, y_test), batch_size=batch_size, epochs=1
)
if not SHORT:  # Added: one epoch of SGD on 2,000 rows-as-steps images is past chance
    assert history.history["val_accuracy"][-1] > 0.2, history.history

noncudnn_model = build_model(allow_cudnn_kernel=False)
noncudnn_model.set_weights(model.get_weights())
noncudnn_model.compile(
    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    optimizer="sgd",
    metrics=["accuracy"],
)
# Added: the two models are the same function of the same weights
np.testing.assert_allclose(noncudnn_model.predict(x_test[:32], verbose=0),
                           model.predict(x_test[:32], verbose=0), rtol=1e-4, atol=1e-5)
noncudnn_model.fit(
    x_train, y_train, validation_data=(x_test, y_test), batch_size=batch_size, epochs=1
)

with em.device("/cpu:0"):
    cpu_model = build_model(allow_cudnn_kernel=True)
    cpu_model.set_weights(model.get_weights())
    result = em.argmax(cpu_model.predict_on_batch(em.expand_dims(sample, 0)), axis=1)
    print(
        "Predicted result is: %s, target result is: %s" % (result.numpy(), sample_label)  # noqa: UP031
    )
    assert result.shape == (1,)
