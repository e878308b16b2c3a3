"""Port of keras-team/keras-io examples/timeseries/timeseries_classification_transformer.py
("Timeseries classification with a Transformer model": functional Transformer encoder
blocks with MultiHeadAttention, residuals written as `x + inputs`, Conv1D projections,
LayerNormalization; EarlyStopping with restore_best_weights; validation_split).

Upstream: https://github.com/keras-team/keras-io/blob/2024821a4b87a21175467773a130c12735673796/examples/timeseries/timeseries_classification_transformer.py
Changed: names only (keras -> ember.nn, keras.layers -> nn.layers), except where the
example cannot run here: the FordA files cannot be downloaded, so readucr returns series
this program makes with FordA's layout (a label of -1 or 1 and the series): noisy sines
at a random phase around a level of 0.25 (class 1) or -0.25 (class -1). The series has
one feature, so each LayerNormalization (over that one feature) gives its beta, and the
blocks pass their input on plus biases, in Keras as here: what the classifier sees is the
series' mean, hence classes told apart by their level. Reduced (EMBER_PROGRAMS_FULL=1
restores the model: head_size 256, 4 heads, 4 blocks, mlp_units [128], 200 epochs):
series of 64 steps (FordA: 500), 600 training and 300 test series (3,601 and 1,320),
head_size 16, 2 heads, 2 blocks, mlp_units [32], learning rate 1e-3 (1e-4), 15 epochs
(200), EarlyStopping(patience=3) (10).
EMBER_PROGRAMS_SHORT=1: 200 and 100 series, 2 epochs, no threshold. Added: test accuracy
passes 80% (chance: 50%), and the restored weights are the best epoch's.
"""

import os

import numpy as np

from ember import nn

keras = nn  # the example's `keras.` prefix
layers = nn.layers
FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1"
nn.utils.set_random_seed(0)


def readucr(filename):
    # FordA's files: one series a row, its label (-1 or 1) first
    n = {"train": 200 if SHORT else 600, "test": 100 if SHORT else 300}[filename]
    rng = np.random.default_rng(0 if filename == "train" else 1)
    y = rng.choice([-1, 1], n)
    t = np.linspace(0, 1, 64)
    level = np.where(y[:, None] == 1, 0.25, -0.25)
    phase = rng.uniform(0, 2 * np.pi, (n, 1))
    x = level + np.sin(2 * np.pi * 5 * t + phase) + 0.5 * rng.standard_normal((n, 64))
    return x.astype(np.float32), y.astype(int)


x_train, y_train = readucr("train")
x_test, y_test = readucr("test")

x_train = x_train.reshape((x_train.shape[0], x_train.shape[1], 1))
x_test = x_test.reshape((x_test.shape[0], x_test.shape[1], 1))

n_classes = len(np.unique(y_train))

idx = np.random.permutation(len(x_train))
x_train = x_train[idx]
y_train = y_train[idx]

y_train[y_train == -1] = 0
y_test[y_test == -1] = 0

"""
## Build the model
"""


def transformer_encoder(inputs, head_size, num_heads, ff_dim, dropout=0):
    # Attention and Normalization
    x = layers.MultiHeadAttention(
        key_dim=head_size, num_heads=num_heads, dropout=dropout
    )(inputs, inputs)
    x = layers.Dropout(dropout)(x)
    x = layers.LayerNormalization(epsilon=1e-6)(x)
    res = x + inputs

    # Feed Forward Part
    x = layers.Conv1D(filters=ff_dim, kernel_size=1, activation="relu")(res)
    x = layers.Dropout(dropout)(x)
    x = layers.Conv1D(filters=inputs.shape[-1], kernel_size=1)(x)
    x = layers.LayerNormalization(epsilon=1e-6)(x)
    return x + res


def build_model(
    input_shape,
    head_size,
    num_heads,
    ff_dim,
    num_transformer_blocks,
    mlp_units,
    dropout=0,
    mlp_dropout=0,
):
    inputs = keras.Input(shape=input_shape)
    x = inputs
    for _ in range(num_transformer_blocks):
        x = transformer_encoder(x, head_size, num_heads, ff_dim, dropout)

    x = layers.GlobalAveragePooling1D(data_format="channels_last")(x)
    for dim in mlp_units:
        x = layers.Dense(dim, activation="relu")(x)
        x = layers.Dropout(mlp_dropout)(x)
    outputs = layers.Dense(n_classes, activation="softmax")(x)
    return keras.Model(inputs, outputs)


"""
## Train and evaluate
"""

input_shape = x_train.shape[1:]

model = build_model(
    input_shape,
    head_size=256 if FULL else 16,
    num_heads=4 if FULL else 2,
    ff_dim=4,
    num_transformer_blocks=4 if FULL else 2,
    mlp_units=[128] if FULL else [32],
    mlp_dropout=0.4,
    dropout=0.25,
)

model.compile(
    loss="sparse_categorical_crossentropy",
    optimizer=keras.optimizers.Adam(learning_rate=1e-4 if FULL else 1e-3),
    metrics=["sparse_categorical_accuracy"],
)
model.summary()

callbacks = [keras.callbacks.EarlyStopping(patience=10 if FULL else 3,
                                           restore_best_weights=True)]

history = model.fit(
    x_train,
    y_train,
    validation_split=0.2,
    epochs=200 if FULL else (2 if SHORT else 15),
    batch_size=64,
    callbacks=callbacks,
)

results = model.evaluate(x_test, y_test, verbose=1)

"""
## Added checks
"""

val_losses = history.history["val_loss"]
x_val, y_val = x_train[int(len(x_train) * 0.8):], y_train[int(len(y_train) * 0.8):]
val_now = model.evaluate(x_val, y_val, verbose=0)
val_now = val_now[0] if isinstance(val_now, (list, tuple)) else val_now
if callbacks[0].stopped_epoch > 0:  # stopped early: the weights are the best epoch's
    np.testing.assert_allclose(val_now, min(val_losses), rtol=1e-4)
if not SHORT:
    test_accuracy = results[1]
    print(f"test accuracy {test_accuracy:.3f}")
    assert test_accuracy > 0.8, test_accuracy
