"""What the monitoring callbacks share: which way a logged quantity improves, and the
optimizer's learning rate read and set between steps."""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np

import ember.core as em

from ..optimizers.schedules import LearningRateSchedule
from ._base import Callback

# which way each metric class improves: Keras 3.15's ``_direction`` of its metrics (read
# from Keras itself), by class name, so a subclass inherits its base's; a metric's own
# ``_direction`` attribute ("up" or "down", as a Keras metric sets it) comes first
_UP = frozenset({
    "AUC", "Accuracy", "BinaryAccuracy", "BinaryIoU", "CategoricalAccuracy",
    "ConcordanceCorrelation", "CosineSimilarity", "F1Score", "FBetaScore", "IoU", "MeanIoU",
    "OneHotIoU", "OneHotMeanIoU", "PearsonCorrelation", "Precision", "PrecisionAtRecall",
    "R2Score", "Recall", "RecallAtPrecision", "SensitivityAtSpecificity",
    "SparseCategoricalAccuracy", "SparseTopKCategoricalAccuracy", "SpecificityAtSensitivity",
    "TopKCategoricalAccuracy", "_KerasAccuracy"})
_DOWN = frozenset({
    "BinaryCrossentropy", "CategoricalCrossentropy", "CategoricalHinge", "Hinge",
    "KLDivergence", "LogCoshError", "MeanAbsoluteError", "MeanAbsolutePercentageError",
    "MeanSquaredError", "MeanSquaredLogarithmicError", "Poisson", "RootMeanSquaredError",
    "SparseCategoricalCrossentropy", "SquaredHinge"})


class MonitorCallback(Callback):
    """A callback watching ``monitor`` in the epoch logs (Keras's ``MonitorCallback``).

    ``mode`` "min" or "max" says which way is better; "auto" infers it: losses (``loss``,
    ``<output>_loss``, with or without ``val_``) go down, accuracies up, error metrics
    down; anything else is an error naming the quantity (Keras also refuses to guess).
    A change smaller than ``min_delta`` is no improvement.
    """

    def __init__(self, monitor: str = "val_loss", mode: str = "auto",
                 baseline: Any = None, min_delta: Any = 0) -> None:
        super().__init__()
        name = type(self).__name__
        if mode not in ("auto", "min", "max"):  # Keras warns and falls back to auto
            raise ValueError(f"{name}: mode must be 'auto', 'min' or 'max', got {mode!r}")
        if not isinstance(monitor, str):
            raise TypeError(f"{name}: monitor must be the name of a logged quantity, got "
                            f"{type(monitor).__name__}")
        self.monitor, self.mode = monitor, mode
        self.min_delta = abs(_real(name, "min_delta", min_delta))
        self.baseline = None if baseline is None else _real(name, "baseline", baseline)
        self.best: float | None = self.baseline
        self.monitor_op: Any = None

    def _set_monitor_op(self) -> None:
        mode = self.mode if self.mode != "auto" else _direction(self.model, self.monitor)
        if mode is None:
            raise ValueError(
                f"{type(self).__name__}: cannot tell whether {self.monitor!r} should go up or "
                f"down; pass mode='max' or mode='min'")
        self.monitor_op = np.greater if mode == "max" else np.less

    def _is_improvement(self, value: float, reference: float | None) -> bool:
        if reference is None:
            return True
        delta = self.min_delta if self.monitor_op is np.greater else -self.min_delta
        return bool(self.monitor_op(value - delta, reference))

    def _current(self, logs: Any, what: str) -> float | None:
        """The monitored value as a float, or None (with Keras's warning) when absent."""
        value = (logs or {}).get(self.monitor)
        if value is None:
            warnings.warn(f"{type(self).__name__}: {what} is conditioned on "
                          f"{self.monitor!r}, which is not in the logs; they hold "
                          f"{', '.join(logs or {}) or 'nothing'}", stacklevel=3)
            return None
        return float(value)


def _direction(model: Any, monitor: str) -> str | None:
    name = monitor[4:] if monitor.startswith("val_") else monitor
    if name == "loss" or name.endswith("_loss"):
        return "min"
    for m in getattr(model, "metrics", []):
        if m.name == name:
            own = getattr(m, "_direction", None)
            if own in ("up", "down"):
                return "max" if own == "up" else "min"
            for cls in type(m).__mro__:
                if cls.__name__ in _UP and cls.__module__.startswith("ember.nn"):
                    return "max"
                if cls.__name__ in _DOWN and cls.__module__.startswith("ember.nn"):
                    return "min"
    return None


def _real(owner: str, arg: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.number)) or \
            math.isnan(float(value)):
        raise TypeError(f"{owner}: {arg} must be a real number, got {value!r}")
    return float(value)


def _whole(owner: str, arg: str, value: Any, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{owner}: {arg} must be a whole number >= {low}, got {value!r}")
    return int(value)


def learning_rate(owner: str, optimizer: Any) -> float:
    """The optimizer's learning rate as a float (a schedule's at the current step)."""
    _check_optimizer(owner, optimizer)
    return float(optimizer._host_hyper("learning_rate"))


def set_learning_rate(owner: str, optimizer: Any, value: Any) -> float:
    """Set the learning rate between steps so that a traced step sees it: assigned into the
    optimizer's variable (the one a traced step reads), never replaced by a new source that
    a trace made before would not know of."""
    _check_optimizer(owner, optimizer)
    source = optimizer._hypers.get("learning_rate")
    if isinstance(source, LearningRateSchedule):
        raise TypeError(f"{owner}: the optimizer's learning rate is a "
                        f"{type(source).__name__} schedule, which cannot be set; give the "
                        f"optimizer a float learning rate to change it from a callback")
    if not isinstance(source, em.Variable):
        raise TypeError(f"{owner}: the optimizer's learning rate is a "
                        f"{type(source).__name__}, read as it is at every step; a callback "
                        f"can set only a float or Variable learning rate")
    value = float(value)
    source.assign(np.asarray(value, dtype=source.dtype))
    return value


def _check_optimizer(owner: str, optimizer: Any) -> None:
    if optimizer is None or "learning_rate" not in getattr(optimizer, "_hypers", {}):
        raise ValueError(f"{owner}: the model's optimizer {optimizer!r} has no learning "
                         f"rate (compile the model with an ember.nn optimizer)")
