"""``em.signal`` (tf.signal) and the complex parts: dtypes, lengths, edge cases and errors
beyond the op table (testing/_table_fft.py), on every test backend."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em
from ember.core import signal as sg

R = np.random.default_rng(0)


def _tol(dt):
    return dict(rtol=2e-4, atol=2e-5) if dt in (np.float32, np.complex64) else \
        dict(rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 7, 8, 15, 16])
def test_transforms_match_numpy(dtype, n, device):
    x = R.standard_normal((3, n)).astype(dtype)
    z = (x + 1j * R.standard_normal((3, n))).astype(np.complex128 if dtype == np.float64
                                                   else np.complex64)
    cdt = z.dtype
    with em.device(device):
        cases = [
            (sg.fft(z), np.fft.fft(z)), (sg.ifft(z), np.fft.ifft(z)),
            (sg.fft(x), np.fft.fft(x)),  # a real input is taken as complex
            (sg.rfft(x), np.fft.rfft(x)),
            (sg.rfft(x, [n + 3]), np.fft.rfft(x, n + 3)),  # padded
            (sg.rfft(x, max(1, n - 1)), np.fft.rfft(x, max(1, n - 1))),  # cropped
            (sg.irfft(z, [2 * n - 1]), np.fft.irfft(z, 2 * n - 1)),  # odd length
            (sg.irfft(z, [n]), np.fft.irfft(z, n)),  # cropped spectrum
            (sg.irfft(z, [4 * n]), np.fft.irfft(z, 4 * n)),  # padded spectrum
            (sg.fft2d(z), np.fft.fft2(z)), (sg.ifft2d(z), np.fft.ifft2(z)),
            (sg.rfft2d(x, [2, n + 1]), np.fft.rfft2(x, (2, n + 1))),
            (sg.irfft2d(z, [4, 2 * n - 1]), np.fft.irfft2(z, (4, 2 * n - 1))),
        ]
        if n > 1:
            cases.append((sg.irfft(z), np.fft.irfft(z)))  # default: 2 * (bins - 1)
        for got, want in cases:
            assert got.device == em.get_device(device).name
            g = got.numpy()
            want_dt = cdt if np.iscomplexobj(want) else np.dtype(dtype)
            assert g.dtype == want_dt and g.shape == want.shape
            np.testing.assert_allclose(g, want, **_tol(dtype))


def test_low_precision_and_integer_inputs_compute_in_float32():
    for x in (em.constant([1, 2, 3]), em.constant([1., 2., 3.], em.float16)):
        assert sg.rfft(x).dtype == np.complex64
        assert sg.fft(x).dtype == np.complex64


def test_empty_batches_and_zero_lengths():
    assert sg.fft(em.zeros([0, 4], em.complex64)).shape == (0, 4)
    assert sg.rfft(em.zeros([0, 6])).shape == (0, 4)
    assert sg.irfft(em.zeros([2, 3], em.complex64), [0]).shape == (2, 0)


def test_complex_parts(device):
    with em.device(device):
        z = em.complex(em.constant([1., -2.]), em.constant([[3.], [0.5]]))  # broadcast
        assert z.shape == (2, 2) and z.dtype == np.complex64
        np.testing.assert_array_equal(em.math.real(z).numpy(), [[1., -2.], [1., -2.]])
        np.testing.assert_array_equal(em.math.imag(z).numpy(), [[3., 3.], [.5, .5]])
        np.testing.assert_array_equal(em.math.conj(z).numpy(), np.conj(z.numpy()))
        inf = em.complex(em.constant([np.inf], em.float64), em.constant([np.inf], em.float64))
        assert inf.dtype == np.complex128 and inf.numpy()[0] == complex(np.inf, np.inf)
        x = em.constant([1., 2.])
        assert em.math.real(x) is x and em.math.conj(x) is x
        np.testing.assert_array_equal(em.math.imag(x).numpy(), [0., 0.])


def test_frame_as_tensorflow(device):
    with em.device(device):
        x = em.reshape(em.range(2 * 7), (2, 7))
        f = sg.frame(x, 3, 2)
        assert f.shape == (2, 3, 3)
        assert f.numpy()[1].tolist() == [[7, 8, 9], [9, 10, 11], [11, 12, 13]]
        p = sg.frame(x, 3, 2, pad_end=True, pad_value=-1)
        assert p.shape == (2, 4, 3) and p.numpy()[0, -1].tolist() == [6, -1, -1]
        a0 = sg.frame(em.reshape(em.range(10), (5, 2)), 2, 2, axis=0)
        assert a0.shape == (2, 2, 2)
        assert sg.frame(em.ones([3]), 5, 1).shape == (0, 5)


def test_overlap_and_add_inverts_frame_with_a_dividing_step(device):
    with em.device(device):
        x = em.constant(R.standard_normal((2, 12)))
        frames = sg.frame(x, 4, 4)
        np.testing.assert_allclose(sg.overlap_and_add(frames, 4).numpy(), x.numpy())
        # no frames: (frames - 1) * frame_step + frame_length zeros, as TensorFlow computes it
        assert sg.overlap_and_add(em.zeros([0, 4]), 2).numpy().tolist() == [0.0, 0.0]


def test_windows_as_tensorflow():
    # TensorFlow's values: a periodic window of odd length is its symmetric window
    np.testing.assert_allclose(sg.hann_window(5).numpy(), [0., .5, 1., .5, 0.], atol=1e-7)
    np.testing.assert_allclose(sg.hann_window(4, periodic=False).numpy(), [0., .75, .75, 0.],
                               atol=1e-7)
    np.testing.assert_allclose(sg.hamming_window(4).numpy(), [.08, .54, 1., .54], atol=1e-7)
    assert sg.hann_window(1).numpy().tolist() == [1.0]
    assert sg.hann_window(0).shape == (0,)
    assert sg.hann_window(8, dtype=em.float64).dtype == np.float64


def test_stft_defaults_and_round_trip(device):
    with em.device(device):
        x = em.constant(R.standard_normal((2, 16000)).astype(np.float32))
        s = sg.stft(x, frame_length=255, frame_step=128)
        assert s.shape == (2, 124, 129) and s.dtype == np.complex64  # fft_length 256
        assert s.device == x.device
        y = sg.inverse_stft(s, 255, 128, window_fn=sg.inverse_stft_window_fn(128))
        # the first and last frame_length samples are covered by fewer windows
        np.testing.assert_allclose(y.numpy()[:, 255:15600], x.numpy()[:, 255:15600],
                                   rtol=1e-3, atol=1e-4)
        s64 = sg.stft(em.cast(x, em.float64), 64, 32, fft_length=100, window_fn=None,
                      pad_end=True)
        assert s64.dtype == np.complex128 and s64.shape == (2, 500, 51)


@pytest.mark.parametrize(("call", "match"), [
    (lambda: sg.fft(em.constant(1.0)), r"signal\.fft: input must have rank >= 1"),
    (lambda: sg.fft2d(em.ones([3])), r"signal\.fft2d: input must have rank >= 2 .* shape \(3,\)"),
    (lambda: sg.rfft(em.zeros([2], em.complex64)),
     r"signal\.rfft: input_tensor must be real .* complex64"),
    (lambda: sg.rfft(em.ones([4]), [2, 2]), r"signal\.rfft: fft_length must give 1"),
    (lambda: sg.irfft2d(em.ones([2, 2]), [-1, 2]), r"signal\.irfft2d: fft_length must give 2"),
    (lambda: sg.irfft(em.zeros([0], em.complex64)), r"signal\.irfft: cannot infer fft_length"),
    (lambda: sg.frame(em.ones([4]), 0, 1), r"signal\.frame: frame_length must be a positive"),
    (lambda: sg.overlap_and_add(em.ones([4]), 1), r"signal\.overlap_and_add: signal must have "
                                                 r"rank >= 2"),
    (lambda: sg.stft(em.zeros([8], em.complex64), 4, 2), r"signal\.stft: signals must be real"),
    (lambda: sg.hann_window(4, dtype=em.int32), r"signal\.hann_window: dtype must be floating"),
    (lambda: em.complex(em.zeros([1], em.complex64), em.zeros([1])),
     r"complex: real must be real"),
])
def test_errors_name_the_function_and_argument(call, match):
    with pytest.raises(em.InvalidArgumentError, match=match):
        call()
