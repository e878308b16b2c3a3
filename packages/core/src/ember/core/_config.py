"""Runtime settings of ember-core: ``em.config``.

Settings live in a ``contextvars.ContextVar`` (as the device scope does), so a thread or
an asyncio task that changes one does not change it for the others.

Examples:
    >>> import ember.core as em
    >>> em.config.conv_algorithm
    'auto'
    >>> with em.config.using(conv_algorithm="fft"):
    ...     em.config.conv_algorithm
    'fft'
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any, NamedTuple

from ._errors import InvalidArgumentError

# (op, geometry, dtype, backend) -> the algorithm the convolution autotuner chose; filled
# by ember.core._ops.conv_select
CONV_CHOICES: dict[tuple[Any, ...], str] = {}

CONV_ALGORITHMS = ("auto", "im2col", "fft", "winograd")

_conv_algorithm: ContextVar[str] = ContextVar("ember_conv_algorithm", default="auto")
# process-wide, as TensorFlow's: a data-loading thread started later must see it too
DETERMINISTIC = [False]


class PhysicalDevice(NamedTuple):
    """A device ember can use, as ``tf.config.list_physical_devices`` describes one."""

    name: str
    device_type: str


class LogicalDevice(NamedTuple):
    """A device tensors can be placed on, as ``tf.config.list_logical_devices`` describes
    one (``name`` is what ``em.device`` takes)."""

    name: str
    device_type: str


def _devices(device_type: Any, what: str) -> list[tuple[str, str, int]]:
    """(type, device name, index) of each device of ``device_type`` (any case; None: all)."""
    from ._device import gpus

    if device_type is not None and not isinstance(device_type, str):
        raise InvalidArgumentError(f"em.config.{what}: device_type must be a string such as "
                                   f"'GPU' or None; got {device_type!r}")
    found = [("CPU", "/cpu:0", 0)] + [("GPU", d.name, i) for i, d in enumerate(gpus())]
    want = None if device_type is None else device_type.upper()
    return [d for d in found if want is None or d[0] == want]


class Config:
    """ember-core's settings; the one instance is ``em.config``.

    Attributes:
        conv_algorithm: how ``conv2d`` and its two gradients compute:

            - ``"auto"`` (the default): time each algorithm that applies once per
              (op, shapes, dtype, device, strides, dilations, padding) and keep the fastest,
              as cuDNN's autotuner does; small convolutions (under about a million
              multiply-adds) use im2col without timing.
            - ``"im2col"``: windows gathered into a matrix, then one matrix product.
            - ``"fft"``: ``rfft2`` and one batched complex matrix product over channels.
            - ``"winograd"``: Winograd F(4x4, r x r) for filters of up to 5 taps a side
              (not 1x1), stride 1 and dilation 1; every other convolution falls back
              to im2col.

            Every algorithm computes the same function (to rounding); FFT and Winograd
            apply to float32 and float64, other dtypes use im2col. FFT's and Winograd's
            rounding is bounded relative to the largest output (of the image, of a
            tile), not to each element: in float32 a value far larger than its
            neighbours perturbs them (see the performance page); im2col's is not.
        deterministic: False (the default) or True: the two things in ember that could
            give other bits from run to run for the same inputs on the same machine (and
            the same number of BLAS threads) stop doing so (TensorFlow's
            ``enable_op_determinism``):

            - ``conv_algorithm="auto"`` chooses each convolution's algorithm by a fixed
              rule of its shapes instead of timing the candidates (timings differ between
              processes, and the algorithms round differently, so two runs of one seeded
              program drifted apart);
            - on a GPU, ``index_add`` (the gradient of ``gather`` and of indexing, so an
              ``Embedding``'s) sums the updates of a repeated index in a fixed pairwise
              order instead of with atomic additions, whose order varies (about
              2 log2(n) more kernels for n updates).

            It is one setting for the whole process, threads included.
    """

    __slots__ = ()

    @property
    def conv_algorithm(self) -> str:
        return _conv_algorithm.get()

    @conv_algorithm.setter
    def conv_algorithm(self, value: str) -> None:
        _conv_algorithm.set(_check_conv_algorithm(value))

    @property
    def deterministic(self) -> bool:
        return DETERMINISTIC[0]

    @deterministic.setter
    def deterministic(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise InvalidArgumentError(f"em.config.deterministic must be a bool; got "
                                       f"{value!r}")
        DETERMINISTIC[0] = value

    def enable_op_determinism(self) -> None:
        """``deterministic = True`` (TensorFlow's
        ``tf.config.experimental.enable_op_determinism()``): the same bits from run to run.

        Examples:
            >>> import ember.core as em
            >>> em.config.enable_op_determinism()
            >>> em.config.deterministic
            True
            >>> em.config.deterministic = False
        """
        self.deterministic = True

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _SETTINGS:
            raise AttributeError(f"em.config has no setting {name!r}; the settings are "
                                 f"{', '.join(_SETTINGS)}")
        object.__setattr__(self, name, value)

    @contextlib.contextmanager
    def using(self, **settings: Any) -> Iterator[Config]:
        """Change settings inside a ``with`` block and restore them after it.

        Args:
            **settings: setting names and their values (e.g. ``conv_algorithm="fft"``).

        Raises:
            AttributeError: a name that is not a setting.
            InvalidArgumentError: a value the setting does not take.
        """
        old = {k: getattr(self, k) for k in settings if k in _SETTINGS}
        for k, v in settings.items():
            setattr(self, k, v)
        try:
            yield self
        finally:
            for k, v in old.items():
                setattr(self, k, v)

    def list_physical_devices(self, device_type: str | None = None) -> list[PhysicalDevice]:
        """The devices ember can use (TensorFlow's ``tf.config.list_physical_devices``):
        the CPU and each usable GPU; ``device_type`` (``"CPU"``, ``"GPU"``, any case)
        keeps those of one type. An empty list is falsy: ``if
        em.config.list_physical_devices("GPU"):`` asks whether a GPU is there.

        Examples:
            >>> import ember.core as em
            >>> em.config.list_physical_devices("CPU")
            [PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]
        """
        return [PhysicalDevice(f"/physical_device:{t}:{i}", t)
                for t, _, i in _devices(device_type, "list_physical_devices")]

    def list_logical_devices(self, device_type: str | None = None) -> list[LogicalDevice]:
        """The devices tensors can be placed on (``tf.config.list_logical_devices``); each
        ``name`` is one ``em.device`` takes, in ember's spelling (``"/gpu:0"``).

        Examples:
            >>> import ember.core as em
            >>> em.config.list_logical_devices("CPU")
            [LogicalDevice(name='/cpu:0', device_type='CPU')]
        """
        return [LogicalDevice(name, t)
                for t, name, _ in _devices(device_type, "list_logical_devices")]

    def conv_choices(self) -> dict[tuple[Any, ...], str]:
        """What the convolution autotuner chose so far (``conv_algorithm="auto"``).

        Returns:
            A new dict: ``(product, (input shape, filter shape, strides, dilations, pads),
            dtype name, (backend name, backend id)) -> algorithm``, where ``product`` is
            ``"conv2d"``, ``"conv2d_backprop_input"`` or ``"conv2d_backprop_filter"``.
        """
        return dict(CONV_CHOICES)

    def clear_conv_choices(self) -> None:
        """Forget the autotuner's choices: each convolution is timed again on its next run
        (after changing the number of BLAS threads, say)."""
        CONV_CHOICES.clear()

    def __repr__(self) -> str:
        return "em.config(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in _SETTINGS) + ")"


_SETTINGS = ("conv_algorithm", "deterministic")


def _check_conv_algorithm(value: Any) -> str:
    if not isinstance(value, str) or value not in CONV_ALGORITHMS:
        raise InvalidArgumentError(f"em.config.conv_algorithm must be one of "
                                   f"{', '.join(map(repr, CONV_ALGORITHMS))}; got {value!r}")
    return value


config = Config()
