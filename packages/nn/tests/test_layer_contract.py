"""The contract every layer passes (as Keras's run_layer_test): build, call, output shape,
trainable weight count, gradients for every variable, one training step that lowers a loss,
and deterministic output under a seed. The checkpoint round trip of every layer in ``SPECS``
(save, restore into a fresh instance, same outputs) is in
``integration_tests/test_layer_checkpoint.py``, where ember-checkpoint is installed."""

import numpy as np
import pytest

import ember.core as em
from ember import nn, tape

L = nn.layers

# (id, factory, input shape, input dtype, output shape, number of trainable weights)
SPECS = [
    ("dense", lambda: L.Dense(4, activation="relu"), (3, 5), "f", (3, 4), 2),
    ("dense_3d", lambda: L.Dense(4, use_bias=False), (2, 3, 5), "f", (2, 3, 4), 1),
    ("conv2d_same", lambda: L.Conv2D(4, 3, padding="same"), (2, 6, 6, 3), "f", (2, 6, 6, 4), 2),
    ("conv2d_stride", lambda: L.Conv2D(4, 3, strides=2), (2, 7, 7, 3), "f", (2, 3, 3, 4), 2),
    ("conv2d_dilated", lambda: L.Conv2D(2, 3, dilation_rate=2, padding="same"), (1, 7, 7, 2),
     "f", (1, 7, 7, 2), 2),
    ("conv1d", lambda: L.Conv1D(4, 3, padding="same"), (2, 9, 3), "f", (2, 9, 4), 2),
    ("conv2d_transpose", lambda: L.Conv2DTranspose(3, 3, strides=2, padding="same"),
     (2, 4, 4, 2), "f", (2, 8, 8, 3), 2),
    ("conv2d_transpose_valid", lambda: L.Conv2DTranspose(3, 2, strides=2), (1, 3, 3, 2), "f",
     (1, 6, 6, 3), 2),
    ("depthwise_conv2d", lambda: L.DepthwiseConv2D(3, depth_multiplier=2, padding="same"),
     (2, 5, 5, 3), "f", (2, 5, 5, 6), 2),
    ("depthwise_conv2d_stride_dilated", lambda: L.DepthwiseConv2D(2, strides=2, dilation_rate=2,
                                                                   use_bias=False),
     (1, 7, 7, 2), "f", (1, 3, 3, 2), 1),
    ("separable_conv2d", lambda: L.SeparableConv2D(4, 3, padding="same", activation="relu"),
     (2, 5, 5, 3), "f", (2, 5, 5, 4), 3),
    ("maxpool", lambda: L.MaxPool2D(), (2, 6, 6, 3), "f", (2, 3, 3, 3), 0),
    ("maxpool_same", lambda: L.MaxPool2D(3, 2, padding="same"), (2, 5, 5, 3), "f",
     (2, 3, 3, 3), 0),
    ("avgpool", lambda: L.AvgPool2D(2), (2, 6, 6, 3), "f", (2, 3, 3, 3), 0),
    ("avgpool_same", lambda: L.AvgPool2D(3, 2, padding="same"), (2, 5, 5, 3), "f",
     (2, 3, 3, 3), 0),
    ("gap", lambda: L.GlobalAveragePooling2D(), (2, 4, 4, 3), "f", (2, 3), 0),
    ("flatten", lambda: L.Flatten(), (2, 3, 4), "f", (2, 12), 0),
    ("reshape", lambda: L.Reshape([4, 3]), (2, 12), "f", (2, 4, 3), 0),
    ("repeat_vector", lambda: L.RepeatVector(3), (2, 5), "f", (2, 3, 5), 0),
    ("activation", lambda: L.Activation("tanh"), (2, 5), "f", (2, 5), 0),
    ("dropout", lambda: L.Dropout(0.5), (4, 5), "f", (4, 5), 0),
    ("batchnorm", lambda: L.BatchNormalization(), (8, 4), "f", (8, 4), 2),
    ("batchnorm_conv", lambda: L.BatchNormalization(), (4, 3, 3, 2), "f", (4, 3, 3, 2), 2),
    ("layernorm", lambda: L.LayerNormalization(), (3, 6), "f", (3, 6), 2),
    ("embedding", lambda: L.Embedding(10, 4), (2, 5), "i", (2, 5, 4), 1),
    ("simple_rnn", lambda: L.SimpleRNN(6), (2, 4, 3), "f", (2, 6), 3),
    ("lstm", lambda: L.LSTM(6), (2, 4, 3), "f", (2, 6), 3),
    ("lstm_seq", lambda: L.LSTM(6, return_sequences=True), (2, 4, 3), "f", (2, 4, 6), 3),
    ("gru", lambda: L.GRU(5), (2, 4, 3), "f", (2, 5), 3),
    ("gru_seq", lambda: L.GRU(5, return_sequences=True), (2, 4, 3), "f", (2, 4, 5), 3),
    ("mha", lambda: L.MultiHeadAttention(num_heads=2, key_dim=3), (2, 4, 6), "f", (2, 4, 6), 8),
    # preprocessing layers: no trainable weights, gradients reach their inputs
    ("normalization", lambda: L.Normalization(axis=(1, 2)), (3, 4, 2), "f", (3, 4, 2), 0),
    ("normalization_given", lambda: L.Normalization(mean=[0., 1.], variance=[1., 4.]), (3, 2),
     "f", (3, 2), 0),
    ("rescaling", lambda: L.Rescaling(1 / 255.0, offset=-0.5), (2, 3), "f", (2, 3), 0),
    ("resizing", lambda: L.Resizing(3, 5), (2, 4, 4, 2), "f", (2, 3, 5, 2), 0),
    ("center_crop", lambda: L.CenterCrop(2, 3), (2, 4, 4, 2), "f", (2, 2, 3, 2), 0),
    ("random_flip", lambda: L.RandomFlip(), (4, 4, 4, 2), "f", (4, 4, 4, 2), 0),
    ("random_rotation", lambda: L.RandomRotation(0.2), (2, 5, 5, 1), "f", (2, 5, 5, 1), 0),
    ("random_zoom", lambda: L.RandomZoom(0.2), (2, 5, 5, 1), "f", (2, 5, 5, 1), 0),
    ("random_translation", lambda: L.RandomTranslation(0.2, 0.2, fill_mode="constant"),
     (2, 5, 5, 1), "f", (2, 5, 5, 1), 0),
    ("random_contrast", lambda: L.RandomContrast(0.3, value_range=(-5, 5)), (2, 4, 4, 3), "f",
     (2, 4, 4, 3), 0),
    ("random_crop", lambda: L.RandomCrop(3, 2), (2, 5, 5, 1), "f", (2, 3, 2, 1), 0),
]


