"""Horovod's Keras callbacks (``hvd.callbacks``) for ``ember.nn``'s ``fit``.

They follow ember.nn's callback protocol by duck typing (``set_model``, ``set_params`` and
the ``on_*`` hooks), so ember.distribute needs no ember.nn to define them:

* ``BroadcastGlobalVariablesCallback(root_rank)``: after the first training batch (once
  the optimizer has made its slots), every rank takes the root's model and optimizer
  variables.
* ``MetricAverageCallback()``: at the end of each epoch, every value in the logs becomes
  its mean over the ranks (in place, so the callbacks after it and ``History`` see it).
* ``LearningRateScheduleCallback(initial_lr, multiplier, ...)`` and
  ``LearningRateWarmupCallback(initial_lr, warmup_epochs=5, ...)``: the learning rate as
  Horovod sets it, a multiple of ``initial_lr`` per epoch (or per batch, ``staircase=False``);
  the warmup goes from ``initial_lr / size`` to ``initial_lr`` over ``warmup_epochs``, as
  "Accurate, Large Minibatch SGD" (Goyal et al., 2017) prescribes for a learning rate
  scaled by the number of ranks. With ``momentum_correction`` an optimizer's momentum is
  scaled by the change of the learning rate for the batch where it changes, and put back
  after it.

Examples:
    >>> from ember import distribute
    >>> cb = distribute.callbacks.LearningRateWarmupCallback(0.1, warmup_epochs=2,
    ...                                                     steps_per_epoch=10)
    >>> cb.multiplier(0.0) == 1.0  # in a world of one the rate starts at initial_lr
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import _world
from ._broadcast import broadcast_variables
from ._collectives import allreduce

__all__ = ["BroadcastGlobalVariablesCallback", "LearningRateScheduleCallback",
           "LearningRateWarmupCallback", "MetricAverageCallback"]


class _Callback:
    """ember.nn's callback protocol: every hook a no-op until a subclass defines it."""

    def __init__(self) -> None:
        self.model: Any = None
        self.params: dict[str, Any] = {}

    def set_model(self, model: Any) -> None:
        self.model = model

    def set_params(self, params: dict[str, Any]) -> None:
        self.params = params

    def __getattr__(self, name: str) -> Any:
        if name.startswith("on_"):
            return _noop
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")


def _noop(*args: Any, **kwargs: Any) -> None:
    return None


def _optimizer_variables(optimizer: Any) -> list[Any]:
    v = getattr(optimizer, "variables", None)
    if callable(v):  # TF 2's method; ember's (Keras 3's) is a property
        v = v()
    return list(v or [])


class BroadcastGlobalVariablesCallback(_Callback):
    """After the first training batch, every rank takes ``root_rank``'s model variables and
    optimizer variables (Horovod's ``BroadcastGlobalVariablesCallback``).

    Args:
        root_rank: The rank whose values every rank takes.
        device: Accepted for Horovod's signature; only ``""`` (ember chooses the path:
            NCCL where the values are on GPUs, else MPI on the host).
    """

    def __init__(self, root_rank: int = 0, device: str = "") -> None:
        super().__init__()
        if device != "":
            raise ValueError(f"BroadcastGlobalVariablesCallback: device={device!r} is not "
                             "supported; ember broadcasts on the values' own devices")
        self.root_rank = root_rank
        self.broadcast_done = False

    def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
        if self.broadcast_done:
            return
        broadcast_variables(list(self.model.variables), root=self.root_rank)
        opt = getattr(self.model, "optimizer", None)
        if opt is not None:
            broadcast_variables(_optimizer_variables(opt), root=self.root_rank)
        self.broadcast_done = True


class MetricAverageCallback(_Callback):
    """At the end of each epoch, every value in the logs becomes its mean over the ranks,
    in place, in sorted key order (Horovod's ``MetricAverageCallback``). Put it before
    callbacks that read the logs (``ModelCheckpoint``, ``EarlyStopping``).

    Args:
        device: Accepted for Horovod's signature; only ``""``.
    """

    def __init__(self, device: str = "") -> None:
        super().__init__()
        if device != "":
            raise ValueError(f"MetricAverageCallback: device={device!r} is not supported")

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        if not logs or _world.current().size == 1:
            return
        averaged = {}
        for key in sorted(logs):  # every rank reduces the keys in one order
            a = np.asarray(logs[key], np.float64)  # a number; an array for multi-value metrics
            mean = allreduce(a, op="mean", name=f"MetricAverageCallback {key}")
            averaged[key] = float(mean) if a.ndim == 0 else mean
        logs.update(averaged)


