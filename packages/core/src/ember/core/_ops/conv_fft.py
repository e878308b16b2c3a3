"""FFT convolution: ``rfft2`` of the images, one batched complex matrix product over
channels per frequency, and ``irfft2`` back (any geometry).

Forward transforms use ``norm="forward"`` and inverse ones ``norm="backward"``, with the
lost factor ``n**2`` (n: points of the transform) put back on the smallest array (the
filter, or the filter gradient): numpy 2's pocketfft runs its float32 transforms many
times slower when a transform's scale factor is 1 (measured 30x for ``rfft`` on
(64, 32, 18, 18) float32, numpy 2.4).

A stride is computed at stride 1 and subsampled (the gradients upsample ``dy`` with
zeros), a dilation by a filter with zeros between its taps. The transform size is at
least the padded input, so circular correlation equals the linear one on every output.
The batch goes through in chunks, so the spectra stay near ``CHUNK_ELEMENTS``.
"""

from __future__ import annotations

from typing import Any

from .conv_geometry import (
    Geometry,
    batch_chunks,
    crop_image,
    dilate_filter,
    pad_image,
    upsample,
)


def _fast_size(n: int) -> int:
    """The smallest m >= n whose only prime factors are 2, 3 and 5 (fast for pocketfft
    and cuFFT)."""
    m = n
    while True:
        k = m
        for p in (2, 3, 5):
            while k % p == 0:
                k //= p
        if k == 1:
            return m
        m += 1


def _size(g: Geometry) -> tuple[int, int]:
    hp, wp = g.padded_hw
    return (_fast_size(hp), _fast_size(wp))


def _freq_major(a: Any) -> Any:
    """(N, L0, L1, C) spectra as (L0 * L1, N, C): one matrix per frequency (a view)."""
    n, l0, l1, c = a.shape
    return a.reshape(n, l0 * l1, c).transpose(1, 0, 2)


def _spectrum(xp: Any, a: Any, s: tuple[int, int]) -> Any:
    """The images' spectrum divided by n (``norm="forward"``)."""
    return xp.fft.rfft2(a, s=s, axes=(1, 2), norm="forward")


def _filter_spectrum(xp: Any, w: Any, g: Geometry, s: tuple[int, int]) -> Any:
    """(L0 * L1, C, CO) spectrum of the (dilated) filter, times n (so that the product
    with an image spectrum, inverted with ``norm="backward"``, is the convolution)."""
    n = s[0] * s[1]
    f = xp.fft.rfft2(dilate_filter(xp, w, g) * (n * n), s=s, axes=(0, 1), norm="forward")
    l0, l1, c, co = f.shape
    return f.reshape(l0 * l1, c, co)


def _image(xp: Any, spec: Any, n: int, s: tuple[int, int], dtype: Any) -> Any:
    """(L0 * L1, N, C) spectra back to (N, S0, S1, C) real images."""
    f, _, c = spec.shape
    l1 = s[1] // 2 + 1
    img = xp.fft.irfft2(spec.transpose(1, 0, 2).reshape(n, s[0], l1, c), s=s, axes=(1, 2))
    return img.astype(dtype, copy=False)


def _chunks(g: Geometry, s: tuple[int, int]) -> Any:
    """Chunks of the batch whose spectra (with pocketfft's copies, about eight complex
    buffers of an image's half-spectrum, measured) stay under ``CHUNK_ELEMENTS``."""
    return batch_chunks(g, 16 * s[0] * (s[1] // 2 + 1) * max(g.w_shape[2:]))


def forward(xp: Any, x: Any, w: Any, g: Geometry) -> Any:
    s = _size(g)
    fs = xp.conj(_filter_spectrum(xp, w, g, s))
    y = xp.empty(g.y_shape, dtype=x.dtype)
    for a, b, gc in _chunks(g, s):
        y[a:b] = _forward(xp, x[a:b], fs, gc, s)
    return y


def _forward(xp: Any, x: Any, fs: Any, g: Geometry, s: tuple[int, int]) -> Any:
    spec = xp.matmul(_freq_major(_spectrum(xp, pad_image(xp, x, g.pads), s)), fs)
    y = _image(xp, spec, x.shape[0], s, x.dtype)
    (kh, kw), (hp, wp) = g.dilated_k, g.padded_hw
    sh, sw = g.strides
    return y[:, :hp - kh + 1:sh, :wp - kw + 1:sw, :]


def backprop_input(xp: Any, dy: Any, w: Any, g: Geometry) -> Any:
    s = _size(g)
    fs = _filter_spectrum(xp, w, g, s).transpose(0, 2, 1)
    dx = xp.empty(g.x_shape, dtype=dy.dtype)
    hp, wp = g.padded_hw
    for a, b, gc in _chunks(g, s):
        spec = xp.matmul(_freq_major(_spectrum(xp, upsample(xp, dy[a:b], gc), s)), fs)
        dx[a:b] = crop_image(_image(xp, spec, b - a, s, dy.dtype)[:, :hp, :wp, :], gc)
        del spec
    return dx


def backprop_filter(xp: Any, x: Any, dy: Any, g: Geometry) -> Any:
    s = _size(g)
    spec = None
    for a, b, gc in _chunks(g, s):
        xs = _freq_major(_spectrum(xp, pad_image(xp, x[a:b], g.pads), s)).transpose(0, 2, 1)
        ds = xp.conj(_freq_major(_spectrum(xp, upsample(xp, dy[a:b], gc), s)))
        part = xp.matmul(xs, ds)  # (F, C, CO)
        del xs, ds
        spec = part if spec is None else xp.add(spec, part, out=spec)
    assert spec is not None
    _, c, co = spec.shape
    dw = xp.fft.irfft2(spec.reshape(s[0], s[1] // 2 + 1, c, co), s=s, axes=(0, 1))
    kh, kw = g.dilated_k
    dh, dw_ = g.dilations
    n = s[0] * s[1]
    return (dw[:kh:dh, :kw:dw_] * (n * n)).astype(x.dtype, copy=False)
