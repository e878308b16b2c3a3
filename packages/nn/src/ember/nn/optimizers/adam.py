"""Adam and AdamW."""

from __future__ import annotations

from typing import Any

import ember.core as em

from .base import Hyper, Optimizer


class Adam(Optimizer):
    """Adam with bias correction: ``v -= lr * m_hat / (sqrt(v_hat) + epsilon)``.

    Slots ``m`` and ``v`` (and ``vhat`` with ``amsgrad``). ``learning_rate``, ``beta_1``,
    ``beta_2`` and ``epsilon`` are read at every step.
    """

    beta_1 = Hyper()
    beta_2 = Hyper()
    epsilon = Hyper()

    def __init__(self, learning_rate: Any = 0.001, beta_1: Any = 0.9, beta_2: Any = 0.999,
                 epsilon: Any = 1e-7, amsgrad: bool = False, **kwargs: Any) -> None:
        super().__init__(learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self.amsgrad = bool(amsgrad)

    def init_slots(self, var: Any) -> None:
        self.add_slot(var, "m")
        self.add_slot(var, "v")
        if self.amsgrad:
            self.add_slot(var, "vhat")

    def apply_single(self, grad: Any, var: Any, lr: float) -> None:
        b1, b2, t = self._hyper("beta_1"), self._hyper("beta_2"), self._step
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m.assign(em.add(em.multiply(m.value(), b1), em.multiply(grad, 1 - b1)))
        v.assign(em.add(em.multiply(v.value(), b2), em.multiply(em.square(grad), 1 - b2)))
        vv = v.value()
        if self.amsgrad:
            vh = self.get_slot(var, "vhat")
            vh.assign(em.maximum(vh.value(), vv))
            vv = vh.value()
        c1, c2 = self._corrections(b1, b2, t)
        denom = em.add(em.multiply(em.sqrt(vv), c2), self._hyper("epsilon"))
        var.assign_sub(em.multiply(em.divide(m.value(), denom), em.divide(lr, c1)))

    def _corrections(self, b1: Any, b2: Any, t: Any) -> tuple[Any, Any]:
        """``1 - b1**t`` and ``1 / sqrt(1 - b2**t)`` as tensors, once per step."""
        now = self.__dict__.get("_now")
        hit = None if now is None else now.get("_corrections")
        if hit is None:
            hit = (em.subtract(1.0, em.pow(b1, t)),
                   em.divide(1.0, em.sqrt(em.subtract(1.0, em.pow(b2, t)))))
            if now is not None:
                now["_corrections"] = hit
        return hit


class AdamW(Adam):
    """Adam with decoupled weight decay: ``v -= lr * weight_decay * v`` before each step.

    ``weight_decay`` is read at every step, like the other hyperparameters.
    """

    weight_decay = Hyper()

    def __init__(self, learning_rate: Any = 0.001, weight_decay: Any = 0.004,
                 beta_1: Any = 0.9, beta_2: Any = 0.999, epsilon: Any = 1e-7,
                 amsgrad: bool = False, **kwargs: Any) -> None:
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad, **kwargs)
        self.weight_decay = weight_decay

    def apply_single(self, grad: Any, var: Any, lr: float) -> None:
        wd = self._hyper("weight_decay")
        if self._host_hyper("weight_decay"):
            var.assign(em.multiply(var.value(), 1 - lr * wd))
        super().apply_single(grad, var, lr)


AdamOptimizer = Adam
