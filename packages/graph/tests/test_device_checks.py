"""A check an op makes on the device (sparse cross-entropy's label range) runs on every
replay of a traced function, inside its captured CUDA graph too, and raises at the next
read; on the CPU the replayed check raises at the call."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em
from ember import graph

WHAT = r"sparse_softmax_cross_entropy_with_logits: labels must be in \[0, 3\), got values "


@pytest.mark.parametrize("cuda_graphs", [True, False], ids=["captured", "op_by_op"])
def test_a_replayed_check_reports_a_bad_batch(device, cuda_graphs):
    x = em.constant(np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32))
    good = em.constant([0, 1, 2, 1])

    def loss(x, y):
        return em.reduce_sum(em.nn_ops.sparse_softmax_cross_entropy_with_logits(y, x * 2.0))

    f = graph.function(loss, cuda_graphs=cuda_graphs)
    for _ in range(4):  # traced, replayed, captured (on a GPU)
        want = float(f(x, good))
    on_gpu = device.startswith("/gpu")
    if on_gpu:
        (status,) = f.cuda_graph_status()
        assert status.startswith("call: captured" if cuda_graphs else "call: not captured")
        # the strict double counts transfers; cupy has no counters (the H200 ran this)
        counters = getattr(em.get_device(device).backend, "counters", None)
        if counters is not None:
            counters.reset()
        f(x, em.constant([0, 1, 7, 1]))  # no error yet: nothing was read
        ok = f(x, good)
        f(x, em.constant([0, -1, 2, 1]))
        if counters is not None:
            assert counters.syncs == 0 and counters.to_host == 0
        with pytest.raises(em.InvalidArgumentError, match=WHAT + r"from 0 to 7 \(the first of 2"):
            float(ok)
    else:
        with pytest.raises(em.InvalidArgumentError, match=WHAT + "from 0 to 7"):
            f(x, em.constant([0, 1, 7, 1]))
    assert float(f(x, good)) == want  # reported once; the next batches are fine
