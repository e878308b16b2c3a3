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

import functools
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
    _ember_probes_batch = True  # its output's batch axis is found, not assumed first

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



class OpLambda(_Operation):
    """An ember function or op called on symbolic tensors of a functional model, as a node
    of its graph (tf.keras's ``TFOpLambda``): ``em.squeeze(x, -1)``,
    ``em.nn_ops.l2_normalize(x, axis=-1)`` or ``em.matmul(a, b)`` on symbolic tensors
    records the call, its other arguments kept as they were given, and the model makes it
    on each run. Core hands such calls over through ``SymbolicTensor.__ember_function__``
    (a public function: ``function`` is its public name) and ``__ember_op__`` (an op run
    directly: ``op`` is its registered name), ``ember.core.extend``'s seam.

    Saved by that name and its arguments: a file names a function or op of ember's own
    tables, never code. Arguments other than Python numbers, strings, dtypes and lists of
    them (arrays, variables, slices) cannot be saved: make arrays a layer's weights.
    """

    def __init__(self, function: str | None = None, op: str | None = None,
                 arguments: Any = None, name: str | None = None, **kwargs: Any) -> None:
        from ember.core import extend

        fn: Any
        if function is not None and op is None:
            fn = extend.public_function(function)
            if fn is None:
                raise ValueError(f"OpLambda: ember has no public function {function!r}")
            base = function
        elif op is not None and function is None:
            try:
                opdef = extend.REGISTRY[op]
            except KeyError:
                raise ValueError(f"OpLambda: no ember op named {op!r}") from None
            fn, base = functools.partial(_run_op, opdef), op
        else:
            raise ValueError(f"OpLambda: give function= or op=, got function={function!r}, "
                             f"op={op!r}")
        self._fn = fn
        self._function, self._opname = function, op
        self._arguments: tuple[list[Any], dict[str, Any]]
        super().__init__(name=name or _unique_name(base), **kwargs)
        # (args, kwargs) with _Input(i) where the call's i-th symbolic tensor goes; a
        # variable among them is read on each call, not made this layer's weight
        object.__setattr__(self, "_arguments", ([], {}) if arguments is None else arguments)

    def call(self, *inputs: Any) -> Any:
        xs = inputs[0] if len(inputs) == 1 and isinstance(inputs[0], list) else list(inputs)
        args, kwargs = _fill(self._arguments, xs)
        return self._fn(*args, **kwargs)

    def get_config(self) -> dict[str, Any]:
        where = f"OpLambda {self.name!r} ({self._function or self._opname!r})"
        args, kwargs = self._arguments
        return {"name": self.name, "function": self._function, "op": self._opname,
                "arguments": {"args": _to_config(where, list(args)),
                              "kwargs": {k: _to_config(where, v) for k, v in kwargs.items()}}}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> OpLambda:
        config = dict(config)
        arguments = config.pop("arguments", None)
        if arguments is not None:
            if not (type(arguments) is dict and set(arguments) == {"args", "kwargs"} and
                    type(arguments["args"]) is list and type(arguments["kwargs"]) is dict):
                raise ValueError(f"OpLambda: arguments must be {{'args': [...], 'kwargs': "
                                 f"{{...}}}}, got {arguments!r:.200}")
            arguments = (_from_config(arguments["args"]),
                         {str(k): _from_config(v) for k, v in arguments["kwargs"].items()})
        return cls(arguments=arguments, **config)


class _Input:
    """Where a call's i-th symbolic tensor goes among its arguments."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


def _run_op(op: Any, *inputs: Any, attrs: Any = None) -> Any:
    from ember.core import extend

    return extend.run_op(op, inputs, attrs)


def _unique_name(base: str) -> str:
    from .base import _unique_name

    return _unique_name(base.replace(".", "_"))


def _template(x: Any, found: list[Any]) -> Any:
    """``x`` with each symbolic tensor replaced by an ``_Input`` (appended to ``found``)."""
    if isinstance(x, _symbolic.SymbolicTensor):
        found.append(x)
        return _Input(len(found) - 1)
    if type(x) in (list, tuple):
        return type(x)(_template(v, found) for v in x)
    if type(x) is dict:
        return {k: _template(v, found) for k, v in x.items()}
    return x


def _fill(x: Any, inputs: list[Any]) -> Any:
    if type(x) is _Input:
        return inputs[x.index]
    if type(x) in (list, tuple):
        return type(x)(_fill(v, inputs) for v in x)
    if type(x) is dict:
        return {k: _fill(v, inputs) for k, v in x.items()}
    return x


def _to_config(where: str, x: Any) -> Any:
    """An argument as JSON: tuples as {"tuple": [...]}, dtypes as {"dtype": name}, inputs
    as {"input": i}; anything else but numbers, strings and None is refused."""
    import numpy as np

    if x is None or type(x) in (bool, int, float, str):
        return x
    if type(x) is _Input:
        return {"input": x.index}
    if isinstance(x, (np.integer, np.floating, np.bool_)):
        return x.item()
    if type(x) is list:
        return [_to_config(where, v) for v in x]
    if type(x) is tuple:
        return {"tuple": [_to_config(where, v) for v in x]}
    if type(x) is dict and all(type(k) is str for k in x):
        return {"dict": {k: _to_config(where, v) for k, v in x.items()}}
    if isinstance(x, np.dtype) or (isinstance(x, type) and issubclass(x, np.generic)):
        return {"dtype": np.dtype(x).name}
    shape = getattr(x, "shape", None)
    what = type(x).__name__ if shape is None else f"{type(x).__name__} of shape {tuple(shape)}"
    raise ValueError(f"{where}: its argument, a {what}, cannot be saved: only numbers, "
                     f"strings, dtypes and lists of them can; make an array a layer's weight")


def _from_config(x: Any) -> Any:
    if x is None or type(x) in (bool, int, float, str):
        return x
    if type(x) is list:
        return [_from_config(v) for v in x]
    if type(x) is dict and len(x) == 1:
        (kind, v), = x.items()
        if kind == "input" and type(v) is int and v >= 0:
            return _Input(v)
        if kind == "tuple" and type(v) is list:
            return tuple(_from_config(e) for e in v)
        if kind == "dict" and type(v) is dict:
            return {k: _from_config(e) for k, e in v.items()}
        if kind == "dtype" and type(v) is str:
            return em.as_dtype(v)
    raise ValueError(f"OpLambda: an argument must be a number, string, list or one of "
                     f"{{'input'|'tuple'|'dict'|'dtype': ...}}, got {x!r:.200}")


def function_on_symbolic(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A public function called on symbolic tensors: an ``OpLambda`` node
    (``SymbolicTensor.__ember_function__``)."""
    found: list[Any] = []
    arguments = (_template(list(args), found), _template(dict(kwargs), found))
    return OpLambda(function=fn.__ember_public__, arguments=arguments)(found)


def op_on_symbolic(op: Any, inputs: tuple[Any, ...], attrs: dict[str, Any] | None) -> Any:
    """An op run on symbolic tensors: an ``OpLambda`` node (``SymbolicTensor.__ember_op__``)."""
    found: list[Any] = []
    arguments = (_template(list(inputs), found),
                 {} if attrs is None else {"attrs": dict(attrs)})
    return OpLambda(op=op.name, arguments=arguments)(found)
