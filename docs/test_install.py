"""The install commands of guide/installing.md, run as written (pip as a dry run).

The page's bash blocks run in one shell, in a temporary folder, with ``$REPO`` set to this
repository (``file://``). ``python3 -m pip install ...`` becomes a ``--dry-run --no-deps``
install (it builds each package's metadata, so a wrong path, extra or URL fails), and
``python3 -m nox -s build`` becomes the same hatchling wheel build without nox.
"""

from __future__ import annotations

import importlib.util
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

DOCS = pathlib.Path(__file__).parent
ROOT = DOCS.parent
PAGE = DOCS / "guide" / "installing.md"
BASH = re.compile(r"^```bash\n(.*?)^```", re.S | re.M)

SHIM = r"""
set -euo pipefail
python3() {
  if [ "$1 $2 $3" = "-m pip install" ]; then
    shift 3
    "$PY" -m pip install --dry-run --no-deps --no-build-isolation --no-index "$@"
  elif [ "$*" = "-m nox -s build" ]; then
    "$PY" -m pip wheel --no-deps --no-build-isolation --no-index -q -w dist ./packages/*
  else
    echo "the docs run a command this test does not know: python3 $*" >&2
    return 1
  fi
}
"""


def test_the_page_shows_all_three_ways():
    text = PAGE.read_text()
    assert "pip install ./packages/core" in text
    assert "nox -s build" in text and "dist/ember_core-*.whl" in text
    assert "git+$REPO#subdirectory=packages/core" in text


def test_install_commands_work_as_written(tmp_path):
    for module in ("pip", "hatchling"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"needs {module} (nox -s docs installs it)")
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and this repository's .git (a clone of ember)")
    script = SHIM + "\n".join(BASH.findall(PAGE.read_text()))
    out = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                              "PY": sys.executable, "REPO": ROOT.resolve().as_uri()},
                         timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    would = re.findall(r"^Would install (.*)$", out.stdout, re.M)
    # clone: core, tape, nn; core[cuda13]; core[cuda12]; two wheels; the git URL
    assert would == ["ember-core-0.1.0 ember-nn-0.1.0 ember-tape-0.1.0", "ember-core-0.1.0",
                     "ember-core-0.1.0", "ember-checkpoint-0.1.0 ember-core-0.1.0",
                     "ember-core-0.1.0"], out.stdout
    assert "does not provide the extra" not in out.stdout + out.stderr


def test_the_gpu_extras_pair_cupy_and_nvmath_by_cuda_major_version():
    """cupy's wheels and nvmath-python's CUDA libraries are split by CUDA major version: each
    extra the page names brings the matching pair, [gpu] is [cuda13], ember-all forwards them."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    core = tomllib.loads((ROOT / "packages" / "core" / "pyproject.toml").read_text())
    extras = core["project"]["optional-dependencies"]
    for major in ("12", "13"):
        assert sorted(r.split(">=")[0] for r in extras[f"cuda{major}"]) == [
            f"cupy-cuda{major}x", f"nvmath-python[cu{major}]"]
    assert extras["gpu"] == extras["cuda13"]
    every = tomllib.loads((ROOT / "packages" / "all" / "pyproject.toml").read_text())
    forwarded = every["project"]["optional-dependencies"]
    for name in ("gpu", "cuda12", "cuda13"):
        assert forwarded[name] == [f"ember-core[{name}]==0.1.0"]
        assert f"[{name}]" in PAGE.read_text()
