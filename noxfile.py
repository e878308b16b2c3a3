"""nox drives everything: per-package tests, integration, lint, types, build, docs, bench.

A bare ``nox`` runs what CI needs. Each ``tests-<package>`` session installs only that
package and what it declares, so an undeclared sibling import fails here, not for users.
Tests marked ``slow`` (real-MNIST training to full accuracy) run only in ``nox -s slow``;
the default sessions keep shorter versions of them that can still fail.

``CI=true`` (what CI sets) makes the run strict: a missing interpreter fails instead of
skipping, pytest rejects unknown markers, and the main job prints lines, not a bar.
"""

from __future__ import annotations

import glob
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import nox

ROOT = pathlib.Path(__file__).parent
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_existing_virtualenvs = True
CI = os.environ.get("CI", "").lower() not in ("", "0", "false")
nox.options.error_on_missing_interpreters = CI

# package -> the sibling packages it depends on (installed from this checkout)
PACKAGES = {
    "core": [],
    "tape": ["core"],
    "nn": ["core", "tape", "graph", "checkpoint", "summary"],
    "checkpoint": [],
    "summary": [],
    "data": [],
    "distribute": ["core"],
    "graph": ["core"],
}
# packages whose tests compare against PyTorch CPU when a local wheel is available
TORCH_PACKAGES = {"core", "tape", "nn"}

nox.options.sessions = [
    "lint",
    "typecheck",
    "build",
    *[f"tests-{p}" for p in PACKAGES],
    "integration",
    "distributed",
    "docs",
    "tests-present-gpu",
    "gpu",
    "keras-interop",
    "skips",  # last: reads what the sessions before it recorded
]


def _local_torch_wheel() -> str | None:
    """The CPU wheel of torch 2.13.0 if pip is configured to find one locally.

    A plain ``pip install torch`` would pull gigabytes of CUDA packages, so torch is only
    installed from a wheel already on disk (pip's ``find-links``); otherwise the torch
    comparison tests skip with a reason.
    """
    dirs = [d for d in os.environ.get("PIP_FIND_LINKS", "").split() if d]
    try:
        out = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True, text=True, check=False,
        ).stdout
    except OSError:
        out = ""
    for line in out.splitlines():
        if "find-links" in line:
            dirs.extend(line.split("=", 1)[1].strip().strip("'\"").split())
    for d in dirs:
        d = d.removeprefix("file://")
        hits = sorted(glob.glob(os.path.join(d, "torch-2.13.0*cpu*.whl")))
        py = f"cp{sys.version_info.major}{sys.version_info.minor}"
        hits = [h for h in hits if py in h] or []
        if hits:
            return hits[0]
    return None


def _install_packages(session: nox.Session, names: list[str], extra: str = "") -> None:
    args = []
    for n in names:
        args += ["-e", f"{ROOT / 'packages' / n}{extra}"]
    if args:
        session.install(*args)


# where each pytest run of a default session records which test modules ran or skipped
# (tools/ember_skip_record.py); `nox -s skips` fails on a module that never runs
SKIP_RECORDS = ROOT / ".nox" / "skip-records"
_pytest_runs: dict[str, int] = {}


def _skip_record_env(session: nox.Session) -> tuple[list[str], dict[str, str]]:
    """pytest arguments and environment that record this run for ``nox -s skips``."""
    if session.name not in nox.options.sessions:  # slow, bench, ...: not CI sessions
        return [], {}
    n = _pytest_runs.get(session.name, 0)
    _pytest_runs[session.name] = n + 1
    if n == 0:  # this session's records from an earlier nox run go
        for old in SKIP_RECORDS.glob(f"{session.name}-*.json"):
            old.unlink()
    path = os.pathsep.join(p for p in (str(ROOT / "tools"), os.environ.get("PYTHONPATH")) if p)
    return ["-p", "ember_skip_record"], {
        "EMBER_SKIP_RECORD": str(SKIP_RECORDS / f"{session.name}-{n}.json"),
        "EMBER_SKIP_SESSION": session.name, "PYTHONPATH": path}


