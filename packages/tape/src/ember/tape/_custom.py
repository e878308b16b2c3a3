"""custom_gradient: a function that supplies its own gradient."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import ember.core as em
from ember.core import Tensor, Variable, extend

from ._nest import flatten, pack_as
from ._rules import OpContext, register_gradient


def _forward(be: Any, *arrays: Any, grad_fn: Any) -> Any:
    raise RuntimeError("custom_gradient runs through a function decorated with "
                       "@custom_gradient, not through run_op")


# An op of its own in core's table, recorded by tapes like any other: the decorated
# function tells the recorders it ran (its outputs come from the user's function), and
# the rule below calls the user's grad_fn, which travels in the op's attrs.
def _register() -> Any:
    op = extend.REGISTRY.get("custom_gradient")
    if op is not None and op.family == "tape":
        return op  # this module imported a second time (pytest's doctests do): the same op
    return extend.register_op("custom_gradient", _forward, family="tape")


CUSTOM_GRADIENT_OP = _register()


@register_gradient("custom_gradient", complex="own")  # grad_fn gets dy as it is (as TF's)
def _custom_gradient_rule(op: OpContext, dy: Any) -> Any:
    return op.attrs["grad_fn"](op, dy)


class _VariableCollector:
    """A recorder that only notes which variables ``f`` reads."""

    def __init__(self) -> None:
        self.variables: dict[int, Variable] = {}
        self.made: set[int] = set()  # ids of the tensors f's ops made
        self._keep: list[Any] = []  # (alive while the ids are compared)

    def record_op(self, op: Any, inputs: Any, attrs: Any, outputs: Any) -> None:
        self.made.update(id(o) for o in outputs)
        self._keep.extend(outputs)

    def variable_read(self, variable: Variable, value: Tensor) -> None:
        if variable.trainable:
            self.variables.setdefault(id(variable), variable)


def _fresh(outs: list[Tensor], made: set[int]) -> list[Tensor]:
    """``outs`` with each output that ``f``'s own ops did not make (``f`` returned its
    argument, or a tensor made before it ran), or that appears twice, replaced by a new
    tensor of the same value, as TensorFlow's identity on every result: the tapes map the
    op's inputs to its outputs, so an output that *is* an existing tensor would send the
    custom gradient to every other use of that tensor too."""
    seen: set[int] = set()
    fresh = []
    for o in outs:
        if id(o) not in made or id(o) in seen:
            with extend.recording_to():  # tapes see only the op; tracers see the copy
                o = em.identity(o)
        seen.add(id(o))
        fresh.append(o)
    return fresh


def custom_gradient(f: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate ``f(*args) -> (y, grad_fn)`` so that tapes use ``grad_fn(dy)`` for it.

    ``grad_fn`` returns one gradient per tensor argument (``None`` allowed). If ``f``
    reads trainable variables, ``grad_fn`` must accept ``variables=`` and return
    ``(input_grads, variable_grads)``. ``grad_fn`` is written in ember ops, so higher-order
    gradients through it work.

    Examples:
        >>> import ember.core as em
        >>> from ember import tape
        >>> @tape.custom_gradient
        ... def log1pexp(x):  # log(1 + e**x), stable for any x: exp never overflows
        ...     e = em.exp(-em.abs(x))
        ...     y = em.maximum(x, 0.0) + em.log(1 + e)
        ...     return y, lambda dy: dy * em.where(x >= 0, 1 / (1 + e), e / (1 + e))
        >>> tape.gradients_function(log1pexp)(100.)
        [ember.Tensor(1.0, shape=(), dtype=float32)]
        >>> log1pexp(100.)
        ember.Tensor(100.0, shape=(), dtype=float32)
    """

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        collector = _VariableCollector()
        with extend.recording_to(collector):  # f's own ops are not recorded
            result, grad_fn = f(*args, **kwargs)
        outs = []
        for o in flatten(result):
            if not isinstance(o, Tensor):
                fresh = not isinstance(o, Variable)  # a Python value: a new tensor, f's own
                o = em.convert_to_tensor(o)  # (a variable's: the value it holds, an input)
                if fresh:
                    collector.made.add(id(o))
            outs.append(o)
        if not extend.active_recorders():
            return result
        tensor_pos = [i for i, a in enumerate(args) if isinstance(a, (Tensor, Variable))]
        tensor_args = [args[i].value() if isinstance(args[i], Variable) else args[i]
                       for i in tensor_pos]
        variables = list(collector.variables.values())
        var_values = [v.value() for v in variables]  # active tapes see the reads now
        n_args = len(tensor_args)
        takes_vars = "variables" in inspect.signature(grad_fn).parameters

        def pick(gin: Any) -> list[Any]:
            """One gradient per positional argument, or per tensor argument: keep tensors'."""
            gin = list(gin) if isinstance(gin, (list, tuple)) else [gin]
            if len(gin) == len(args) and len(args) != n_args:
                return [gin[i] for i in tensor_pos]
            if len(gin) != n_args:
                raise ValueError(f"custom_gradient: grad_fn of {f.__name__} returned "
                                 f"{len(gin)} gradients for {len(args)} arguments")
            return gin

        def rule(op: Any, dy: Any) -> Any:
            dys = dy if isinstance(dy, list) else [dy]
            dys_packed = pack_as(result, dys) if len(dys) > 1 else dys[0]
            if variables:
                if not takes_vars:
                    raise TypeError(f"custom_gradient: {f.__name__} reads variables, so its "
                                    "grad_fn must accept a 'variables' keyword argument")
                gin, gvar = grad_fn(dys_packed, variables=variables)
                return tuple(pick(gin)) + tuple(gvar)
            return tuple(pick(grad_fn(dys_packed)))

        inputs = tuple(tensor_args + var_values)
        outs = _fresh(outs, collector.made)
        extend.notify_op(CUSTOM_GRADIENT_OP, inputs, {"grad_fn": rule}, tuple(outs))
        return pack_as(result, outs)

    return wrapper
