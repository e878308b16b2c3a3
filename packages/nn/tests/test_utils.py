"""nn.utils: Keras 3's helpers with Keras's arguments, defaults and documented examples;
tensors stay on their device; what Keras would do silently wrong is refused by name."""

from __future__ import annotations

import random
import sys
import types

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import ember.core as em
from ember import nn

U = nn.utils


# --- to_categorical ----------------------------------------------------------------------

def test_to_categorical_keras_example():
    a = U.to_categorical([0, 1, 2, 3], num_classes=4)
    assert_array_equal(a, np.eye(4))
    assert a.dtype == np.float32  # tf.keras's (Keras 3's numpy path gives float64)
    b = np.array([.9, .04, .03, .03, .3, .45, .15, .13, .04, .01, .94, .05,
                  .12, .21, .5, .17]).reshape(4, 4)
    loss = nn.losses.categorical_crossentropy(a, b.astype(np.float32))
    assert_allclose(np.around(loss.numpy(), 5), [0.10536, 0.82807, 0.1011, 1.77196],
                    atol=1e-5)


def test_to_categorical_shapes_and_inferred_classes():
    assert U.to_categorical(np.array([[1], [0]])).shape == (2, 2)  # (N, 1) -> (N, C)
    assert U.to_categorical(np.array([[0, 2], [1, 0]])).shape == (2, 2, 3)
    assert_array_equal(U.to_categorical([2.0, 0.0]), [[0, 0, 1], [1, 0, 0]])


def test_to_categorical_of_a_tensor_stays_on_its_device(backend):
    ids = em.constant(np.array([[2], [0], [1]]))
    got = U.to_categorical(ids, num_classes=4)
    assert isinstance(got, em.Tensor) and got.device == ids.device
    assert got.dtype == em.float32
    assert_array_equal(got.numpy(), np.eye(4)[[2, 0, 1]])
    assert_array_equal(U.to_categorical(em.constant([1.0, 3.0])).numpy(), np.eye(4)[[1, 3]])
    with pytest.raises(ValueError, match=r"to_categorical: class ids must be in \[0.0, 2.0\]"):
        U.to_categorical(em.constant([0, 3]), num_classes=3).numpy()


@pytest.mark.parametrize("x,kw,match", [
    ([0, -1], {}, r"class ids must be in \[0, "), ([0, 4], {"num_classes": 3}, "must be in"),
    ([0.5], {}, "non-integer"), ([], {}, "empty"), ([0], {"num_classes": 0}, "num_classes"),
    ([0], {"num_classes": True}, "num_classes"), (["a"], {}, "dtype")])
def test_to_categorical_refuses_by_name(x, kw, match):
    with pytest.raises(ValueError, match=match):
        U.to_categorical(x, **kw)


# --- normalize ---------------------------------------------------------------------------

X = np.array([[3.0, -4.0, 0.0], [0.0, 0.0, 0.0], [1.0, 2.0, 2.0]], np.float32)


@pytest.mark.parametrize("order", [1, 2, 3, np.inf, -np.inf, 0])
@pytest.mark.parametrize("axis", [-1, 0])
def test_normalize_divides_by_the_vector_norm(order, axis, backend):
    norm = np.linalg.norm(X, order, axis=axis, keepdims=True)
    want = X / np.where(norm == 0, 1, norm)
    got = U.normalize(X, axis=axis, order=order)
    assert_allclose(got, want, rtol=1e-6)
    assert got.dtype == np.float32
    t = em.constant(X)
    on_device = U.normalize(t, axis=axis, order=order)
    assert isinstance(on_device, em.Tensor) and on_device.device == t.device
    assert_allclose(on_device.numpy(), want, rtol=1e-5)


def test_normalize_defaults_are_l2_over_the_last_axis():
    got = U.normalize(X)
    assert_allclose(np.linalg.norm(got[[0, 2]], axis=-1), [1.0, 1.0], rtol=1e-6)
    assert_array_equal(got[1], 0.0)  # a zero row stays zero, no NaN
    assert U.normalize(np.array([3, 4])).dtype == np.float64


@pytest.mark.parametrize("kw,match", [({"axis": None}, "axis must be an int"),
                                      ({"axis": 2}, "out of range"),
                                      ({"order": -1}, "order must be"),
                                      ({"order": "fro"}, "order must be")])
