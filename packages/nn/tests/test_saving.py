"""model.save / nn.models.load_model, save_weights / load_weights, get_config/from_config
and clone_model: Keras 3's files and forms, and training that resumes bit for bit.

Every test runs on the CPU and on the strict GPU double (conftest): a model saved from
either device loads on it and continues with the numbers it would have computed.
"""

import json
import os
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember import nn

L = nn.layers
RNG = np.random.default_rng(0)
X = RNG.standard_normal((24, 4)).astype(np.float32)
Y = RNG.standard_normal((24, 3)).astype(np.float32)


def _sequential(optimizer=None):
    model = nn.Sequential([L.Dense(8, activation="relu", input_shape=(4,)), L.Dropout(0.3),
                           L.Dense(8, kernel_regularizer=nn.regularizers.L2(1e-3)),
                           L.Dropout(0.2, seed=11), L.Dense(3)])
    model.compile(optimizer or nn.optimizers.Adam(
        nn.optimizers.ExponentialDecay(0.01, 3, 0.5)), "mse", metrics=["mae"])
    return model


def _functional():
    a, b = nn.Input((4,), name="a"), nn.Input((4,), name="b")
    shared = L.Dense(5, activation="tanh", name="shared")
    merged = L.Concatenate(name="cat")([shared(a), shared(b)])
    h = L.BatchNormalization(name="bn")(merged)
    out1 = L.Dense(3, name="out1")(h)
    out2 = L.Dense(1, name="out2")(L.Dropout(0.25, name="drop")(h))
    model = nn.Model([a, b], [out1, out2], name="two_heads")
    model.compile(nn.optimizers.RMSprop(0.01, momentum=0.5, centered=True),
                  loss=["mse", "mae"], loss_weights=[1.0, 0.5])
    return model


