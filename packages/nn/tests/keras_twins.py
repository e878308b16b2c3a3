"""Models built the same way in Keras 3 and in ember, for the interchange tests.

Each builder takes the library it builds with (``keras`` or ``ember.nn``: the same names,
``lib.layers.Dense``, ``lib.Sequential``, ``lib.Model``, ``lib.layers.Input``) and returns
the model, so one definition makes both twins. This module imports neither library: the
Keras side (``keras_side.py``, run by Keras's own interpreter) and ember's tests both
import it.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def dense_mlp(lib: Any) -> Any:
    L = lib.layers
    return lib.Sequential([L.Input((8,)), L.Dense(16, activation="relu"), L.Dropout(0.3),
                           L.Dense(4, activation="softmax")])


def convnet(lib: Any) -> Any:
    L = lib.layers
    return lib.Sequential([
        L.Input((10, 10, 3)), L.Conv2D(6, 3, padding="same", activation="relu"),
        L.BatchNormalization(), L.MaxPooling2D(), L.Conv2D(4, 3, strides=1), L.Flatten(),
        L.Dense(3)])


def conv_pooling(lib: Any) -> Any:
    L = lib.layers
    return lib.Sequential([
        L.Input((9, 9, 2)), L.Conv2D(4, 2, dilation_rate=1, use_bias=False),
        L.AveragePooling2D(2), L.ZeroPadding2D(1), L.GlobalMaxPooling2D(), L.Dense(2)])


def conv1d_layernorm(lib: Any) -> Any:
    L = lib.layers
    return lib.Sequential([
        L.Input((12, 4)), L.Conv1D(5, 3, activation="relu"), L.LayerNormalization(),
        L.MaxPooling1D(2), L.GlobalAveragePooling1D(), L.Activation("tanh"), L.Dense(2)])


def recurrent(lib: Any) -> Any:
    L = lib.layers
    return lib.Sequential([
        L.Input((7,), dtype="int32"), L.Embedding(20, 8), L.LSTM(6, return_sequences=True),
        L.GRU(5, return_sequences=True), L.SimpleRNN(4)])


def masked_gru(lib: Any) -> Any:
    L = lib.layers
    return lib.Sequential([L.Input((7,), dtype="int32"), L.Embedding(20, 6, mask_zero=True),
                           L.GRU(4)])


def functional_merge(lib: Any) -> Any:
    L = lib.layers
    x = L.Input((6,))
    a = L.Dense(5)(x)
    b = L.Dense(5, activation="tanh")(x)
    merged = L.Concatenate()([L.Add()([a, b]), L.Multiply()([a, b])])
    return lib.Model(x, L.Dense(2)(merged))


def functional_two_inputs(lib: Any) -> Any:
    L = lib.layers
    left, right = L.Input((4,), name="left"), L.Input((3,), name="right")
    h = L.Concatenate()([L.Dense(3, activation="relu")(left), right])
    h = L.Subtract()([L.Dense(4)(h), L.Dense(4)(h)])
    return lib.Model([left, right], L.Dense(1)(h))


def trained_bn_mlp(lib: Any) -> Any:
    """Compiled with Adam and trained: its file carries the optimizer's state. (No bias
    before the BatchNormalization: its gradient is zero up to rounding, which Adam's
    normalised step would blow up into noise different in each library.)"""
    L = lib.layers
    model = lib.Sequential([L.Input((8,)), L.Dense(16, use_bias=False), L.BatchNormalization(),
                            L.Activation("relu"), L.Dense(4)])
    # epsilon large enough to matter: where it is added (Keras 3 adds it to the uncorrected
    # sqrt(v)) changes the step, as ember's Adam once showed here
    model.compile(optimizer=lib.optimizers.Adam(learning_rate=0.01, epsilon=1e-3),
                  loss="mse")
    return model


# name -> (builder, inputs maker): inputs are fixed (numpy, one seed per case)
def _floats(*shape: int) -> Any:
    return lambda rng: rng.standard_normal(shape).astype(np.float32)


def _ids(n: int, steps: int, padded: bool = False) -> Any:
    def make(rng: Any) -> Any:
        ids = rng.integers(1, 20, (n, steps)).astype(np.int32)
        if padded:  # trailing padding of different lengths (the mask's zeros)
            for i in range(n):
                ids[i, steps - i % 4:] = 0
        return ids
    return make


CASES: dict[str, tuple[Any, Any]] = {
    "dense_mlp": (dense_mlp, _floats(5, 8)),
    "convnet": (convnet, _floats(3, 10, 10, 3)),
    "conv_pooling": (conv_pooling, _floats(3, 9, 9, 2)),
    "conv1d_layernorm": (conv1d_layernorm, _floats(4, 12, 4)),
    "recurrent": (recurrent, _ids(4, 7)),
    "masked_gru": (masked_gru, _ids(5, 7, padded=True)),
    "functional_merge": (functional_merge, _floats(5, 6)),
    "functional_two_inputs": (functional_two_inputs,
                              lambda rng: [_floats(5, 4)(rng), _floats(5, 3)(rng)]),
    "trained_bn_mlp": (trained_bn_mlp, _floats(6, 8)),
}


# compiled cases: one step of fit before the save and one after the load, on either side
# (full batch, no shuffling, no dropout), so the second step uses the optimizer's saved
# state (its step count and Adam's moments) and BatchNormalization's moving statistics
TRAINED = {"trained_bn_mlp"}


def train_step(model: Any, name: str) -> None:
    """One optimizer step on the case's fixed batch (the same on both sides)."""
    x = inputs(name)
    y = np.random.default_rng(7).standard_normal((len(x), 4)).astype(np.float32)
    model.fit(x, y, batch_size=len(x), epochs=1, shuffle=False, verbose=0)


def inputs(name: str) -> Any:
    """The fixed inputs of a case (the same arrays on both sides)."""
    return CASES[name][1](np.random.default_rng(sum(map(ord, name))))


def random_values(shapes_and_names: list[tuple[tuple[int, ...], str]], seed: int) -> list[Any]:
    """Values for a model's weights, in its order: not the initializers' (a loaded model
    that kept its own fresh weights would not pass); variances positive."""
    rng = np.random.default_rng(seed)
    out = []
    for shape, name in shapes_and_names:
        if "variance" in name:
            out.append(rng.uniform(0.5, 1.5, shape).astype(np.float32))
        else:
            out.append((rng.standard_normal(shape) * 0.5).astype(np.float32))
    return out
