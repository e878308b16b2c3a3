"""What ember writes where its layers differ from Keras 3's, checked without Keras (the
exchange with Keras itself is ``test_keras_interop.py``): MultiHeadAttention's per-head
kernels in the file, Conv2DTranspose's output sizes and ``output_padding``, and Keras's
class names in a compile config.
"""

import io
import json
import zipfile

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember import nn

h5py = pytest.importorskip("h5py")  # ember-nn's dependency; the GPU machine has none

L = nn.layers
RNG = np.random.default_rng(5)
Q = RNG.standard_normal((4, 5, 6)).astype(np.float32)
V = RNG.standard_normal((4, 7, 3)).astype(np.float32)


def _attention_model(use_bias=True):
    q, v = nn.Input((5, 6)), nn.Input((7, 3))
    out = L.MultiHeadAttention(num_heads=2, key_dim=4, value_dim=5, output_shape=[8],
                               use_bias=use_bias)(q, v)
    return nn.Model([q, v], L.Dense(3)(L.GlobalAveragePooling1D()(out)))


def _attention_layer(model):
    return next(x for x in model.layers if isinstance(x, L.MultiHeadAttention))


def _h5_shapes(data: bytes) -> dict[str, tuple]:
    out = {}
    with h5py.File(io.BytesIO(data), "r") as f:
        f.visititems(lambda n, o: out.__setitem__(n, o.shape)
                     if isinstance(o, h5py.Dataset) else None)
    return out


def test_attention_weights_are_saved_in_keras_per_head_shapes(tmp_path):
    model = _attention_model()
    model.save_weights(tmp_path / "m.weights.h5")
    shapes = _h5_shapes((tmp_path / "m.weights.h5").read_bytes())
    mha = "layers/multi_head_attention"
    assert shapes[f"{mha}/query_dense/vars/0"] == (6, 2, 4)
    assert shapes[f"{mha}/query_dense/vars/1"] == (2, 4)
    assert shapes[f"{mha}/key_dense/vars/0"] == (3, 2, 4)
    assert shapes[f"{mha}/value_dense/vars/0"] == (3, 2, 5)
    assert shapes[f"{mha}/value_dense/vars/1"] == (2, 5)
    assert shapes[f"{mha}/output_dense/vars/0"] == (2, 5, 8)
    assert shapes[f"{mha}/output_dense/vars/1"] == (8,)
    # ember's own variables keep ember's shapes
    layer = _attention_layer(model)
    assert tuple(layer.query_dense.kernel.shape) == (6, 8)
    assert tuple(layer.output_dense.kernel.shape) == (10, 8)


def test_attention_per_head_arrays_are_embers_split_by_head(tmp_path):
    """Head ``h`` of Keras's query kernel is ember's columns ``h*K .. (h+1)*K``: the
    split ember's call makes of the projection."""
    model = _attention_model()
    model.save_weights(tmp_path / "m.weights.h5")
    layer = _attention_layer(model)
    with h5py.File(tmp_path / "m.weights.h5", "r") as f:
        saved = f["layers/multi_head_attention/query_dense/vars/0"][()]
        out = f["layers/multi_head_attention/output_dense/vars/0"][()]
    kernel = layer.query_dense.kernel.numpy()
    for h in range(2):
        assert_array_equal(saved[:, h, :], kernel[:, h * 4:(h + 1) * 4])
        assert_array_equal(out[h], layer.output_dense.kernel.numpy()[h * 5:(h + 1) * 5])


@pytest.mark.parametrize("use_bias", [True, False])
def test_attention_weights_load_back(tmp_path, use_bias):
    model = _attention_model(use_bias)
    model.save_weights(tmp_path / "m.weights.h5")
    twin = _attention_model(use_bias)
    twin.load_weights(tmp_path / "m.weights.h5")
    for a, b in zip(model.get_weights(), twin.get_weights()):
        assert_array_equal(a, b)
    assert_array_equal(twin.predict([Q, V], verbose=0), model.predict([Q, V], verbose=0))


