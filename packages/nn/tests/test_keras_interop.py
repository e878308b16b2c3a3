"""Files from and for Keras 3 itself: a ``.keras`` or ``.weights.h5`` file Keras 3 writes
loads into ember and predicts what Keras predicted, and one ember writes loads into Keras.

Keras runs in its own interpreter (``keras_side.py``; ``EMBER_KERAS_PYTHON`` names it,
``KERAS_BACKEND=torch``), never in this process. ``nox -s keras-interop`` makes that
interpreter (a pinned Keras 3 and torch's CPU wheel) and runs this module; elsewhere it
skips. Every case is a model built from one definition in both libraries
(``keras_twins.py``), with random weights (not the initializers', so a loader that kept
its own fresh weights fails), predicting on fixed inputs.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import traceback

import keras_twins
import numpy as np
import pytest

import ember.core as em
from ember import nn

HERE = pathlib.Path(__file__).parent
KERAS_PYTHON = os.environ.get("EMBER_KERAS_PYTHON")
CASES = sorted(keras_twins.CASES)
TOL = dict(rtol=2e-4, atol=2e-5)  # float32 through two implementations of each op

pytestmark = pytest.mark.skipif(
    not KERAS_PYTHON, reason="EMBER_KERAS_PYTHON is unset: no Keras 3 interpreter to "
                             "exchange files with (nox -s keras-interop makes one)")


def _keras(command: str, where: pathlib.Path) -> dict:
    env = {**os.environ, "KERAS_BACKEND": "torch", "PYTHONPATH": str(HERE),
           "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run([KERAS_PYTHON, str(HERE / "keras_side.py"), command, str(where)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"keras_side.py {command} failed:\n{done.stderr[-4000:]}"
    return json.loads((where / f"keras-{command}.json").read_text())


def _predict(model: nn.Model, x) -> np.ndarray:
    return np.asarray(model.predict(x, verbose=0))


def _randomize(model: nn.Model, seed: int) -> None:
    values = keras_twins.random_values([(tuple(w.shape), w.name) for w in model.weights], seed)
    model.set_weights(values)


@pytest.fixture(scope="module")
def exchange(tmp_path_factory):
    """Keras writes its files; ember writes its own and its predictions; Keras reads
    ember's. Returns the folder and ember's predictions."""
    where = tmp_path_factory.mktemp("keras-interop")
    written = _keras("write", where)
    assert written["backend"] == "torch" and written["keras"].startswith("3."), written
    ember_dir = where / "ember"
    ember_dir.mkdir()
    predictions: dict = {}
    for name in CASES:
        try:
            _ember_side(name, ember_dir, predictions)
        except Exception:  # reported by this case's tests; the other cases go on
            (ember_dir / f"{name}.keras").unlink(missing_ok=True)
            (ember_dir / f"{name}.ember_error.txt").write_text(traceback.format_exc())
    _keras("read", where)
    return where, predictions


def _ember_side(name: str, ember_dir: pathlib.Path, predictions: dict) -> None:
    """ember's twin of one case: its predictions (and evaluation), then its files."""
    em.random.set_seed(0)
    model = keras_twins.CASES[name][0](nn)
    _randomize(model, seed=2)
    if name in keras_twins.TRAINED:
        keras_twins.train_step(model, name)
    predictions[name] = _predict(model, keras_twins.inputs(name))
    if name in keras_twins.EVALUATED:
        predictions[f"{name}.evaluate"] = keras_twins.evaluate(model, name)
    model.save(ember_dir / f"{name}.keras")
    model.save_weights(ember_dir / f"{name}.weights.h5")
    if name in keras_twins.TRAINED:
        keras_twins.train_step(model, name)
        predictions[f"{name}.after_step"] = _predict(model, keras_twins.inputs(name))


def _no_error(path: pathlib.Path) -> None:
    ember_error = path.parent / f"{path.name.split('.')[0]}.ember_error.txt"
    if path.parent.name == "ember" and ember_error.exists():
        pytest.fail(f"ember failed to write its files ({ember_error.name}):\n"
                    f"{ember_error.read_text()[-4000:]}")
    if path.exists():
        pytest.fail(f"Keras 3 failed ({path.name}):\n{path.read_text()[-4000:]}")


@pytest.mark.parametrize("case", CASES)
def test_a_keras_file_loads_into_ember(exchange, case):
    where, _ = exchange
    _no_error(where / "keras" / f"{case}.error.txt")
    want = np.load(where / "keras" / f"{case}.pred.npy")
    model = nn.models.load_model(where / "keras" / f"{case}.keras")
    np.testing.assert_allclose(_predict(model, keras_twins.inputs(case)), want, **TOL)


