"""SGD with optional (Nesterov) momentum."""

from __future__ import annotations

from typing import Any

import ember.core as em

from .base import Optimizer


class SGD(Optimizer):
    """``v -= lr * g``; with momentum ``m = momentum * m + g; v -= lr * m``
    (Nesterov: ``v -= lr * (g + momentum * m)``), as PyTorch (and Keras up to sign).

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> v = em.Variable(1.0)
        >>> _ = nn.optimizers.SGD(0.1).apply_gradients([(em.constant(2.0), v)])
        >>> round(float(v), 6)
        0.8
    """

    def __init__(self, learning_rate: Any = 0.01, momentum: float = 0.0, nesterov: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate, **kwargs)
        if momentum < 0:
            raise ValueError(f"SGD: momentum must be >= 0, got {momentum}")
        self.momentum, self.nesterov = float(momentum), nesterov

    def init_slots(self, var: Any) -> None:
        if self.momentum:
            self.add_slot(var, "momentum")

    def apply_single(self, grad: Any, var: Any, lr: float) -> None:
        if not self.momentum:
            var.assign_sub(em.multiply(grad, lr))
            return
        m = self.get_slot(var, "momentum")
        m.assign(em.add(em.multiply(m.value(), self.momentum), grad))
        step = em.add(grad, em.multiply(m.value(), self.momentum)) if self.nesterov else m.value()
        var.assign_sub(em.multiply(step, lr))


GradientDescentOptimizer = SGD
