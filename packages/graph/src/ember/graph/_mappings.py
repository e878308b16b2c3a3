"""dicts and their subclasses (``OrderedDict``, ``defaultdict``, ...) in the nests that
``graph.function`` takes and returns: walked as dicts, and rebuilt as the same type."""

from __future__ import annotations

import collections
from collections.abc import Iterable
from typing import Any


def same_mapping(like: dict[Any, Any], items: Iterable[tuple[Any, Any]]) -> dict[Any, Any]:
    """A mapping of ``like``'s type (a ``defaultdict`` keeps its ``default_factory``) holding
    ``items`` in their order."""
    t: Any = type(like)
    if t is dict:
        return dict(items)
    if isinstance(like, collections.defaultdict):
        out: Any = t(like.default_factory)
        out.update(items)
        return out
    return t(items)  # type: ignore[no-any-return]
