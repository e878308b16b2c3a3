"""Keras 3's numbers for the base optimizer's options (weight decay and its exclusions, the
moving average, gradient accumulation, a fixed loss scale, clips of 0), for
``test_optimizer_keras_base.py``.

Run with Keras's own interpreter (never ember's), which writes
``data/keras_optimizer_base_steps.json``::

    KERAS_BACKEND=torch python packages/nn/tests/keras_optimizer_base_reference.py

(``nox -s keras-interop`` makes such an interpreter: Keras 3.15.1 and a CPU torch.) Each case
names an optimizer, its arguments (a schedule as ``{"schedule": name, ...}``), the
variables' names and initial values, and the gradients of each call; the file holds the
variables after every call and ``iterations`` at the end.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np

W0 = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
B0 = [0.1, -0.2, 0.3]
RNG = np.random.default_rng(7)
GRADS = [[RNG.standard_normal((2, 3)).round(3).tolist(), RNG.standard_normal(3).round(3).tolist()]
         for _ in range(7)]
CASES = {
    "sgd_weight_decay": ("SGD", {"learning_rate": 0.1, "weight_decay": 0.2}, None),
    "sgd_momentum_weight_decay": ("SGD", {"learning_rate": 0.05, "momentum": 0.9,
                                          "weight_decay": 0.1}, None),
    "adam_weight_decay_excluding_bias": ("Adam", {"learning_rate": 0.01, "weight_decay": 0.3},
                                         {"var_names": ["bias"]}),
    "rmsprop_weight_decay_excluding_kernel": ("RMSprop", {"learning_rate": 0.01,
                                                          "weight_decay": 0.3},
                                              {"var_list": ["kernel"]}),
    "adam_ema": ("Adam", {"learning_rate": 0.05, "use_ema": True, "ema_momentum": 0.6}, None),
    "sgd_ema_overwrite": ("SGD", {"learning_rate": 0.1, "use_ema": True, "ema_momentum": 0.5,
                                  "ema_overwrite_frequency": 3}, None),
    "sgd_accumulation": ("SGD", {"learning_rate": 0.1, "momentum": 0.5,
                                 "gradient_accumulation_steps": 3}, None),
    "adam_accumulation": ("Adam", {"learning_rate": 0.02, "gradient_accumulation_steps": 2},
                          None),
    "adam_accumulation_schedule": ("Adam", {"learning_rate": {
        "schedule": "ExponentialDecay", "initial_learning_rate": 0.05, "decay_steps": 2,
        "decay_rate": 0.5, "staircase": True}, "gradient_accumulation_steps": 2}, None),
    "sgd_accumulation_ema_weight_decay": ("SGD", {
        "learning_rate": 0.1, "gradient_accumulation_steps": 2, "use_ema": True,
        "ema_momentum": 0.7, "weight_decay": 0.1}, None),
    "adam_loss_scale_factor": ("Adam", {"learning_rate": 0.01, "loss_scale_factor": 4.0},
                               None),
    "sgd_loss_scale_factor": ("SGD", {"learning_rate": 0.1, "loss_scale_factor": 4.0}, None),
    "sgd_clipnorm_zero": ("SGD", {"learning_rate": 0.1, "clipnorm": 0.0}, None),
    "sgd_clipvalue_zero": ("SGD", {"learning_rate": 0.1, "clipvalue": 0.0}, None),
    "sgd_global_clipnorm_zero": ("SGD", {"learning_rate": 0.1, "global_clipnorm": 0.0}, None),
}


def main() -> None:
    import keras

    out = {"keras": keras.__version__, "kernel": W0, "bias": B0, "grads": GRADS, "cases": {}}
    for name, (cls, kwargs, exclude) in CASES.items():
        kw = dict(kwargs)
        lr = kw.get("learning_rate")
        if isinstance(lr, dict):
            lr = dict(lr)
            kw["learning_rate"] = getattr(keras.optimizers.schedules, lr.pop("schedule"))(**lr)
        opt = getattr(keras.optimizers, cls)(**kw)
        kernel = keras.Variable(np.array(W0, np.float32), name="kernel")
        bias = keras.Variable(np.array(B0, np.float32), name="bias")
        if exclude is not None:
            by_name = {"kernel": kernel, "bias": bias}
            opt.exclude_from_weight_decay(
                var_list=[by_name[n] for n in exclude.get("var_list", [])] or None,
                var_names=exclude.get("var_names"))
        steps = []
        for gk, gb in GRADS:
            opt.apply([keras.ops.convert_to_tensor(np.array(gk, np.float32)),
                       keras.ops.convert_to_tensor(np.array(gb, np.float32))], [kernel, bias])
            steps.append([np.asarray(kernel.numpy(), np.float64).tolist(),
                          np.asarray(bias.numpy(), np.float64).tolist()])
        final = None
        if kw.get("use_ema"):
            opt.finalize_variable_values([kernel, bias])
            final = [np.asarray(kernel.numpy(), np.float64).tolist(),
                     np.asarray(bias.numpy(), np.float64).tolist()]
        out["cases"][name] = {"class": cls, "kwargs": kwargs, "exclude": exclude,
                              "steps": steps, "iterations": int(opt.iterations.numpy()),
                              "finalized": final}
    path = pathlib.Path(__file__).parent / "data" / "keras_optimizer_base_steps.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path} (Keras {keras.__version__})")


if __name__ == "__main__":
    main()
