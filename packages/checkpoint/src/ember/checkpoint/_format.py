"""The file: a safetensors file whose header also carries ember's object graph.

Tensors are stored under their object-graph paths, so ``safetensors.safe_open`` in any
framework reads them. ``__metadata__`` holds two entries:

* ``"ember.checkpoint"``: JSON with ``format``, ``values`` (per tensor: numpy dtype token,
  shape, checksum of its bytes), ``objects`` (container paths), ``states`` (opaque state,
  encoded by ``_state``) and ``aliases`` (second paths to shared objects);
* ``"ember.checkpoint.crc32"``: zlib's CRC-32 of that JSON text.

The tensors' checksum is CRC-32C (``"crc32c"``) in format 2, written since issue 30, and
zlib's CRC-32 (``"crc32"``) in format 1, which is still read (``_checksum``). Reading never
uses the safetensors loader: it parses the header strictly (every field type-checked, tensors
contiguous and covering the file exactly, every table entry agreeing with ember's own
record), so any truncation or flipped bit is reported as ``CorruptCheckpointError``.
"""

from __future__ import annotations

import json
import math
import mmap
import os
import struct
import threading
import zlib
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _checksum, _dtypes, _reading, _state
from ._errors import CheckpointError, CorruptCheckpointError, io_error

FORMAT = "ember.checkpoint/2"
CHECKSUM_KEY, _CHECKSUM = _checksum.BY_FORMAT[FORMAT]
META_KEY = "ember.checkpoint"
META_CRC_KEY = "ember.checkpoint.crc32"
SUFFIX = ".safetensors"
# A header beyond this is refused before it is read: parsing JSON costs several times its
# size in memory, and a real header (about 200 bytes per tensor) is far smaller.
MAX_HEADER = 100 * 1024 * 1024
# numpy cannot hold more dimensions, nor arrays whose element count overflows intp.
_MAX_NDIM = 32
_MAX_ELEMENTS = 2**62
_CHUNK = 1 << 24


def data_file(path: str | os.PathLike[str]) -> str:
    """The file behind a checkpoint path: ``path`` itself if it ends in ``.safetensors``."""
    path = os.fspath(path)
    return path if path.endswith(SUFFIX) else path + SUFFIX


def write(fd: int, values: dict[str, np.ndarray], objects: list[str],
          states: dict[str, Any], aliases: dict[str, str], where: str) -> None:
    """Write one checkpoint into ``fd``, a fresh file (callers make it atomic).

    The safetensors layout is written by ember itself (no temporary files of the
    safetensors library): an 8-byte header length, the JSON header padded with spaces to a
    multiple of 8, then every tensor's bytes, largest items first so each is aligned. The
    header's space is reserved with the widest possible checksums, the tensors are written
    while a second thread computes their CRC-32C (``pwrite`` releases the GIL, the checksum
    holds it for a piece at a time), and the real header is written into the reserved
    space last.

    Raises:
        CheckpointError: the header would exceed ``MAX_HEADER`` (no reader would take it).
    """
    order = sorted(values, key=lambda p: (-values[p].dtype.itemsize, p))
    blobs, table, records = [], {}, {}
    offset = 0
    for path in order:
        array = values[path]
        code, stored = _dtypes.storage(array.dtype, array.shape)
        raw = _dtypes.bytes_of(_dtypes.encode(array)[1])
        blobs.append(raw)
        table[path] = {"dtype": code, "shape": list(stored),
                       "data_offsets": [offset, offset + raw.nbytes]}
        records[path] = {"dtype": _dtypes.token(array.dtype), "shape": list(array.shape),
                         CHECKSUM_KEY: _WIDEST_CRC}
        offset += raw.nbytes
    meta = {"format": FORMAT, "values": records, "objects": objects,
            "states": states, "aliases": aliases}
    reserved = len(_header(table, meta)) + 16  # the header's own CRC may be wider
    if reserved > MAX_HEADER:
        raise CheckpointError(
            f"{where}: the header would be {reserved} bytes, over the {MAX_HEADER} bytes a "
            f"reader accepts; the largest opaque states: {_largest_states(states)}")
    with ThreadPoolExecutor(1, thread_name_prefix="ember-crc") as pool, \
            _Flusher(fd) as flusher:
        crcs = pool.map(_CHECKSUM, blobs)
        position = 8 + reserved
        for raw in blobs:
            _pwrite_all(fd, memoryview(raw).cast("B") if raw.nbytes else b"", position)
            position += raw.nbytes
            flusher.wrote(raw.nbytes)
        for path, crc in zip(order, crcs):
            records[path][CHECKSUM_KEY] = crc
    header = _header(table, meta)
    assert len(header) <= reserved
    _pwrite_all(fd, struct.pack("<Q", reserved) + header.ljust(reserved, b" "), 0)


