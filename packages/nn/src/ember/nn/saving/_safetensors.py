"""Weights as ``.safetensors`` (Hugging Face's format), written and read by ember itself.

The file is an 8-byte little-endian header length, a JSON header ``{name: {"dtype",
"shape", "data_offsets"}, "__metadata__": {...}}`` and the tensors' bytes. Tensors are
named by Keras's weight paths (``layers/dense/vars/0``), so a ``.safetensors`` file and a
``.weights.h5`` file of one model hold the same names. ember adds each tensor's CRC-32 to
the metadata (``ember_crc32``), checked when present.

Reading checks the whole header before a tensor byte is touched: its length within the
file, valid JSON of the expected form, known dtypes, shapes of non-negative ints, each
tensor's byte range inside the data and exactly its shape's size, ranges that neither
overlap nor leave holes (the format's own rules), and the data ending where the file
ends. A tensor is read only into a variable of its shape and dtype kind.
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

import numpy as np

from ._h5 import contiguous

_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16",
           "I64": "int64", "I32": "int32", "I16": "int16", "I8": "int8", "U64": "uint64",
           "U32": "uint32", "U16": "uint16", "U8": "uint8", "BOOL": "bool"}
_CODES = {v: k for k, v in _DTYPES.items()}
MAX_HEADER = 100 * 1024 * 1024  # the format's own limit
CRC_KEY = "ember_crc32"


def _np_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def write(tensors: dict[str, np.ndarray], metadata: dict[str, str]) -> bytes:
    """The bytes of a safetensors file holding ``tensors`` (in order) and ``metadata``."""
    header: dict[str, Any] = {}
    crcs: dict[str, int] = {}
    chunks: list[bytes] = []
    offset = 0
    for name, a in tensors.items():
        a = contiguous(a)
        code = _CODES.get(a.dtype.name)
        if code is None:
            raise ValueError(f"safetensors: cannot store {name} of dtype {a.dtype}")
        raw = a.tobytes()
        header[name] = {"dtype": code, "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        crcs[name] = zlib.crc32(raw)
        chunks.append(raw)
        offset += len(raw)
    header["__metadata__"] = {**metadata, CRC_KEY: json.dumps(crcs)}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


class SafetensorsWeights:
    """A safetensors file in memory, its header checked whole on opening."""

    def __init__(self, data: bytes, where: str) -> None:
        self.where, self.data = where, data
        if len(data) < 8:
            raise ValueError(f"{where}: not a safetensors file ({len(data)} bytes)")
        n = struct.unpack_from("<Q", data, 0)[0]
        if n > min(MAX_HEADER, len(data) - 8):
            raise ValueError(f"{where}: the safetensors header claims {n} bytes; the file "
                             f"holds {len(data) - 8} after the length (truncated or not "
                             f"safetensors)")
        try:
            header = json.loads(data[8:8 + n].decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            raise ValueError(f"{where}: the safetensors header is not valid JSON ({e})") \
                from None
        if not isinstance(header, dict):
            raise ValueError(f"{where}: the safetensors header is not a JSON object")
        meta = header.pop("__metadata__", {}) or {}
        if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
            raise ValueError(f"{where}: __metadata__ must map names to strings")
        self.metadata = meta
        self.start = 8 + n
        size = len(data) - self.start
        self.entries: dict[str, tuple[np.dtype, tuple[int, ...], int, int]] = {}
        spans = []
        for name, info in header.items():
            if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
                raise ValueError(f"{where}: tensor {name!r:.80} needs exactly dtype, shape "
                                 f"and data_offsets")
            code, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
            if code not in _DTYPES:
                raise ValueError(f"{where}: tensor {name!r:.80} has unknown dtype {code!r:.20}")
            if not isinstance(shape, list) or not all(
                    isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
                raise ValueError(f"{where}: tensor {name!r:.80} has a malformed shape")
            if not (isinstance(offsets, list) and len(offsets) == 2 and all(
                    isinstance(o, int) and not isinstance(o, bool) for o in offsets)
                    and 0 <= offsets[0] <= offsets[1] <= size):
                raise ValueError(f"{where}: tensor {name!r:.80} lies outside the file's data "
                                 f"({size} bytes): offsets {offsets!r:.60}")
            dtype = _np_dtype(_DTYPES[code])
            count = 1
            for s in shape:
                count *= s
            if count * dtype.itemsize != offsets[1] - offsets[0]:
                raise ValueError(f"{where}: tensor {name!r:.80} of shape {shape} and dtype "
                                 f"{code} needs {count * dtype.itemsize} bytes, its offsets "
                                 f"give {offsets[1] - offsets[0]}")
            self.entries[name] = (dtype, tuple(shape), offsets[0], offsets[1])
            spans.append((offsets[0], offsets[1]))
        end = 0
        for lo, hi in sorted(spans):
            if lo != end:
                raise ValueError(f"{where}: tensors overlap or leave a hole at byte {end}")
            end = hi
        if end != size:
            raise ValueError(f"{where}: the data holds {size} bytes, the tensors {end} "
                             f"(truncated, or other bytes follow)")
        try:
            crcs = json.loads(meta.get(CRC_KEY, "{}"))
        except ValueError:
            crcs = None
        if not isinstance(crcs, dict) or not all(isinstance(v, int) for v in crcs.values()):
            raise ValueError(f"{where}: malformed {CRC_KEY} metadata")
        self.crcs = crcs

    def names(self) -> list[str]:
        return list(self.entries)

    def read(self, name: str, like: Any) -> np.ndarray:
        if name not in self.entries:
            raise ValueError(f"{self.where}: no tensor {name}")
        dtype, shape, lo, hi = self.entries[name]
        want = tuple(int(s) for s in like.shape)
        if shape != want:
            raise ValueError(f"{self.where}: {name} has shape {shape}, the variable "
                             f"{getattr(like, 'name', '?')!r} has {want}")
        raw = self.data[self.start + lo:self.start + hi]
        if name in self.crcs and zlib.crc32(raw) != self.crcs[name]:
            raise ValueError(f"{self.where}: {name} fails its CRC-32 check (the file is "
                             f"damaged)")
        return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
