"""``em.image.resize`` (``tf.image.resize``) against TensorFlow's documented example, against
PyTorch's ``interpolate`` where it computes the same thing (bilinear with and without
antialiasing, half-pixel nearest, area at whole ratios), and against loops written from
TensorFlow's kernels (``ScaleAndTranslate``'s spans, ``ResizeArea``'s boxes)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ember.core as em

RNG = np.random.default_rng(0)
X = RNG.random((2, 7, 9, 3)).astype(np.float32)
SIZES = [(4, 5), (13, 17), (7, 3), (1, 1), (7, 9)]


def _kernel(method):
    """TensorFlow's sampling kernels (tensorflow/core/kernels/image/sampling_kernels.h)."""
    def lanczos(r):
        def k(x):
            if x > r:
                return 0.0
            if x <= 1e-3:
                return 1.0
            return r * math.sin(math.pi * x) * math.sin(math.pi * x / r) / (math.pi * x) ** 2
        return k, r

    def keys(x):
        if x >= 2:
            return 0.0
        return ((-0.5 * x + 2.5) * x - 4) * x + 2 if x >= 1 else ((1.5 * x - 2.5) * x) * x + 1

    def mitchell(x):
        if x >= 2:
            return 0.0
        if x >= 1:
            return (((-7 / 18) * x + 2) * x - 10 / 3) * x + 16 / 9
        return (((7 / 6) * x - 2) * x) * x + 8 / 9

    return {"bilinear": (lambda x: max(0.0, 1 - x), 1.0), "bicubic": (keys, 2.0),
            "lanczos3": lanczos(3.0), "lanczos5": lanczos(5.0),
            "gaussian": (lambda x: 0.0 if x >= 1.5 else math.exp(-x * x / 0.5), 1.5),
            "mitchellcubic": (mitchell, 2.0)}[method]


def _spans_1d(a, out_size, method, antialias, axis):
    """One axis of ScaleAndTranslate, a loop over output pixels and their spans."""
    kernel, radius = _kernel(method)
    n = a.shape[axis]
    scale = out_size / n
    kscale = max(1 / scale, 1.0) if antialias else 1.0
    a = np.moveaxis(a, axis, 0)
    out = np.zeros((out_size, *a.shape[1:]))
    for i in range(out_size):
        sample = (i + 0.5) / scale
        if sample < 0 or sample > n:
            continue
        lo = min(max(math.ceil(sample - radius * kscale - 0.5), 0), n - 1)
        hi = min(max(math.floor(sample + radius * kscale - 0.5), 0), n - 1) + 1
        w = np.array([kernel(abs((j + 0.5 - sample) / kscale)) for j in range(lo, hi)])
        if abs(w.sum()) > 1000 * np.finfo(np.float32).tiny:
            out[i] = np.tensordot(w / w.sum(), a[lo:hi], axes=1)
    return np.moveaxis(out, 0, axis)


def _area_1d(a, out_size, axis):
    """One axis of ResizeArea: each output's box [i, i + 1) * scale, weighted by cover."""
    n = a.shape[axis]
    scale = n / out_size
    a = np.moveaxis(a, axis, 0)
    out = np.zeros((out_size, *a.shape[1:]))
    for i in range(out_size):
        lo, hi = i * scale, (i + 1) * scale
        for j in range(math.floor(lo), min(math.ceil(hi), n)):
            out[i] += (min(j + 1, hi) - max(j, lo)) * a[j]
        out[i] /= scale
    return np.moveaxis(out, 0, axis)


def _reference(x, size, method, antialias):
    x = x.astype(np.float64)
    if method == "area":
        return _area_1d(_area_1d(x, size[0], 1), size[1], 2)
    return _spans_1d(_spans_1d(x, size[0], method, antialias, 1), size[1], method,
                     antialias, 2)


def test_tensorflow_documented_example():
    image = em.constant(np.eye(5, dtype=np.int32))[None, ..., None]
    got = em.image.resize(image, [3, 5])
    assert got.dtype == em.float32
    np.testing.assert_allclose(got.numpy()[0, ..., 0],
                               [[2 / 3, 1 / 3, 0, 0, 0], [0, 0, 1, 0, 0],
                                [0, 0, 0, 1 / 3, 2 / 3]], atol=3e-7)
    assert em.image.resize(image[0], [3, 5]).shape == (3, 5, 1)
    # antialias changes nothing when enlarging
    a, b = em.image.resize(image, [5, 10]), em.image.resize(image, [5, 10], antialias=True)
    assert float(em.reduce_max(em.abs(a - b))) == 0.0
    assert em.image.resize(image, [10, 20], preserve_aspect_ratio=True).shape == (1, 10, 10, 1)