def test_normalize_refuses_by_name(kw, match):
    with pytest.raises(ValueError, match=match):
        U.normalize(X, **kw)


# --- pad_sequences -----------------------------------------------------------------------

SEQ = [[1], [2, 3], [4, 5, 6]]


def test_pad_sequences_keras_examples():
    got = U.pad_sequences(SEQ)
    assert got.dtype == np.int32
    assert_array_equal(got, [[0, 0, 1], [0, 2, 3], [4, 5, 6]])
    assert_array_equal(U.pad_sequences(SEQ, value=-1), [[-1, -1, 1], [-1, 2, 3], [4, 5, 6]])
    assert_array_equal(U.pad_sequences(SEQ, padding="post"), [[1, 0, 0], [2, 3, 0], [4, 5, 6]])
    assert_array_equal(U.pad_sequences(SEQ, maxlen=2), [[0, 1], [2, 3], [5, 6]])


def test_pad_sequences_truncating_items_and_edges():
    assert_array_equal(U.pad_sequences(SEQ, maxlen=2, truncating="post"),
                       [[0, 1], [2, 3], [4, 5]])
    assert_array_equal(U.pad_sequences(SEQ, maxlen=4, padding="post", dtype="float32",
                                       value=0.5)[0], [1, 0.5, 0.5, 0.5])
    items = U.pad_sequences([np.ones((1, 2)), np.zeros((3, 2))], dtype="float32")
    assert items.shape == (2, 3, 2) and items[0, 0].tolist() == [0, 0]
    assert U.pad_sequences(SEQ, maxlen=0).shape == (3, 0)
    assert U.pad_sequences([]).shape == (0, 0)
    assert_array_equal(U.pad_sequences([[], [7]]), [[0], [7]])
    words = U.pad_sequences([["a"], ["b", "c"]], dtype=object, value="<pad>")
    assert words.tolist() == [["<pad>", "a"], ["b", "c"]]


@pytest.mark.parametrize("args,kw,match", [
    (SEQ, {"padding": "middle"}, 'padding must be "pre" or "post"'),
    (SEQ, {"truncating": "both"}, 'truncating must be "pre" or "post"'),
    (SEQ, {"value": 0.5}, r"int32 cannot hold value=0.5"),
    (SEQ, {"dtype": "uint8", "value": -1}, "uint8 cannot hold value=-1"),
    ([[1.5, 2.0]], {}, "cannot hold the values of sequence 0"),
    ([[2 ** 40]], {}, "cannot hold the values of sequence 0"),
    (SEQ, {"value": "x"}, "string value"), (SEQ, {"maxlen": -1}, "maxlen"),
    ([[1], 2], {}, "item 1 is int"), (5, {}, "list of sequences"),
    ([np.ones((1, 2)), np.ones((1, 3))], {}, "sequence 1 has items of shape")])
def test_pad_sequences_refuses_by_name(args, kw, match):
    with pytest.raises(ValueError, match=match):
        U.pad_sequences(args, **kw)


# --- set_random_seed ---------------------------------------------------------------------

def _draws():
    layer = nn.layers.Dense(3)
    layer(em.zeros((1, 2)))
    return (random.random(), float(np.random.random()), em.random.uniform([2]).numpy(),
            layer.kernel.numpy())


def test_set_random_seed_repeats_python_numpy_and_ember_draws(backend):
    U.set_random_seed(11)
    first = _draws()
    U.set_random_seed(11)
    again = _draws()
    U.set_random_seed(12)
    other = _draws()
    for a, b, c in zip(first, again, other):
        assert_array_equal(a, b)
        assert not np.array_equal(a, c)


@pytest.mark.parametrize("seed", [True, -1, 2 ** 32, 1.5, "3"])
def test_set_random_seed_refuses_by_name(seed):
    with pytest.raises(ValueError, match="seed must be a whole number"):
        U.set_random_seed(seed)


# --- split_dataset -----------------------------------------------------------------------

def test_split_dataset_keras_example():
    data = np.random.default_rng(0).random((1000, 4))
    left, right = U.split_dataset(data, left_size=0.8)
    assert left.shape == (800, 4) and right.shape == (200, 4)
    assert_array_equal(np.concatenate([left, right]), data)  # in order without shuffle


