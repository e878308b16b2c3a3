"""FTRL-Proximal."""

from __future__ import annotations

from typing import Any

import ember.core as em

from . import _shared
from .base import Hyper, Optimizer


class Ftrl(Optimizer):
    """Follow The Regularized Leader (McMahan et al., 2013) as Keras 3 steps it.

    With ``p = -learning_rate_power``, ``l2 = l2_regularization_strength + beta / (2 lr)``
    and ``g' = g + 2 * l2_shrinkage_regularization_strength * w``: ``n' = n + g^2; z += g' -
    (n'^p - n^p) / lr * w; w = (clip(z, -l1, l1) - z) / (n'^p / lr + 2 l2); n = n'``.
    The accumulator grows with the raw gradient, the linear term with the shrunk one.

    Slots ``accumulator`` (starting at ``initial_accumulator_value``) and ``linear``.
    ``learning_rate``, ``learning_rate_power``, the three strengths and ``beta`` are read
    at every step.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> v = em.Variable(1.0)
        >>> _ = nn.optimizers.Ftrl(0.5, initial_accumulator_value=1.0).apply_gradients(
        ...     [(em.constant(1.0), v)])
        >>> round(float(v), 6)
        -0.06066
    """

    learning_rate_power = Hyper()
    l1_regularization_strength = Hyper()
    l2_regularization_strength = Hyper()
    l2_shrinkage_regularization_strength = Hyper()
    beta = Hyper()

    def __init__(self, learning_rate: Any = 0.001, learning_rate_power: Any = -0.5,
                 initial_accumulator_value: float = 0.1, l1_regularization_strength: Any = 0.0,
                 l2_regularization_strength: Any = 0.0,
                 l2_shrinkage_regularization_strength: Any = 0.0, beta: Any = 0.0,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate, **kwargs)
        if initial_accumulator_value < 0.0:
            raise ValueError(
                "`initial_accumulator_value` needs to be positive or zero. Received: "
                f"initial_accumulator_value={initial_accumulator_value}.")
        self.learning_rate_power = learning_rate_power
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self.beta = beta
        if self._host_hyper("learning_rate_power") > 0.0:
            raise ValueError("`learning_rate_power` needs to be negative or zero. Received: "
                             f"learning_rate_power={learning_rate_power}.")
        for name, value in (("l1_regularization_strength", l1_regularization_strength),
                            ("l2_regularization_strength", l2_regularization_strength),
                            ("l2_shrinkage_regularization_strength",
                             l2_shrinkage_regularization_strength)):
            if self._host_hyper(name) < 0.0:
                raise ValueError(f"`{name}` needs to be positive or zero. Received: "
                                 f"{name}={value}.")
        self.initial_accumulator_value = float(initial_accumulator_value)

    def init_slots(self, var: Any) -> None:
        self.add_slot(var, "accumulator", self.initial_accumulator_value)
        self.add_slot(var, "linear")

    def apply_single(self, grad: Any, var: Any, lr: float) -> None:
        dt = var.dtype
        lr = _shared.like(lr, dt)
        power = em.negative(_shared.hyper(self, "learning_rate_power", dt))
        l1 = _shared.hyper(self, "l1_regularization_strength", dt)
        l2 = em.add(_shared.hyper(self, "l2_regularization_strength", dt),
                    em.divide(_shared.hyper(self, "beta", dt), em.multiply(2.0, lr)))
        shrinkage = _shared.hyper(self, "l2_shrinkage_regularization_strength", dt)
        accum, linear = self.get_slot(var, "accumulator"), self.get_slot(var, "linear")
        w = var.value()
        grad_to_use = em.add(grad, em.multiply(em.multiply(2.0, shrinkage), w))
        new_accum = em.add(accum.value(), em.square(grad))
        new_power = em.pow(new_accum, power)
        sigma = em.divide(em.subtract(new_power, em.pow(accum.value(), power)), lr)
        linear.assign_add(em.subtract(grad_to_use, em.multiply(sigma, w)))
        quadratic = em.add(em.divide(new_power, lr), em.multiply(2.0, l2))
        z = linear.value()
        var.assign(em.divide(em.subtract(em.clip_by_value(z, em.negative(l1), l1), z),
                             quadratic))
        accum.assign(new_accum)
