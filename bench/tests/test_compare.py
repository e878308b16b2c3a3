"""bench/compare.py: HEAD against HEAD flags nothing, an injected slowdown is flagged, and each
side's process imports ember from its own tree only (or fails saying which module did not).

Most tests run compare.py inside a throwaway git repository whose ``ember.core`` is a few
lines: fast, and a leak of the venv's (editable) ember would show at once, as an
AttributeError or as a slowdown that lands on both sides and is not flagged.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import types

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[1]
ROOT = BENCH.parent
_spec = importlib.util.spec_from_file_location("ember_bench_compare", BENCH / "compare.py")
assert _spec is not None and _spec.loader is not None
compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare)

CORE = '''

def steady():
    return sum(range(3000))

def work():
    {body}
    return sum(range(3000))
'''
TINY = '''
from _harness import compare
import ember.core as core

def figures():
    return compare({"{name}": core.{name}}, number=50, rounds=3)
'''
TINY_MAIN = '''
from _harness import compare, table, write
import ember.core as core

def main():
    times = compare({"ember work": core.work, "python sum": lambda: sum(range(3000))},
                    number=50, rounds=3)
    write("tinymain", table("work on the fake core", times, "python sum"))
'''
NEEDS_TAPE = '''
import ember.tape

def figures():
    return {"never": 1.0}
'''


def _git(repo: pathlib.Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: pathlib.Path) -> pathlib.Path:
    """A git repository with compare.py, _harness.py, a fake ember.core and benchmarks."""
    r = tmp_path / "repo"
    (r / "bench").mkdir(parents=True)
    for f in ("compare.py", "_harness.py"):
        shutil.copy(BENCH / f, r / "bench" / f)
    # two benchmarks, so that the slowed one's process does not share a machine's
    # scheduling with the untouched one (a busy process is preempted more)
    (r / "bench" / "tiny.py").write_text(TINY.replace("{name}", "work"))
    (r / "bench" / "steady.py").write_text(TINY.replace("{name}", "steady"))
    (r / "bench" / "bench_tinymain.py").write_text(TINY_MAIN)
    (r / "bench" / "needs_tape.py").write_text(NEEDS_TAPE)
    core = r / "packages" / "core" / "src" / "ember" / "core"
    core.mkdir(parents=True)
    (core / "__init__.py").write_text(CORE.format(body="pass"))
    _git(r, "init", "-q")
    _git(r, "add", ".")
    _git(r, "commit", "-q", "-m", "fake ember")
    return r


def _run(script: pathlib.Path, *args: str, env: dict[str, str] | None = None,
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300)


def _rows(out: str) -> dict[tuple[str, str], list[str]]:
    """The table's data rows, by (benchmark, figure): the remaining five cells."""
    lines = [ln for ln in out.splitlines() if ln.startswith("| ")]
    assert lines[0] == ("| benchmark | figure | REF | working tree | working tree / REF | "
                        "spread | moved |"), out
    rows = {}
    for ln in lines[1:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        assert len(cells) == 7, ln
        rows[(cells[0], cells[1])] = cells[2:]
    return rows


def _worktrees(repo: pathlib.Path) -> set[str]:
    listed = _git(repo, "worktree", "list", "--porcelain").splitlines()
    return {ln.split(" ", 1)[1] for ln in listed if ln.startswith("worktree ")}


def _no_worktree_left(repo: pathlib.Path) -> None:
    assert _worktrees(repo) == {str(repo)}


def test_head_against_head_flags_nothing_on_two_tiny_benchmarks():
    """The real repository, the real ember: same code on both sides, nothing moves."""
    head = _git(ROOT, "rev-parse", "--short=9", "HEAD")
    before = _worktrees(ROOT)  # (a developer's own worktrees stay)
    done = _run(BENCH / "compare.py", "HEAD", str(BENCH / "tests" / "tiny_add.py"),
                str(BENCH / "tests" / "tiny_loop.py"), "--rounds", "5",
                env={"OPENBLAS_CORETYPE": "Haswell"})
    assert done.returncode == 0, done.stderr
    rows = _rows(done.stdout)
    assert set(rows) == {(str(BENCH / "tests" / "tiny_add.py"), "em.add"),
                         (str(BENCH / "tests" / "tiny_add.py"), "np.add"),
                         (str(BENCH / "tests" / "tiny_loop.py"), "sum(range(1000))")}, rows
    for ref, work, ratio, spread, moved in rows.values():
        assert re.fullmatch(r"[\d.]+ (ns|us|ms|s)", ref) and re.fullmatch(r"[\d.]+ (ns|us|ms|s)", work)
        assert re.fullmatch(r"\d+\.\d\dx", ratio) and re.fullmatch(r"\d+%", spread)
        assert moved == "", done.stdout  # identical code: no figure moved beyond its spread
    assert f"REF HEAD ({head})" in done.stdout
    # each side's ember.core came from its own tree: the working tree's, and REF's worktree
    assert f"working tree: ember.core from {ROOT / 'packages' / 'core' / 'src'}" in done.stdout
    assert re.search(r"- REF: ember\.core from \S*ember-compare-\S*/ref/packages/core/src/",
                     done.stdout), done.stdout
    assert "OPENBLAS_CORETYPE=Haswell is set here" in done.stderr
    assert re.search(r"BLAS: (threadpoolctl not installed|openblas )", done.stdout)
    assert _worktrees(ROOT) <= before


def test_a_slowdown_injected_in_the_working_tree_is_flagged(repo):
    core = repo / "packages" / "core" / "src" / "ember" / "core" / "__init__.py"
    core.write_text(CORE.format(body="sum(range(100000))"))  # uncommitted: not in REF
    out = repo / "compare.json"
    done = _run(repo / "bench" / "compare.py", "HEAD", "tiny", "steady", "--rounds", "5",
                "--json", str(out))
    assert done.returncode == 0, done.stderr
    rows = _rows(done.stdout)
    ref, work, ratio, spread, moved = rows[("tiny", "work")]
    assert moved == "**slower**" and float(ratio[:-1]) > 3, done.stdout
    assert rows[("steady", "steady")][4] == "", done.stdout  # the untouched one is not flagged
    _no_worktree_left(repo)
    # the JSON holds what the table shows (what plot_compare.py draws)
    saved = {(r["benchmark"], r["figure"]): r for r in json.loads(out.read_text())["rows"]}
    assert set(saved) == set(rows)
    assert saved[("tiny", "work")]["flag"] == "slower"
    assert f"{saved['tiny', 'work']['ratio']:.2f}x" == ratio
    assert saved[("tiny", "work")]["rounds"] == 5


def test_a_speedup_is_flagged_as_faster(repo):
    core = repo / "packages" / "core" / "src" / "ember" / "core" / "__init__.py"
    core.write_text(CORE.format(body="sum(range(100000))"))
    _git(repo, "commit", "-q", "-am", "slow")  # REF (HEAD) is slow, the working tree is not
    core.write_text(CORE.format(body="pass"))
    done = _run(repo / "bench" / "compare.py", "HEAD", "tiny", "--rounds", "3")
    assert done.returncode == 0, done.stderr
    ref, work, ratio, spread, moved = _rows(done.stdout)[("tiny", "work")]
    assert moved == "**faster**" and float(ratio[:-1]) < 0.3, done.stdout


def test_a_package_only_the_venv_has_fails_loudly_and_the_worktree_goes(repo):
    """ember.tape is not in the fake repository; the venv's editable install has it, and
    would serve it to both sides without the import hook."""
    assert importlib.util.find_spec("ember.tape") is not None  # the trap is there
    done = _run(repo / "bench" / "compare.py", "HEAD", "needs_tape", "--rounds", "3")
    assert done.returncode == 1
    assert f"ember.tape is not in {repo}" in done.stderr, done.stderr
    assert "| needs_tape | (failed: working tree, see above) |" in done.stdout, done.stdout
    _no_worktree_left(repo)


def test_a_main_style_benchmark_gives_its_compare_calls_and_writes_nothing(repo):
    done = _run(repo / "bench" / "compare.py", "HEAD", "tinymain", "--rounds", "3")
    assert done.returncode == 0, done.stderr
    assert set(_rows(done.stdout)) == {("tinymain", "work on the fake core: ember work"),
                                       ("tinymain", "work on the fake core: python sum")}
    assert not (repo / "bench" / "results").exists()
    assert "| benchmark |" not in done.stderr  # ... and it wrote no table anywhere


def test_bad_arguments_are_refused_by_name(repo):
    done = _run(repo / "bench" / "compare.py", "no-such-ref", "tiny")
    assert done.returncode == 2 and "REF 'no-such-ref' is not a commit" in done.stderr
    done = _run(repo / "bench" / "compare.py", "HEAD", "tiny", "--rounds", "2")
    assert done.returncode == 2 and "--rounds must be at least 3" in done.stderr
    done = _run(repo / "bench" / "compare.py", "HEAD", "nonexistent")
    assert done.returncode == 1 and "no benchmark 'nonexistent'" in done.stderr
    assert "tiny" in done.stderr  # the benchmarks there are listed
    _no_worktree_left(repo)


def test_foreign_modules_names_each_ember_module_from_elsewhere(tmp_path):
    own = tmp_path / "tree" / "packages" / "core" / "src" / "ember" / "core"
    own.mkdir(parents=True)
    mine = types.ModuleType("ember.core")
    mine.__file__ = str(own / "__init__.py")
    stray = types.ModuleType("ember.tape")
    stray.__file__ = str(tmp_path / "other" / "packages" / "tape" / "src" / "ember" / "tape" / "x.py")
    ns = types.ModuleType("ember")
    ns.__path__ = [str(own.parent), str(tmp_path / "other" / "packages" / "tape" / "src" / "ember")]
    mods = {"ember.core": mine, "ember.tape": stray, "ember": ns, "numpy": types}
    assert compare.foreign_modules(tmp_path / "tree", mods) == [
        f"ember: {ns.__path__[1]}", f"ember.tape: {stray.__file__}"]
    assert compare.foreign_modules(tmp_path / "tree", {"ember.core": mine}) == []


def test_benchmark_processes_unset_the_pinned_kernels_and_see_only_their_tree(tmp_path,
                                                                              monkeypatch):
    tree = tmp_path / "tree"
    (tree / "packages" / "core" / "src" / "ember").mkdir(parents=True)
    other = tmp_path / "other"
    (other / "ember").mkdir(parents=True)
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.setenv("OPENBLAS_L2_SIZE", "1048576")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(other), "/somewhere/else"]))
    env = compare.child_env(tree, threads=1)
    assert "OPENBLAS_CORETYPE" not in env and "OPENBLAS_L2_SIZE" not in env
    assert env["PYTHONPATH"].split(os.pathsep) == [
        str(tree / "packages" / "core" / "src"), "/somewhere/else"]
    assert env["OPENBLAS_NUM_THREADS"] == env["OMP_NUM_THREADS"] == "1"
    assert compare.child_env(tree, threads=None).get("OMP_NUM_THREADS") == os.environ.get(
        "OMP_NUM_THREADS")


