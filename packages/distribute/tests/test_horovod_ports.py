"""Horovod's TensorFlow 2 MNIST examples, ported with names changed (``programs/horovod_*.py``),
run as a user runs them: a world of one (plain ``python``, wherever ember.nn and the MNIST
files are) and two ranks (``mpiexec -n 2``, where mpi4py and mpiexec are installed: ``nox -s
distributed``). Each program asserts on every rank what must hold (the loss falls, the ranks
end with identical weights, the warmup's learning rates, the averaged metrics); the tests
check the exit codes and what the ranks print and leave behind, each rank in its own
working directory, so that a file written by any rank but 0 shows.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

PROGRAMS = pathlib.Path(__file__).parent / "programs"
CUSTOM_LOOP = PROGRAMS / "horovod_tensorflow2_mnist.py"
KERAS_FIT = PROGRAMS / "horovod_tensorflow2_keras_mnist.py"
# the real MNIST, where the workspace keeps it beside the checkout (never in the repository)
SHARED_MNIST = pathlib.Path(__file__).resolve().parents[4] / "shared" / "datasets" / "mnist"
MPIEXEC = shutil.which("mpiexec", path=os.pathsep.join(
    [str(pathlib.Path(sys.executable).parent), os.environ.get("PATH", "")]))
NEEDS = [m for m in ("ember.nn", "ember.data", "ember.checkpoint", "ember.graph")
         if importlib.util.find_spec(m) is None]
HAS_MPI = MPIEXEC is not None and importlib.util.find_spec("mpi4py") is not None
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
       "MKL_NUM_THREADS": "1", "TQDM_DISABLE": "1"}
if "EMBER_DATA" not in ENV and SHARED_MNIST.is_dir():
    ENV["EMBER_DATA"] = str(SHARED_MNIST)
ENV.pop("EMBER_PROGRAMS_FULL", None)  # the reduced runs (the full ones take hours on a CPU)
DATA_DIR = pathlib.Path(ENV.get("EMBER_DATA") or
                        pathlib.Path.home() / ".cache" / "ember" / "datasets" / "mnist")
HAS_MNIST = (DATA_DIR / "train-images-idx3-ubyte.gz").exists() or \
    (DATA_DIR / "mnist" / "train-images-idx3-ubyte.gz").exists()

runs = pytest.mark.skipif(
    bool(NEEDS) or not HAS_MNIST,
    reason=f"needs {', '.join(NEEDS) or 'ember.nn'} and the MNIST files ($EMBER_DATA or "
           "../shared/datasets/mnist); nox -s distributed installs every package")
two_ranks = pytest.mark.skipif(not HAS_MPI, reason="needs mpi4py and mpiexec "
                               "(pip install 'ember-distribute[mpi]'; nox -s distributed)")


def run(program: pathlib.Path, workdirs: list[pathlib.Path]) -> subprocess.CompletedProcess:
    """``program`` in a world of ``len(workdirs)`` ranks, rank r in ``workdirs[r]``: plain
    python for one, else mpiexec with one working directory per rank (MPMD ``:``)."""
    if len(workdirs) == 1:
        cmd, cwd = [sys.executable, str(program)], workdirs[0]
    else:
        cmd, cwd = [MPIEXEC], workdirs[0]
        for r, w in enumerate(workdirs):
            cmd += ([":"] if r else []) + ["-n", "1", "-wdir", str(w), sys.executable,
                                           str(program)]
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600, env=ENV)
    assert r.returncode == 0, (f"{program.name} on {len(workdirs)} rank(s) exited with "
                               f"{r.returncode}\n--- stdout ---\n{r.stdout[-4000:]}\n"
                               f"--- stderr ---\n{r.stderr[-8000:]}")
    return r


def reports(out: str, size: int) -> tuple[dict[int, str], dict[int, list[str]]]:
    """Each rank's weights digest and the files it listed (found by pattern: the ranks'
    lines can interleave in mpiexec's output)."""
    digests = {int(r): h for r, n, h in
               re.findall(r"rank (\d+)/(\d+): weights sha256 ([0-9a-f]{64})", out)
               if int(n) == size}
    written = {int(r): ast.literal_eval(files) for r, n, files in
               re.findall(r"rank (\d+)/(\d+): written: (\[[^\]]*\])", out) if int(n) == size}
    assert sorted(digests) == sorted(written) == list(range(size)), out[-4000:]
    return digests, written


