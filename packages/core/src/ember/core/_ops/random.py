"""The random samplers as registered ops (family ``random``).

Each forward draws from the generator its ``generator`` attribute names (an
``ember.core.random.Generator``, or the global stream looked up when it draws) on the
host, with numpy's PCG64, and puts the numbers on the device ``index``; graph mode replays
the op, so every call draws new numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._registry import register


def _gen_dtype(dt: np.dtype) -> Any:
    return dt if dt in (np.float32, np.float64) else np.float32


def _put(be: Any, a: np.ndarray, dtype: Any, index: int) -> Any:
    return be.from_host(np.asarray(a, dtype=dtype), index)


def _normal_fw(be: Any, *, generator: Any, shape: Any, dtype: Any,
               index: int) -> Any:
    return _put(be, generator._host(lambda g: g.standard_normal(shape, dtype=_gen_dtype(dtype))),
                dtype, index)


def _uniform_fw(be: Any, *, generator: Any, shape: Any, dtype: Any,
               index: int) -> Any:
    return _put(be, generator._host(lambda g: g.random(shape, dtype=_gen_dtype(dtype))), dtype, index)


def _uniform_int_fw(be: Any, *, generator: Any, shape: Any, dtype: Any, low: int,
                    high: int, index: int) -> Any:
    return _put(be, generator._host(lambda g: g.integers(low, high, shape, dtype=dtype)), dtype, index)


def _truncated_fw(be: Any, *, generator: Any, shape: Any, dtype: Any,
               index: int) -> Any:
    def draw(g: np.random.Generator) -> np.ndarray:
        a = g.standard_normal(shape)
        bad = np.abs(a) > 2
        while bad.any():
            a[bad] = g.standard_normal(int(bad.sum()))
            bad = np.abs(a) > 2
        return a

    return _put(be, generator._host(draw), dtype, index)


def _categorical_fw(be: Any, logits: Any, *, generator: Any, num_samples: int,
                    dtype: Any, index: int) -> Any:
    lg = np.asarray(be.to_host(logits), dtype=np.float64)
    p = np.exp(lg - lg.max(axis=1, keepdims=True))
    cdf = np.cumsum(p / p.sum(axis=1, keepdims=True), axis=1)
    u = generator._host(lambda g: g.random((lg.shape[0], num_samples)))
    idx = np.minimum((u[:, :, None] > cdf[:, None, :]).sum(-1), lg.shape[1] - 1)
    return _put(be, idx, dtype, index)


def _permutation_fw(be: Any, *, generator: Any, n: int, index: int) -> Any:
    return _put(be, generator._host(lambda g: g.permutation(n)), np.int64, index)


def _sampler(name: str, forward: Any) -> Any:
    """Register a sampler op: family ``random`` (graph mode keeps its draws), no gradient."""
    return register(name, forward, family="random", differentiable=False)


_NORMAL = _sampler("random_normal", _normal_fw)
_UNIFORM = _sampler("random_uniform", _uniform_fw)
_UNIFORM_INT = _sampler("random_uniform_int", _uniform_int_fw)
_TRUNCATED = _sampler("random_truncated_normal", _truncated_fw)
_CATEGORICAL = _sampler("random_categorical", _categorical_fw)
_PERMUTATION = _sampler("random_permutation", _permutation_fw)


