"""Fail when a test module never runs in CI: it skips entirely in every session that
collected it, or no session collects it at all.

Every pytest run of a CI session writes a record (``tools/ember_skip_record.py``): per test
module, how many of its tests ran, skipped or were deselected. This script reads all of them
and checks every ``test_*.py`` under ``packages/*/tests``, ``integration_tests`` and
``docs``. A module whose tests are all deselected (marked ``slow``) runs in ``nox -s slow``
and is only listed. ``nox -s skips`` runs it after the other sessions.

    python tools/check_skips.py RECORD_DIR
"""

from __future__ import annotations

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
TEST_GLOBS = ("packages/*/tests/**/test_*.py", "integration_tests/**/test_*.py",
              "docs/**/test_*.py")
# modules that can only run where CI has no way to go, with the reason (kept short)
ONLY_OUTSIDE_CI: dict[str, str] = {}


def test_modules(root: pathlib.Path = ROOT) -> list[str]:
    found: set[str] = set()
    for pattern in TEST_GLOBS:
        found.update(p.relative_to(root).as_posix() for p in root.glob(pattern))
    return sorted(found)


def load(record_dir: pathlib.Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(record_dir.glob("*.json"))]


def problems(modules: list[str], records: list[dict],
             only_outside_ci: dict[str, str] | None = None) -> tuple[list[str], list[str]]:
    """(failures, notes): a line for each module that never runs, and for each that runs
    only in the slow session."""
    allowed = ONLY_OUTSIDE_CI if only_outside_ci is None else only_outside_ci
    fails, notes = [], []
    for mod in modules:
        seen = [(r["session"], r["modules"][mod]) for r in records if mod in r["modules"]]
        if any(c["ran"] for _, c in seen):
            continue
        if mod in allowed:
            notes.append(f"{mod}: runs outside CI only ({allowed[mod]})")
        elif not seen:
            fails.append(f"{mod}: no CI session collects it")
        elif all(c["skipped"] == 0 for _, c in seen):
            notes.append(f"{mod}: every test is marked slow (runs in `nox -s slow`)")
        else:
            where = ", ".join(sorted({s for s, c in seen if c["skipped"]}))
            fails.append(f"{mod}: skips entirely in every CI session that collects it ({where})")
    return fails, notes


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    record_dir = pathlib.Path(argv[0])
    records = load(record_dir)
    if not records:
        print(f"check_skips: no records in {record_dir}: run the test sessions first")
        return 1
    fails, notes = problems(test_modules(), records)
    sessions = sorted({r["session"] for r in records})
    print(f"check_skips: {len(test_modules())} test modules, records of {len(records)} pytest "
          f"runs ({', '.join(sessions)})")
    for line in notes:
        print("  note:", line)
    for line in fails:
        print("  NEVER RUNS:", line)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
