"""MNIST: the real files when present, otherwise small IDX files written here."""

import functools
import hashlib
import http.server
import os
import pathlib
import subprocess
import sys
import threading

import numpy as np
import pytest

from ember.data import DataFormatError, write_idx
from ember.data.datasets import mnist
from ember.data.datasets.mnist import FILES

REPO = pathlib.Path(__file__).resolve().parents[3]


def real_mnist_dir():
    for d in (os.environ.get("EMBER_DATA"), REPO.parent / "shared" / "datasets"):
        if not d:
            continue
        for cand in (pathlib.Path(d) / "mnist", pathlib.Path(d)):
            if (cand / "train-images-idx3-ubyte.gz").exists():
                return cand
    return None


def write_small_mnist(directory, n=(50, 20), compress=True):
    """Generated IDX files in MNIST's layout; returns their sha256 (for .gz names)."""
    rng = np.random.default_rng(0)
    sums = {}
    for split, count in zip(("train", "test"), n):
        images = rng.integers(0, 256, size=(count, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, size=count, dtype=np.uint8)
        for name, arr in zip(FILES[split], (images, labels)):
            path = pathlib.Path(directory) / (name + (".gz" if compress else ""))
            write_idx(path, arr, compress=compress)
            sums[name + ".gz"] = hashlib.sha256(path.read_bytes()).hexdigest()
    return sums


def test_real_mnist():
    d = real_mnist_dir()
    if d is None:
        pytest.skip("real MNIST not found in $EMBER_DATA or ../shared/datasets/mnist")
    train, test = mnist("train", d), mnist("test", d)
    assert len(train) == 60000 and len(test) == 10000
    image, label = next(iter(train))
    assert image.shape == (784,) and image.dtype == np.float32 and label.dtype == np.int32
    assert 0.0 <= image.min() and image.max() <= 1.0
    assert int(label) == 5  # the first training digit is a 5
    labels = np.concatenate([b[1] for b in test.batch(1000)])
    assert labels.min() == 0 and labels.max() == 9


def test_generated_mnist_gz_and_raw(tmp_path):
    sums = write_small_mnist(tmp_path)
    ds = mnist("train", tmp_path, checksums=sums)
    batches = list(ds.batch(16))
    assert sum(len(b[0]) for b in batches) == 50
    assert batches[0][0].shape == (16, 784) and batches[0][0].dtype == np.float32
    assert batches[0][0].max() <= 1.0 and batches[0][1].dtype == np.int32
    raw = tmp_path / "raw"
    raw.mkdir()
    write_small_mnist(raw, compress=False)
    assert len(mnist("test", raw, checksums={})) == 20


def test_data_dir_from_env(tmp_path, monkeypatch):
    sums = write_small_mnist(tmp_path)
    monkeypatch.setenv("EMBER_DATA", str(tmp_path))
    assert len(mnist("test", checksums=sums)) == 20


def test_checksum_mismatch_names_file(tmp_path):
    write_small_mnist(tmp_path)
    with pytest.raises(DataFormatError, match=r"train-images-idx3-ubyte\.gz: sha256"):
        mnist("train", tmp_path)  # official checksums: the generated files differ


def test_missing_files_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"t10k-images-idx3-ubyte\.gz.*download=True"):
        mnist("test", tmp_path)
    with pytest.raises(ValueError, match="split"):
        mnist("validation", tmp_path)


def test_truncated_file_names_file(tmp_path):
    write_small_mnist(tmp_path)
    p = tmp_path / "t10k-labels-idx1-ubyte.gz"
    p.write_bytes(p.read_bytes()[:-10])
    with pytest.raises(DataFormatError, match="t10k-labels-idx1-ubyte.gz"):
        mnist("test", tmp_path, checksums={})


@pytest.fixture
def http_server(tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield served, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_download_from_local_server(tmp_path, http_server):
    served, url = http_server
    sums = write_small_mnist(served)
    cache = tmp_path / "cache"
    ds = mnist("train", cache, download=True, base_url=url, checksums=sums)
    assert len(ds) == 50
    assert sorted(p.name for p in cache.iterdir()) == sorted(n + ".gz" for n in FILES["train"])
    # a second call finds the files and downloads nothing
    for p in served.iterdir():
        p.unlink()
    assert len(mnist("train", cache, download=True, base_url=url, checksums=sums)) == 50


def test_download_checksum_mismatch_leaves_nothing(tmp_path, http_server):
    served, url = http_server
    sums = write_small_mnist(served)
    sums["t10k-images-idx3-ubyte.gz"] = "0" * 64
    cache = tmp_path / "cache"
    with pytest.raises(OSError, match="sha256"):
        mnist("test", cache, download=True, base_url=url, checksums=sums)
    assert not (cache / "t10k-images-idx3-ubyte.gz").exists()
    assert not [p for p in cache.iterdir() if p.name.startswith(".download")]


def test_import_touches_no_files_or_env():
    code = """
import os, sys
import numpy  # numpy reads its own variables; ember.data must read none
seen = []
class Spy(dict):
    def get(self, k, d=None):
        seen.append(k); return super().get(k, d)
    def __getitem__(self, k):
        seen.append(k); return super().__getitem__(k)
os.environ = Spy(os.environ)
def hook(event, args):
    if event == "open" and isinstance(args[0], str) and not args[0].endswith(
            (".py", ".pyc", ".so")) and not os.path.isdir(args[0]):
        seen.append(args[0])
sys.addaudithook(hook)
import ember.data
print(seen)
"""
    src = str(pathlib.Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True)
    assert out.stdout.strip() == "[]", out.stdout
