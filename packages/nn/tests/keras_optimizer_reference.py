"""Keras 3's numbers for the optimizers ember ported from it (Adamax, Adadelta, Nadam, Ftrl,
Lion, Lamb, Adafactor), for ``test_optimizers_keras_more.py``.

Run with Keras's own interpreter (never ember's), which writes
``data/keras_optimizer_steps.json``::

    KERAS_BACKEND=torch CUDA_VISIBLE_DEVICES= python packages/nn/tests/keras_optimizer_reference.py

(``nox -s keras-interop`` makes such an interpreter: Keras 3.15.1 and a CPU torch.) Each case
names an optimizer and its arguments; three variables (a matrix, a vector and a rank-3
tensor starting at zero) take the same five gradients (signs that change, zeros, and a
whole zero gradient), in float32 and in float64, and the file holds the variables after
every step and ``iterations`` at the end. ``configs`` holds each optimizer's
``get_config()`` at its defaults.

Two of Keras's paths are recorded. ``update_step``: the optimizer's own ``update_step``, which
ember follows and Keras runs on every backend but torch (here through a subclass, which
Keras's torch backend leaves alone). ``torch``: the class itself, which on the torch backend
is replaced by a ``torch._foreach`` version for Adamax, Adadelta, Nadam and Lion (the same
algebra in another order of operations).

In float64 every float argument, the defaults too, is given rounded to float32 (``kwargs64``):
ember holds hyperparameters as float32 variables, where Keras casts its Python float to the
variable's dtype, so only float32-exact values make the two float64 runs the same numbers.
"""

from __future__ import annotations

import inspect
import json
import pathlib

import numpy as np

RNG = np.random.default_rng(11)
VARIABLES = {
    "matrix": RNG.standard_normal((2, 3)).round(3).tolist(),
    "vector": RNG.standard_normal(3).round(3).tolist(),
    "tensor": np.zeros((2, 2, 2)).tolist(),  # zero norm at first (Lamb's ratio, Adafactor's rms)
}


def _grads() -> list[dict[str, list]]:
    steps = []
    for k in range(5):
        g = {name: (RNG.standard_normal(np.shape(w)) * 0.5).round(3)
             for name, w in VARIABLES.items()}
        g["matrix"][0, 1] = 0.0  # an element whose gradient is always zero
        if k == 1:
            g["matrix"][1] = 0.0  # a row of zeros (Adafactor's row mean of epsilon_1 alone)
        if k == 2:
            g["vector"][:] = 0.0  # a whole zero gradient
        if k == 3:
            g["tensor"] = -g["tensor"] * 3  # larger, and of the other sign
        steps.append({name: v.tolist() for name, v in g.items()})
    return steps


GRADS = _grads()
CASES = {
    "adamax_default": ("Adamax", {"learning_rate": 0.01}),
    "adamax_args": ("Adamax", {"learning_rate": 0.05, "beta_1": 0.8, "beta_2": 0.95,
                               "epsilon": 1e-3}),
    "adadelta_default": ("Adadelta", {"learning_rate": 1.0}),
    "adadelta_args": ("Adadelta", {"learning_rate": 0.5, "rho": 0.8, "epsilon": 1e-4}),
    "nadam_default": ("Nadam", {"learning_rate": 0.01}),
    "nadam_args": ("Nadam", {"learning_rate": 0.05, "beta_1": 0.8, "beta_2": 0.9,
                             "epsilon": 1e-4}),
    "nadam_accumulation": ("Nadam", {"learning_rate": 0.05, "gradient_accumulation_steps": 2}),
    "ftrl_default": ("Ftrl", {"learning_rate": 0.1}),
    "ftrl_args": ("Ftrl", {"learning_rate": 0.2, "learning_rate_power": -0.7,
                           "initial_accumulator_value": 0.5, "l1_regularization_strength": 0.01,
                           "l2_regularization_strength": 0.1,
                           "l2_shrinkage_regularization_strength": 0.05, "beta": 0.3}),
    "ftrl_fixed_rate": ("Ftrl", {"learning_rate": 0.1, "learning_rate_power": 0.0,
                                 "initial_accumulator_value": 0.0,
                                 "l1_regularization_strength": 0.05}),
    "lion_default": ("Lion", {"learning_rate": 0.01}),
    "lion_args": ("Lion", {"learning_rate": 0.02, "beta_1": 0.5, "beta_2": 0.9}),
    "lion_beta_1_one_weight_decay": ("Lion", {"learning_rate": 0.01, "beta_1": 1.0,
                                              "weight_decay": 0.1}),
    "lamb_default": ("Lamb", {"learning_rate": 0.01}),
    "lamb_args": ("Lamb", {"learning_rate": 0.05, "beta_1": 0.8, "beta_2": 0.9,
                           "epsilon": 1e-4}),
    "adafactor_default": ("Adafactor", {}),
    "adafactor_rate": ("Adafactor", {"learning_rate": 0.1}),
    "adafactor_args": ("Adafactor", {"learning_rate": 0.5, "beta_2_decay": -0.5,
                                     "epsilon_1": 1e-20, "epsilon_2": 1e-2,
                                     "clip_threshold": 0.5}),
    "adafactor_absolute_step": ("Adafactor", {"learning_rate": 0.8, "relative_step": False}),
}
# (Keras's weight decay multiplies by 1 - wd * lr in the learning rate's float32 on torch:
# compared in float32 only)
FLOAT32_ONLY = {"lion_beta_1_one_weight_decay"}
TORCH_FOREACH = {"Adamax", "Adadelta", "Nadam", "Lion"}