def test_trained_attention_resumes_with_its_adam_moments(tmp_path):
    """Adam's moments of a per-head kernel are saved in the kernel's Keras shape too,
    and training goes on from the file bit for bit."""
    em.random.set_seed(1)
    model = _attention_model()
    model.compile(nn.optimizers.Adam(0.01), "mse")
    y = RNG.standard_normal((4, 3)).astype(np.float32)
    model.fit([Q, V], y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    model.save(tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as z:
        shapes = _h5_shapes(z.read("model.weights.h5"))
    adam = sorted(s for n, s in shapes.items() if n.startswith("optimizer/"))
    assert adam.count((6, 2, 4)) == 2 and adam.count((2, 5, 8)) == 2  # m and v of each
    loaded = nn.models.load_model(tmp_path / "m.keras")
    for m in (model, loaded):
        m.fit([Q, V], y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    for a, b in zip(model.get_weights(), loaded.get_weights()):
        assert_array_equal(a, b)


def test_a_file_of_other_attention_shapes_is_refused_by_name(tmp_path):
    model = _attention_model()
    model.save_weights(tmp_path / "m.weights.h5")
    q, v = nn.Input((5, 6)), nn.Input((7, 3))
    other = L.MultiHeadAttention(num_heads=4, key_dim=2, value_dim=5, output_shape=8)(q, v)
    other = nn.Model([q, v], L.Dense(3)(L.GlobalAveragePooling1D()(other)))
    with pytest.raises(ValueError, match=r"key_dense/vars/0 has shape \(3, 2, 4\), the "
                                         r"variable 'key/kernel:0' has \(3, 4, 2\)"):
        other.load_weights(tmp_path / "m.weights.h5")


@pytest.mark.parametrize("bad, match", [
    (dict(attention_axes=[2]), "attention_axes"), (dict(sliding_window=3), "sliding_window"),
    (dict(use_gate=True), "use_gate"), (dict(flash_attention=True), "flash_attention"),
    (dict(kernel_constraint="non_neg"), "kernel_constraint"),
    (dict(kernel_regularizer=nn.regularizers.OrthogonalRegularizer()), "kernel_regularizer"),
    (dict(output_shape=(2, 4)), "output_shape")])
def test_attention_refuses_keras_arguments_it_cannot_honour(bad, match):
    with pytest.raises(ValueError, match=match):
        L.MultiHeadAttention(2, 4, **bad)


def test_attention_takes_what_a_keras_config_names():
    layer = L.MultiHeadAttention(2, 4, attention_axes=[1], sliding_window=None,
                                 use_gate=False, output_shape=[6], seed=3,
                                 kernel_regularizer="l2")
    y = layer(em.constant(Q), em.constant(Q))
    assert y.shape == (4, 5, 6)
    assert len(layer.losses) == 4  # the query, key, value and output kernels' penalties


# --- Conv2DTranspose: Keras's output sizes --------------------------------------------

def _keras_size(n, k, s, d, padding, p):
    """Keras 3's formula (keras.src.backend.common.backend_utils), written out here."""
    k = (k - 1) * d + 1
    if padding == "valid":
        return (n - 1) * s + k + (max(k, s) - k if p is None else p)
    return n * s if p is None else (n - 1) * s + k % 2 + p


@pytest.mark.parametrize("k, s, d, padding, p", [
    (3, 2, 1, "valid", None), (2, 3, 1, "valid", None), (3, 2, 1, "valid", 1),
    (3, 2, 1, "same", None), (3, 2, 1, "same", 1), (3, 3, 1, "same", 2),
    (3, 1, 2, "same", None), (3, 1, 2, "valid", None), (1, 2, 1, "valid", 1)])
def test_conv_transpose_output_size_is_keras(k, s, d, padding, p):
    layer = L.Conv2DTranspose(2, k, strides=s, dilation_rate=d, padding=padding,
                              output_padding=p)
    y = layer(em.ones((1, 4, 5, 3)))
    assert y.shape == (1, _keras_size(4, k, s, d, padding, p),
                       _keras_size(5, k, s, d, padding, p), 2)


def test_conv_transpose_output_padding_adds_the_rows_a_stride_skips():
    """The extra row of ``output_padding=1`` is what no input reaches: the bias only."""
    layer = L.Conv2DTranspose(1, 3, strides=2, output_padding=1,
                              bias_initializer=nn.initializers.Constant(0.25))
    plain = L.Conv2DTranspose(1, 3, strides=2)
    x = em.constant(RNG.standard_normal((1, 3, 3, 2)).astype(np.float32))
    y = layer(x)
    plain(x)
    plain.set_weights([w.numpy() for w in layer.weights])
    want = plain(x).numpy()
    assert y.shape == (1, 8, 8, 1) and want.shape == (1, 7, 7, 1)
    assert_array_equal(y.numpy()[:, :7, :7], want)
    np.testing.assert_allclose(y.numpy()[:, 7, :], 0.25)
    np.testing.assert_allclose(y.numpy()[:, :, 7], 0.25)


@pytest.mark.parametrize("p", [2, (1, 2), -1, (1,), 1.5])
def test_conv_transpose_output_padding_not_below_the_stride_is_refused(p):
    with pytest.raises(ValueError, match="output_padding"):
        L.Conv2DTranspose(2, 3, strides=2, output_padding=p)


def test_conv_transpose_config_keeps_output_padding():
    layer = L.Conv2DTranspose(2, 3, strides=(2, 3), output_padding=(1, 2))
    config = layer.get_config()
    assert config["output_padding"] == (1, 2)
    again = L.Conv2DTranspose.from_config(json.loads(json.dumps(config)))
    assert again.output_padding == (1, 2)


# --- compile configs in Keras's names ---------------------------------------------------

def test_rmsprop_is_saved_under_keras_spelling(tmp_path):
    model = nn.Sequential([L.Dense(2, input_shape=(3,))])
    model.compile(nn.optimizers.RMSprop(0.01), "mse")
    model.save(tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as z:
        saved = json.loads(z.read("config.json"))["compile_config"]["optimizer"]
    assert saved["class_name"] == "RMSprop" and saved["module"] == "keras.optimizers"
    loaded = nn.models.load_model(tmp_path / "m.keras")
    assert isinstance(loaded.optimizer, nn.optimizers.RMSprop)
