"""The ambient state of summary writing, one ``ContextVar`` each.

Thread- and asyncio-safe by construction: a new thread starts with every value at its
default (no writer, always record, no step), so each thread sets its own.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

# The writer summaries go to; None means summary ops write nothing and return False.
default_writer: ContextVar[Any] = ContextVar("ember_summary_default_writer", default=None)

# The recording condition: None (always record), a bool, or a zero-argument callable.
record_condition: ContextVar[Any] = ContextVar("ember_summary_record_if", default=None)

# The default step: None, an int, or any step-like object read with int() at each write.
default_step: ContextVar[Any] = ContextVar("ember_summary_step", default=None)