def _input(shape, kind, seed=0):
    rng = np.random.default_rng(seed)
    if kind == "i":
        return em.constant(rng.integers(0, 10, shape).astype(np.int32))
    return em.constant(rng.standard_normal(shape).astype(np.float32))


def _call(layer, x, training=True):
    if isinstance(layer, L.MultiHeadAttention):
        return layer(x, x, training=training)
    return layer(x, training=training)


@pytest.mark.parametrize("spec", SPECS, ids=[s[0] for s in SPECS])
def test_layer_contract(spec):
    _, factory, in_shape, kind, out_shape, n_trainable = spec
    layer = factory()
    assert not layer.built
    x = _input(in_shape, kind)
    y = _call(layer, x)
    assert layer.built
    assert y.shape == out_shape
    assert y.dtype == np.float32
    assert len(layer.trainable_variables) == n_trainable
    assert np.all(np.isfinite(y.numpy()))

    # gradients reach every trainable variable (and the input for float inputs)
    target = _input(out_shape, "f", seed=1)
    variables = layer.trainable_variables

    def loss_fn():
        return em.reduce_mean(em.square(_call(layer, x) - target))

    with tape.GradientTape() as t:
        t.watch(x)
        loss0 = loss_fn()
    sources = variables + ([x] if kind == "f" else [])
    grads = t.gradient(loss0, sources)
    for v, g in zip(sources, grads):
        assert g is not None, f"no gradient for {getattr(v, 'name', 'input')}"
        assert g.shape == v.shape
        assert np.all(np.isfinite(np.asarray(g)))

    # one training step lowers the loss (layers with weights)
    if variables:
        opt = nn.optimizers.SGD(0.05)
        em.random.set_seed(7)
        before = float(loss_fn())
        opt.apply_gradients(zip(grads[:len(variables)], variables))
        em.random.set_seed(7)
        after = float(loss_fn())
        assert after < before, (before, after)


