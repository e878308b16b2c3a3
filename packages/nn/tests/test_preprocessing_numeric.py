"""Normalization, Rescaling, Discretization, CategoryEncoding and Hashing against Keras's
documented examples and numbers taken from Keras 3.15.1 (TensorFlow backend) itself."""

import numpy as np
import pytest

import ember.core as em
from ember import nn, tape
from ember.nn.layers import _fingerprint

L = nn.layers
AD = np.array([[0., 7., 4.], [2., 9., 6.], [0., 7., 4.], [2., 9., 6.]], np.float32)


# --- Normalization ------------------------------------------------------------------------
def test_normalization_keras_examples():
    layer = L.Normalization(axis=None)
    layer.adapt(np.array([1., 2., 3., 4., 5.], np.float32))
    np.testing.assert_allclose(layer(np.array([1., 2., 3.], np.float32)).numpy(),
                               [-1.4142135, -0.70710677, 0.], rtol=1e-6)
    layer = L.Normalization(axis=-1)
    layer.adapt(AD)
    np.testing.assert_allclose(layer(AD[:1]).numpy(), [[-1., -1., -1.]], rtol=1e-6)
    layer = L.Normalization(mean=3., variance=2.)
    np.testing.assert_allclose(layer(np.array([[1.], [2.], [3.]], np.float32)).numpy(),
                               [[-1.4142135], [-0.70710677], [0.]], rtol=1e-6)
    layer = L.Normalization(axis=-1, invert=True)
    layer.adapt(AD)
    np.testing.assert_allclose(layer(np.array([[1., 2., 3.]], np.float32)).numpy(),
                               [[2., 10., 8.]], rtol=1e-6)


def _batches(x, n):
    return [x[i:i + n] for i in range(0, len(x), n)]


@pytest.mark.parametrize("axis", [-1, None, (1, 2), 1])
def test_normalization_adapt_matches_numpy_however_the_data_comes(axis):
    x = np.random.default_rng(0).normal(3.0, 2.0, (37, 4, 5)).astype(np.float32)
    keep = () if axis is None else tuple(a % 3 for a in np.atleast_1d(axis))
    red = tuple(d for d in range(3) if d not in keep)
    mean, var = x.mean(axis=red, keepdims=True), x.var(axis=red, keepdims=True)
    want = (x - mean) / np.sqrt(var)
    for data in (x, em.constant(x), _batches(x, 8), iter(_batches(x, 10)),
                 [(b, np.zeros(len(b))) for b in _batches(x, 16)]):
        layer = L.Normalization(axis=axis)
        layer.adapt(data)
        np.testing.assert_allclose(layer(x).numpy(), want, rtol=1e-4, atol=1e-4)
        back = L.Normalization(axis=axis, invert=True, mean=np.squeeze(mean, red) if keep
                               else float(mean.ravel()[0]), variance=np.squeeze(var, red) if keep
                               else float(var.ravel()[0]))
        np.testing.assert_allclose(back(want).numpy(), x, rtol=1e-4, atol=1e-3)


