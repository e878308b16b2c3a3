"""Checks an op makes on a GPU without a sync (``_device_errors``): sparse cross-entropy's
label range is recorded in the GPU's error flag and raised at the next read, naming the op;
on the CPU it raises at once."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em
from ember.core import nn_ops as nn
from ember.core.testing import simulated_gpus


@pytest.fixture
def gpu(strict_gpu_default):  # the double, made the default device
    return strict_gpu_default

LOSS = nn.sparse_softmax_cross_entropy_with_logits
WHAT = r"sparse_softmax_cross_entropy_with_logits: labels must be in \[0, 3\), got values "




def test_on_the_cpu_a_bad_label_raises_at_the_call():
    with em.device("/cpu:0"), pytest.raises(em.InvalidArgumentError, match=WHAT + "from 0 to 3"):
        LOSS(em.constant([0, 3]), em.ones([2, 3]))


def test_host_memory_on_a_simulated_gpu_is_checked_at_the_call_too():
    with simulated_gpus(1), em.device("/gpu:0"):  # numpy arrays: reading them is free
        with pytest.raises(em.InvalidArgumentError, match=WHAT + "from -1 to 0"):
            LOSS(em.constant([0, -1]), em.ones([2, 3]))


def test_on_a_gpu_the_check_makes_no_sync_and_the_next_read_raises(gpu):
    c = gpu.backend.counters
    logits, bad = em.ones([2, 3]), em.constant([0, 3])
    float(em.reduce_sum(LOSS(em.constant([0, 2]), logits)))  # the flag exists from here
    c.reset()
    loss = LOSS(bad, logits)
    assert (c.syncs, c.to_host, c.from_host, c.async_to_host) == (0, 0, 0, 0)
    total = em.reduce_sum(loss)
    with pytest.raises(em.InvalidArgumentError,
                       match=WHAT + r"from 0 to 3 \(checked on the device without a sync and "
                       r"reported at this read of a result on /gpu:0\)"):
        float(total)
    # the read's own copy waited for the flag's: one sync in all
    assert (c.syncs, c.to_host, c.async_to_host) == (1, 1, 1)
    # reported once: the flag is clear, and the loss is NaN where the label was bad
    got = loss.numpy()
    assert np.isnan(got[1]) and got[0] == pytest.approx(np.log(3.0))


def test_two_failures_before_a_read_report_the_first_and_how_many(gpu):
    logits = em.ones([2, 3])
    LOSS(em.constant([0, 7]), logits)
    LOSS(em.constant([2, 1]), logits)  # a good batch in between changes nothing
    LOSS(em.constant([-5, 1]), logits)
    with pytest.raises(em.InvalidArgumentError,
                       match=WHAT + r"from 0 to 7 \(the first of 2 failed checks on /gpu:0"):
        logits.numpy()  # any read on the device reports it, not only the loss's
    assert LOSS(em.constant([0, 1]), logits).numpy().tolist() == pytest.approx([np.log(3.0)] * 2)
