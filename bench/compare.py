"""Before and after: each benchmark for the working tree and for a git ref, side by side.

    python bench/compare.py REF [benchmarks...] [--rounds N] [--threads N]
    nox -s bench-compare -- REF [benchmarks...]

REF (a commit, tag or branch) is checked out into a temporary git worktree, removed
afterwards even on failure. In every round each benchmark runs once for the working tree
and once for REF, each in a fresh subprocess, the side that goes first alternating by
round. The table gives, per figure, the median over the rounds for each side, the ratio
working tree / REF, the spread, and a flag where the ratio moved from 1 by more than the
spread. Measuring a stop's whole work against where it began (not each change against its
own start) is what catches the slow drifts that instruction counts and single runs miss.

Only ember differs between the sides: the benchmark's code is the working tree's for both,
copied once at the start, so REF runs "the same benchmark" and the copy absorbs whatever a
benchmark writes next to itself. A benchmark (named ``eager_overhead``, ``tape`` for
``bench_tape.py``, or a path) is a module that either

- defines ``figures() -> dict[str, float]``: seconds per call, lower is better; or
- has a ``main()`` (``bench/run.py``'s ``bench_*.py``): each ``_harness.compare`` call it
  makes becomes figures, named by the title of the table that call feeds; what it would
  write under ``bench/results`` goes to a temporary directory.

Each subprocess sees ember only from its own tree: ``PYTHONPATH`` over the tree's
``packages/*/src`` and an import hook that resolves ``ember`` and ``ember.*`` there and
nowhere else. Without it, an editable install of the working tree in the venv would serve
REF's process every package REF lacks (or, with an import-hook editable install, all of
them), and the comparison would compare the working tree with itself. After the benchmark
the subprocess checks the file of every ember module it imported and fails naming any from
elsewhere.

The subprocesses unset ``OPENBLAS_CORETYPE`` and ``OPENBLAS_L2_SIZE``: a machine may set
them to pin older kernels for reproducible tests, but users run the kernels OpenBLAS picks.
Each reports the kernel it ran (threadpoolctl's ``internal_api`` and ``architecture``).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.abc
import importlib.machinery
import json
import math
import os
import pathlib
import runpy
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
MARK = "@@ember-compare-result@@ "
UNSET = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
BUSY = 0.25  # a spread above this says more about the machine than about ember
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


# --- the benchmark subprocess ------------------------------------------------------------
def src_dirs(tree: pathlib.Path) -> list[pathlib.Path]:
    """The tree's ``packages/*/src`` directories that hold part of the ``ember`` namespace."""
    return sorted(d for d in tree.glob("packages/*/src") if (d / "ember").is_dir())


