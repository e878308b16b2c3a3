"""The geometry of one 2-D convolution, shared by its algorithms.

A convolution is described once, from the forward's point of view: input ``(N, H, W, C)``,
filters ``(KH, KW, C, CO)``, output ``(N, OH, OW, CO)``, strides, dilations and explicit
padding ``((top, bottom), (left, right))``. The forward and both gradient products of the
same convolution share one ``Geometry``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

Pads = tuple[tuple[int, int], tuple[int, int]]


@dataclasses.dataclass(frozen=True)
class Geometry:
    """Shapes of one convolution (forward view)."""

    x_shape: tuple[int, int, int, int]
    w_shape: tuple[int, int, int, int]
    strides: tuple[int, int]
    dilations: tuple[int, int]
    pads: Pads

    @property
    def padded_hw(self) -> tuple[int, int]:
        """(H + top + bottom, W + left + right)."""
        (pt, pb), (pl, pr) = self.pads
        return (self.x_shape[1] + pt + pb, self.x_shape[2] + pl + pr)

    @property
    def dilated_k(self) -> tuple[int, int]:
        """The filter's spatial extent with its dilation: ((KH - 1) * dh + 1, ...)."""
        kh, kw = self.w_shape[:2]
        dh, dw = self.dilations
        return ((kh - 1) * dh + 1, (kw - 1) * dw + 1)

    @property
    def out_hw(self) -> tuple[int, int]:
        hp, wp = self.padded_hw
        kh, kw = self.dilated_k
        sh, sw = self.strides
        return ((hp - kh) // sh + 1, (wp - kw) // sw + 1)

    @property
    def y_shape(self) -> tuple[int, int, int, int]:
        oh, ow = self.out_hw
        return (self.x_shape[0], oh, ow, self.w_shape[3])

    @property
    def macs(self) -> int:
        """Multiply-adds of the direct forward."""
        n, oh, ow, co = self.y_shape
        kh, kw, c, _ = self.w_shape
        return n * oh * ow * co * kh * kw * c

    def key(self) -> tuple[Any, ...]:
        return (self.x_shape, self.w_shape, self.strides, self.dilations, self.pads)


def pad_image(xp: Any, x: Any, pads: Pads, extra: tuple[int, int] = (0, 0),
              value: float = 0.0) -> Any:
    """``x`` padded with ``value`` (zeros by default) by ``pads`` (and ``extra`` more
    rows/columns at the bottom/right)."""
    (pt, pb), (pl, pr) = pads
    pb, pr = pb + extra[0], pr + extra[1]
    if not (pt or pb or pl or pr):
        return x
    n, h, w, c = x.shape
    # a fill and one copy: several times faster than xp.pad (numpy 2.4, 1 MB images)
    out = xp.full((n, h + pt + pb, w + pl + pr, c), value, dtype=x.dtype)
    out[:, pt:pt + h, pl:pl + w, :] = x
    return out


def crop_image(x: Any, g: Geometry) -> Any:
    """The unpadded region of a padded-input-shaped array (the adjoint of ``pad_image``)."""
    (pt, _), (pl, _) = g.pads
    _, h, w, _ = g.x_shape
    return x[:, pt:pt + h, pl:pl + w, :]


def upsample(xp: Any, dy: Any, g: Geometry) -> Any:
    """``dy`` placed on the stride-1 output grid (zeros between strided outputs)."""
    sh, sw = g.strides
    if sh == 1 and sw == 1:
        return dy
    hp, wp = g.padded_hw
    kh, kw = g.dilated_k
    full = xp.zeros((dy.shape[0], hp - kh + 1, wp - kw + 1, dy.shape[3]), dtype=dy.dtype)
    full[:, ::sh, ::sw, :] = dy
    return full


def dilate_filter(xp: Any, w: Any, g: Geometry) -> Any:
    """The filter with zeros between its taps (its dilation made explicit)."""
    dh, dw = g.dilations
    if dh == 1 and dw == 1:
        return w
    kh, kw = g.dilated_k
    out = xp.zeros((kh, kw) + tuple(w.shape[2:]), dtype=w.dtype)
    out[::dh, ::dw] = w
    return out


CHUNK_ELEMENTS = 1 << 21  # 8 MB of float32 workspace per chunk of the batch


def batch_chunks(g: Geometry, per_image: int, budget: int | None = None
                 ) -> Iterator[tuple[int, int, Geometry]]:
    """(start, stop, geometry of that slice of the batch) for chunks of the batch whose
    workspace (``per_image`` elements an image) stays under ``budget`` elements
    (``CHUNK_ELEMENTS`` unless given)."""
    n = g.x_shape[0]
    step = max(1, (CHUNK_ELEMENTS if budget is None else budget) // max(1, per_image))
    for a in range(0, n, step):
        b = min(a + step, n)
        yield a, b, dataclasses.replace(g, x_shape=(b - a,) + g.x_shape[1:])
