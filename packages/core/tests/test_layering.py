"""ember-core is layered: each module imports only modules of the layers below it.

Bottom up: dtypes, devices, backends and array conversion; Tensor; the registry and
``execute``; the op modules; Variable and the public modules; ``__init__``. No import
circle, so nothing is bound into a module after import, and each module imports alone.
"""

from __future__ import annotations

import ast
import json
import pathlib
import subprocess
import sys

import pytest

import ember.core as em

CORE = pathlib.Path(em.__file__).parent

# Every module of ember.core (but ``testing``), in an order where each imports only
# modules listed before it.
LAYERS: list[tuple[str, list[str]]] = [
    ("dtypes, devices, backends, array conversion", [
        "_version", "_errors", "_dtypes", "_erf", "_backend", "_cublaslt_direct", "_nvmath_products",
        "_cupy_backend", "_device", "_convert", "_promote", "_philox", "_philox_cuda",
        "_threads", "recording", "_config", "_device_errors",
        "_ops",  # the package's __init__: a namespace that imports nothing (checked below)
    ]),
    ("tensor", ["_shape", "_operators", "_tensor"]),
    ("registry and dispatch", ["_registry"]),
    ("ops", ["_ops._args", "_ops._fused", "_ops._scatter_sorted", "_ops._define",
             "_ops.math", "_ops.math_complex", "_ops._index_keys", "_ops.array", "_ops.reduce", "_ops.linalg",
             "_ops.conv_geometry", "_ops.conv_gather", "_ops.conv", "_ops.conv_im2col", "_ops.conv_fft",
             "_ops.conv_winograd", "_ops.conv_select", "_ops.conv_3d", "_ops.conv_depthwise",
             "_ops.define_nn", "_ops.nn_fused", "_ops.nn_dense", "_ops.creation", "_ops.random",
             "_ops.recurrent", "_ops.recurrent_fused", "_ops.recurrent_sequence",
             "_ops.recurrent_gru_sequence", "_ops.host", "_ops.ctc", "_ops.fft"]),
    ("variables and public modules", ["_variable", "_print", "_tensor_array", "_random_gamma",
                                      "random", "_initializers", "_nn_ctc", "nn_ops", "linalg",
                                      "math", "signal", "_image_resize", "_image_hsv", "image",
                                      "dtypes", "debugging",
                                      "control_flow",
                                      "_public_calls", "extend"]),
]
ORDER = [m for _, mods in LAYERS for m in mods]
RANK = {m: i for i, m in enumerate(ORDER)}
LAYER_OF = {m: name for name, mods in LAYERS for m in mods}


def _path(mod: str) -> pathlib.Path:
    p = CORE.joinpath(*mod.split("."))
    return p / "__init__.py" if p.is_dir() else p.with_suffix(".py")


def _core_modules_on_disk() -> set[str]:
    out = set()
    for p in CORE.rglob("*.py"):
        rel = p.relative_to(CORE).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        if parts and parts[0] != "testing":
            out.add(".".join(parts))
    return out


def _imports(mod: str) -> list[tuple[int, str]]:
    """(line, core module) for every import of a core module in ``mod``, anywhere in it
    (function-local imports included)."""
    is_pkg = _path(mod).name == "__init__.py"
    package = mod.split(".") if is_pkg else mod.split(".")[:-1]
    out = []
    for node in ast.walk(ast.parse(_path(mod).read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = base + (node.module.split(".") if node.module else [])
            elif (node.module or "").startswith("ember.core"):
                target = node.module.split(".")[2:]  # type: ignore[union-attr]
            else:
                continue
            for alias in node.names:  # ``from . import x``: x may be a submodule
                sub = ".".join(target + [alias.name])
                out.append((node.lineno, sub if sub in RANK else ".".join(target)))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("ember.core."):
                    out.append((node.lineno, alias.name[len("ember.core."):]))
    return [(line, m) for line, m in out if m]  # "" is ember.core itself


def test_every_core_module_has_a_layer() -> None:
    assert _core_modules_on_disk() == set(ORDER)


@pytest.mark.parametrize("mod", ORDER)
def test_imports_point_down(mod: str) -> None:
    """No module imports one listed after it: no circle, no import inside a function to
    dodge one, and (so) no name bound into a module after import."""
    up = [f"line {line}: {target} ({LAYER_OF.get(target, 'ember.core itself')})"
          for line, target in _imports(mod) if RANK.get(target, len(ORDER)) >= RANK[mod]]
    assert not up, f"{mod} ({LAYER_OF[mod]}) imports from its own or a higher layer: {up}"


def test_ops_package_init_imports_nothing() -> None:
    tree = ast.parse(_path("_ops").read_text())
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]


@pytest.mark.parametrize("mod", ORDER)
def test_no_module_sets_attributes_of_another(mod: str) -> None:
    """The old circle was held together by ``_registry.Tensor = Tensor`` and friends."""
    tree = ast.parse(_path(mod).read_text())
    modules = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
               and n.level for a in n.names if not a.name[0].isupper()}
    bad = [f"line {n.lineno}" for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AugAssign))
           for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
           if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
           and t.value.id in modules]
    assert not bad, f"{mod} assigns attributes of an imported module: {bad}"


_IN_ORDER = """
import importlib, json, sys, types
import ember
pkg = types.ModuleType("ember.core")  # the package without its __init__, which loads all
pkg.__path__ = [sys.argv[1]]
sys.modules["ember.core"] = pkg
for mod in sys.argv[2:]:
    importlib.import_module("ember.core." + mod)
    print(json.dumps([mod, sorted(m[len("ember.core."):] for m in sys.modules
                                  if m.startswith("ember.core."))]), flush=True)
"""


def test_modules_import_in_layer_order() -> None:
    """In a fresh interpreter, without ``ember/core/__init__`` (which loads everything),
    import the modules one by one in layer order: each imports with only the modules
    below it loaded, and loads nothing above it."""
    p = subprocess.run([sys.executable, "-c", _IN_ORDER, str(CORE), *ORDER],
                       capture_output=True, text=True, timeout=120)
    done = [json.loads(line) for line in p.stdout.splitlines()]
    assert p.returncode == 0, f"importing {ORDER[len(done)]} failed:\n{p.stderr[-3000:]}"
    for mod, loaded in done:
        above = [m for m in loaded if RANK.get(m, len(ORDER)) > RANK[mod]]
        assert not above, f"{mod} ({LAYER_OF[mod]}) loads higher modules: {above}"
    assert [mod for mod, _ in done] == ORDER
