"""Callbacks that set the learning rate between epochs: ``LearningRateScheduler`` and
``ReduceLROnPlateau``.

Both assign into the optimizer's learning-rate variable, which a traced training step reads
at every call: the new rate takes effect at the next step without tracing again.
"""

from __future__ import annotations

import inspect
import numbers
from typing import Any

import numpy as np

import ember.core as em

from ._base import Callback
from ._monitor import MonitorCallback, _real, _whole, learning_rate, set_learning_rate


class LearningRateScheduler(Callback):
    """Set the learning rate at the start of every epoch from ``schedule`` (Keras's).

    Args:
        schedule: ``schedule(epoch, lr) -> new lr`` (epoch counted from 0, ``lr`` the
            current rate as a float), or ``schedule(epoch)``, Keras's older form.
        verbose: 1 prints each rate it sets.

    The rate is also logged as ``learning_rate`` at the end of each epoch (Keras).

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> model = nn.Sequential([nn.layers.Dense(1, input_shape=(2,))])
        >>> model.compile(nn.optimizers.SGD(0.1), "mse")
        >>> halve = nn.callbacks.LearningRateScheduler(lambda epoch, lr: lr / 2)
        >>> history = model.fit(np.ones((4, 2), np.float32), np.zeros(4), epochs=3,
        ...                     callbacks=[halve], verbose=0)
        >>> [round(lr, 4) for lr in history.history["learning_rate"]]
        [0.05, 0.025, 0.0125]
    """

    def __init__(self, schedule: Any, verbose: int = 0) -> None:
        super().__init__()
        if not callable(schedule):
            raise TypeError(f"LearningRateScheduler: schedule must be callable, got "
                            f"{type(schedule).__name__}")
        self.schedule = schedule
        self.verbose = _whole("LearningRateScheduler", "verbose", verbose)
        self._takes_lr = _takes_two(schedule)

    def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
        opt = self.model.optimizer
        if self._takes_lr:
            new = self.schedule(epoch, learning_rate("LearningRateScheduler", opt))
        else:
            new = self.schedule(epoch)
        new = set_learning_rate("LearningRateScheduler", opt, _rate(new))
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to "
                  f"{new}.")

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        if logs is not None:
            logs["learning_rate"] = learning_rate("LearningRateScheduler",
                                                  self.model.optimizer)


def _takes_two(fn: Any) -> bool:
    """Whether ``fn`` takes (epoch, lr): its signature decides, not a TypeError caught from
    a call (which would hide a TypeError raised inside the schedule)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)


def _rate(value: Any) -> float:
    """A schedule's answer as a float: a real number, or a one-element array or tensor."""
    if isinstance(value, (em.Tensor, np.ndarray)) and np.size(value) == 1:
        value = float(np.asarray(value).reshape(()))
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.number)):
        raise ValueError(f"LearningRateScheduler: the schedule must return a float, got "
                         f"{value!r}")
    return float(value)


class ReduceLROnPlateau(MonitorCallback):
    """Multiply the learning rate by ``factor`` when ``monitor`` stops improving (Keras's).

    Args:
        monitor: the logged quantity to watch (default ``"val_loss"``).
        factor: ``new_lr = lr * factor``; below 1.
        patience: epochs without improvement before the rate is reduced.
        verbose: 1 prints each reduction.
        mode: ``"min"``, ``"max"`` or ``"auto"`` (from the quantity's name).
        min_delta: a change smaller than this is no improvement.
        cooldown: epochs to wait after a reduction before counting again.
        min_lr: the rate is never reduced below this.

    The rate is also logged as ``learning_rate`` at the end of each epoch (Keras).

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> model = nn.Sequential([nn.layers.Dense(1, input_shape=(2,), use_bias=False)])
        >>> model.compile(nn.optimizers.SGD(0.1), "mse")
        >>> reduce = nn.callbacks.ReduceLROnPlateau("loss", factor=0.5, patience=1)
        >>> history = model.fit(np.zeros((4, 2), np.float32), np.ones(4), epochs=3,
        ...                     callbacks=[reduce], verbose=0)  # the loss never improves
        >>> [round(lr, 4) for lr in history.history["learning_rate"]]  # each epoch's rate
        [0.1, 0.1, 0.05]
        >>> round(float(model.optimizer.learning_rate.numpy()), 4)
        0.025
    """

    def __init__(self, monitor: str = "val_loss", factor: float = 0.1, patience: int = 10,
                 verbose: int = 0, mode: str = "auto", min_delta: float = 1e-4,
                 cooldown: int = 0, min_lr: float = 0.0) -> None:
        super().__init__(monitor, mode, min_delta=min_delta)
        factor = _real("ReduceLROnPlateau", "factor", factor)
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau: factor must be below 1.0, got {factor}")
        self.factor = factor
        self.min_lr = _real("ReduceLROnPlateau", "min_lr", min_lr)
        self.patience = _whole("ReduceLROnPlateau", "patience", patience)
        self.verbose = _whole("ReduceLROnPlateau", "verbose", verbose)
        self.cooldown = _whole("ReduceLROnPlateau", "cooldown", cooldown)
        self.cooldown_counter = self.wait = 0

    def on_train_begin(self, logs: Any = None) -> None:
        self.best, self.cooldown_counter, self.wait = None, 0, 0

    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        if self.monitor_op is None:
            self._set_monitor_op()
        logs = {} if logs is None else logs
        logs["learning_rate"] = learning_rate("ReduceLROnPlateau", self.model.optimizer)
        current = self._current(logs, "learning rate reduction")
        if current is None:
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self._is_improvement(current, self.best):
            self.best, self.wait = current, 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience and self._reduce(epoch, logs["learning_rate"]):
                self.cooldown_counter, self.wait = self.cooldown, 0

    def _reduce(self, epoch: int, old: float) -> bool:
        if old <= np.float32(self.min_lr):
            return False
        new = set_learning_rate("ReduceLROnPlateau", self.model.optimizer,
                                max(old * self.factor, self.min_lr))
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new}.")
        return True