@nn.saving.register_keras_serializable(package="TestSaving")
class Residual(nn.Model):
    def __init__(self, units=6, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.inner = L.Dense(units, activation="relu")
        self.blocks = [L.Dense(units), L.Dense(units)]
        self.head = L.Dense(3)

    def call(self, x, training=None):
        h = self.inner(x)
        for block in self.blocks:
            h = h + block(h)
        return self.head(h)

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def _subclassed():
    model = Residual(units=6, name="res")
    model.compile(nn.optimizers.SGD(0.05, momentum=0.9, nesterov=True), "mse")
    return model


def _two(model):
    return isinstance(model, nn.Functional) and len(model.inputs) == 2


def _inputs(model):
    return [X, X[::-1].copy()] if _two(model) else X


def _fit(model, epochs=1):
    targets = [Y, Y[:, :1]] if _two(model) else Y
    model.fit(_inputs(model), targets, batch_size=8, epochs=epochs, verbose=0)


def _predictions(model):
    out = model.predict(_inputs(model), verbose=0)
    return out if isinstance(out, list) else [out]


def _same_weights(a, b):
    wa, wb = a.get_weights(), b.get_weights()
    assert len(wa) == len(wb)
    for u, v in zip(wa, wb):
        assert u.dtype == v.dtype and u.shape == v.shape
        assert_array_equal(u, v)


@pytest.mark.parametrize("make", [_sequential, _functional, _subclassed],
                         ids=["sequential", "functional", "subclassed"])
def test_training_resumes_bit_for_bit_after_load_model(make, tmp_path):
    """Save after k steps, load, train on: every weight, slot and the step count equal
    what the saved model reached by training on (iterations, the schedule, Adam's or
    RMSprop's slots, both dropout streams, fit's shuffles)."""
    em.random.set_seed(3)
    model = make()
    _fit(model, epochs=2)
    path = tmp_path / "m.keras"
    model.save(path)
    _fit(model, epochs=2)
    loaded = nn.models.load_model(path)
    assert type(loaded) is type(model) and loaded.name == model.name
    _fit(loaded, epochs=2)
    _same_weights(loaded, model)
    assert int(loaded.optimizer.iterations.numpy()) == int(model.optimizer.iterations.numpy())
    slots = [s.numpy() for s in _optimizer_slots(model)]
    again = [s.numpy() for s in _optimizer_slots(loaded)]
    assert len(slots) == len(again) > 0 or isinstance(model.optimizer, nn.optimizers.SGD)
    for u, v in zip(slots, again):
        assert_array_equal(u, v)
    for u, v in zip(_predictions(loaded), _predictions(model)):
        assert_array_equal(u, v)


def _optimizer_slots(model):
    opt = model.optimizer
    return [opt._slots[v.uid][n] for v in model.trainable_variables
            for n in sorted(opt._slots.get(v.uid, {}))]


def test_a_changed_learning_rate_and_momentum_slots_are_saved(tmp_path):
    em.random.set_seed(0)
    model = _sequential(nn.optimizers.SGD(0.1, momentum=0.9))
    _fit(model)
    model.optimizer.learning_rate.assign(0.02)
    model.save(tmp_path / "m.keras")
    loaded = nn.models.load_model(tmp_path / "m.keras")
    assert np.float32(loaded.optimizer.learning_rate.numpy()) == np.float32(0.02)
    assert loaded.optimizer.get_config() == model.optimizer.get_config()
    _fit(model)
    again = nn.models.load_model(tmp_path / "m.keras")  # the saved random state again
    _fit(again)
    _same_weights(again, model)
    assert_array_equal(again.optimizer.get_slot(again.layers[0].kernel, "momentum").numpy(),
                       model.optimizer.get_slot(model.layers[0].kernel, "momentum").numpy())


def test_the_file_is_keras_3s_layout(tmp_path):
    model = _sequential(nn.optimizers.Adam(0.01))
    _fit(model)
    path = tmp_path / "m.keras"
    model.save(path)
    with zipfile.ZipFile(path) as zf:
        assert sorted(zf.namelist()) == ["config.json", "metadata.json", "model.weights.h5"]
        assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())
        config = json.loads(zf.read("config.json"))
        meta = json.loads(zf.read("metadata.json"))
        weights = zf.read("model.weights.h5")
    assert meta["keras_version"].startswith("3.") and "date_saved" in meta
    assert (config["module"], config["class_name"]) == ("keras", "Sequential")
    assert config["registered_name"] is None
    layers = config["config"]["layers"]
    assert [entry["class_name"] for entry in layers] == [
        "InputLayer", "Dense", "Dropout", "Dense", "Dropout", "Dense"]
    assert layers[1]["module"] == "keras.layers" and layers[1]["config"]["units"] == 8
    assert layers[3]["config"]["kernel_regularizer"]["class_name"] == "L2"
    assert config["config"]["build_input_shape"] == [None, 4]
    compiled = config["compile_config"]
    assert compiled["optimizer"]["class_name"] == "Adam"
    assert compiled["optimizer"]["config"]["beta_2"] == 0.999 and compiled["loss"] == "mse"
    import io

    import h5py

    with h5py.File(io.BytesIO(weights), "r") as f:
        assert f["vars"].attrs["name"] == model.name
        kernel = f["layers/dense/vars/0"][()]
        assert_array_equal(kernel, model.layers[0].kernel.numpy())
        assert_array_equal(f["layers/dense_2/vars/1"][()], model.layers[4].bias.numpy())
        assert "layers/dropout/vars" in f and len(f["layers/dropout/vars"]) == 0
        opt = f["optimizer/vars"]
        assert opt.attrs["name"] == "Adam"
        assert int(opt["0"][()]) == int(model.optimizer.iterations.numpy()) == 3
        assert np.float32(opt["1"][()]) == np.float32(0.01)
        # Adam's slots as Keras lists them: (m, v) of each variable in turn
        k0 = model.layers[0].kernel
        assert_array_equal(opt["2"][()], model.optimizer.get_slot(k0, "m").numpy())
        assert_array_equal(opt["3"][()], model.optimizer.get_slot(k0, "v").numpy())
        assert len(opt) == 2 + 2 * len(model.trainable_variables)


def test_save_weights_and_load_weights_h5_safetensors_and_keras(tmp_path):
    em.random.set_seed(1)
    model = _functional()
    _fit(model)
    model.save_weights(tmp_path / "w.weights.h5")
    model.save_weights(tmp_path / "w.safetensors")
    model.save(tmp_path / "m.keras")
    for name in ("w.weights.h5", "w.safetensors", "m.keras"):
        other = _functional()
        other([X, X])  # built already (functional); the call changes nothing
        other.load_weights(tmp_path / name)
        _same_weights(other, model)
        assert int(other.optimizer.iterations.numpy()) == 3  # built and loaded, as Keras
        for u, v in zip(_optimizer_slots(model), _optimizer_slots(other)):
            assert_array_equal(u.numpy(), v.numpy())
    uncompiled = nn.models.clone_model(model)
    uncompiled.load_weights(tmp_path / "w.weights.h5")  # no optimizer: its group is ignored
    _same_weights(uncompiled, model)


