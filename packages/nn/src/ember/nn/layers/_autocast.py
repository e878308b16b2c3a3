"""Keras's autocast: while a layer of a mixed policy runs ``call``, its float variables are
read cast to the compute dtype.

The variables stay in the variable dtype (float32): the optimizer updates them there, and
the cast sits between the variable and the ops that use it, so a tape sends the gradient
back through it in float32. The scope follows Keras 3's rules: a mixed layer opens one; a
layer inside it with another floating compute dtype (``dtype="float32"``) changes it; one
with ``autocast=False`` (or a non-floating compute dtype) closes it for its own call.
Variables made with ``add_weight(..., autocast=False)`` are never cast (BatchNormalization's
statistics, as Keras's).
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

import numpy as np

import ember.core as em
from ember.core import extend

from ..dtype_policies import DTypePolicy, is_floating

_scope: ContextVar[np.dtype | None] = ContextVar("ember_nn_autocast", default=None)
_NOT_CAST: set[int] = set()  # uids of variables made with autocast=False
KEEP = object()  # scope_for's answer when the current scope stays as it is


class _Cast:
    """The variable-read mapping of one compute dtype."""

    __slots__ = ("dtype",)

    def __init__(self, dtype: np.dtype) -> None:
        self.dtype = dtype

    def __call__(self, var: Any, value: Any) -> Any:
        dt = value.dtype
        if dt != self.dtype and is_floating(dt) and var.uid not in _NOT_CAST:
            return em.cast(value, self.dtype)
        return value


_CASTS: dict[np.dtype, _Cast] = {}


def exclude(var: Any) -> None:
    """Never cast ``var`` when read (``add_weight(..., autocast=False)``)."""
    uid = var.uid
    if uid not in _NOT_CAST:
        weakref.finalize(var, _NOT_CAST.discard, uid)
        _NOT_CAST.add(uid)


def is_excluded(var: Any) -> bool:
    return var.uid in _NOT_CAST


def scope_for(policy: DTypePolicy, autocast: bool) -> Any:
    """The autocast dtype a layer's call runs under (None: no casting), or ``KEEP``."""
    current = _scope.get()
    compute = policy._compute
    if current is not None:
        if not autocast or not is_floating(compute):
            return None
        return KEEP if current == compute else compute
    if autocast and compute != policy._variable and is_floating(compute):
        return compute
    return KEEP


@contextlib.contextmanager
def casting(dtype: np.dtype | None) -> Iterator[None]:
    """Read float variables as ``dtype`` inside the block (None: as themselves)."""
    fn = None
    if dtype is not None:
        fn = _CASTS.get(dtype)
        if fn is None:
            fn = _CASTS[dtype] = _Cast(dtype)
    token = _scope.set(dtype)
    try:
        with extend.map_variable_reads(fn):
            yield
    finally:
        _scope.reset(token)


def current() -> np.dtype | None:
    """The dtype variables are read as now (None outside a mixed layer's call)."""
    return _scope.get()