class OwnTreeFinder(importlib.abc.MetaPathFinder):
    """Resolves ``ember`` and ``ember.*`` in one tree only; anything else is not its business.

    ``ember`` becomes a namespace package whose ``__path__`` is a fixed list of the tree's
    ``packages/*/src/ember`` (a regular namespace path is recomputed from ``sys.path``,
    where a venv's editable install puts other trees). A submodule not found there is a
    ModuleNotFoundError here, before an editable install's own finder could serve it.
    """

    def __init__(self, tree: pathlib.Path):
        self.tree = tree
        self.path = [str(d / "ember") for d in src_dirs(tree)]

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname == "ember":
            spec = importlib.machinery.ModuleSpec("ember", None, is_package=True)
            spec.submodule_search_locations = list(self.path)
            return spec
        if not fullname.startswith("ember."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None:
            raise ModuleNotFoundError(
                f"compare.py: {fullname} is not in {self.tree} (searched {list(path or [])}); "
                f"ember is imported only from the tree under test", name=fullname)
        return spec


def foreign_modules(tree: pathlib.Path, modules: Mapping[str, ModuleType]) -> list[str]:
    """``"name: location"`` for every ember module in ``modules`` whose ``__file__`` or
    ``__path__`` entries lie outside ``tree/packages``."""
    own = os.path.realpath(tree / "packages") + os.sep
    bad = []
    for name, mod in sorted(modules.items()):
        if mod is None or not (name == "ember" or name.startswith("ember.")):
            continue
        where = [getattr(mod, "__file__", None), *list(getattr(mod, "__path__", None) or [])]
        bad += [f"{name}: {w}" for w in where
                if w is not None and not os.path.realpath(w).startswith(own)]
    return bad


def blas_info() -> list[dict[str, Any]] | str:
    """The BLAS libraries loaded in this process, or why that is unknown."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed: the BLAS kernel is unknown"
    keys = ("internal_api", "architecture", "version", "num_threads", "prefix")
    return [{k: i.get(k) for k in keys} for i in threadpool_info() if i.get("user_api") == "blas"]


def _figures_of_main(module: dict[str, Any], calls: list[list[Any]]) -> dict[str, float]:
    module["main"]()
    out: dict[str, float] = {}
    for i, (times, title) in enumerate(calls):
        for contender, seconds in times.items():
            if seconds == seconds:  # nan: a contender that is not installed
                out[f"{title or f'compare call {i + 1}'}: {contender}"] = seconds
    return out


def run_benchmark(path: pathlib.Path, scratch: pathlib.Path) -> dict[str, float]:
    """Load the benchmark at ``path`` and return its figures (seconds per call)."""
    calls: list[list[Any]] = []
    try:
        import _harness as harness  # the (copied) bench directory is on sys.path
    except ImportError:
        harness = None
    if harness is not None:  # record compare() calls; keep results/ and charts untouched
        compare, table = harness.compare, harness.table

        def recorded_compare(*args: Any, **kwargs: Any) -> dict[str, float]:
            times = compare(*args, **kwargs)
            calls.append([times, None])
            return times

        def titled_table(title: str, times: dict[str, float], *args: Any, **kwargs: Any) -> str:
            for call in calls:
                if call[0] is times:
                    call[1] = title
            return table(title, times, *args, **kwargs)

        harness.compare, harness.table = recorded_compare, titled_table
        harness.RESULTS, harness.CHARTS = scratch / "results", scratch / "charts"
        for d in (harness.RESULTS, harness.CHARTS):  # (some benchmarks write there directly)
            d.mkdir(parents=True, exist_ok=True)
        harness.write = lambda name, text: None
    sys.argv = [str(path)]  # a main() parses its own (empty) arguments
    module = runpy.run_path(str(path), run_name="__ember_compare__")
    if callable(module.get("figures")):
        figures = module["figures"]()
    elif callable(module.get("main")) and harness is not None:
        figures = _figures_of_main(module, calls)
    else:
        raise SystemExit(f"compare.py: {path} defines neither figures() nor main() "
                         f"(with bench/_harness.py beside it)")
    if not isinstance(figures, dict) or not figures:
        raise SystemExit(f"compare.py: {path} gave no figures: {figures!r}")
    for name, seconds in figures.items():
        if not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds > 0):
            raise SystemExit(f"compare.py: {path}: figure {name!r} is {seconds!r}, "
                             f"not a positive number of seconds")
    return {str(k): float(v) for k, v in figures.items()}


def child(tree: pathlib.Path, bench: pathlib.Path, bench_dir: pathlib.Path) -> int:
    """One benchmark run in this (fresh) process, ember from ``tree`` only."""
    early = [n for n in sys.modules if n == "ember" or n.startswith("ember.")]
    if early:
        raise SystemExit(f"compare.py: ember was imported before the benchmark: {early}")
    if not src_dirs(tree):
        raise SystemExit(f"compare.py: {tree} has no packages/*/src/ember")
    sys.meta_path.insert(0, OwnTreeFinder(tree))
    if sys.path and os.path.realpath(sys.path[0]) == str(HERE):  # this script's directory
        del sys.path[0]
    sys.path[:0] = [str(bench.parent), str(bench_dir)]
    out = sys.stdout
    scratch = pathlib.Path.cwd() / "scratch"  # the cwd is the parent's, removed by it
    with contextlib.redirect_stdout(sys.stderr):  # the benchmark's prints are not results
        figures = run_benchmark(bench, scratch)
    bad = foreign_modules(tree, sys.modules)
    if bad:
        raise SystemExit(f"compare.py: ember modules imported from outside {tree}:\n  "
                         + "\n  ".join(bad))
    core = sys.modules.get("ember.core")
    n = sum(1 for k in sys.modules if k == "ember" or k.startswith("ember."))
    out.write(MARK + json.dumps({
        "figures": figures, "blas": blas_info(), "ember_modules": n,
        "ember_core": getattr(core, "__file__", None)}) + "\n")
    out.flush()
    return 0


# --- the parent: worktree, rounds, table -------------------------------------------------
def git(*args: str, cwd: pathlib.Path = ROOT) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


NOT_BENCHMARKS = ("compare", "run", "_harness")


def resolve_benchmark(name: str) -> pathlib.Path:
    """``eager_overhead`` -> bench/eager_overhead.py, ``tape`` -> bench/bench_tape.py, or a path."""
    for candidate in (pathlib.Path(name), HERE / f"{name}.py", HERE / f"bench_{name}.py"):
        if (candidate.suffix == ".py" and candidate.is_file()
                and candidate.stem not in NOT_BENCHMARKS):
            return candidate.resolve()
    known = sorted(p.stem for p in HERE.glob("*.py") if p.stem not in NOT_BENCHMARKS)
    raise SystemExit(f"compare.py: no benchmark {name!r} (a path, or one of {', '.join(known)})")


def child_env(tree: pathlib.Path, threads: int | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    others = [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
              if p and not os.path.isdir(os.path.join(p, "ember"))]
    env["PYTHONPATH"] = os.pathsep.join([*map(str, src_dirs(tree)), *others])
    if threads is not None:
        env.update({k: str(threads) for k in THREAD_VARS})
    return env


def run_child(tree: pathlib.Path, bench: pathlib.Path, bench_dir: pathlib.Path,
              threads: int | None, timeout: float, tmp: pathlib.Path) -> dict[str, Any]:
    """One fresh benchmark process for ``tree``; its working directory is made under
    ``tmp`` (whatever it leaves there goes with ``tmp``)."""
    cmd = [sys.executable, str(HERE / "compare.py"), "--child", str(tree), str(bench),
           str(bench_dir)]
    cwd = tempfile.mkdtemp(prefix="run-", dir=tmp)
    try:
        done = subprocess.run(cmd, cwd=cwd, env=child_env(tree, threads),
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise RuntimeError(f"timed out after {timeout:.0f} s") from e
    finally:
        shutil.rmtree(cwd, ignore_errors=True)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith(MARK)]
    if done.returncode or not lines:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-25:])
        raise RuntimeError(f"exit status {done.returncode}:\n{tail}")
    return json.loads(lines[-1][len(MARK):])


def summarize(work: list[float], ref: list[float]) -> tuple[float, float, float, float, str]:
    """(REF median, working-tree median, ratio, spread, flag) of one figure's samples.

    The spread is the larger of the two sides' slowest / fastest round, minus 1; a figure
    is flagged slower when its ratio exceeds 1 + spread, faster when it is below
    1 / (1 + spread): a move beyond what either side moved between its own rounds (in log
    terms, so that a 10x speedup can be flagged as surely as a 10x slowdown). With
    log-normal noise on identical code, that happens to about 0.4% of figures with 5
    rounds (6% with 3, 0.02% with 7).
    """
    mw, mr = statistics.median(work), statistics.median(ref)
    spread = max(max(s) / min(s) for s in (work, ref)) - 1
    ratio = mw / mr
    flag = ("slower" if ratio > 1 + spread else "faster" if ratio * (1 + spread) < 1 else "")
    return mr, mw, ratio, spread, flag


def fmt_time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def fmt_blas(info: list[dict[str, Any]] | str) -> str:
    if isinstance(info, str):
        return info
    if not info:
        return "no BLAS loaded"
    return "; ".join(f"{i['internal_api']} {i.get('version') or ''} {i.get('architecture') or '?'}"
                     f" ({i.get('num_threads')} thread{'' if i.get('num_threads') == 1 else 's'}, "
                     f"{i.get('prefix')})" for i in info)


def table(names: Iterable[str], samples: dict[str, dict[tuple[str, str], list[float]]],
          failed: dict[str, str]) -> list[str]:
    lines = ["| benchmark | figure | REF | working tree | working tree / REF | spread | moved |",
             "|---|---|---:|---:|---:|---:|---|"]
    for name in names:
        if name in failed:
            lines.append(f"| {name} | (failed: {failed[name]}) | - | - | - | - | |")
            continue
        keys = list(dict.fromkeys(fig for side in ("work", "ref")
                                  for (b, fig) in samples[side] if b == name))
        for fig in keys:
            work, ref = samples["work"].get((name, fig)), samples["ref"].get((name, fig))
            if not work or not ref:
                lines.append(f"| {name} | {fig} | {'-' if not ref else fmt_time(ref[0])} | "
                             f"{'-' if not work else fmt_time(work[0])} | - | - | "
                             f"only in {'working tree' if work else 'REF'} |")
                continue
            mr, mw, ratio, spread, flag = summarize(work, ref)
            lines.append(f"| {name} | {fig} | {fmt_time(mr)} | {fmt_time(mw)} | {ratio:.2f}x | "
                         f"{spread * 100:.0f}% | {f'**{flag}**' if flag else ''} |")
    return lines


def write_json(path: pathlib.Path, ref: str, sha: str, head: str,
               samples: dict[str, dict[tuple[str, str], list[float]]]) -> None:
    """The medians, ratios and spreads as JSON (what ``bench/plot_compare.py`` draws)."""
    rows = []
    for key, work in samples["work"].items():
        if key in samples["ref"]:
            mr, mw, ratio, spread, flag = summarize(work, samples["ref"][key])
            rows.append({"benchmark": key[0], "figure": key[1], "ref_seconds": mr,
                         "work_seconds": mw, "ratio": ratio, "spread": spread,
                         "flag": flag, "rounds": len(work)})
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"ref": ref, "ref_sha": sha, "head": head, "rows": rows},
                              indent=1) + "\n")
    os.replace(tmp, path)


def compare(ref: str, names: list[str], rounds: int, threads: int | None,
            timeout: float, json_path: pathlib.Path | None = None) -> int:
    benches = {n: resolve_benchmark(n) for n in names}
    sha = git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}") if ref else ""
    head = git("rev-parse", "--short", "HEAD")
    dirty = git("status", "--porcelain", "--untracked-files=no")
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="ember-compare-"))
    ref_tree = tmp / "ref"
    try:
        git("worktree", "add", "--detach", str(ref_tree), sha)
        bench_copy = tmp / "bench-copy"
        shutil.copytree(HERE, bench_copy / "bench",
                        ignore=shutil.ignore_patterns("__pycache__", "results"))
        (bench_copy / "docs" / "img" / "bench").mkdir(parents=True)  # what charts write
        copied = {n: (bench_copy / "bench" / p.relative_to(HERE) if p.is_relative_to(HERE) else p)
                  for n, p in benches.items()}
        trees = {"work": ROOT, "ref": ref_tree}
        samples: dict[str, dict[tuple[str, str], list[float]]] = {"work": {}, "ref": {}}
        seen: dict[str, dict[str, Any]] = {}
        failed: dict[str, str] = {}
        print(f"compare.py: working tree ({head}{', uncommitted changes' if dirty else ''}) "
              f"against {ref} ({sha[:9]}), {rounds} rounds of fresh processes",
              file=sys.stderr, flush=True)
        for r in range(rounds):
            order = ("work", "ref") if r % 2 == 0 else ("ref", "work")
            for name in names:
                if name in failed:
                    continue
                for side in order:
                    t0 = time.perf_counter()
                    try:
                        res = run_child(trees[side], copied[name], bench_copy / "bench",
                                        threads, timeout, tmp)
                    except RuntimeError as e:
                        label = "working tree" if side == "work" else f"REF {ref}"
                        print(f"compare.py: {name} failed for the {label}: {e}",
                              file=sys.stderr, flush=True)
                        failed[name] = f"{label}, see above"
                        break
                    seen.setdefault(side, res)
                    for fig, s in res["figures"].items():
                        samples[side].setdefault((name, fig), []).append(s)
                    print(f"  round {r + 1}/{rounds}: {name} ({side}) "
                          f"{time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
        lines = [f"Working tree ({head}{' + uncommitted changes' if dirty else ''}) against "
                 f"REF {ref} ({sha[:9]}): medians of {rounds} rounds, each side a fresh process "
                 f"per benchmark and round, alternating; BLAS threads: "
                 f"{threads if threads is not None else 'as set in the environment'}; "
                 f"{' and '.join(UNSET)} unset.", ""]
        for side, label in (("work", "working tree"), ("ref", "REF")):
            if side in seen:
                lines.append(f"- {label}: ember.core from {seen[side]['ember_core']} "
                             f"({seen[side]['ember_modules']} ember modules, all from its "
                             f"tree); BLAS: {fmt_blas(seen[side]['blas'])}")
        lines += ["", *table(names, samples, failed), "",
                  "spread: the larger of the two sides' slowest / fastest round, minus 1; "
                  "**moved**: the ratio is above 1 + spread (slower) or below 1 / (1 + spread) "
                  "(faster)."]
        wide = [key for key, work in samples["work"].items() if key in samples["ref"]
                and summarize(work, samples["ref"][key])[3] > BUSY]
        if wide:
            lines.append(f"{len(wide)} figure(s) spread over {BUSY:.0%}: the machine was busy "
                         f"(a move smaller than that cannot be told from noise); rerun on a quiet "
                         f"machine or with more --rounds.")
        print("\n".join(lines), flush=True)
        if json_path is not None:
            write_json(json_path, ref, sha, head, samples)
        return 1 if failed else 0
    finally:
        try:
            git("worktree", "remove", "--force", str(ref_tree))
        except RuntimeError:
            pass
        shutil.rmtree(tmp, ignore_errors=True)
        with contextlib.suppress(RuntimeError):
            git("worktree", "prune")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        return child(*map(pathlib.Path, argv[1:4]))
    p = argparse.ArgumentParser(
        description="Each benchmark for the working tree and for REF, in alternating fresh "
                    "processes; one table of median ratios.")
    p.add_argument("ref", help="a commit, tag or branch (checked out into a temporary worktree)")
    p.add_argument("benchmarks", nargs="*", default=["eager_overhead"],
                   help="names in bench/ (eager_overhead, tape for bench_tape.py, ...) or paths "
                        "(default: eager_overhead)")
    p.add_argument("--rounds", type=int, default=5, help="fresh processes per side (default 5)")
    p.add_argument("--threads", default="1",
                   help="BLAS/OpenMP threads for both sides, or 'env' to keep the environment's "
                        "(default 1)")
    p.add_argument("--timeout", type=float, default=900,
                   help="seconds one benchmark process may run (default 900)")
    p.add_argument("--json", type=pathlib.Path, default=None,
                   help="also write the medians and ratios to this JSON file (for "
                        "bench/plot_compare.py)")
    args = p.parse_args(argv)
    if args.rounds < 3:  # with two, one figure in five is flagged on identical code
        p.error(f"--rounds must be at least 3 (a spread of two rounds flags one figure in "
                f"five on identical code), got {args.rounds}")
    if args.threads != "env" and not (args.threads.isdigit() and int(args.threads) > 0):
        p.error(f"--threads must be a positive integer or 'env', got {args.threads!r}")
    try:
        git("rev-parse", "--verify", "--quiet", f"{args.ref}^{{commit}}")
    except RuntimeError:
        p.error(f"REF {args.ref!r} is not a commit of {ROOT} (a shallow clone may lack it: "
                f"git fetch --tags --unshallow)")
    for name in UNSET:
        if name in os.environ:
            print(f"compare.py: {name}={os.environ[name]} is set here; the benchmarks run "
                  f"without it (the kernels a user's machine picks)", file=sys.stderr)
    # a SIGTERM (a CI timeout, a killed nox) still removes the worktree
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    threads = None if args.threads == "env" else int(args.threads)
    return compare(args.ref, args.benchmarks, args.rounds, threads, args.timeout, args.json)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
