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


def _trained_with(optimizer: str, **kwargs: Any) -> Any:
    """A dense model compiled with Keras 3's ``optimizer`` and trained: its file carries that
    optimizer's slots in Keras's order (two-slot optimizers interleave them per variable)."""
    def build(lib: Any) -> Any:
        L = lib.layers
        model = lib.Sequential([L.Input((8,)), L.Dense(6, activation="tanh"), L.Dense(4)])
        model.compile(optimizer=getattr(lib.optimizers, optimizer)(**kwargs), loss="mse")
        return model
    return build


def bidirectional(lib: Any) -> Any:
    """Every merge mode, over each recurrent layer (a cell of its own per direction)."""
    L = lib.layers
    return lib.Sequential([
        L.Input((6, 4)), L.Bidirectional(L.LSTM(5, return_sequences=True)),
        L.Bidirectional(L.GRU(3, return_sequences=True), merge_mode="sum"),
        L.Bidirectional(L.SimpleRNN(4, return_sequences=True), merge_mode="ave"),
        L.Bidirectional(L.LSTM(3), merge_mode="mul"), L.Dense(2)])


def masked_bidirectional(lib: Any) -> Any:
    """Padded sequences: the backward direction starts at each sequence's last real step."""
    L = lib.layers
    return lib.Sequential([
        L.Input((7,), dtype="int32"), L.Embedding(20, 6, mask_zero=True),
        L.Bidirectional(L.GRU(4, return_sequences=True)),
        L.Bidirectional(L.LSTM(3), merge_mode="sum")])


def time_distributed(lib: Any) -> Any:
    L = lib.layers
    return lib.Sequential([
        L.Input((4, 6, 6, 2)), L.TimeDistributed(L.Conv2D(3, 3, activation="relu")),
        L.TimeDistributed(L.MaxPooling2D()), L.TimeDistributed(L.Flatten()),
        L.TimeDistributed(L.Dense(5)), L.GRU(3)])


def conv_transpose(lib: Any) -> Any:
    """Output sizes Keras computes: a kernel smaller than its stride, output_padding
    with "same" and "valid", a dilated kernel, channels_first."""
    L = lib.layers
    return lib.Sequential([
        L.Input((3, 3, 3)), L.Conv2DTranspose(4, 2, strides=3),
        L.Conv2DTranspose(3, 3, strides=2, padding="same", output_padding=1,
                          activation="relu"),
        L.Conv2DTranspose(2, 3, strides=(2, 1), output_padding=(1, 0), use_bias=False),
        L.Conv2DTranspose(2, 3, padding="same", dilation_rate=2),
        L.Conv2DTranspose(2, (2, 3), strides=2, data_format="channels_first"),
        L.GlobalAveragePooling2D(), L.Dense(2)])


def attention(lib: Any) -> Any:
    """Cross-attention with its own value and output sizes, and causal self-attention."""
    L = lib.layers
    query, value = L.Input((5, 8), name="query"), L.Input((6, 4), name="value")
    cross = L.MultiHeadAttention(num_heads=2, key_dim=3, value_dim=5,
                                 output_shape=6)(query, value)
    own = L.MultiHeadAttention(num_heads=3, key_dim=2, use_bias=False)(
        query, query, use_causal_mask=True)
    return lib.Model([query, value], L.Dense(2)(L.Concatenate()([cross, own])))


def masked_attention(lib: Any) -> Any:
    """Self-attention over an Embedding's padded steps (the query's and value's masks come
    from it; Keras writes the pooling's mask as a NotEqual node of the graph), and a
    shorter query attending causally to a longer value (Tq != Tv: counted from the first
    step). No masked tensor feeds two attentions: Keras 3.15's attention deletes its
    inputs' masks when called, so a second one would see none, depending on the order."""
    L = lib.layers
    ids = L.Input((7,), dtype="int32")
    query, value = L.Input((4, 5)), L.Input((6, 5))
    x = L.Embedding(20, 6, mask_zero=True)(ids)
    own = L.MultiHeadAttention(num_heads=2, key_dim=3)(x, x)
    cross = L.MultiHeadAttention(num_heads=1, key_dim=2)(query, value, use_causal_mask=True)
    pooled = [L.GlobalAveragePooling1D()(own), L.GlobalAveragePooling1D()(cross)]
    return lib.Model([ids, query, value], L.Dense(2)(L.Concatenate()(pooled)))


def functional_branches(lib: Any) -> Any:
    """Branches of different depths with same-shaped Dense layers: Keras orders layers by
    depth (b1 before a), ember ran them a first; the weights' paths must be Keras's."""
    L = lib.layers
    inp = L.Input((4,))
    a = L.Dense(4, name="a")(inp)
    b = L.Dense(4, name="b2")(L.Dense(4, activation="tanh", name="b1")(inp))
    return lib.Model(inp, L.Add()([a, b]))


def functional_operators(lib: Any) -> Any:
    """Python's operators on symbolic tensors (keras-io's timeseries Transformer writes its
    residuals so): Keras 3 saves them as operation nodes (Add, Multiply, Subtract with a
    number first, Negative)."""
    L = lib.layers
    inp = L.Input((6,))
    h = L.Dense(6, activation="tanh")(inp)
    res = L.LayerNormalization(epsilon=1e-6)(h + inp)
    return lib.Model(inp, L.Dense(3)(1.0 - res * 0.5) + -L.Dense(3)(res))