def test_load_weights_checks_everything_before_assigning(tmp_path):
    model = nn.Sequential([L.Dense(4, input_shape=(3,)), L.Dense(2)])
    model.save_weights(tmp_path / "w.weights.h5")
    wrong = nn.Sequential([L.Dense(4, input_shape=(3,)), L.Dense(5)])
    before = wrong.get_weights()
    with pytest.raises(ValueError, match=r"w\.weights\.h5.*layers/dense_1/vars/0 has shape "
                                         r"\(4, 2\).*\(4, 5\)"):
        wrong.load_weights(tmp_path / "w.weights.h5")
    for u, v in zip(before, wrong.get_weights()):
        assert_array_equal(u, v)  # the first layer fitted, but nothing was assigned
    with pytest.warns(UserWarning, match="skip_mismatch"):
        wrong.load_weights(tmp_path / "w.weights.h5", skip_mismatch=True)
    assert_array_equal(wrong.layers[0].kernel.numpy(), model.layers[0].kernel.numpy())
    shorter = nn.Sequential([L.Dense(4, input_shape=(3,))])
    with pytest.raises(ValueError, match=r"holds weights for \['layers/dense_1'\]"):
        shorter.load_weights(tmp_path / "w.weights.h5")
    longer = nn.Sequential([L.Dense(4, input_shape=(3,)), L.Dense(2), L.Dense(1)])
    with pytest.raises(ValueError, match="layers/dense_2.*has 2 variables, the file holds 0"):
        longer.load_weights(tmp_path / "w.weights.h5")
    with pytest.raises(ValueError, match="not been built"):
        nn.Sequential([L.Dense(2)]).load_weights(tmp_path / "w.weights.h5")
    with pytest.raises(ValueError, match=r"must end in `\.weights\.h5`"):
        model.save_weights(tmp_path / "w.h5")
    with pytest.raises(ValueError, match="max_shard_size"):
        model.save_weights(tmp_path / "w.weights.h5", max_shard_size=1)
    with pytest.raises(FileExistsError, match="overwrite=False"):
        model.save_weights(tmp_path / "w.weights.h5", overwrite=False)


def test_save_and_load_model_refuse_what_they_cannot_do(tmp_path):
    model = _sequential()
    with pytest.raises(ValueError, match=r"expected a `\.keras` file"):
        model.save(tmp_path / "m.tf")
    with pytest.raises(ValueError, match=r"Keras 2's whole-model \.h5"):
        model.save(tmp_path / "m.h5")
    with pytest.raises(ValueError, match="zipped=False"):
        model.save(tmp_path / "m.keras", zipped=False)
    with pytest.raises(ValueError, match="save_format"):
        model.save(tmp_path / "m.keras", save_format="tf")
    model.save(tmp_path / "m.keras")
    with pytest.raises(FileExistsError, match="overwrite=False"):
        model.save(tmp_path / "m.keras", overwrite=False)
    with pytest.raises(ValueError, match="holds weights only"):
        nn.models.load_model(tmp_path / "m.weights.h5")
    with pytest.raises(ValueError, match="file format not supported"):
        nn.models.load_model(tmp_path / "m.h5")
    with pytest.raises(TypeError, match="compile must be a bool"):
        nn.models.load_model(tmp_path / "m.keras", compile="yes")


def test_compile_false_loads_an_uncompiled_model(tmp_path):
    model = _sequential()
    _fit(model)
    model.save(tmp_path / "m.keras")
    loaded = nn.models.load_model(tmp_path / "m.keras", compile=False)
    assert getattr(loaded, "optimizer", None) is None
    _same_weights(loaded, model)
    assert_array_equal(loaded.predict(X, verbose=0), model.predict(X, verbose=0))


def test_functional_config_round_trips_in_keras_form():
    model = _functional()
    config = json.loads(json.dumps(model.get_config()))  # JSON-able, as a file holds it
    assert config["input_layers"] == [["a", 0, 0], ["b", 0, 0]]
    assert config["output_layers"] == [["out1", 0, 0], ["out2", 0, 0]]
    by_name = {entry["name"]: entry for entry in config["layers"]}
    assert by_name["a"]["class_name"] == "InputLayer"
    assert by_name["a"]["config"]["batch_shape"] == [None, 4]
    shared_calls = by_name["shared"]["inbound_nodes"]  # one layer, called twice
    assert [c["args"][0]["config"]["keras_history"] for c in shared_calls] == [
        ["a", 0, 0], ["b", 0, 0]]
    cat = by_name["cat"]["inbound_nodes"][0]["args"][0]
    assert [t["config"]["keras_history"] for t in cat] == [["shared", 0, 0], ["shared", 1, 0]]
    again = nn.Model.from_config(config)
    assert type(again) is nn.Functional and again.name == "two_heads"
    assert again.input_names == ["a", "b"] and again.output_names == ["out1", "out2"]
    assert [type(x).__name__ for x in again.layers] == [type(x).__name__ for x in model.layers]
    assert json.loads(json.dumps(again.get_config())) == config
    again.set_weights(model.get_weights())
    for u, v in zip(again([X, X]), model([X, X])):
        assert_array_equal(u.numpy(), v.numpy())


