"""The three convolution primitives and the choice of algorithm behind each.

``conv2d`` (forward), ``conv2d_backprop_input`` and ``conv2d_backprop_filter`` are one
trilinear form ``<dy, conv2d(x, w)>`` differentiated three ways, so each one's gradient
is made of the other two (ember-tape's rules) and every order of derivative comes free.

Each primitive runs one of the algorithms of ``em.config.conv_algorithm``. With
``"auto"``, the first call for a geometry (op, shapes, dtype, device, strides, dilations,
padding) times every algorithm that applies a few times, interleaved, and keeps the
fastest by its best run (im2col unless another beats it by a margin), as cuDNN's
autotuner does; convolutions under ``AUTOTUNE_MIN_MACS`` multiply-adds use im2col untimed.
With ``em.config.deterministic``, :func:`rule` chooses instead, from the shapes alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .._config import CONV_CHOICES, DETERMINISTIC, _conv_algorithm
from .._registry import execute, register
from . import conv_fft, conv_im2col, conv_winograd
from .conv_geometry import Geometry, Pads

AUTOTUNE_MIN_MACS = 1_000_000
AUTOTUNE_RUNS = 3  # runs of each candidate, the first one (warm-up) included
AUTOTUNE_MARGIN = 0.1  # how much faster than im2col another algorithm must be
RULE_MIN_CHANNELS = 8  # input channels from which rule() takes Winograd
AUTOTUNE_DROP = 3.0  # candidates this many times slower than the fastest run no more
_FAST_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

# algorithm -> (forward, backprop_input, backprop_filter)
ALGORITHMS: dict[str, tuple[Callable[..., Any], ...]] = {
    "im2col": (conv_im2col.forward, conv_im2col.backprop_input, conv_im2col.backprop_filter),
    "fft": (conv_fft.forward, conv_fft.backprop_input, conv_fft.backprop_filter),
    "winograd": (conv_winograd.forward, conv_winograd.backprop_input,
                 conv_winograd.backprop_filter),
}
_PRODUCT = {"conv2d": 0, "conv2d_backprop_input": 1, "conv2d_backprop_filter": 2}

# (op, geometry, dtype, backend) -> the algorithm autotuning chose (kept by _config, below
# the ops, so that em.config can show and clear it without importing upwards)
_CHOSEN = CONV_CHOICES


def applicable(g: Geometry, dtype: Any) -> list[str]:
    """The algorithms that can compute this geometry in ``dtype`` (im2col always can)."""
    if np.dtype(dtype) not in _FAST_DTYPES or 0 in g.x_shape or 0 in g.w_shape:
        return ["im2col"]
    out = ["im2col", "fft"]
    if conv_winograd.supports(g):
        out.append("winograd")
    return out


def chosen_algorithms() -> dict[tuple[Any, ...], str]:
    """A copy of the autotuner's choices: (op, (x shape, w shape, strides, dilations,
    pads), dtype, (backend name, backend id)) -> algorithm."""
    return dict(_CHOSEN)


def clear_chosen() -> None:
    """Forget the autotuner's choices (the next call of each geometry times again)."""
    _CHOSEN.clear()


def _run(op: str, be: Any, a: Any, b: Any, g: Geometry) -> Any:
    xp = be.xp
    a, b = xp.asarray(a), xp.asarray(b)
    cands = applicable(g, a.dtype)
    setting = _conv_algorithm.get()
    i = _PRODUCT[op]
    if setting != "auto":
        algo = setting if setting in cands else "im2col"
    elif len(cands) == 1 or g.macs < AUTOTUNE_MIN_MACS:
        algo = "im2col"
    elif DETERMINISTIC[0]:
        algo = rule(cands, g)
    else:
        key = (op, g.key(), str(a.dtype), (be.name, id(be)))
        algo = _CHOSEN.get(key, "")
        if not algo:
            algo, out = _autotune(be, i, cands, a, b, g)
            _CHOSEN[key] = algo
            return out
    return xp.ascontiguousarray(ALGORITHMS[algo][i](xp, a, b, g))