def _pytest(session: nox.Session, *paths: str, marks: str = "not slow") -> None:
    """pytest as every session runs it; ``-m`` after ``--`` overrides ``marks``."""
    strict = ["--strict-markers"] if CI else []
    # one BLAS thread: the tests' matrices are small, and spinning BLAS threads make a
    # shared 2-core machine several times slower (see docs/performance.md)
    env = {k: os.environ.get(k, "1") for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    record, record_env = _skip_record_env(session)
    session.run(
        "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *record,
        "--import-mode=importlib", "-m", marks, *strict, *paths, *session.posargs,
        env={**env, **record_env},
    )


def _make_tests_session(pkg: str) -> None:
    @nox.session(name=f"tests-{pkg}")
    def tests(session: nox.Session) -> None:
        _install_packages(session, PACKAGES[pkg])
        _install_packages(session, [pkg], "[test]")
        if pkg in TORCH_PACKAGES:
            wheel = _local_torch_wheel()
            if wheel:
                session.install(wheel)
            else:
                session.log("no local torch 2.13.0 CPU wheel: PyTorch comparisons will skip")
        _pytest(session, f"packages/{pkg}/tests")

    tests.__doc__ = f"Tests of ember-{pkg} in an environment holding only it and its deps."


for _pkg in PACKAGES:
    _make_tests_session(_pkg)


def _install_all(session: nox.Session, torch: bool = False) -> None:
    """Every package with its test extra; with ``torch``, also the local CPU wheel if any."""
    _install_packages(session, list(PACKAGES), "[test]")
    session.install("tensorboard", "tqdm")
    wheel = _local_torch_wheel() if torch else None
    if wheel:
        session.install(wheel)


@nox.session
def integration(session: nox.Session) -> None:
    """The tutorials' walkthroughs and the main job end to end, every package installed;
    bench/compare.py's (and its chart's) and tools/'s self-tests."""
    _install_all(session, torch=True)
    # matplotlib: bench/plot_compare.py's test draws a chart; Pillow: the image ports and
    # nn.utils.image_dataset_from_directory's tests decode images
    session.install("matplotlib", "Pillow")
    _pytest(session, "integration_tests", "bench/tests", "tools/tests")


@nox.session
def distributed(session: nox.Session) -> None:
    """ember-distribute with real MPI: its tests plus ``mpiexec -n 2`` training jobs."""
    _install_all(session)
    _install_packages(session, ["distribute"], "[mpi,test]")
    session.env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    _pytest(session, "packages/distribute/tests", "docs/test_distributed_guide.py")
    _pytest(session, "integration_tests/test_main_job.py", "-k", "distributed")


@nox.session
def slow(session: nox.Session) -> None:
    """The tests marked slow (real MNIST to 97% and 98.5%: tens of minutes on a CPU)."""
    _install_all(session, torch=True)
    _pytest(session, *[f"packages/{p}/tests" for p in PACKAGES], "integration_tests",
            marks="slow")


@nox.session
def mnist(session: nox.Session) -> None:
    """The main job: train on MNIST with checkpoints and TensorBoard logs (options after --)."""
    _install_all(session)
    shared = ROOT.parent / "shared" / "datasets" / "mnist"
    if not os.environ.get("EMBER_DATA") and shared.is_dir():
        session.env["EMBER_DATA"] = str(shared)  # (not --data-dir: argv stays the user's)
    session.run("python", str(ROOT / "examples" / "mnist.py"), *session.posargs)


@nox.session
def gpu(session: nox.Session) -> None:
    """core/tape/nn tests on the cupy backend; skips with a reason where no GPU answers."""
    if shutil.which("nvidia-smi") is None:
        session.skip("no NVIDIA GPU on this machine (nvidia-smi not found): GPU suite not run")
    _install_packages(session, ["core"], "[gpu,test]")
    _install_packages(session, ["tape", "nn", "graph"], "[test]")
    session.env["EMBER_TEST_BACKENDS"] = "cpu,gpu"
    _pytest(session, "packages/core/tests", "packages/tape/tests", "packages/nn/tests",
            "packages/graph/tests")


@nox.session(name="tests-present-gpu")
def tests_present_gpu(session: nox.Session) -> None:
    """core/tape/nn/graph tests with the strict double as this process's GPU: ``/gpu:0`` is
    the default device for every test, fixture or not, as on a machine with a GPU (where
    the H200 found 90 failures the per-test double had passed)."""
    suites = ["core", "tape", "graph", "nn"]
    _install_packages(session, sorted({d for p in suites for d in PACKAGES[p]} - set(suites)))
    _install_packages(session, suites, "[test]")
    wheel = _local_torch_wheel()
    if wheel:
        session.install(wheel)
    session.env["EMBER_TEST_BACKENDS"] = "present-gpu"
    _pytest(session, "packages/core/tests", "packages/tape/tests", "packages/nn/tests",
            "packages/graph/tests")


# the Keras 3 that ember's files are exchanged with (nox -s keras-interop)
KERAS_VERSION = "3.15.1"


@nox.session(name="keras-interop")
def keras_interop(session: nox.Session) -> None:
    """Files from and for Keras 3 itself: ember loads the .keras and .weights.h5 files a
    pinned Keras 3 writes, and Keras loads ember's (packages/nn/tests/test_keras_interop.py).
    Keras runs on torch's CPU wheel in an interpreter of its own, made here, which the tests
    call as a subprocess (EMBER_KERAS_PYTHON): neither reaches ember's environment."""
    wheel = _local_torch_wheel()
    if wheel is None:
        msg = "no local torch 2.13.0 CPU wheel: Keras 3 cannot run, interchange not tested"
        session.error(msg) if CI else session.skip(msg)
    _install_packages(session, PACKAGES["nn"])
    _install_packages(session, ["nn"], "[test]")
    keras_env = pathlib.Path(session.virtualenv.location) / "keras-env"
    keras_python = keras_env / "bin" / "python"
    have = subprocess.run([str(keras_python), "-c", "import keras; print(keras.__version__)"],
                          capture_output=True, text=True, check=False) \
        if keras_python.exists() else None
    if have is None or have.stdout.strip() != KERAS_VERSION:
        session.run(sys.executable, "-m", "venv", "--clear", str(keras_env), external=True)
        session.run(str(keras_python), "-m", "pip", "install", "-q",
                    f"keras=={KERAS_VERSION}", wheel, external=True)
    session.env["EMBER_KERAS_PYTHON"] = str(keras_python)
    _pytest(session, "packages/nn/tests/test_keras_interop.py")


@nox.session(venv_backend="none")
def skips(session: nox.Session) -> None:
    """Fail when a test module skips entirely in every CI session (or none collects it),
    from the records the default sessions' pytest runs wrote before it."""
    session.run(sys.executable, str(ROOT / "tools" / "check_skips.py"), str(SKIP_RECORDS))


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over the whole tree."""
    session.install("ruff")
    session.run("ruff", "check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy over every package's sources (the namespace merges)."""
    session.install("mypy", "numpy")
    srcs = [str(ROOT / "packages" / p / "src") for p in PACKAGES]
    session.env["MYPYPATH"] = os.pathsep.join(srcs)
    session.run("mypy", "--namespace-packages", "--explicit-package-bases",
                *[str(ROOT / "packages" / p / "src" / "ember" / p) for p in PACKAGES])


@nox.session
def build(session: nox.Session) -> None:
    """Build every wheel and check each ships only its own subpackage."""
    session.install("build", "hatchling")
    out = ROOT / "dist"
    shutil.rmtree(out, ignore_errors=True)
    strays = list(ROOT.glob("packages/*/src/ember/__init__.py"))
    if strays:
        session.error(f"ember is a PEP 420 namespace; remove {strays}")
    for pkg in [*PACKAGES, "all"]:
        session.run("python", "-m", "build", "--wheel", "--no-isolation", "-o", str(out),
                    str(ROOT / "packages" / pkg), silent=True)
    for whl in sorted(out.glob("*.whl")):
        dist = whl.name.split("-")[0].replace("_", "-")
        own = dist.removeprefix("ember-")
        with zipfile.ZipFile(whl) as z:
            names = [n for n in z.namelist() if ".dist-info/" not in n]
            meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
            requires = [ln.split(":", 1)[1].strip() for ln in z.read(meta).decode().splitlines()
                        if ln.startswith("Requires-Dist:") and "extra ==" not in ln]
        if own == "all":
            if names:
                session.error(f"{whl.name} must hold no code, only requirements: {names[:5]}")
            session.log(f"{whl.name}: no files of its own; installs {', '.join(requires)}")
            continue
        bad = [n for n in names if not n.startswith(f"ember/{own}/")]
        if bad:
            session.error(f"{whl.name} ships files outside its own subpackage: {bad[:5]}")
        session.log(f"{whl.name}: {len(names)} files, all under ember/{own}/")


@nox.session
def docs(session: nox.Session) -> None:
    """Build the docs site in strict mode, check it, and run every code example in it."""
    _install_all(session)
    # pip and hatchling: the docs tests install the packages as the docs say (dry runs)
    session.install("mkdocs-material", "mkdocstrings[python]", "pip", "hatchling")
    session.env["NO_MKDOCS_2_WARNING"] = "1"
    site = ROOT / "site"
    session.run("mkdocs", "build", "--strict", "--site-dir", str(site))
    session.env["EMBER_SITE_DIR"] = str(site)  # the site tests check the build just made
    _pytest(session, "docs")
    # docstring examples run too
    _pytest(session, "--doctest-modules", *[f"packages/{p}/src/ember" for p in PACKAGES])


@nox.session
def figures(session: nox.Session) -> None:
    """Redraw the docs' pictures: a real main-job run's curves and the benchmark charts."""
    _install_all(session)
    session.install("matplotlib")
    workdir = pathlib.Path(session.create_tmp()) / "figures_run"
    shutil.rmtree(workdir, ignore_errors=True)
    # three short epochs (12,000 examples each), so the accuracy panel has three points
    run = ["--epochs", "3", "--train-limit", "12000"]
    args = ["--workdir", str(workdir), *run, "--no-progress"]
    shared = ROOT.parent / "shared" / "datasets" / "mnist"
    if not os.environ.get("EMBER_DATA") and shared.is_dir():
        args += ["--data-dir", str(shared)]
    session.run("python", str(ROOT / "examples" / "mnist.py"), *args)
    session.run("python", str(ROOT / "examples" / "plot_run.py"), str(workdir / "logs"),
                str(ROOT / "docs" / "img" / "mnist-run.svg"),
                "--title", f"python3 -m nox -s mnist -- {' '.join(run)}: the MLP's TensorBoard scalars")
    session.run("python", "bench/run.py", "--charts")


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks side by side with their peers: bench/results tables and docs/img/bench charts."""
    _install_all(session, torch=True)
    _install_packages(session, ["distribute"], "[mpi]")
    session.install("threadpoolctl", "safetensors", "matplotlib")
    session.run("python", "bench/run.py", *session.posargs)  # tables, then their charts


@nox.session(name="bench-compare")
def bench_compare(session: nox.Session) -> None:
    """The working tree against a git ref: ``nox -s bench-compare -- REF [benchmarks...]``
    (default eager_overhead; ``--rounds N``, ``--threads N``): one table of median ratios."""
    if not session.posargs or session.posargs[0].startswith("-"):
        session.error("usage: nox -s bench-compare -- REF [benchmarks...] [--rounds N]")
    _install_all(session, torch=True)
    session.install("threadpoolctl")
    session.run("python", "bench/compare.py", *session.posargs)


@nox.session(venv_backend="none")
def bump(session: nox.Session) -> None:
    """One version for all distributions: ``nox -s bump -- 0.2.0`` sets every pyproject's
    version and every ``ember-x==`` pin; with no argument it checks that they agree; once
    the bump is committed, ``nox -s bump -- --tag`` tags HEAD ``v0.2.0``."""
    session.run("python", str(ROOT / "tools" / "bump_version.py"), *session.posargs)
