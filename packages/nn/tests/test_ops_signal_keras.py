"""``ember.nn.ops``' Fourier transforms (fft, fft2, ifft2, rfft, irfft, stft, istft)
against Keras 3.15's own numbers (``data/keras_signal.json``, written by
``keras_signal_reference.py`` with Keras's torch backend), on every test backend; their
gradients through Keras's ``(real, imag)`` tuples; and their refusals."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from keras_signal_reference import CASES, inputs

import ember.core as em
from ember import tape
from ember.nn import ops

KERAS = json.loads((pathlib.Path(__file__).parent / "data" / "keras_signal.json").read_text())


def _args(args, data):
    return [tuple(em.constant(data[p]) for p in a) if isinstance(a, tuple)
            else em.constant(data[a]) if isinstance(a, str) else a for a in args]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_keras(name, dtype, backend):
    op, args, kwargs = CASES[name]
    with em.device(backend):
        vals = _args(args, inputs(dtype))
        if op == "istft_of_stft":
            spec = ops.stft(*vals, **{k: v for k, v in kwargs.items() if k != "length"})
            res = ops.istft(spec, *vals[1:], **kwargs)
        else:
            res = getattr(ops, op)(*vals, **kwargs)
    res = res if isinstance(res, tuple) else (res,)
    want = KERAS["cases"][f"{name}-{dtype}"]
    assert len(res) == len(want)
    tol = dict(rtol=1e-4, atol=2e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-11)
    for got, w in zip(res, want):
        assert got.device == em.get_device(backend).name
        assert list(got.shape) == w["shape"] and ops.dtype(got) == w["dtype"]
        np.testing.assert_allclose(got.numpy().astype(np.float64).ravel(), w["values"], **tol)


def test_gradients_through_the_real_imag_tuples():
    d = inputs("float64")
    w = np.random.default_rng(1).uniform(0.5, 1.5, (2, 3, 6))

    def f(re, im):
        fr, fi = ops.fft2((re, im))
        return fr * em.constant(w) + em.square(fi)

    tape.check_gradients(f, [d["re"], d["im"]], order=2)
    tape.check_gradients(lambda x: ops.irfft(ops.rfft(x, 9), 9), [d["re"]], order=1)

    def spectrogram(x):
        re, im = ops.stft(x, 10, 4, 16)
        return em.sqrt(em.square(re) + em.square(im) + 1e-3)

    tape.check_gradients(spectrogram, [d["sig"][:, :30]], order=1)
    tape.check_gradients(lambda re, im: ops.istft((re, im), 8, 4, 8),
                         [d["re"][:, :, :5], d["im"][:, :, :5]], order=1)


@pytest.mark.parametrize(("call", "match"), [
    (lambda: ops.fft(em.ones([4])), r"nn\.ops\.fft: x must be a tuple of two tensors"),
    (lambda: ops.fft((em.ones([4]), em.ones([3]))), r"nn\.ops\.fft: .* one shape"),
    (lambda: ops.irfft((em.constant([1, 2]), em.constant([1, 2]))), r"must be float tensors"),
    (lambda: ops.stft(em.ones([20]), 8, 4, 4), r"nn\.ops\.stft: fft_length must be >= "
                                                r"sequence_length"),
    (lambda: ops.stft(em.ones([20]), 8, 4, 8, window="blackman"), r'"hann" or "hamming"'),
    (lambda: ops.stft(em.ones([20]), 8, 4, 8, window=em.ones([7])), r"shape \[sequence_length\]"),
    (lambda: ops.istft((em.ones([3, 5]), em.ones([3, 5])), 8, 0, 8), r"must be positive"),
])
def test_refuses_by_name(call, match):
    with pytest.raises(em.InvalidArgumentError, match=match):
        call()


def test_stft_of_an_integer_signal_is_a_type_error():
    with pytest.raises(TypeError, match=r"nn\.ops\.stft: x must be float32 or float64"):
        ops.stft(em.ones([20], em.int32), 8, 4, 8)
