"""The main job (examples/mnist.py) as a user meets it: what it prints on a first run, a
repeated run and a missing-data run, and that a run directory only ever holds one run.

Every run here is a subprocess on small generated IDX files in MNIST's format, so these
tests are fast and do not need the real data.
"""

from __future__ import annotations

import fcntl
import gzip
import hashlib
import json
import os
import pathlib
import pty
import re
import struct
import subprocess
import sys
import termios
import time

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "examples" / "mnist.py"
N_TRAIN = 640  # 20 steps of 32


def _write_idx(path: pathlib.Path, arr: np.ndarray) -> None:
    magic = {1: 2049, 3: 2051}[arr.ndim]
    header = magic.to_bytes(4, "big") + b"".join(int(d).to_bytes(4, "big") for d in arr.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + arr.astype(np.uint8).tobytes())


@pytest.fixture(scope="module")
def small_mnist(tmp_path_factory) -> str:
    """Learnable IDX files in MNIST's format: the label sets one bright pixel row."""
    d = tmp_path_factory.mktemp("idx")
    rng = np.random.default_rng(0)
    for split, n in (("train", N_TRAIN), ("t10k", 200)):
        labels = rng.integers(0, 10, n)
        images = rng.integers(0, 60, (n, 28, 28))
        images[np.arange(n), labels * 2 + 4, :] = 255
        _write_idx(d / f"{split}-images-idx3-ubyte.gz", images)
        _write_idx(d / f"{split}-labels-idx1-ubyte.gz", labels)
    return str(d)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "EMBER_DATA")}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", **extra)
    return env


