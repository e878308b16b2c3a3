"""A pytest plugin that records, per test module, how many of its tests ran, skipped or were
deselected in one pytest run, for ``tools/check_skips.py``.

nox loads it into every pytest run of a CI session (``-p ember_skip_record``, with ``tools/``
on ``PYTHONPATH``) and sets ``EMBER_SKIP_RECORD`` to the JSON file to write. Without that
variable it does nothing.
"""

from __future__ import annotations

import json
import os
import pathlib
from collections import defaultdict
from typing import Any

_counts: dict[str, dict[str, int]] = defaultdict(
    lambda: {"ran": 0, "skipped": 0, "deselected": 0})


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_collectreport(report: Any) -> None:
    if report.skipped:  # the whole module skipped at import (importorskip, skip(allow_module_level))
        _counts[_module(report.nodeid)]["skipped"] += 1


def pytest_deselected(items: list[Any]) -> None:
    for item in items:
        _counts[_module(item.nodeid)]["deselected"] += 1


def pytest_runtest_logreport(report: Any) -> None:
    if report.when == "call" or (report.when == "setup" and not report.passed):
        key = "skipped" if report.skipped and not hasattr(report, "wasxfail") else "ran"
        _counts[_module(report.nodeid)][key] += 1


def pytest_sessionfinish(session: Any) -> None:
    path = os.environ.get("EMBER_SKIP_RECORD")
    if not path:
        return
    root = pathlib.Path(str(session.config.rootpath))
    out = pathlib.Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    modules = {}
    for nodeid, c in sorted(_counts.items()):
        name = pathlib.Path(nodeid)
        if name.is_absolute():
            name = name.relative_to(root)
        modules[name.as_posix()] = c
    out.write_text(json.dumps({"session": os.environ.get("EMBER_SKIP_SESSION", ""),
                               "modules": modules}, indent=1))
