"""``em.image`` (``tf.image``) against numpy written from TensorFlow's definitions, and the
stateless random functions (``em.random.stateless_*``, ``split``, ``make_seeds``)."""

from __future__ import annotations

import colorsys

import numpy as np
import pytest

import ember.core as em

RNG = np.random.default_rng(0)
IMG = RNG.random((5, 4, 3)).astype(np.float32)
U8 = (IMG * 255).astype(np.uint8)


def test_geometry_against_numpy(device):
    with em.device(device):
        x = em.constant(IMG)
        batch = em.constant(np.stack([IMG, IMG[::-1]]))
        np.testing.assert_array_equal(em.image.flip_left_right(x).numpy(), IMG[:, ::-1])
        np.testing.assert_array_equal(em.image.flip_up_down(batch).numpy(),
                                      batch.numpy()[:, ::-1])
        np.testing.assert_array_equal(em.image.transpose(x).numpy(), IMG.transpose(1, 0, 2))
        for k in range(-1, 5):
            np.testing.assert_array_equal(em.image.rot90(x, k).numpy(),
                                          np.rot90(IMG, k, axes=(0, 1)))
            np.testing.assert_array_equal(em.image.rot90(batch, k).numpy(),
                                          np.rot90(batch.numpy(), k, axes=(1, 2)))
        # TensorFlow's central box: int((h - h * fraction) / 2) off each side
        np.testing.assert_array_equal(em.image.central_crop(x, 0.5).numpy(), IMG[1:4, 1:3])
        np.testing.assert_array_equal(em.image.crop_to_bounding_box(x, 1, 2, 3, 2).numpy(),
                                      IMG[1:4, 2:4])
        padded = em.image.pad_to_bounding_box(x, 1, 0, 7, 5).numpy()
        want = np.zeros((7, 5, 3), np.float32)
        want[1:6, :4] = IMG
        np.testing.assert_array_equal(padded, want)
        # crop the height evenly (5 -> 3: from row 1), pad the width (4 -> 6: 1 each side)
        got = em.image.resize_with_crop_or_pad(x, 3, 6).numpy()
        want = np.zeros((3, 6, 3), np.float32)
        want[:, 1:5] = IMG[1:4]
        np.testing.assert_array_equal(got, want)
        patches = em.image.extract_patches(batch, [1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1],
                                           "VALID").numpy()
        assert patches.shape == (2, 2, 2, 12)
        np.testing.assert_array_equal(patches[0, 1, 0], IMG[2:4, 0:2].reshape(-1))


