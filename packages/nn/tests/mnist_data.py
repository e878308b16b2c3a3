"""Read the MNIST IDX files with numpy + gzip (ember.nn must not depend on ember.data)."""

from __future__ import annotations

import gzip
import os
import pathlib

import numpy as np

FILES = {"train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
         "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")}


def find_dir() -> pathlib.Path | None:
    """``$EMBER_DATA`` (or its ``mnist`` folder), then ``<repo>/../shared/datasets/mnist``."""
    candidates = []
    if os.environ.get("EMBER_DATA"):
        base = pathlib.Path(os.environ["EMBER_DATA"])
        candidates += [base, base / "mnist", base / "datasets" / "mnist"]
    repo = pathlib.Path(__file__).resolve().parents[3]
    candidates.append(repo.parent / "shared" / "datasets" / "mnist")
    for c in candidates:
        if all((c / f).exists() for pair in FILES.values() for f in pair):
            return c
    return None


def _read(path: pathlib.Path, offset: int) -> np.ndarray:
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), np.uint8, offset=offset)


def load(split: str, directory: pathlib.Path) -> tuple[np.ndarray, np.ndarray]:
    """Images (n, 784) float32 in [0, 1] and labels (n,) int32."""
    img_f, lab_f = FILES[split]
    images = _read(directory / img_f, 16).reshape(-1, 784).astype(np.float32) / 255.0
    labels = _read(directory / lab_f, 8).astype(np.int32)
    return images, labels
