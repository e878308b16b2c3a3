"""Port of keras-team/keras-io examples/nlp/bidirectional_lstm_imdb.py ("Bidirectional LSTM on
IMDB": Embedding, two stacked Bidirectional(LSTM) layers, a sigmoid classifier, compile/fit).

Upstream: https://github.com/keras-team/keras-io/blob/0a4be8bbc3ae126f3ca49a0bf173902866ec06f0/examples/nlp/bidirectional_lstm_imdb.py
Changed: names only (keras.layers -> nn.layers). ember has no functional API, so
`inputs = keras.Input(shape=(None,), dtype="int32"); ...; keras.Model(inputs, outputs)`
becomes the same layers, in the same order, in an nn.Sequential. The IMDB download and
keras.preprocessing.sequence.pad_sequences are replaced by synthetic reviews (token ids with
ten planted "positive" or "negative" words, left-padded with 0 to maxlen as pad_sequences
does). Reduced (EMBER_PROGRAMS_FULL=1 restores it): vocabulary 200, maxlen 24, embedding 16,
16 LSTM units, 1,280 training and 160 validation reviews, 2 epochs (upstream 20,000, 200, 128,
64, 25,000, 25,000, 2). Added: validation accuracy passes 75% (chance: 50%) and the
Bidirectional layers output twice the units.
EMBER_PROGRAMS_SHORT=1 (the strict-GPU run): fewer examples and epochs, no threshold on
what training reached.
"""

import os

import numpy as np

import ember.core as em
from ember import nn
from ember.nn import layers

keras = nn
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"  # the strict-GPU run (test_programs.py)
em.random.set_seed(0)

max_features = 20000 if FULL else 200  # Only consider the top 20k words
maxlen = 200 if FULL else 24  # Only consider the first 200 words of each movie review
embed, units = (128, 64) if FULL else (16, 16)

model = keras.Sequential([
    # Embed each integer in a 128-dimensional vector
    layers.Embedding(max_features, embed),
    # Add 2 bidirectional LSTMs
    layers.Bidirectional(layers.LSTM(units, return_sequences=True)),
    layers.Bidirectional(layers.LSTM(units)),
    # Add a classifier
    layers.Dense(1, activation="sigmoid"),
])


def load_data(n, seed):
    rng = np.random.default_rng(seed)
    x = np.zeros((n, maxlen), np.int32)
    y = rng.integers(0, 2, size=n)
    for i in range(n):
        length = rng.integers(maxlen // 2, maxlen + 1)
        review = rng.integers(23, max_features, size=length)
        k = rng.integers(4, 8)
        words = rng.integers(3, 13, size=k) + 10 * (1 - y[i])
        review[rng.choice(length, size=k, replace=False)] = words
        x[i, maxlen - length:] = review  # pad_sequences pads (and truncates) at the front
    return x, y.astype(np.float32)


(x_train, y_train), (x_val, y_val) = load_data(25000 if FULL else 160 if SHORT else 1280, 1), load_data(
    25000 if FULL else 64 if SHORT else 160, 2)
print(len(x_train), "Training sequences")
print(len(x_val), "Validation sequences")

model.build((None, maxlen))
model.summary()
assert model.layers[1](model.layers[0](x_val[:2])).shape == (2, maxlen, 2 * units)

model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
history = model.fit(x_train, y_train, batch_size=32, epochs=1 if SHORT else 2, validation_data=(x_val, y_val))
print(history.history)
assert SHORT or history.history["val_accuracy"][-1] > 0.75, history.history
