"""Keras 3's operation nodes: ``keras.ops`` functions called on the symbolic tensors of a
functional model, as the layers that a ``.keras`` file's graph holds.

Keras 3 records ``x + y``, ``keras.ops.not_equal(ids, 0)`` and the like on symbolic
tensors as nodes of the model's graph, and saves them as ``{"module":
"keras.src.ops.numpy", "class_name": "NotEqual", ...}`` entries among its layers. A model
with an ``Embedding(mask_zero=True)`` before ``MultiHeadAttention`` has one: the mask
that the attention passes on is ``not_equal(ids, 0)``, which Keras writes into the graph.
ember reads these entries as the layers below (each computes the ember op of the same
name) and writes them back in Keras's form, so such files load both ways.

Python's operators on symbolic tensors make these nodes too (``x + inputs`` in a
functional model is an ``Add`` node, as in Keras 3). Only element-wise operations whose
config is their name alone are here; any other operation in a file is refused by name,
as an unknown class is.
"""

from __future__ import annotations

from typing import Any

import ember.core as em

from . import _symbolic
from .base import Layer


class _Operation(Layer):
    """A Keras 3 operation node: calling it calls the ember op ``op`` on its arguments
    (tensors, or Python numbers as Keras saved them)."""

    op: Any = None  # the ember function (a staticmethod of each subclass)
    arity = 2
    _autocast = False  # Keras's operations take their inputs as they come

    def __init__(self, name: str | None = None, **kwargs: Any) -> None:
        unknown = sorted(set(kwargs) - {"dtype", "trainable"})
        if unknown:
            raise TypeError(f"{type(self).__name__}: Keras's operation node takes only a "
                            f"name, got {unknown}")
        super().__init__(name=name, **kwargs)
        self.built = True

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if args and isinstance(args[0], (bool, int, float)):  # ``1 - x``: a number first
            if _symbolic.is_symbolic(list(args[1:])):
                return _symbolic.call_symbolic(self, args[0], args[1:], kwargs,
                                               values_allowed=True)
            # the number stays a Python number (weak: 1.0 - x keeps a float16 x's dtype),
            # where a layer's call would make it a float32 tensor first
            kwargs.pop("training", None)
            return self.call(*args, **kwargs)
        return super().__call__(*args, **kwargs)

    def call(self, *args: Any) -> Any:
        if len(args) != self.arity:
            raise TypeError(f"{type(self).__name__} ({self.name!r}): takes {self.arity} "
                            f"argument{'s' if self.arity > 1 else ''}, got {len(args)}")
        return type(self).op(*args)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return None  # as Keras's operations: a mask does not pass through (no warning)

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name}


def _operation(class_name: str, op: Any, arity: int) -> type:
    doc = (f"Keras's ``keras.ops.{op.__name__}`` node of a functional model: "
           f"``em.{op.__name__}`` on its {arity} argument{'s' if arity > 1 else ''}.")
    return type(class_name, (_Operation,), {"op": staticmethod(op), "arity": arity,
                                           "__doc__": doc, "__module__": __name__})


# the classes of Keras 3's keras/src/ops/numpy.py, by its names
Add = _operation("Add", em.add, 2)
Subtract = _operation("Subtract", em.subtract, 2)
Multiply = _operation("Multiply", em.multiply, 2)
Divide = _operation("Divide", em.divide, 2)
TrueDivide = _operation("TrueDivide", em.truediv, 2)
Power = _operation("Power", em.pow, 2)
Maximum = _operation("Maximum", em.maximum, 2)
Minimum = _operation("Minimum", em.minimum, 2)
Equal = _operation("Equal", em.equal, 2)
NotEqual = _operation("NotEqual", em.not_equal, 2)
Greater = _operation("Greater", em.greater, 2)
GreaterEqual = _operation("GreaterEqual", em.greater_equal, 2)
Less = _operation("Less", em.less, 2)
LessEqual = _operation("LessEqual", em.less_equal, 2)
LogicalAnd = _operation("LogicalAnd", em.logical_and, 2)
LogicalOr = _operation("LogicalOr", em.logical_or, 2)
LogicalNot = _operation("LogicalNot", em.logical_not, 1)
Negative = _operation("Negative", em.negative, 1)
Absolute = _operation("Absolute", em.abs, 1)
Sign = _operation("Sign", em.sign, 1)
Exp = _operation("Exp", em.exp, 1)
Log = _operation("Log", em.log, 1)
Sqrt = _operation("Sqrt", em.sqrt, 1)
Square = _operation("Square", em.square, 1)
Tanh = _operation("Tanh", em.tanh, 1)
Sin = _operation("Sin", em.sin, 1)
Cos = _operation("Cos", em.cos, 1)
