"""ember.nn.optimizers: SGD, Adam, AdamW, RMSProp, Adagrad, Adamax, Adadelta, Nadam, Ftrl,
Lion, Lamb, Adafactor, LossScaleOptimizer and learning-rate schedules."""

from . import schedules
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adam import Adam, AdamOptimizer, AdamW
from .adamax import Adamax
from .base import Optimizer
from .ftrl import Ftrl
from .lamb import Lamb
from .lion import Lion
from .loss_scale import LossScaleOptimizer
from .nadam import Nadam
from .rmsprop import Adagrad, RMSProp, RMSprop
from .schedules import CosineDecay, ExponentialDecay, LearningRateSchedule, PiecewiseConstantDecay
from .sgd import SGD, GradientDescentOptimizer

__all__ = ["SGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamOptimizer", "AdamW",
           "Adamax", "CosineDecay", "ExponentialDecay", "Ftrl", "GradientDescentOptimizer",
           "Lamb", "LearningRateSchedule", "Lion", "LossScaleOptimizer", "Nadam", "Optimizer",
           "PiecewiseConstantDecay", "RMSProp", "RMSprop", "get", "schedules"]


def get(identifier: object) -> Optimizer:
    """An optimizer from a name (``"adam"``, ``"sgd"``, ``"nadam"``, ...; any case) or an
    instance."""
    if isinstance(identifier, Optimizer):
        return identifier
    names = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSProp, "adagrad": Adagrad,
             "adamax": Adamax, "adadelta": Adadelta, "nadam": Nadam, "ftrl": Ftrl,
             "lion": Lion, "lamb": Lamb, "adafactor": Adafactor}
    if isinstance(identifier, str) and identifier.lower() in names:
        return names[identifier.lower()]()
    raise ValueError(f"cannot interpret {identifier!r} as an optimizer; known: {sorted(names)}")