def test_functional_config_replays_keyword_tensors_and_nested_models():
    enc_in = nn.Input((5, 3), name="enc")
    _, h, c = L.LSTM(4, return_state=True, name="encoder")(enc_in)
    dec_in = nn.Input((5, 3), name="dec")
    seq = L.LSTM(4, return_sequences=True, name="decoder")(dec_in, initial_state=[h, c])
    inner = nn.Sequential([L.Dense(3, input_shape=(4,)), L.Dense(2)], name="inner")
    out = L.TimeDistributed(inner, name="per_step")(seq)
    model = nn.Model([enc_in, dec_in], out)
    config = json.loads(json.dumps(model.get_config()))
    decoder = next(e for e in config["layers"] if e["name"] == "decoder")
    states = decoder["inbound_nodes"][0]["kwargs"]["initial_state"]
    assert [s["config"]["keras_history"] for s in states] == [["encoder", 0, 1],
                                                               ["encoder", 0, 2]]
    again = nn.Model.from_config(config)
    again.set_weights(model.get_weights())
    x = RNG.standard_normal((2, 5, 3)).astype(np.float32)
    assert_array_equal(again([x, x]).numpy(), model([x, x]).numpy())


def test_clone_model_of_functional_and_subclassed_models():
    model = _functional()
    clone = nn.models.clone_model(model)
    assert type(clone) is nn.Functional and clone.count_params() == model.count_params()
    assert not any(a is b for a, b in zip(clone.variables, model.variables))
    clone.set_weights(model.get_weights())
    for u, v in zip(clone([X, X]), model([X, X])):
        assert_array_equal(u.numpy(), v.numpy())
    seen = []

    def call(layer, *args, **kwargs):
        seen.append(layer.name)
        return layer(*args, **kwargs)

    relu = nn.models.clone_model(model, call_function=call, clone_function=lambda layer: (
        L.Dense(layer.units, activation="relu", name=layer.name)
        if isinstance(layer, L.Dense) else type(layer).from_config(layer.get_config())))
    assert seen == [n.layer.name for n in model._ember.extra["functional"][2]]
    assert relu.get_layer("out1").get_config()["activation"] == "relu"
    new_a, new_b = nn.Input((4,), name="p"), nn.Input((4,), name="q")
    on_inputs = nn.models.clone_model(model, input_tensors=[new_a, new_b])
    assert on_inputs.inputs == [new_a, new_b]
    sub = _subclassed()
    sub(X)
    cloned = nn.models.clone_model(sub)
    assert type(cloned) is Residual and cloned.units == 6
    with pytest.raises(ValueError, match="subclassed"):
        nn.models.clone_model(sub, clone_function=lambda layer: layer)


def test_to_json_and_model_from_json():
    model = _functional()
    again = nn.models.model_from_json(model.to_json())
    assert again.get_config() == model.get_config()
    with pytest.raises(ValueError, match="not a JSON model config"):
        nn.models.model_from_json("{")


def test_a_subclassed_model_needs_its_class_registered_or_given(tmp_path):
    class Plain(nn.Model):  # not registered
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense = L.Dense(2)

        def call(self, x):
            return self.dense(x)

    model = Plain(name="plain")
    model(X)
    model.save(tmp_path / "p.keras")
    with pytest.raises(ValueError, match=r"unknown class '[\w.]*Plain'.*never imports"):
        nn.models.load_model(tmp_path / "p.keras")
    loaded = nn.models.load_model(tmp_path / "p.keras", custom_objects={"Plain": Plain})
    _same_weights(loaded, model)
    with nn.saving.custom_object_scope({"Plain": Plain}):
        assert type(nn.models.load_model(tmp_path / "p.keras")) is Plain