def test_normalization_adapts_on_an_ember_dataset():
    data = pytest.importorskip("ember.data")
    x = np.random.default_rng(1).normal(size=(300, 3)).astype(np.float32) * [1, 2, 3]
    y = np.zeros(300, np.int64)
    for ds in (data.Dataset.from_tensor_slices((x, y)).batch(32),
               data.Dataset.from_tensor_slices(x)):  # unbatched vectors: read 128 at a time
        layer = L.Normalization()
        layer.adapt(ds)
        np.testing.assert_allclose(layer.adapt_mean.numpy(), x.mean(0), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(layer.adapt_variance.numpy(), x.var(0), rtol=1e-4)
    layer = L.Normalization()
    with pytest.raises(ValueError, match="steps"):
        layer.adapt(data.Dataset.from_tensor_slices(x).batch(8).repeat())
    layer.adapt(data.Dataset.from_tensor_slices(x).batch(100).repeat(), steps=1)
    np.testing.assert_allclose(layer.adapt_mean.numpy(), x[:100].mean(0), rtol=1e-5, atol=1e-6)


def test_normalization_has_gradients_and_keeps_its_statistics_out_of_training():
    layer = L.Normalization(mean=[1., 2.], variance=[4., 16.])
    x = em.constant(np.ones((3, 2), np.float32))
    with tape.GradientTape() as t:
        t.watch(x)
        y = layer(x)
    np.testing.assert_allclose(t.gradient(y, x).numpy(), [[0.5, 0.25]] * 3)
    adapted = L.Normalization()
    adapted.adapt(AD)
    assert adapted.trainable_variables == []
    assert sorted(adapted.variables_by_path()) == ["adapt_mean", "adapt_variance", "count"]


def test_normalization_errors_name_what_is_wrong():
    with pytest.raises(ValueError, match="mean and variance"):
        L.Normalization(mean=1.0)
    with pytest.raises(ValueError, match="axis"):
        L.Normalization(axis=3)(np.zeros((2, 3), np.float32))
    layer = L.Normalization()
    layer.adapt(AD)
    with pytest.raises(ValueError, match="built for inputs"):
        layer(np.zeros((2, 4), np.float32))
    with pytest.raises(ValueError, match="nothing to adapt"):
        L.Normalization(mean=1.0, variance=1.0).adapt(AD)


def test_normalization_config_round_trip():
    layer = L.Normalization(axis=(1, 2), mean=[[1., 2.]], variance=[[1., 4.]], invert=True)
    config = layer.get_config()
    assert config["axis"] == (1, 2) and config["invert"] and config["mean"] == [[1., 2.]]
    x = np.ones((2, 3, 2), np.float32)
    np.testing.assert_allclose(L.Normalization.from_config(config)(x).numpy(),
                               layer(x).numpy())


# --- Rescaling ----------------------------------------------------------------------------
def test_rescaling_scales_offsets_and_has_gradients():
    out = L.Rescaling(1 / 127.5, offset=-1)(np.array([[0, 255, 51]], np.uint8))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.numpy(), [[-1., 1., -0.6]], rtol=1e-6)
    per_channel = L.Rescaling([1., 2., 3.], offset=[0., 1., 0.])
    np.testing.assert_allclose(per_channel(np.ones((1, 2, 3), np.float32)).numpy(),
                               [[[1., 3., 3.]] * 2])
    x = em.constant(np.ones((2, 3), np.float32))
    with tape.GradientTape() as t:
        t.watch(x)
        y = L.Rescaling(0.5)(x)
    np.testing.assert_allclose(t.gradient(y, x).numpy(), 0.5)
    assert L.Rescaling(0.5).get_config()["scale"] == 0.5
    with pytest.raises(TypeError, match="scale"):
        L.Rescaling("big")


# --- Discretization -----------------------------------------------------------------------
DISC_X = np.array([[-1.5, 1.0, 3.4, .5], [0.0, 3.0, 1.3, 0.0]])


def test_discretization_keras_examples():
    out = L.Discretization(bin_boundaries=[0., 1., 2.])(DISC_X)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out.numpy(), [[0, 2, 3, 1], [1, 3, 2, 1]])
    layer = L.Discretization(num_bins=4, epsilon=0.01)
    layer.adapt(DISC_X)
    np.testing.assert_allclose(layer.bin_boundaries, [0.0, 0.5, 1.2999999523162842])
    np.testing.assert_array_equal(layer(DISC_X).numpy(), [[0, 2, 3, 2], [1, 3, 3, 1]])


def test_discretization_adapt_gives_keras_boundaries():
    big = np.random.default_rng(0).normal(size=(3000,)).astype("float32")
    layer = L.Discretization(num_bins=5, epsilon=0.01)
    layer.adapt(big)  # numbers from Keras 3.15.1
    np.testing.assert_allclose(layer.bin_boundaries, [-0.8735690712928772, -0.31480085849761963,
                                                      0.22266411781311035, 0.8061389327049255],
                               rtol=1e-6)
    layer = L.Discretization(num_bins=5, epsilon=0.05)
    layer.adapt([big[:1000], big[1000:]])
    np.testing.assert_allclose(layer.bin_boundaries, [-0.849605917930603, -0.3047996461391449,
                                                      0.23460015654563904, 0.8299272656440735],
                               rtol=1e-6)


