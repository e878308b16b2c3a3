"""The GPU commands (docs/guide/gpu-testing.md) run on a machine that has only cupy, numpy,
ml_dtypes (ember-core's one dependency), pytest, safetensors and tensorboard, with ember's
sources on PYTHONPATH: no nox, no network. So nothing they import at module level may need
another package (torch, hypothesis, tqdm, mpi4py, google_crc32c, ...): such an import must
sit in a function, a ``try: ... except ImportError``, or behind ``pytest.importorskip``."""

from __future__ import annotations

import ast
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
ON_THE_GPU_MACHINE = {"numpy", "ml_dtypes", "cupy", "cupyx", "pytest", "safetensors",
                      "tensorboard", "ember"}
# what the GPU commands import: the three suites, their sources, and the GPU benchmark
FILES = sorted([
    *ROOT.glob("packages/core/src/ember/core/**/*.py"),
    *ROOT.glob("packages/tape/src/ember/tape/**/*.py"),
    *ROOT.glob("packages/nn/src/ember/nn/**/*.py"),
    *ROOT.glob("packages/core/tests/**/*.py"),
    *ROOT.glob("packages/tape/tests/**/*.py"),
    *ROOT.glob("packages/nn/tests/**/*.py"),
    ROOT / "bench" / "bench_gpu.py", ROOT / "bench" / "_harness.py",
])


def _local_modules(path: pathlib.Path) -> set[str]:
    """Helpers beside a test file (conftest puts its folder on sys.path) or a benchmark."""
    return {p.stem for p in path.parent.glob("*.py")}


def _module_level_imports(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, top-level package) of every import run when the module is imported, except
    those guarded by a ``try`` that catches ImportError."""
    out: list[tuple[int, str]] = []
    skipped: set[str] = set()  # modules a module-level pytest.importorskip(...) guards

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            call = getattr(node, "value", None)
            if isinstance(node, (ast.Expr, ast.Assign)) and isinstance(call, ast.Call) and \
                    ast.unparse(call.func) == "pytest.importorskip" and call.args and \
                    isinstance(call.args[0], ast.Constant):
                skipped.add(str(call.args[0].value).split(".")[0])
            elif isinstance(node, ast.Import):
                out.extend((node.lineno, a.name.split(".")[0]) for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                out.append((node.lineno, node.module.split(".")[0]))
            elif isinstance(node, ast.Try):
                caught = {ast.unparse(h.type) for h in node.handlers if h.type is not None}
                if not caught & {"ImportError", "ModuleNotFoundError", "Exception"}:
                    visit(node.body)
                visit(node.orelse)
                visit(node.finalbody)
            elif isinstance(node, ast.If):
                visit(node.body)
                visit(node.orelse)

    visit(tree.body)
    return [(line, name) for line, name in out if name not in skipped]


def test_the_files_are_found():
    assert len(FILES) > 50 and ROOT / "bench" / "bench_gpu.py" in FILES


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_imports_only_what_a_bare_gpu_machine_has(path):
    tree = ast.parse(path.read_text(), str(path))
    local = _local_modules(path)
    bad = [f"line {line}: {name}" for line, name in _module_level_imports(tree)
           if name not in sys.stdlib_module_names and name not in ON_THE_GPU_MACHINE
           and name not in local and name != "__future__"]
    assert not bad, (f"{path.relative_to(ROOT)} imports at module level what the GPU machine "
                     f"lacks (move it into a function, try/except ImportError or "
                     f"pytest.importorskip): {bad}")


def test_the_check_sees_a_forbidden_import():
    tree = ast.parse("import os\nimport torch\ntry:\n    import tqdm\nexcept ImportError:\n"
                     "    tqdm = None\ndef f():\n    import hypothesis\n"
                     "pytest.importorskip('mpi4py')\nfrom mpi4py import MPI\n")
    assert _module_level_imports(tree) == [(1, "os"), (2, "torch")]
