"""The bookkeeping of ``examples/mnist.py``: its run directory and the messages it prints.

Kept apart so that ``mnist.py`` reads as the training program it is.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import os
import shlex
import shutil
import sys
import tempfile
from typing import Any

from ember import checkpoint
from ember.data.datasets.mnist import BASE_URL, FILES, default_data_dir

DISTRIBUTIONS = ("ember-core", "ember-tape", "ember-nn", "ember-checkpoint", "ember-summary",
                 "ember-data")


def commands(argv: list[str]) -> str:
    """The two ways to run the job with ``argv``: through nox and straight with Python."""
    a = " ".join(shlex.quote(x) for x in argv)
    return (f"  python3 -m nox -s mnist -- {a}\n"
            f"  python examples/mnist.py {a}")


def with_option(argv: list[str], option: str, value: str | None) -> list[str]:
    """``argv`` with ``option`` set to ``value`` (``--opt V`` or ``--opt=V``), or removed."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == option:
            skip = True
        elif not arg.startswith(option + "="):
            out.append(arg)
    return out if value is None else [*out, option, value]


def _versions() -> dict[str, str]:
    out = {}
    for dist in DISTRIBUTIONS:
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


class RunDir:
    """``run.json`` in a run directory: the model and options its checkpoints belong to.

    A run directory holds one run. Its checkpoints are resumed only by the same model and
    options (``config``); anything else stops with a message that says which option differs
    and how to start a separate run, before a single file there is touched.
    """

    def __init__(self, workdir: str, config: dict[str, Any]) -> None:
        self.workdir = workdir
        self.path = os.path.join(workdir, "run.json")
        self.config = config
        self.record: dict[str, Any] = {}

    def check(self) -> None:
        ckpt_dir = os.path.join(self.workdir, "ckpt")
        if not os.path.exists(self.path):
            if checkpoint.latest_checkpoint(ckpt_dir) is not None:
                sys.exit(f"{self.workdir} holds checkpoints but no run.json (written by an older "
                         "version?), so which model and options they belong to is unknown and "
                         f"they will not be resumed. Pass --workdir NEW_DIR for a new run, or "
                         f"delete {self.workdir} to start over.")
            return
        try:
            with open(self.path, encoding="utf-8") as f:
                self.record = json.load(f)
            recorded = self.record["config"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            sys.exit(f"{self.path} is unreadable ({e!r}). Pass --workdir NEW_DIR for a new run, "
                     f"or delete {self.workdir} to start over.")
        diffs = [f"  --{k.replace('_', '-')}: the run has {recorded.get(k)!r}, this command "
                 f"asks for {v!r}" for k, v in self.config.items() if recorded.get(k) != v]
        if diffs:
            sys.exit(f"{self.workdir} holds a run with other options, so its checkpoints will "
                     "not be resumed (nor its TensorBoard logs written to):\n" + "\n".join(diffs)
                     + "\nRepeat the run's options to resume it, pass --workdir NEW_DIR to start"
                     f" a separate run (TensorBoard shows runs side by side), or delete "
                     f"{self.workdir} to start over.")
        then, now = self.record.get("ember", {}), _versions()
        if then != now:
            print(f"note: {self.workdir} was recorded with {then}, this is {now}")

    def write(self, **extra: Any) -> None:
        """Write ``run.json`` atomically (temporary file, then rename)."""
        if not self.record:
            self.record = {"job": "examples/mnist.py", "config": self.config,
                           "ember": _versions(),
                           "created": datetime.datetime.now(datetime.timezone.utc).isoformat()}
        self.record.update(extra)
        os.makedirs(self.workdir, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.workdir, prefix=".run.json-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(self.record, f, indent=2)
                f.write("\n")
            os.replace(tmp, self.path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)


def run_in_use(workdir: str, ckpt_dir: str, error: Exception) -> str:
    """What to do when another process's job holds ``workdir``: who holds it, since when,
    and the ways out. The holder is read from the checkpoint manager's lock file, which
    records its pid, host and start time (see ``CheckpointManager``)."""
    lock = os.path.join(ckpt_dir, ".ember-checkpoint.lock")
    try:
        with open(lock, encoding="utf-8") as f:
            info = json.load(f)
        since = datetime.datetime.fromtimestamp(float(info["time"])).strftime("%Y-%m-%d %H:%M:%S")
        holder = f"process {int(info['pid'])} on host {info['host']} (since {since})"
    except (OSError, ValueError, KeyError, TypeError):
        holder = f"another process ({error})"
    return (f"{workdir} is in use by another run: {holder} holds its checkpoints ({lock}).\n"
            f"Two runs in one directory would overwrite each other's checkpoints. Wait for that "
            f"run to finish (or stop it), then run this command again to go on from its last "
            f"checkpoint; or pass --workdir NEW_DIR to start a separate run.")


def tensorboard_command(workdir: str, default_root: str) -> str:
    """A ``tensorboard --logdir`` command that works from here."""
    parent = os.path.dirname(os.path.normpath(workdir))
    logdir = default_root if os.path.normpath(parent) == os.path.normpath(default_root) else workdir
    beside = os.path.join(os.path.dirname(sys.executable), "tensorboard")
    # under nox, PATH holds the session's environment, but the user's shell will not
    under_nox = bool(os.environ.get("NOX_CURRENT_SESSION"))
    if os.path.exists(beside) and (under_nox or not shutil.which("tensorboard")):
        return f"{shlex.quote(os.path.relpath(beside))} --logdir {shlex.quote(logdir)}"
    if shutil.which("tensorboard"):
        return f"tensorboard --logdir {shlex.quote(logdir)}"
    return f"python3 -m pip install tensorboard && tensorboard --logdir {shlex.quote(logdir)}"


def missing_files(data_dir: str | None) -> tuple[str, list[str]]:
    """The folder MNIST is looked for in, and the files missing there."""
    folder = os.fspath(data_dir) if data_dir is not None else default_data_dir()
    missing = [n + ".gz" for names in FILES.values() for n in names
               if not os.path.exists(os.path.join(folder, n + ".gz"))
               and not os.path.exists(os.path.join(folder, n))]
    return folder, missing


def missing_mnist(data_dir: str | None, download: bool, error: Exception) -> str:
    """What to do when MNIST is not there: the URL tried, the folder, the commands."""
    folder, missing = missing_files(data_dir)
    if not missing:  # the files are there; something else failed
        return f"reading MNIST from {folder} failed: {error}"
    tried = (f"Downloading them from {BASE_URL} (e.g. {BASE_URL}{missing[0]}) failed: {error}"
             if download else "Not downloaded: --no-download was given.")
    retry = ("Each run tries the download again (--no-download turns that off)." if download
             else "To try the download, run without --no-download.")
    names = "\n".join(f"  {n}.gz" for names in FILES.values() for n in names)
    return (f"MNIST is not in {folder} (missing: {', '.join(missing)}).\n{tried}\n"
            f"Put the four files\n{names}\n(each .gz, or decompressed) in a folder DIR and run "
            f"one of\n{commands(['--data-dir', 'DIR'])}\n"
            f"or set EMBER_DATA=DIR. {retry}")
