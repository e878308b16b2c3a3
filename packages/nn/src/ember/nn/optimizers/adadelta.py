"""Adadelta."""

from __future__ import annotations

from typing import Any

import ember.core as em

from . import _shared
from .base import Hyper, Optimizer


class Adadelta(Optimizer):
    """Adadelta as Keras 3 steps it: ``acc_g = rho * acc_g + (1 - rho) g^2; d = -sqrt(acc_d
    + epsilon) * g / sqrt(acc_g + epsilon); acc_d = rho * acc_d + (1 - rho) d^2; v += lr *
    d`` (``epsilon`` inside both square roots, as in the paper and PyTorch).

    Keras's default learning rate is 0.001; the paper's form is ``learning_rate=1.0``.
    Slots ``accum_grad`` and ``accum_var`` (Keras 3's ``accumulated_grad`` and
    ``accumulated_delta_var``). ``learning_rate``, ``rho`` and ``epsilon`` are read at
    every step.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> v = em.Variable(1.0)
        >>> _ = nn.optimizers.Adadelta(1.0, rho=0.5, epsilon=0.01).apply_gradients(
        ...     [(em.constant(1.0), v)])
        >>> round(float(v), 6)
        0.859972
    """

    rho = Hyper()
    epsilon = Hyper()

    def __init__(self, learning_rate: Any = 0.001, rho: Any = 0.95, epsilon: Any = 1e-7,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate, **kwargs)
        self.rho, self.epsilon = rho, epsilon

    def init_slots(self, var: Any) -> None:
        self.add_slot(var, "accum_grad")
        self.add_slot(var, "accum_var")

    def apply_single(self, grad: Any, var: Any, lr: float) -> None:
        dt = var.dtype
        lr = _shared.like(lr, dt)
        rho, eps = _shared.hyper(self, "rho", dt), _shared.hyper(self, "epsilon", dt)
        acc_g, acc_d = self.get_slot(var, "accum_grad"), self.get_slot(var, "accum_var")

        def rms(x: Any) -> Any:
            return em.sqrt(em.add(x, eps))

        acc_g.assign(em.add(em.multiply(rho, acc_g.value()),
                            em.multiply(1 - rho, em.square(grad))))
        delta = em.negative(em.divide(em.multiply(rms(acc_d.value()), grad),
                                      rms(acc_g.value())))
        acc_d.assign(em.add(em.multiply(rho, acc_d.value()),
                            em.multiply(1 - rho, em.square(delta))))
        var.assign_add(em.multiply(lr, delta))
