"""The image preprocessing layers against Keras's numbers and a numpy reference, on every
test backend (the random ones too: their draws and resampling are ember ops)."""

import json
import pathlib

import numpy as np
import pytest

import ember.core as em
from ember import nn, tape
from ember.nn.layers import _image_ops

L = nn.layers
GOLDEN = json.loads((pathlib.Path(__file__).parent / "data" / "keras_resizing.json").read_text())
X = ((np.arange(35, dtype=np.float32).reshape(1, 5, 7, 1) ** 1.5) % 17).astype(np.float32)


def _imgs(n=3, h=6, w=6, c=2, seed=0):
    return np.random.default_rng(seed).uniform(0, 255, (n, h, w, c)).astype(np.float32)


# --- Resizing and CenterCrop against Keras 3 (values in tests/data, from Keras itself) ---
KERAS_CASES = {
    "bilinear_up": lambda: L.Resizing(8, 9), "bilinear_down": lambda: L.Resizing(3, 4),
    "bilinear_aa": lambda: L.Resizing(2, 3, antialias=True),
    "nearest_up": lambda: L.Resizing(8, 11, interpolation="nearest"),
    "nearest_down": lambda: L.Resizing(3, 4, interpolation="nearest"),
    "lanczos3": lambda: L.Resizing(4, 9, interpolation="lanczos3"),
    "lanczos5_aa": lambda: L.Resizing(3, 3, interpolation="lanczos5", antialias=True),
    "crop_aspect": lambda: L.Resizing(4, 4, crop_to_aspect_ratio=True),
    "pad_aspect": lambda: L.Resizing(6, 3, pad_to_aspect_ratio=True, fill_value=2.0),
    "center_up": lambda: L.CenterCrop(6, 4), "center_mixed": lambda: L.CenterCrop(3, 8),
}


@pytest.mark.parametrize("case", sorted(KERAS_CASES))
def test_resizing_matches_keras(case):
    out = KERAS_CASES[case]()(X).numpy()[0, :, :, 0]
    np.testing.assert_allclose(out, np.array(GOLDEN["cases"][case]), atol=2e-5)


def test_resizing_keeps_integer_images_integer_as_keras():
    xi = (X * 10).astype(np.uint8)
    out = L.Resizing(4, 5)(xi)
    assert out.dtype == np.uint8
    got, want = out.numpy()[0, :, :, 0], np.array(GOLDEN["cases"]["uint8_bilinear"])
    if out.device == "/cpu:0":
        np.testing.assert_array_equal(got, want)
        return
    # On a GPU the float32 sums round otherwise: a pixel whose exact value is a near tie
    # (28.499999999999996 here, 28.5 in float32 on the CPU, 28.500002 on the H200) may
    # round either way. Every other pixel is Keras's.
    # (em.image.resize keeps float64, and tests/test_image_resize.py checks it)
    exact = em.image.resize(em.constant(xi[0].astype(np.float64)), (4, 5)).numpy()[:, :, 0]
    tie = np.abs(exact - np.floor(exact) - 0.5) < 1e-4
    assert tie.sum() == 1  # the test still checks the other 19
    np.testing.assert_array_equal(got[~tie], want[~tie])
    assert np.all(np.abs(got[tie].astype(int) - want[tie]) <= 1)


def test_bilinear_resizing_matches_torch_and_has_gradients():
    torch = pytest.importorskip("torch")
    x = _imgs(2, 5, 7, 3)
    want = torch.nn.functional.interpolate(torch.tensor(x).permute(0, 3, 1, 2), size=(9, 4),
                                           mode="bilinear", align_corners=False)
    xt = em.constant(x)
    with tape.GradientTape() as t:
        t.watch(xt)
        y = L.Resizing(9, 4)(xt)
    np.testing.assert_allclose(y.numpy(), want.permute(0, 2, 3, 1).numpy(), rtol=1e-5, atol=1e-4)
    g = t.gradient(y, xt).numpy()  # every output spreads weight 1 over its inputs
    np.testing.assert_allclose(g.sum(), 2 * 9 * 4 * 3, rtol=1e-5)


def test_bicubic_and_lanczos_keep_a_constant_image_and_channels_first_agrees():
    const = np.full((2, 5, 6, 3), 7.0, np.float32)
    for method in ("bicubic", "lanczos3", "lanczos5"):
        np.testing.assert_allclose(L.Resizing(8, 3, interpolation=method)(const).numpy(), 7.0,
                                   rtol=1e-5)
    x = _imgs(2, 5, 6, 3)
    last = L.Resizing(4, 9, interpolation="bicubic")(x).numpy()
    first = L.Resizing(4, 9, interpolation="bicubic", data_format="channels_first")(
        np.moveaxis(x, -1, 1)).numpy()
    np.testing.assert_allclose(np.moveaxis(first, 1, -1), last, rtol=1e-5, atol=1e-4)


