"""A recorder for tests: which ops ran, as tapes are told of them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .. import recording


class OpNames:
    """A ``recording.Recorder`` that keeps the name of every op it is told of.

    Examples:
        >>> import ember.core as em
        >>> from ember.core.testing import recorded_op_names
        >>> with recorded_op_names() as names:
        ...     _ = em.exp(em.constant(1.0)) + 1.0
        >>> names
        ['exp', 'add']
    """

    def __init__(self) -> None:
        self.names: list[str] = []

    def record_op(self, op: Any, inputs: Any, attrs: Any, outputs: Any) -> None:
        self.names.append(op.name)

    def variable_read(self, variable: Any, value: Any) -> None:
        pass


@contextlib.contextmanager
def recorded_op_names() -> Iterator[list[str]]:
    """The names of the ops run inside the block, beside the recorders already active."""
    rec = OpNames()
    with recording.active(rec):
        yield rec.names


class OpLog:
    """A ``recording.Recorder`` that keeps what a tape keeps: each op's name, inputs, attrs
    and outputs (``ops``), and each variable read (``reads``), so the tensors it saw stay
    referenced as long as the log lives.

    Examples:
        >>> import ember.core as em
        >>> from ember.core.testing import OpLog
        >>> log = OpLog()
        >>> with em.recording.active(log):
        ...     y = em.exp(em.constant(0.0))
        >>> [(name, outputs[0] is y) for name, _, _, outputs in log.ops]
        [('exp', True)]
    """

    def __init__(self) -> None:
        self.ops: list[tuple[str, tuple[Any, ...], Any, tuple[Any, ...]]] = []
        self.reads: list[tuple[Any, Any]] = []

    def record_op(self, op: Any, inputs: Any, attrs: Any, outputs: Any) -> None:
        self.ops.append((op.name, inputs, attrs, outputs))

    def variable_read(self, variable: Any, value: Any) -> None:
        self.reads.append((variable, value))
