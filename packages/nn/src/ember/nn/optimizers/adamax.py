"""Adamax."""

from __future__ import annotations

from typing import Any

import ember.core as em

from . import _shared


class Adamax(_shared.Moments):
    """Adamax (Adam with the infinity norm) as Keras 3 steps it: ``m += (g - m) * (1 -
    beta_1); u = max(beta_2 * u, |g|); v -= lr * m / ((1 - beta_1**t) * (u + epsilon))``.

    ``epsilon`` is added to ``u`` after the maximum, as Keras 3 does (PyTorch adds it to
    ``|g|`` inside the maximum). Slots ``m`` and ``v`` (Keras 3's ``momentum`` and
    ``norm``, the paper's ``m`` and ``u``). ``learning_rate``, ``beta_1``, ``beta_2`` and
    ``epsilon`` are read at every step.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> v = em.Variable(1.0)
        >>> _ = nn.optimizers.Adamax(0.1).apply_gradients([(em.constant(2.0), v)])
        >>> round(float(v), 6)
        0.9
    """


    def apply_single(self, grad: Any, var: Any, lr: float) -> None:
        dt = var.dtype
        lr = _shared.like(lr, dt)
        b1, b2 = _shared.hyper(self, "beta_1", dt), _shared.hyper(self, "beta_2", dt)
        b1_power = _shared.per_step(self, ("adamax", str(dt)),
                                   lambda: em.pow(b1, _shared.step(self, dt)))
        m, u = self.get_slot(var, "m"), self.get_slot(var, "v")
        m.assign_add(em.multiply(em.subtract(grad, m.value()), 1 - b1))
        u.assign(em.maximum(em.multiply(b2, u.value()), em.abs(grad)))
        var.assign_sub(em.divide(
            em.multiply(lr, m.value()),
            em.multiply(1 - b1_power, em.add(u.value(), _shared.hyper(self, "epsilon", dt)))))
