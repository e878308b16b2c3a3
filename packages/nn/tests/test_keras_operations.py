"""Keras 3's operation nodes (``keras.ops`` on symbolic tensors) in a functional model's
config: read as ``nn.layers.operations`` layers, written back in Keras's form.

The config below is the form Keras 3.15 writes for an Embedding(mask_zero=True) whose
mask a pooling layer takes: ``not_equal(ids, 0)`` is a node of the graph
(``nox -s keras-interop`` exchanges such a file with Keras itself: ``masked_attention``).
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import ember.core as em
from ember import nn
from ember.nn.layers import operations

L = nn.layers


def _tensor(name, shape, dtype, node=0):
    return {"class_name": "__keras_tensor__",
            "config": {"shape": shape, "dtype": dtype, "keras_history": [name, node, 0]}}


def _layer(module, class_name, name, config, args, kwargs=None, registered=None):
    return {"module": module, "class_name": class_name, "config": {"name": name, **config},
            "registered_name": registered, "name": name,
            "inbound_nodes": [{"args": args, "kwargs": kwargs or {}}]}


def keras_config(op_module="keras.src.ops.numpy", op_class="NotEqual"):
    """ids -> Embedding -> (+ 1.0) -> GlobalAveragePooling1D(mask=not_equal(ids, 0))."""
    ids = _tensor("ids", [None, 5], "int32")
    return {"name": "pooled", "trainable": True, "layers": [
        {"module": "keras.layers", "class_name": "InputLayer", "name": "ids",
         "config": {"batch_shape": [None, 5], "dtype": "int32", "name": "ids"},
         "registered_name": None, "inbound_nodes": []},
        _layer("keras.layers", "Embedding", "embedding",
               {"input_dim": 10, "output_dim": 3, "mask_zero": True}, [ids]),
        _layer(op_module, op_class, "not_equal", {}, [ids, 0], registered=op_class),
        _layer("keras.src.ops.numpy", "Add", "add", {},
               [_tensor("embedding", [None, 5, 3], "float32"), 1.0], registered="Add"),
        _layer("keras.layers", "GlobalAveragePooling1D", "pool", {},
               [_tensor("add", [None, 5, 3], "float32")],
               {"mask": _tensor("not_equal", [None, 5], "bool")}),
    ], "input_layers": [["ids", 0, 0]], "output_layers": ["pool", 0, 0]}


def test_a_keras_graph_with_operation_nodes_loads_computes_and_saves_back():
    model = nn.Model.from_config(keras_config())
    ids = np.array([[1, 2, 0, 0, 0], [3, 4, 5, 6, 7]], np.int32)
    table = model.get_layer("embedding").embeddings.numpy()
    keep = ids != 0
    want = ((table[ids] + 1.0) * keep[..., None]).sum(1) / keep.sum(1, keepdims=True)
    np.testing.assert_allclose(model.predict(ids, verbose=0), want, rtol=1e-6)
    # an operation node is no layer of model.layers (as in Keras), but a node of the graph
    assert not any(isinstance(layer, operations._Operation) for layer in model.layers)
    saved = {entry["name"]: entry for entry in model.get_config()["layers"]}
    for name, cls in (("not_equal", "NotEqual"), ("add", "Add")):
        assert (saved[name]["module"], saved[name]["class_name"],
                saved[name]["registered_name"], saved[name]["config"]) == (
            "keras.src.ops.numpy", cls, cls, {"name": name})
    assert saved["not_equal"]["inbound_nodes"][0]["args"][1] == 0
    again = nn.Model.from_config(model.get_config())
    again.set_weights(model.get_weights())
    np.testing.assert_array_equal(again.predict(ids, verbose=0), model.predict(ids, verbose=0))


@pytest.mark.parametrize("module, cls", [
    ("keras.src.ops.numpy", "Einsum"),       # an operation ember does not have
    ("keras.src.ops.numpy", "_Operation"),   # the base, not an operation
    ("keras.src.ops.numpy", "Dense"),        # a layer is not an operation
    ("os", "system"),
])
def test_an_operation_ember_does_not_have_is_refused_by_name(module, cls):
    with pytest.raises(ValueError, match=f"unknown class '{module}.{cls}'"):
        nn.Model.from_config(keras_config(module, cls))


def test_an_operation_takes_only_a_name_and_its_arity():
    with pytest.raises(TypeError, match="takes only a name"):
        operations.Add(name="a", axis=1)
    with pytest.raises(TypeError, match="takes 2 arguments, got 1"):
        operations.Add()(em.ones([2]))


def _classes():
    return sorted((name, cls) for name, cls in vars(operations).items()
                  if inspect.isclass(cls) and issubclass(cls, operations._Operation)
                  and cls not in (operations._Operation, operations.OpLambda))


@pytest.mark.parametrize("name, cls", _classes(), ids=[n for n, _ in _classes()])
def test_each_operation_computes_numpy_s_function(name, cls):
    a = np.array([[0.5, 1.5, 2.0], [3.0, 0.25, 1.0]], np.float32)
    b = np.array([[1.0, 1.5, 0.5], [2.0, 0.25, 4.0]], np.float32)
    numpy_fn = {"Add": np.add, "Subtract": np.subtract, "Multiply": np.multiply,
                "Divide": np.divide, "TrueDivide": np.true_divide, "Power": np.power,
                "Maximum": np.maximum, "Minimum": np.minimum, "Equal": np.equal,
                "NotEqual": np.not_equal, "Greater": np.greater,
                "GreaterEqual": np.greater_equal, "Less": np.less,
                "LessEqual": np.less_equal, "LogicalAnd": np.logical_and,
                "LogicalOr": np.logical_or, "LogicalNot": np.logical_not,
                "Negative": np.negative, "Absolute": np.abs, "Sign": np.sign, "Exp": np.exp,
                "Log": np.log, "Sqrt": np.sqrt, "Square": np.square, "Tanh": np.tanh,
                "Sin": np.sin, "Cos": np.cos}[name]
    args = (a, b) if cls.arity == 2 else (a,)
    if name.startswith("Logical"):
        args = tuple(x > 1 for x in args)
    got = cls()(*[em.constant(x) for x in args])
    np.testing.assert_allclose(got.numpy(), numpy_fn(*args), rtol=1e-6)


def test_python_operators_on_symbolic_tensors_make_operation_nodes():
    """``x + inputs`` in a functional model (keras-io's timeseries Transformer writes its
    residuals so): Keras 3 records operation nodes, and so does ember; a number may come
    first (``1.0 - x``)."""
    inp = nn.Input((4,))
    h = L.Dense(4)(inp)
    out = -abs(1.0 - (h + inp) * 2 / 3) ** 2 + (h > 0) * 0.5
    model = nn.Model(inp, out)
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    dense = model.layers[1]  # after the input's InputLayer, as Keras lists them
    hh = x @ dense.kernel.numpy() + dense.bias.numpy()
    want = -np.abs(1.0 - (hh + x) * 2 / 3) ** 2 + (hh > 0) * 0.5
    np.testing.assert_allclose(model.predict(x, verbose=0), want, rtol=1e-5)
    config = model.get_config()
    kinds = [entry["class_name"] for entry in config["layers"]]
    # the order Keras 3.15's get_config gives for the same graph (recorded from it)
    assert kinds == ["InputLayer", "Dense", "Add", "Multiply", "TrueDivide", "Subtract",
                     "Absolute", "Power", "Greater", "Negative", "Multiply", "Add"], kinds
    subtract = next(e for e in config["layers"] if e["class_name"] == "Subtract")
    assert subtract["inbound_nodes"][0]["args"][0] == 1.0  # the number first, as Keras
    for again in (nn.Model.from_config(config), nn.models.clone_model(model)):
        again.set_weights(model.get_weights())
        np.testing.assert_allclose(again.predict(x, verbose=0), want, rtol=1e-5)


def test_what_holds_no_value_is_refused_by_name():
    x = nn.Input((4,))
    for make in (lambda: len(x), lambda: float(x), lambda: bool(x), lambda: list(x),
                 lambda: np.asarray(x)):
        with pytest.raises((TypeError, em.InvalidArgumentError),
                           match="symbolic tensor of the functional API"):
            make()


def test_floordiv_mod_matmul_and_indexing_make_nodes_of_ember_functions():
    x = nn.Input((4,))
    w = np.arange(8, dtype=np.float32).reshape(4, 2)
    outs = [x // 2.0, 7.0 // (x + 10.0), x % 3.0, 5.0 % (x + 10.0), x @ w, x[:, 1:3],
            em.add(x, 1.0)]
    model = nn.Model(x, outs)
    v = np.array([[1.5, -2.0, 7.0, 4.0]], np.float32)
    want = [v // 2.0, 7.0 // (v + 10.0), v % 3.0, 5.0 % (v + 10.0), v @ w, v[:, 1:3], v + 1]
    for got, expected in zip(model(v), want):
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)


def test_a_functional_config_and_weight_paths_follow_keras_s_layer_order():
    """Keras lists a graph's layers by depth (calls to the outputs, deepest first), which
    is not the order ember runs them in on every branch. Recorded from the file Keras
    3.15 writes for keras_twins.functional_operators: the Dense feeding ``-`` comes before
    the one feeding the last ``+``, and its weights are ``layers/dense_1``."""
    import keras_twins

    from ember.nn.saving import _walk

    model = keras_twins.functional_operators(nn)
    entries = model.get_config()["layers"]
    assert [e["class_name"] for e in entries] == [
        "InputLayer", "Dense", "Add", "LayerNormalization", "Multiply", "Subtract", "Dense",
        "Dense", "Negative", "Add"]
    by_name = {e["name"]: e for e in entries}
    negative = next(e for e in entries if e["class_name"] == "Negative")
    feeds_negative = negative["inbound_nodes"][0]["args"][0]["config"]["keras_history"][0]
    assert [e["name"] for e in entries].index(feeds_negative) == 6
    assert by_name[feeds_negative]["class_name"] == "Dense"
    paths = {id(obj): path for path, obj in _walk.saveables(model)}
    assert paths[id(model.get_layer(feeds_negative))] == "layers/dense_1"
    assert not any(p.startswith(("layers/add", "layers/negative")) for p in paths.values())


def test_a_functional_model_lists_its_layers_and_weights_in_keras_s_order():
    """Recorded from Keras 3.15 for keras_twins.functional_branches: ``model.layers`` is
    [input_layer, b1, a, b2, add] and ``model.weights`` b1's, a's, then b2's (the test
    of every twin's model.layers against Keras's runs in test_keras_interop.py). ember ran
    (and listed) ``a`` first, so ``set_weights(keras_model.get_weights())`` swapped the
    same-shaped kernels of ``a`` and ``b1`` without a word. ember's checkpoint paths keep
    the order the layers run in."""
    import keras_twins

    model = keras_twins.functional_branches(nn)
    assert [type(layer).__name__ for layer in model.layers] == [
        "InputLayer", "Dense", "Dense", "Dense", "Add"]
    assert [layer.name for layer in model.layers][1:4] == ["b1", "a", "b2"]
    assert [v.name.split(":")[0] for v in model.weights] == [
        "b1/kernel", "b1/bias", "a/kernel", "a/bias", "b2/kernel", "b2/bias"]
    assert [v.name.split(":")[0] for v in model.trainable_variables] == [
        v.name.split(":")[0] for v in model.weights]
    # the checkpoint paths are the calls' order: a is layers/0 as before
    assert model.variables_by_path()["layers/0/kernel"] is model.get_layer("a").kernel
    values = [np.full(v.shape, i, np.float32) for i, v in enumerate(model.weights)]
    model.set_weights(values)
    assert float(model.get_layer("b1").kernel.numpy()[0, 0]) == 0.0
    assert float(model.get_layer("a").kernel.numpy()[0, 0]) == 2.0


def test_a_number_first_keeps_the_tensor_s_dtype():
    """``1.0 - x`` on a float16 symbolic x: the number is weak, as in Keras (a float32
    tensor made of it would promote the result to float32)."""
    inp = nn.Input((3,), dtype="float16")
    model = nn.Model(inp, 1.0 - inp * 2.0)
    out = model(np.ones((2, 3), np.float16))
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out.numpy(), np.full((2, 3), -1.0, np.float16))