def test_discretization_encodes_and_puts_nan_last():
    layer = L.Discretization(bin_boundaries=[0., 1.], output_mode="one_hot")
    np.testing.assert_array_equal(layer(np.array([-1., 0.5, 7., np.nan])).numpy(),
                                  np.eye(3)[[0, 1, 2, 2]])
    counts = L.Discretization(bin_boundaries=[0.], output_mode="count", dtype="float64")
    out = counts(np.array([[-1., 1., 2.]]))
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out.numpy(), [[1., 2.]])
    with pytest.raises(ValueError, match="num_bins or bin_boundaries"):
        L.Discretization(bin_boundaries=[0.], num_bins=3)
    with pytest.raises(ValueError, match="sparse"):
        L.Discretization(num_bins=3, sparse=True)
    adapted = L.Discretization(num_bins=4)
    adapted.adapt(DISC_X)
    again = L.Discretization.from_config(adapted.get_config())
    assert again.bin_boundaries == adapted.bin_boundaries


# --- CategoryEncoding ---------------------------------------------------------------------
def test_category_encoding_keras_examples():
    np.testing.assert_array_equal(
        L.CategoryEncoding(num_tokens=4, output_mode="one_hot")([3, 2, 0, 1]).numpy(),
        np.eye(4)[[3, 2, 0, 1]])
    np.testing.assert_array_equal(
        L.CategoryEncoding(num_tokens=4, output_mode="multi_hot")(
            [[0, 1], [0, 0], [1, 2], [3, 1]]).numpy(),
        [[1., 1., 0., 0.], [1., 0., 0., 0.], [0., 1., 1., 0.], [0., 1., 0., 1.]])
    cw = np.array([[.1, .2], [.1, .1], [.2, .3], [.4, .2]])
    np.testing.assert_allclose(
        L.CategoryEncoding(num_tokens=4, output_mode="count")(
            [[0, 1], [0, 0], [1, 2], [3, 1]], count_weights=cw).numpy(),
        [[.1, .2, 0, 0], [.2, 0, 0, 0], [0, .2, .3, 0], [0, .2, 0, .4]], rtol=1e-6)


def test_category_encoding_checks_its_inputs():
    layer = L.CategoryEncoding(num_tokens=3)
    with pytest.raises(ValueError, match="0 <= values < 3"):
        layer(em.constant(np.array([[0, 3]])))
    with pytest.raises(ValueError, match="count_weights"):
        layer([[0, 1]], count_weights=[[1., 1.]])
    np.testing.assert_array_equal(L.CategoryEncoding(3, output_mode="binary")([[2, 2]]).numpy(),
                                  [[0., 0., 1.]])
    assert L.CategoryEncoding(3).get_config()["num_tokens"] == 3


# --- Hashing ------------------------------------------------------------------------------
# FarmHash64 and SipHash-2-4 (key 133, 137) of the first n bytes of a sentence, checked
# against TensorFlow 2.21's to_hash_bucket_fast/strong when written (every code path:
# lengths 0-16, 17-32, 33-64 and the 64-byte loop)
TEXT = ("The quick brown fox jumps over the lazy dog. " * 5).encode()
FARM = {
    0: 0x9ae16a3b2f90404f,
    1: 0x12f77cd62637857a,
    2: 0x5e667204f36de5f3,
    3: 0x85887769ddcc73fd,
    4: 0xf4ed8b2e41e836a5,
    7: 0xfb3b4353192e2b87,
    8: 0x46d0ffb3ee9d8c07,
    9: 0x4cd45d9a4a412853,
    16: 0x3bf6bd3bebd31655,
    17: 0xc7a32da958c02dbd,
    31: 0x839ab5037d8b6353,
    32: 0xb65964dee7761262,
    33: 0xf25fea09db06b3d6,
    63: 0xf2d8dc681d61d922,
    64: 0x8cc2288614b078a0,
    65: 0x739d9bc2566b1cbc,
    127: 0xccc0a6a5c0f55e8b,
    128: 0x5ae1aa6fecfd621a,
    129: 0xfb199fbf9a28aad2,
    200: 0x08e4fbc7bf85caf9,
}
SIP = {
    0: 0x4464e36d49835ad4,
    1: 0x75ef0a8d1ab8e2a2,
    2: 0x4f46340f8070aa02,
    3: 0x1e52d4159664a8c4,
    4: 0xd250609c95f7c78d,
    7: 0xd173f5567243a390,
    8: 0xdcbf9c3d6401c45b,
    9: 0x2af8c3561546cab3,
    16: 0x5528fd7e407c250e,
    17: 0xcf448f8bf08f1c3e,
    31: 0x204d7db943c99108,
    32: 0x12e941fa08f7fa7c,
    33: 0x0e049acdcbee3bc2,
    63: 0xa7e66dbe1df57ef6,
    64: 0xd27a5675e2f4bd40,
    65: 0x0fae460b43fc9452,
    127: 0x71500ca7713122ba,
    128: 0x2bb4aaaa4fd02b69,
    129: 0x07241871174a9da2,
    200: 0xba7a969b999edd86,
}