def rule(cands: list[str], g: Geometry) -> str:
    """The algorithm ``em.config.deterministic`` takes, from the geometry alone: Winograd
    where it applies and the image has at least ``RULE_MIN_CHANNELS`` input channels,
    im2col elsewhere (what the autotuner chose on the CPU for LeNet's and ResNet's layers;
    FFT won none of them).

    Examples:
        >>> g = Geometry((8, 56, 56, 64), (3, 3, 64, 64), (1, 1), (1, 1), ((1, 1), (1, 1)))
        >>> rule(["im2col", "fft", "winograd"], g)
        'winograd'
        >>> rule(["im2col", "fft"], g)
        'im2col'
    """
    if "winograd" in cands and g.x_shape[3] >= RULE_MIN_CHANNELS:
        return "winograd"
    return "im2col"


def _autotune(be: Any, i: int, cands: list[str], a: Any, b: Any, g: Geometry
              ) -> tuple[str, Any]:
    """Time every candidate ``AUTOTUNE_RUNS`` times, interleaved (a burst of load on the
    machine then slows every candidate's run of one round, not one candidate's every
    run), and choose by :func:`pick`; the choice and its result."""
    times: dict[str, list[float]] = {name: [] for name in cands}
    outs: dict[str, Any] = {}
    running = list(cands)
    for _ in range(AUTOTUNE_RUNS):
        for name in running:
            outs.pop(name, None)
            be.synchronize()
            t0 = time.perf_counter()
            out = be.xp.ascontiguousarray(ALGORITHMS[name][i](be.xp, a, b, g))
            be.synchronize()
            times[name].append(time.perf_counter() - t0)
            outs[name] = out
            del out
        running = _contenders(times)
    best = pick(times)
    return best, outs[best]


def _contenders(times: dict[str, list[float]]) -> list[str]:
    """The candidates worth another run: none more than ``AUTOTUNE_DROP`` times slower
    than the fastest so far (FFT on ResNet's 3x3 layer is 10x slower than the others: its
    two more runs would add a second to the first step), and im2col always.

    Examples:
        >>> _contenders({"im2col": [0.2], "fft": [2.0], "winograd": [0.1]})
        ['im2col', 'winograd']
    """
    fastest = min(min(ts) for ts in times.values())
    return [name for name, ts in times.items()
            if name == "im2col" or min(ts) <= AUTOTUNE_DROP * fastest]


def pick(times: dict[str, list[float]]) -> str:
    """The algorithm to keep, given each candidate's run times (seconds).

    Each candidate's best run counts (noise only ever adds time); im2col, the one with
    no transform buffers, stays unless another is faster by ``AUTOTUNE_MARGIN``.

    Examples:
        >>> pick({"im2col": [0.30, 0.20], "winograd": [0.19, 0.25]})
        'im2col'
        >>> pick({"im2col": [0.30, 0.20], "fft": [0.5, 0.12]})
        'fft'
    """
    best = {name: min(ts) for name, ts in times.items() if ts}
    fastest = min(best, key=best.__getitem__)
    if "im2col" in best and best[fastest] > best["im2col"] * (1 - AUTOTUNE_MARGIN):
        return "im2col"
    return fastest


def _geometry(x_shape: Any, w_shape: Any, strides: Any, dilations: Any, pads: Pads
              ) -> Geometry:
    return Geometry(tuple(int(i) for i in x_shape), tuple(int(i) for i in w_shape),  # type: ignore[arg-type]
                    tuple(strides), tuple(dilations), pads)  # type: ignore[arg-type]


def _fwd(be: Any, x: Any, w: Any, strides: tuple[int, int], dilations: tuple[int, int],
         pads: Pads) -> Any:
    return _run("conv2d", be, x, w, _geometry(x.shape, w.shape, strides, dilations, pads))


