"""Device memory of the strict GPU double, as cupy 14 manages it.

- Each device array lives in one device buffer: a fresh array owns one (``.base`` is None),
  a view lives in the buffer of the array it views (``.base`` is that array, never a view:
  cupy collapses chains as numpy does). ``.data`` is a ``MemoryPointer``: ``.ptr`` the
  device address of the array's first element (a view's includes its offset), ``.mem``
  the buffer (``ptr``, ``size``, ``device_id``), shared by an array and all its views.
- Buffers come from a memory pool: ``xp.get_default_memory_pool()`` (one per simulated
  device), or the allocator ``cuda.using_allocator`` installs (a private
  ``cuda.MemoryPool()``'s ``malloc``, as for graph capture). As in cupy
  (``cupy/cuda/memory.pyx``), requests are rounded up to 512 bytes; a buffer that dies
  goes back to its pool (``used_bytes()`` falls, ``total_bytes()`` does not) and is handed
  out again, at the same address, for a request of the same rounded size;
  ``free_all_blocks()`` gives the free ones back to the device. cupy also splits a larger
  free block for a smaller request, which the double does not: its ``total_bytes()`` can
  be higher than a GPU's, never its ``used_bytes()``.
- Device memory is not host memory. The numpy buffers behind device arrays are hidden
  from ``tracemalloc`` as they are made, so a host-memory measurement sees none of them,
  as on a GPU, where it measured nothing (``test_walk_memory`` on the H200).
"""

from __future__ import annotations

import ctypes
import heapq
import threading
import tracemalloc
import weakref
from typing import Any

import numpy as np

ALLOCATION_UNIT_SIZE = 512  # cupy's: every request is rounded up to a multiple
_NUMPY_TRACE_DOMAIN = 389047  # NPY_TRACE_DOMAIN: numpy's data buffers in tracemalloc
_untrack = ctypes.pythonapi.PyTraceMalloc_Untrack
_untrack.argtypes = [ctypes.c_uint, ctypes.c_size_t]
_untrack.restype = ctypes.c_int
_ADDRESS_BASE = 0x7F0000000000  # device addresses look like cudaMalloc's
_ADDRESS_SPAN = 1 << 40  # per simulated device: their addresses never meet


