"""What the optimizers ported from Keras 3's ``update_step`` (Adamax, Adadelta, Nadam,
Ftrl, Lion, Lamb, Adafactor) share: hyperparameters and the step count in the variable's
dtype, and scalars computed once a step.

Keras casts the learning rate, each hyperparameter and ``iterations + 1`` to the variable's
dtype before any arithmetic (``ops.cast(self.beta_1, variable.dtype)``), so a float64
variable is stepped in float64 throughout. The optimizers here hold their hyperparameters
as float32 variables (base.py); a float32 variable needs no cast, any other dtype gets one
cast a step per hyperparameter and device, kept in the step's ``_now`` as Adam keeps its
bias correction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember.core as em

from .base import Hyper, Optimizer


class Moments(Optimizer):
    """The Adam family's first and second moments (Adamax, Nadam, Lamb): ``beta_1``,
    ``beta_2`` and ``epsilon`` at Keras's defaults, read at every step, and the slots ``m``
    and ``v`` of each variable."""

    beta_1 = Hyper()
    beta_2 = Hyper()
    epsilon = Hyper()

    def __init__(self, learning_rate: Any = 0.001, beta_1: Any = 0.9, beta_2: Any = 0.999,
                 epsilon: Any = 1e-7, **kwargs: Any) -> None:
        super().__init__(learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    def init_slots(self, var: Any) -> None:
        self.add_slot(var, "m")
        self.add_slot(var, "v")


def per_step(opt: Any, key: Any, make: Callable[[], Any]) -> Any:
    """``make()``, computed once a step (per device: ``_now`` is the device's) and reused
    for every variable of that step; computed afresh outside ``apply_gradients``."""
    now = opt.__dict__.get("_now")
    if now is None:
        return make()
    hit = now.get(key)
    if hit is None:
        hit = now[key] = make()
    return hit


def like(value: Any, dtype: Any) -> Any:
    """``value`` (a float, None or a tensor) in ``dtype``: a float stays a float."""
    if not isinstance(value, em.Tensor) or value.dtype == dtype:
        return value
    return em.cast(value, dtype)


def hyper(opt: Any, name: str, dtype: Any) -> Any:
    """Hyperparameter ``name`` of this step in ``dtype``, cast once a step."""
    value = opt._hyper(name)
    if not isinstance(value, em.Tensor) or value.dtype == dtype:
        return value
    return per_step(opt, ("_typed", name, str(dtype)), lambda: em.cast(value, dtype))


def step(opt: Any, dtype: Any) -> Any:
    """This step's number (``iterations + 1``) in ``dtype``, as Keras's ``local_step``."""
    t = opt._step
    if t.dtype == dtype:
        return t
    return per_step(opt, ("_typed", "_step", str(dtype)), lambda: em.cast(t, dtype))
