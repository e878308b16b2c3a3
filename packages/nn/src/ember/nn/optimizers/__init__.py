"""ember.nn.optimizers: SGD, Adam, AdamW, RMSProp, Adagrad, LossScaleOptimizer and
learning-rate schedules."""

from . import schedules
from .adam import Adam, AdamOptimizer, AdamW
from .base import Optimizer
from .loss_scale import LossScaleOptimizer
from .rmsprop import Adagrad, RMSProp, RMSprop
from .schedules import CosineDecay, ExponentialDecay, LearningRateSchedule, PiecewiseConstantDecay
from .sgd import SGD, GradientDescentOptimizer

__all__ = ["SGD", "Adagrad", "Adam", "AdamOptimizer", "AdamW", "CosineDecay",
           "ExponentialDecay", "GradientDescentOptimizer", "LearningRateSchedule",
           "LossScaleOptimizer", "Optimizer",
           "PiecewiseConstantDecay", "RMSProp", "RMSprop", "get", "schedules"]


def get(identifier: object) -> Optimizer:
    """An optimizer from a name (``"adam"``, ``"sgd"``, ...) or an instance."""
    if isinstance(identifier, Optimizer):
        return identifier
    names = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSProp, "adagrad": Adagrad}
    if isinstance(identifier, str) and identifier.lower() in names:
        return names[identifier.lower()]()
    raise ValueError(f"cannot interpret {identifier!r} as an optimizer; known: {sorted(names)}")
