"""Function transformations: gradients_function, implicit_gradients and friends."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import ember.core as em
from ember.core import Tensor, Variable

from ._tape import GradientTape


def _as_source(a: Any) -> Any:
    if isinstance(a, (Tensor, Variable)):
        return a
    t = em.convert_to_tensor(a)
    return em.cast(t, em.float32) if t.dtype.kind in "iub" else t


def value_and_gradients_function(f: Callable[..., Any],
                                 params: Sequence[int] | None = None) -> Callable[..., Any]:
    """A function returning ``(f(*args), [df/darg for each arg])``.

    Python numbers become float tensors. ``params`` picks which positional arguments to
    differentiate (all by default); unconnected arguments get ``None``.
    """

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> tuple[Any, list[Any]]:
        idx = range(len(args)) if params is None else params
        args = tuple(_as_source(a) if i in idx else a for i, a in enumerate(args))
        with GradientTape() as t:
            srcs = [args[i] for i in idx]
            t.watch(srcs)
            value = f(*args, **kwargs)
        return value, list(t.gradient(value, srcs))

    return wrapper


def gradients_function(f: Callable[..., Any], params: Sequence[int] | None = None
                       ) -> Callable[..., list[Any]]:
    """A function returning the list of gradients of ``f`` with respect to its arguments.

    Examples:
        >>> import ember.core as em
        >>> from ember import tape
        >>> def square(x):
        ...     return em.multiply(x, x)
        >>> tape.gradients_function(square)(3.)
        [ember.Tensor(6.0, shape=(), dtype=float32)]
    """
    vg = value_and_gradients_function(f, params)

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> list[Any]:
        return vg(*args, **kwargs)[1]

    return wrapper


def implicit_value_and_gradients(f: Callable[..., Any]) -> Callable[..., Any]:
    """A function returning ``(f(*args), [(gradient, variable), ...])`` over the trainable
    variables that ``f`` read."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> tuple[Any, list[tuple[Any, Variable]]]:
        with GradientTape() as t:
            value = f(*args, **kwargs)
        variables = t.watched_variables()
        if not variables:
            raise ValueError(f"implicit_gradients: {getattr(f, '__name__', f)!r} read no "
                             "trainable variables")
        grads = t.gradient(value, variables)
        return value, list(zip(grads, variables))

    return wrapper


def implicit_gradients(f: Callable[..., Any]) -> Callable[..., list[tuple[Any, Variable]]]:
    """A function returning ``[(gradient, variable), ...]`` over the trainable variables
    that ``f`` read (the seeds' ``tfe.implicit_gradients``)."""
    vg = implicit_value_and_gradients(f)

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> list[tuple[Any, Variable]]:
        return vg(*args, **kwargs)[1]

    return wrapper