def test_split_dataset_sizes_as_keras_reads_them():
    x, y = np.arange(20).reshape(10, 2), np.arange(10)
    (lx, ly), (rx, ry) = U.split_dataset((x, y), right_size=3)
    assert ly.tolist() == list(range(7)) and ry.tolist() == [7, 8, 9]
    left, right = U.split_dataset([x, y], left_size=2, right_size=0.3)  # the middle dropped
    assert isinstance(left, list) and left[1].tolist() == [0, 1]
    assert right[1].tolist() == [7, 8, 9]
    _, right = U.split_dataset(y, left_size=0.25)  # round(2.5) == 2, Python's rounding
    assert right.tolist() == list(range(2, 10))


def test_split_dataset_shuffles_as_keras_with_the_seed_and_keeps_pairs():
    x, y = np.arange(20).reshape(10, 2), np.arange(10)
    (lx, ly), (rx, ry) = U.split_dataset((x, y), left_size=6, shuffle=True, seed=5)
    order = list(range(10))
    random.Random(5).shuffle(order)  # Keras: random.seed(5); random.shuffle(samples)
    assert ly.tolist() + ry.tolist() == order
    assert_array_equal(lx[:, 0] // 2, ly)  # each x stays with its y
    again = U.split_dataset((x, y), left_size=6, shuffle=True, seed=5)
    assert_array_equal(again[0][1], ly)


def test_split_dataset_of_tensors_stays_on_their_device(backend):
    x = em.constant(np.arange(12, dtype=np.float32).reshape(6, 2))
    left, right = U.split_dataset(x, left_size=4, shuffle=True, seed=1)
    assert isinstance(left, em.Tensor) and left.device == x.device
    got = np.concatenate([left.numpy(), right.numpy()])
    assert sorted(got[:, 0].tolist()) == list(range(0, 12, 2))


class _Dataset:
    """What split_dataset reads of an ember.data Dataset (the real one is split in
    integration_tests/test_nn_utils_data.py): element_spec, cardinality(),
    as_numpy_iterator() and its class's from_tensor_slices."""

    def __init__(self, elements, spec, cardinality=None):
        self.elements, self.element_spec = elements, spec
        self._card = len(elements) if cardinality is None else cardinality

    def cardinality(self):
        return self._card

    def as_numpy_iterator(self):
        return iter(self.elements)

    @staticmethod
    def from_tensor_slices(t):
        if isinstance(t, dict):
            rows = [dict(zip(t, vals)) for vals in zip(*t.values())]
        else:
            rows = list(zip(*t)) if isinstance(t, tuple) else list(t)
        return _Dataset(rows, None)


class _Spec:
    def __init__(self, shape):
        self.shape = shape


def test_split_dataset_of_a_dataset_gives_two_datasets_of_its_class():
    rows = [(np.full(2, i), np.int64(i)) for i in range(5)]
    left, right = U.split_dataset(_Dataset(rows, (_Spec((2,)), _Spec(()))), left_size=0.6)
    assert isinstance(left, _Dataset) and len(left.elements) == 3
    assert [int(e[1]) for e in right.elements] == [3, 4]
    named = _Dataset([{"a": np.float32(i)} for i in range(4)], {"a": _Spec(())})
    left, right = U.split_dataset(named, right_size=1, shuffle=True, seed=0)
    order = list(range(4))
    random.Random(0).shuffle(order)
    assert [float(e["a"]) for e in left.elements + right.elements] == order


def test_split_dataset_refuses_batched_or_infinite_datasets_and_bad_sizes():
    batched = _Dataset([np.zeros((2, 3))], _Spec((None, 3)))
    with pytest.raises(ValueError, match="looks batched"):
        U.split_dataset(batched, left_size=0.5)
    with pytest.raises(ValueError, match="infinite"):
        U.split_dataset(_Dataset([np.zeros(3)], _Spec((3,)), cardinality=-1), left_size=0.5)
    y = np.arange(10)
    for kw, err, match in (({}, ValueError, "give left_size or right_size"),
                           ({"left_size": 10}, ValueError, r"count in \(0, 10\)"),
                           ({"left_size": 1.0}, ValueError, r"fraction in \(0, 1\)"),
                           ({"left_size": 0.01}, ValueError, "left part empty"),
                           ({"left_size": 6, "right_size": 5}, ValueError, "more than"),
                           ({"left_size": "5"}, TypeError, "left_size must be")):
        with pytest.raises(err, match=match):
            U.split_dataset(y, **kw)
    with pytest.raises(ValueError, match="different numbers of examples"):
        U.split_dataset((y, y[:3]), left_size=0.5)
    with pytest.raises(TypeError, match="dataset must be"):
        U.split_dataset({"x": y}, left_size=0.5)


# --- images ------------------------------------------------------------------------------

def test_img_to_array_needs_numpy_alone():
    grey = np.arange(6, dtype=np.uint8).reshape(2, 3)
    got = U.img_to_array(grey)
    assert got.shape == (2, 3, 1) and got.dtype == np.float32
    assert U.img_to_array(grey, data_format="channels_first").shape == (1, 2, 3)
    rgb = np.zeros((2, 3, 3))
    assert U.img_to_array(rgb, data_format="channels_first", dtype="uint8").shape == (3, 2, 3)
    with pytest.raises(ValueError, match="2 or 3 axes"):
        U.img_to_array(np.zeros(3))
    with pytest.raises(ValueError, match="data_format"):
        U.img_to_array(grey, data_format="NHWC")


@pytest.fixture
def fake_pil(monkeypatch):
    """A stand-in for Pillow's ``Image.fromarray`` (Pillow is no dependency of ember): it
    records the pixels and mode array_to_img hands over."""
    made = []

    class Image:
        @staticmethod
        def fromarray(pixels, mode):
            made.append((pixels, mode))
            return pixels

    monkeypatch.setitem(sys.modules, "PIL", types.SimpleNamespace(Image=Image))
    return made


def test_array_to_img_scales_to_bytes_as_keras(fake_pil):
    img = np.random.default_rng(0).random((10, 8, 3))  # Keras's example, smaller
    U.array_to_img(img)
    pixels, mode = fake_pil[-1]
    assert mode == "RGB" and pixels.dtype == np.uint8 and pixels.shape == (10, 8, 3)
    want = ((img - img.min()) / (img.max() - img.min()) * 255).astype(np.float32)
    assert_array_equal(pixels, want.astype(np.uint8))
    U.array_to_img(np.full((2, 2, 4), 7.0), scale=False)
    assert fake_pil[-1][1] == "RGBA" and fake_pil[-1][0].max() == 7
    U.array_to_img(np.ones((1, 2, 2)), data_format="channels_first")
    assert fake_pil[-1][1] == "L" and fake_pil[-1][0].shape == (2, 2)
    U.array_to_img(np.full((2, 2, 1), 300.0), scale=False)  # grey above 255: 32-bit ints
    assert fake_pil[-1][1] == "I" and fake_pil[-1][0].dtype == np.int32
    with pytest.raises(ValueError, match="1, 3 or 4 channels"):
        U.array_to_img(np.ones((2, 2, 2)))


def test_the_pil_helpers_name_pillow_when_it_is_missing(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "PIL", None)  # as when Pillow is not installed
    for call in (lambda: U.array_to_img(np.ones((2, 2, 3))),
                 lambda: U.save_img(tmp_path / "a.png", np.ones((2, 2, 3))),
                 lambda: U.load_img(tmp_path / "a.png")):
        with pytest.raises(ImportError, match="needs Pillow.*pip install Pillow"):
            call()
    assert not (tmp_path / "a.png").exists()
    # arguments are checked before Pillow is needed
    with pytest.raises(ValueError, match="color_mode"):
        U.load_img(tmp_path / "a.png", color_mode="cmyk")
    with pytest.raises(ValueError, match="interpolation"):
        U.load_img(tmp_path / "a.png", interpolation="cubic")
    with pytest.raises(ValueError, match="file_format"):
        U.save_img(tmp_path / "noext", np.ones((2, 2, 3)))


def test_to_categorical_takes_tf_keras_dtype_argument():
    # tf.keras's to_categorical(y, num_classes, dtype="float32"); Keras 3 dropped the
    # argument and returns float64 for arrays: a promotion nobody asked for
    assert nn.utils.to_categorical([1, 3], 4).dtype == np.float32  # tf.keras's default
    assert nn.utils.to_categorical([1, 3], 4, dtype="float64").dtype == np.float64
    out = nn.utils.to_categorical([1, 3], 4, dtype="float32")
    assert out.dtype == np.float32 and out.tolist() == [[0, 1, 0, 0], [0, 0, 0, 1]]
    t = nn.utils.to_categorical(em.constant([2]), 3, dtype="int32")
    assert t.dtype == np.int32 and t.numpy().tolist() == [[0, 0, 1]]
