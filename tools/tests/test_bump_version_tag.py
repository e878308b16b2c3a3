"""``bump_version.py --tag``: a release gets a git tag ``v<version>`` on the commit that
holds that version, and nothing else gets one."""

from __future__ import annotations

import importlib.util
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bump_version", ROOT / "tools" / "bump_version.py")
assert _spec is not None and _spec.loader is not None
bump_version = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bump_version)


def _git(repo: pathlib.Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: pathlib.Path) -> pathlib.Path:
    """A git repository holding copies of every pyproject.toml, committed."""
    for f in bump_version.pyprojects():
        dest = tmp_path / f.relative_to(ROOT)
        dest.parent.mkdir(parents=True)
        shutil.copy(f, dest)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.name", "t")
    _git(tmp_path, "config", "user.email", "t@t")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "packages")
    return tmp_path


def test_tag_names_head_with_the_version(repo):
    version = bump_version.read_versions(repo)["packages/core/pyproject.toml"][0][1]
    assert bump_version.tag(repo) == f"v{version}"
    assert _git(repo, "rev-parse", f"v{version}^{{commit}}") == _git(repo, "rev-parse", "HEAD")
    assert _git(repo, "cat-file", "-t", f"v{version}") == "tag"  # annotated
    with pytest.raises(ValueError, match=f"v{version} exists already"):
        bump_version.tag(repo)


def test_an_uncommitted_bump_is_not_tagged_until_committed(repo):
    bump_version.bump("9.1.0", repo)
    with pytest.raises(ValueError, match=r"packages/\w+/pyproject.toml differs from HEAD's"):
        bump_version.tag(repo)
    assert _git(repo, "tag", "-l") == ""
    _git(repo, "commit", "-q", "-am", "version 9.1.0")
    assert bump_version.tag(repo) == "v9.1.0"
    assert _git(repo, "tag", "-l") == "v9.1.0"


def test_disagreeing_versions_are_not_tagged(repo):
    core = repo / "packages" / "core" / "pyproject.toml"
    core.write_text(bump_version._VERSION_LINE.sub('version = "7.0.0"', core.read_text()))
    _git(repo, "commit", "-q", "-am", "one package moved alone")
    with pytest.raises(ValueError, match="versions disagree"):
        bump_version.tag(repo)
    assert _git(repo, "tag", "-l") == ""


def test_tag_with_a_version_is_refused_before_writing(capsys):
    before = {f: f.read_text() for f in bump_version.pyprojects()}
    assert bump_version.main(["1.0.0", "--tag"]) == 2
    assert "--tag is a step of its own" in capsys.readouterr().err
    assert {f: f.read_text() for f in bump_version.pyprojects()} == before
