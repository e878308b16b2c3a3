"""Max pooling's gradient goes to each window's first element (row-major) equal to its
maximum, as TensorFlow's MaxPoolGrad and PyTorch's: an equal share among tied elements
(reduce_max's rule) differed from both wherever windows tie (a digit's black background),
on the tiled path and the general one (overlapping, padded windows) alike."""

import numpy as np
import pytest

import ember.core as em
from ember import tape

RNG = np.random.default_rng(0)
TIED = np.round(RNG.random((2, 7, 8, 3)) * 3).astype(np.float32)  # many ties


def _grad(x, ksize, strides, padding):
    xe = em.constant(x)
    w = em.constant(RNG.random(em.nn_ops.max_pool2d(xe, ksize, strides, padding).shape)
                    .astype(np.float32))
    with tape.GradientTape() as g:
        g.watch(xe)
        loss = em.reduce_sum(em.nn_ops.max_pool2d(xe, ksize, strides, padding) * w)
    return g.gradient(loss, xe).numpy(), w.numpy()


def test_the_first_maximum_takes_the_gradient():
    if True:  # on each test backend (conftest)
        x = em.constant(np.array([[1.0, 2.0], [2.0, 2.0]], np.float32).reshape(1, 2, 2, 1))
        with tape.GradientTape() as g:
            g.watch(x)
            y = em.nn_ops.max_pool2d(x, 2, 2, "VALID")  # (the tiled path)
        np.testing.assert_array_equal(g.gradient(y, x).numpy()[0, :, :, 0], [[0, 1], [0, 0]])
        # the general path (overlapping windows) too: a constant image sends each window's
        # gradient to its top-left element
        x = em.ones((1, 3, 3, 1))
        with tape.GradientTape() as g:
            g.watch(x)
            y = em.nn_ops.max_pool2d(x, 2, 1, "VALID")
        np.testing.assert_array_equal(g.gradient(y, x).numpy()[0, :, :, 0],
                                      [[1, 1, 0], [1, 1, 0], [0, 0, 0]])


@pytest.mark.parametrize("ksize,strides,padding,torch_pad", [
    ((2, 2), (2, 2), "VALID", (0, 0, 0, 0)), ((3, 3), (2, 2), "VALID", (0, 0, 0, 0)),
    ((3, 3), (2, 2), "SAME", (0, 1, 1, 1)), ((2, 2), (1, 1), "VALID", (0, 0, 0, 0))])
def test_tied_windows_match_torch(ksize, strides, padding, torch_pad):
    torch = pytest.importorskip("torch")
    got, w = _grad(TIED, ksize, strides, padding)
    tx = torch.tensor(TIED).permute(0, 3, 1, 2).requires_grad_(True)
    padded = torch.nn.functional.pad(tx, torch_pad, value=-float("inf"))
    ty = torch.nn.functional.max_pool2d(padded, ksize, strides)
    (ty * torch.tensor(w).permute(0, 3, 1, 2)).sum().backward()
    np.testing.assert_allclose(got, tx.grad.permute(0, 2, 3, 1).numpy(), atol=1e-6)