class LearningRateScheduleCallback(_Callback):
    """Sets the optimizer's learning rate to ``initial_lr * multiplier(epoch)`` for the
    epochs ``[start_epoch, end_epoch)`` (Horovod's ``LearningRateScheduleCallback``).

    Args:
        initial_lr: The learning rate the multiplier scales (None: the optimizer's at the
            start of training).
        multiplier: A function of the epoch (fractional when ``staircase=False``), or a
            number ``m`` for ``m ** (epoch - start_epoch)``.
        start_epoch, end_epoch: The epochs it acts in (``end_epoch`` None: to the end).
        staircase: True: set once per epoch, at its first batch; False: at every batch,
            with ``epoch + batch / steps_per_epoch``.
        momentum_correction: Scale an optimizer's ``momentum`` by ``new_lr / old_lr`` for
            each batch whose learning rate changes (put back after the batch).
        steps_per_epoch: Batches per epoch, for ``staircase=False``; None: ``fit``'s.
    """

    def __init__(self, initial_lr: float | None, multiplier: Any, start_epoch: int = 0,
                 end_epoch: int | None = None, staircase: bool = True,
                 momentum_correction: bool = True, steps_per_epoch: int | None = None) -> None:
        super().__init__()
        self.initial_lr = initial_lr
        self.start_epoch = start_epoch
        self.end_epoch = end_epoch
        self.staircase = staircase
        self.momentum_correction = momentum_correction
        self.steps_per_epoch = steps_per_epoch
        self.current_epoch = 0
        self._momentum: float | None = None
        if callable(multiplier):
            self.multiplier: Callable[[float], float] = multiplier
        else:
            base = float(multiplier)
            self.multiplier = lambda epoch: base ** (epoch - start_epoch)

    def on_train_begin(self, logs: Any = None) -> None:
        if self.initial_lr is None:
            self.initial_lr = float(self.model.optimizer.learning_rate)
        if not self.staircase and not self.steps_per_epoch:
            steps = self.params.get("steps")
            if not steps:
                raise ValueError(f"{type(self).__name__}: fit does not know the number of "
                                 "steps per epoch; pass steps_per_epoch")
            self.steps_per_epoch = int(steps)

    def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
        self.current_epoch = epoch

    def on_train_batch_begin(self, batch: int, logs: Any = None) -> None:
        epoch = self.current_epoch
        if epoch < self.start_epoch or (self.end_epoch is not None and epoch >= self.end_epoch):
            return
        if self.staircase:
            if batch == 0:
                self._set(float(epoch))
        else:
            self._set(epoch + batch / float(self.steps_per_epoch or 1))

    def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
        if self._momentum is not None:
            self.model.optimizer.momentum = self._momentum
            self._momentum = None

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        if logs is not None:
            logs["lr"] = float(self.model.optimizer.learning_rate)

    def _set(self, epoch: float) -> None:
        opt = self.model.optimizer
        old = float(opt.learning_rate)
        new = float(self.initial_lr) * float(self.multiplier(epoch))  # type: ignore[arg-type]
        opt.learning_rate = new
        momentum = getattr(opt, "momentum", None)
        if self.momentum_correction and momentum is not None and old:
            self._momentum = float(momentum)
            opt.momentum = self._momentum * new / old


class LearningRateWarmupCallback(LearningRateScheduleCallback):
    """The learning rate rises from ``initial_lr / size`` to ``initial_lr`` over the first
    ``warmup_epochs``, batch by batch (Horovod's ``LearningRateWarmupCallback``): for a
    learning rate scaled by the number of ranks, as large batches need.

    Args:
        initial_lr: The learning rate at the end of the warmup (already scaled by size).
        warmup_epochs: Epochs the warmup lasts.
        momentum_correction: See ``LearningRateScheduleCallback``.
        steps_per_epoch: Batches per epoch (None: ``fit``'s).
        verbose: 1 to print on the chief when the warmup ends.
    """

    def __init__(self, initial_lr: float, warmup_epochs: int = 5,
                 momentum_correction: bool = True, steps_per_epoch: int | None = None,
                 verbose: int = 0) -> None:
        def multiplier(epoch: float) -> float:
            n = _world.current().size
            # the epoch this batch ends (Horovod's): the last batch of the warmup reaches 1
            epoch += 1.0 / float(self.steps_per_epoch or 1)
            return (epoch * (n - 1) / warmup_epochs + 1) / n

        super().__init__(initial_lr, multiplier, start_epoch=0, end_epoch=warmup_epochs,
                         staircase=False, momentum_correction=momentum_correction,
                         steps_per_epoch=steps_per_epoch)
        self.warmup_epochs = warmup_epochs
        self.verbose = verbose

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        super().on_epoch_end(epoch, logs)
        if self.verbose and epoch == self.warmup_epochs - 1 and _world.current().rank == 0:
            print(f"\nEpoch {epoch + 1}: finished gradual learning rate warmup to "
                  f"{float(self.model.optimizer.learning_rate):g}.")
