"""``em.image`` colour spaces and image quality (``rgb_to_yuv``, ``yuv_to_rgb``, ``psnr``,
``ssim``) against numpy written from TensorFlow's definitions."""

import numpy as np
import pytest

import ember.core as em

RNG = np.random.default_rng(3)
A = RNG.random((2, 14, 13, 3)).astype(np.float32)
B = np.clip(A + RNG.normal(0, 0.1, A.shape), 0, 1).astype(np.float32)


def _ssim_ref(x, y, top, size=11, sigma=1.5, k1=0.01, k2=0.03):
    """Windowed means by explicit windows (a Gaussian normalised to sum 1), per channel."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    r = np.arange(size) - (size - 1) / 2
    g = np.exp(-(r[:, None] ** 2 + r[None, :] ** 2) / (2 * sigma ** 2))
    g /= g.sum()
    h, w = x.shape[-3] - size + 1, x.shape[-2] - size + 1

    def local(t):
        out = np.zeros(t.shape[:-3] + (h, w, t.shape[-1]))
        for i in range(h):
            for j in range(w):
                out[..., i, j, :] = np.einsum("...abc,ab->...c", t[..., i:i + size, j:j + size, :], g)
        return out

    c1, c2 = (k1 * top) ** 2, (k2 * top) ** 2
    mx, my = local(x), local(y)
    lum = (2 * mx * my + c1) / (mx ** 2 + my ** 2 + c1)
    cs = (2 * local(x * y) - 2 * mx * my + c2) / (local(x * x + y * y) - mx ** 2 - my ** 2 + c2)
    return (lum * cs).mean(axis=(-3, -2)).mean(-1), (lum * cs).mean(-1)


def test_yuv_as_tensorflow(device):
    with em.device(device):
        yuv = em.image.rgb_to_yuv(A)
        kernel = np.array([[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512],
                           [0.114, 0.43601035, -0.10001026]])
        np.testing.assert_allclose(yuv.numpy(), A @ kernel, rtol=1e-5, atol=1e-6)
        grey = np.full((1, 1, 3), 0.4, np.float32)
        np.testing.assert_allclose(em.image.rgb_to_yuv(grey).numpy()[..., 1:], 0, atol=1e-7)
        np.testing.assert_allclose(em.image.yuv_to_rgb(yuv).numpy(), A, atol=2e-6)
        with pytest.raises(em.InvalidArgumentError, match="rgb_to_yuv: expected float images"):
            em.image.rgb_to_yuv((A * 255).astype(np.uint8))


def test_psnr_as_tensorflow(device):
    with em.device(device):
        got = em.image.psnr(A, B, max_val=1.0)
        mse = ((A.astype(np.float64) - B) ** 2).mean(axis=(1, 2, 3))
        assert got.dtype == em.float32 and got.shape == (2,)
        np.testing.assert_allclose(got.numpy(), -10 * np.log10(mse), rtol=1e-5)
        # uint8 images and max_val 255: both scaled by 255 first, the same ratio
        u, v = (A * 255).astype(np.uint8), (B * 255).astype(np.uint8)
        mse8 = ((u.astype(np.float64) - v) ** 2).mean(axis=(1, 2, 3))
        np.testing.assert_allclose(em.image.psnr(u, v, 255).numpy(),
                                   20 * np.log10(255) - 10 * np.log10(mse8), rtol=1e-5)
        with pytest.raises(em.InvalidArgumentError, match="one size"):
            em.image.psnr(A, B[:, :5], 1.0)


def test_ssim_as_tensorflow(device):
    with em.device(device):
        want, want_map = _ssim_ref(A, B, 1.0)
        got = em.image.ssim(A, B, max_val=1.0)
        assert got.shape == (2,) and got.dtype == em.float32
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4)
        np.testing.assert_allclose(em.image.ssim(A, A, 1.0).numpy(), 1.0, rtol=1e-6)
        got_map = em.image.ssim(A, B, 1.0, return_index_map=True)
        assert got_map.shape == (2, 4, 3)
        np.testing.assert_allclose(got_map.numpy(), want_map, rtol=1e-4, atol=1e-6)
        small, _ = _ssim_ref(A, B, 1.0, size=5, sigma=0.8, k1=0.02)
        np.testing.assert_allclose(em.image.ssim(A, B, 1.0, filter_size=5, filter_sigma=0.8,
                                                 k1=0.02).numpy(), small, rtol=1e-4)
        with pytest.raises(em.InvalidArgumentError, match="smaller than the filter"):
            em.image.ssim(A[:, :8], B[:, :8], 1.0)


def _hsv_ref(x):
    import colorsys
    return np.array([colorsys.rgb_to_hsv(*p) for p in x.reshape(-1, 3)]).reshape(x.shape)


def test_hsv_and_hue_against_colorsys(device):
    import colorsys
    x = A[0].copy()
    x[0, 0], x[0, 1], x[0, 2], x[0, 3] = [0.5] * 3, [0.0] * 3, [1, 0, 0], [0.2, 0.9, 0.9]
    with em.device(device):
        hsv = em.image.rgb_to_hsv(x)
        np.testing.assert_allclose(hsv.numpy(), _hsv_ref(x), atol=1e-6)
        np.testing.assert_allclose(em.image.hsv_to_rgb(hsv).numpy(), x, atol=1e-6)
        for delta in (0.3, -0.45, 1.0):
            want = np.array([colorsys.hsv_to_rgb((h + delta) % 1, s, v)
                             for h, s, v in _hsv_ref(x).reshape(-1, 3)]).reshape(x.shape)
            np.testing.assert_allclose(em.image.adjust_hue(x, delta).numpy(), want, atol=1e-6)
        u8 = (x * 255).astype(np.uint8)
        got = em.image.adjust_hue(u8, 0.25)
        assert got.dtype == em.uint8 and got.shape == u8.shape
        # the random ones: a delta/factor within bounds, repeatable for a stateless seed
        a = em.image.stateless_random_hue(x, 0.2, (1, 2)).numpy()
        np.testing.assert_array_equal(a, em.image.stateless_random_hue(x, 0.2, (1, 2)).numpy())
        turned = (_hsv_ref(a)[..., 0] - _hsv_ref(x)[..., 0]) % 1
        sat = _hsv_ref(x)[..., 1] > 0.05
        d = turned[sat][0]
        assert (min(d, 1 - d) <= 0.2 + 1e-5) and np.allclose(turned[sat], d, atol=1e-4)
        s = em.image.stateless_random_saturation(x, 0.5, 0.7, (3, 4)).numpy()
        ratio = _hsv_ref(s)[..., 1][sat] / _hsv_ref(x)[..., 1][sat]
        assert 0.5 - 1e-5 <= ratio.min() and ratio.max() <= 0.7 + 1e-5
        assert em.image.random_hue(x, 0.1).shape == x.shape
        assert em.image.random_saturation(x, 0.8, 1.2).shape == x.shape
    with pytest.raises(em.InvalidArgumentError, match="max_delta must be in"):
        em.image.random_hue(x, 0.6)
    with pytest.raises(em.InvalidArgumentError, match="delta must be in"):
        em.image.adjust_hue(x, 1.5)