def test_fingerprints_match_tensorflow():
    for n, want in FARM.items():
        assert _fingerprint.fingerprint64(TEXT[:n]) == want, n
    for n, want in SIP.items():
        assert _fingerprint.siphash24(TEXT[:n], 133, 137) == want, n
    # the SipHash paper's test vector: key 00..0f, message 00..0e
    key = int.from_bytes(bytes(range(8)), "little"), int.from_bytes(bytes(range(8, 16)), "little")
    assert _fingerprint.siphash24(bytes(range(15)), *key) == 0xA129CA6149BE45E5


INP = [["A"], ["B"], ["C"], ["D"], ["E"]]


def test_hashing_keras_examples_and_tests():
    np.testing.assert_array_equal(L.Hashing(num_bins=3)(INP).numpy(), [[1], [0], [1], [1], [2]])
    np.testing.assert_array_equal(L.Hashing(num_bins=3, mask_value="")(
        [["A"], ["B"], [""], ["C"], ["D"]]).numpy(), [[1], [1], [0], [2], [2]])
    np.testing.assert_array_equal(L.Hashing(num_bins=3, salt=[133, 137])(INP).numpy(),
                                  [[1], [2], [1], [0], [2]])
    np.testing.assert_array_equal(L.Hashing(num_bins=3, salt=133)(INP).numpy(),
                                  [[0], [0], [2], [1], [0]])
    words = np.array([["omar"], ["stringer"], ["marlo"], ["wire"], ["skywalker"]])
    np.testing.assert_array_equal(L.Hashing(num_bins=2)(words).numpy(), [[0], [0], [1], [0], [0]])
    np.testing.assert_array_equal(L.Hashing(num_bins=2, salt=[133, 137])(words).numpy(),
                                  [[0], [1], [0], [1], [0]])
    np.testing.assert_array_equal(L.Hashing(num_bins=2, salt=[211, 137])(words).numpy(),
                                  [[1], [0], [1], [0], [1]])
    ints = np.asarray([[0], [1], [2], [3], [4]])
    np.testing.assert_array_equal(L.Hashing(num_bins=3)(ints).numpy(), [[1], [0], [1], [0], [2]])
    np.testing.assert_array_equal(L.Hashing(num_bins=3, salt=[133, 137])(ints).numpy(),
                                  [[1], [1], [2], [0], [1]])


def test_hashing_numbers_and_encodings_as_keras():
    # from Keras 3.15.1: integers (tensors read from their device) and floats (truncated)
    ints = em.constant(np.array([[0, 1, 2, 3, 4, -7, 123456789]]))
    out = L.Hashing(num_bins=7)(ints)
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out.numpy(), [[2, 5, 5, 2, 6, 2, 3]])
    np.testing.assert_array_equal(L.Hashing(num_bins=7)(np.array([[0.5, 1.9, -2.7]])).numpy(),
                                  [[2, 5, 0]])
    np.testing.assert_array_equal(L.Hashing(num_bins=5, output_mode="one_hot")(
        [["A"], ["B"]]).numpy(), [[0, 0, 0, 0, 1], [0, 0, 0, 1, 0]])
    np.testing.assert_array_equal(L.Hashing(num_bins=5, output_mode="multi_hot")(
        [["A", "B"], ["C", "C"]]).numpy(), [[0, 0, 0, 1, 1], [0, 0, 1, 0, 0]])
    assert L.Hashing(num_bins=3, dtype="int32")(INP).dtype == np.int32


def test_hashing_rejects_what_it_cannot_honour():
    with pytest.raises(ValueError, match="salt"):
        L.Hashing(num_bins=2, salt="string")
    with pytest.raises(ValueError, match="salt"):
        L.Hashing(num_bins=2, salt=[1])
    with pytest.raises(ValueError, match="num_bins"):
        L.Hashing(num_bins=0)
    with pytest.raises(ValueError, match="sparse"):
        L.Hashing(num_bins=2, output_mode="multi_hot", sparse=True)
    with pytest.raises(ValueError, match="dtype"):
        L.Hashing(num_bins=2, dtype="float32")
    config = L.Hashing(num_bins=3, salt=5).get_config()
    assert config["salt"] == [5, 5] and config["num_bins"] == 3