def test_colour_against_numpy(device):
    with em.device(device):
        x, u = em.constant(IMG), em.constant(U8)
        gray = em.image.rgb_to_grayscale(x).numpy()
        np.testing.assert_allclose(gray[..., 0], IMG @ [0.2989, 0.5870, 0.1140], rtol=1e-6)
        assert em.image.rgb_to_grayscale(u).dtype == em.uint8
        assert em.image.grayscale_to_rgb(em.constant(gray)).shape == (5, 4, 3)
        np.testing.assert_allclose(em.image.adjust_brightness(x, 0.25).numpy(), IMG + 0.25,
                                   rtol=1e-6)
        # an integer image saturates: x * 255.5 clipped, as convert_image_dtype's
        bright = em.image.adjust_brightness(u, 0.5).numpy()
        want = np.clip((U8 / np.float32(255) + 0.5) * 255.5, 0, 255).astype(np.uint8)
        np.testing.assert_array_equal(bright, want)
        mean = IMG.mean(axis=(0, 1), keepdims=True)
        np.testing.assert_allclose(em.image.adjust_contrast(x, 2.0).numpy(),
                                   (IMG - mean) * 2 + mean, rtol=1e-5, atol=1e-6)
        sat = em.image.adjust_saturation(x, 0.5).numpy()
        for (i, j) in [(0, 0), (2, 3), (4, 1)]:  # colorsys's HSV round trip
            h, s, v = colorsys.rgb_to_hsv(*IMG[i, j].astype(np.float64))
            np.testing.assert_allclose(sat[i, j], colorsys.hsv_to_rgb(h, s * 0.5, v),
                                       rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(em.image.adjust_gamma(x, 2.0, 0.5).numpy(),
                                   0.5 * IMG ** 2, rtol=1e-6)
        std = em.image.per_image_standardization(u).numpy()
        f = U8.astype(np.float64)
        np.testing.assert_allclose(std, (f - f.mean()) / f.std(), rtol=1e-4, atol=1e-5)


def test_convert_image_dtype_scales_as_tensorflow():
    assert em.image.convert_image_dtype(em.constant([0.5, 1.0]), em.uint8).numpy().tolist() \
        == [127, 255]  # x * 255.5, truncated
    assert em.image.convert_image_dtype(em.constant([255], em.uint8), em.uint16).numpy() \
        .tolist() == [65280]  # by bits, as TensorFlow shifts
    assert em.image.convert_image_dtype(em.constant([65535], em.uint16), em.uint8).numpy() \
        .tolist() == [255]
    big = em.constant(np.array([2**62 - 1], np.int64))  # integer division, not floats
    assert em.image.convert_image_dtype(big, em.int32).numpy().tolist() == [2**30 - 1]
    assert em.image.per_image_standardization(np.ones((2, 2, 1))).dtype == em.float32
    got = em.image.convert_image_dtype(em.constant([2.0]), em.uint8, saturate=True)
    assert got.numpy().tolist() == [255]
    with pytest.raises(em.InvalidArgumentError, match="convert_image_dtype: from float32 to bool"):
        em.image.convert_image_dtype(em.constant([1.0]), em.bool)


def test_errors_name_the_function_and_shapes():
    with pytest.raises(em.InvalidArgumentError, match=r"image.flip_left_right: expected an "
                                                      r"image .* got shape \(4, 3\)"):
        em.image.flip_left_right(em.zeros((4, 3)))
    with pytest.raises(em.InvalidArgumentError, match="central_fraction must be in"):
        em.image.central_crop(IMG, 0.0)
    with pytest.raises(em.InvalidArgumentError, match="does not fit an image of 5 x 4"):
        em.image.crop_to_bounding_box(IMG, 3, 0, 3, 4)
    with pytest.raises(em.InvalidArgumentError, match="stateless_random_crop: size"):
        em.image.stateless_random_crop(IMG, [6, 4, 3], seed=[1, 2])


def test_stateless_draws_depend_on_the_seed_alone(device):
    with em.device(device):
        a = em.random.stateless_uniform([4], seed=[1, 2])
        em.random.uniform([3])  # the global stream moves; stateless draws do not follow it
        assert a.numpy().tolist() == em.random.stateless_uniform([4], seed=[1, 2]).numpy() \
            .tolist()
        assert a.numpy().tolist() != em.random.stateless_uniform([4], seed=[1, 3]).numpy() \
            .tolist()
        # not the numbers of Generator(1) or of an op-level seed (independent streams)
        assert a.numpy().tolist() != em.random.Generator(1).uniform([4]).numpy().tolist()
        n = em.random.stateless_normal([20000], seed=em.constant([5, 6])).numpy()
        assert abs(n.mean()) < 0.03 and abs(n.std() - 1) < 0.03
        crops = {tuple(em.image.stateless_random_crop(IMG, [2, 2, 3], seed=[s, 0]).numpy()
                       .ravel()[:2]) for s in range(12)}
        assert len(crops) > 1  # the offset follows the seed
        same = em.image.stateless_random_brightness(IMG, 0.2, seed=[7, 7]).numpy()
        np.testing.assert_array_equal(
            same, em.image.stateless_random_brightness(IMG, 0.2, seed=[7, 7]).numpy())
        flips = em.image.stateless_random_flip_left_right(np.stack([IMG] * 16), seed=[1, 1])
        flipped = [bool((f == IMG[:, ::-1]).all()) for f in flips.numpy()]
        kept = [bool((f == IMG).all()) for f in flips.numpy()]
        assert all(a or b for a, b in zip(flipped, kept)) and any(flipped) and any(kept)


def test_seeds_as_tensorflow_makes_them():
    s = em.random.split([1, 2], num=3)
    assert s.shape == (3, 2) and s.dtype == em.int32  # a list of ints is int32, as TF's
    assert em.random.split(em.constant([1, 2], em.int64)).dtype == em.int64
    folded = em.random.fold_in([1, 2], 7)  # TF's: a draw keyed by the seed, then data
    assert folded.dtype == em.int32 and int(folded[1]) == 7
    assert em.random.split((em.constant(3, em.int64), em.constant(4, em.int64))).dtype \
        == em.int64  # tensors packed in a tuple keep their dtype, as TF packs them
    full = em.random.stateless_uniform([4], [1, 2], None, None, em.int32)
    assert full.dtype == em.int32 and len(set(full.numpy().tolist())) == 4
    g = em.random.Generator.from_seed(123, alg="philox")
    seeds = g.make_seeds(3)
    assert seeds.shape == (2, 3) and seeds.dtype == em.int64
    assert (seeds.numpy()[1] == 0).all() and len(set(seeds.numpy()[0])) == 3
    a, b = g.split(2)
    assert a.uniform([2]).numpy().tolist() != b.uniform([2]).numpy().tolist()
    with pytest.raises(em.InvalidArgumentError, match="alg='threefry'"):
        em.random.Generator.from_seed(1, alg="threefry")
    with pytest.raises(em.InvalidArgumentError, match=r"seed must be a shape \[2\] integer"):
        em.random.stateless_normal([2], seed=[1.0, 2.0])
