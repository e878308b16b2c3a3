"""im2col's GPU path (``conv_gather``) on the strict double: the gather kernel's windows
are the host's, and each product of a convolution launches one gather and its GEMM (the
numbers of every geometry: the op table, ``test_conv_algorithms.py``, on strict-gpu)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember.core._ops import conv_gather, conv_im2col, conv_select, conv_winograd
from ember.core._ops.conv_geometry import Geometry
from ember.core.testing import _strict_launches as launches

# (x shape, filter shape, strides, dilations, pads)
GEOMETRIES = {
    "lenet_same_5x5": ((2, 12, 12, 3), (5, 5, 3, 4), (1, 1), (1, 1), ((2, 2), (2, 2))),
    "one_channel": ((2, 9, 7, 1), (3, 2, 1, 2), (2, 1), (1, 1), ((1, 1), (0, 1))),
    "strided_dilated_uneven": ((1, 11, 10, 2), (3, 2, 2, 3), (2, 3), (2, 1), ((0, 3), (2, 0))),
}




def _data(g: Geometry):
    rng = np.random.default_rng(0)
    return (rng.standard_normal(g.x_shape).astype(np.float32),
            rng.standard_normal(g.w_shape).astype(np.float32),
            rng.standard_normal(g.y_shape).astype(np.float32))


@pytest.mark.parametrize("wide", [False, True], ids=["int", "long_long"])
@pytest.mark.parametrize("name", sorted(GEOMETRIES))
def test_the_gathered_windows_are_the_hosts(gpu, monkeypatch, name, wide):
    """Element for element the host's padded window matrix, in both layouts and with
    the index arithmetic in 32 or (past 2**31 elements) 64 bits."""
    if wide:
        monkeypatch.setattr(conv_gather, "_INT_MAX", 8)
    g = Geometry(*GEOMETRIES[name])
    x = _data(g)[0]
    want = np.ascontiguousarray(conv_im2col._windows(np, x, g))
    xp = gpu.backend.xp
    (pt, _), (pl, _) = g.pads
    args = (xp.asarray(x), g.out_hw, g.w_shape[:2], g.strides, g.dilations, (pt, pl))
    assert_array_equal(conv_gather.gather(xp, *args).get(), want)
    kh, kw, c, _ = g.w_shape
    taps = conv_gather.gather(xp, *args, layout="taps").get()
    assert_array_equal(taps, want.reshape(-1, kh * kw, c).transpose(1, 0, 2))


def test_a_dilated_source_reads_zero_between_its_elements(gpu):
    """The input gradient's form: the source dilated by the stride is the host's
    upsampled array (zeros between), taps walking backwards."""
    rng = np.random.default_rng(1)
    dy = rng.standard_normal((2, 4, 3, 2)).astype(np.float32)
    up = np.zeros((2, 7, 7, 2), np.float32)
    up[:, ::2, ::3] = dy
    xp = gpu.backend.xp
    args = ((6, 8), (3, 2), (1, 1), (-2, -1), (-3, -1))
    got = conv_gather.gather(xp, xp.asarray(dy), *args, src_dilation=(2, 3)).get()
    assert_array_equal(got, conv_gather.gather(xp, xp.asarray(up), *args).get())


def _launched(gpu, fn):
    gpu.backend.counters.reset()
    with launches.recording() as rec:
        out = fn()
    names = [n for _, ns in rec for n in ns if n not in launches.TRANSFERS]
    assert len(names) == gpu.backend.counters.launches
    return names, out


def test_each_product_is_one_gather_and_its_product(gpu):
    """LeNet's second layer, batch 64: the forward and the filter gradient gather the
    input's windows, the input gradient the output gradient's after one copy of the
    filter (its channel axes swapped); each then one GEMM (cuBLAS adds a split-K
    reduction to the filter gradient's 12544-deep product), the batch in one chunk."""
    g = Geometry((64, 14, 14, 32), (5, 5, 32, 64), (1, 1), (1, 1), ((2, 2), (2, 2)))
    x, w, dy = (gpu.backend.xp.asarray(a) for a in _data(g))
    xp = gpu.backend.xp
    gather = "ElementwiseKernel"
    fwd, y = _launched(gpu, lambda: conv_im2col.forward(xp, x, w, g))
    assert fwd == [gather, "gemm"]
    bpi, dx = _launched(gpu, lambda: conv_im2col.backprop_input(xp, dy, w, g))
    assert bpi == ["cupy_copy", gather, "gemm"]
    bpf, dw = _launched(gpu, lambda: conv_im2col.backprop_filter(xp, x, dy, g))
    assert bpf == [gather, "gemm", "splitKreduce_kernel"]
    assert (y.shape, dx.shape, dw.shape) == (g.y_shape, g.x_shape, g.w_shape)


def test_winograds_tiles_are_one_gather_and_its_chunks_a_gpus(gpu):
    """LeNet's second input gradient as the H200's autotuner chose it (Winograd): the
    filter's and the tiles' transforms, the products and the output's, one chunk."""
    g = Geometry((64, 14, 14, 32), (5, 5, 32, 64), (1, 1), (1, 1), ((2, 2), (2, 2)))
    _, w, dy = (gpu.backend.xp.asarray(a) for a in _data(g))
    xp = gpu.backend.xp
    names, _ = _launched(gpu, lambda: conv_winograd.backprop_input(xp, dy, w, g))
    assert names.count("ElementwiseKernel") == 1  # the tiles (no pad, no copy)
    assert names.count("gemmBatched") == 1  # one chunk
    assert len(names) <= 8, names
    # its transforms were uploaded once, for this device and dtype: a step uploads
    # nothing (a CUDA graph's capture refuses uploads)
    _launched(gpu, lambda: conv_winograd.backprop_input(xp, dy, w, g))
    assert gpu.backend.counters.from_host == 0


def test_the_host_keeps_its_im2col(monkeypatch):
    """numpy never takes the gather (its padded copies and chunks are faster there)."""
    assert not conv_gather.runs_here(np)
    for name in ("forward", "backprop_input", "backprop_filter"):
        monkeypatch.setattr(conv_gather, name, lambda *a: pytest.fail("GPU path on the host"))
    with em.device("/cpu:0"), em.config.using(conv_algorithm="im2col"):
        x, w = em.ones((1, 6, 6, 4)), em.ones((3, 3, 4, 2))
        y = em.nn_ops.conv2d(x, w, padding="SAME")
        conv_select.conv2d_backprop_input(y, w, x.shape, (1, 1), (1, 1), ((1, 1), (1, 1)))
        conv_select.conv2d_backprop_filter(x, y, w.shape, (1, 1), (1, 1), ((1, 1), (1, 1)))
    # each output counts its window's elements inside the image, times 4 channels
    inside = np.array([2, 3, 3, 3, 3, 2])
    assert_array_equal(y.numpy(), np.outer(inside, inside)[None, :, :, None] * 4
                       * np.ones((1, 1, 1, 2)))


def test_a_pointwise_convolution_is_its_product_alone(gpu, monkeypatch):
    """1x1 filters at stride 1, unpadded: the input is its own window matrix (no gather);
    the same numbers as through the gather."""
    g = Geometry((2, 5, 4, 3), (1, 1, 3, 6), (1, 1), (1, 1), ((0, 0), (0, 0)))
    xp = gpu.backend.xp
    x, w, dy = (xp.asarray(a) for a in _data(g))
    products = [lambda: conv_im2col.forward(xp, x, w, g),
                lambda: conv_im2col.backprop_input(xp, dy, w, g),
                lambda: conv_im2col.backprop_filter(xp, x, dy, g)]
    got = []
    for fn in products:
        names, out = _launched(gpu, fn)
        assert names in (["gemm"], ["gemm", "splitKreduce_kernel"]), names
        got.append(out.get())
    monkeypatch.setattr(conv_gather, "_pointwise", lambda g: False)
    for fn, out in zip(products, got):
        assert_array_equal(fn().get(), out)