def _bp_input(be: Any, dy: Any, w: Any, input_shape: tuple[int, ...],
              strides: tuple[int, int], dilations: tuple[int, int], pads: Pads) -> Any:
    return _run("conv2d_backprop_input", be, dy, w,
                _geometry(input_shape, w.shape, strides, dilations, pads))


def _bp_filter(be: Any, x: Any, dy: Any, filter_shape: tuple[int, ...],
               strides: tuple[int, int], dilations: tuple[int, int], pads: Pads) -> Any:
    return _run("conv2d_backprop_filter", be, x, dy,
                _geometry(x.shape, filter_shape, strides, dilations, pads))


_fwd_op = register("conv2d", _fwd, family="conv", promote="all")
_bp_input_op = register("conv2d_backprop_input", _bp_input, family="conv", promote="all")
_bp_filter_op = register("conv2d_backprop_filter", _bp_filter, family="conv",
                        promote="all")


def _attrs(strides: Any, dilations: Any, pads: Any) -> dict[str, Any]:
    return {"strides": tuple(int(s) for s in strides),
            "dilations": tuple(int(d) for d in dilations),
            "pads": tuple((int(a), int(b)) for a, b in pads)}


def _check(op: str, g: Geometry, dy_shape: Any = None) -> None:
    from .._errors import InvalidArgumentError

    if len(g.x_shape) != 4 or len(g.w_shape) != 4 or g.x_shape[3] != g.w_shape[2]:
        raise InvalidArgumentError(f"{op}: input shape {g.x_shape} and filter shape "
                                   f"{g.w_shape} do not make a 2-D convolution (NHWC input, "
                                   "(KH, KW, C_in, C_out) filters, C_in equal)")
    if min(min(g.pads[0]), min(g.pads[1])) < 0:
        raise InvalidArgumentError(f"{op}: padding must not be negative, got {g.pads}")
    if min(g.out_hw) < 1:
        raise InvalidArgumentError(f"{op}: filter {g.w_shape} (dilation {g.dilations}) is "
                                   f"larger than the padded input {g.x_shape}")
    if dy_shape is not None and tuple(dy_shape) != g.y_shape:
        raise InvalidArgumentError(f"{op}: the output gradient has shape {tuple(dy_shape)}, "
                                   f"but the convolution's output has shape {g.y_shape}")


def conv2d(x: Any, w: Any, strides: Any, dilations: Any, pads: Pads) -> Any:
    """The forward primitive: NHWC ``x`` and (KH, KW, C, CO) ``w``, explicit pads."""
    return execute(_fwd_op, (x, w), _attrs(strides, dilations, pads))


def conv2d_backprop_input(dy: Any, w: Any, input_shape: Any, strides: Any, dilations: Any,
                          pads: Pads) -> Any:
    """The gradient of :func:`conv2d` with respect to its input, of shape ``input_shape``."""
    a = _attrs(strides, dilations, pads)
    _check("conv2d_backprop_input", _geometry(input_shape, w.shape, a["strides"],
                                              a["dilations"], a["pads"]), dy.shape)
    return execute(_bp_input_op, (dy, w), {"input_shape": tuple(int(i) for i in input_shape),
                                           **_attrs(strides, dilations, pads)})


def conv2d_backprop_filter(x: Any, dy: Any, filter_shape: Any, strides: Any, dilations: Any,
                           pads: Pads) -> Any:
    """The gradient of :func:`conv2d` with respect to its filters, of ``filter_shape``."""
    a = _attrs(strides, dilations, pads)
    _check("conv2d_backprop_filter", _geometry(x.shape, filter_shape, a["strides"],
                                               a["dilations"], a["pads"]), dy.shape)
    return execute(_bp_filter_op, (x, dy), {"filter_shape": tuple(int(i) for i in filter_shape),
                                            **_attrs(strides, dilations, pads)})
