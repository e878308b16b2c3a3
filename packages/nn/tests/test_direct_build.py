"""``layer.build(shape)`` called directly builds the layer (Keras 3): the first call keeps
the weights build made, and what was done to them since (keras-io's PixelCNN masks a
kernel right after building it)."""

import numpy as np

from ember import nn


def test_a_built_layer_keeps_its_weights_on_the_first_call():
    conv = nn.layers.Conv2D(2, 3)
    conv.build((None, 5, 5, 1))
    assert conv.built
    kernel = conv.kernel
    conv.kernel.assign(np.zeros(conv.kernel.shape, np.float32))
    out = conv(np.ones((1, 5, 5, 1), np.float32))
    assert conv.kernel is kernel
    np.testing.assert_array_equal(out.numpy(), np.zeros((1, 3, 3, 2), np.float32) +
                                  conv.bias.numpy())


def test_a_custom_layer_building_its_sublayer_in_build_builds_once():
    builds = []

    class Masked(nn.layers.Layer):
        def __init__(self):
            super().__init__()
            self.dense = nn.layers.Dense(3)

        def build(self, input_shape):
            builds.append(input_shape)
            self.dense.build(input_shape)
            self.mask = np.array([1.0, 0.0, 1.0], np.float32)
            self.dense.kernel.assign(self.dense.kernel * self.mask)

        def call(self, x):
            return self.dense(x)

    layer = Masked()
    x = np.ones((2, 4), np.float32)
    y = layer(x)
    layer(x)
    assert len(builds) == 1 and layer.built and layer.dense.built
    np.testing.assert_array_equal(layer.dense.kernel.numpy()[:, 1], np.zeros(4, np.float32))
    np.testing.assert_allclose(y.numpy(), x @ layer.dense.kernel.numpy(), rtol=1e-6)


def test_a_failed_build_leaves_the_layer_unbuilt():
    class Fails(nn.layers.Layer):
        def build(self, input_shape):
            raise ValueError("no")

    layer = Fails()
    try:
        layer.build((None, 2))
    except ValueError:
        pass
    assert not layer.built
