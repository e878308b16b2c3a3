"""How an iterator tells graph mode that it hands a traced function values.

``for x in dataset`` inside a ``graph.function`` runs in Python: a replay would reuse the
elements the traced call saw (a stale batch, silently). ember.data does not import
ember-core; where core is loaded, each element taken from an ``Iterator`` while something
records is reported to core's active tracers (``ember.core.recording.notify_host_input``),
which then run that function eagerly instead of replaying it.

Per element this costs one call of ``recording`` (core's ``active_recorders``, the
context variable's own ``get``) once core is loaded, and a ``sys.modules`` lookup before.
"""

from __future__ import annotations

import sys
from typing import Any

_WHAT = ("an ember.data iterator's next element (iterate outside the function and pass "
         "each element as an argument)")


def _before_core() -> Any:
    rec = sys.modules.get("ember.core.recording")
    get = getattr(rec, "active_recorders", None) if rec is not None else None
    if get is None:
        return ()
    global recording
    recording = get  # from now on, the context variable's get itself
    return get()


# what records now (a non-empty tuple when something does); see the module docstring
recording: Any = _before_core


def tell_tracers() -> None:
    """Report an element being taken to core's active tracers (called while something
    records)."""
    sys.modules["ember.core.recording"].notify_host_input(_WHAT)
