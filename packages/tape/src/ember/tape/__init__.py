"""ember.tape: automatic differentiation with a gradient tape.

Examples:
    >>> import ember.core as em
    >>> from ember import tape
    >>> x = em.constant(3.0)
    >>> with tape.GradientTape() as t:
    ...     t.watch(x)
    ...     y = x * x
    >>> t.gradient(y, x)
    ember.Tensor(6.0, shape=(), dtype=float32)
"""

from . import _differentiator  # noqa: F401  (installs its Differentiator in core)
from ._check import GradientCheckError, check_gradients
from ._custom import custom_gradient
from ._functions import (
    gradients_function,
    implicit_gradients,
    implicit_value_and_gradients,
    value_and_gradients_function,
)
from ._rules import RULES, register_gradient
from ._tape import GradientTape, no_auto_watch
from ._version import __version__ as __version__  # tf.__version__, keras.__version__

__all__ = [
    "RULES",
    "GradientCheckError",
    "GradientTape",
    "check_gradients",
    "custom_gradient",
    "gradients_function",
    "implicit_gradients",
    "implicit_value_and_gradients",
    "no_auto_watch",
    "register_gradient",
    "value_and_gradients_function",
]
