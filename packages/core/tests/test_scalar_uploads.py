"""Python numbers on a GPU are uploaded once each and kept (up to a bound): when the bound
is reached the oldest value goes, never the values the current step just uploaded (a
cache emptied mid-step re-uploaded them at the next step: an eager training step on the
double made one pageable upload after other tests had filled the cache)."""

import ember.core as em
from ember.core import _convert


def test_a_full_cache_evicts_the_oldest_value_only(strict_gpu_default):
    counters = em.get_device("/gpu:0").backend.counters
    _convert._DEVICE_SCALARS.clear()
    bound = _convert._DEVICE_SCALARS_MAX
    for k in range(bound):  # full: values 0 .. bound - 1
        em.constant(float(k))
    em.constant(0.5)  # a step's new constant: value 0 goes
    em.constant(0.25)  # and then value 1
    counters.reset()
    for v in (0.5, 0.25, 2.0, float(bound - 1)):
        em.constant(v)
    assert counters.from_host == 0, counters  # still there
    em.constant(0.0)
    assert counters.from_host == 1, counters  # the oldest was uploaded again
    assert len(_convert._DEVICE_SCALARS) == bound