def workdirs(tmp_path: pathlib.Path, size: int) -> list[pathlib.Path]:
    dirs = [tmp_path / f"rank{r}" for r in range(size)]
    for d in dirs:
        d.mkdir()
    return dirs


def listing(d: pathlib.Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


def test_both_programs_name_upstream_and_what_they_changed():
    for program in (CUSTOM_LOOP, KERAS_FIT):
        head = program.read_text().split('"""')[1]
        for part in ("Port of horovod/horovod", "Upstream: https://github.com/horovod/horovod/",
                     "Changed:", "Added:", "Found"):
            assert part in head, (program.name, part)
        gaps = set(re.findall(r"# GAP (\d+):", program.read_text()))
        assert gaps and all(re.search(rf"GAP {n}\b", head) for n in gaps), (program.name, gaps)


def check_custom_loop(tmp_path: pathlib.Path, size: int) -> None:
    dirs = workdirs(tmp_path, size)
    r = run(CUSTOM_LOOP, dirs)
    digests, written = reports(r.stdout, size)
    assert len(set(digests.values())) == 1, digests  # the ranks' weights are identical
    # rank 0 alone saved its checkpoint (`checkpoint.save('./checkpoints')`)
    assert written[0] == listing(dirs[0])
    assert "checkpoint" in written[0] and any(n.startswith("checkpoints-1") for n in written[0]), \
        written[0]
    for rank in range(1, size):
        assert written[rank] == listing(dirs[rank]) == [], (rank, written[rank])
    losses = re.findall(rf"rank (\d+)/{size}: loss ([\d.]+) -> ([\d.]+)", r.stdout)
    assert len(losses) == size and len({(a, b) for _, a, b in losses}) == 1, losses
    assert r.stdout.count("Step #0\tLoss:") == 1  # rank 0 alone prints the steps


def check_keras_fit(tmp_path: pathlib.Path, size: int) -> None:
    dirs = workdirs(tmp_path, size)
    r = run(KERAS_FIT, dirs)
    digests, written = reports(r.stdout, size)
    assert len(set(digests.values())) == 1, digests  # the ranks' weights are identical
    # ModelCheckpoint('./checkpoint-{epoch}...') is rank 0's callback alone
    assert written[0] == listing(dirs[0]) == [f"checkpoint-{e}.keras" for e in range(1, 5)]
    for rank in range(1, size):
        assert written[rank] == listing(dirs[rank]) == [], (rank, written[rank])
    # the warmup's verbose line, on rank 0 only, reaching 0.001 * size after 3 epochs
    assert r.stdout.count("Epoch 3: finished gradual learning rate warmup to") == 1, r.stdout
    assert f"Epoch 3: finished gradual learning rate warmup to {0.001 * size:g}." in r.stdout
    # MetricAverageCallback: every rank logged the same (averaged) history
    logged = re.findall(rf"rank \d+/{size}: (loss \[.*?\], accuracy \[.*?\], lr \[.*?\])",
                        r.stdout)
    assert len(logged) == size and len(set(logged)) == 1, logged


@runs
def test_custom_loop_in_a_world_of_one(tmp_path):
    check_custom_loop(tmp_path, 1)


@runs
def test_keras_fit_with_horovods_callbacks_in_a_world_of_one(tmp_path):
    check_keras_fit(tmp_path, 1)


@runs
@two_ranks
def test_custom_loop_on_two_ranks(tmp_path):
    check_custom_loop(tmp_path, 2)


@runs
@two_ranks
def test_keras_fit_with_horovods_callbacks_on_two_ranks(tmp_path):
    check_keras_fit(tmp_path, 2)
