"""The random samplers as registered ops (family ``random``).

Each forward draws from the generator its ``generator`` attribute names (an
``ember.core.random.Generator``, or the global stream looked up when it draws) with
Philox4x32-10 on the device ``index`` (``_philox``, ``_philox_cuda``); graph mode replays
the op, so every call draws new numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import InvalidArgumentError
from .._registry import register


def _normal_fw(be: Any, *, generator: Any, shape: Any, dtype: Any, index: int) -> Any:
    return generator._draw(be, index, "normal", shape, dtype)


def _uniform_fw(be: Any, *, generator: Any, shape: Any, dtype: Any, index: int) -> Any:
    return generator._draw(be, index, "uniform", shape, dtype)


def _uniform_int_fw(be: Any, *, generator: Any, shape: Any, dtype: Any, low: int,
                    high: int, index: int) -> Any:
    span = high - low
    if span > 1 << 64:
        raise InvalidArgumentError(f"uniform: maxval - minval must be at most 2**64, got "
                                   f"{span}")
    return generator._draw(be, index, "int", shape, dtype, low=low, span=span)


def _truncated_fw(be: Any, *, generator: Any, shape: Any, dtype: Any, index: int) -> Any:
    return generator._draw(be, index, "truncated", shape, dtype)


def _categorical_fw(be: Any, logits: Any, *, generator: Any, num_samples: int,
                    dtype: Any, index: int) -> Any:
    xp = be.xp
    lg = logits.astype(np.float64)
    p = xp.exp(lg - lg.max(axis=1, keepdims=True))
    cdf = xp.cumsum(p / p.sum(axis=1, keepdims=True), axis=1)
    u = generator._draw(be, index, "uniform", (lg.shape[0], num_samples), np.float64)
    idx = xp.minimum((u[:, :, None] > cdf[:, None, :]).sum(-1), lg.shape[1] - 1)
    return idx.astype(dtype)


def _permutation_fw(be: Any, *, generator: Any, n: int, index: int) -> Any:
    keys = generator._draw(be, index, "int", (n,), np.uint64, low=0, span=1 << 64)
    return be.xp.argsort(keys).astype(np.int64)


def _sampler(name: str, forward: Any) -> Any:
    """Register a sampler op: family ``random`` (graph mode keeps its draws), no gradient."""
    return register(name, forward, family="random", differentiable=False)


_NORMAL = _sampler("random_normal", _normal_fw)
_UNIFORM = _sampler("random_uniform", _uniform_fw)
_UNIFORM_INT = _sampler("random_uniform_int", _uniform_int_fw)
_TRUNCATED = _sampler("random_truncated_normal", _truncated_fw)
_CATEGORICAL = _sampler("random_categorical", _categorical_fw)
_PERMUTATION = _sampler("random_permutation", _permutation_fw)


