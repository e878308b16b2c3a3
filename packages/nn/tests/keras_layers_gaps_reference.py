"""Keras 3's numbers for three arguments ember's layers once refused: ``groups`` of
Conv1D / Conv2D / Conv3D, ``interpolation`` of UpSampling2D and ``rms_scaling`` of
LayerNormalization, for ``test_layers_gaps.py``.

Run with Keras's own interpreter (never ember's), which writes
``data/keras_layers_gaps.json``::

    KERAS_BACKEND=torch CUDA_VISIBLE_DEVICES= python packages/nn/tests/keras_layers_gaps_reference.py

(``nox -s keras-interop`` makes such an interpreter: Keras 3.15.1 and a CPU torch.) Each case
names a layer, its constructor arguments and an input shape; the input and the weights are
sines (``arr``, no random generator, the same in ember's test): the layer is built, given
the weights ``arr(shape, 10 + i, 0.5)`` in order, and called. The file holds each case's
output, its weights' names and shapes, its ``get_config()`` (less the name and dtype
policy) and the gradient of ``sum(output * arr(output shape, 3))`` with respect to the
input (torch autograd).

UpSampling2D's cases are ``"nearest"`` and ``"bilinear"`` only: Keras's torch backend
resizes ``"bicubic"`` with PyTorch's cubic (a = -0.75), its TensorFlow and JAX backends
(and ember) with Keys' (a = -0.5), and refuses the Lanczos kernels.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np

CASES = {
    "conv1d_groups_3_causal": ("Conv1D", dict(filters=6, kernel_size=3, groups=3,
                                              padding="causal"), (2, 7, 3)),
    "conv1d_groups_2_strided": ("Conv1D", dict(filters=4, kernel_size=2, strides=2, groups=2,
                                               use_bias=False), (2, 8, 4)),
    "conv2d_groups_2_same": ("Conv2D", dict(filters=6, kernel_size=3, groups=2,
                                            padding="same"), (2, 5, 6, 4)),
    "conv2d_groups_depthwise_relu": ("Conv2D", dict(filters=6, kernel_size=(2, 3), groups=3,
                                                    strides=(1, 2), activation="relu"),
                                     (1, 5, 7, 3)),
    "conv2d_groups_channels_first": ("Conv2D", dict(filters=4, kernel_size=2, groups=2,
                                                    dilation_rate=2,
                                                    data_format="channels_first"),
                                     (2, 4, 6, 6)),
    "conv3d_groups_2": ("Conv3D", dict(filters=4, kernel_size=2, groups=2), (1, 3, 4, 4, 4)),
    "conv3d_groups_channels_first": ("Conv3D", dict(filters=6, kernel_size=(1, 2, 2),
                                                    groups=3, padding="same",
                                                    data_format="channels_first"),
                                     (1, 6, 2, 3, 3)),
    "upsampling2d_bilinear": ("UpSampling2D", dict(size=(2, 3), interpolation="bilinear"),
                              (2, 3, 4, 2)),
    "upsampling2d_bilinear_channels_first": ("UpSampling2D", dict(
        size=2, interpolation="bilinear", data_format="channels_first"), (1, 2, 3, 3)),
    "upsampling2d_nearest": ("UpSampling2D", dict(size=(3, 2)), (1, 2, 3, 2)),
    "layer_norm_rms_scaling": ("LayerNormalization", dict(rms_scaling=True), (2, 3, 5)),
    "layer_norm_rms_scaling_no_center_no_scale": ("LayerNormalization", dict(
        rms_scaling=True, center=False, scale=False, epsilon=0.5), (2, 3, 5)),
    "layer_norm_rms_scaling_axes": ("LayerNormalization", dict(rms_scaling=True, axis=[1, 2]),
                                    (2, 3, 4)),
}


def arr(shape, seed, scale=1.0):
    """Sines, the same numbers in both interpreters."""
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.7 + seed) * scale).reshape(shape).astype(np.float32)


def main() -> None:
    import warnings

    import keras
    import torch

    warnings.simplefilter("ignore")  # rms_scaling's deprecation warning
    out = {"keras_version": keras.__version__, "cases": {}}
    for name, (cls, kwargs, shape) in CASES.items():
        layer = getattr(keras.layers, cls)(**kwargs)
        layer.build(shape)
        layer.set_weights([arr(tuple(w.shape), 10 + i, 0.5)
                           for i, w in enumerate(layer.weights)])
        x = torch.tensor(arr(shape, 1), requires_grad=True)
        y = layer(x)
        (y * torch.tensor(arr(tuple(y.shape), 3))).sum().backward()
        out["cases"][name] = {
            "output": y.detach().numpy().tolist(),
            "weights": [[w.path.split("/")[-1], list(w.shape)] for w in layer.weights],
            "config": {k: v for k, v in layer.get_config().items()
                       if k not in ("name", "dtype", "trainable")},
            "input_gradient": x.grad.numpy().tolist()}
    path = pathlib.Path(__file__).parent / "data" / "keras_layers_gaps.json"
    path.write_text(json.dumps(out, indent=None, separators=(",", ":")) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
