"""The NCCL path for gradients on GPUs, run on ember's strict cupy-like device double with
a double of ``cupy.cuda.nccl`` (a real GPU runs the same code with cupy's NCCL)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from numpy.testing import assert_allclose

import ember.core as em
from ember import distribute
from ember.core import testing as em_testing
from ember.distribute import _nccl
from ember.distribute.testing import run_in_threads


class FakeNcclModule:
    """cupy.cuda.nccl's surface, over arrays of the strict double instead of pointers."""

    NCCL_SUM, NCCL_MIN, NCCL_MAX = 0, 1, 2
    NCCL_FLOAT16, NCCL_FLOAT32, NCCL_FLOAT64 = 10, 11, 12
    NCCL_INT32, NCCL_INT64, NCCL_UINT8, NCCL_INT8 = 13, 14, 15, 16

    def __init__(self, size):
        self.barrier = threading.Barrier(size)
        self.slots = [None] * size
        self.calls = []

    def get_unique_id(self):
        return tuple(int(v) for v in np.random.default_rng().integers(-128, 128, 128))

    def NcclCommunicator(self, size, uid, rank):
        module = self

        class Comm:
            def __init__(self):
                module.calls.append(("init", rank, uid))

            def allReduce(self, send, recv, count, dtype, op, stream):
                assert send.size == count and op == module.NCCL_SUM
                module.calls.append(("allReduce", rank, count, dtype))
                module.slots[rank] = send.copy()
                module.barrier.wait(5)
                acc = module.slots[0].copy()
                for other in module.slots[1:]:
                    acc = acc + other
                module.barrier.wait(5)
                recv[...] = acc

        return Comm()


@pytest.fixture
def strict_nccl(monkeypatch):
    fake = FakeNcclModule(2)

    class DoubleNCCL(_nccl.NCCLCommunicator):
        def __init__(self, host):
            super().__init__(host, nccl=fake)

        def ptr(self, a):
            return a

        def stream(self):
            return None

    monkeypatch.setattr(_nccl, "NCCLCommunicator", DoubleNCCL)
    with em_testing.simulated_gpus(1, strict=True) as devices:
        yield fake, devices[0].backend


def test_gradients_on_gpus_are_averaged_by_nccl_without_host_copies(strict_nccl):
    fake, backend = strict_nccl
    shapes = [(3, 2), (2,), (4,)]

    def body():
        r = distribute.rank()
        with em.device("/gpu:0"):
            vs = [em.Variable(np.zeros(s, np.float32)) for s in shapes]
            grads = [em.constant(np.full(s, r + 1.0, np.float32)) for s in shapes]
            grads[2] = grads[2] if r == 1 else None  # only rank 1 has this one
        opt = distribute.DistributedOptimizer(_SGD(), broadcast_on_first_step=False)
        opt._reducer.reduce(grads, vs)  # the first call sets NCCL up (a host broadcast)
        distribute.barrier()
        before = backend.counters.snapshot()
        reduced = opt._reducer.reduce(grads, vs)
        distribute.barrier()
        return reduced, before, backend.counters.snapshot()

    results = run_in_threads(2, body)
    for reduced, before, after in results:
        transfers = ("syncs", "scalar_reads", "to_host", "from_host")
        assert [before[k] for k in transfers] == [after[k] for k in transfers]  # no host
        # copies, no syncs (the reduction does launch kernels: its packing and averaging)
        assert [g.device for g in reduced] == ["/gpu:0"] * 3
        assert_allclose(reduced[0].numpy(), np.full((3, 2), 1.5))
        assert_allclose(reduced[2].numpy(), np.full(4, 1.0))  # (0 + 2) / 2
    kinds = [c[0] for c in fake.calls]
    assert kinds.count("init") == 2 and kinds.count("allReduce") == 4  # one fused buffer a call
    assert len({c[2] for c in fake.calls if c[0] == "init"}) == 1       # rank 0's id everywhere


class _SGD:
    def apply_gradients(self, grads_and_vars):
        for g, v in grads_and_vars:
            v.assign_sub(g)


def test_host_collectives_when_asked(strict_nccl, monkeypatch):
    fake, _ = strict_nccl
    distribute.shutdown()
    distribute.init(gpu_collectives="host")

    def body():
        with em.device("/gpu:0"):
            v = em.Variable(np.zeros(2, np.float32))
            g = em.constant(np.full(2, float(distribute.rank()), np.float32))
        return distribute.DistributedOptimizer(_SGD())._reducer.reduce([g], [v])[0]

    got = run_in_threads(2, body)
    assert_allclose(got[0].numpy(), [0.5, 0.5])
    assert got[0].device == "/gpu:0" and fake.calls == []


def test_gpu_collectives_is_checked_by_name():
    distribute.shutdown()
    with pytest.raises(ValueError, match="gpu_collectives"):
        distribute.init(gpu_collectives="mpi")
