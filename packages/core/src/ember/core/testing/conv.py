"""Pinning the convolution autotuner's choices in tests.

On a GPU (and on the strict double) ``conv_algorithm="auto"`` times every candidate and
keeps the fastest per geometry; on the double that timing is numpy's, which chooses
differently from run to run. A test that counts kernels or copies needs the choice a real
GPU made: ``conv_algorithms_chosen_by(choose)`` decides it instead, for the block.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from .._ops import conv_select

#: the direction index ``choose`` receives: 0 forward, 1 input gradient, 2 filter gradient
FORWARD, INPUT_GRADIENT, FILTER_GRADIENT = 0, 1, 2


@contextlib.contextmanager
def conv_algorithms_chosen_by(
        choose: Callable[[int, list[str], Any], str]) -> Iterator[None]:
    """Inside the block, the autotuner takes ``choose(direction, candidates, geometry)``'s
    algorithm (one of ``candidates``; ``geometry.w_shape`` is the filter's shape) instead
    of timing them. Choices made before and inside the block are forgotten on entry and
    exit.

    Raises:
        ValueError: ``choose`` named an algorithm that is not a candidate.
    """
    def autotune(be: Any, i: int, cands: list[str], a: Any, b: Any, g: Any
                 ) -> tuple[str, Any]:
        algo = choose(i, list(cands), g)
        if algo not in cands:
            raise ValueError(f"conv_algorithms_chosen_by: {algo!r} is not a candidate "
                             f"here; candidates: {cands}")
        return algo, be.xp.ascontiguousarray(conv_select.ALGORITHMS[algo][i](be.xp, a, b, g))

    outer = conv_select._autotune
    conv_select.clear_chosen()
    conv_select._autotune = autotune  # type: ignore[assignment]
    try:
        yield
    finally:
        conv_select._autotune = outer  # type: ignore[assignment]
        conv_select.clear_chosen()