def round_size(size: int) -> int:
    """``size`` rounded up to cupy's allocation unit (512 bytes)."""
    return -(-size // ALLOCATION_UNIT_SIZE) * ALLOCATION_UNIT_SIZE


class Memory:
    """A buffer of no bytes (``cupy.cuda.Memory(0)``): what cupy gives an empty array."""

    def __init__(self, size: int = 0, device_id: int = 0) -> None:
        if size:
            raise NotImplementedError("the strict double allocates device memory through "
                                      "its pools only (cupy.cuda.Memory(0) is the empty one)")
        self.ptr = 0
        self.size = 0
        self.device_id = device_id

    def __int__(self) -> int:
        return self.ptr

    def free(self) -> None:
        return None


class PooledMemory:
    """A buffer from a pool (``cupy.cuda.PooledMemory``): ``free()`` gives it back."""

    __slots__ = ("__weakref__", "device_id", "pool", "ptr", "size")

    def __init__(self, ptr: int, size: int, device_id: int, pool: Any) -> None:
        self.ptr = ptr
        self.size = size
        self.device_id = device_id
        self.pool = pool  # a weak reference, as cupy's

    def __int__(self) -> int:
        return self.ptr

    def __repr__(self) -> str:
        return f"<strict PooledMemory 0x{self.ptr:x} size={self.size} device={self.device_id}>"

    def free(self) -> None:
        """Back to the pool, for reuse (cupy: when the buffer is garbage-collected)."""
        ptr, self.ptr = self.ptr, 0
        pool = self.pool()
        if ptr and pool is not None:
            pool._release(ptr, self.size)

    def __del__(self) -> None:
        self.free()


class MemoryPointer:
    """A place in a device buffer (``cupy.cuda.MemoryPointer``): ``mem`` and ``ptr``."""

    def __init__(self, mem: Any, offset: int) -> None:
        if mem.ptr == 0 and offset:
            raise ValueError("MemoryPointer: an offset into the empty buffer")
        self.mem = mem
        self.ptr = mem.ptr + offset
        self.device_id = mem.device_id

    def __int__(self) -> int:
        return self.ptr

    def __add__(self, offset: int) -> MemoryPointer:
        return MemoryPointer(self.mem, self.ptr - self.mem.ptr + offset)

    __radd__ = __add__

    def __sub__(self, offset: int) -> MemoryPointer:
        return self + -offset

    def __repr__(self) -> str:
        return f"<strict MemoryPointer 0x{self.ptr:x} device={self.device_id} mem={self.mem!r}>"


class MemoryPool:
    """A memory pool of one simulated device (``cupy.cuda.MemoryPool``, whose instances
    serve every device; the double's serve the device whose ``cuda`` made them)."""

    def __init__(self, device: DeviceMemory, allocator: Any = None) -> None:
        if allocator is not None:
            raise NotImplementedError("MemoryPool(allocator=): the strict double's pools "
                                      "take their blocks from the simulated device only")
        self._device = device
        self._free: dict[int, list[int]] = {}  # rounded size -> free blocks' addresses
        self._used = 0
        self._total = 0
        self._ref = weakref.ref(self)

    def malloc(self, size: int) -> MemoryPointer:
        """A buffer of at least ``size`` bytes: a free block of its rounded size (the
        lowest address first, as cupy's arena picks), else a new one from the device."""
        return MemoryPointer(self.take(int(size)), 0)

    def take(self, nbytes: int) -> Any:
        """``malloc``'s buffer itself (the double's arrays hold it, not a pointer)."""
        size = -(-nbytes // ALLOCATION_UNIT_SIZE) * ALLOCATION_UNIT_SIZE
        if size == 0:
            return Memory(0, self._device.index)
        blocks = self._free.get(size)
        if blocks:
            ptr = heapq.heappop(blocks)
        else:
            ptr = self._device.cuda_malloc(size)
            self._total += size
        self._used += size
        return PooledMemory(ptr, size, self._device.index, self._ref)

    def _release(self, ptr: int, size: int, _push: Any = heapq.heappush) -> None:
        # (heappush bound at definition: buffers still alive at interpreter exit are freed
        # after the module's globals are gone)
        self._used -= size
        _push(self._free.setdefault(size, []), ptr)

    def used_bytes(self) -> int:
        """Bytes in buffers that are alive."""
        return self._used

    def free_bytes(self) -> int:
        """Bytes the pool holds for reuse."""
        return self._total - self._used

    def total_bytes(self) -> int:
        """Bytes the pool has taken from the device: used plus free."""
        return self._total

    def n_free_blocks(self) -> int:
        return sum(len(b) for b in self._free.values())

    def free_all_blocks(self, stream: Any = None) -> None:
        """Give every free block back to the device (``stream``: cupy frees one stream's
        arena; the double has one arena)."""
        self._total -= self.free_bytes()
        self._free.clear()


class DeviceMemory:
    """The memory of one simulated device: its address space, its default pool, and the
    buffer behind each numpy array that device arrays wrap.

    A device array holds its buffer (``_mem``), as cupy's holds ``data.mem``; the buffer
    goes back to its pool when the last array in it dies, whatever numpy arrays the
    double keeps (a captured graph's: on a GPU, addresses it holds no reference to)."""

    def __init__(self, index: int) -> None:
        self.index = index
        self._next = _ADDRESS_BASE + index * _ADDRESS_SPAN
        self.default_pool = MemoryPool(self)
        # id(root numpy array) -> [weakref(its buffer), weakref(the array owning it),
        # weakref(the root numpy array)]
        self._buffers: dict[int, list[Any]] = {}
        self._forget_dead = self._forget  # (one bound method for every buffer's weakref)
        # data-pipeline threads place, read and forget buffers at once (an RLock: a
        # buffer's weakref callback may run inside place, on the same thread)
        self._lock = threading.RLock()

    def cuda_malloc(self, size: int) -> int:
        """A new device address for ``size`` bytes (cudaMalloc: 512-byte aligned)."""
        ptr, self._next = self._next, self._next + round_size(size)
        return ptr

    def place(self, array: Any, a: np.ndarray, allocator: Any) -> tuple[Any, Any]:
        """(base, mem) of the device array ``array`` wrapping numpy's ``a``: a new buffer
        (from ``allocator``, else the default pool) when ``a`` lives in no live one."""
        with self._lock:
            return self._place(array, a, allocator)

    def _place(self, array: Any, a: np.ndarray, allocator: Any) -> tuple[Any, Any]:
        root = a if a.base is None else root_of(a)
        key = id(root)  # unique while the buffer lives: its arrays hold ``root``
        entry: list[Any] | None = self._buffers.get(key)
        mem = entry[0]() if entry is not None else None
        if mem is None:
            if allocator is None:
                mem = self.default_pool.take(root.nbytes)
            else:
                mem = _allocated(allocator, root.nbytes)
            ref = _BufferRef(mem, self._forget_dead)
            ref.key = key
            entry = self._buffers[key] = [ref, None, weakref.ref(root)]
            if tracemalloc.is_tracing() and root.flags.owndata:
                _untrack(_NUMPY_TRACE_DOMAIN, root.ctypes.data)
        assert entry is not None  # (made above when the buffer was new)
        if root is a:
            if entry[1] is None or entry[1]() is None:
                entry[1] = weakref.ref(array)
            return None, mem
        owner = entry[1]() if entry[1] is not None else None
        if owner is None:  # a view of what no device array holds (numpy's temporaries)
            owner = type(array)(root, array._ns)
        return owner, mem

    def holds(self, a: np.ndarray) -> bool:
        """Whether ``a`` lives in a buffer that is alive already (an array of this device, or
        a view of one): not memory the call that returned ``a`` allocated."""
        root = root_of(a)
        with self._lock:
            entry = self._buffers.get(id(root))
        return entry is not None and entry[2]() is root and entry[0]() is not None

    def view_at(self, ptr: int, dtype: Any, shape: tuple[int, ...],
                strides: tuple[int, ...], what: str) -> np.ndarray:
        """The numpy view a kernel reads at the device address ``ptr`` as an array of
        ``shape`` and ``strides`` (in elements): what a library given a raw pointer (cuBLASLt
        through nvmath's bindings) reads and writes. Memory outside a live array's buffer
        raises, as an illegal address would fail the kernel."""
        dtype = np.dtype(dtype)
        with self._lock:
            entries = self._entries()
        for entry in entries:
            mem, root = entry[0](), entry[2]()
            if mem is None or root is None or not mem.ptr <= ptr < mem.ptr + mem.size:
                continue
            raw = _bytes_of(root)
            try:
                return np.ndarray(shape, dtype, buffer=raw, offset=ptr - mem.ptr,
                                  strides=tuple(s * dtype.itemsize for s in strides))
            except (TypeError, ValueError):
                break
        raise RuntimeError(f"cudaErrorIllegalAddress: {what} at 0x{ptr:x} ({dtype}"
                           f"{list(shape)}, strides {list(strides)}) is not inside a live "
                           "array's buffer (strict double)")

    def _entries(self) -> list[list[Any]]:
        """The entries now (a weakref callback of this thread may drop one meanwhile)."""
        while True:
            try:
                return list(self._buffers.values())
            except RuntimeError:  # dictionary changed size during iteration
                continue

    def _forget(self, ref: _BufferRef) -> None:
        """A buffer died (and went back to its pool): its entry goes."""
        with self._lock:
            entry = self._buffers.get(ref.key)
            if entry is not None and entry[0] is ref:
                del self._buffers[ref.key]


class _BufferRef(weakref.ref):  # type: ignore[type-arg]
    """A weak reference to a buffer that knows its entry's key."""

    __slots__ = ("key",)
    key: int


def _allocated(allocator: Any, nbytes: int) -> Any:
    """The buffer ``allocator`` (``using_allocator``'s) gives for ``nbytes``."""
    ptr = allocator(nbytes)
    if not isinstance(ptr, MemoryPointer):
        raise TypeError(f"the allocator {allocator!r} returned {type(ptr).__name__}, not a "
                        "MemoryPointer (cupy's allocators return one)")
    return ptr.mem


def _bytes_of(root: np.ndarray) -> np.ndarray:
    """The bytes of a root numpy array, in memory order, as a view (a root owns one dense
    block, in any axis order: ``np.empty_like`` keeps its argument's)."""
    dense = root.transpose(np.argsort(root.strides, kind="stable")[::-1]) if root.ndim else root
    if not dense.flags.c_contiguous:
        raise NotImplementedError(f"a root array of shape {root.shape} and strides "
                                  f"{root.strides} is not one dense block (strict double)")
    return dense.reshape(-1).view(np.uint8)


def root_of(a: np.ndarray) -> np.ndarray:
    """The numpy array whose memory ``a`` lives in (``as_strided`` views included)."""
    while True:
        b = a.base
        if isinstance(b, np.ndarray):
            a = b
        elif b is not None and isinstance(getattr(b, "base", None), np.ndarray):
            a = b.base  # stride_tricks' DummyArray
        else:
            return a


def pointer(a: np.ndarray, mem: Any) -> MemoryPointer:
    """``mem`` pointed at ``a``'s first element (``a`` lives in ``mem``'s buffer)."""
    if mem.ptr == 0:
        return MemoryPointer(mem, 0)
    offset = a.__array_interface__["data"][0] - root_of(a).__array_interface__["data"][0]
    return MemoryPointer(mem, offset)