def test_blas_info_says_which_kernel_or_why_not():
    info = compare.blas_info()
    if importlib.util.find_spec("threadpoolctl") is None:
        assert info == "threadpoolctl not installed: the BLAS kernel is unknown"
    else:
        import numpy  # noqa: F401  (loads numpy's BLAS)
        info = compare.blas_info()
        assert isinstance(info, list) and info and all("architecture" in i for i in info)
    assert compare.fmt_blas([{"internal_api": "openblas", "version": "0.3", "architecture":
                              "SkylakeX", "num_threads": 1, "prefix": "libopenblas"}]) == (
        "openblas 0.3 SkylakeX (1 thread, libopenblas)")


def test_the_spread_rule():
    # identical samples: ratio 1, spread 10% (slowest / fastest round), no flag
    assert compare.summarize([1.0, 1.1, 1.0], [1.0, 1.1, 1.0])[2:] == (1.0, pytest.approx(0.1), "")
    mr, mw, ratio, spread, flag = compare.summarize([2.0, 2.1, 2.0], [1.0, 1.05, 1.0])
    assert (mr, mw, ratio, flag) == (1.0, 2.0, 2.0, "slower")
    # moved by 8% with a side 20% apart between its rounds: not flagged
    assert compare.summarize([1.08, 1.0, 1.2], [1.0, 0.95, 1.05])[4] == ""
    # a 10x speedup is flagged even when a side spread over 100% (ratio < 1 / (1 + spread))
    assert compare.summarize([0.1, 0.12, 0.1], [1.0, 2.5, 1.0])[2:] == (
        pytest.approx(0.1), pytest.approx(1.5), "faster")
    assert compare.summarize([0.5, 0.5, 0.5], [1.0, 2.5, 1.0])[4] == ""  # 2x < 2.5x spread


