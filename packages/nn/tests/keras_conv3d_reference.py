"""Keras 3's numbers for ember's 3-D layers (Conv3D, Conv3DTranspose, MaxPooling3D,
AveragePooling3D, GlobalMaxPooling3D, GlobalAveragePooling3D, UpSampling3D, ZeroPadding3D,
Cropping3D), for ``test_layers_3d.py``.

Run with Keras's own interpreter (never ember's), which writes ``data/keras_conv3d.json``::

    KERAS_BACKEND=torch CUDA_VISIBLE_DEVICES= python packages/nn/tests/keras_conv3d_reference.py

(``nox -s keras-interop`` makes such an interpreter: Keras 3.15.1 and a CPU torch.) Each case
names a layer, its constructor arguments and an input shape; the input and the weights are
sines (``arr``, no random generator, the same in ember's test): the layer is built, given
the weights ``arr(shape, 10 + i, 0.5)`` in order, and called. The file holds each case's
output, its weights' names and shapes, its ``get_config()`` (less the name and dtype
policy) and, for the layers with weights and the pools, the gradient of
``sum(output * arr(output shape, 3, 1.0))`` with respect to the input (torch autograd).
"""

from __future__ import annotations

import json
import pathlib

import numpy as np

CASES = {
    "conv3d_valid": ("Conv3D", dict(filters=3, kernel_size=2), (2, 3, 4, 5, 2)),
    "conv3d_same_strided_relu": ("Conv3D", dict(filters=2, kernel_size=(3, 2, 3),
                                                strides=(2, 1, 2), padding="same",
                                                activation="relu"), (2, 3, 4, 5, 2)),
    "conv3d_dilated_nobias": ("Conv3D", dict(filters=2, kernel_size=2, dilation_rate=(2, 1, 2),
                                             use_bias=False), (1, 4, 4, 5, 3)),
    "conv3d_channels_first": ("Conv3D", dict(filters=2, kernel_size=3, padding="same",
                                             data_format="channels_first"), (2, 3, 3, 4, 4)),
    "conv3d_transpose_valid": ("Conv3DTranspose", dict(filters=2, kernel_size=2,
                                                       strides=(1, 2, 2)), (2, 2, 3, 3, 3)),
    "conv3d_transpose_same_outpad": ("Conv3DTranspose", dict(
        filters=2, kernel_size=3, strides=2, padding="same", output_padding=1),
        (1, 2, 3, 2, 2)),
    "conv3d_transpose_valid_outpad": ("Conv3DTranspose", dict(
        filters=1, kernel_size=2, strides=(3, 2, 1), output_padding=(2, 1, 0)),
        (1, 2, 2, 3, 2)),
    "conv3d_transpose_dilated_nobias": ("Conv3DTranspose", dict(
        filters=2, kernel_size=2, dilation_rate=(1, 2, 2), use_bias=False), (1, 2, 3, 3, 2)),
    "conv3d_transpose_channels_first": ("Conv3DTranspose", dict(
        filters=2, kernel_size=(2, 3, 2), strides=2, padding="same",
        data_format="channels_first"), (1, 3, 2, 3, 2)),
    "max_pooling3d": ("MaxPooling3D", dict(), (2, 4, 5, 6, 2)),
    "max_pooling3d_same_strided": ("MaxPooling3D", dict(pool_size=3, strides=2,
                                                        padding="same"), (1, 5, 4, 6, 2)),
    "max_pooling3d_channels_first": ("MaxPooling3D", dict(pool_size=(1, 2, 2),
                                                          data_format="channels_first"),
                                     (1, 2, 3, 4, 5)),
    "average_pooling3d_same": ("AveragePooling3D", dict(pool_size=2, padding="same"),
                               (1, 3, 5, 4, 2)),
    "average_pooling3d_overlap": ("AveragePooling3D", dict(pool_size=(2, 2, 1),
                                                           strides=1), (2, 3, 4, 3, 2)),
    # (its "same" padding is symmetric on every axis: where it is not, Keras's torch
    # backend pads by replicating the edge and averages the copies too, which its
    # TensorFlow and JAX backends (and ember, TensorFlow's avg_pool3d) do not; one
    # padded element at the end, as in "average_pooling3d_same", averages the same)
    "average_pooling3d_channels_first": ("AveragePooling3D", dict(
        pool_size=(3, 3, 2), strides=(1, 2, 2), padding="same",
        data_format="channels_first"), (1, 2, 3, 5, 4)),
    "global_max_pooling3d": ("GlobalMaxPooling3D", dict(), (2, 2, 3, 4, 3)),
    "global_max_pooling3d_first_keepdims": ("GlobalMaxPooling3D", dict(
        data_format="channels_first", keepdims=True), (2, 3, 2, 3, 4)),
    "global_average_pooling3d": ("GlobalAveragePooling3D", dict(keepdims=True),
                                 (2, 2, 3, 4, 3)),
    "global_average_pooling3d_first": ("GlobalAveragePooling3D", dict(
        data_format="channels_first"), (2, 3, 2, 3, 4)),
    "upsampling3d": ("UpSampling3D", dict(size=(1, 2, 3)), (1, 2, 2, 3, 2)),
    "upsampling3d_channels_first": ("UpSampling3D", dict(size=2, data_format="channels_first"),
                                    (1, 2, 2, 2, 3)),
    "zero_padding3d": ("ZeroPadding3D", dict(padding=((1, 0), 2, (0, 1))), (1, 2, 2, 3, 2)),
    "zero_padding3d_channels_first": ("ZeroPadding3D", dict(padding=1,
                                                            data_format="channels_first"),
                                      (1, 2, 2, 2, 3)),
    "cropping3d": ("Cropping3D", dict(cropping=((1, 0), 1, (0, 2))), (1, 3, 4, 5, 2)),
    "cropping3d_default_channels_first": ("Cropping3D", dict(data_format="channels_first"),
                                          (1, 2, 3, 4, 5)),
}
GRADIENTS = ("Conv3D", "Conv3DTranspose", "MaxPooling3D", "AveragePooling3D")


def arr(shape, seed, scale=1.0):
    """Sines, the same numbers in both interpreters."""
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.7 + seed) * scale).reshape(shape).astype(np.float32)


def main() -> None:
    import keras
    import torch

    out = {"keras_version": keras.__version__, "cases": {}}
    for name, (cls, kwargs, shape) in CASES.items():
        layer = getattr(keras.layers, cls)(**kwargs)
        layer.build(shape)
        layer.set_weights([arr(tuple(w.shape), 10 + i, 0.5)
                           for i, w in enumerate(layer.weights)])
        x = torch.tensor(arr(shape, 1), requires_grad=True)
        y = layer(x)
        rec = {"output": y.detach().numpy().tolist(),
               "weights": [[w.path.split("/")[-1], list(w.shape)] for w in layer.weights],
               "config": {k: v for k, v in layer.get_config().items()
                          if k not in ("name", "dtype", "trainable")}}
        if cls in GRADIENTS:
            (y * torch.tensor(arr(tuple(y.shape), 3))).sum().backward()
            rec["input_gradient"] = x.grad.numpy().tolist()
        out["cases"][name] = rec
    path = pathlib.Path(__file__).parent / "data" / "keras_conv3d.json"
    path.write_text(json.dumps(out, indent=None, separators=(",", ":")) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