_WIDEST_CRC = 0xFFFFFFFF


def _header(table: dict[str, Any], meta: dict[str, Any]) -> bytes:
    """The safetensors JSON header, padded with spaces to a multiple of 8 bytes."""
    text = json.dumps(meta, sort_keys=True, separators=(",", ":"), allow_nan=False)
    crc = zlib.crc32(text.encode("utf-8"))
    metadata = {META_KEY: text, META_CRC_KEY: str(crc)}
    raw = json.dumps({"__metadata__": metadata, **table}, separators=(",", ":")).encode()
    return raw + b" " * (-len(raw) % 8)


class _Flusher:
    """Starts the disk writing early: a thread calls ``fdatasync`` every ``FLUSH_EVERY``
    bytes written, so the disk works while later tensors are copied and checksummed, and
    the final ``fsync`` waits only for the tail. (``sync_file_range`` would do this more
    cheaply, but Python does not expose it.)"""

    def __init__(self, fd: int) -> None:
        self._fd, self._unflushed = fd, 0
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="ember-flush")
        self._busy: Any = None

    def wrote(self, nbytes: int) -> None:
        self._unflushed += nbytes
        if self._unflushed >= FLUSH_EVERY and (self._busy is None or self._busy.done()):
            if self._busy is not None:
                self._busy.result()  # an error (EIO, ENOSPC) surfaces here
            self._unflushed = 0
            self._busy = self._pool.submit(os.fdatasync, self._fd)

    def __enter__(self) -> _Flusher:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True)
        if self._busy is not None and exc[0] is None:
            self._busy.result()


FLUSH_EVERY = 8 << 20


def _largest_states(states: dict[str, Any]) -> str:
    sizes = sorted(((len(json.dumps(v)), p) for p, v in states.items()), reverse=True)
    return ", ".join(f"{p} ({n} bytes)" for n, p in sizes[:3]) or "none"


def _pwrite_all(fd: int, data: Any, offset: int) -> None:
    view = memoryview(data)
    while len(view):
        n = os.pwrite(fd, view, offset)
        view, offset = view[n:], offset + n


@dataclass(frozen=True)
class Entry:
    """One tensor of a checkpoint file, as its header describes it."""

    dtype: np.dtype
    shape: tuple[int, ...]
    begin: int
    end: int
    crc: int  # in the file's checksum (``CheckpointFile.checksum_key``)


