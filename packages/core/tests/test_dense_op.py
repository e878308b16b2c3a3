"""``nn_ops.dense`` (Dense layers, ``xw_plus_b``, ``relu_layer``) on a GPU (the strict
double, with its fake nvmath): a linear layer is one product whose cuBLASLt BIAS epilog
adds the bias, and the kernel's and bias's gradients are one product whose BGRADA epilog
reduces the bias's. The fake refuses what nvmath 1.0.0 refuses for these epilogs. (Its
values and gradients against the separate ops: ember-tape's ``test_dense_rule.py``.)"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember.core.testing._strict_nvmath import NVMATH, without_nvmath


@pytest.fixture
def gpu(strict_gpu_default):  # the double, made the default device
    return strict_gpu_default

rng = np.random.default_rng(3)


def _f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)




def _launches(gpu, fn):
    counters = gpu.backend.counters
    fn()  # plans the products
    counters.reset()
    fn()
    return counters.launches


def test_a_linear_layer_is_one_product_and_its_weight_gradient_one_more(gpu):
    x, w, b = (em.constant(v) for v in (_f32(128, 256), _f32(256, 10), _f32(10)))
    dz = em.constant(_f32(128, 10))
    assert _launches(gpu, lambda: em.nn_ops.xw_plus_b(x, w, b)) == 1  # the bias: epilog
    from ember.core._ops.nn_dense import dense_weight_grad
    # the bias's gradient: BGRADA, whose own kernel follows the GEMM (the H200 ran
    # cuBLASLt's globalKernelBgradAB): no fewer launches than cuBLAS and a reduction
    assert _launches(gpu, lambda: dense_weight_grad(x, dz)) == 2
    with without_nvmath(gpu):  # cupy's product (cuBLAS splits k here), then the bias
        assert _launches(gpu, lambda: em.nn_ops.xw_plus_b(x, w, b)) == 3
        assert _launches(gpu, lambda: dense_weight_grad(x, dz)) == 2


def test_dense_names_what_does_not_fit():
    with pytest.raises(em.InvalidArgumentError, match="activation must be one of"):
        em.nn_ops.dense(_f32(2, 3), _f32(3, 4), _f32(4), "tanh")
    with pytest.raises(em.InvalidArgumentError, match=r"kernel \(4, 4\)"):
        em.nn_ops.dense(_f32(2, 3), _f32(4, 4), _f32(4))
    with pytest.raises(em.InvalidArgumentError, match="bias of shape"):
        em.nn_ops.dense(_f32(2, 3), _f32(3, 4), _f32(3))


def _planned(gpu, a, b, c, **plan):
    xp = gpu.backend.xp
    adv = NVMATH.linalg.advanced
    mm = adv.Matmul(xp.asarray(a), xp.asarray(b), c=c, beta=0.0,
                    options=adv.MatmulOptions(inplace=True))
    mm.plan(**plan)
    return mm


def test_the_fake_refuses_the_epilogs_as_nvmath_1_0_does(gpu):
    xp, adv = gpu.backend.xp, NVMATH.linalg.advanced
    E = adv.MatmulEpilog
    row_c = xp.empty((4, 2), np.float32)
    col_c = xp.empty((2, 4), np.float32).T
    with pytest.raises(ValueError, match="BGRADA requires input matrix 'c' to be F-contiguous"):
        _planned(gpu, _f32(4, 3), _f32(3, 2), row_c, epilog=E.BGRADA)
    with pytest.raises(ValueError, match="requires the following input tensors"):
        _planned(gpu, _f32(4, 3), _f32(3, 2), col_c, epilog=E.BIAS)
    with pytest.raises(ValueError, match="M dimension of the bias vector"):
        _planned(gpu, _f32(4, 3), _f32(3, 2), col_c, epilog=E.BIAS,
                 epilog_inputs={"bias": xp.asarray(_f32(2))})
    with pytest.raises(ValueError, match="stride of the bias"):
        _planned(gpu, _f32(4, 3), _f32(3, 2), col_c, epilog=E.BIAS,
                 epilog_inputs={"bias": xp.asarray(_f32(8))[::2]})
    with pytest.raises(NotImplementedError, match="RELU_BIAS is not modelled"):
        _planned(gpu, _f32(4, 3), _f32(3, 2), col_c, epilog=E.RELU_BIAS,
                 epilog_inputs={"bias": xp.asarray(_f32(4))})
    bias = xp.asarray(_f32(4))
    mm = _planned(gpu, _f32(4, 3), _f32(3, 2), col_c, epilog=E.BIAS,
                  epilog_inputs={"bias": bias})
    mm.release_operands()
    with pytest.raises(ValueError, match="Required: a, b, c, epilog_inputs"):
        mm.reset_operands(a=xp.asarray(_f32(4, 3)), b=xp.asarray(_f32(3, 2)), c=col_c)


def test_the_fake_bgrada_returns_a_summed_over_k(gpu):
    xp, adv = gpu.backend.xp, NVMATH.linalg.advanced
    a, b = _f32(5, 4), _f32(4, 3)
    c = xp.empty((3, 5), np.float32).T
    mm = _planned(gpu, a, b, c, epilog=adv.MatmulEpilog.BGRADA)
    got, aux = mm.execute()
    assert got is c
    assert_allclose(c.get(), a @ b, rtol=1e-5)
    assert_allclose(aux["bgrada"].get(), a.sum(1), rtol=1e-5)


def test_integer_inputs_are_promoted_as_matmul_promotes_them():
    """A Dense layer fed integers (pixels, token counts) computes as ``matmul`` did: the
    integers promoted to the kernel's float32, not refused (the Keras port
    ``preprocessing_layers`` found the refusal)."""
    x = np.arange(6, dtype=np.uint8).reshape(2, 3)
    w, b = _f32(3, 2), _f32(2)
    with em.device("/cpu:0"):
        got = em.nn_ops.dense(x, w, b, "relu")
        want = em.nn_ops.bias_activation(em.matmul(em.constant(x), em.constant(w)), b, "relu")
    assert got.dtype == em.float32
    np.testing.assert_array_equal(got.numpy(), want.numpy())
