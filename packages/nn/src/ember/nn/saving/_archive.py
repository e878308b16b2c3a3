"""The ``.keras`` archive: a zip of ``metadata.json``, ``config.json`` and
``model.weights.h5``, as Keras 3 writes it (members stored, not compressed).

Reading trusts nothing in the file. Before a member is read: the zip must parse; every
member name must be one of those three (a name with ``..``, a leading ``/`` or ``\\``,
a drive letter or a NUL is reported as unsafe, anything else as unexpected; nothing is
ever extracted, so no name can write anywhere); no name twice; no encryption; stored or
deflated only; each member's declared size within its limit (1 MiB of metadata, 32 MiB
of config, four times the archive's size for the weights, and at most 1100 times its
compressed size, deflate's ceiling) and its bytes inside the file. Reading a member checks its CRC-32
(zipfile does), so a flipped bit anywhere in the data is found before JSON or libhdf5 sees
it. JSON must be UTF-8, an object, and nested at most a few hundred levels.
"""

from __future__ import annotations

import datetime
import io
import json
import os
import zipfile
from typing import Any

from . import _atomic

METADATA, CONFIG, WEIGHTS = "metadata.json", "config.json", "model.weights.h5"
MAX_METADATA = 1 << 20
MAX_CONFIG = 32 << 20
MAX_RATIO = 1100  # deflate cannot expand more than about 1032:1


def write(path: str, metadata: dict[str, Any], config: dict[str, Any], weights: bytes) -> None:
    """Write the archive atomically (the old file stays whole if this fails)."""
    meta = json.dumps(metadata).encode("utf-8")
    conf = json.dumps(config).encode("utf-8")
    stamp = datetime.datetime.now().timetuple()[:6]

    def fill(f: Any) -> None:
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as zf:
            for name, data in ((METADATA, meta), (CONFIG, conf), (WEIGHTS, weights)):
                info = zipfile.ZipInfo(name, date_time=stamp)
                info.compress_type = zipfile.ZIP_STORED
                zf.writestr(info, data)

    _atomic.write_atomically(path, fill, "save")


def _unsafe(name: str) -> bool:
    parts = name.replace("\\", "/").split("/")
    return (name.startswith(("/", "\\")) or "\x00" in name or ".." in parts
            or (len(name) > 1 and name[1] == ":"))


def read(data: bytes, where: str) -> tuple[dict[str, Any], dict[str, Any], bytes]:
    """``(metadata, config, weights bytes)`` of an archive's bytes, checked as the module
    docstring says; a ValueError naming ``where`` and the fault otherwise."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data), "r")
        infos = zf.infolist()
    except Exception as e:  # zipfile raises many types on damaged headers (all reported)
        raise ValueError(f"{where}: not a .keras archive (not a readable zip file: "
                         f"{type(e).__name__}: {e})") from None
    names = [i.filename for i in infos]
    for info in infos:
        if _unsafe(info.filename):
            raise ValueError(f"{where}: the archive holds a member named "
                             f"{info.filename!r:.200}, an unsafe path; refused (nothing is "
                             f"extracted)")
    for info in infos:
        if info.filename not in (METADATA, CONFIG, WEIGHTS):
            hint = (" (Keras's npz weights format is not read by ember)"
                    if info.filename.endswith(".npz") else
                    " (assets are not read by ember)" if info.filename.startswith("assets")
                    else "")
            raise ValueError(f"{where}: unexpected archive member {info.filename!r:.200}"
                             f"{hint}")
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"{where}: the archive holds {dupes} more than once")
    for needed in (CONFIG, WEIGHTS):
        if needed not in names:
            raise ValueError(f"{where}: the archive has no {needed}")
    limits = {METADATA: MAX_METADATA, CONFIG: MAX_CONFIG, WEIGHTS: 4 * len(data)}
    for info in infos:
        if info.flag_bits & 0x1:
            raise ValueError(f"{where}: {info.filename} is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise ValueError(f"{where}: {info.filename} uses compression method "
                             f"{info.compress_type} (stored or deflated only)")
        if info.file_size > limits[info.filename]:
            raise ValueError(f"{where}: {info.filename} declares {info.file_size} bytes, over "
                             f"its limit of {limits[info.filename]}")
        if info.compress_type == zipfile.ZIP_STORED and info.file_size != info.compress_size:
            raise ValueError(f"{where}: {info.filename} is stored but declares "
                             f"{info.file_size} bytes and {info.compress_size} compressed")
        if info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise ValueError(f"{where}: {info.filename} declares {info.file_size} bytes from "
                             f"{info.compress_size} compressed (a decompression bomb)")
        if info.header_offset + info.compress_size > len(data):
            raise ValueError(f"{where}: {info.filename} lies past the end of the file "
                             f"(truncated)")

    def member(name: str) -> bytes:
        try:
            out = zf.read(name)
        except Exception as e:  # a bad CRC, a damaged local header, an unknown method
            raise ValueError(f"{where}: cannot read {name} from the archive "
                             f"({type(e).__name__}: {e}); the file is damaged or "
                             f"truncated") from None
        if len(out) != zf.getinfo(name).file_size:
            raise ValueError(f"{where}: {name} is truncated")
        return out

    meta = _json(member(METADATA), where, METADATA) if METADATA in names else {}
    config = _json(member(CONFIG), where, CONFIG)
    weights = member(WEIGHTS)
    return meta, config, weights


def _json(raw: bytes, where: str, name: str) -> dict[str, Any]:
    try:
        value = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ValueError(f"{where}: {name} is not UTF-8 ({e})") from None
    except RecursionError:
        raise ValueError(f"{where}: {name} is nested too deeply") from None
    except ValueError as e:
        raise ValueError(f"{where}: {name} is not valid JSON ({e})") from None
    if not isinstance(value, dict):
        raise ValueError(f"{where}: {name} must hold a JSON object, got "
                         f"{type(value).__name__}")
    return value


def read_file(path: str, where: str) -> bytes:
    """A file's bytes (an OSError from the OS names the path itself)."""
    with open(os.fspath(path), "rb") as f:
        return f.read()
