"""``get_file``: Keras's download-and-cache helper, with atomic writes and safe extraction.

As ``keras.utils.get_file``: the file at ``origin`` goes to ``cache_dir/cache_subdir/fname``
(``$KERAS_HOME`` or ``~/.keras``, then ``datasets``), is reused from there on later calls,
checked against ``file_hash`` when given, and extracted when asked. Beyond Keras: the
download is written to a temporary file and renamed into place only once complete and
checked (a killed or failed download leaves no partial file where the next call would
take it for the data), and an archive member that would land outside the extraction
directory (an absolute path, ``..``, a link or a device) is refused by name before
anything is extracted.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from typing import Any


def get_file(fname: Any = None, origin: str | None = None, untar: bool = False,
             md5_hash: str | None = None, file_hash: str | None = None,
             cache_subdir: str = "datasets", hash_algorithm: str = "auto",
             extract: bool = False, archive_format: Any = "auto", cache_dir: Any = None,
             force_download: bool = False) -> str:
    """Download ``origin`` into the cache unless it is there, and return its local path.

    Args:
        fname: The local file name (None: the last part of ``origin``'s path). With
            ``extract``, a name without an extension names the extraction directory.
        origin: The URL (``http(s)://``, ``file://``, or what ``urllib`` opens).
        untar: Keras's older spelling of ``extract=True`` for tar archives.
        md5_hash: Keras's older spelling of ``file_hash`` with ``hash_algorithm="md5"``.
        file_hash: The expected sha256 (64 hex digits) or md5 of the file.
        cache_subdir: The directory under ``cache_dir`` (an absolute path is used as is).
        hash_algorithm: ``"auto"`` (by the hash's length), ``"sha256"`` or ``"md5"``.
        extract: Extract the archive (tar, tar.gz, tar.bz2, zip) into a directory, and
            return that directory.
        archive_format: ``"auto"`` (tar, then zip), ``"tar"``, ``"zip"``, a list of them,
            or None (no extraction).
        cache_dir: The cache's root: ``$KERAS_HOME``, else ``~/.keras``.
        force_download: Download even when the file is in the cache.

    Returns:
        The path of the file, or of the directory it was extracted into.

    Raises:
        ValueError: no ``origin``, a file name that is a path or cannot be found, a file
            whose hash differs from ``file_hash``, or an archive member that would land
            outside the extraction directory.
        OSError: the download failed (its URL and the reason are named).
    """
    if origin is None:
        raise ValueError("get_file: give origin, the URL of the file to download")
    if hash_algorithm not in ("auto", "sha256", "md5"):
        raise ValueError(f"get_file: hash_algorithm must be 'auto', 'sha256' or 'md5', got "
                         f"{hash_algorithm!r}")
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    root = os.path.expanduser(str(cache_dir) if cache_dir is not None else
                              os.environ.get("KERAS_HOME", os.path.join("~", ".keras")))
    datadir = os.path.join(root, str(cache_subdir))
    os.makedirs(datadir, exist_ok=True)
    given = fname is not None and str(os.fspath(fname)) != ""
    name = os.fspath(fname) if given else os.path.basename(urllib.parse.urlsplit(origin).path)
    name = str(name)
    if not name:
        raise ValueError(f"get_file: no file name in origin {origin!r}; give fname")
    if os.sep in name or (os.altsep and os.altsep in name) or name in (".", ".."):
        raise ValueError(f"get_file: fname {name!r} is a path; give the directory as "
                         "cache_dir or cache_subdir")
    if extract or untar:
        if given and "." in name:
            target = os.path.join(datadir, name)
            extracted = os.path.join(datadir, f"{name[:name.find('.')]}_extracted")
        else:
            extracted = os.path.join(datadir, name)
            target = os.path.join(datadir, f"{name}_archive")
    else:
        target = os.path.join(datadir, name)
    download = force_download or not os.path.exists(target)
    if not download and file_hash is not None and not _matches(target, file_hash,
                                                               hash_algorithm):
        print(f"A local file was found at {target}, but its {hash_algorithm} hash does "
              f"not match {file_hash}: downloading it again.", file=sys.stderr)
        download = True
    if download:
        _download(origin, target, file_hash, hash_algorithm)
    if extract or untar:
        formats = ["tar"] if untar else archive_format
        if not _extract(target, extracted, formats):
            raise ValueError(f"get_file: {target} is not an archive of the formats "
                             f"{formats!r}; nothing was extracted")
        return extracted
    return target


def _hasher(algorithm: str, file_hash: str) -> Any:
    if algorithm == "sha256" or (algorithm == "auto" and len(file_hash) == 64):
        return hashlib.sha256()
    return hashlib.md5()


def _hash_of(path: str, hasher: Any) -> str:
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            hasher.update(chunk)
    return str(hasher.hexdigest())


def _matches(path: str, file_hash: str, algorithm: str) -> bool:
    return _hash_of(path, _hasher(algorithm, file_hash)) == str(file_hash)


def _download(origin: str, target: str, file_hash: str | None, algorithm: str) -> None:
    """``origin`` into ``target``, through a temporary file renamed into place once whole
    and checked."""
    print(f"Downloading data from {origin}", file=sys.stderr)
    fd, tmp = tempfile.mkstemp(prefix=".get_file-", dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(origin) as response:
                    shutil.copyfileobj(response, out, 1 << 20)
            except urllib.error.HTTPError as e:
                raise OSError(f"get_file: fetching {origin} failed: HTTP {e.code} "
                              f"{e.reason}") from e
            except (urllib.error.URLError, ValueError) as e:
                raise OSError(f"get_file: fetching {origin} failed: "
                              f"{getattr(e, 'reason', e)}") from e
            out.flush()
            os.fsync(out.fileno())
        if file_hash is not None and not _matches(tmp, file_hash, algorithm):
            got = _hash_of(tmp, _hasher(algorithm, file_hash))
            raise ValueError(f"get_file: the file downloaded from {origin} has hash {got}, "
                             f"not {file_hash}: it is incomplete or not the expected file "
                             "(nothing was kept)")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _extract(archive: str, into: str, formats: Any) -> bool:
    """Extract ``archive`` into ``into`` (through a temporary directory renamed into
    place); False when it is none of ``formats``."""
    if formats is None:
        return False
    if formats == "auto":
        formats = ["tar", "zip"]
    if isinstance(formats, str):
        formats = [formats]
    for kind in formats:
        if kind not in ("tar", "zip"):
            raise ValueError(f"get_file: archive_format {kind!r} is not 'tar' or 'zip'")
        if (kind == "tar" and tarfile.is_tarfile(archive)) or \
                (kind == "zip" and zipfile.is_zipfile(archive)):
            parent = os.path.dirname(os.path.abspath(into))
            tmp = tempfile.mkdtemp(prefix=".get_file-", dir=parent)
            try:
                if kind == "tar":
                    with tarfile.open(archive) as t:
                        members = t.getmembers()
                        _check_members(archive, [m.name for m in members], tmp)
                        for m in members:
                            if not (m.isfile() or m.isdir()):
                                raise ValueError(f"get_file: {archive} holds {m.name!r}, a "
                                                 "link or device; only files and "
                                                 "directories are extracted")
                        t.extractall(tmp, members=members)
                else:
                    with zipfile.ZipFile(archive) as z:
                        _check_members(archive, z.namelist(), tmp)
                        z.extractall(tmp)
                if os.path.isdir(into):
                    shutil.rmtree(into)
                os.replace(tmp, into)
            finally:
                if os.path.exists(tmp):
                    shutil.rmtree(tmp)
            return True
    return False


def _check_members(archive: str, names: list[str], into: str) -> None:
    root = os.path.realpath(into)
    for name in names:
        where = os.path.realpath(os.path.join(root, name))
        if os.path.isabs(name) or not (where == root or where.startswith(root + os.sep)):
            raise ValueError(f"get_file: {archive} holds {name!r}, which would be written "
                             f"outside the extraction directory; nothing was extracted")