def float32_kwargs(cls: type, kwargs: dict) -> dict:
    """``kwargs`` with every float argument of ``cls``, the defaults included, rounded to
    float32 (Keras's base options other than ``weight_decay`` left as they are)."""
    out = dict(kwargs)
    for name, p in inspect.signature(cls.__init__).parameters.items():
        value = out.get(name, p.default)
        if name in ("ema_momentum",) or isinstance(value, bool) or \
                not isinstance(value, float):
            continue
        out[name] = float(np.float32(value))
    return out


def _values(variables: list, dtype: str) -> dict[str, list]:
    out = {}
    for v in variables:
        a = np.asarray(v.numpy())
        # float32 values as their shortest float32 spelling (np.float32 of it is exact)
        out[v.name] = [float(str(x)) for x in a.ravel()] if dtype == "float32" else \
            a.ravel().tolist()
    return out


def _run(keras, cls: type, kwargs: dict, dtype: str) -> tuple[list, int]:
    variables = [keras.Variable(np.array(w, dtype), name=name, dtype=dtype)
                 for name, w in VARIABLES.items()]
    opt = cls(**kwargs)
    steps = []
    for g in GRADS:
        opt.apply([keras.ops.convert_to_tensor(np.array(g[v.name], dtype)) for v in variables],
                  variables)
        steps.append(_values(variables, dtype))
    return steps, int(opt.iterations.numpy())


def main() -> None:
    import keras

    out = {"keras": keras.__version__, "backend": keras.backend.backend(),
           "variables": VARIABLES, "grads": GRADS, "cases": {}}
    for name, (cls_name, kwargs) in CASES.items():
        cls = getattr(keras.optimizers, cls_name)
        plain = type(cls_name, (cls,), {})  # not replaced by the torch backend's version
        case: dict = {"class": cls_name, "kwargs": kwargs}
        for dtype in ("float32", "float64"):
            if dtype == "float64" and name in FLOAT32_ONLY:
                continue
            kw = kwargs if dtype == "float32" else float32_kwargs(cls, kwargs)
            if dtype == "float64":
                case["kwargs64"] = kw
            runs = {}
            runs["update_step"], iterations = _run(keras, plain, kw, dtype)
            if cls_name in TORCH_FOREACH and keras.backend.backend() == "torch":
                runs["torch"], _ = _run(keras, cls, kw, dtype)
            case[dtype] = runs
            case["iterations"] = iterations
        out["cases"][name] = case
    # each optimizer's get_config() at its defaults: the arguments, their names and defaults
    out["configs"] = {cls_name: getattr(keras.optimizers, cls_name)().get_config()
                      for cls_name in sorted({c for c, _ in CASES.values()})}
    path = pathlib.Path(__file__).parent / "data" / "keras_optimizer_steps.json"
    path.write_text(json.dumps(out, separators=(",", ":")) + "\n")
    print(f"wrote {path} (Keras {keras.__version__}, {path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