@pytest.mark.parametrize("spec", SPECS, ids=[s[0] for s in SPECS])
def test_layer_is_deterministic_under_a_seed(spec):
    _, factory, in_shape, kind, _, _ = spec
    outs = []
    for _ in range(2):
        em.random.set_seed(42)
        layer = factory()
        outs.append(_call(layer, _input(in_shape, kind)).numpy())
    np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize("spec", [s for s in SPECS if s[5]], ids=[s[0] for s in SPECS if s[5]])
def test_built_layer_rejects_a_misfitting_input(spec):
    _, factory, in_shape, kind, _, _ = spec
    layer = factory()
    _call(layer, _input(in_shape, kind))
    if kind == "i":
        pytest.skip("Embedding takes ids of any shape")
    bad = in_shape[:-1] + (in_shape[-1] + 1,)
    with pytest.raises(ValueError, match=layer.name):
        _call(layer, _input(bad, kind))


def test_default_names_follow_keras_3s_snake_case():
    """Keras 3's ``to_snake_case`` (digits are not lowercase letters): a user's
    ``ConvLSTM2D`` is ``conv_lstm2d`` and ``RNN2Layer`` is ``rnn2_layer`` (tf.keras 2's rule
    gave ``conv_lst_m2d`` and ``rn_n2layer``, so ``model.get_layer("conv_lstm2d")`` of Keras
    3 code failed; found porting keras-io's ConvLSTM example)."""
    from ember.nn.layers.base import _snake

    for cls, want in (("ConvLSTM2D", "conv_lstm2d"), ("RNN2Layer", "rnn2_layer"),
                      ("Conv2DTranspose", "conv2d_transpose"), ("PReLU", "p_re_lu"),
                      ("LSTMCell", "lstm_cell"), ("ResNet50V2", "res_net50v2"),
                      ("GlobalAveragePooling2D", "global_average_pooling2d")):
        assert _snake(cls) == want, cls
    ConvLSTM2D = type("ConvLSTM2D", (nn.layers.Layer,), {})
    assert ConvLSTM2D().name.startswith("conv_lstm2d")


# Keras 3.15.1's leading parameters (inspect.signature of each layer's __init__ there)
KERAS_POSITIONAL = {
    "Conv1D": ["filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate",
               "groups", "activation", "use_bias"],
    "Conv2D": ["filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate",
               "groups", "activation", "use_bias"],
    "Conv3D": ["filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate",
               "groups", "activation", "use_bias"],
    "Conv2DTranspose": ["filters", "kernel_size", "strides", "padding", "output_padding",
                        "data_format", "dilation_rate", "activation", "use_bias"],
    "SeparableConv2D": ["filters", "kernel_size", "strides", "padding", "data_format",
                        "dilation_rate", "depth_multiplier", "activation", "use_bias"],
    "DepthwiseConv2D": ["kernel_size", "strides", "padding", "depth_multiplier", "data_format",
                        "dilation_rate", "activation", "use_bias"],
    "Dense": ["units", "activation", "use_bias", "kernel_initializer", "bias_initializer"],
    "MaxPooling2D": ["pool_size", "strides", "padding", "data_format"],
}


def test_positional_arguments_come_in_keras_3s_order():
    """``Conv2D(4, 3, 1, "same", "channels_first")`` is channels-first in Keras 3; ember's
    Conv1D/Conv2D took dilation_rate fifth (found writing the 3-D layers)."""
    import inspect

    for name, want in KERAS_POSITIONAL.items():
        got = list(inspect.signature(getattr(nn.layers, name).__init__).parameters)[1:]
        assert got[:len(want)] == want, name
    conv = nn.layers.Conv2D(4, 3, 1, "same", "channels_first")
    assert conv(np.zeros((1, 2, 5, 5), np.float32)).shape == (1, 4, 5, 5)


def test_padding_reads_back_as_keras_spells_it():
    """Keras stores ``padding`` as given, lower case: ``layer.padding == "same"`` held in
    Keras and was silently False here ("SAME"; found porting TensorFlow's pix2pix)."""
    L = nn.layers
    for layer, want in ((L.Conv2D(3, 4, padding="same"), "same"),
                        (L.Conv2DTranspose(3, 4, padding="SAME"), "same"),
                        (L.Conv1D(2, 3, padding="causal"), "causal"),
                        (L.MaxPooling2D(padding="same"), "same"),
                        (L.DepthwiseConv2D(3), "valid"), (L.Conv3D(2, 3), "valid")):
        assert layer.padding == want, type(layer).__name__
