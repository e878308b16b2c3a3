"""Keras 3 arguments that ember takes only at their default.

Keras 3 writes some arguments into every layer config it saves (``quantization_config``
of Dense, ``groups`` of a convolution, ``renorm`` of BatchNormalization, ...), so a
``.keras`` file from Keras names them even when nobody set them. ember accepts each at its
Keras default, which is what ember computes anyway, so those files load; any other value
asks for something ember does not do, and is refused by name rather than ignored.
"""

from __future__ import annotations

from typing import Any


def only_default(who: str, **given: tuple[Any, Any, str]) -> None:
    """Refuse each ``name=(value, default, why)`` whose value is not its default.

    Raises:
        ValueError: naming the class, the argument, its value and why ember lacks it.
    """
    for name, (value, default, why) in given.items():
        if value is default or (not isinstance(value, bool) and value == default
                                and type(value) is type(default)):
            continue
        raise ValueError(f"{who}: {name}={value!r} is not supported ({why}); ember takes "
                         f"only {name}={default!r}, Keras's default, which files saved by "
                         f"Keras 3 name")