def trained_attention(lib: Any) -> Any:
    """Trained with Adam: the file holds Adam's moments of the per-head kernels, in
    Keras's shapes."""
    L = lib.layers
    x = L.Input((5, 6))
    h = L.MultiHeadAttention(num_heads=2, key_dim=3)(x, x)
    model = lib.Model(x, L.Dense(4)(L.GlobalAveragePooling1D()(h)))
    model.compile(optimizer=lib.optimizers.Adam(learning_rate=0.01), loss="mse")
    return model


def compiled_metrics(lib: Any) -> Any:
    """A compile config with metrics by name and by object, and a loss by name."""
    L = lib.layers
    model = lib.Sequential([L.Input((8,)), L.Dense(6, activation="relu"),
                            L.Dense(3, activation="softmax")])
    model.compile(optimizer=lib.optimizers.RMSprop(learning_rate=0.01),
                  loss="sparse_categorical_crossentropy",
                  metrics=["accuracy", lib.metrics.SparseCategoricalAccuracy(name="acc")])
    return model


def compiled_loss_object(lib: Any) -> Any:
    """A compile config with a loss object (its own config) and metric names and objects."""
    L = lib.layers
    model = lib.Sequential([L.Input((8,)), L.Dense(3, activation="softmax")])
    model.compile(optimizer=lib.optimizers.SGD(learning_rate=0.1, momentum=0.9),
                  loss=lib.losses.CategoricalCrossentropy(label_smoothing=0.1),
                  metrics=["mae", lib.metrics.CategoricalAccuracy(),
                           lib.metrics.MeanSquaredError(name="squares")])
    return model


def depthwise_separable(lib: Any) -> Any:
    """Depthwise (a multiplier, strides with dilation, no bias) and separable convolutions
    (channels first, a multiplier): Keras's kernel layouts and output channel order."""
    L = lib.layers
    return lib.Sequential([
        L.Input((9, 9, 3)), L.DepthwiseConv2D(3, depth_multiplier=2, padding="same",
                                              activation="relu"),
        L.DepthwiseConv2D(2, strides=2, dilation_rate=2, use_bias=False),
        L.SeparableConv2D(4, 3, padding="same", depth_multiplier=2),
        L.Permute((3, 1, 2)),
        L.SeparableConv2D(3, 2, strides=2, data_format="channels_first"),
        L.GlobalAveragePooling2D(data_format="channels_first"), L.Dense(2)])


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
    "bidirectional": (bidirectional, _floats(4, 6, 4)),
    "masked_bidirectional": (masked_bidirectional, _ids(5, 7, padded=True)),
    "time_distributed": (time_distributed, _floats(3, 4, 6, 6, 2)),
    "conv_transpose": (conv_transpose, _floats(2, 3, 3, 3)),
    "attention": (attention, lambda rng: [_floats(3, 5, 8)(rng), _floats(3, 6, 4)(rng)]),
    "trained_attention": (trained_attention, _floats(6, 5, 6)),
    "functional_operators": (functional_operators, _floats(5, 6)),
    "functional_branches": (functional_branches, _floats(5, 4)),
    "masked_attention": (masked_attention,
                         lambda rng: [_ids(5, 7, padded=True)(rng), _floats(5, 4, 5)(rng),
                                      _floats(5, 6, 5)(rng)]),
    "compiled_metrics": (compiled_metrics, _floats(10, 8)),
    "compiled_loss_object": (compiled_loss_object, _floats(10, 8)),
    "depthwise_separable": (depthwise_separable, _floats(3, 9, 9, 3)),
    "trained_adadelta": (_trained_with("Adadelta", learning_rate=1.0), _floats(6, 8)),
    "trained_ftrl": (_trained_with("Ftrl", learning_rate=0.5, l1_regularization_strength=0.01,
                                   l2_regularization_strength=0.02), _floats(6, 8)),
    "trained_nadam": (_trained_with("Nadam", learning_rate=0.02), _floats(6, 8)),
    "trained_adamax": (_trained_with("Adamax", learning_rate=0.02), _floats(6, 8)),
    "trained_lion": (_trained_with("Lion", learning_rate=0.01), _floats(6, 8)),
    "trained_lamb": (_trained_with("Lamb", learning_rate=0.02), _floats(6, 8)),
    "trained_adam_weight_decay": (_trained_with("Adam", learning_rate=0.02, weight_decay=0.1),
                                  _floats(6, 8)),
}


# compiled cases whose compile config (loss, metrics by name) is compared: each side
# evaluates the model it loaded on the case's fixed labels, and the two results (metric
# names and values) must be those the saving side got
def _labels(name: str, n: int) -> Any:
    rng = np.random.default_rng(sum(map(ord, name)) + 1)
    classes = rng.integers(0, 3, n)
    if name == "compiled_loss_object":  # one-hot for the categorical loss
        return np.eye(3, dtype=np.float32)[classes]
    return classes.astype(np.int32)


EVALUATED = {"compiled_metrics", "compiled_loss_object"}


def evaluate(model: Any, name: str) -> dict[str, float]:
    """The model's loss and metrics on the case's fixed data, by name."""
    x = inputs(name)
    logs = model.evaluate(x, _labels(name, len(x)), batch_size=len(x), verbose=0,
                          return_dict=True)
    return {k: float(v) for k, v in logs.items()}


# compiled cases: one step of fit before the save and one after the load, on either side
# (full batch, no shuffling, no dropout), so the second step uses the optimizer's saved
# state (its step count and Adam's moments) and BatchNormalization's moving statistics
TRAINED = {"trained_bn_mlp", "trained_attention", "trained_adadelta", "trained_ftrl",
           "trained_nadam", "trained_adamax", "trained_lion", "trained_lamb",
           "trained_adam_weight_decay"}


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
