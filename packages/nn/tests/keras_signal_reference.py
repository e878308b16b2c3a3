"""Keras 3's numbers for ``keras.ops``' Fourier transforms (fft, fft2, ifft2, rfft, irfft,
stft, istft), for ``test_ops_signal_keras.py``.

Run with Keras's own interpreter (never ember's), which writes
``data/keras_signal.json``::

    KERAS_BACKEND=torch CUDA_VISIBLE_DEVICES= python packages/nn/tests/keras_signal_reference.py

Inputs are seeded numpy arrays rebuilt by ``inputs()`` here and in the test (float32 and
float64); each case is a name, the op, its arguments, and Keras's outputs as lists.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np


def inputs(dtype: str) -> dict[str, np.ndarray]:
    r = np.random.default_rng(7)
    return {
        "re": r.standard_normal((2, 3, 6)).astype(dtype),
        "im": r.standard_normal((2, 3, 6)).astype(dtype),
        "sig": r.standard_normal((2, 50)).astype(dtype),
        "sig1": r.standard_normal((37,)).astype(dtype),
    }


# name -> (op, argument names from inputs() or literals, keyword arguments)
CASES = {
    "fft": ("fft", [("re", "im")], {}),
    "fft2": ("fft2", [("re", "im")], {}),
    "ifft2": ("ifft2", [("re", "im")], {}),
    "rfft": ("rfft", ["re"], {}),
    "rfft_pad": ("rfft", ["re"], {"fft_length": 9}),
    "rfft_crop": ("rfft", ["re"], {"fft_length": 4}),
    "irfft": ("irfft", [("re", "im")], {}),
    "irfft_odd": ("irfft", [("re", "im")], {"fft_length": 7}),
    "stft": ("stft", ["sig", 10, 4, 16], {}),
    "stft_hamming_nocenter": ("stft", ["sig", 8, 3, 8], {"window": "hamming", "center": False}),
    "stft_nowindow": ("stft", ["sig1", 9, 5, 12], {"window": None}),
    "stft_odd_window": ("stft", ["sig1", 7, 2, 10], {}),
    "istft": ("istft_of_stft", ["sig", 10, 4, 16], {}),
    "istft_length": ("istft_of_stft", ["sig", 8, 2, 8], {"length": 40}),
    "istft_nocenter": ("istft_of_stft", ["sig1", 12, 3, 16], {"center": False,
                                                               "window": "hamming"}),
}


def _run() -> dict:
    import keras
    from keras import ops

    out: dict = {"keras": keras.__version__, "cases": {}}
    for dtype in ("float32", "float64"):
        data = inputs(dtype)
        for name, (op, args, kwargs) in CASES.items():
            vals = [tuple(data[p] for p in a) if isinstance(a, tuple)
                    else data[a] if isinstance(a, str) else a for a in args]
            if op == "istft_of_stft":
                spec = ops.stft(*vals, **{k: v for k, v in kwargs.items() if k != "length"})
                res = ops.istft(spec, *vals[1:], **kwargs)
            else:
                res = getattr(ops, op)(*vals, **kwargs)
            res = res if isinstance(res, tuple) else (res,)
            out["cases"][f"{name}-{dtype}"] = [
                {"shape": list(ops.shape(t)), "dtype": str(ops.dtype(t)),
                 "values": ops.convert_to_numpy(t).astype(np.float64).ravel().tolist()}
                for t in res]
    return out


if __name__ == "__main__":
    path = pathlib.Path(__file__).parent / "data" / "keras_signal.json"
    path.write_text(json.dumps(_run()) + "\n")
    print(f"wrote {path}")
