"""``linspace`` gives TensorFlow's values: ``start + delta * i`` computed in the dtype itself,
the ends exactly ``start`` and ``stop`` (``math_ops.linspace_nd``). numpy's values, computed
in float64 and rounded, differed in the last place for about a third of them
(``linspace(0., 1., 51)[27]`` was 0.54000002 where TensorFlow gives 0.53999996; found
porting TensorFlow's "Integrated gradients", whose interpolation steps it makes)."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em


def _tensorflows(start: float, stop: float, num: int, dtype: type) -> np.ndarray:
    s, e = dtype(start), dtype(stop)
    delta = (e - s) / dtype(num - 1)
    middle = np.arange(1, num - 1, dtype=dtype) * delta + s
    return np.concatenate([[s], middle, [e]]).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ends", [(0.0, 1.0, 51), (0.0, 1.0, 241), (-3.5, 7.25, 17),
                                  (2.0, -1.0, 10), (1e-3, 1e3, 7)])
def test_values_are_tensorflows(device, dtype, ends):
    start, stop, num = ends
    got = em.linspace(start, stop, num, dtype=dtype).numpy()
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, _tensorflows(start, stop, num, dtype))


def test_short_and_empty(device):
    assert em.linspace(2.0, 3.0, 1).numpy().tolist() == [2.0]
    assert em.linspace(2.0, 3.0, 0).shape == (0,)
    assert em.linspace(2.0, 3.0, 2).numpy().tolist() == [2.0, 3.0]
    assert float(em.linspace(0.0, 1.0, 51)[27]) == float(np.float32(0.53999996))
