"""Exception types. Every message names the op and its offending operands."""

from __future__ import annotations


class InvalidArgumentError(ValueError):
    """An op got arguments it cannot work with (shapes, values, axes)."""


class DTypeError(InvalidArgumentError, TypeError):
    """An op got an operand of a dtype it does not accept."""


class DeviceError(InvalidArgumentError):
    """Operands live on different devices, or a device does not exist."""
