"""nn.ops.image's pad_images, crop_images, rgb_to_grayscale, rgb_to_hsv, hsv_to_rgb against
numpy written from Keras 3's numpy backend."""

from __future__ import annotations

import colorsys

import numpy as np
import pytest

import ember.core as em
from ember.nn.ops import image

X = np.random.default_rng(0).random((2, 5, 6, 3)).astype(np.float32)


@pytest.mark.parametrize("kw,pads", [
    (dict(top_padding=1, left_padding=2, target_height=8, target_width=9), (1, 2, 2, 1)),
    (dict(top_padding=0, bottom_padding=3, left_padding=1, right_padding=0), (0, 3, 1, 0)),
    (dict(bottom_padding=2, target_height=7, right_padding=1, target_width=8), (0, 2, 1, 1)),
])
def test_pad_images_is_numpy_s_pad(kw, pads):
    top, bottom, left, right = pads
    want = np.pad(X, ((0, 0), (top, bottom), (left, right), (0, 0)))
    np.testing.assert_array_equal(image.pad_images(X, **kw).numpy(), want)
    np.testing.assert_array_equal(image.pad_images(X[0], **kw).numpy(), want[0])
    first = image.pad_images(X.transpose(0, 3, 1, 2), **kw, data_format="channels_first")
    np.testing.assert_array_equal(first.numpy(), want.transpose(0, 3, 1, 2))


def test_crop_images_cuts_what_keras_cuts():
    got = image.crop_images(X, top_cropping=1, left_cropping=2, target_height=3,
                            target_width=3).numpy()
    np.testing.assert_array_equal(got, X[:, 1:4, 2:5])
    got = image.crop_images(X, top_cropping=1, bottom_cropping=1, left_cropping=0,
                            right_cropping=4).numpy()
    np.testing.assert_array_equal(got, X[:, 1:4, 0:2])


def test_the_two_of_three_rule_and_bounds_are_named():
    with pytest.raises(em.InvalidArgumentError, match="exactly two of top_padding"):
        image.pad_images(X, top_padding=1, bottom_padding=1, target_height=7, left_padding=0,
                         right_padding=0)
    with pytest.raises(em.InvalidArgumentError, match="bottom_padding must be >= 0"):
        image.pad_images(X, top_padding=3, target_height=6, left_padding=0, right_padding=0)
    with pytest.raises(em.InvalidArgumentError, match="leaves nothing"):
        image.crop_images(X, top_cropping=3, bottom_cropping=2, left_cropping=0,
                          right_cropping=0)


def test_grayscale_and_hsv():
    gray = image.rgb_to_grayscale(X).numpy()
    np.testing.assert_allclose(gray[..., 0], X @ np.array([0.2989, 0.5870, 0.1140]),
                               rtol=1e-6)
    ints = (X * 255).astype(np.uint8)
    got = image.rgb_to_grayscale(ints)
    assert got.dtype == em.uint8
    np.testing.assert_array_equal(
        got.numpy()[..., 0],
        (ints.astype(np.float32) @ np.array([0.2989, 0.5870, 0.1140], np.float32))
        .astype(np.uint8))
    hsv = image.rgb_to_hsv(X).numpy()
    want = np.array([colorsys.rgb_to_hsv(*p) for p in X.reshape(-1, 3)]).reshape(X.shape)
    np.testing.assert_allclose(hsv, want, atol=1e-5)
    np.testing.assert_allclose(image.hsv_to_rgb(hsv).numpy(), X, atol=1e-5)
    with pytest.raises(em.InvalidArgumentError, match="must be floating"):
        image.rgb_to_hsv(ints)