def test_center_crop_takes_the_middle():
    x = _imgs(2, 7, 8, 1)
    np.testing.assert_array_equal(L.CenterCrop(3, 4)(x).numpy(), x[:, 2:5, 2:6])
    assert L.CenterCrop(3, 4)(x[0]).shape == (3, 4, 1)  # one image


def test_image_layers_reject_bad_arguments_by_name():
    with pytest.raises(ValueError, match="interpolation"):
        L.Resizing(2, 2, interpolation="box")
    with pytest.raises(ValueError, match="fill_mode"):
        L.RandomRotation(0.1, fill_mode="mirror")
    with pytest.raises(ValueError, match="interpolation"):
        L.RandomZoom(0.1, interpolation="bicubic")
    with pytest.raises(ValueError, match="mode"):
        L.RandomFlip("diagonal")
    with pytest.raises(ValueError, match="factor"):
        L.RandomRotation(1.5)
    with pytest.raises(ValueError, match="height_factor"):
        L.RandomZoom(-1.0)
    with pytest.raises(ValueError, match="data_format"):
        L.RandomFlip(data_format="NHWC")
    with pytest.raises(ValueError, match="rank 4"):
        L.RandomFlip()(np.zeros((2, 3), np.float32), training=True)


# --- affine resampling against a numpy reference of Keras's NumPy backend ------------------
_PAD = {"reflect": "symmetric", "wrap": "wrap", "nearest": "edge", "constant": "constant"}


def _ref_affine(img, t, interpolation, fill_mode, fill_value):
    """Keras's NumPy backend: pad the image by its fill mode, read the points in the padded
    frame (bilinear, or the nearest by floor(x + 0.5)); checked against scipy's
    map_coordinates once when written."""
    h, w = img.shape[:2]
    ys, xs = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    sx, sy = t[0] * xs + t[1] * ys + t[2], t[3] * xs + t[4] * ys + t[5]
    p = int(max(np.abs(sx).max(), np.abs(sy).max(), h, w)) + 2
    kw = {"constant_values": fill_value} if fill_mode == "constant" else {}
    padded = np.pad(img, [(p, p), (p, p), (0, 0)], mode=_PAD[fill_mode], **kw)
    sx, sy = sx + p, sy + p
    if interpolation == "nearest":
        return padded[np.floor(sy + 0.5).astype(int), np.floor(sx + 0.5).astype(int)]
    x0, y0 = np.floor(sx).astype(int), np.floor(sy).astype(int)
    fx, fy = (sx - x0)[..., None], (sy - y0)[..., None]
    return ((padded[y0, x0] * (1 - fx) + padded[y0, x0 + 1] * fx) * (1 - fy)
            + (padded[y0 + 1, x0] * (1 - fx) + padded[y0 + 1, x0 + 1] * fx) * fy)


@pytest.mark.parametrize("fill_mode", ["reflect", "wrap", "nearest", "constant"])
@pytest.mark.parametrize("interpolation", ["bilinear", "nearest"])
def test_affine_transform_matches_the_numpy_reference(fill_mode, interpolation):
    rng = np.random.default_rng(3)
    imgs = rng.uniform(0, 1, (4, 7, 9, 2)).astype(np.float32)
    ts = []
    for _ in range(4):
        ang, sc = rng.uniform(-3, 3), rng.uniform(0.5, 1.8)
        ts.append([sc * np.cos(ang), -sc * np.sin(ang), rng.uniform(-6, 6),
                   sc * np.sin(ang), sc * np.cos(ang), rng.uniform(-6, 6), 0, 0])
    ts = np.array(ts, np.float32)
    got = _image_ops.affine_transform(em.constant(imgs), em.constant(ts), interpolation,
                                      fill_mode, 0.3).numpy()
    want = np.stack([_ref_affine(imgs[i].astype(np.float64), ts[i].astype(np.float64),
                                 interpolation, fill_mode, 0.3) for i in range(4)])
    np.testing.assert_allclose(got, want, atol=1e-4)


def test_rotation_by_a_quarter_turn_is_rot90():
    x = _imgs(2, 5, 5, 2)
    out = L.RandomRotation((0.25, 0.25))(x, training=True).numpy()
    np.testing.assert_allclose(out, np.rot90(x, 1, axes=(1, 2)), atol=1e-3)