def test_the_chart_draws_ember_figures_with_their_spread(tmp_path):
    pytest.importorskip("matplotlib")  # the integration session installs it
    spec = importlib.util.spec_from_file_location("plot_compare", BENCH / "plot_compare.py")
    plot = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plot)
    data = {"ref": "41829c3", "ref_sha": "41829c3" + "0" * 33, "head": "abc1234", "rows": [
        {"benchmark": "eager_overhead", "figure": "tape step (ember)", "ref_seconds": 2e-5,
         "work_seconds": 1e-5, "ratio": 0.5, "spread": 0.1, "flag": "faster", "rounds": 5},
        {"benchmark": "eager_overhead", "figure": "em.add 2x2", "ref_seconds": 6e-7,
         "work_seconds": 6.6e-7, "ratio": 1.1, "spread": 0.2, "flag": "", "rounds": 5},
        {"benchmark": "eager_overhead", "figure": "numpy by hand", "ref_seconds": 1e-3,
         "work_seconds": 1e-3, "ratio": 1.0, "spread": 0.05, "flag": "", "rounds": 5}]}
    (tmp_path / "c.json").write_text(json.dumps(data))
    out = tmp_path / "img" / "c.svg"
    assert plot.main([str(tmp_path / "c.json"), str(out)]) == 0
    svg = out.read_text()
    assert svg.lstrip().startswith("<?xml") and "</svg>" in svg
    # the ember figures and their ratios are drawn; the contender left out
    assert "0.50x" in svg and "1.10x" in svg and "1.00x" not in svg
    assert not list(out.parent.glob("*.tmp"))
    assert plot.main([str(tmp_path / "c.json"), str(out), "--all"]) == 0
    assert "1.00x" in out.read_text()
