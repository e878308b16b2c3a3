"""The Keras 3 half of the interchange tests, run by Keras's own interpreter.

``test_keras_interop.py`` runs it as a subprocess with the Python that ``EMBER_KERAS_PYTHON``
names (``nox -s keras-interop`` makes one holding Keras 3 and torch's CPU wheel) and
``KERAS_BACKEND=torch``, so neither Keras nor torch enters ember's test process. It never
imports ember.

    python keras_side.py write DIR   # Keras's files: DIR/keras/<case>.keras, .weights.h5,
                                     # and its predictions on the case's fixed inputs
    python keras_side.py read DIR    # ember's files in DIR/ember: Keras loads each and
                                     # writes its predictions (or the error) beside them

Each case is written or read on its own: one failing case leaves an ``.error.txt`` with
the traceback for ember's test to show, and the others go on.
"""

from __future__ import annotations

import json
import pathlib
import sys
import traceback

import numpy as np

try:
    import keras
except ImportError:  # only Keras's own interpreter runs this file (nox -s keras-interop)
    keras = None

import keras_twins


def _predict(model, x):
    return keras.ops.convert_to_numpy(model(x, training=False))


def _randomize(model, seed):
    values = keras_twins.random_values([(tuple(w.shape), w.path) for w in model.weights],
                                       seed)
    for w, v in zip(model.weights, values):
        w.assign(v)


def write(out):
    out.mkdir(parents=True, exist_ok=True)
    for name, (build, _) in keras_twins.CASES.items():
        try:
            keras.utils.set_random_seed(0)
            model = build(keras)
            (out / f"{name}.layers.json").write_text(json.dumps(  # model.layers, in order
                [[type(layer).__name__, [int(np.prod(w.shape)) for w in layer.weights]]
                 for layer in model.layers]))
            _randomize(model, seed=1)
            if name in keras_twins.TRAINED:
                keras_twins.train_step(model, name)
            np.save(out / f"{name}.pred.npy", _predict(model, keras_twins.inputs(name)))
            if name in keras_twins.EVALUATED:
                (out / f"{name}.evaluate.json").write_text(
                    json.dumps(keras_twins.evaluate(model, name)))
            model.save(out / f"{name}.keras")
            model.save_weights(out / f"{name}.weights.h5")
            if name in keras_twins.TRAINED:  # what the loaded file's next step must give
                keras_twins.train_step(model, name)
                np.save(out / f"{name}.pred_after_step.npy",
                        _predict(model, keras_twins.inputs(name)))
        except Exception:  # reported to ember's test, which fails on it
            (out / f"{name}.error.txt").write_text(traceback.format_exc())


def read(ember_dir):
    for name, (build, _) in keras_twins.CASES.items():
        if not (ember_dir / f"{name}.keras").exists():
            continue
        x = keras_twins.inputs(name)
        for kind in ("keras", "weights.h5"):
            try:
                if kind == "keras":
                    model = keras.models.load_model(ember_dir / f"{name}.keras")
                else:  # the twin built from code, then ember's weights
                    model = build(keras)
                    model.load_weights(ember_dir / f"{name}.weights.h5")
                np.save(ember_dir / f"{name}.{kind}.keras_pred.npy", _predict(model, x))
                if kind == "keras" and name in keras_twins.EVALUATED:
                    (ember_dir / f"{name}.keras_evaluate.json").write_text(
                        json.dumps(keras_twins.evaluate(model, name)))
                if kind == "keras" and name in keras_twins.TRAINED:
                    keras_twins.train_step(model, name)
                    np.save(ember_dir / f"{name}.keras_pred_after_step.npy",
                            _predict(model, x))
            except Exception:
                (ember_dir / f"{name}.{kind}.error.txt").write_text(traceback.format_exc())


def main(argv):
    command, where = argv
    where = pathlib.Path(where)
    if command == "write":
        write(where / "keras")
    elif command == "read":
        read(where / "ember")
    else:
        raise SystemExit(f"keras_side.py: unknown command {command!r} (write or read)")
    (where / f"keras-{command}.json").write_text(json.dumps(
        {"keras": keras.__version__, "backend": keras.backend.backend()}))


if __name__ == "__main__":
    main(sys.argv[1:])
