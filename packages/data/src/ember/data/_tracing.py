"""How an iterator tells graph mode that it hands a traced function values.

``for x in dataset`` inside a ``graph.function`` runs in Python: a replay would reuse the
elements the traced call saw (a stale batch, silently). ember.data does not import
ember-core; where core is loaded, each element taken from an ``Iterator`` is reported to
its active tracers (``ember.core.recording.notify_host_input``), which then run that
function eagerly instead of replaying it.
"""

from __future__ import annotations

import sys

_WHAT = ("an ember.data iterator's next element (iterate outside the function and pass "
         "each element as an argument)")


_NOTIFY: list = []  # core's notify_host_input, once core is loaded (looked up per element)


def tell_tracers() -> None:
    """Report an element being taken to core's active tracers, if core is loaded."""
    if not _NOTIFY:
        rec = sys.modules.get("ember.core.recording")
        notify = getattr(rec, "notify_host_input", None) if rec is not None else None
        if notify is None:
            return
        _NOTIFY.append(notify)
    _NOTIFY[0](_WHAT)
