"""A traced call's results: the nest of tensors and Python values a function returned,
as a structure that names the output slot of each tensor (``structure``), back
(``rebuild``), and its tensors in that order (``tensors_in``)."""

from __future__ import annotations

from typing import Any

import ember.core as em

from ._mappings import same_mapping
from ._trace import Tracer

_Tensor = em.Tensor


class _Out:
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


def structure(x: Any, tracer: Tracer, slots: list[int]) -> Any:
    """``x`` with each Tensor replaced by an ``_Out`` naming its output slot."""
    t = type(x)
    if t is _Tensor:
        slots.append(tracer.slot_of(x))
        return _Out(len(slots) - 1)
    if t is list or t is tuple:
        return t(structure(v, tracer, slots) for v in x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # a namedtuple
        return t(*[structure(v, tracer, slots) for v in x])
    if isinstance(x, dict):
        return same_mapping(x, ((k, structure(v, tracer, slots)) for k, v in x.items()))
    return x


def snapshot_variables(x: Any, tracer: Tracer | None) -> Any:
    """``x`` as ``tf.function`` returns it: each Variable replaced by the Tensor it holds
    at the end of the call (the live Variable, returned by every replay, changed under
    results already handed out: ``r1 = f(); r2 = f()`` gave ``r1 == r2``), and each Python
    bool, int or float by a tensor of it (``em.constant``'s dtype). ``tracer``: the call's
    tracer (its reads of the variables become the replay's outputs), or None for a call
    that ran eagerly."""
    t = type(x)
    if t is _Tensor:
        return x
    if t is bool or t is int or t is float:
        return em.constant(x)
    if isinstance(x, em.Variable):
        return x.value() if tracer is None else tracer._read_variables(x)
    if t is list or t is tuple:
        return t(snapshot_variables(v, tracer) for v in x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return t(*[snapshot_variables(v, tracer) for v in x])
    if isinstance(x, dict):
        return same_mapping(x, ((k, snapshot_variables(v, tracer)) for k, v in x.items()))
    return x


def rebuild(nest: Any, outs: list[Any]) -> Any:
    t = type(nest)
    if t is _Out:
        return outs[nest.index]
    if t is list or t is tuple:
        return t(rebuild(v, outs) for v in nest)
    if isinstance(nest, tuple) and hasattr(nest, "_fields"):
        return t(*[rebuild(v, outs) for v in nest])
    if isinstance(nest, dict):
        return same_mapping(nest, ((k, rebuild(v, outs)) for k, v in nest.items()))
    return nest


def tensors_in(x: Any) -> list[Any]:
    """The Tensors in ``x``, in the order ``structure`` numbers them."""
    t = type(x)
    if t is _Tensor:
        return [x]
    if t is list or t is tuple or (isinstance(x, tuple) and hasattr(x, "_fields")):
        return [o for v in x for o in tensors_in(v)]
    if isinstance(x, dict):
        return [o for v in x.values() for o in tensors_in(v)]
    return []
