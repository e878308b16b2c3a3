"""Gradients of matmul and einsum."""

from __future__ import annotations

from typing import Any

import ember.core as em
from ember.core import InvalidArgumentError

from . import register_gradient as reg


def _swap(x: Any) -> Any:
    p = list(range(x.ndim))
    p[-1], p[-2] = p[-2], p[-1]
    return em.transpose(x, p)


@reg("matmul")
def _matmul(op: Any, dy: Any) -> Any:
    x, y = op.inputs
    nx, ny = op.needs
    return (em.matmul(dy, _swap(y)) if nx else None,
            em.matmul(_swap(x), dy) if ny else None)


@reg("einsum")
def _einsum(op: Any, dy: Any) -> Any:
    lhs, out = op.attrs["equation"].split("->")
    subs = lhs.split(",")
    grads: list[Any] = []
    for i, (s, x) in enumerate(zip(subs, op.inputs)):
        if not op.needs[i]:
            grads.append(None)
            continue
        if len(set(s)) != len(s) or "." in s:
            raise InvalidArgumentError(
                f"einsum gradient: repeated indices or ellipsis in operand {i} ({s!r}) are not "
                "supported")
        others = [(t, v) for j, (t, v) in enumerate(zip(subs, op.inputs)) if j != i]
        present = set(out).union(*[set(t) for t, _ in others]) if others else set(out)
        kept = "".join(c for c in s if c in present)
        eq = ",".join([out] + [t for t, _ in others]) + "->" + kept
        g = em.einsum(eq, dy, *[v for _, v in others])
        if kept != s:  # indices summed only inside this operand: broadcast back
            shape = [x.shape[s.index(c)] if c in kept else 1 for c in s]
            g = em.broadcast_to(em.reshape(g, shape), x.shape)
        grads.append(g)
    return tuple(grads)
