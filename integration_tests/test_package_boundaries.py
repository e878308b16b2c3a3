"""The package boundary: ember packages meet only through each other's public names.

A package's own files (``packages/<name>/src`` and ``packages/<name>/tests``) may use its
private modules; every other file (other packages, integration tests, examples, benches,
the docs' code blocks) imports only public modules of a package, and code outside
ember-core never touches the private state of core objects (``._data``, ``._device``,
``._value``, ``._read()``, ``recording._active``): it uses ``ember.core.extend``.
"""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = sorted(p.name for p in (ROOT / "packages").iterdir()
                  if (p / "src" / "ember" / p.name).is_dir())
# Core's private state, reached through public objects (tensors, variables, recording).
CORE_PRIVATE_ATTRS = {"_data", "_device", "_value", "_read", "_active"}
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _sources() -> list[tuple[str, str | None, str]]:
    """(label, owning package or None, source text) for every checked file."""
    out: list[tuple[str, str | None, str]] = []
    for pkg in PACKAGES:
        for sub in ("src", "tests"):
            for f in sorted((ROOT / "packages" / pkg / sub).rglob("*.py")):
                if "_proto" in f.parts and f.name.endswith("_pb2.py"):
                    continue  # generated protobuf code
                out.append((str(f.relative_to(ROOT)), pkg, f.read_text()))
    for d in ("integration_tests", "examples", "bench", "docs"):
        for f in sorted((ROOT / d).rglob("*.py")):
            out.append((str(f.relative_to(ROOT)), None, f.read_text()))
    for f in sorted((ROOT / "docs").rglob("*.md")):
        for i, block in enumerate(_BLOCK.findall(f.read_text())):
            out.append((f"{f.relative_to(ROOT)}[block {i}]", None, block))
    return out


def _private_target(module: str) -> str | None:
    """The package whose private module ``module`` names (``ember.core._registry`` ->
    ``core``), or None for a public module."""
    parts = module.split(".")
    if len(parts) < 3 or parts[0] != "ember":
        return None
    return parts[1] if any(p.startswith("_") for p in parts[2:]) else None


def violations(label: str, owner: str | None, source: str) -> list[str]:
    """Cross-package private imports and core-private attribute accesses in ``source``."""
    tree = ast.parse(source, label)
    found = []
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for mod in targets:
            pkg = _private_target(mod)
            if pkg is not None and pkg != owner:
                found.append(f"{label}:{node.lineno}: imports private {mod}")
                break
        if (isinstance(node, ast.Attribute) and node.attr in CORE_PRIVATE_ATTRS
                and owner != "core"
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
            found.append(f"{label}:{node.lineno}: reads .{node.attr} of another object "
                         "(use ember.core.extend)")
    return found


def test_no_cross_package_private_access():
    found = [v for label, owner, src in _sources() for v in violations(label, owner, src)]
    assert found == [], "private names used across packages:\n" + "\n".join(found)


def test_every_package_is_checked():
    labels = [label for label, _, _ in _sources()]
    for pkg in ("core", "tape", "nn", "checkpoint", "summary", "data", "distribute"):
        assert any(label.startswith(f"packages/{pkg}/src/") for label in labels), pkg


@pytest.mark.parametrize("code, owner, expected", [
    ("from ember.core._registry import execute", "tape", 1),
    ("from ember.core import _dtypes", "nn", 1),
    ("import ember.core._registry", None, 1),
    ("from ember.core.testing._table_math import x", "tape", 1),
    ("from ember.core._registry import execute", "core", 0),  # a package's own privates
    ("from ember.core.extend import run_op", "tape", 0),
    ("from ember.checkpoint import Checkpoint", "nn", 0),
    ("y = t._data.shape", "tape", 1),
    ("d = x._device", "nn", 1),
    ("v = var._value", None, 1),
    ("v = var._read()", "distribute", 1),
    ("tok = recording._active.set(())", "tape", 1),
    ("v = self._value", "nn", 0),  # an object's own state
    ("d = t._data", "core", 0),
    ("from ._data import even_batches", "distribute", 0),  # a relative import, own package
])
def test_the_check_catches_what_it_should(code, owner, expected):
    assert len(violations("snippet", owner, code)) == expected


def _declared_ember_dependencies(pkg: str) -> set[str]:
    """The ember packages ``pkg``'s pyproject depends on, with its test extra."""
    text = (ROOT / "packages" / pkg / "pyproject.toml").read_text()
    return set(re.findall(r'"ember-([a-z]+)', text)) - {pkg}


def _imported_ember_packages(source: str, label: str) -> set[str]:
    """ember packages ``source`` imports, except inside a ``try`` (an optional import the
    test handles, as ``pytest.importorskip`` does)."""
    tree = ast.parse(source, label)
    guarded = {id(n) for t in ast.walk(tree) if isinstance(t, ast.Try)
               for b in t.body for n in ast.walk(b)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] if node.module != "ember" else \
                [f"ember.{a.name}" for a in node.names]
        for n in names:
            parts = n.split(".")
            if len(parts) >= 2 and parts[0] == "ember":
                found.add(parts[1])
    return found


@pytest.mark.parametrize("pkg", PACKAGES)
def test_a_packages_tests_import_only_what_it_depends_on(pkg):
    """Each package's tests run in a session holding only it and its declared dependencies
    (``nox -s tests-<pkg>``): a test importing another ember package fails there at
    collection, not here, so say where it belongs (that package's tests, or
    integration_tests)."""
    allowed = _declared_ember_dependencies(pkg) | {pkg}
    bad = []
    for f in sorted((ROOT / "packages" / pkg / "tests").rglob("*.py")):
        if "programs" in f.relative_to(ROOT / "packages" / pkg / "tests").parts:
            continue  # whole programs, run by integration sessions with every package
        label = str(f.relative_to(ROOT))
        extra = _imported_ember_packages(f.read_text(), label) - allowed
        if extra:
            bad.append(f"{label}: imports ember.{', ember.'.join(sorted(extra))}")
    assert not bad, (f"ember-{pkg}'s tests run without these packages "
                     f"(it depends on {sorted(allowed - {pkg})}):\n" + "\n".join(bad))
