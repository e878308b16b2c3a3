"""Adam and AdamW."""

from __future__ import annotations

from typing import Any

import ember.core as em

from . import _fused
from .base import Hyper, Optimizer


class Adam(Optimizer):
    """Adam as Keras 3 steps it: ``v -= lr * sqrt(1 - beta_2**t) / (1 - beta_1**t) * m /
    (sqrt(v) + epsilon)``.

    ``epsilon`` is the paper's "epsilon hat" (Kingma and Ba, section 2.1), added to the
    uncorrected ``sqrt(v)`` as Keras 3 and TensorFlow do, not to the bias-corrected one as
    PyTorch does: the same step for the same ``epsilon``, so a model trained in Keras goes
    on training here exactly (with ``epsilon=1e-7`` and a gradient near zero the two
    placements differ by a factor ``sqrt(1 - beta_2**t)`` in the effective epsilon).

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
        b1, b2 = self._hyper("beta_1"), self._hyper("beta_2")
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        if not self.amsgrad and _fused.adam(var, grad, m, v, b1, b2, self._hyper("epsilon"),
                                            lr, self.iterations):  # one kernel on a GPU
            return
        m.assign(em.add(em.multiply(m.value(), b1), em.multiply(grad, 1 - b1)))
        v.assign(em.add(em.multiply(v.value(), b2), em.multiply(em.square(grad), 1 - b2)))
        vv = v.value()
        if self.amsgrad:
            vh = self.get_slot(var, "vhat")
            vh.assign(em.maximum(vh.value(), vv))
            vv = vh.value()
        denom = em.add(em.sqrt(vv), self._hyper("epsilon"))
        alpha = em.multiply(lr, self._correction(b1, b2, self._step))
        var.assign_sub(em.multiply(em.divide(m.value(), denom), alpha))

    def _correction(self, b1: Any, b2: Any, t: Any) -> Any:
        """``sqrt(1 - b2**t) / (1 - b1**t)`` as a tensor, once per step."""
        now = self.__dict__.get("_now")
        hit = None if now is None else now.get("_correction")
        if hit is None:
            hit = em.divide(em.sqrt(em.subtract(1.0, em.pow(b2, t))),
                            em.subtract(1.0, em.pow(b1, t)))
            if now is not None:
                now["_correction"] = hit
        return hit


class AdamW(Adam):
    """Adam with decoupled weight decay: ``v -= lr * weight_decay * v`` before each step
    (the base class's ``weight_decay``, 0.004 here, as Keras 3's AdamW).

    ``weight_decay`` is read at every step, like the other hyperparameters.
    """

    def __init__(self, learning_rate: Any = 0.001, weight_decay: Any = 0.004,
                 beta_1: Any = 0.9, beta_2: Any = 0.999, epsilon: Any = 1e-7,
                 amsgrad: bool = False, **kwargs: Any) -> None:
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad, **kwargs)
        self.weight_decay = weight_decay


AdamOptimizer = Adam
