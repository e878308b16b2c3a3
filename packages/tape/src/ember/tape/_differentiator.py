"""The tape's ``recording.Differentiator``: how graph mode differentiates a traced
function once and how tapes record a replayed call of it as one op.

Installed in core when ember-tape is imported. ``record_call`` records the call as a
``custom_gradient`` op (``_custom``), whose rule calls the given gradient function.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ember.core import extend, recording

from ._custom import CUSTOM_GRADIENT_OP
from ._tape import GradientTape


class TapeDifferentiator:
    """``recording.Differentiator`` made of ``GradientTape``."""

    def differentiate(self, fn: Callable[[], Any], sources: Sequence[Any]
                      ) -> tuple[Any, list[Any], Callable[[list[Any], list[Any]], list[Any]]]:
        t = GradientTape(persistent=True)
        with t:
            for s in sources:
                t.watch(s)
            result = fn()
        variables = t.watched_variables()
        wrt = list(sources) + variables

        def grad(targets: list[Any], output_gradients: list[Any]) -> list[Any]:
            return list(t.gradient(list(targets), wrt, output_gradients=list(output_gradients)))

        return result, variables, grad

    def watched(self, tensors: Sequence[Any]) -> list[bool]:
        out = [False] * len(tensors)
        for r in recording.active_recorders():
            if not isinstance(r, GradientTape):  # another kind of recorder: it may use any
                return [True] * len(tensors)
            tracked = r._tracked
            out = [w or id(t) in tracked for w, t in zip(out, tensors)]
        return out

    def record_call(self, inputs: Sequence[Any], outputs: Sequence[Any],
                    grad_fn: Callable[[list[Any]], Sequence[Any]]) -> None:
        def rule(op: Any, dy: Any) -> tuple[Any, ...]:
            return tuple(grad_fn(dy if isinstance(dy, list) else [dy]))

        extend.notify_op(CUSTOM_GRADIENT_OP, tuple(inputs), {"grad_fn": rule}, tuple(outputs))


recording.set_differentiator(TapeDifferentiator())
