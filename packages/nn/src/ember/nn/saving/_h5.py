"""Keras 3's ``.weights.h5`` layout, written and read with h5py from memory.

Layout (as Keras 3 writes it): a group ``<path>/vars`` per layer or optimizer (``vars``
at the root for the model itself), with a ``name`` attribute, holding its variables as
datasets ``0``, ``1``, ... Datasets are plain (contiguous, unfiltered); ember adds an
``ember_crc32`` attribute (zlib's CRC-32 of the bytes) to each, checked when present, so
a bit flipped in a standalone file's weights is found (Keras ignores the attribute).

libhdf5 is not hardened against hostile files, so nothing reaches it before the file's
own structure is checked here: the signature at offset 0, a superblock of a version
h5py writes, 8-byte offsets and lengths, base address 0, the end-of-file address equal
to the bytes there are (a truncated or padded file is refused), the root object inside
the file, and, for superblocks of version 2 and 3, their Jenkins lookup3 checksum. The
file is then opened from memory (never by name), so no read can reach past its bytes;
links (soft, external), external or virtual datasets, filters (compression) and
non-numeric types are refused before any data is read, and each dataset's shape and
dtype must be the variable's before its bytes are read: nothing is allocated that the
model does not already hold.
"""

from __future__ import annotations

import io
import struct
import zlib
from typing import Any

import numpy as np

SIGNATURE = b"\x89HDF\r\n\x1a\n"
CRC_ATTR = "ember_crc32"
MAX_DTYPE_BYTES = 8


def _h5py() -> Any:
    try:
        import h5py
    except ImportError as e:  # pragma: no cover - a dependency of ember-nn
        raise ImportError("ember.nn's weight files need h5py (pip install h5py)") from e
    return h5py


# --- the superblock ----------------------------------------------------------------------

