"""``OpDef.family`` names the file of an op: core's ops of family F are registered in
``ember/core/_ops/F.py``, or in one of its parts ``_ops/F_<part>.py`` (the convolution
algorithms: ``conv_select.py`` registers the three convolution primitives); ember-tape
keeps their gradient rules in ``_rules/F.py``, checked in its
``tests/test_rules_coverage.py``."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import ember.core as em

CORE = pathlib.Path(em.__file__).parent
# The module of each family, where it is not the family's name: the primitive nn
# activations are in define_nn.py (nn_ops.py is the public module of nn composites).
MODULE_OF_FAMILY = {"nn": "define_nn"}
# The op modules in an order where each imports only those before it (test_layering).
OP_MODULES = ["math", "math_complex", "array", "reduce", "linalg", "conv", "conv_geometry",
              "conv_gather", "conv_im2col",
              "conv_fft", "conv_winograd", "conv_select", "conv_3d", "conv_depthwise",
              "define_nn", "nn_fused", "nn_dense", "creation",
              "random", "recurrent", "recurrent_fused", "recurrent_sequence", "recurrent_gru_sequence",
              "host", "ctc", "fft"]


def _family_of_module(mod: str) -> str:
    """The family a module's ops belong to: its name, or the part before ``_``."""
    inverse = {v: k for k, v in MODULE_OF_FAMILY.items()}
    return inverse.get(mod, mod.split("_")[0])

_REGISTERED_BY = """
import importlib, json, sys, types
import ember
pkg = types.ModuleType("ember.core")  # the package without its __init__, which loads all
pkg.__path__ = [sys.argv[1]]
sys.modules["ember.core"] = pkg
from ember.core._registry import REGISTRY
seen = set(REGISTRY)
print(json.dumps(["(below the ops)", {n: REGISTRY[n].family for n in seen}]))
for mod in sys.argv[2:]:
    importlib.import_module("ember.core._ops." + mod)
    new = {n: REGISTRY[n].family for n in set(REGISTRY) - seen}
    seen |= set(new)
    print(json.dumps([mod, new]))
"""


def _core_ops() -> set[str]:
    return {n for n, op in em.REGISTRY.items()
            if getattr(op.forward, "__module__", "").startswith("ember.core.")}


def test_each_op_is_registered_in_the_module_of_its_family():
    p = subprocess.run([sys.executable, "-c", _REGISTERED_BY, str(CORE), *OP_MODULES],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    where = {}
    for line in p.stdout.splitlines():
        mod, ops = json.loads(line)
        for name, family in ops.items():
            where[name] = (mod, family)
    wrong = {n: f"registered in {mod}.py, family {fam!r}" for n, (mod, fam) in where.items()
             if _family_of_module(mod) != fam}
    assert wrong == {}
    assert set(where) == _core_ops()  # core registers ops nowhere else


def test_families_are_the_op_modules():
    families = {em.REGISTRY[n].family for n in _core_ops()}
    modules = {p.stem for p in (CORE / "_ops").glob("*.py") if not p.stem.startswith("_")}
    assert modules == set(OP_MODULES)
    assert families == {_family_of_module(m) for m in OP_MODULES}
