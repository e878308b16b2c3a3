"""One version for every ember distribution: read it, check it, or bump it everywhere.

Each distribution (``packages/*/pyproject.toml``) states its version, its code states it
again as ``ember.<name>.__version__`` (``src/ember/<name>/_version.py``, a literal: a
lookup of the installed metadata would need a module ``__getattr__``, which slows every
attribute of the package), and the ones that depend on siblings pin them exactly
(``ember-core==0.1.0``). All of them move together:

    python tools/bump_version.py            # print the version; fail if any disagree
    python tools/bump_version.py 0.2.0      # set it in every pyproject and every pin
    python tools/bump_version.py --tag      # tag the commit holding it: git tag v0.2.0

(``nox -s bump -- 0.2.0`` runs the second, ``nox -s bump -- --tag`` the third.) Every file
is checked before any is written, and each is replaced atomically, so a bad version or an
unexpected file changes nothing. The tag is a step of its own, after the bump and the
CHANGELOG are committed, so that it names a commit that holds the version: a release then
has a name to compare against (``python bench/compare.py v0.2.0``).
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
_VERSION_LINE = re.compile(r'^version = "([^"]+)"$', re.M)
_DUNDER_VERSION = re.compile(r'^__version__ = "([^"]+)"$', re.M)
_PIN = re.compile(r'"(ember-[a-z]+)(\[[a-z0-9,]+\])?==([^"]+)"')
# PEP 440 public versions: 1.2.3, 1.2.3rc1, 1.2.3.post1, 1.2.3.dev0, ...
_PEP440 = re.compile(r"^\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?$")


def pyprojects(root: pathlib.Path = ROOT) -> list[pathlib.Path]:
    """Every distribution's pyproject.toml."""
    return sorted((root / "packages").glob("*/pyproject.toml"))


def version_module(pyproject: pathlib.Path) -> pathlib.Path | None:
    """The distribution's ``src/ember/<name>/_version.py`` (its ``__version__``), or None
    (ember-all has no code)."""
    f = pyproject.parent / "src" / "ember" / pyproject.parent.name / "_version.py"
    return f if f.exists() else None


def read_versions(root: pathlib.Path = ROOT) -> dict[str, list[tuple[str, str]]]:
    """For each pyproject (relative path): ``[("version", v), ("ember-x", pinned v), ...,
    ("__version__", v of its _version.py)]``."""
    out: dict[str, list[tuple[str, str]]] = {}
    for f in pyprojects(root):
        text = f.read_text()
        found = _VERSION_LINE.findall(text)
        if len(found) != 1:
            raise ValueError(f"{f}: expected one 'version = \"...\"' line, found {len(found)}")
        rows = [("version", found[0])] + [(m.group(1), m.group(3)) for m in _PIN.finditer(text)]
        module = version_module(f)
        if module is not None:
            literal = _DUNDER_VERSION.findall(module.read_text())
            if len(literal) != 1:
                raise ValueError(f"{module}: expected one '__version__ = \"...\"' line, "
                                 f"found {len(literal)}")
            rows.append(("__version__", literal[0]))
        out[f.relative_to(root).as_posix()] = rows
    return out


def disagreements(root: pathlib.Path = ROOT) -> list[str]:
    """Lines naming each version or pin that differs from the first distribution's."""
    versions = read_versions(root)
    if not versions:
        return ["no packages/*/pyproject.toml found"]
    first_file, rows = next(iter(versions.items()))
    expected = rows[0][1]
    bad = []
    for f, rows in versions.items():
        for what, v in rows:
            if v != expected:
                bad.append(f"{f}: {what} is {v}, {first_file} has version {expected}")
    return bad


def bump(new: str, root: pathlib.Path = ROOT) -> list[pathlib.Path]:
    """Set every distribution's version and every sibling pin to ``new``.

    Args:
        new: A PEP 440 version such as ``"0.2.0"`` or ``"1.0.0rc1"``.
        root: The repository root.

    Returns:
        The files changed.

    Raises:
        ValueError: ``new`` is not a PEP 440 version, or a pyproject has no single
            version line (then nothing is written).
    """
    if not _PEP440.match(new):
        raise ValueError(f"bump: {new!r} is not a PEP 440 version (e.g. 0.2.0, 1.0.0rc1)")
    read_versions(root)  # every file has exactly one version line, or raise before writing
    changes = []
    for f in pyprojects(root):
        text = f.read_text()
        updated = _VERSION_LINE.sub(f'version = "{new}"', text)
        updated = _PIN.sub(lambda m: f'"{m.group(1)}{m.group(2) or ""}=={new}"', updated)
        if updated != text:
            changes.append((f, updated))
        module = version_module(f)
        if module is not None:
            text = module.read_text()
            updated = _DUNDER_VERSION.sub(f'__version__ = "{new}"', text)
            if updated != text:
                changes.append((module, updated))
    for f, updated in changes:
        fd, tmp = tempfile.mkstemp(dir=f.parent, prefix=f".{f.stem}.", suffix=".tmp")
        with os.fdopen(fd, "w") as out:
            out.write(updated)
        os.replace(tmp, f)
    return [f for f, _ in changes]


def _git(root: pathlib.Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)


def tag(root: pathlib.Path = ROOT) -> str:
    """Tag HEAD ``v<version>`` (an annotated tag) and return the tag's name.

    Raises:
        ValueError: the versions disagree, a pyproject.toml differs from HEAD's (HEAD would
            not hold the version the tag names: commit the bump first), or the tag exists.
        RuntimeError: git failed (not a repository, no identity for an annotated tag).
    """
    bad = disagreements(root)
    if bad:
        raise ValueError("tag: versions disagree:\n" + "\n".join(bad))
    version = next(iter(read_versions(root).values()))[0][1]
    files = [g for f in pyprojects(root) for g in (f, version_module(f)) if g is not None]
    for f in files:
        rel = f.relative_to(root).as_posix()
        at_head = _git(root, "show", f"HEAD:{rel}")
        if at_head.returncode or at_head.stdout != f.read_text():
            raise ValueError(f"tag: {rel} differs from HEAD's; commit the version bump (and "
                             f"the CHANGELOG), then tag")
    name = f"v{version}"
    existing = _git(root, "rev-parse", "--quiet", "--verify", f"refs/tags/{name}^{{commit}}")
    if existing.returncode == 0:
        raise ValueError(f"tag: {name} exists already (at {existing.stdout.strip()[:9]})")
    made = _git(root, "tag", "-a", name, "-m", f"ember {version}")
    if made.returncode:
        raise RuntimeError(f"tag: git tag {name}: {made.stderr.strip()}")
    return name


def main(argv: list[str]) -> int:
    if argv == ["--tag"]:
        try:
            name = tag()
        except (ValueError, RuntimeError) as e:
            print(e, file=sys.stderr)
            return 1
        print(f"tagged HEAD {name}; publish it with: git push origin {name}")
        return 0
    if "--tag" in argv:
        print("--tag is a step of its own: bump, commit the pyprojects and the CHANGELOG, "
              "then run --tag alone", file=sys.stderr)
        return 2
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        print(__doc__)
        return 2
    if argv:
        changed = bump(argv[0])
        print(f"version {argv[0]}: {len(changed)} pyproject.toml files changed")
    bad = disagreements()
    if bad:
        print("versions disagree:\n" + "\n".join(bad), file=sys.stderr)
        return 1
    print(read_versions()["packages/core/pyproject.toml"][0][1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
