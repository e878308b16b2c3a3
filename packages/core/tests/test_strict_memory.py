"""Device memory on the strict GPU double (``testing/_strict_memory``), as cupy 14 has it:
``.base`` and ``.data`` on arrays, a memory pool per device that counts live buffers,
private pools for graph capture, and device buffers that host-memory tools do not see.
The backends' ``owns``/``buffer_of`` (graph mode's in-place planning) run on it through
the same code as on cupy."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

from ember.core._backend import NumpyBackend
from ember.core.testing import simulated_gpus

MIB = 1 << 20


@pytest.fixture
def gpus():
    with simulated_gpus(2, strict=True) as devices:
        yield devices


@pytest.fixture
def xp(gpus):
    return gpus[0].xp


def test_a_fresh_array_has_no_base_and_a_view_the_array_it_views(xp):
    a = xp.zeros((4, 6), np.float32)
    assert a.base is None
    for view in (a[1:], a.T, a.reshape(24), xp.reshape(a, (6, 4)), a[:, ::2], a[0]):
        assert view.base is a
    assert a[1:][:, 2:].base is a  # a view of a view: the owner, as cupy and numpy
    for fresh in (a + 1, a.copy(), xp.ascontiguousarray(a.T), a.astype(np.float64)):
        assert fresh.base is None
    assert xp.broadcast_to(xp.float32(1), (3,)).base is not None  # numpy's temporary


def test_data_ptr_is_a_device_address_that_accounts_for_view_offsets(xp):
    a = xp.zeros((4, 6), np.float32)
    b = xp.zeros((4, 6), np.float32)
    assert isinstance(a.data.ptr, int) and a.data.ptr % 512 == 0
    assert a.data.ptr != b.data.ptr and int(a.data) == a.data.ptr
    assert a[1:].data.ptr == a.data.ptr + 6 * 4
    assert a[2, 3:].data.ptr == a.data.ptr + (2 * 6 + 3) * 4
    assert a[::-1].data.ptr == a.data.ptr + 3 * 6 * 4  # first element: the last row
    assert a[1:].data.mem is a.data.mem and a.T.data.mem.ptr == a.data.ptr
    assert a.data.mem.size == 512  # 96 bytes, rounded up as cupy's pool rounds
    assert (a.data + 8).ptr == a.data.ptr + 8
    assert xp.zeros(0).data.ptr == 0  # cupy allocates nothing for an empty array


def test_each_device_has_its_own_addresses_and_pool(gpus):
    a, b = gpus[0].xp.ones(256, np.float32), gpus[1].xp.ones(256, np.float32)
    assert a.data.ptr != b.data.ptr and a.data.mem.device_id == 0
    assert b.data.mem.device_id == 1
    p0, p1 = gpus[0].xp.get_default_memory_pool(), gpus[1].xp.get_default_memory_pool()
    assert p0 is not p1 and p0 is gpus[0].xp.get_default_memory_pool()
    before = p1.used_bytes()
    c = gpus[0].xp.ones(MIB // 4, np.float32)
    assert p1.used_bytes() == before and p0.used_bytes() >= MIB
    del c


def test_an_upload_gets_a_buffer_of_its_own(xp):
    host = np.zeros(4, np.float32)
    dev = xp.asarray(host)
    host[0] = 5.0  # the device copy does not see host writes
    assert dev.base is None and float(dev[0]) == 0.0


def test_the_pool_counts_live_buffers_and_keeps_freed_blocks(xp):
    pool = xp.get_default_memory_pool()
    pool.free_all_blocks()
    used, total = pool.used_bytes(), pool.total_bytes()
    assert total == used
    a = xp.ones(MIB // 4, np.float32)
    views = [a[1:], a.reshape(2, -1), a[::2]]  # views take no memory
    small = xp.ones(3, np.int8)
    assert pool.used_bytes() == used + MIB + 512
    assert pool.total_bytes() == total + MIB + 512
    ptr = a.data.ptr
    del a
    assert pool.used_bytes() == used + MIB + 512  # its views hold its buffer
    del views, small
    gc.collect()
    assert pool.used_bytes() == used
    assert pool.free_bytes() == MIB + 512 and pool.n_free_blocks() == 2
    b = xp.empty(MIB // 8, np.float64)  # the same rounded size: the freed block again
    assert b.data.ptr == ptr and pool.total_bytes() == total + MIB + 512
    del b
    pool.free_all_blocks()
    assert pool.total_bytes() == pool.used_bytes() == used and pool.n_free_blocks() == 0


def test_malloc_rounds_like_cupy_and_frees_when_dropped(xp):
    pool = xp.get_default_memory_pool()
    used = pool.used_bytes()
    p = pool.malloc(1000)
    assert p.mem.size == 1024 and p.ptr == p.mem.ptr
    assert pool.used_bytes() == used + 1024
    del p
    gc.collect()
    assert pool.used_bytes() == used
    assert pool.malloc(0).ptr == 0


def test_a_private_pool_counts_what_is_made_while_it_allocates(xp):
    shared = xp.get_default_memory_pool()
    private = xp.cuda.MemoryPool()
    assert isinstance(private, xp.cuda.MemoryPool) and private.used_bytes() == 0
    before = shared.used_bytes()
    with xp.cuda.using_allocator(private.malloc):
        a = xp.ones(MIB // 4, np.float32)
        b = a * 2.0
    c = b + 1.0  # made outside: the shared pool's
    assert private.used_bytes() == 2 * MIB
    assert shared.used_bytes() == before + MIB
    assert a.data.ptr not in (b.data.ptr, c.data.ptr)
    del a, b
    gc.collect()
    assert private.used_bytes() == 0 and private.total_bytes() == 2 * MIB
    with pytest.raises(NotImplementedError, match="allocator="):
        xp.cuda.MemoryPool(allocator=lambda size: None)


def test_a_graph_captured_from_a_private_pool_keeps_its_buffers_there(xp):
    pool = xp.cuda.MemoryPool()
    stream = xp.cuda.Stream(non_blocking=True)
    x = xp.ones(MIB // 4, np.float32)
    shared_before = xp.get_default_memory_pool().used_bytes()
    with xp.cuda.using_allocator(pool.malloc), stream:
        stream.begin_capture()
        y = (x + 1.0) * 3.0
        graph = stream.end_capture()
    assert graph.private_pool
    assert pool.used_bytes() == MIB  # y; x + 1 died during the capture, as in cupy
    assert xp.get_default_memory_pool().used_bytes() == shared_before
    ptr = y.data.ptr
    graph.launch()
    assert y.data.ptr == ptr
    x[:] = 2.0
    graph.launch()  # computes again from x's contents
    np.testing.assert_array_equal(y.get(), np.full(MIB // 4, 9.0, np.float32))


def test_device_buffers_are_not_host_memory(xp):
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        kept = [xp.ones(MIB // 4, np.float32) * 2.0 for _ in range(8)]  # 8 MiB on the device
        host = np.ones(MIB // 4, np.float32)  # 1 MiB on the host
        grew = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert MIB <= grew < 2 * MIB, f"host memory grew by {grew / MIB:.2f} MiB"
    assert xp.get_default_memory_pool().used_bytes() >= 8 * MIB
    del kept, host


def test_backends_say_which_arrays_own_their_buffer_and_which_share_one(gpus):
    be = gpus[0].backend
    for backend, xp in ((be, be.xp), (NumpyBackend(), np)):
        a = xp.zeros((4, 4), np.float32)
        b = xp.zeros((4, 4), np.float32)
        assert backend.owns(a) and not backend.owns(a.T) and not backend.owns(a[1:])
        assert not backend.owns(a[:, ::2]) and not backend.owns(1.0)
        key = backend.buffer_of(a)
        assert backend.buffer_of(a.T) == backend.buffer_of(a[1:][::2]) == key
        assert backend.buffer_of(b) != key
    host = np.zeros((4, 4), np.float32)
    assert not be.owns(host)  # another backend's array
    host.flags.writeable = False
    assert not NumpyBackend().owns(host)
