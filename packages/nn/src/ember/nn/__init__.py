"""ember.nn: layers, models, losses, optimizers and metrics for ember.

Examples:
    >>> import ember.core as em
    >>> from ember import nn
    >>> model = nn.Sequential([nn.layers.Dense(10, input_shape=(784,)), nn.layers.Dense(10)])
    >>> model(em.zeros((2, 784))).shape
    (2, 10)
"""

from . import (
    activations,
    backend,
    callbacks,
    config,
    constraints,
    dtype_policies,
    initializers,
    layers,
    losses,
    metrics,
    mixed_precision,
    models,
    ops,
    optimizers,
    preprocessing,
    random,
    regularizers,
    saving,
    utils,
)
from ._version import __version__ as __version__  # tf.__version__, keras.__version__
from .global_step import get_global_step, get_or_create_global_step, reset_global_step
from .layers import Input, Layer
from .model import Functional, Model, Sequential
from .variables import Variable

__all__ = [
    "Layer", "Model", "Sequential", "activations", "callbacks", "get_global_step",
    "get_or_create_global_step", "initializers", "layers", "losses", "metrics", "optimizers",
    "reset_global_step",
]
__all__ += ["constraints", "regularizers", "models", "Input", "Functional", "saving"]
__all__ += ["dtype_policies", "mixed_precision"]
__all__ += ["utils", "ops", "random", "preprocessing", "backend", "config", "Variable"]
