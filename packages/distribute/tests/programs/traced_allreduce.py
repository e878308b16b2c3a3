"""A traced step that averages its gradient over the ranks (``DistributedGradientTape``
inside ``graph.function``), run under ``mpiexec -n 2``.

Rank 0's gradient is the same (0) on its first three steps, so its host reads match the
traced call's: a replay would have reused the traced call's average and skipped the
allreduce, and the ranks' next allreduces would have paired different steps (the weights
drifted apart, silently). Each rank prints the averages it applied and its weight.
"""

from __future__ import annotations

import warnings

import ember.core as em
from ember import distribute, graph, tape

distribute.init(timeout=60)
rank = distribute.rank()
w = em.Variable(1.0)


@graph.function
def step(x):
    with tape.GradientTape() as t:
        loss = w * x
    (g,) = distribute.DistributedGradientTape(t).gradient(loss, [w])
    w.assign_sub(g)
    return g


xs = [0.0, 0.0, 0.0, 1.0, 2.0] if rank == 0 else [1.0, 2.0, 3.0, 4.0, 5.0]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    grads = [float(step(em.constant(x))) for x in xs]
warned = any("collective with the other ranks" in str(c.message) for c in caught)
print(f"rank {rank} grads {grads} w {float(w)} warned {warned}")