def test_translation_by_a_fixed_fraction_shifts_and_fills():
    x = _imgs(2, 8, 4, 1)
    layer = L.RandomTranslation((0.25, 0.25), (0.0, 0.0), fill_mode="constant", fill_value=-1)
    out = layer(x, training=True).numpy()
    np.testing.assert_allclose(out[:, 2:], x[:, :6], atol=1e-3)  # moved down two rows
    np.testing.assert_array_equal(out[:, :2], -1.0)


def test_zoom_by_a_fixed_factor_matches_the_reference():
    x = _imgs(1, 6, 8, 1)
    out = L.RandomZoom((0.5, 0.5), (-0.25, -0.25), fill_mode="wrap")(x, training=True).numpy()
    zx, zy = 0.75, 1.5
    t = [zx, 0, 3.5 * (1 - zx), 0, zy, 2.5 * (1 - zy)]
    np.testing.assert_allclose(out[0], _ref_affine(x[0], t, "bilinear", "wrap", 0.0), atol=1e-3)


# --- the random layers: identity unless training, one draw per image, seeded --------------
RANDOM = {
    "flip": lambda **k: L.RandomFlip(**k), "rotation": lambda **k: L.RandomRotation(0.3, **k),
    "zoom": lambda **k: L.RandomZoom(0.4, 0.3, **k),
    "translation": lambda **k: L.RandomTranslation(0.3, 0.3, **k),
    "contrast": lambda **k: L.RandomContrast(0.5, **k), "crop": lambda **k: L.RandomCrop(4, 5, **k),
}


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_layer_is_identity_unless_training(name):
    x = _imgs(8)  # a flip leaves all of 8 images alone with probability 1/256
    layer = RANDOM[name]()
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    model = nn.Sequential([layer])  # predict runs its layers with training=False
    np.testing.assert_array_equal(model.predict(x, verbose=0), x)
    for training in (True, None):  # None: Keras 3's default for these layers is True
        assert not np.allclose(layer(x, training=training).numpy()[:, :4, :5], x[:, :4, :5])


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_layer_is_repeatable_under_a_seed(name):
    x = _imgs(8)  # a flip draws two bits an image: with 3, two calls agree once in 64
    outs = []
    for _ in range(2):
        em.random.set_seed(11)
        layer = RANDOM[name](seed=5)
        outs.append([layer(x, training=True).numpy() for _ in range(2)])
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    np.testing.assert_array_equal(outs[0][1], outs[1][1])
    assert not np.array_equal(outs[0][0], outs[0][1])  # a new draw each call


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_layer_on_one_image_and_channels_first(name):
    x = _imgs(1)
    em.random.set_seed(2)
    batch = RANDOM[name]()(x, training=True).numpy()
    em.random.set_seed(2)
    single = RANDOM[name]()(x[0], training=True).numpy()
    np.testing.assert_allclose(single, batch[0], rtol=1e-5, atol=1e-4)
    em.random.set_seed(2)
    first = RANDOM[name](data_format="channels_first")(np.moveaxis(x, -1, 1),
                                                       training=True).numpy()
    np.testing.assert_allclose(np.moveaxis(first, 1, -1), batch, rtol=1e-5, atol=1e-4)


def test_random_flip_flips_each_image_or_not():
    x = _imgs(64, 4, 4, 1)
    out = L.RandomFlip("horizontal")(x, training=True).numpy()
    flipped = [np.array_equal(o, xi[:, ::-1]) for o, xi in zip(out, x)]
    kept = [np.array_equal(o, xi) for o, xi in zip(out, x)]
    assert all(f or k for f, k in zip(flipped, kept))
    assert 16 < sum(flipped) < 48
    both = L.RandomFlip()(x, training=True).numpy()
    assert all(np.array_equal(o, xi) or np.array_equal(o, xi[::-1, ::-1])
               for o, xi in zip(both, x))


def test_random_contrast_draws_one_factor_per_image_in_keras_range():
    x = _imgs(16, 5, 5, 2) / 4 + 90  # inside [0, 255] after any factor up to 1.5
    out = L.RandomContrast((0.2, 0.5))(x, training=True).numpy()
    mean = x.mean(axis=(1, 2), keepdims=True)
    factor = (out - mean) / (x - mean)
    np.testing.assert_allclose(factor, factor[:, :1, :1, :1] * np.ones_like(factor), rtol=1e-3)
    assert np.all(factor > 0.8 - 1e-4) and np.all(factor < 1.5 + 1e-4)
    assert np.ptp(factor[:, 0, 0, 0]) > 0.05
    single = L.RandomContrast(0.3)(x, training=True).numpy()  # Keras 3: [1, 1.3]
    f1 = ((single - mean) / (x - mean))[:, 0, 0, 0]
    assert np.all(f1 >= 1 - 1e-4) and np.all(f1 <= 1.3 + 1e-4)
    clipped = L.RandomContrast(1.0, value_range=(0, 100))(x, training=True).numpy()
    assert clipped.max() <= 100.0


