"""``nn.activations`` is ``keras.activations``: every function by Keras 3's name, with its
arguments and defaults, computing Keras's values; the same names as strings for a layer's
``activation=``. Expected values and signatures: Keras 3.15.1 (torch backend) on the input
below, pasted from that run."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember import nn

X = np.array([-3.0, -0.5, 0.0, 0.7, 4.0], np.float32)

KERAS = {
    'celu': ('(x, alpha=1.0)', [-0.950213, -0.3934693, 0.0, 0.7, 4.0]),
    'elu': ('(x, alpha=1.0)', [-0.950213, -0.3934693, 0.0, 0.7, 4.0]),
    'exponential': ('(x)', [0.04978707, 0.6065307, 1.0, 2.013753, 54.59815]),
    'gelu': ('(x, approximate=False)', [-0.004050225, -0.1542688, 0.0, 0.5306255, 3.999874]),
    'glu': ('(x, axis=-1)', [-0.3576088, -0.3112297, 0.0, 0.5918744, 3.973229]),
    'hard_shrink': ('(x, threshold=0.5)', [-3.0, 0.0, 0.0, 0.7, 4.0]),
    'hard_sigmoid': ('(x)', [0.0, 0.4166667, 0.5, 0.6166667, 1.0]),
    'hard_silu': ('(x)', [-0.0, -0.2083333, 0.0, 0.4316666, 4.0]),
    'hard_swish': ('(x)', [-0.0, -0.2083333, 0.0, 0.4316666, 4.0]),
    'hard_tanh': ('(x)', [-1.0, -0.5, 0.0, 0.7, 1.0]),
    'leaky_relu': ('(x, negative_slope=0.2)', [-0.6, -0.1, 0.0, 0.7, 4.0]),
    'linear': ('(x)', [-3.0, -0.5, 0.0, 0.7, 4.0]),
    'log_sigmoid': ('(x)', [-3.048587, -0.974077, -0.6931472, -0.4031861, -0.01814993]),
    'log_softmax': ('(x, axis=-1)', [-7.065057, -4.565057, -4.065057, -3.365057, -0.06505689]),
    'mish': ('(x)', [-0.1456475, -0.2207438, 0.0, 0.5611483, 3.997413]),
    'relu': ('(x, negative_slope=0.0, max_value=None, threshold=0.0)', [0.0, 0.0, 0.0, 0.7, 4.0]),
    'relu6': ('(x)', [0.0, 0.0, 0.0, 0.7, 4.0]),
    'selu': ('(x)', [-1.670569, -0.6917582, 0.0, 0.7354907, 4.202804]),
    'sigmoid': ('(x)', [0.04742587, 0.3775407, 0.5, 0.6681877, 0.9820138]),
    'silu': ('(x)', [-0.1422776, -0.1887703, 0.0, 0.4677314, 3.928055]),
    'soft_shrink': ('(x, threshold=0.5)', [-2.5, -0.0, 0.0, 0.2, 3.5]),
    'softmax': ('(x, axis=-1)', [0.0008544463, 0.01040929, 0.01716201, 0.03456005, 0.9370142]),
    'softplus': ('(x)', [0.04858735, 0.474077, 0.6931472, 1.103186, 4.01815]),
    'softsign': ('(x)', [-0.75, -0.3333333, 0.0, 0.4117647, 0.8]),
    'sparse_plus': ('(x)', [0.0, 0.0625, 0.25, 0.7225, 4.0]),
    'sparse_sigmoid': ('(x)', [0.0, 0.25, 0.5, 0.85, 1.0]),
    'squareplus': ('(x, b=4)', [0.3027756, 0.7807764, 1.0, 1.409481, 4.236068]),
    'swish': ('(x)', [-0.1422776, -0.1887703, 0.0, 0.4677314, 3.928055]),
    'tanh': ('(x)', [-0.9950548, -0.4621172, 0.0, 0.6043678, 0.9993293]),
    'tanh_shrink': ('(x)', [-2.004945, -0.03788283, 0.0, 0.0956322, 3.000671]),
    'threshold': ('(x, threshold, default_value)', [-1.0, -1.0, -1.0, 0.7, 4.0]),
}


def _input(name):
    if name in ("softmax", "log_softmax"):
        return X.reshape(1, 5)
    return np.concatenate([X, X + 1]) if name == "glu" else X


@pytest.mark.parametrize("name", sorted(KERAS))
def test_each_activation_is_keras_by_name_signature_and_value(name, backend):
    sig, want = KERAS[name]
    fn = getattr(nn.activations, name)
    assert nn.activations.get(name) is fn
    if name not in ("sigmoid", "tanh"):  # core's ops themselves (the fused cells need them)
        assert _same_parameters(fn, sig)
    kw = {"threshold": 0.5, "default_value": -1.0} if name == "threshold" else {}
    got = fn(em.constant(_input(name)), **kw)
    assert got.dtype == em.float32 and got.device == backend
    assert_allclose(got.numpy().ravel(), want, rtol=2e-6, atol=2e-6)


def _same_parameters(fn, sig):
    """The parameter names and defaults of ``fn`` are those of Keras's ``sig``."""
    ours = [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]
    keras = []
    for part in sig.strip("()").split(", "):
        name, _, default = part.partition("=")
        keras.append((name, inspect.Parameter.empty if not default else eval(default)))
    return ours == keras


def test_gelu_is_exact_here_and_tanh_in_ops_as_in_keras():
    x = em.constant([1.0])
    assert_allclose(nn.activations.gelu(x).numpy(), [0.8413447], rtol=1e-6)
    assert_allclose(nn.ops.gelu(x).numpy(), [0.841192], rtol=1e-5)


def test_a_dense_relu_by_name_or_function_stays_one_fused_op():
    from ember.core.testing import recorded_op_names

    for act in ("relu", nn.activations.relu, em.nn_ops.relu):
        layer = nn.layers.Dense(3, activation=act)
        with recorded_op_names() as names:
            layer(em.ones((2, 4)))
        assert names.count("dense") == 1 and "relu" not in names, (act, names)
        assert nn.activations.serialize(layer.activation) == "relu"


def test_core_twins_save_under_the_activation_name():
    assert nn.activations.name_of(em.nn_ops.swish) == "silu"
    assert nn.activations.name_of(em.nn_ops.relu) == "relu"
    assert nn.activations.name_of(lambda x: x) is None
