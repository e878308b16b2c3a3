"""Gradients of em.signal's transforms and the complex parts against PyTorch's autograd
(``torch.fft``, complex cotangents) and finite differences of real losses. The op table's
gradient checks (test_gradient_table.py) cover every spec to second order; this file adds
complex cotangents, PyTorch, and losses through |stft|."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em
from ember import tape
from ember.core import signal as sg

R = np.random.default_rng(0)


def _case(name, ours, theirs, shape, complex_in):
    return pytest.param(ours, theirs, shape, complex_in, id=name)


def _cases():
    T = pytest.importorskip("torch").fft
    out = [
        _case("fft", sg.fft, T.fft, (3, 5), True),
        _case("ifft", sg.ifft, T.ifft, (3, 6), True),
        _case("fft2d", sg.fft2d, T.fft2, (2, 3, 4), True),
        _case("ifft2d", sg.ifft2d, T.ifft2, (2, 3, 5), True),
        _case("fft3d", sg.fft3d, lambda x: T.fftn(x, dim=(-3, -2, -1)), (2, 3, 4), True),
        _case("ifft3d", sg.ifft3d, lambda x: T.ifftn(x, dim=(-3, -2, -1)), (2, 2, 3), True),
        _case("rfft3d", sg.rfft3d, lambda x: T.rfftn(x, dim=(-3, -2, -1)), (2, 3, 5), False),
        _case("irfft3d", lambda x: sg.irfft3d(x, [2, 3, 5]),
              lambda x: T.irfftn(x, (2, 3, 5), dim=(-3, -2, -1)), (2, 3, 3), True),
    ]
    for n in (3, 5, 6, 8):  # odd and even lengths, cropping (input 6) and padding
        out += [
            _case(f"rfft{n}", lambda x, n=n: sg.rfft(x, [n]), lambda x, n=n: T.rfft(x, n),
                  (3, 6), False),
            _case(f"irfft{n}", lambda x, n=n: sg.irfft(x, [n]), lambda x, n=n: T.irfft(x, n),
                  (3, 4), True),
            _case(f"rfft2d_{n}", lambda x, n=n: sg.rfft2d(x, [3, n]),
                  lambda x, n=n: T.rfft2(x, (3, n)), (2, 4, 6), False),
            _case(f"irfft2d_{n}", lambda x, n=n: sg.irfft2d(x, [3, n]),
                  lambda x, n=n: T.irfft2(x, (3, n)), (2, 4, 4), True),
        ]
    return out


try:
    CASES = _cases()
except pytest.skip.Exception:  # no PyTorch: the comparison tests skip
    CASES = []


@pytest.mark.parametrize(("ours", "theirs", "shape", "complex_in"), CASES)
def test_gradient_matches_pytorch_with_a_complex_cotangent(ours, theirs, shape, complex_in):
    torch = pytest.importorskip("torch")
    x = R.standard_normal(shape) + (1j * R.standard_normal(shape) if complex_in else 0)
    xe = em.constant(x)
    with tape.GradientTape() as t:
        t.watch(xe)
        y = ours(xe)
    xt = torch.tensor(x, requires_grad=True)
    yt = theirs(xt)
    np.testing.assert_allclose(y.numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    dy = R.standard_normal(yt.shape)
    if yt.is_complex():
        dy = dy + 1j * R.standard_normal(yt.shape)
    g = t.gradient(y, xe, output_gradients=em.constant(dy))
    (gt,) = torch.autograd.grad(yt, xt, torch.tensor(dy))
    assert g.dtype == x.dtype
    np.testing.assert_allclose(g.numpy(), gt.resolve_conj().numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("fn", ["real", "imag", "conj", "abs", "multiply"])
def test_complex_parts_match_pytorch(fn):
    torch = pytest.importorskip("torch")
    z = R.standard_normal(4) + 1j * R.standard_normal(4)
    c = np.array([1 + 2j, 3 - 1j, 0.5j, 2.0])
    ours = {"real": em.math.real, "imag": em.math.imag, "conj": em.math.conj, "abs": em.abs,
            "multiply": lambda a: em.multiply(a, em.constant(c))}[fn]
    theirs = {"real": torch.real, "imag": torch.imag, "conj": torch.conj, "abs": torch.abs,
              "multiply": lambda a: a * torch.tensor(c)}[fn]
    ze = em.constant(z)
    with tape.GradientTape() as t:
        t.watch(ze)
        y = ours(ze)
    zt = torch.tensor(z, requires_grad=True)
    yt = theirs(zt)
    dy = R.standard_normal(4) + (1j * R.standard_normal(4) if yt.is_complex() else 0)
    g = t.gradient(y, ze, output_gradients=em.constant(dy))
    (gt,) = torch.autograd.grad(yt, zt, torch.tensor(dy))
    np.testing.assert_allclose(g.numpy(), gt.resolve_conj().numpy(), rtol=1e-12, atol=1e-14)


def test_spectrogram_loss_matches_finite_differences_to_second_order():
    w = R.uniform(0.5, 1.5, (4, 9))

    def loss(x):  # sum(|stft(x)|^2 * w): a real loss through complex values
        s = sg.stft(x, frame_length=12, frame_step=5, fft_length=16)
        return em.reduce_sum(em.multiply(em.square(em.abs(s)), em.constant(w)))

    tape.check_gradients(loss, [R.standard_normal(28)], order=2, rtol=1e-5, atol=1e-7)


def test_inverse_stft_and_frames_match_finite_differences():
    re, im = R.standard_normal((2, 5, 9)), R.standard_normal((2, 5, 9))

    def f(a, b):
        return sg.inverse_stft(em.complex(a, b), 16, 4,
                               window_fn=sg.inverse_stft_window_fn(4))

    tape.check_gradients(f, [re, im], order=2, rtol=1e-5, atol=1e-7)
    tape.check_gradients(lambda x: sg.overlap_and_add(sg.frame(x, 5, 3, pad_end=True), 2),
                         [R.standard_normal((2, 11))], order=1)


def test_float32_gradients_keep_float32():
    x = em.constant(R.standard_normal(10).astype(np.float32))
    with tape.GradientTape() as t:
        t.watch(x)
        y = em.reduce_sum(em.abs(sg.rfft(x, [16])))
    g = t.gradient(y, x)
    assert g.dtype == np.float32 and g.shape == (10,)