@pytest.mark.parametrize("method", ["bilinear", "bicubic", "lanczos3", "lanczos5", "gaussian",
                                    "mitchellcubic", "area"])
@pytest.mark.parametrize("antialias", [False, True])
def test_against_tensorflow_kernels(device, method, antialias):
    with em.device(device):
        x = em.constant(X)
        for size in SIZES:
            got = em.image.resize(x, size, method=method, antialias=antialias)
            assert got.shape == (2, *size, 3) and got.dtype == em.float32
            assert got.device == x.device
            np.testing.assert_allclose(got.numpy(), _reference(X, size, method, antialias),
                                       rtol=2e-5, atol=2e-6, err_msg=f"{method} {size}")


def test_against_torch_interpolate():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    tx = torch.tensor(X).permute(0, 3, 1, 2)
    for size in SIZES:
        for aa in (False, True):
            want = F.interpolate(tx, size=size, mode="bilinear", align_corners=False,
                                 antialias=aa).permute(0, 2, 3, 1).numpy()
            got = em.image.resize(X, size, antialias=aa).numpy()
            np.testing.assert_allclose(got, want, atol=2e-6)
        want = F.interpolate(tx, size=size, mode="nearest-exact").permute(0, 2, 3, 1).numpy()
        np.testing.assert_array_equal(em.image.resize(X, size, "nearest").numpy(), want)
    # area at whole ratios is adaptive average pooling
    want = F.interpolate(tx, size=(7, 3), mode="area").permute(0, 2, 3, 1).numpy()
    np.testing.assert_allclose(em.image.resize(X, (7, 3), "area").numpy(), want, atol=1e-6)


def test_dtypes_as_tensorflow(device):
    with em.device(device):
        u8 = em.constant((X[0] * 255).astype(np.uint8))
        near = em.image.resize(u8, [3, 4], "nearest")
        assert near.dtype == em.uint8  # nearest keeps the dtype
        idx_h = np.floor((np.arange(3) + 0.5) * 7 / 3).astype(int)
        idx_w = np.floor((np.arange(4) + 0.5) * 9 / 4).astype(int)
        np.testing.assert_array_equal(near.numpy(), u8.numpy()[idx_h][:, idx_w])
        # every other method gives float32, unrounded
        got = em.image.resize(u8, [3, 4])
        assert got.dtype == em.float32
        np.testing.assert_allclose(got.numpy(), _reference(u8.numpy()[None], (3, 4),
                                                           "bilinear", False)[0], rtol=1e-5)
        assert em.image.resize(em.cast(u8, em.float16), [3, 4]).dtype == em.float32
        # float64 stays float64 (nothing asked for float32's rounding)
        x64 = em.constant(X.astype(np.float64))
        got = em.image.resize(x64, [4, 5], "bicubic")
        assert got.dtype == em.float64
        np.testing.assert_allclose(got.numpy(), _reference(X, (4, 5), "bicubic", False),
                                   rtol=1e-12, atol=1e-13)


def test_same_size_is_identity_only_for_interpolating_kernels():
    for method in ("bilinear", "bicubic", "lanczos3", "nearest", "area"):
        np.testing.assert_allclose(em.image.resize(X, (7, 9), method).numpy(), X, atol=1e-6)
    blurred = em.image.resize(X, (7, 9), "gaussian").numpy()
    assert np.abs(blurred - X).max() > 0.05  # TensorFlow resizes even at the same size


def test_preserve_aspect_ratio_rounds_as_tensorflow():
    # 7 x 9 into 10 x 10: scale 10/9, height round(7.777) = 8
    assert em.image.resize(X, [10, 10], preserve_aspect_ratio=True).shape == (2, 8, 10, 3)
    assert em.image.resize(X, [3, 100], preserve_aspect_ratio=True).shape == (2, 3, 4, 3)


def test_errors_name_the_argument():
    with pytest.raises(em.InvalidArgumentError, match="3 or 4 dimensions"):
        em.image.resize(np.ones((4, 4), np.float32), [2, 2])
    with pytest.raises(em.InvalidArgumentError, match="'size' must be 2 integers"):
        em.image.resize(X, [2.5, 2])
    with pytest.raises(em.InvalidArgumentError, match="'size' must be 2 integers"):
        em.image.resize(X, [2, 2, 2])
    with pytest.raises(em.InvalidArgumentError, match="positive"):
        em.image.resize(X, [0, 2])
    with pytest.raises(em.InvalidArgumentError, match="unknown method 'cubic'"):
        em.image.resize(X, [2, 2], method="cubic")
