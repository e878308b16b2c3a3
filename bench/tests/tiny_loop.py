"""A tiny benchmark for compare.py's self-test: a pure-Python loop (no ember at all)."""

from __future__ import annotations

from _harness import compare


def figures() -> dict[str, float]:
    return compare({"sum(range(1000))": lambda: sum(range(1000))}, number=200, rounds=5)
