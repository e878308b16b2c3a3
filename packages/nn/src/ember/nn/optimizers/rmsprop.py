"""RMSProp and Adagrad."""

from __future__ import annotations

from typing import Any

import ember.core as em

from .base import Hyper, Optimizer


class RMSProp(Optimizer):
    """``ms = rho * ms + (1 - rho) g^2; v -= lr * g / sqrt(ms + epsilon)``, as Keras 3.

    ``centered`` subtracts the squared running mean of ``g`` from ``ms``; ``momentum``
    accumulates the step, learning rate included (``buf = momentum * buf + lr * g /
    sqrt(...); v -= buf``), as Keras 3's. ``learning_rate``, ``rho``, ``momentum`` and
    ``epsilon`` are read at every step. (PyTorch adds ``epsilon`` after the square root and
    scales the momentum buffer by the learning rate when it steps.)
    """

    rho = Hyper()
    momentum = Hyper()
    epsilon = Hyper()

    def __init__(self, learning_rate: Any = 0.001, rho: Any = 0.9, momentum: Any = 0.0,
                 epsilon: Any = 1e-7, centered: bool = False, **kwargs: Any) -> None:
        super().__init__(learning_rate, **kwargs)
        self.rho, self.momentum, self.epsilon = rho, momentum, epsilon
        if self._host_hyper("momentum") < 0:  # (Keras's ``momentum > 0`` skips it silently)
            raise ValueError(f"RMSprop: momentum must be >= 0, got {momentum}")
        self.centered = bool(centered)

    def init_slots(self, var: Any) -> None:
        self.add_slot(var, "rms")
        if self._host_hyper("momentum"):
            self.add_slot(var, "momentum")
        if self.centered:
            self.add_slot(var, "mg")

    def apply_single(self, grad: Any, var: Any, lr: float) -> None:
        rho = self._hyper("rho")
        ms = self.get_slot(var, "rms")
        ms.assign(em.add(em.multiply(ms.value(), rho), em.multiply(em.square(grad), 1 - rho)))
        denom_sq = ms.value()
        if self.centered:
            mg = self.get_slot(var, "mg")
            mg.assign(em.add(em.multiply(mg.value(), rho), em.multiply(grad, 1 - rho)))
            denom_sq = em.subtract(denom_sq, em.square(mg.value()))
        step = em.divide(em.multiply(grad, lr),
                         em.sqrt(em.add(denom_sq, self._hyper("epsilon"))))
        mom = self._hyper("momentum")
        if self._host_hyper("momentum") or "momentum" in self._slots.get(var.uid, {}):
            buf = self.add_slot(var, "momentum")
            buf.assign(em.add(em.multiply(buf.value(), mom), step))
            step = buf.value()
        var.assign_sub(step)


class Adagrad(Optimizer):
    """``acc += g^2; v -= lr * g / sqrt(acc + epsilon)``, as Keras 3 (``learning_rate`` and
    ``epsilon`` read at every step)."""

    epsilon = Hyper()

    def __init__(self, learning_rate: Any = 0.001, initial_accumulator_value: float = 0.1,
                 epsilon: Any = 1e-7, **kwargs: Any) -> None:
        super().__init__(learning_rate, **kwargs)
        self.initial_accumulator_value = float(initial_accumulator_value)
        self.epsilon = epsilon

    def init_slots(self, var: Any) -> None:
        self.add_slot(var, "accumulator", self.initial_accumulator_value)

    def apply_single(self, grad: Any, var: Any, lr: float) -> None:
        acc = self.get_slot(var, "accumulator")
        acc.assign(em.add(acc.value(), em.square(grad)))
        step = em.divide(em.multiply(grad, lr),
                         em.sqrt(em.add(acc.value(), self._hyper("epsilon"))))
        var.assign_sub(step)


RMSprop = RMSProp