def test_a_subclassed_model_of_integer_inputs_is_built_with_their_dtype(tmp_path):
    @nn.saving.register_keras_serializable(package="TestSaving")
    class Bag(nn.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.embed = L.Embedding(10, 3)
            self.out = L.Dense(1)

        def call(self, ids):
            return self.out(em.reduce_mean(self.embed(ids), axis=1))

    model = Bag()
    ids = np.array([[1, 2, 3], [4, 5, 9]], np.int32)
    model(ids)
    assert model.get_build_config() == {"input_shape": [None, 3], "input_dtype": "int32"}
    model.save(tmp_path / "b.keras")
    loaded = nn.models.load_model(tmp_path / "b.keras")
    assert_array_equal(loaded(ids).numpy(), model(ids).numpy())


def test_a_lambda_layer_is_saved_by_its_registered_name(tmp_path):
    @nn.saving.register_keras_serializable(package="TestSaving")
    def double(x):
        return x * 2.0

    inp = nn.Input((4,))
    model = nn.Model(inp, L.Lambda(double)(L.Dense(3)(inp)))
    model.save(tmp_path / "l.keras")
    with zipfile.ZipFile(tmp_path / "l.keras") as zf:
        text = zf.read("config.json").decode()
    fn = next(e for e in json.loads(text)["config"]["layers"]
              if e["class_name"] == "Lambda")["config"]["function"]
    assert fn["class_name"] == "function" and fn["registered_name"] == "TestSaving>double"
    assert "__lambda__" not in text and '"code"' not in text  # a name, never bytecode
    loaded = nn.models.load_model(tmp_path / "l.keras")
    assert_array_equal(loaded(X).numpy(), model(X).numpy())

    anonymous = nn.Model(inp, L.Lambda(lambda t: t * 3.0)(inp))
    with pytest.raises(ValueError, match="a lambda cannot be saved"):
        anonymous.save(tmp_path / "a.keras")
    assert not (tmp_path / "a.keras").exists()

    def triple(x):  # named but not registered: custom_objects finds it by name
        return x * 3.0

    named = nn.Model(inp, L.Lambda(triple)(inp))
    named.save(tmp_path / "n.keras")
    with pytest.raises(ValueError, match=r"unknown function '[\w.]*triple'"):
        nn.models.load_model(tmp_path / "n.keras")
    again = nn.models.load_model(tmp_path / "n.keras", custom_objects={"triple": triple})
    assert_array_equal(again(X).numpy(), X * 3.0)


def test_recurrent_configs_resolve_cells_through_the_registry_only():
    layer = L.RNN([L.LSTMCell(2), L.GRUCell(3)], return_sequences=True)
    config = json.loads(json.dumps(layer.get_config()))
    cells = config["cell"]["config"]["cells"]
    assert [c["module"] for c in cells] == ["keras.layers", "keras.layers"]
    again = L.RNN.from_config(config)
    assert [type(c).__name__ for c in again.cell.cells] == ["LSTMCell", "GRUCell"]
    # ember's old form (the module a class lives in) still names ember's own cells
    old = {"module": "ember.nn.layers.rnn_cells", "class_name": "SimpleRNNCell",
           "config": {"units": 2}}
    assert type(L.RNN.from_config({"cell": old}).cell).__name__ == "SimpleRNNCell"
    for module, name in (("os", "system"), ("builtins", "eval"), ("subprocess", "Popen"),
                         ("ember.nn.layers.recurrent", "importlib"), ("keras.layers", "np")):
        hostile = {"module": module, "class_name": name, "config": {"units": 2}}
        with pytest.raises(ValueError, match="never imports"):
            L.RNN.from_config({"cell": hostile})

    @nn.saving.register_keras_serializable(package="TestSaving")
    class MinimalCell(L.Layer):
        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.units, self.state_size = units, units

        def build(self, input_shape):
            self.w = self.add_weight("w", (input_shape[-1], self.units))

        def call(self, x, states):
            h = em.matmul(x, self.w) + states[0]
            return h, [h]

    rnn = L.RNN(MinimalCell(2))
    assert type(L.RNN.from_config(json.loads(json.dumps(rnn.get_config()))).cell) \
        is MinimalCell


def test_a_save_that_fails_leaves_the_old_file_whole(tmp_path, monkeypatch):
    model = _sequential()
    path = tmp_path / "m.keras"
    model.save(path)
    before = path.read_bytes()
    from ember.nn.saving import _h5

    def broken(groups):
        raise OSError("disk full (injected)")

    monkeypatch.setattr(_h5, "write", broken)
    _fit(model)
    with pytest.raises(OSError, match="injected"):
        model.save(path)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["m.keras"]  # no temporary file left


def test_a_save_killed_half_way_leaves_the_old_file_whole(tmp_path):
    """A child process saves over a file and is killed (os._exit, as SIGKILL would) while
    its new file is half written: the old file loads as it was."""
    path = tmp_path / "m.keras"
    script = textwrap.dedent(f"""
        import os, sys
        import numpy as np
        from ember import nn
        model = nn.Sequential([nn.layers.Dense(64, input_shape=(64,))])
        model.save({str(path)!r})
        print("saved", flush=True)
        model.layers[0].kernel.assign(np.zeros((64, 64), np.float32))
        real = os.fsync
        def die(fd):
            os._exit(9)  # killed after writing, before the file is made final
        os.fsync = die
        model.save({str(path)!r})
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 9, run.stderr
    assert "saved" in run.stdout
    loaded = nn.models.load_model(path)
    assert np.abs(loaded.layers[0].kernel.numpy()).sum() > 0  # the first save's weights
    leftovers = [n for n in os.listdir(tmp_path) if n != "m.keras"]
    assert leftovers and all(n.endswith(".ember-tmp") for n in leftovers)


def test_metrics_losses_and_schedules_survive_compile_config(tmp_path):
    model = nn.Sequential([L.Dense(3, input_shape=(4,))])
    model.compile(nn.optimizers.Adam(nn.optimizers.CosineDecay(0.1, 50, alpha=0.1)),
                  loss=nn.losses.CategoricalCrossentropy(from_logits=True,
                                                         label_smoothing=0.1),
                  metrics=[nn.metrics.CategoricalAccuracy(name="acc"), "mae"])
    model.save(tmp_path / "m.keras")
    loaded = nn.models.load_model(tmp_path / "m.keras")
    schedule = loaded.optimizer._hypers["learning_rate"]
    assert type(schedule).__name__ == "CosineDecay" and schedule.alpha == 0.1
    loss = loaded._ember.extra["loss_fn"]
    assert loss.from_logits and loss.label_smoothing == 0.1
    assert [m.name for m in loaded.compiled_metrics] == ["acc", "mae"]


LAYERS = {
    "Dense": (lambda: L.Dense(3, activation="tanh", kernel_regularizer="l2",
                              kernel_constraint=nn.constraints.MaxNorm(2.0)), (4,)),
    "Conv2D": (lambda: L.Conv2D(2, 3, padding="same", activation="relu"), (6, 6, 2)),
    "Conv1D": (lambda: L.Conv1D(2, 3), (7, 2)),
    "Conv2DTranspose": (lambda: L.Conv2DTranspose(2, 3, strides=2), (4, 4, 2)),
    "DepthwiseConv2D": (lambda: L.DepthwiseConv2D(3, depth_multiplier=2, padding="same",
                                                  activation="relu"), (5, 5, 2)),
    "SeparableConv2D": (lambda: L.SeparableConv2D(3, 3, strides=2, depth_multiplier=2,
                                                  data_format="channels_first"), (2, 6, 6)),
    "BatchNormalization": (lambda: L.BatchNormalization(momentum=0.5), (4,)),
    "LayerNormalization": (lambda: L.LayerNormalization(), (5, 4)),
    "Embedding": (lambda: L.Embedding(10, 3, mask_zero=True), (5,)),
    "LSTM": (lambda: L.LSTM(3, return_sequences=True), (5, 2)),
    "GRU": (lambda: L.GRU(3, reset_after=False), (5, 2)),
    "SimpleRNN": (lambda: L.SimpleRNN(3), (5, 2)),
    "StackedRNNCells": (lambda: L.RNN([L.LSTMCell(2), L.GRUCell(3)]), (5, 2)),
    "Bidirectional": (lambda: L.Bidirectional(L.LSTM(2, return_sequences=True)), (5, 2)),
    "TimeDistributed": (lambda: L.TimeDistributed(L.Dense(2)), (5, 3)),
    "MaxPooling2D": (lambda: L.MaxPooling2D(2), (4, 4, 1)),
    "UpSampling2D": (lambda: L.UpSampling2D(2), (2, 2, 1)),
    "Masking": (lambda: L.Masking(0.0), (3, 2)),
    "LeakyReLU": (lambda: L.LeakyReLU(0.2), (3,)),
    "ReLU": (lambda: L.ReLU(max_value=1.0, negative_slope=0.1, threshold=0.2), (3,)),
    "Activation": (lambda: L.Activation("gelu"), (3,)),
}


@pytest.mark.parametrize("name", list(LAYERS))
def test_built_in_layers_round_trip_through_a_keras_file(name, tmp_path):
    """Each layer's config and weights (BatchNormalization's moving statistics, an LSTM's
    cell, both directions of a Bidirectional) come back: equal predictions and weights."""
    make, shape = LAYERS[name]
    ids = name == "Embedding"
    model = nn.Sequential([nn.Input(shape, dtype="int32" if ids else "float32"), make()])
    model.compile("adam", "mse")
    rng = np.random.default_rng(0)
    x = rng.integers(0, 9, (2, *shape)) if ids else \
        rng.standard_normal((2, *shape)).astype(np.float32)
    model.fit(x, np.zeros_like(model.predict(x, verbose=0)), verbose=0)  # moves the stats
    model.save(tmp_path / "m.keras")
    loaded = nn.models.load_model(tmp_path / "m.keras")
    assert type(loaded.layers[0]) is type(model.layers[0])
    _same_weights(loaded, model)
    assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_subclasses_that_build_a_functional_graph_save_as_keras_does(tmp_path):
    """A subclass whose __init__ builds its own graph is saved by its arguments; one that
    takes (inputs, outputs) by its graph; both under the subclass's registered name."""

    @nn.saving.register_keras_serializable(package="TestSaving")
    class Builder(nn.Model):
        def __init__(self, units=3, **kwargs):
            inp = nn.Input((4,))
            super().__init__(inp, L.Dense(units)(L.Dense(5, activation="relu")(inp)),
                             **kwargs)
            self.units = units

    model = Builder(units=2, name="builder")
    assert model.get_config() == {"units": 2, "name": "builder", "trainable": True,
                                  "dtype": "float32"}
    model.save(tmp_path / "b.keras")
    loaded = nn.models.load_model(tmp_path / "b.keras")
    assert isinstance(loaded, Builder) and loaded.units == 2
    assert_array_equal(loaded(X).numpy(), model(X).numpy())

    @nn.saving.register_keras_serializable(package="TestSaving")
    class Graph(nn.Model):
        def __init__(self, inputs, outputs, **kwargs):
            super().__init__(inputs, outputs, **kwargs)

    inp = nn.Input((4,))
    graph = Graph(inp, L.Dense(2)(inp))
    assert "layers" in graph.get_config()
    graph.save(tmp_path / "g.keras")
    again = nn.models.load_model(tmp_path / "g.keras")
    assert isinstance(again, Graph) and isinstance(again, nn.Functional)
    assert_array_equal(again(X).numpy(), graph(X).numpy())


def test_a_loss_scale_optimizer_resumes_with_its_scale(tmp_path):
    """A wrapper's own variables (the loss scale, its step counter) under optimizer/vars,
    the wrapped optimizer's under optimizer/inner_optimizer/vars, as Keras lays them out."""
    em.random.set_seed(0)
    model = _sequential(nn.optimizers.LossScaleOptimizer(
        nn.optimizers.Adam(nn.optimizers.ExponentialDecay(0.01, 3, 0.5)), initial_scale=64.0,
        dynamic_growth_steps=2))
    _fit(model)
    model.save(tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as zf:
        import io

        import h5py

        with h5py.File(io.BytesIO(zf.read("model.weights.h5")), "r") as f:
            assert len(f["optimizer/vars"]) == 2
            assert len(f["optimizer/inner_optimizer/vars"]) == 1 + 2 * len(
                model.trainable_variables)  # iterations and (m, v) each: a schedule's rate
    _fit(model)
    loaded = nn.models.load_model(tmp_path / "m.keras")
    assert type(loaded.optimizer) is nn.optimizers.LossScaleOptimizer
    _fit(loaded)
    _same_weights(loaded, model)
    assert float(loaded.optimizer.dynamic_scale.numpy()) == \
        float(model.optimizer.dynamic_scale.numpy()) > 64.0


def test_a_config_without_module_names_a_built_in_class_only_when_unambiguous():
    he = nn.saving.deserialize_keras_object({"class_name": "HeNormal", "config": {"seed": 1}})
    assert type(he) is nn.initializers.HeNormal and he.seed == 1  # Keras 2's form
    with pytest.raises(ValueError, match="without a module names ember's"):
        nn.saving.deserialize_keras_object({"class_name": "MeanSquaredError", "config": {}})
    with pytest.raises(ValueError, match="unknown class 'system'"):
        nn.saving.deserialize_keras_object({"class_name": "system", "config": {}})


def test_a_sequential_built_by_a_call_keeps_its_input_dtype(tmp_path):
    model = nn.Sequential([L.Embedding(10, 3), L.GlobalAveragePooling1D()])
    ids = np.array([[1, 2, 3], [4, 5, 9]], np.int32)
    model(ids)
    config = model.get_config()
    assert config["layers"][0]["config"]["dtype"] == "int32"
    model.save(tmp_path / "e.keras")
    assert_array_equal(nn.models.load_model(tmp_path / "e.keras")(ids).numpy(),
                       model(ids).numpy())


def test_a_random_layers_stream_resumes_from_a_saved_model(tmp_path):
    em.random.set_seed(5)
    model = nn.Sequential([nn.Input((6, 6, 1)), L.RandomRotation(0.3), L.RandomFlip(),
                           L.Flatten(), L.Dense(2)])
    x = RNG.uniform(0, 1, (4, 6, 6, 1)).astype(np.float32)
    model(x, training=True)
    model.save(tmp_path / "m.keras")
    expected = [model(x, training=True).numpy() for _ in range(2)]
    em.random.set_seed(77)  # another seed: the file's streams must win
    loaded = nn.models.load_model(tmp_path / "m.keras")
    for want in expected:
        assert_array_equal(loaded(x, training=True).numpy(), want)


def test_random_streams_of_inner_layers_round_trip_and_old_names_still_load(tmp_path):
    # an LSTM's cell keeps its dropout stream; the loaded cell gets a new automatic name
    model = nn.Sequential([nn.Input((5, 3)), L.LSTM(4, dropout=0.5, recurrent_dropout=0.5)])
    x = RNG.uniform(0, 1, (2, 5, 3)).astype(np.float32)
    model.save(tmp_path / "m.keras")
    want = model(x, training=True).numpy()
    loaded = nn.models.load_model(tmp_path / "m.keras")
    assert_array_equal(loaded(x, training=True).numpy(), want)
    # files written before streams were keyed by class name them by the layer's name
    flip = nn.Sequential([nn.Input((4, 4, 1)), L.RandomFlip(name="flip")])
    img = RNG.uniform(0, 1, (6, 4, 4, 1)).astype(np.float32)
    flip.save(tmp_path / "f.keras")
    with zipfile.ZipFile(tmp_path / "f.keras") as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    meta = json.loads(members["metadata.json"])
    streams = meta["ember"]["random"]["generators"]
    streams["1/flip/seed_generator"] = streams.pop("1/RandomFlip/seed_generator")
    members["metadata.json"] = json.dumps(meta).encode()
    with zipfile.ZipFile(tmp_path / "old.keras", "w") as zf:
        for n, b in members.items():
            zf.writestr(n, b)
    want = flip(img).numpy()
    assert_array_equal(nn.models.load_model(tmp_path / "old.keras")(img).numpy(), want)


def test_a_saved_random_stream_the_model_lacks_is_refused(tmp_path):
    model = nn.Sequential([nn.Input((4, 4, 1)), L.RandomFlip(), L.Flatten(), L.Dense(2)])
    model.save(tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    meta = json.loads(members["metadata.json"])
    streams = meta["ember"]["random"]["generators"]
    assert list(streams) == ["1/RandomFlip/seed_generator"]  # by class: names are not kept
    streams["9/nowhere/seed_generator"] = streams.pop(next(iter(streams)))
    members["metadata.json"] = json.dumps(meta).encode()
    with zipfile.ZipFile(tmp_path / "bad.keras", "w") as zf:
        for n, b in members.items():
            zf.writestr(n, b)
    state = em.random.get_global_generator().state
    with pytest.raises(ValueError, match="9/nowhere/seed_generator.*no layer"):
        nn.models.load_model(tmp_path / "bad.keras")
    assert em.random.get_global_generator().state == state  # nothing was set


def test_tf_top_level_initializers_become_keras_ones_in_a_layer_and_its_file(tmp_path):
    # keras-io's DDPG: Dense(1, kernel_initializer=tf.random_uniform_initializer(-3e-3, 3e-3))
    d = L.Dense(2, kernel_initializer=em.random_uniform_initializer(-0.003, 0.003),
                bias_initializer=em.constant_initializer(0.5))
    model = nn.Sequential([nn.Input((3,)), d])
    assert np.abs(d.kernel.numpy()).max() <= 0.003 and (d.bias.numpy() == 0.5).all()
    assert type(d.kernel_initializer) is nn.initializers.RandomUniform
    model.save(tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as zf:
        config = json.loads(zf.read("config.json"))
    saved = config["config"]["layers"][1]["config"]  # (0 is the InputLayer)
    assert saved["kernel_initializer"]["class_name"] == "RandomUniform"
    assert saved["kernel_initializer"]["config"]["maxval"] == 0.003
    assert saved["bias_initializer"]["class_name"] == "Constant"
    back = nn.models.load_model(tmp_path / "m.keras").layers[0]
    assert_array_equal(back.kernel.numpy(), d.kernel.numpy())