def job(cwd: pathlib.Path, *args: str, data: str | None, check: bool = True,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run the job in ``cwd``; stdout and stderr together in ``.stdout``."""
    cmd = [sys.executable, str(SCRIPT), *args]
    if data is not None:
        cmd += ["--data-dir", data, "--no-verify"]
    out = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, timeout=600, env=env or _env())
    if check:
        assert out.returncode == 0, out.stdout
    return out


def _tree_digest(folder: pathlib.Path) -> dict[str, str]:
    """Every file's hash, but the checkpoint manager's lock (it records who opened it last)."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.suffix != ".lock"}


def test_help_shows_the_workdir_default_and_the_models():
    out = job(ROOT, "--help", data=None).stdout
    assert "default: mnist_run/MODEL" in out
    assert "{linear,mlp,cnn}" in out and "seed-linear" not in out


def test_help_gives_the_cnns_epoch_time_the_readme_measured():
    """--help once said ~15 min an epoch where the README measured about 3 (150 steps, 16 s)."""
    help_text = " ".join(job(ROOT, "--help", data=None).stdout.split())
    readme = " ".join((ROOT / "README.md").read_text().split())
    measured = re.search(r"about (\d+) minutes an epoch on a 2-core CPU: (\d+) steps took "
                         r"(\d+) s", readme)
    said = re.search(r"cnn: CNN \+ LSTM, about (\d+) min an epoch on a 2-core CPU", help_text)
    assert measured and said, (measured, help_text)
    assert said[1] == measured[1]
    per_epoch = 1875 * int(measured[3]) / int(measured[2]) / 60  # 60,000 / 32 steps
    assert abs(per_epoch - int(measured[1])) <= 0.5, per_epoch


def test_default_run_directory_is_git_ignored():
    ignored = ROOT / ".gitignore"
    assert "/mnist_run/" in ignored.read_text().splitlines()
    if (ROOT / ".git").exists():
        r = subprocess.run(["git", "check-ignore", "-q", "mnist_run/mlp/run.json"], cwd=ROOT)
        assert r.returncode == 0, "mnist_run/ is not ignored by git"


def test_first_run_says_where_everything_goes(small_mnist, tmp_path):
    out = job(tmp_path, "--max-steps", "5", data=small_mnist).stdout
    run = os.path.join("mnist_run", "mlp")
    assert f"run directory {run} (mlp," in out
    assert f"checkpoints      {os.path.join(run, 'ckpt')}" in out
    assert f"TensorBoard logs {os.path.join(run, 'logs')}" in out
    assert re.search(r"\S*tensorboard --logdir mnist_run\b", out), out
    assert os.path.join(run, "run.json") in out
    assert "stopped early at step 5 (--max-steps 5), 5 of 20 steps into epoch 1/1" in out
    assert not re.search("^epoch 1/1:", out, re.M), out
    record = json.loads((tmp_path / run / "run.json").read_text())
    assert record["config"]["model"] == "mlp" and record["last"]["step"] == 5
    assert record["ember"]["ember-core"]


def test_finished_run_again_says_complete_and_how_to_go_on(small_mnist, tmp_path):
    w = tmp_path / "w"
    first = job(tmp_path, "--workdir", str(w), data=small_mnist).stdout
    assert "epoch 1/1: loss" in first and "test accuracy" in first
    before = _tree_digest(w)
    again = job(tmp_path, "--workdir", str(w), data=small_mnist).stdout
    assert f"{w} is already complete: 1 epoch(s), 20 steps, test accuracy" in again
    assert "python3 -m nox -s mnist -- " in again and "python examples/mnist.py " in again
    assert "--epochs 2" in again and f"delete {w}" in again
    assert "test accuracy" not in again.split("already complete")[0]
    assert _tree_digest(w) == before, "a run with nothing to do wrote files"
    further = job(tmp_path, "--workdir", str(w), "--epochs", "2", data=small_mnist).stdout
    assert "at step 20" in further and "epoch 2/2: loss" in further
    assert "(40 steps," in further


def test_missing_data_gives_both_commands_and_creates_nothing(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    out = job(tmp_path, "--data-dir", str(empty), "--no-download", data=None, check=False)
    assert out.returncode != 0
    text = out.stdout
    assert f"MNIST is not in {empty}" in text and "train-images-idx3-ubyte.gz" in text
    assert "python3 -m nox -s mnist -- --data-dir DIR" in text
    assert "python examples/mnist.py --data-dir DIR" in text
    assert "download=True" not in text
    assert not (tmp_path / "mnist_run").exists()


def test_failed_download_names_the_url(tmp_path):
    empty = tmp_path / "empty"
    # a proxy that refuses at once: the download fails fast and offline
    env = _env(https_proxy="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9")
    out = job(tmp_path, "--data-dir", str(empty), data=None, check=False, env=env)
    assert out.returncode != 0
    assert "https://storage.googleapis.com/cvdf-datasets/mnist/" in out.stdout
    assert "failed" in out.stdout and "--data-dir DIR" in out.stdout


def test_readme_sequence_keeps_the_two_models_apart(small_mnist, tmp_path):
    """`mnist`, then `mnist --epochs 2 --model cnn`: the CNN must not resume the MLP."""
    mlp = job(tmp_path, data=small_mnist).stdout
    assert "test accuracy" in mlp
    mlp_dir = tmp_path / "mnist_run" / "mlp"
    before = _tree_digest(mlp_dir)
    cnn = job(tmp_path, "--epochs", "2", "--model", "cnn", "--max-steps", "3",
              data=small_mnist).stdout
    assert "resumed from" not in cnn
    assert f"run directory {os.path.join('mnist_run', 'cnn')} (cnn, 2 epoch(s)" in cnn
    assert "(3 steps," in cnn
    assert _tree_digest(mlp_dir) == before, "the CNN run touched the MLP's run"
    record = json.loads((tmp_path / "mnist_run" / "cnn" / "run.json").read_text())
    assert record["config"]["model"] == "cnn"


def test_same_workdir_with_other_options_stops_and_touches_nothing(small_mnist, tmp_path):
    w = tmp_path / "w"
    job(tmp_path, "--workdir", str(w), "--max-steps", "3", data=small_mnist)
    before = _tree_digest(w)
    for args, why in ((["--model", "cnn"], "--model: the run has 'mlp', this command asks for "
                                           "'cnn'"),
                      (["--learning-rate", "0.01"], "--learning-rate: the run has 0.001")):
        out = job(tmp_path, "--workdir", str(w), *args, data=small_mnist, check=False)
        assert out.returncode != 0
        assert why in out.stdout and "--workdir NEW_DIR" in out.stdout, out.stdout
        assert "resumed from" not in out.stdout
    assert _tree_digest(w) == before


def test_checkpoint_of_another_model_is_not_restored(small_mnist, tmp_path):
    """Even with run.json edited to agree, restore checks every object of the model."""
    w = tmp_path / "w"
    job(tmp_path, "--workdir", str(w), "--max-steps", "3", data=small_mnist)
    record = json.loads((w / "run.json").read_text())
    record["config"]["model"] = "cnn"
    (w / "run.json").write_text(json.dumps(record))
    out = job(tmp_path, "--workdir", str(w), "--model", "cnn", data=small_mnist, check=False)
    assert out.returncode != 0
    assert "does not fit this job's cnn model" in out.stdout, out.stdout
    (w / "run.json").unlink()
    out = job(tmp_path, "--workdir", str(w), data=small_mnist, check=False)
    assert out.returncode != 0 and "no run.json" in out.stdout


def test_a_second_job_on_a_run_in_use_says_who_holds_it_and_the_ways_out(small_mnist, tmp_path):
    """Another process training in the run directory holds its checkpoint manager's lock:
    the job says which process, since when, and what to do (no traceback), and touches
    nothing; once that run is over, the same command resumes."""
    import socket

    from ember import checkpoint

    w = tmp_path / "w"
    job(tmp_path, "--workdir", str(w), "--max-steps", "3", data=small_mnist)
    before = _tree_digest(w)
    minutes = [time.strftime("%Y-%m-%d %H:%M", time.localtime())]
    holder = checkpoint.CheckpointManager(checkpoint.Checkpoint(), str(w / "ckpt"), 3)
    minutes.append(time.strftime("%Y-%m-%d %H:%M", time.localtime()))
    try:
        out = job(tmp_path, "--workdir", str(w), data=small_mnist, check=False)
    finally:
        holder.close()
    text = out.stdout
    assert out.returncode != 0, text
    assert "Traceback" not in text and "CheckpointLockedError" not in text, text
    who = f"{w} is in use by another run: process {os.getpid()} on host {socket.gethostname()}"
    assert any(f"{who} (since {m}:" in text for m in minutes), text
    assert "Wait for that run to finish" in text and "--workdir NEW_DIR" in text, text
    assert _tree_digest(w) == before, "the refused job wrote files"
    again = job(tmp_path, "--workdir", str(w), data=small_mnist).stdout
    assert "resumed from" in again and "at step 3" in again, again


def test_old_model_name_still_works(small_mnist, tmp_path):
    out = job(tmp_path, "--model", "seed-linear", "--max-steps", "2", data=small_mnist).stdout
    assert "(linear," in out
    assert json.loads((tmp_path / "mnist_run" / "linear" / "run.json").read_text()
                      )["config"]["model"] == "linear"


def _on_a_terminal(cwd: pathlib.Path, args: list[str], env: dict[str, str]) -> tuple[str, float]:
    """Run the job with a pseudo-terminal as stdout and stderr, as a user's shell would."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # 100 columns
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(SCRIPT), *args], cwd=cwd, stdout=slave,
                            stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=600)
    os.close(master)
    assert proc.returncode == 0, b"".join(chunks).decode(errors="replace")
    return b"".join(chunks).decode(errors="replace"), time.perf_counter() - t0


def test_progress_is_throttled_and_plain_when_not_a_terminal(small_mnist, tmp_path):
    args = ["--data-dir", small_mnist, "--no-verify", "--epochs", "3"]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    text, seconds = _on_a_terminal(tmp_path / "a", args, _env())
    redraws = len(re.findall("\r(?!\n)", text))  # the terminal turns \n into \r\n
    assert redraws >= 1, "no progress bar on a terminal"
    # tqdm's mininterval is 0.5 s: at most ~2 redraws a second, never one per step (60
    # steps); each line written above the bar (3 epoch lines, an estimate) redraws it twice
    assert redraws <= 2 * seconds + 16, (redraws, seconds)
    ci, _ = _on_a_terminal(tmp_path / "b", args, _env(CI="true"))
    assert not re.search("\r(?!\n)", ci) and "epoch 3/3: loss" in ci
    piped = job(tmp_path / "b", "--workdir", "other", "--epochs", "3", data=small_mnist)
    assert "\r" not in piped.stdout and len(piped.stdout.splitlines()) < 20


def test_a_slow_model_gets_an_estimate(small_mnist, tmp_path):
    # 60,000 steps of 1 an epoch: the CNN would need over 1,000 steps/s to finish one in a
    # minute, far past any CPU, so the estimate is always due. (The test once gated the
    # check on its own timing of the first 12 steps, which counts the model's build: on a
    # fast CI machine it expected an estimate in minutes where the job rightly said 86 s.)
    big = tmp_path / "big"
    big.mkdir()
    labels = np.arange(60000) % 10
    images = np.zeros((60000, 28, 28), np.uint8)
    images[np.arange(60000), labels * 2 + 4, :] = 255
    for split, n in (("train", 60000), ("t10k", 100)):
        _write_idx(big / f"{split}-images-idx3-ubyte.gz", images[:n])
        _write_idx(big / f"{split}-labels-idx1-ubyte.gz", labels[:n])
    out = job(tmp_path, "--model", "cnn", "--batch-size", "1", "--max-steps", "12",
              data=str(big)).stdout
    found = re.search(r"estimate: ([\d.]+) steps/s on this machine, about ([\d.]+) (min|h) per "
                      r"epoch", out)
    assert found, out
    rate, amount, unit = float(found[1]), float(found[2]), found[3]
    per_epoch = amount * (60 if unit == "min" else 3600)
    assert abs(per_epoch - 60000 / rate) <= 0.05 * per_epoch + (30 if unit == "min" else 180), out
    mlp = job(tmp_path, "--workdir", "m", data=small_mnist).stdout
    assert "estimate:" not in mlp


def _progress(monkeypatch, capsys, seconds: list[float], per_epoch: int = 1875) -> str:
    """What the job's progress prints (lines: not a terminal) for steps taking ``seconds``
    each on a fake clock, the first ``per_epoch`` steps of a run."""
    monkeypatch.syspath_prepend(str(ROOT / "examples"))
    monkeypatch.delenv("CI", raising=False)
    import mnist

    now = [1000.0]
    bar = mnist.Progress(per_epoch, 0, per_epoch, quiet=False, clock=lambda: now[0])
    for step, took in enumerate(seconds, 1):
        now[0] += took
        bar.step(step, lambda: 2.3)
    bar.close()
    return capsys.readouterr().out


def test_the_estimate_does_not_time_the_warm_up(monkeypatch, capsys):
    """On the H200 an 11 s epoch was estimated at 2.8 h: the first steps, timed, built the
    model, traced the step and compiled its kernels. 1,875 steps of 5 ms after three of
    5 s: under a minute an epoch, so no estimate at all."""
    out = _progress(monkeypatch, capsys, [20.0, 5.0, 5.0, 5.0] + [0.005] * 400)
    assert "estimate" not in out, out
    for rate in re.findall(r"([\d.]+) steps/s", out):  # the progress lines' rates too
        assert float(rate) > 150, out


def test_a_slow_step_is_estimated_from_its_steady_rate(monkeypatch, capsys):
    out = _progress(monkeypatch, capsys, [30.0, 8.0, 8.0, 8.0] + [0.5] * 30)
    found = re.search(r"estimate: ([\d.]+) steps/s on this machine, about 16 min per epoch", out)
    assert found and float(found[1]) == 2.0, out
    assert "revised" not in out, out


def test_a_longer_warm_up_is_revised(monkeypatch, capsys):
    """Kernels still compiling in the steps first timed: the estimate says so once those
    steps are outnumbered four to one."""
    out = _progress(monkeypatch, capsys, [20.0] + [4.0] * 6 + [0.005] * 400)
    first = re.search(r"estimate: [\d.]+ steps/s on this machine, about [\d.]+ (min|h) per", out)
    assert first, out
    revised = re.search(r"estimate revised: ([\d.]+) steps/s over the last (\d+) steps, "
                        r"about (\d+) s per epoch", out)
    assert revised and float(revised[1]) == 200.0 and int(revised[3]) == 9, out
    assert out.count("estimate") == 2, out


def _mpiexec() -> str | None:
    import importlib.util
    import shutil

    if importlib.util.find_spec("mpi4py") is None:
        return None
    return shutil.which("mpiexec", path=os.pathsep.join(
        [str(pathlib.Path(sys.executable).parent), os.environ.get("PATH", "")]))


needs_mpi = pytest.mark.skipif(_mpiexec() is None,
                               reason="needs mpi4py and mpiexec (nox -s distributed has them)")


@needs_mpi
def test_distributed_two_ranks_train_like_one_process_and_resume(tmp_path, small_mnist):
    """mpiexec -n 2 ... --distributed: each rank takes half of each global batch, so the
    weights equal one process on the whole batch; only rank 0 writes; a later run resumes."""
    common = ["--no-progress", "--batch-size", "32", "--seed", "3"]
    job(tmp_path, "--workdir", "one", *common, "--save-weights", "one.npz", data=small_mnist)
    cmd = [_mpiexec(), "-n", "2", sys.executable, str(SCRIPT), "--distributed", "--workdir",
           "two", *common, "--data-dir", small_mnist, "--no-verify"]
    first = subprocess.run([*cmd, "--max-steps", "10"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=600, env=_env())
    assert first.returncode == 0, first.stderr
    assert first.stdout.count("run directory two (mlp, 1 epoch(s) of 20 steps, 2 ranks)") == 1
    second = subprocess.run([*cmd, "--save-weights", "two.npz"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=600, env=_env())
    assert second.returncode == 0, second.stderr
    assert second.stdout.count("resumed from") == 1 and "at step 10" in second.stdout
    one, two = np.load(tmp_path / "one.npz"), np.load(tmp_path / "two.npz")
    assert sorted(one.files) == sorted(two.files)
    for k in one.files:
        np.testing.assert_allclose(two[k], one[k], rtol=1e-4, atol=1e-5, err_msg=k)
    assert len(list((tmp_path / "two" / "logs").iterdir())) == 2  # the chief's, one per run
    assert json.loads((tmp_path / "two" / "run.json").read_text())["last"]["step"] == 20


def test_the_job_runs_on_a_strict_simulated_gpu(small_mnist, tmp_path, monkeypatch, capsys):
    """--device /gpu:0 on ember's cupy-like double: an implicit host conversion anywhere in
    the job (model, optimizer, metrics, checkpoints, summaries) would raise, as on cupy."""
    from ember.core import testing

    monkeypatch.syspath_prepend(str(ROOT / "examples"))
    import mnist

    with testing.simulated_gpus(1, strict=True) as (gpu,):
        mnist.main(["--device", "/gpu:0", "--data-dir", small_mnist, "--no-verify",
                    "--workdir", str(tmp_path / "run"), "--no-progress"])
        counters = gpu.backend.counters.snapshot()
    out = capsys.readouterr().out
    accuracy = float(re.search(r"test accuracy ([\d.]+)", out).group(1))
    assert accuracy > 0.9, out
    assert counters["from_host"] > 0  # the batches did go to the (simulated) GPU
    # No GPU read every step (it was three a step: the global step, read by the summary
    # policy and the loop, lived on the GPU, and the bar read the loss): what is left is the
    # epoch line, the checkpoint (one copy per saved value) and the test accuracy.
    steps = N_TRAIN // 32
    assert counters["syncs"] <= steps, counters
