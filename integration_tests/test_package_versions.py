"""One version for all ember distributions: every pyproject and every sibling pin agree."""

from __future__ import annotations

import importlib.util
import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("bump_version", ROOT / "tools" / "bump_version.py")
assert _spec is not None and _spec.loader is not None
bump_version = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bump_version)


def test_all_distributions_and_pins_share_one_version():
    versions = bump_version.read_versions()
    assert len(versions) >= 8, sorted(versions)  # the seven packages and ember-all
    pins = [what for rows in versions.values() for what, _ in rows[1:]]
    assert "ember-core" in pins and "ember-tape" in pins  # the pins are found at all
    assert bump_version.disagreements() == []


@pytest.fixture
def tree(tmp_path):
    for f in bump_version.pyprojects():
        for g in (f, bump_version.version_module(f)):
            if g is not None:
                dest = tmp_path / g.relative_to(ROOT)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(g, dest)
    return tmp_path


def test_each_package_states_its_version_as_tf_and_keras_do():
    import importlib

    versions = bump_version.read_versions()
    expected = versions["packages/core/pyproject.toml"][0][1]
    for name in ("core", "tape", "nn", "checkpoint", "summary", "data", "graph", "distribute"):
        assert ("__version__", expected) in versions[f"packages/{name}/pyproject.toml"]
        assert importlib.import_module(f"ember.{name}").__version__ == expected


def test_a_stale_version_literal_is_named(tree):
    module = tree / "packages" / "nn" / "src" / "ember" / "nn" / "_version.py"
    module.write_text(module.read_text().replace('__version__ = "', '__version__ = "9.'))
    bad = bump_version.disagreements(tree)
    assert len(bad) == 1 and bad[0].startswith("packages/nn/pyproject.toml: __version__ is 9.")


def test_a_disagreeing_pin_is_named(tree):
    nn = tree / "packages" / "nn" / "pyproject.toml"
    text = nn.read_text()
    pinned = bump_version.read_versions(tree)["packages/core/pyproject.toml"][0][1]
    nn.write_text(text.replace(f'"ember-tape=={pinned}"', '"ember-tape==9.9.9"'))
    assert bump_version.disagreements(tree) == [
        f"packages/nn/pyproject.toml: ember-tape is 9.9.9, packages/all/pyproject.toml "
        f"has version {pinned}"]


def test_bump_sets_every_version_and_pin(tree):
    changed = bump_version.bump("1.2.0rc1", tree)
    modules = [m for f in bump_version.pyprojects(tree)
               if (m := bump_version.version_module(f)) is not None]
    assert len(modules) == 8 and len(changed) == len(bump_version.pyprojects(tree)) + 8
    versions = bump_version.read_versions(tree)
    assert {v for rows in versions.values() for _, v in rows} == {"1.2.0rc1"}
    all_text = (tree / "packages" / "all" / "pyproject.toml").read_text()
    assert '"ember-core[gpu]==1.2.0rc1"' in all_text  # pins with extras move too
    assert bump_version.disagreements(tree) == []


def test_bump_rejects_a_bad_version_and_writes_nothing(tree):
    before = {f: f.read_text() for f in bump_version.pyprojects(tree)}
    with pytest.raises(ValueError, match="not a PEP 440 version"):
        bump_version.bump("v2", tree)
    assert {f: f.read_text() for f in bump_version.pyprojects(tree)} == before


def test_every_distribution_ships_the_license_text():
    """Each package directory holds a copy of the root LICENSE (hatchling puts it in the
    wheel's and sdist's metadata), identical to it."""
    root_text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in root_text and "Version 2.0, January 2004" in root_text
    for f in bump_version.pyprojects():
        assert 'license = "Apache-2.0"' in f.read_text(), f
        copy = f.parent / "LICENSE"
        assert copy.is_file() and copy.read_text() == root_text, copy
