"""MNIST from the four official IDX files (gzip, or already decompressed)."""

from __future__ import annotations

import hashlib
import os

import numpy as np

from .._dataset import Dataset
from .._download import download as _download
from .._download import sha256_of
from .._errors import DataFormatError
from .._readers.idx import read_idx

BASE_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"

FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}

# sha256 of the official .gz files
SHA256 = {
    "train-images-idx3-ubyte.gz":
        "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
    "train-labels-idx1-ubyte.gz":
        "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
    "t10k-images-idx3-ubyte.gz":
        "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
    "t10k-labels-idx1-ubyte.gz":
        "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
}
# md5 of the decompressed files, for directories that hold them raw
RAW_MD5 = {
    "train-images-idx3-ubyte": "6bbc9ace898e44ae57da46a324031adb",
    "train-labels-idx1-ubyte": "a25bea736e30d166cdddb491f175f624",
    "t10k-images-idx3-ubyte": "2646ac647ad5339dbf082846283269ea",
    "t10k-labels-idx1-ubyte": "27ae3e4e09519cfbb04c329615203637",
}


def default_data_dir() -> str:
    """``$EMBER_DATA/mnist`` if that exists, else ``$EMBER_DATA``, else the user cache."""
    env = os.environ.get("EMBER_DATA")
    if env:
        sub = os.path.join(env, "mnist")
        return sub if os.path.isdir(sub) else env
    return os.path.join(os.path.expanduser("~"), ".cache", "ember", "datasets", "mnist")


def _md5_of(path):
    h = hashlib.md5()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _locate(data_dir, name, checksums, download, base_url):
    """The verified path of ``name`` (.gz preferred, raw accepted), or None if absent."""
    gz = os.path.join(data_dir, name + ".gz")
    raw = os.path.join(data_dir, name)
    if not os.path.exists(gz) and not os.path.exists(raw) and download:
        _download(base_url + name + ".gz", gz, checksums.get(name + ".gz"))
    if os.path.exists(gz):
        want = checksums.get(name + ".gz")
        if want is not None and (got := sha256_of(gz)) != want:
            raise DataFormatError(
                f"{gz}: sha256 {got} does not match the official {want}; the file is corrupted "
                f"or not MNIST (delete it and download again)"
            )
        return gz
    if os.path.exists(raw):
        want = RAW_MD5.get(name) if checksums is SHA256 else None
        if want is not None and (got := _md5_of(raw)) != want:
            raise DataFormatError(f"{raw}: md5 {got} does not match the official {want}")
        return raw
    return None


def mnist(split: str = "train", data_dir=None, download: bool = False, *,
          base_url: str = BASE_URL, checksums: dict | None = None) -> Dataset:
    """MNIST as a ``Dataset`` of ``(image[784] float32 in [0, 1], label int32)``.

    Args:
        split: ``"train"`` (60,000 examples) or ``"test"`` (10,000).
        data_dir: folder holding the IDX files (``.gz`` or decompressed); default
            ``$EMBER_DATA`` (or its ``mnist/`` subfolder), else ``~/.cache/ember/datasets/mnist``.
        download: fetch missing files from ``base_url`` into ``data_dir``.
        base_url: where to download from (a mirror of the official files).
        checksums: sha256 per ``.gz`` file name; defaults to the official values.

    Raises:
        FileNotFoundError: files are missing (the message names them and the folder).
        DataFormatError: a checksum mismatch, or a corrupted/truncated file.
    """
    if split not in FILES:
        raise ValueError(f"mnist: split must be 'train' or 'test', got {split!r}")
    data_dir = os.fspath(data_dir) if data_dir is not None else default_data_dir()
    checksums = SHA256 if checksums is None else checksums
    names = FILES[split]
    paths = [_locate(data_dir, n, checksums, download, base_url) for n in names]
    missing = [n + ".gz" for n, p in zip(names, paths) if p is None]
    if missing:
        raise FileNotFoundError(
            f"MNIST {split} files missing from {data_dir}: {', '.join(missing)}. Put the "
            f"official files there (or point $EMBER_DATA at their folder), or pass "
            f"download=True to fetch them."
        )
    images, labels = (read_idx(p) for p in paths)
    if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
        raise DataFormatError(
            f"{paths[0]}, {paths[1]}: expected images (N, rows, cols) and labels (N,), got "
            f"{images.shape} and {labels.shape}"
        )
    x = images.reshape(len(images), -1).astype(np.float32)
    x *= np.float32(1.0 / 255.0)
    return Dataset.from_tensor_slices((x, labels.astype(np.int32)))
