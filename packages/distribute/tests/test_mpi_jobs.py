"""Real ``mpiexec -n 2`` jobs (run by ``nox -s distributed``, which installs the [mpi] extra
and the packages the job trains with)."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from numpy.testing import assert_allclose

JOB = pathlib.Path(__file__).parent / "programs" / "train_mlp.py"
MPIEXEC = shutil.which("mpiexec", path=os.pathsep.join(
    [str(pathlib.Path(sys.executable).parent), os.environ.get("PATH", "")]))
MISSING = [m for m in ("mpi4py", "ember.nn", "ember.checkpoint", "ember.summary")
           if importlib.util.find_spec(m.split(".")[0] if m == "mpi4py" else m) is None]
pytestmark = pytest.mark.skipif(
    bool(MISSING) or MPIEXEC is None,
    reason=f"needs mpiexec and {', '.join(MISSING) or 'mpi4py'} (nox -s distributed installs them)")
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def run(workdir, *extra, ranks=2, timeout=180):
    cmd = [sys.executable, str(JOB), "--workdir", str(workdir), *extra]
    if ranks:
        cmd = [MPIEXEC, "-n", str(ranks), *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=ENV)


@pytest.fixture(scope="module")
def one_process(tmp_path_factory):
    w = tmp_path_factory.mktemp("single")
    r = run(w, ranks=0)
    assert r.returncode == 0, r.stderr
    assert "done size=1" in r.stdout
    return np.load(w / "final.npy")


def test_two_ranks_train_like_one_process_on_the_whole_batch(tmp_path, one_process):
    r = run(tmp_path)
    assert r.returncode == 0, r.stderr
    assert "done size=2 identical_across_ranks=True" in r.stdout
    assert_allclose(np.load(tmp_path / "final.npy"), one_process, rtol=1e-5, atol=1e-6)
    # only the chief wrote: one event file, the manager's checkpoints, the result
    assert len(list((tmp_path / "logs").iterdir())) == 1
    ckpts = sorted(p.name for p in (tmp_path / "ckpt").iterdir() if not p.name.startswith("."))
    assert ckpts == ["checkpoint", "ckpt-10.safetensors", "ckpt-8.safetensors",
                     "ckpt-9.safetensors"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt", "final.npy", "logs"]


def test_sigkill_of_the_whole_job_then_restart_resumes(tmp_path, one_process):
    cmd = [MPIEXEC, "-n", "2", sys.executable, str(JOB), "--workdir", str(tmp_path),
           "--stall-after", "5"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=ENV, start_new_session=True)
    deadline = time.monotonic() + 120
    try:
        for line in proc.stdout:  # type: ignore[union-attr]
            if "STALLED" in line or time.monotonic() > deadline:
                break
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    r = run(tmp_path)
    assert r.returncode == 0, r.stderr
    assert "at step 5" in r.stdout and "saved step 6" in r.stdout
    assert "saved step 5\n" not in r.stdout
    assert_allclose(np.load(tmp_path / "final.npy"), one_process, rtol=1e-5, atol=1e-6)


def test_a_rank_that_dies_ends_the_job_instead_of_hanging(tmp_path):
    start = time.monotonic()
    r = run(tmp_path, "--die-at", "3", "--timeout", "10", timeout=120)
    assert r.returncode != 0
    assert time.monotonic() - start < 100
    assert "done" not in r.stdout


def test_a_rank_that_hangs_is_named_and_the_job_aborted(tmp_path):
    start = time.monotonic()
    r = run(tmp_path, "--hang-at", "3", "--timeout", "3", timeout=120)
    assert r.returncode != 0
    assert time.monotonic() - start < 100
    assert "CommunicationTimeout: DistributedOptimizer.apply_gradients: rank 0 of 2 waited 3 s" \
        in r.stderr


def test_a_traced_step_that_averages_gradients_allreduces_every_call():
    """A replay skipped the allreduce (its result was frozen into the trace) whenever a
    rank's gradient repeated: that rank re-applied an old average and the ranks drifted.
    The step now runs eagerly (warned), and every call averages."""
    prog = pathlib.Path(__file__).parent / "programs" / "traced_allreduce.py"
    r = subprocess.run([MPIEXEC, "-n", "2", sys.executable, str(prog)], capture_output=True,
                       text=True, timeout=180, env=ENV)
    assert r.returncode == 0, r.stderr
    # (the ranks' lines may interleave in the shared stdout)
    lines = sorted(re.findall(r"rank \d grads \[[^\]]*\] w \S+ warned (?:True|False)",
                              r.stdout))
    want = "grads [0.5, 1.0, 1.5, 2.5, 3.5] w -8.0 warned True"
    assert lines == [f"rank 0 {want}", f"rank 1 {want}"], r.stdout + r.stderr
