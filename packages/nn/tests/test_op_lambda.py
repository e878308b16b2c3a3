"""ember functions and ops on a functional model's symbolic tensors become nodes of its
graph (``OpLambda``, tf.keras's ``TFOpLambda``): each computes as it would eagerly, trains,
and saves by name."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember import nn
from ember.nn.layers.operations import OpLambda

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 4, 3)).astype(np.float32)

# (name, f): f(x) on the symbolic input of shape (None, 4, 3), and on X eagerly
CALLS = [
    ("squeeze", lambda x: em.squeeze(em.expand_dims(x, -1), -1)),
    ("transpose", lambda x: em.transpose(x, [0, 2, 1])),
    ("matmul", lambda x: em.matmul(x, x, transpose_b=True)),
    ("reduce_sum", lambda x: em.reduce_sum(x, axis=-1)),
    ("reduce_mean keepdims", lambda x: em.reduce_mean(x, axis=1, keepdims=True)),
    ("concat", lambda x: em.concat([x, 2.0 * x], axis=1)),
    ("stack", lambda x: em.stack([x, x], axis=1)),
    ("reshape", lambda x: em.reshape(x, [-1, 12])),
    ("cast", lambda x: em.cast(x, em.float16)),
    ("add (an op)", lambda x: em.add(x, 1.0)),
    ("exp (an op)", lambda x: em.exp(x)),
    ("softmax", lambda x: em.nn_ops.softmax(x, axis=1)),
    ("l2_normalize", lambda x: em.nn_ops.l2_normalize(x, axis=-1)),
    ("tile", lambda x: em.tile(x, [1, 2, 1])),
    ("argmax, one_hot", lambda x: em.one_hot(em.argmax(x, axis=-1), 3)),
    ("where", lambda x: em.where(x > 0, x, 0.0)),
    ("gather", lambda x: em.gather(x, [0, 2], axis=1)),
    ("split", lambda x: em.split(x, 2, axis=1)[1]),
    ("unstack", lambda x: em.unstack(x, axis=1)[3]),
    ("einsum", lambda x: em.einsum("bij,bkj->bik", x, x)),
    ("pad", lambda x: em.pad(x, [[0, 0], [1, 1], [0, 0]])),
    ("indexing", lambda x: x[:, 1:3, ::2]),
    ("linalg", lambda x: em.linalg.matrix_transpose(x)),
]


@pytest.mark.parametrize("f", [f for _, f in CALLS], ids=[n for n, _ in CALLS])
def test_a_function_on_symbolic_tensors_computes_as_eagerly(f):
    inputs = nn.Input((4, 3))
    out = f(inputs)
    want = f(em.constant(X)).numpy()
    assert out.shape[1:] == want.shape[1:] and out.dtype == want.dtype
    model = nn.Model(inputs, out)
    assert_allclose(model(X).numpy(), want, rtol=1e-6)
    assert_allclose(model(X[:1]).numpy(), want[:1], rtol=1e-6)  # any batch


def test_keras_attention_pooling_trains_and_round_trips_through_a_file(tmp_path):
    # CCT's sequence pooling, as keras-io writes it with tf ops on symbolic tensors
    inputs = nn.Input((5, 3))
    representation = nn.layers.Dense(4)(inputs)
    attention_weights = em.nn_ops.softmax(nn.layers.Dense(1)(representation), axis=1)
    weighted = em.matmul(attention_weights, representation, transpose_a=True)
    weighted = em.squeeze(weighted, -2)
    model = nn.Model(inputs, nn.layers.Dense(1)(weighted))

    x = RNG.standard_normal((16, 5, 3)).astype(np.float32)
    y = x.sum(axis=(1, 2))[:, None]
    h = model(em.constant(x[:2]))
    d1, d2 = model.layers[1], model.layers[2]
    r = d1(em.constant(x[:2]))
    a = em.nn_ops.softmax(d2(r), axis=1)
    want = model.layers[-1](em.squeeze(em.matmul(a, r, transpose_a=True), -2))
    assert_allclose(h.numpy(), want.numpy(), rtol=1e-6)

    model.compile(nn.optimizers.Adam(0.05), "mse")
    before = model.evaluate(x, y, verbose=0)
    weights = [w.numpy() for w in d2.trainable_weights]
    model.fit(x, y, epochs=5, batch_size=8, verbose=0)
    assert model.evaluate(x, y, verbose=0) < before
    # the gradient flows through the nodes to the attention's Dense
    assert any(not np.array_equal(w.numpy(), w0) for w, w0 in zip(d2.trainable_weights, weights))

    path = tmp_path / "pooling.keras"
    model.save(path)
    loaded = nn.models.load_model(path)
    assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-6)


def test_a_variable_operand_is_read_on_each_call():
    v = em.Variable(np.ones((3, 2), np.float32))
    inputs = nn.Input((3,))
    model = nn.Model(inputs, em.matmul(inputs, v))
    x = np.ones((1, 3), np.float32)
    assert_allclose(model(x).numpy(), [[3.0, 3.0]])
    v.assign(2 * np.ones((3, 2), np.float32))
    assert_allclose(model(x).numpy(), [[6.0, 6.0]])


def test_what_cannot_be_saved_is_refused_by_name(tmp_path):
    inputs = nn.Input((3,))
    model = nn.Model(inputs, em.matmul(inputs, np.ones((3, 2), np.float32)))
    with pytest.raises(ValueError, match=r"OpLambda 'matmul.*a ndarray of shape \(3, 2\), cannot be saved"):
        model.save(tmp_path / "m.keras")
    assert not (tmp_path / "m.keras").exists()


@pytest.mark.parametrize("config, match", [
    ({"function": "os.system", "arguments": {"args": [], "kwargs": {}}},
     "no public function 'os.system'"),
    ({"op": "no_such_op"}, "no ember op named 'no_such_op'"),
    ({"function": "squeeze", "op": "add"}, "give function= or op="),
    ({"function": "squeeze", "arguments": {"args": [{"input": -1}], "kwargs": {}}},
     "an argument must be"),
    ({"function": "squeeze", "arguments": {"args": [], "kwargs": {"x": {"code": "1"}}}},
     "an argument must be"),
    ({"function": "squeeze", "arguments": {"x": 1}}, "arguments must be"),
])
def test_a_hostile_config_names_no_code(config, match):
    with pytest.raises(ValueError, match=match):
        OpLambda.from_config({"name": "x", **config})


def test_what_still_cannot_take_a_symbolic_tensor_says_so():
    x = nn.Input((3,))
    with pytest.raises(TypeError, match="symbolic tensor of the functional API"):
        np.asarray(x)
    with pytest.raises(TypeError, match="symbolic tensor of the functional API"):
        float(x)


def test_keras_ops_on_symbolic_tensors_make_nodes_too(tmp_path):
    inputs = nn.Input((4, 3))
    out = nn.ops.squeeze(nn.ops.matmul(nn.ops.softmax(inputs, axis=1),
                                       nn.ops.ones((3, 1))), axis=-1)
    model = nn.Model(inputs, out)
    want = np.squeeze(em.nn_ops.softmax(em.constant(X), axis=1).numpy() @ np.ones((3, 1)), -1)
    assert_allclose(model(X).numpy(), want, rtol=1e-6)
    with pytest.raises(ValueError, match="cannot be saved"):  # ones((3, 1)): a constant
        model.save(tmp_path / "m.keras")
    out = nn.ops.mean(nn.ops.squeeze(nn.ops.expand_dims(inputs, -1), -1), axis=1)
    model = nn.Model(inputs, out)
    model.save(tmp_path / "m.keras")
    assert_allclose(nn.models.load_model(tmp_path / "m.keras")(X).numpy(), X.mean(axis=1),
                    rtol=1e-6)


def test_a_call_that_cannot_make_a_node_says_what_to_do():
    with pytest.raises(TypeError, match=r"holds no values.*nn.layers.Lambda"):
        em.constant(nn.Input((3,)))