def test_random_crop_takes_one_window_for_the_batch():
    x = _imgs(3, 9, 7, 1)
    out = L.RandomCrop(4, 5)(x, training=True).numpy()
    hits = [(i, j) for i in range(6) for j in range(3) if np.array_equal(out, x[:, i:i + 4, j:j + 5])]
    assert len(hits) == 1
    small = L.RandomCrop(12, 14)(x, training=True)  # smaller than the window: resized
    assert small.shape == (3, 12, 14, 1)


def test_augmentation_inside_a_model_trains():
    em.random.set_seed(0)
    model = nn.Sequential([L.RandomFlip("horizontal", input_shape=(6, 6, 1)),
                           L.RandomRotation(0.1), L.Rescaling(1 / 255.0), L.Flatten(),
                           L.Dense(2)])
    model.compile(optimizer="adam", loss=nn.losses.SparseCategoricalCrossentropy(
        from_logits=True))
    x, y = _imgs(8, 6, 6, 1), np.arange(8) % 2
    hist = model.fit(x, y, epochs=2, batch_size=4, verbose=0)
    assert np.all(np.isfinite(hist.history["loss"]))
    np.testing.assert_array_equal(model.predict(x, verbose=0), model.predict(x, verbose=0))


@pytest.mark.parametrize("factory", [
    lambda: L.Resizing(3, 4, interpolation="nearest", antialias=True),
    lambda: L.CenterCrop(2, 3), lambda: L.RandomFlip("vertical", seed=3),
    lambda: L.RandomRotation((-0.1, 0.2), fill_mode="constant", fill_value=1.0),
    lambda: L.RandomZoom(0.2, None), lambda: L.RandomTranslation(0.1, (0.0, 0.2)),
    lambda: L.RandomContrast(0.4, value_range=(0, 1)), lambda: L.RandomCrop(2, 2, seed=1)],
    ids=lambda f: type(f()).__name__)
def test_image_layer_config_round_trip(factory):
    layer = factory()
    config = layer.get_config()
    again = type(layer).from_config(config)
    assert again.get_config() == config


# --- each random layer keeps a stream of its own (Keras 3's seed_generator) --------------
def test_random_layers_draw_from_their_own_streams_whatever_else_draws():
    x = _imgs(8)

    def run(noise):
        em.random.set_seed(4)
        flip, rot = L.RandomFlip(), L.RandomRotation(0.3)
        outs = []
        for _ in range(3):
            if noise:  # other code drawing from the global generator meanwhile
                em.random.uniform([5])
            outs.append(rot(flip(x)).numpy())
        return outs

    quiet, noisy = run(False), run(True)
    for a, b in zip(quiet, noisy):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(quiet[0], quiet[1])


def test_making_a_random_layer_draws_nothing_from_the_global_generator():
    em.random.set_seed(9)
    expected = em.random.uniform([4]).numpy()
    em.random.set_seed(9)
    L.RandomZoom(0.2)
    L.RandomContrast(0.3)
    np.testing.assert_array_equal(em.random.uniform([4]).numpy(), expected)


def test_two_unseeded_random_layers_draw_differently():
    x = _imgs(16)
    a, b = L.RandomTranslation(0.3, 0.3), L.RandomTranslation(0.3, 0.3)
    assert a.seed_generator.seed != b.seed_generator.seed
    assert not np.array_equal(a(x).numpy(), b(x).numpy())


def test_a_random_layers_stream_is_checkpointed(tmp_path):
    from ember import checkpoint

    x = _imgs(8)
    layer = L.RandomRotation(0.3)
    ckpt = checkpoint.Checkpoint(layer=layer)
    path = ckpt.write(tmp_path / "ck")
    first = layer(x).numpy()
    layer(x)
    ckpt.read(path).assert_consumed()
    np.testing.assert_array_equal(layer(x).numpy(), first)


def test_resizing_takes_area_as_keras_on_tensorflow():
    """``interpolation="area"`` (Keras on TensorFlow: tf.image.resize's area): each output
    pixel is the mean of the input area it covers, fractions weighed."""
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    got = nn.layers.Resizing(3, 3, interpolation="area")(x).numpy()[0, ..., 0]
    cover = np.array([[1, 1 / 3, 0, 0], [0, 2 / 3, 2 / 3, 0], [0, 0, 1 / 3, 1]]) * 0.75
    np.testing.assert_allclose(got, cover @ x[0, ..., 0] @ cover.T, rtol=1e-6)
