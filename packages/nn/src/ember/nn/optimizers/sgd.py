"""SGD with optional (Nesterov) momentum."""

from __future__ import annotations

from typing import Any

import ember.core as em

from . import _fused
from .base import Hyper, Optimizer


class SGD(Optimizer):
    """``v -= lr * g``; with momentum ``m = momentum * m - lr * g; v += m`` (Nesterov:
    ``v += momentum * m - lr * g``), as Keras 3. (PyTorch keeps ``m = momentum * m + g`` and
    steps ``lr * m``: the same steps at a constant learning rate, others under a schedule.)

    ``learning_rate`` and ``momentum`` are read at every step (numbers, variables,
    tensors, callables or schedules); the momentum slot appears once momentum is nonzero.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> v = em.Variable(1.0)
        >>> _ = nn.optimizers.SGD(0.1).apply_gradients([(em.constant(2.0), v)])
        >>> round(float(v), 6)
        0.8
    """

    momentum = Hyper()

    def __init__(self, learning_rate: Any = 0.01, momentum: Any = 0.0, nesterov: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate, **kwargs)
        self.momentum = momentum
        if not 0 <= self._host_hyper("momentum") <= 1:  # (Keras's check)
            raise ValueError(f"SGD: momentum must be a float between [0, 1], got {momentum}")
        # (nesterov with momentum 0 is plain SGD, as Keras computes it)
        self.nesterov = bool(nesterov)

    def init_slots(self, var: Any) -> None:
        if self._host_hyper("momentum"):
            self.add_slot(var, "momentum")

    def apply_single(self, grad: Any, var: Any, lr: float) -> None:
        if not self._host_hyper("momentum") and "momentum" not in self._slots.get(var.uid, {}):
            # in place in blocks where nothing else sees the variable (no new array)
            if not var._sub_scaled_in_place(grad, lr) and not _fused.sgd(var, grad, lr):
                var.assign_sub(em.multiply(grad, lr))
            return
        mom = self._hyper("momentum")
        m = self.add_slot(var, "momentum")
        if _fused.momentum(var, grad, m, mom, lr, self.nesterov):  # one kernel on a GPU
            return
        m.assign(em.subtract(em.multiply(m.value(), mom), em.multiply(grad, lr)))
        if self.nesterov:
            var.assign_add(em.subtract(em.multiply(m.value(), mom), em.multiply(grad, lr)))
        else:
            var.assign_add(m.value())


GradientDescentOptimizer = SGD