def _rot(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & 0xFFFFFFFF


def lookup3(data: bytes, initval: int = 0) -> int:
    """Bob Jenkins's lookup3 ``hashlittle`` (HDF5's metadata checksum)."""
    m = 0xFFFFFFFF
    length = len(data)
    a = b = c = (0xDEADBEEF + length + initval) & m
    i = 0
    while length > 12:
        a = (a + int.from_bytes(data[i:i + 4], "little")) & m
        b = (b + int.from_bytes(data[i + 4:i + 8], "little")) & m
        c = (c + int.from_bytes(data[i + 8:i + 12], "little")) & m
        a = (a - c) & m; a ^= _rot(c, 4); c = (c + b) & m  # noqa: E702
        b = (b - a) & m; b ^= _rot(a, 6); a = (a + c) & m  # noqa: E702
        c = (c - b) & m; c ^= _rot(b, 8); b = (b + a) & m  # noqa: E702
        a = (a - c) & m; a ^= _rot(c, 16); c = (c + b) & m  # noqa: E702
        b = (b - a) & m; b ^= _rot(a, 19); a = (a + c) & m  # noqa: E702
        c = (c - b) & m; c ^= _rot(b, 4); b = (b + a) & m  # noqa: E702
        length -= 12
        i += 12
    if length == 0:
        return c
    tail = data[i:] + bytes(12 - length)
    a = (a + int.from_bytes(tail[0:4], "little")) & m
    b = (b + int.from_bytes(tail[4:8], "little")) & m
    c = (c + int.from_bytes(tail[8:12], "little")) & m
    c ^= b; c = (c - _rot(b, 14)) & m  # noqa: E702
    a ^= c; a = (a - _rot(c, 11)) & m  # noqa: E702
    b ^= a; b = (b - _rot(a, 25)) & m  # noqa: E702
    c ^= b; c = (c - _rot(b, 16)) & m  # noqa: E702
    a ^= c; a = (a - _rot(c, 4)) & m  # noqa: E702
    b ^= a; b = (b - _rot(a, 14)) & m  # noqa: E702
    c ^= b; c = (c - _rot(b, 24)) & m  # noqa: E702
    return c


def check_container(data: bytes, where: str) -> None:
    """Refuse bytes that are not a whole HDF5 file as h5py writes them (see the module
    docstring); nothing of libhdf5 runs here."""
    n = len(data)
    if n < 48 or data[:8] != SIGNATURE:
        raise ValueError(f"{where}: not an HDF5 file (no HDF5 signature at its start; "
                         f"{n} bytes)")
    version = data[8]
    if version in (0, 1):
        size_offsets, size_lengths = data[13], data[14]
        addr_at = 24 if version == 0 else 28
        if size_offsets != 8 or size_lengths != 8:
            raise ValueError(f"{where}: HDF5 superblock with {size_offsets}-byte offsets and "
                             f"{size_lengths}-byte lengths (h5py writes 8)")
        if n < addr_at + 32 + 40:
            raise ValueError(f"{where}: HDF5 file truncated inside its superblock")
        base, _, eof, _ = struct.unpack_from("<4Q", data, addr_at)
        root = struct.unpack_from("<Q", data, addr_at + 32 + 8)[0]  # the root entry's header
    elif version in (2, 3):
        size_offsets, size_lengths = data[9], data[10]
        if size_offsets != 8 or size_lengths != 8:
            raise ValueError(f"{where}: HDF5 superblock with {size_offsets}-byte offsets and "
                             f"{size_lengths}-byte lengths (h5py writes 8)")
        base, _, eof, root = struct.unpack_from("<4Q", data, 12)
        stored = struct.unpack_from("<I", data, 44)[0]
        if lookup3(data[:44]) != stored:
            raise ValueError(f"{where}: the HDF5 superblock's checksum does not match (the "
                             f"file is damaged)")
    else:
        raise ValueError(f"{where}: HDF5 superblock version {version} (h5py writes 0 to 3)")
    if base != 0:
        raise ValueError(f"{where}: HDF5 base address {base}, not 0 (a user block or an "
                         f"embedded file)")
    if eof != n:
        what = "truncated" if eof > n else "followed by other bytes"
        raise ValueError(f"{where}: the HDF5 file says it ends at byte {eof} but holds {n} "
                         f"bytes: it is {what}")
    if not 0 < root < n:
        raise ValueError(f"{where}: the HDF5 root group's address {root} is outside the file")


# --- writing -------------------------------------------------------------------------

def write(groups: list[tuple[str, str, list[np.ndarray]]]) -> bytes:
    """The bytes of a weights file: for each ``(path, name, arrays)`` a group
    ``<path>/vars`` (``vars`` for "") named ``name`` holding ``arrays`` as ``0``, ``1``..."""
    h5py = _h5py()
    buf = io.BytesIO()
    with h5py.File(buf, "w", libver=("v110", "v110")) as f:
        for path, name, arrays in groups:
            group = f.create_group(f"{path}/vars" if path else "vars")
            group.attrs["name"] = name
            for i, a in enumerate(arrays):
                a = contiguous(a)
                bf16 = a.dtype.name == "bfloat16"
                stored = a.view(np.uint16) if bf16 else a
                ds = group.create_dataset(str(i), data=stored)
                if bf16:
                    ds.attrs["dtype"] = "bfloat16"
                ds.attrs[CRC_ATTR] = np.uint32(zlib.crc32(stored.tobytes()))
    return buf.getvalue()


# --- reading -------------------------------------------------------------------------

class WeightsH5:
    """A weights file opened from memory, read dataset by dataset against the model."""

    def __init__(self, data: bytes, where: str) -> None:
        check_container(data, where)
        self.where = where
        h5py = _h5py()
        try:
            self.file = h5py.File(io.BytesIO(data), "r")
            self.groups = self._list_groups()
        except ValueError:
            raise
        except Exception as e:  # libhdf5's errors come as OSError, KeyError, RuntimeError
            raise ValueError(f"{where}: not a readable HDF5 weights file ({type(e).__name__}: "
                             f"{e})") from e

    def _list_groups(self) -> dict[str, list[str]]:
        """``path -> dataset names`` of every ``.../vars`` group, links refused."""
        h5py = _h5py()
        out: dict[str, list[str]] = {}
        stack: list[tuple[str, Any]] = [("", self.file)]
        seen = 0
        while stack:
            prefix, group = stack.pop()
            for key in list(group.keys()):
                seen += 1
                if seen > 1_000_000:
                    raise ValueError(f"{self.where}: more than a million HDF5 objects")
                link = group.get(key, getlink=True)
                if not isinstance(link, h5py.HardLink):
                    raise ValueError(f"{self.where}: {prefix}{key} is a {type(link).__name__} "
                                     f"(links to other places or files are refused)")
                obj = group[key]
                path = f"{prefix}{key}"
                if isinstance(obj, h5py.Group):
                    if key == "vars":
                        out[prefix.rstrip("/")] = sorted(obj.keys())
                    stack.append((path + "/", obj))
        return out

    def close(self) -> None:
        self.file.close()

    def count(self, path: str) -> int:
        return len(self.groups.get(path, []))

    def read(self, path: str, index: int, like: Any) -> np.ndarray:
        """Dataset ``<path>/vars/<index>``, checked to have ``like``'s shape and dtype
        kind (a host array or variable) before its bytes are read."""
        h5py = _h5py()
        name = f"{path}/vars/{index}" if path else f"vars/{index}"
        try:
            ds = self.file[name]
        except KeyError:
            raise ValueError(f"{self.where}: no dataset {name}") from None
        if not isinstance(ds, h5py.Dataset):
            raise ValueError(f"{self.where}: {name} is not a dataset")
        if ds.external or ds.is_virtual:
            raise ValueError(f"{self.where}: {name} is an external or virtual dataset "
                             f"(data outside the file is refused)")
        if ds.compression is not None or ds._filters:
            raise ValueError(f"{self.where}: {name} is compressed or filtered ({ds._filters}); "
                             f"weights files hold plain data")
        bf16 = ds.attrs.get("dtype") == "bfloat16"
        dtype = ds.dtype
        if dtype.kind not in "biuf" or dtype.itemsize > MAX_DTYPE_BYTES or dtype.fields:
            raise ValueError(f"{self.where}: {name} holds {dtype}, not numbers")
        want = tuple(int(s) for s in like.shape)
        if tuple(ds.shape) != want:
            raise ValueError(f"{self.where}: {name} has shape {tuple(ds.shape)}, the variable "
                             f"{_label(like)} has {want}")
        declared = int(np.prod(want, dtype=np.int64)) * dtype.itemsize
        if declared and ds.id.get_storage_size() < declared:
            raise ValueError(f"{self.where}: {name} declares {declared} bytes but stores "
                             f"{ds.id.get_storage_size()}")
        try:
            value = ds[()]
        except Exception as e:
            raise ValueError(f"{self.where}: cannot read {name} ({type(e).__name__}: {e})") \
                from e
        value = np.asarray(value)
        crc = ds.attrs.get(CRC_ATTR)
        if crc is not None and int(crc) != zlib.crc32(contiguous(value).tobytes()):
            raise ValueError(f"{self.where}: {name} fails its CRC-32 check (the file is "
                             f"damaged)")
        if bf16:
            import ml_dtypes

            value = value.view(ml_dtypes.bfloat16)
        return value


def contiguous(a: Any) -> np.ndarray:
    """``a`` as a C-contiguous array (0-d kept 0-d, unlike ``np.ascontiguousarray``)."""
    a = np.asarray(a)
    return a if a.flags.c_contiguous else a.copy(order="C")


def _label(like: Any) -> str:
    return repr(getattr(like, "name", "?"))