class CheckpointFile:
    """An open checkpoint file with a validated header; tensors are read one at a time.

    Args:
        path: the data file (see ``data_file``).

    Raises:
        CorruptCheckpointError: the file is truncated, damaged or not an ember checkpoint.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._file = open(path, "rb", buffering=0)
        self._lock = threading.Lock()
        try:
            self._parse()
        except BaseException:
            self._file.close()
            raise

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> CheckpointFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _corrupt(self, why: str) -> CorruptCheckpointError:
        return CorruptCheckpointError(f"{self.path}: {why}")

    def _parse(self) -> None:
        size = os.fstat(self._file.fileno()).st_size
        if size < 8:
            raise self._corrupt(f"truncated: {size} bytes, not a safetensors file")
        (length,) = struct.unpack("<Q", self._pread(0, 8))
        if length > MAX_HEADER:
            raise self._corrupt(f"header length {length} is over the {MAX_HEADER} bytes accepted "
                                "(hostile or damaged file; nothing was read)")
        if length > size - 8:
            raise self._corrupt(f"header length {length} does not fit a file of {size} bytes")
        header = self._header_json(self._pread(8, length))
        metadata = header.pop("__metadata__", None)
        meta = self._ember_meta(metadata)
        self._data_start = 8 + length
        self.entries = self._entries(header, meta.get("values"), size - self._data_start)
        self._graph(meta)

    def _header_json(self, raw: bytes) -> dict[str, Any]:
        try:
            header = json.loads(raw.decode("utf-8").rstrip(" "))
        except (UnicodeDecodeError, ValueError, RecursionError) as err:
            raise self._corrupt(f"header is not valid JSON ({err})") from None
        if not isinstance(header, dict):
            raise self._corrupt("header is not a JSON object")
        return header

    def _ember_meta(self, metadata: Any) -> dict[str, Any]:
        if not isinstance(metadata, dict) or not isinstance(metadata.get(META_KEY), str):
            raise self._corrupt(
                f"not an ember checkpoint: no {META_KEY!r} entry in the safetensors metadata")
        text = metadata[META_KEY]
        try:
            ok = str(zlib.crc32(text.encode("utf-8"))) == metadata.get(META_CRC_KEY)
        except UnicodeEncodeError:
            ok = False
        if not ok:
            raise self._corrupt("checksum of the ember header does not match")
        try:
            meta = json.loads(text)
        except (ValueError, RecursionError) as err:
            raise self._corrupt(f"ember header is not valid JSON ({err})") from None
        if not isinstance(meta, dict) or meta.get("format") not in _checksum.BY_FORMAT:
            raise self._corrupt("unsupported ember checkpoint format (expected one of "
                                f"{', '.join(map(repr, _checksum.BY_FORMAT))})")
        self.checksum_key, self._checksum = _checksum.BY_FORMAT[meta["format"]]
        return meta

    def _entries(self, table: dict[str, Any], records: Any, data_size: int) -> dict[str, Entry]:
        if not isinstance(records, dict) or set(records) != set(table):
            raise self._corrupt("tensor table does not match the ember header")
        entries = {key: self._entry(key, table[key], records[key]) for key in sorted(table)}
        position = 0
        for key, entry in sorted(entries.items(), key=lambda kv: (kv[1].begin, kv[1].end)):
            if entry.begin != position:
                raise self._corrupt(f"tensor {key!r} does not start where the previous ends")
            position = entry.end
        if position != data_size:
            raise self._corrupt(
                f"truncated or padded: tensors cover {position} bytes, data holds {data_size}")
        return entries

    def _entry(self, key: str, spec: Any, record: Any) -> Entry:
        try:
            dtype = _dtypes.from_token(record["dtype"])
            shape = tuple(record["shape"])
            crc = record[self.checksum_key]
            begin, end = spec["data_offsets"]
            ok = all(isinstance(n, int) and n >= 0 for n in (*shape, begin, end, crc))
            if ok and (len(shape) > _MAX_NDIM or math.prod(max(n, 1) for n in shape)
                       * dtype.itemsize > _MAX_ELEMENTS):
                raise self._corrupt(
                    f"tensor {key!r} declares an impossible shape {list(shape)} "
                    f"({dtype.name}); nothing was allocated")
            code, stored = _dtypes.storage(dtype, shape)
            ok = ok and spec["dtype"] == code and spec["shape"] == list(stored)
            ok = ok and end - begin == dtype.itemsize * math.prod(shape)
        except (KeyError, TypeError, ValueError) as err:
            raise self._corrupt(f"bad header entry for {key!r} ({err})") from None
        if not ok:
            raise self._corrupt(f"header entry for {key!r} is inconsistent")
        return Entry(dtype, shape, begin, end, crc)

    def _graph(self, meta: dict[str, Any]) -> None:
        objects, states, aliases = meta.get("objects"), meta.get("states"), meta.get("aliases")
        if not (isinstance(objects, list) and all(isinstance(o, str) for o in objects)
                and isinstance(states, dict) and isinstance(aliases, dict)
                and all(isinstance(v, str) for v in aliases.values())):
            raise self._corrupt("malformed object graph in the ember header")
        self.objects = set(objects)
        self.aliases = dict(aliases)
        try:
            self.states = {path: _state.decode(s) for path, s in states.items()}
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise self._corrupt(f"malformed opaque state ({err})") from None

    def resolve(self, path: str) -> str | None:
        """The path under which the file holds the object at ``path`` (following aliases)."""
        for _ in range(64):
            if path in self.entries or path in self.objects or path in self.states:
                return path
            target = self._alias_target(path)
            if target is None:
                return None
            path = target
        return None

    def _alias_target(self, path: str) -> str | None:
        prefix = path
        while prefix:
            if prefix in self.aliases:
                return self.aliases[prefix] + path[len(prefix):]
            prefix = prefix.rpartition("/")[0]
        return None

    def _pread(self, offset: int, size: int) -> bytes:
        buf = bytearray(size)
        self._read_into(offset, memoryview(buf))
        return bytes(buf)

    def _read_into(self, offset: int, view: memoryview) -> None:
        with self._lock:
            done = 0
            try:
                self._file.seek(offset)
                while done < len(view):
                    n = self._file.readinto(view[done:])
                    if not n:
                        raise self._corrupt(f"truncated: no data at byte {offset + done}")
                    done += n
            except OSError as err:
                raise io_error(err, self.path, f"read {len(view)} bytes at {offset}") from err

    def _read_many(self, buffers: list[np.ndarray], offset: int) -> None:
        """Fill ``buffers`` with the data bytes from ``offset`` on (one ``preadv`` for
        several buffers where the OS has it; it releases the GIL, and no seek is shared)."""
        where = self._data_start + offset
        if not hasattr(os, "preadv"):
            for buffer in buffers:
                self._read_into(where, memoryview(buffer).cast("B"))
                where += buffer.nbytes
            return

        def truncated(position: int) -> CorruptCheckpointError:
            return self._corrupt(f"truncated: no data at byte {position}")

        try:
            _reading.preadv_all(self._file.fileno(), buffers, where, truncated)
        except OSError as err:
            size = sum(b.nbytes for b in buffers)
            raise io_error(err, self.path, f"read {size} bytes at {where}") from err

    def _compare(self, crcs: dict[str, int]) -> None:
        bad = sorted(k for k, crc in crcs.items() if crc != self.entries[k].crc)
        if bad:
            raise self._corrupt(f"checksum mismatch in tensor {bad[0]!r}"
                                + (f" and {len(bad) - 1} more" if len(bad) > 1 else ""))

    def read(self, key: str) -> np.ndarray:
        """The tensor stored under ``key``, checksum verified, in a fresh writable array."""
        return self.load([key])[key]

    def load(self, keys: Iterable[str], check: Iterable[str] = (),
             mapping: mmap.mmap | None = None) -> dict[str, np.ndarray]:
        """The tensors ``keys`` in fresh writable arrays, read once each with their checksums
        taken beside the reads (``_reading``); the tensors ``check`` are only checksummed,
        in ``mapping`` (see ``map``; without one they are read and dropped). Every checksum
        is compared before anything is returned.

        Raises:
            CorruptCheckpointError: a checksum does not match (the message names the first
                tensor and how many more) or the file ended early.
        """
        keys = list(keys)
        check = sorted(set(check) - set(keys))
        if mapping is None:
            keys, check = keys + check, []
        holders = {k: _dtypes.empty(self.entries[k].dtype, self.entries[k].shape) for k in keys}
        data = np.frombuffer(mapping, np.uint8) if mapping is not None else None

        def mapped(begin: int, end: int) -> Any:  # (only asked for when there is a mapping)
            assert data is not None
            return data[self._data_start + begin:self._data_start + end]

        crcs = _reading.read_checked(
            self._read_many, self._checksum, self.entries,
            {k: flat for k, (_, flat) in holders.items()}, check, mapped)
        self._compare(crcs)
        return {k: _dtypes.finish(holder, self.entries[k].dtype)
                for k, (holder, _) in holders.items()}

    def map(self) -> mmap.mmap:
        """Map the whole file read-only, for one pass of checking and copying.

        Only for immediate use: a mapping of a file that someone truncates in place
        crashes on access, so values kept for later are read with ``read`` instead.
        """
        return mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)

    def view(self, mapping: mmap.mmap, key: str, verify: bool = True) -> np.ndarray:
        """A read-only view of the tensor ``key`` in ``mapping``, checksum verified unless
        ``load`` has checked it already."""
        entry = self.entries[key]
        raw = np.frombuffer(mapping, dtype=np.uint8, count=entry.end - entry.begin,
                            offset=self._data_start + entry.begin)
        if verify:
            self._compare({key: self._checksum(raw, 0)})
        return _dtypes.decode(raw, entry.dtype, entry.shape)

    def verify(self, key: str) -> None:
        """Check the checksum of ``key`` without keeping its data (streams in chunks)."""
        entry = self.entries[key]
        buf = np.empty(min(_CHUNK, entry.end - entry.begin), dtype=np.uint8)
        crc, offset = 0, entry.begin
        while offset < entry.end:
            piece = buf[: min(len(buf), entry.end - offset)]
            self._read_many([piece], offset)
            crc = self._checksum(piece, crc)
            offset += len(piece)
        self._compare({key: crc})
