"""A real TensorBoard server over a log directory written by ember, read over HTTP."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import pytest

from ember import summary

pytest.importorskip("tensorboard")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(base: str, path: str, **query: str):
    url = base + path + ("?" + urllib.parse.urlencode(query) if query else "")
    with urllib.request.urlopen(url, timeout=10) as response:  # loopback only
        return json.load(response)


@pytest.fixture(params=["python", "rust"])
def tensorboard_server(request, tmp_path):
    """Start ``tensorboard`` on a free loopback port; always stopped at the end.

    Run once with TensorBoard's Python reader and once with its Rust data server
    (``--load_fast true``), which has its own event-file parser.
    """
    if request.param == "rust":
        pytest.importorskip("tensorboard_data_server")
    logdir = tmp_path / "logs"
    logdir.mkdir()
    port = free_port()
    command = [sys.executable, "-m", "tensorboard.main"]
    if shutil.which("tensorboard") and os.path.dirname(shutil.which("tensorboard")) == \
            os.path.dirname(sys.executable):
        command = [shutil.which("tensorboard")]
    proc = subprocess.Popen(
        [*command, "--logdir", str(logdir), "--port", str(port), "--host", "127.0.0.1",
         "--reload_interval", "1", "--load_fast", "true" if request.param == "rust" else "false"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        yield logdir, base, proc
    finally:
        proc.kill()
        proc.wait(timeout=30)
        proc.stderr.close()


def wait_for(fetch, ok, timeout=60.0):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = fetch()
            if ok(last):
                return last
        except OSError as e:  # not listening yet
            last = e
        time.sleep(0.25)
    raise AssertionError(f"TensorBoard did not serve the data in {timeout}s; last: {last!r}")


def test_tensorboard_shows_runs_and_scalar_series(tensorboard_server):
    logdir, base, proc = tensorboard_server
    for run, scale in (("train", 1.0), ("eval", 2.0)):
        writer = summary.create_file_writer(logdir / run)
        with writer.as_default():
            for step in range(0, 50, 5):
                summary.scalar("loss", scale / (step + 1), step=step)
            summary.histogram("weights", [0.0, 1.0, 2.0], step=0)
            summary.text("notes", "hello", step=0)
        writer.close()

    def runs():
        if proc.poll() is not None:
            raise AssertionError(f"tensorboard exited: {proc.stderr.read().decode()[-2000:]}")
        return get_json(base, "/data/runs")

    assert sorted(wait_for(runs, lambda r: {"train", "eval"} <= set(r))) == ["eval", "train"]
    tags = wait_for(lambda: get_json(base, "/data/plugin/scalars/tags"),
                    lambda t: all("loss" in t.get(r, {}) for r in ("train", "eval")))
    assert set(tags) == {"train", "eval"}
    for run, scale in (("train", 1.0), ("eval", 2.0)):
        series = get_json(base, "/data/plugin/scalars/scalars", run=run, tag="loss")
        assert [point[1] for point in series] == list(range(0, 50, 5))
        values = [point[2] for point in series]
        assert values == pytest.approx([scale / (s + 1) for s in range(0, 50, 5)], rel=1e-6)
    histogram_tags = get_json(base, "/data/plugin/histograms/tags")
    assert "weights" in histogram_tags["train"]
