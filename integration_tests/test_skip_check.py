"""The check behind `nox -s skips`: a test module that skips entirely in every CI session
(or that no session collects) fails the run (tools/check_skips.py, tools/ember_skip_record.py)."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools"


def _load_check():
    spec = importlib.util.spec_from_file_location("check_skips", TOOLS / "check_skips.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


check = _load_check()


def _rec(session, **modules):
    return {"session": session, "modules": {
        m.replace("__", "/") + ".py": dict(zip(("ran", "skipped", "deselected"), c))
        for m, c in modules.items()}}


def test_a_module_that_runs_in_one_session_passes_and_one_skipped_everywhere_fails():
    mods = ["t/test_a.py", "t/test_b.py", "t/test_c.py", "t/test_slow.py"]
    records = [_rec("tests-x", t__test_a=(3, 0, 0), t__test_b=(0, 2, 0), t__test_slow=(0, 0, 4)),
               _rec("integration", t__test_a=(0, 1, 0), t__test_b=(0, 5, 0))]
    fails, notes = check.problems(mods, records, only_outside_ci={})
    assert fails == [
        "t/test_b.py: skips entirely in every CI session that collects it (integration, tests-x)",
        "t/test_c.py: no CI session collects it"]
    assert notes == ["t/test_slow.py: every test is marked slow (runs in `nox -s slow`)"]


def test_a_module_allowed_outside_ci_is_only_noted():
    fails, notes = check.problems(["t/test_gpu.py"], [_rec("s", t__test_gpu=(0, 3, 0))],
                                  only_outside_ci={"t/test_gpu.py": "needs a real GPU"})
    assert fails == [] and notes == ["t/test_gpu.py: runs outside CI only (needs a real GPU)"]


def test_the_plugin_records_module_level_and_per_test_skips(tmp_path):
    (tmp_path / "test_runs.py").write_text(
        "import pytest\n\ndef test_ok():\n    pass\n\n"
        "@pytest.mark.skip(reason='x')\ndef test_skipped():\n    pass\n")
    (tmp_path / "test_module_skip.py").write_text(
        "import pytest\npytest.importorskip('no_such_module_anywhere')\n\n"
        "def test_never():\n    pass\n")
    (tmp_path / "test_all_skipped.py").write_text(
        "import pytest\n\ndef test_a():\n    pytest.skip('no')\n\n"
        "@pytest.mark.parametrize('i', [1, 2])\ndef test_b(i):\n    pytest.skip('no')\n")
    (tmp_path / "test_deselected.py").write_text(
        "import pytest\n\n@pytest.mark.slow\ndef test_s():\n    pass\n")
    record = tmp_path / "rec" / "tests-x-0.json"
    env = dict(os.environ, EMBER_SKIP_RECORD=str(record), EMBER_SKIP_SESSION="tests-x",
               PYTHONPATH=os.pathsep.join([str(TOOLS), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
         "ember_skip_record", "-m", "not slow", "-o", "markers=slow", str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = json.loads(record.read_text())
    assert got["session"] == "tests-x"
    assert got["modules"] == {
        "test_all_skipped.py": {"ran": 0, "skipped": 3, "deselected": 0},
        "test_deselected.py": {"ran": 0, "skipped": 0, "deselected": 1},
        "test_module_skip.py": {"ran": 0, "skipped": 1, "deselected": 0},
        "test_runs.py": {"ran": 1, "skipped": 1, "deselected": 0},
    }
    fails, _ = check.problems(sorted(got["modules"]), [got], only_outside_ci={})
    assert [f.split(":")[0] for f in fails] == ["test_all_skipped.py", "test_module_skip.py"]


def test_every_module_on_disk_is_found():
    mods = check.test_modules()
    assert "integration_tests/test_skip_check.py" in mods
    assert "packages/core/tests/test_tensor.py" in mods
    assert any(m.startswith("docs/") for m in mods)
