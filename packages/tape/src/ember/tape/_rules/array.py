"""Gradients of array ops: reshaping, joining, indexing, scatter, padding."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember.core as em
from ember.core import REGISTRY, Tensor
from ember.core.extend import run_op

from . import OWN, Gradients, OpContext
from . import register_gradient as _register


def reg(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Every array op moves or sums values (real coefficients): its rule is right for
    complex tensors as it is (the tape's conjugations would cancel)."""
    return _register(name, complex=OWN)


_GETITEM = REGISTRY["getitem"]
_INDEX_ADD = REGISTRY["index_add"]
_INDEX_UPDATE = REGISTRY["index_update"]

reg("reshape")(lambda op, dy: em.reshape(dy, op.inputs[0].shape))
reg("broadcast_to")(lambda op, dy: dy)  # the walker sums over the broadcast axes
reg("reverse")(lambda op, dy: em.reverse(dy, op.attrs["axis"]))
reg("roll")(lambda op, dy: em.roll(dy, [-s for s in op.attrs["shift"]], list(op.attrs["axis"])))


@reg("transpose")
def _transpose(op: OpContext, dy: Tensor) -> Gradients:
    perm = op.attrs["perm"]
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return em.transpose(dy, inv)


@reg("concat")
def _concat(op: OpContext, dy: Tensor) -> Gradients:
    axis = op.attrs["axis"]
    return tuple(em.split(dy, [x.shape[axis] for x in op.inputs], axis))


@reg("split")
def _split(op: OpContext, dys: list[Tensor]) -> Gradients:
    return em.concat(dys, op.attrs["axis"])


@reg("tile")
def _tile(op: OpContext, dy: Tensor) -> Gradients:
    x = op.inputs[0]
    mult = op.attrs["multiples"]
    inter = []
    for m, s in zip(mult, x.shape):
        inter += [m, s]
    summed = em.reduce_sum(em.reshape(dy, inter), axis=list(range(0, 2 * x.ndim, 2)))
    return em.reshape(summed, x.shape)


@reg("pad")
def _pad(op: OpContext, dy: Tensor) -> Gradients:
    x = op.inputs[0]
    key = tuple(slice(b, b + n) for (b, _), n in zip(op.attrs["paddings"], x.shape))
    return em.getitem(dy, key)


# Inputs after the tensor (and after the updates) are index tensors: no gradient.
@reg("getitem")
def _getitem(op: OpContext, dy: Tensor) -> Gradients:
    idx = op.inputs[1:]
    dx = run_op(_INDEX_ADD, (em.zeros_like(op.inputs[0]), dy, *idx), op.attrs)
    return (dx,) + (None,) * len(idx)


@reg("index_add")
def _index_add(op: OpContext, dy: Tensor) -> Gradients:
    idx = op.inputs[2:]
    return (dy, run_op(_GETITEM, (dy, *idx), op.attrs)) + (None,) * len(idx)


@reg("index_update")
def _index_update(op: OpContext, dy: Tensor) -> Gradients:
    u, idx = op.inputs[1], op.inputs[2:]
    dx = run_op(_INDEX_UPDATE, (dy, em.zeros_like(u), *idx), op.attrs)
    return (dx, run_op(_GETITEM, (dy, *idx), op.attrs)) + (None,) * len(idx)


@reg("copy_to_device")
def _copy(op: OpContext, dy: Tensor) -> Gradients:
    return dy.to(op.inputs[0].device)