@pytest.mark.parametrize("case", CASES)
def test_model_layers_and_their_weights_are_listed_as_keras_lists_them(exchange, case):
    """``model.layers`` (InputLayer objects of a functional model included, operation
    nodes not) and each layer's weights' sizes, in Keras's order: code that indexes
    ``model.layers`` or zips ``get_weights()`` across the two libraries means the same.
    (Sizes, not shapes: MultiHeadAttention's kernels are 2-D in ember, 3-D in Keras.)"""
    where, _ = exchange
    _no_error(where / "keras" / f"{case}.error.txt")
    want = json.loads((where / "keras" / f"{case}.layers.json").read_text())
    model = keras_twins.CASES[case][0](nn)
    got = [[type(layer).__name__, [int(np.prod(w.shape)) for w in layer.weights]]
           for layer in model.layers]
    assert got == want


@pytest.mark.parametrize("case", CASES)
def test_keras_weights_load_into_the_ember_twin(exchange, case):
    where, _ = exchange
    _no_error(where / "keras" / f"{case}.error.txt")
    want = np.load(where / "keras" / f"{case}.pred.npy")
    model = keras_twins.CASES[case][0](nn)
    model.load_weights(where / "keras" / f"{case}.weights.h5")
    np.testing.assert_allclose(_predict(model, keras_twins.inputs(case)), want, **TOL)


@pytest.mark.parametrize("kind", ["keras", "weights.h5"])
@pytest.mark.parametrize("case", CASES)
def test_an_ember_file_loads_into_keras(exchange, case, kind):
    """Keras's ``load_model`` of ember's ``.keras``, and Keras's twin built from code
    loading ember's ``.weights.h5``, predict what ember predicted."""
    where, predictions = exchange
    _no_error(where / "ember" / f"{case}.{kind}.error.txt")
    got = np.load(where / "ember" / f"{case}.{kind}.keras_pred.npy")
    np.testing.assert_allclose(got, predictions[case], **TOL)


@pytest.mark.parametrize("case", sorted(keras_twins.TRAINED))
def test_training_goes_on_from_a_keras_file_in_ember(exchange, case):
    """A compiled model Keras trained one step: ember loads it with its optimizer (the
    step count, Adam's moments) and its next step is the one Keras took after the save."""
    where, _ = exchange
    _no_error(where / "keras" / f"{case}.error.txt")
    model = nn.models.load_model(where / "keras" / f"{case}.keras")
    assert int(model.optimizer.iterations.numpy()) == 1
    keras_twins.train_step(model, case)
    want = np.load(where / "keras" / f"{case}.pred_after_step.npy")
    np.testing.assert_allclose(_predict(model, keras_twins.inputs(case)), want, **TOL)


@pytest.mark.parametrize("case", sorted(keras_twins.TRAINED))
def test_training_goes_on_from_an_ember_file_in_keras(exchange, case):
    where, predictions = exchange
    _no_error(where / "ember" / f"{case}.keras.error.txt")
    got = np.load(where / "ember" / f"{case}.keras_pred_after_step.npy")
    np.testing.assert_allclose(got, predictions[f"{case}.after_step"], **TOL)


def _same_logs(got: dict, want: dict) -> None:
    assert sorted(got) == sorted(want), f"metric names {sorted(got)}, saved {sorted(want)}"
    for k in want:
        np.testing.assert_allclose(got[k], want[k], err_msg=k, **TOL)


@pytest.mark.parametrize("case", sorted(keras_twins.EVALUATED))
def test_a_keras_compile_config_compiles_ember(exchange, case):
    """Keras's compile_config (optimizer, loss by name or object, metrics by name or
    object) compiles the loaded ember model: it evaluates to Keras's numbers under
    Keras's metric names."""
    where, _ = exchange
    _no_error(where / "keras" / f"{case}.error.txt")
    model = nn.models.load_model(where / "keras" / f"{case}.keras")
    want = json.loads((where / "keras" / f"{case}.evaluate.json").read_text())
    assert "loss" in want and len(want) > 1  # a loss and the compiled metrics
    _same_logs(keras_twins.evaluate(model, case), want)


@pytest.mark.parametrize("case", sorted(keras_twins.EVALUATED))
def test_an_ember_compile_config_compiles_keras(exchange, case):
    where, predictions = exchange
    _no_error(where / "ember" / f"{case}.keras.error.txt")
    got = json.loads((where / "ember" / f"{case}.keras_evaluate.json").read_text())
    assert "loss" in got and len(got) > 1  # Keras compiled the loss and the metrics
    _same_logs(got, predictions[f"{case}.evaluate"])
