"""The IDX format (MNIST's): magic ``00 00 <type> <ndim>``, big-endian int32 dims, data.

Files may be gzip-compressed (detected by their first two bytes, not their name).
"""

from __future__ import annotations

import gzip
import os
import struct
import zlib

import numpy as np

from .._errors import DataFormatError

_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
_CODES = {np.dtype(v).newbyteorder("="): k for k, v in _TYPES.items()}


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] != b"\x1f\x8b":
        return raw
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as exc:
        raise DataFormatError(f"{path}: corrupted or truncated gzip data ({exc})") from exc


def read_idx(path) -> np.ndarray:
    """Read an IDX file (raw or gzip) into a numpy array in native byte order.

    Raises:
        DataFormatError: on a bad magic number, unknown type code, or truncated data;
            the message names the file.
    """
    path = os.fspath(path)
    data = _read_bytes(path)
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise DataFormatError(f"{path}: not an IDX file (bad magic {data[:4].hex() or 'empty'})")
    code, ndim = data[2], data[3]
    if code not in _TYPES:
        raise DataFormatError(f"{path}: unknown IDX data type code 0x{code:02x}")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise DataFormatError(f"{path}: truncated IDX header ({len(data)} bytes)")
    dims = struct.unpack(f">{ndim}i", data[4:header])
    dtype = np.dtype(_TYPES[code])
    want = int(np.prod(dims, dtype=np.int64)) * dtype.itemsize
    got = len(data) - header
    if got != want:
        what = "truncated" if got < want else "has trailing bytes"
        raise DataFormatError(
            f"{path}: IDX data {what}: dims {list(dims)} need {want} bytes, found {got}"
        )
    arr = np.frombuffer(data, dtype=dtype, offset=header).reshape(dims)
    return arr.astype(dtype.newbyteorder("="))


def write_idx(path, array, compress: bool | None = None) -> None:
    """Write ``array`` as an IDX file; gzip it when ``compress`` (default: name ends .gz)."""
    path = os.fspath(path)
    arr = np.asarray(array)
    code = _CODES.get(arr.dtype.newbyteorder("="))
    if code is None:
        raise TypeError(f"write_idx: dtype {arr.dtype} has no IDX type code")
    head = bytes([0, 0, code, arr.ndim]) + struct.pack(f">{arr.ndim}i", *arr.shape)
    payload = head + arr.astype(_TYPES[code]).tobytes()
    if compress is None:
        compress = path.endswith(".gz")
    if compress:
        payload = gzip.compress(payload, mtime=0)
    with open(path, "wb") as f:
        f.write(payload)
