"""Keras 3's numbers for ember's ConvLSTM1D, ConvLSTM2D and ConvLSTM3D, for
``test_conv_lstm.py``.

Run with Keras's own interpreter (never ember's), which writes ``data/keras_conv_lstm.json``::

    KERAS_BACKEND=torch CUDA_VISIBLE_DEVICES= python packages/nn/tests/keras_conv_lstm_reference.py

(``nox -s keras-interop`` makes such an interpreter: Keras 3.15.1 and a CPU torch.) Each case
names a layer, its constructor arguments, an input shape and optionally a mask; the input
and the weights are sines (``arr``, no random generator, the same in ember's test): the
layer is built, given the weights ``arr(shape, 10 + i, 0.5)`` in order, and called. The
file holds each case's outputs (a list: the output, then the states with
``return_state``), its weights' names and shapes, its ``get_config()`` (less the name and
dtype policy), and the gradients of ``sum(output_j * arr(output_j shape, 3 + j))`` (over
every output ``j``) with respect to the input and to each weight (torch autograd). Then
the paths and shapes of the ``.weights.h5`` file Keras writes for a ``Sequential`` of an
``Input`` and a ``ConvLSTM2D``.
"""

from __future__ import annotations

import json
import pathlib
import tempfile

import numpy as np

MASK = [[True, True, False, True], [True, False, False, True]]
CASES = {
    "2d_same": ("ConvLSTM2D", dict(filters=2, kernel_size=3, padding="same"),
                (2, 3, 5, 4, 2), None),
    "2d_valid_strided_sequences": ("ConvLSTM2D", dict(filters=3, kernel_size=(3, 2),
                                                      strides=(2, 1), return_sequences=True),
                                   (2, 3, 7, 5, 2), None),
    "2d_state_backwards": ("ConvLSTM2D", dict(filters=2, kernel_size=2, padding="same",
                                              return_sequences=True, return_state=True,
                                              go_backwards=True), (2, 4, 4, 3, 1), None),
    "2d_channels_first_relu": ("ConvLSTM2D", dict(filters=2, kernel_size=3, padding="same",
                                                  data_format="channels_first",
                                                  activation="relu"), (1, 3, 2, 4, 5), None),
    "2d_mask_sequences": ("ConvLSTM2D", dict(filters=2, kernel_size=3, padding="same",
                                             return_sequences=True), (2, 4, 3, 3, 2), MASK),
    "2d_mask_last_nobias": ("ConvLSTM2D", dict(filters=2, kernel_size=(1, 3), use_bias=False),
                            (2, 4, 3, 4, 2), MASK),
    "1d_dilated_hard_sigmoid": ("ConvLSTM1D", dict(filters=2, kernel_size=3, dilation_rate=2,
                                                   padding="same",
                                                   recurrent_activation="hard_sigmoid",
                                                   return_sequences=True),
                                (2, 3, 8, 2), None),
    "1d_strided_channels_first": ("ConvLSTM1D", dict(filters=3, kernel_size=2, strides=2,
                                                     data_format="channels_first",
                                                     return_state=True),
                                  (2, 3, 2, 7), None),
    "3d_valid": ("ConvLSTM3D", dict(filters=2, kernel_size=2, return_sequences=True),
                 (1, 2, 3, 4, 3, 2), None),
    "3d_same_strided": ("ConvLSTM3D", dict(filters=2, kernel_size=(1, 3, 2),
                                           strides=(1, 2, 2), padding="same"),
                        (2, 2, 2, 5, 4, 1), None),
}


def arr(shape, seed, scale=1.0):
    """Sines, the same numbers in both interpreters."""
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.7 + seed) * scale).reshape(shape).astype(np.float32)


def main() -> None:
    import h5py
    import keras
    import torch

    out = {"keras_version": keras.__version__, "cases": {}}
    for name, (cls, kwargs, shape, mask) in CASES.items():
        layer = getattr(keras.layers, cls)(**kwargs)
        layer.build(shape)
        layer.set_weights([arr(tuple(w.shape), 10 + i, 0.5)
                           for i, w in enumerate(layer.weights)])
        x = torch.tensor(arr(shape, 1), requires_grad=True)
        ys = layer(x, mask=None if mask is None else torch.tensor(mask))
        ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
        loss = sum((y * torch.tensor(arr(tuple(y.shape), 3 + j))).sum()
                   for j, y in enumerate(ys))
        weights = [w.value for w in layer.weights]
        grads = torch.autograd.grad(loss, [x] + weights)
        out["cases"][name] = {
            "outputs": [y.detach().numpy().tolist() for y in ys],
            "weights": [[w.path.split("/")[-1], list(w.shape)] for w in layer.weights],
            "config": {k: v for k, v in layer.get_config().items()
                       if k not in ("name", "dtype", "trainable")},
            "input_gradient": grads[0].numpy().tolist(),
            "weight_gradients": [g.numpy().tolist() for g in grads[1:]]}
    model = keras.Sequential([keras.Input((3, 5, 4, 2)),
                              keras.layers.ConvLSTM2D(2, 3, padding="same")])
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "m.weights.h5"
        model.save_weights(path)
        files = {}
        with h5py.File(path, "r") as f:
            f.visititems(lambda k, v: files.__setitem__(k, list(v.shape))
                         if isinstance(v, h5py.Dataset) else None)
    out["weights_h5"] = files
    path = pathlib.Path(__file__).parent / "data" / "keras_conv_lstm.json"
    path.write_text(json.dumps(out, indent=None, separators=(",", ":")) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
