"""Lion."""

from __future__ import annotations

from typing import Any

import ember.core as em

from . import _shared
from .base import Hyper, Optimizer


class Lion(Optimizer):
    """Lion (EvoLved Sign Momentum, Chen et al. 2023) as Keras 3 steps it: ``w -= lr *
    sign(beta_1 m + (1 - beta_1) g); m = beta_2 m + (1 - beta_2) g``.

    Every element moves by ``lr`` (or not at all), so a learning rate 3 to 10 times smaller
    than AdamW's suits it. ``beta_1`` must lie in ``(0, 1]``, as Keras checks. Slot ``m``
    (Keras 3's ``momentum``). ``learning_rate``, ``beta_1`` and ``beta_2`` are read at
    every step.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> v = em.Variable(1.0)
        >>> _ = nn.optimizers.Lion(0.1).apply_gradients([(em.constant(-3.0), v)])
        >>> round(float(v), 6)
        1.1
    """

    beta_1 = Hyper()
    beta_2 = Hyper()

    def __init__(self, learning_rate: Any = 0.001, beta_1: Any = 0.9, beta_2: Any = 0.99,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate, **kwargs)
        self.beta_1, self.beta_2 = beta_1, beta_2
        b1 = self._host_hyper("beta_1")
        if b1 <= 0 or b1 > 1:
            raise ValueError("Argument `beta_1` must be in the [0, 1] range. Otherwise, the "
                             f"optimizer degenerates to SignSGD. Received: beta_1={beta_1}.")

    def init_slots(self, var: Any) -> None:
        self.add_slot(var, "m")

    def apply_single(self, grad: Any, var: Any, lr: float) -> None:
        dt = var.dtype
        lr = _shared.like(lr, dt)
        b1, b2 = _shared.hyper(self, "beta_1", dt), _shared.hyper(self, "beta_2", dt)
        m = self.get_slot(var, "m")
        var.assign_sub(em.multiply(lr, em.sign(em.add(em.multiply(m.value(), b1),
                                                      em.multiply(grad, 1.0 - b1)))))
        m.assign(em.add(em.multiply(m.value(), b2), em.multiply(grad, 1.0 - b2)))
