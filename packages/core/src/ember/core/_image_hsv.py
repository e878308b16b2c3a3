"""RGB <-> HSV on float images in [0, 1] (channels last), TensorFlow's formulas, in ember
ops: hue in [0, 1) (a sixth per sector from red), saturation ``range / max`` (0 where the
maximum is 0), value the maximum. ``em.image`` wraps them with its dtype handling."""

from __future__ import annotations

from typing import Any

from ._ops import array as _a
from ._ops import math as m
from ._ops import reduce as r


def rgb_to_hsv(x: Any) -> Any:
    red, green, blue = _a.split(x, 3, axis=-1)
    v = r.reduce_max(x, axis=-1, keepdims=True)
    spread = m.subtract(v, r.reduce_min(x, axis=-1, keepdims=True))
    s = m.where(m.greater(v, 0), m.divide(spread, m.where(m.greater(v, 0), v, 1.0)), 0.0)
    norm = m.divide(1.0 / 6.0, m.where(m.greater(spread, 0), spread, 1.0))
    h = m.where(m.equal(red, v), m.multiply(m.subtract(green, blue), norm),
                m.where(m.equal(green, v),
                        m.add(m.multiply(m.subtract(blue, red), norm), 2.0 / 6.0),
                        m.add(m.multiply(m.subtract(red, green), norm), 4.0 / 6.0)))
    h = m.where(m.less(h, 0), m.add(h, 1.0), h)
    h = m.where(m.greater(spread, 0), h, 0.0)
    return _a.concat([h, s, v], axis=-1)


def hsv_to_rgb(x: Any) -> Any:
    h, s, v = _a.split(x, 3, axis=-1)
    dh = m.multiply(h, 6.0)
    dr = m.clip_by_value(m.subtract(m.abs(m.subtract(dh, 3.0)), 1.0), 0.0, 1.0)
    dg = m.clip_by_value(m.subtract(2.0, m.abs(m.subtract(dh, 2.0))), 0.0, 1.0)
    db = m.clip_by_value(m.subtract(2.0, m.abs(m.subtract(dh, 4.0))), 0.0, 1.0)
    one_minus_s = m.subtract(1.0, s)
    return _a.concat([m.multiply(m.add(one_minus_s, m.multiply(s, c)), v)
                      for c in (dr, dg, db)], axis=-1)
