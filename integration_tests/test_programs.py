"""Programs nobody on the team wrote, ported from TensorFlow and Keras with names changed.

Each file in ``programs/`` names its upstream source in its header. It runs top to bottom
in a reduced configuration (set ``EMBER_PROGRAMS_FULL=1`` for upstream sizes where the
program offers them) and asserts something that can fail. A program that needs a feature
being built right now is marked ``xfail(strict=True)`` with the feature it waits for, so
the mark must come off the moment the feature works.

Every program runs on each test backend (``EMBER_TEST_BACKENDS``, default ``cpu`` and the
strict cupy-like GPU double ``strict-gpu``): the runner makes that backend's device the
default one, as a GPU is on a machine that has one, so an implicit host conversion anywhere
in a program raises as it would on cupy. The slowest programs have a short version
(``EMBER_PROGRAMS_SHORT=1``: fewer examples and epochs, no threshold on what training
reached) that the GPU backends run; the CPU run keeps the thresholds.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from ember.core.testing import backends_to_test, gpu_skip_reason

PROGRAMS = pathlib.Path(__file__).parent / "programs"
# the real MNIST, where the workspace keeps it beside the checkout (never in the repository)
SHARED_MNIST = pathlib.Path(__file__).resolve().parents[2] / "shared" / "datasets" / "mnist"

# program file -> the ember feature it waits for (strict: an unexpected pass fails the run)
WAITING: dict[str, str] = {
}


# full-size programs: run by `nox -s slow`, not in the default CI run
SLOW = {"resnet50_eager.py"}  # ResNet50 at 224x224: ~7 s of CPU, ~30 s on a busy machine


def _params() -> list:
    params = []
    for path in sorted(PROGRAMS.glob("*.py")):
        marks = [pytest.mark.slow] if path.name in SLOW else []
        if path.name in WAITING:
            marks.append(pytest.mark.xfail(strict=True, reason=WAITING[path.name]))
        params.append(pytest.param(path, id=path.stem, marks=marks))
    return params


def test_there_are_at_least_15_programs():
    assert len(list(PROGRAMS.glob("*.py"))) >= 15


def test_every_program_names_its_upstream_source():
    for path in PROGRAMS.glob("*.py"):
        head = path.read_text().split('"""')[1]
        assert "Upstream:" in head and "Changed:" in head, path.name


# Each program runs in its own interpreter, as a user runs it: no state (seeds, default
# writers, devices, global step) leaks from one program into the next. A program skips by
# raising unittest.SkipTest (only when its data files are absent); the runner reports that.
# On the strict double the runner prints the device's transfer counters last, so the test
# can check the program did compute on that device.
_RUNNER = (
    "import runpy, sys, unittest\n"
    "import ember.core as em\n"
    "from ember.core.testing import backend_scope\n"
    "try:\n"
    "    with backend_scope(sys.argv[2]) as dev:\n"
    "        runpy.run_path(sys.argv[1], run_name='__main__')\n"
    "        counters = getattr(em.get_device(dev).backend, 'counters', None)\n"
    "except unittest.SkipTest as e:\n"
    "    print('SKIP:', e)\n"
    "    sys.exit(77)\n"
    "if counters is not None:\n"
    "    print('EMBER_COUNTERS', counters.from_host)\n"
)


@pytest.mark.parametrize("backend", backends_to_test())
@pytest.mark.parametrize("program", _params())
def test_program_runs_and_its_assertions_hold(program, backend, tmp_path):
    if backend == "gpu" and gpu_skip_reason():
        pytest.skip(gpu_skip_reason() or "no GPU")
    env = dict(os.environ, TQDM_DISABLE="1")
    if backend != "cpu":  # the CPU run checks what training reaches; a GPU run, the code paths
        env["EMBER_PROGRAMS_SHORT"] = "1"
    if "EMBER_DATA" not in env and SHARED_MNIST.is_dir():
        env["EMBER_DATA"] = str(SHARED_MNIST)
    proc = subprocess.run([sys.executable, "-c", _RUNNER, str(program), backend], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode == 77:
        pytest.skip(proc.stdout.strip().splitlines()[-1])
    assert proc.returncode == 0, (
        f"{program.name} on {backend} exited with {proc.returncode}\n--- stdout (tail) ---\n"
        f"{proc.stdout[-3000:]}\n--- stderr (tail) ---\n{proc.stderr[-6000:]}")
    if backend == "strict-gpu":  # the program's tensors did go to the (simulated) GPU
        uploads = int(proc.stdout.strip().splitlines()[-1].split()[-1])
        assert uploads > 0, proc.stdout[-3000:]
