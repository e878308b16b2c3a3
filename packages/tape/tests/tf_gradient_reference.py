"""TensorFlow's answers for ``test_tf_gradient_parity.py``: run with an interpreter that has
TensorFlow 2.21 (never in ember's process) and compare its lines with the values the test
writes down::

    python packages/tape/tests/tf_gradient_reference.py
"""

from __future__ import annotations

import math

import numpy as np

try:  # run with TensorFlow's own interpreter; the tests never import this script
    import tensorflow as tf  # type: ignore[import-not-found]
except ImportError:
    tf = None

NAN, INF = math.nan, math.inf


def grad(f, x, dtype=tf.float32, **kw):
    x = tf.constant(x, dtype)
    with tf.GradientTape() as t:
        t.watch(x)
        y = f(x)
    g = t.gradient(y, x, **kw)
    return None if g is None else g.numpy().tolist()


def second(f, x, dtype=tf.float32):
    x = tf.constant(x, dtype)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        d = inner.gradient(y, x)
    return d.numpy().tolist(), outer.gradient(d, x).numpy().tolist()


z = tf.zeros_like
for dtype in (tf.float32, tf.float64):
    print(dtype.name)
    print("  where sqrt", grad(lambda x: tf.where(x > 0, tf.sqrt(x), z(x)), [-1., 0., 4.], dtype))
    print("  where sqrt(-x)", grad(lambda x: tf.where(x < 0, tf.sqrt(-x), z(x)), [1., 0., -4.],
                                   dtype))
    print("  where rsqrt", grad(lambda x: tf.where(x > 0, tf.math.rsqrt(x), z(x)), [-1., 0., 4.],
                                dtype))
    print("  where reciprocal", grad(lambda x: tf.where(x > 0, tf.math.reciprocal(x), z(x)),
                                     [-1., 0., 4.], dtype))
    print("  where log", grad(lambda x: tf.where(x > 0, tf.math.log(x), z(x)), [-1., 0., 4.],
                              dtype))
    print("  where 1/x", grad(lambda x: tf.where(x > 0, 1.0 / x, z(x)), [-1., 0., 4.], dtype))
    print("  sqrt", grad(tf.sqrt, [0., 4.], dtype))
for name, f in (("sqrt", tf.sqrt), ("rsqrt", tf.math.rsqrt), ("reciprocal", tf.math.reciprocal)):
    print(f"(f(x) - 1)^2 at 1, f={name}", second(lambda x, f=f: tf.square(f(x) - 1.0), [1.0],
                                                   tf.float64))
print("where sqrt, 2nd order", second(lambda x: tf.where(x > 0, tf.sqrt(x), z(x)), [-1., 0., 4.]))
print("clip_by_norm at 0", second(lambda x: tf.clip_by_norm(x, 1.0), [0., 0., 0.]))
print("clip_by_norm axes", grad(lambda x: tf.clip_by_norm(x, 1.0, axes=[1])
                                * tf.constant([[1., 2.], [3., 4.]]), [[0., 0.], [3., 4.]]))
print("clip_by_norm [3, 4]", grad(lambda x: tf.clip_by_norm(x, 1.0), [3., 4.]))
print("prod infinities", grad(lambda x: tf.reduce_prod(x, axis=1), [[-INF, -INF], [-INF, 1.]]))
print("prod zeros_inf_nan", grad(lambda x: tf.reduce_prod(x, axis=1),
                                 [[0., 2., 3.], [0., 0., 3.], [1., 2., 3.], [INF, 0., 2.],
                                  [NAN, 1., 2.]]))
print("prod all_axes", grad(lambda x: tf.reduce_prod(x), [[1., 0.], [3., 4.]]))
print("prod axis0_keepdims", grad(lambda x: tf.reduce_prod(x, axis=0, keepdims=True)
                                  * tf.constant([[1., 2.]]), [[1., 0.], [3., 4.]]))
print("prod axes_0_2", grad(lambda x: tf.reduce_prod(x, axis=[0, 2]) * tf.constant([1., 2., 3.]),
                            np.arange(12.).reshape(2, 3, 2) - 3))
print("prod negative_axis", grad(lambda x: tf.reduce_prod(x, axis=-1),
                                 [[0., 2., 3.], [-INF, 0.5, 2.]]))
for name, f in (("round", tf.round), ("floor", tf.floor), ("ceil", tf.math.ceil)):
    print(name, grad(f, [0.3, 1.7]), grad(f, [0.3, 1.7], unconnected_gradients="zero"),
          grad(lambda x, f=f: f(x) + x, [0.3, 1.7]))
print("sign", grad(tf.sign, [0.3, -1.7]))
for dtype in (tf.int32, tf.int64, tf.bool):
    x = tf.constant([1.0])
    i = tf.cast(tf.constant([1, 0]), dtype)
    v = tf.Variable(tf.cast(tf.constant([1, 1]), dtype))
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
    print(dtype.name, "sources, unconnected zero:",
          [g.numpy().tolist() for g in t.gradient(y, [x, i, v], unconnected_gradients="zero")],
          "none:", t.gradient(y, [i, v]))
