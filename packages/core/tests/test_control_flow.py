"""Functional control flow (em.map_fn, scan, foldl, foldr, while_loop, cond, case,
switch_case, vectorized_map): TensorFlow 2's documented behaviour and examples, results
against numpy, nested structures, zero-length inputs and the errors, each naming the
function and the argument. (Gradients: packages/tape/tests/test_control_flow_gradients.py.)
"""

from __future__ import annotations

import collections

import numpy as np
import pytest

import ember.core as em

Pair = collections.namedtuple("Pair", "j k")


class Spec:
    """A TensorSpec-like output signature (graph.TensorSpec's dtype and shape)."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype


def _np(x):
    return x.numpy()


# --- map_fn ------------------------------------------------------------------------------


def test_map_fn_tensorflows_examples():
    out = em.map_fn(lambda t: em.range(t, t + 3), em.constant([3, 5, 2]))
    np.testing.assert_array_equal(_np(out), [[3, 4, 5], [5, 6, 7], [2, 3, 4]])
    assert out.dtype == em.int32

    sq = em.map_fn(lambda x: x * x, np.array([1, 2, 3, 4, 5, 6]))
    np.testing.assert_array_equal(_np(sq), [1, 4, 9, 16, 25, 36])
    assert sq.dtype == em.int64  # numpy's int64 array keeps its dtype

    elems = (np.array([1, 2, 3]), np.array([-1, 1, -1]))
    prod = em.map_fn(lambda x: x[0] * x[1], elems, fn_output_signature=em.int64)
    np.testing.assert_array_equal(_np(prod), [-1, 2, -3])

    pos, neg = em.map_fn(lambda x: (x, -x), np.array([1, 2, 3]),
                         fn_output_signature=(em.int64, em.int64))
    np.testing.assert_array_equal(_np(pos), [1, 2, 3])
    np.testing.assert_array_equal(_np(neg), [-1, -2, -3])


def test_map_fn_matches_a_numpy_loop(device):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 3, 2)).astype(np.float32)
    out = em.map_fn(lambda r: em.matmul(em.transpose(r), r) + em.reduce_sum(em.sin(r)),
                    em.constant(x))
    want = np.stack([r.T @ r + np.sin(r).sum() for r in x])
    assert out.shape == (5, 2, 2) and out.device == em.constant(1.0).device
    np.testing.assert_allclose(_np(out), want, rtol=1e-5, atol=1e-6)


def test_map_fn_calls_fn_once_per_element_in_order():
    seen = []
    em.map_fn(lambda r: seen.append(int(r)) or r, em.constant([4, 7, 1]))
    assert seen == [4, 7, 1]


def test_map_fn_nested_input_and_output_structures():
    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    b = np.array([1.0, -1.0, 2.0], np.float32)
    elems = {"a": a, "pair": Pair(b, np.array([1, 2, 3], np.int32))}

    def fn(e):
        assert set(e) == {"a", "pair"} and isinstance(e["pair"], Pair)
        return [e["a"] * e["pair"].j, {"n": e["pair"].k + 1}]

    out = em.map_fn(fn, elems, fn_output_signature=[em.float32, {"n": em.int32}])
    assert isinstance(out, list) and isinstance(out[1], dict)
    np.testing.assert_allclose(_np(out[0]), a * b[:, None])
    np.testing.assert_array_equal(_np(out[1]["n"]), [2, 3, 4])

    # without a signature, fn returns elems' structure and dtypes: so does map_fn
    same = em.map_fn(lambda e: {"a": e["a"] + 1, "pair": Pair(e["pair"].j * 2, e["pair"].k)},
                     elems)
    assert isinstance(same["pair"], Pair)
    np.testing.assert_allclose(_np(same["a"]), a + 1)
    np.testing.assert_allclose(_np(same["pair"].j), b * 2)


def test_map_fn_reads_variables_and_converts_python_results():
    v = em.Variable([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(_np(em.map_fn(lambda r: r * 2, v)), [[2, 4], [6, 8]])
    # a Python number takes the signature's dtype, as TF's TensorArray.write converts it
    ones = em.map_fn(lambda r: 1, em.zeros([3, 2]), fn_output_signature=em.float32)
    assert ones.dtype == em.float32 and _np(ones).tolist() == [1, 1, 1]
    # dtype= is TF's deprecated name for fn_output_signature
    lens = em.map_fn(lambda r: em.size(r), em.zeros([2, 5]), dtype=em.int32)
    assert _np(lens).tolist() == [5, 5]


def test_map_fn_tensorspec_signature_shapes():
    out = em.map_fn(lambda r: r[:2], em.zeros([3, 4]), fn_output_signature=Spec([2], em.float32))
    assert out.shape == (3, 2)
    em.map_fn(lambda r: r[:2], em.zeros([3, 4]), fn_output_signature=Spec([None], em.float32))
    with pytest.raises(em.InvalidArgumentError, match=r"map_fn: .*shape \(3,\).*does not fit "
                                                      r"the shape \(2,\)"):
        em.map_fn(lambda r: r[:3], em.zeros([3, 4]), fn_output_signature=Spec([2], em.float32))


def test_map_fn_zero_length_elems():
    # without a signature: elems' dtype, shape (0,) (TensorFlow's eager TensorArray stack)
    calls = []
    out = em.map_fn(lambda r: calls.append(r) or r * 2, em.zeros([0, 3], em.float64))
    assert calls == [] and out.shape == (0,) and out.dtype == em.float64
    # a dtype signature: that dtype
    out = em.map_fn(lambda r: em.cast(r, em.int64), em.zeros([0, 3]), fn_output_signature=em.int64)
    assert out.shape == (0,) and out.dtype == em.int64
    # a TensorSpec of fully known shape: (0, *shape); a nested signature: its structure
    a, b = em.map_fn(lambda r: r, em.zeros([0, 3]),
                     fn_output_signature=(Spec([2, 2], em.int32), Spec([None], em.bool_)))
    assert (a.shape, a.dtype, b.shape, b.dtype) == ((0, 2, 2), em.int32, (0,), em.bool_)
    t = em.map_fn(lambda e: e, (em.zeros([0]), em.zeros([0], em.int32)))
    assert isinstance(t, tuple) and [x.dtype for x in t] == [em.float32, em.int32]


def test_map_fn_back_prop_false_gives_the_same_values():
    x = em.constant([1.0, 2.0])
    np.testing.assert_allclose(_np(em.map_fn(em.exp, x, back_prop=False)), np.exp([1.0, 2.0]),
                               rtol=1e-6)


def test_map_fn_dtype_mismatch_is_an_error():
    with pytest.raises(em.DTypeError, match=r"map_fn: fn's result \(for element 0\) has dtype "
                                            r"float32, but fn_output_signature is not given, so "
                                            r"fn must return elems' dtypes \(int32\)"):
        em.map_fn(lambda x: em.cast(x, em.float32), em.constant([1, 2]))
    with pytest.raises(TypeError, match=r"fn_output_signature says int64"):
        em.map_fn(lambda x: x, em.constant([1, 2]), fn_output_signature=em.int64)


def test_map_fn_structure_mismatch_is_an_error():
    elems = (em.constant([1, 2]), em.constant([3, 4]))
    with pytest.raises(TypeError, match=r"map_fn: .*expected a tuple, got a list"):
        em.map_fn(lambda x: [x[0], x[1]], elems)
    with pytest.raises(ValueError, match=r"map_fn: .*expected 2 entries, got 3"):
        em.map_fn(lambda x: (x[0], x[1], x[0]), elems)
    with pytest.raises(ValueError, match=r"map_fn: .*expected a single value, got a nested"):
        em.map_fn(lambda x: (x, x), em.constant([1, 2]))
    with pytest.raises(ValueError, match=r"expected the keys \['a'\], got \['b'\]"):
        em.map_fn(lambda x: {"b": x["a"]}, {"a": em.constant([1])})


def test_map_fn_results_of_different_shapes_are_an_error():
    for infer_shape in (True, False):
        with pytest.raises(em.InvalidArgumentError, match=r"map_fn: fn's result has shape \(1,\) "
                                                          r"for element 0 but \(2,\) for element 1"):
            em.map_fn(lambda n: em.zeros([n]), em.constant([1, 2]), infer_shape=infer_shape,
                      fn_output_signature=em.float32)


def test_map_fn_argument_errors():
    with pytest.raises(TypeError, match="map_fn: fn must be callable"):
        em.map_fn(3, em.constant([1]))
    with pytest.raises(em.InvalidArgumentError, match=r"map_fn: elems\[0\] is a scalar"):
        em.map_fn(lambda x: x, [1, 2, 3])  # a list is a structure of three scalars
    with pytest.raises(em.InvalidArgumentError, match=r"map_fn: elems is a scalar"):
        em.map_fn(lambda x: x, em.constant(1.0))
    with pytest.raises(em.InvalidArgumentError, match=r"same length along axis 0, got "
                                                      r"elems\[0\]: 2, elems\[1\]: 3"):
        em.map_fn(lambda x: x, (em.ones([2]), em.ones([3])))
    with pytest.raises(ValueError, match="map_fn: elems must hold at least one tensor"):
        em.map_fn(lambda x: x, ())
    with pytest.raises(TypeError, match="map_fn: parallel_iterations must be a positive integer"):
        em.map_fn(lambda x: x, em.ones([2]), parallel_iterations=0)
    with pytest.raises(TypeError, match="map_fn: swap_memory must be a bool"):
        em.map_fn(lambda x: x, em.ones([2]), swap_memory="yes")
    with pytest.raises(TypeError, match="map_fn: fn_output_signature .* must be a dtype or a "
                                        "TensorSpec"):
        em.map_fn(lambda x: x, em.ones([2]), fn_output_signature="not a dtype")
    # the hints are accepted and change nothing
    out = em.map_fn(lambda x: x + 1, em.ones([2]), parallel_iterations=4, swap_memory=True)
    assert _np(out).tolist() == [2, 2]


# --- scan --------------------------------------------------------------------------------


def test_scan_tensorflows_examples():
    elems = np.array([1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(_np(em.scan(lambda a, x: a + x, elems)), [1, 3, 6, 10, 15, 21])
    np.testing.assert_array_equal(_np(em.scan(lambda a, x: a + x, elems, reverse=True)),
                                  [21, 20, 18, 15, 11, 6])
    sum_one = em.scan(lambda a, x: x[0] - x[1] + a, (elems + 1, elems), np.array(0))
    np.testing.assert_array_equal(_np(sum_one), [1, 2, 3, 4, 5, 6])
    fib = em.scan(lambda a, _: (a[1], a[0] + a[1]), np.array([1, 0, 0, 0, 0, 0]),
                  (np.array(0), np.array(1)))
    assert isinstance(fib, tuple)
    np.testing.assert_array_equal(_np(fib[0]), [1, 1, 2, 3, 5, 8])
    np.testing.assert_array_equal(_np(fib[1]), [1, 2, 3, 5, 8, 13])


def test_scan_matches_numpy(device):
    rng = np.random.default_rng(1)
    x = rng.uniform(0.5, 1.5, size=(6, 3)).astype(np.float32)
    np.testing.assert_allclose(_np(em.scan(lambda a, r: a * r, em.constant(x))),
                               np.cumprod(x, axis=0), rtol=1e-6)
    # a leaky running mean from an initializer, and its reverse
    ema = em.scan(lambda a, r: 0.5 * a + r, em.constant(x), em.zeros([3]))
    want, acc = [], np.zeros(3, np.float32)
    for r in x:
        acc = 0.5 * acc + r
        want.append(acc)
    np.testing.assert_allclose(_np(ema), want, rtol=1e-6)
    back = em.scan(lambda a, r: 0.5 * a + r, em.constant(x), em.zeros([3]), reverse=True)
    want, acc = [None] * 6, np.zeros(3, np.float32)
    for i in range(5, -1, -1):
        acc = 0.5 * acc + x[i]
        want[i] = acc
    np.testing.assert_allclose(_np(back), np.stack(want), rtol=1e-6)


def test_scan_without_initializer_starts_with_the_first_element():
    seen = []

    def fn(a, x):
        seen.append((float(a[0]), float(x[1])))
        return (a[0] + x[0], a[1] * x[1])

    out = em.scan(fn, (em.constant([1.0, 2.0, 3.0]), em.constant([2.0, 3.0, 4.0])))
    assert seen == [(1.0, 3.0), (3.0, 4.0)]  # fn never sees element 0: it is the start
    np.testing.assert_array_equal(_np(out[0]), [1, 3, 6])
    np.testing.assert_array_equal(_np(out[1]), [2, 6, 24])
    last = em.scan(lambda a, x: a - x, em.constant([1, 2, 10]), reverse=True)
    np.testing.assert_array_equal(_np(last), [7, 8, 10])
    one = em.scan(lambda a, x: a + x, em.constant([[5, 6]]))
    np.testing.assert_array_equal(_np(one), [[5, 6]])


def test_scan_nested_accumulator():
    out = em.scan(lambda a, x: {"sum": a["sum"] + x, "n": a["n"] + 1},
                  em.constant([1.0, 2.0, 3.0]), {"sum": 0.0, "n": 0})
    np.testing.assert_array_equal(_np(out["sum"]), [1, 3, 6])
    assert out["n"].dtype == em.int32 and _np(out["n"]).tolist() == [1, 2, 3]


def test_scan_zero_length():
    out = em.scan(lambda a, x: a + x, em.zeros([0, 2]), em.zeros([2], em.float64))
    assert out.shape == (0, 2) and out.dtype == em.float64
    out = em.scan(lambda a, x: a + x, em.zeros([0, 2]), em.zeros([2]), infer_shape=False)
    assert out.shape == (0,)
    with pytest.raises(em.InvalidArgumentError, match="scan: elems has no elements and no "
                                                      "initializer is given"):
        em.scan(lambda a, x: a + x, em.zeros([0]))


def test_scan_infer_shape():
    grow = lambda a, x: em.concat([a[:0], x], 0)  # noqa: E731  () -> (1,) shaped
    with pytest.raises(em.InvalidArgumentError, match=r"scan: fn's result \(at element 0\) has "
                                                      r"shape \(1,\), but the accumulator "
                                                      r"started with shape \(0,\)"):
        em.scan(grow, em.ones([3, 1]), em.zeros([0]))
    out = em.scan(grow, em.ones([3, 1]), em.zeros([0]), infer_shape=False)
    assert out.shape == (3, 1)


def test_scan_dtype_and_structure_errors():
    with pytest.raises(em.DTypeError, match=r"scan: .* has dtype float32, but the accumulator "
                                            r"\(from initializer\) has dtype int32"):
        em.scan(lambda a, x: em.cast(a, em.float32) + x, em.ones([2]), 0)
    with pytest.raises(TypeError, match="scan: .*expected a tuple, got a list"):
        em.scan(lambda a, x: [a[0], a[1]], em.ones([2]), (0.0, 0.0))
    with pytest.raises(TypeError, match="scan: reverse must be a bool"):
        em.scan(lambda a, x: a, em.ones([2]), reverse="yes")


# --- foldl, foldr ------------------------------------------------------------------------


def test_foldl_foldr_tensorflows_examples():
    elems = em.constant([1, 2, 3, 4, 5, 6])
    assert int(em.foldl(lambda a, x: a + x, elems)) == 21
    assert int(em.foldr(lambda a, x: a + x, elems)) == 21
    # order matters for a non-commutative fn
    assert int(em.foldl(lambda a, x: a * 10 + x, em.constant([1, 2, 3]), 0)) == 123
    assert int(em.foldr(lambda a, x: a * 10 + x, em.constant([1, 2, 3]), 0)) == 321
    assert int(em.foldl(lambda a, x: a * 10 + x, em.constant([1, 2, 3]))) == 123
    assert int(em.foldr(lambda a, x: a * 10 + x, em.constant([1, 2, 3]))) == 321


def test_folds_match_numpy(device):
    x = np.random.default_rng(2).normal(size=(7, 2)).astype(np.float32)
    acc = np.ones(2, np.float32)
    for r in x:
        acc = np.tanh(acc * 0.9 + r)
    np.testing.assert_allclose(_np(em.foldl(lambda a, r: em.tanh(a * 0.9 + r), em.constant(x),
                                            em.ones([2]))), acc, rtol=1e-5)
    acc = np.ones(2, np.float32)
    for r in x[::-1]:
        acc = np.tanh(acc * 0.9 + r)
    np.testing.assert_allclose(_np(em.foldr(lambda a, r: em.tanh(a * 0.9 + r), em.constant(x),
                                            em.ones([2]))), acc, rtol=1e-5)


def test_folds_nested_structures_and_edges():
    elems = (em.constant([1.0, 2.0, 3.0]), {"w": em.constant([2.0, 2.0, 0.5])})
    out = em.foldl(lambda a, e: {"s": a["s"] + e[0] * e[1]["w"], "k": a["k"] + 1}, elems,
                   {"s": em.constant(0.0), "k": 0})
    assert float(out["s"]) == 7.5 and int(out["k"]) == 3
    # no initializer: elems' structure; lists and tuples alike for the accumulator
    out = em.foldr(lambda a, e: [a[0] + e[0], a[1]], elems)
    assert isinstance(out, tuple) and float(out[0]) == 6.0 and float(out[1]["w"]) == 0.5
    # one element and no initializer: that element; none with one: the initializer
    assert float(em.foldl(lambda a, x: a + x, em.constant([4.0]))) == 4.0
    empty = em.foldl(lambda a, x: a + x, em.zeros([0]), 1.5)
    assert isinstance(empty, em.Tensor) and float(empty) == 1.5
    for fold in (em.foldl, em.foldr):
        with pytest.raises(em.InvalidArgumentError, match="elems has no elements and no "
                                                          "initializer"):
            fold(lambda a, x: a + x, em.zeros([0, 3]))
    with pytest.raises(em.DTypeError, match=r"foldl: .*has dtype float32, but the accumulator"):
        em.foldl(lambda a, x: em.cast(a, em.float32), em.constant([1, 2]))
    with pytest.raises(ValueError, match=r"foldr: .*expected 2 entries, got 1"):
        em.foldr(lambda a, x: (a[0],), (em.ones([2]), em.ones([2])))


# --- while_loop --------------------------------------------------------------------------


def test_while_loop_tensorflows_examples():
    r = em.while_loop(lambda i: em.less(i, 10), lambda i: (em.add(i, 1),), [em.constant(0)])
    assert isinstance(r, list) and int(r[0]) == 10

    n = em.constant(10)
    out = em.while_loop(lambda i, _: em.less(i, n), lambda i, result: (i + 1, result + i * i),
                        [em.constant(0), em.constant(0)])[1]
    assert int(out) == 285

    ijk_0 = (em.constant(0), Pair(em.constant(1), em.constant(2)))
    ijk = em.while_loop(lambda i, p: i < 10, lambda i, p: (i + 1, Pair(p.j + p.k, p.j - p.k)),
                        ijk_0)
    assert isinstance(ijk, tuple) and isinstance(ijk[1], Pair)
    assert (int(ijk[1][0]), int(ijk[1][1])) == (32, 64)

    i0, m0 = em.constant(0), em.ones([2, 2])
    _, m = em.while_loop(lambda i, m: i < 10, lambda i, m: [i + 1, em.concat([m, m], axis=0)],
                         loop_vars=[i0, m0],
                         shape_invariants=[i0.get_shape(), em.TensorShape([None, 2])])
    assert m.shape == (2048, 2)


def test_while_loop_matches_numpy(device):
    # Newton's iteration for sqrt, until every entry converged
    a = np.array([2.0, 9.0, 0.25], np.float32)
    x = a.copy()
    steps = 0
    while np.max(np.abs(x * x - a)) > 1e-5:
        x = 0.5 * (x + a / x)
        steps += 1
    k, got = em.while_loop(lambda k, x: em.reduce_max(em.abs(x * x - a)) > 1e-5,
                           lambda k, x: (k + 1, 0.5 * (x + a / x)), (0, em.constant(a)))
    assert int(k) == steps
    np.testing.assert_allclose(_np(got), x, rtol=1e-6)
    np.testing.assert_allclose(_np(got), np.sqrt(a), rtol=1e-5)


def test_while_loop_converts_python_numbers_and_keeps_the_structure():
    out = em.while_loop(lambda i, s: i < 3, lambda i, s: [i + 1, s * 2], (0, 1.5))
    assert isinstance(out, tuple)  # loop_vars' structure, whatever body returned
    assert out[0].dtype == em.int32 and out[1].dtype == em.float32
    assert (int(out[0]), float(out[1])) == (3, 12.0)
    # body returns Python numbers: they take the loop variable's dtype
    assert float(em.while_loop(lambda x: x < 1, lambda x: 5, [0.0])[0]) == 5.0
    # zero iterations: the loop variables, as tensors
    none = em.while_loop(lambda i: False, lambda i: i + 1, [7])
    assert isinstance(none[0], em.Tensor) and int(none[0]) == 7
    # one loop variable: body may return it alone
    assert int(em.while_loop(lambda i: i < 5, lambda i: i + 2, [0])[0]) == 6
    # nested dicts
    d = em.while_loop(lambda v: v["n"] < 4, lambda v: {"n": v["n"] + 1, "p": v["p"] * 3},
                      [{"n": 0, "p": em.constant(1.0)}])
    assert int(d[0]["n"]) == 4 and float(d[0]["p"]) == 81.0


def test_while_loop_maximum_iterations():
    def count(limit, pred=lambda i: True):
        return int(em.while_loop(pred, lambda i: i + 1, [0], maximum_iterations=limit)[0])

    assert count(5) == 5
    assert count(em.constant(4)) == 4
    assert count(np.int64(3)) == 3
    assert count(0) == 0
    assert count(10, pred=lambda i: i < 3) == 3  # cond stops it first
    calls = []
    em.while_loop(lambda i: calls.append(1) or True, lambda i: i + 1, [0], maximum_iterations=2)
    assert len(calls) == 2  # the body ran twice; cond was asked twice
    with pytest.raises(em.InvalidArgumentError, match="while_loop: maximum_iterations must be a "
                                                      "scalar"):
        count(em.constant([1, 2]))
    with pytest.raises(em.DTypeError, match="while_loop: maximum_iterations must be an integer"):
        count(em.constant(2.0))


def test_while_loop_shape_invariants():
    body = lambda i, m: (i + 1, em.concat([m, m], 0))  # noqa: E731
    with pytest.raises(em.InvalidArgumentError, match=r"while_loop: loop variable loop_vars\[1\] "
                                                      r"enters the loop with shape \(2, 2\), but "
                                                      r"has shape \(4, 2\) after 1 iteration.*"
                                                      r"shape_invariants"):
        em.while_loop(lambda i, m: i < 3, body, [0, em.ones([2, 2])])
    # None for the changing size, or None for any shape
    for inv in ([None, 2], em.TensorShape([None, 2]), None, (None, None)):
        _, m = em.while_loop(lambda i, m: i < 3, body, [0, em.ones([2, 2])],
                             shape_invariants=[[], inv])
        assert m.shape == (16, 2)
    with pytest.raises(em.InvalidArgumentError, match=r"has shape \(2, 4\) after 1 iteration.*"
                                                      r"does not fit its shape invariant "
                                                      r"\(None, 2\)"):
        em.while_loop(lambda i, m: i < 3, lambda i, m: (i + 1, em.concat([m, m], 1)),
                      [0, em.ones([2, 2])], shape_invariants=[[], [None, 2]])
    with pytest.raises(em.InvalidArgumentError, match=r"shape invariant \(3, 2\) given for "
                                                      r"loop_vars\[1\] does not fit its initial "
                                                      r"shape \(2, 2\)"):
        em.while_loop(lambda i, m: i < 3, body, [0, em.ones([2, 2])], shape_invariants=[[], [3, 2]])
    with pytest.raises(ValueError, match="while_loop: shape_invariants must have loop_vars' "
                                         "structure"):
        em.while_loop(lambda i, m: i < 3, body, [0, em.ones([2, 2])], shape_invariants=[[None, 2]])


def test_while_loop_structure_and_dtype_errors():
    with pytest.raises(em.DTypeError, match=r"while_loop: loop variable loop_vars\[0\] enters the "
                                            r"loop with dtype int32 but has dtype float32 after 1"):
        em.while_loop(lambda i: i < 3, lambda i: em.cast(i, em.float32) + 1, [0])
    with pytest.raises(ValueError, match=r"while_loop: body's result \(iteration 1\) must have "
                                         r"the same structure as loop_vars"):
        em.while_loop(lambda i, j: i < 3, lambda i, j: (i + 1,), [0, 0])
    with pytest.raises(ValueError, match="expected 1 entry, got 2"):
        em.while_loop(lambda i: i < 3, lambda i: (i, i), [0])
    with pytest.raises(TypeError, match="while_loop: loop_vars must be a list or tuple"):
        em.while_loop(lambda i: i < 3, lambda i: i + 1, em.constant(0))
    with pytest.raises(ValueError, match="while_loop: loop_vars must hold at least one"):
        em.while_loop(lambda: True, lambda: (), [])
    with pytest.raises(TypeError, match="while_loop: body must be callable"):
        em.while_loop(lambda i: i < 3, None, [0])
    with pytest.raises(TypeError, match="while_loop: parallel_iterations must be a positive"):
        em.while_loop(lambda i: i < 3, lambda i: i + 1, [0], parallel_iterations=0)


def test_while_loop_carries_a_tensor_array():
    def body(i, ta):
        return i + 1, ta.write(i, em.cast(i, em.float32) ** 2)

    _, ta = em.while_loop(lambda i, ta: i < 4, body, [0, em.TensorArray(em.float32, size=4)])
    np.testing.assert_array_equal(_np(ta.stack()), [0, 1, 4, 9])


# --- cond, case, switch_case -------------------------------------------------------------


def test_cond_tensorflows_examples():
    x, y = em.constant(2), em.constant(5)
    assert int(em.cond(em.less(x, y), lambda: em.multiply(x, 7), lambda: em.add(y, 3))) == 14
    x, y = em.constant(2, dtype=em.int32), em.constant(4, dtype=em.int32)
    z = em.multiply(x, y)
    assert int(em.cond(x < y, lambda: em.add(x, z), lambda: em.square(y))) == 10


def test_cond_runs_only_the_chosen_branch_and_returns_it_as_is(device):
    ran = []
    t = lambda: ran.append("t") or [em.constant([1.0])]  # noqa: E731
    f = lambda: ran.append("f") or [em.constant([2.0])]  # noqa: E731
    out = em.cond(em.constant(3.0) > 4.0, t, f)
    assert ran == ["f"] and isinstance(out, list) and _np(out[0]).tolist() == [2.0]
    # Python bools, numpy bools, bool variables and 0-d arrays are predicates too
    for pred, want in ((True, 1), (np.bool_(False), 2), (em.Variable(True), 1),
                       (np.array(False), 2)):
        assert em.cond(pred, lambda: 1, lambda: 2) == want
    assert em.cond(pred=True, true_fn=lambda: "a", false_fn=lambda: "b") == "a"


def test_cond_errors():
    with pytest.raises(TypeError, match="cond: the true_fn argument is required"):
        em.cond(True, false_fn=lambda: 1)
    with pytest.raises(TypeError, match="cond: the false_fn argument is required"):
        em.cond(True, lambda: 1)
    with pytest.raises(TypeError, match="cond: false_fn must be callable"):
        em.cond(True, lambda: 1, 2)


BAD_PREDICATES = [
    (lambda: em.constant([True, False]), em.InvalidArgumentError, r"got one of shape \(2,\)"),
    (lambda: em.constant([True]), em.InvalidArgumentError, r"got one of shape \(1,\)"),
    (lambda: em.constant(1), em.DTypeError, "got an int32 tensor"),
    (lambda: em.constant(0.5), em.DTypeError, "got a float32 tensor"),
    (lambda: 1, TypeError, "got int 1"),
    (lambda: None, TypeError, "got NoneType None"),
    (lambda: "yes", TypeError, "got str 'yes'"),
]


@pytest.mark.parametrize(("make", "error", "message"), BAD_PREDICATES,
                         ids=["vector", "one_entry", "int_tensor", "float_tensor", "int",
                              "none", "str"])
def test_predicates_must_be_bools_or_scalar_bool_tensors(make, error, message):
    with pytest.raises(error, match=r"cond: pred must be .*" + message):
        em.cond(make(), lambda: 1, lambda: 2)
    with pytest.raises(error, match=r"while_loop: cond's result must be .*" + message):
        em.while_loop(lambda i: make(), lambda i: i + 1, [0])
    with pytest.raises(error, match=r"case: the predicate of pred_fn_pairs\[1\] must be .*"
                                    + message):
        em.case([(em.constant(False), lambda: 1), (make(), lambda: 2)], default=lambda: 3)


def test_case_tensorflows_examples():
    f1, f2, f3 = lambda: em.constant(17), lambda: em.constant(23), lambda: em.constant(-1)
    for x, y, want in ((1, 2, 17), (3, 2, 23)):
        x, y = em.constant(x), em.constant(y)
        assert int(em.case([(em.less(x, y), f1)], default=f2)) == want
    # if (x < y && x > z) raise; if (x < y) 17; elif (x > z) 23; else -1
    f2 = lambda: em.constant(23)  # noqa: E731
    for x, y, z, want in ((1, 2, 5, 17), (4, 2, 3, 23), (1, 0, 3, -1)):
        x, y, z = em.constant(x), em.constant(y), em.constant(z)
        r = em.case([(em.less(x, y), f1), (em.greater(x, z), f2)], default=f3, exclusive=True)
        assert int(r) == want
    with pytest.raises(em.InvalidArgumentError, match=r"case: exclusive=True, but more than one "
                                                      r"predicate is true"):
        x, y, z = em.constant(2), em.constant(3), em.constant(1)
        em.case([(em.less(x, y), f1), (em.greater(x, z), f2)], default=f3, exclusive=True)


def test_case_order_default_and_strict():
    ran = []

    def fn(k):
        return lambda: ran.append(k) or [em.constant(k)]

    t, f = em.constant(True), em.constant(False)
    out = em.case([(f, fn(0)), (t, fn(1)), (t, fn(2))], default=fn(3))
    assert ran == [1] and int(out) == 1  # the first true one; a singleton list unpacked
    out = em.case([(f, fn(0))], default=fn(3), strict=True)
    assert isinstance(out, list) and int(out[0]) == 3
    assert int(em.case([(f, fn(0)), (t, fn(4))])) == 4  # no default: the last pair's
    assert int(em.case([(False, fn(0)), (True, fn(5))])) == 5  # Python bools
    with pytest.raises(em.InvalidArgumentError, match="case: no predicate is true and no default"):
        em.case([(f, fn(0)), (f, fn(1))])
    # a dict only with exclusive=True (its order then does not matter)
    assert int(em.case({f: fn(0), t: fn(6)}, exclusive=True)) == 6
    with pytest.raises(ValueError, match="case: a dict of predicates to callables is unordered"):
        em.case({t: fn(0)})


def test_case_argument_errors():
    with pytest.raises(TypeError, match="case: pred_fn_pairs must be a list or tuple"):
        em.case(lambda: 1)
    with pytest.raises(TypeError, match=r"case: each entry of pred_fn_pairs must be a 2-tuple"):
        em.case([[em.constant(True), lambda: 1]])
    with pytest.raises(TypeError, match=r"case: the callable of pred_fn_pairs\[0\] must be "
                                        r"callable"):
        em.case([(em.constant(True), 1)])
    with pytest.raises(TypeError, match="case: default must be callable"):
        em.case([(em.constant(True), lambda: 1)], default=2)
    with pytest.raises(ValueError, match="case: pred_fn_pairs must hold at least one"):
        em.case([], default=lambda: 1)


def test_switch_case_tensorflows_example(device):
    f1, f2, f3 = lambda: em.constant(17), lambda: em.constant(31), lambda: em.constant(-1)
    for index, want in ((0, 17), (1, 31), (2, -1), (-1, -1), (100, -1)):
        assert int(em.switch_case(em.constant(index), branch_fns={0: f1, 1: f2}, default=f3)) == want
        # the equivalent without a default
        assert int(em.switch_case(em.constant(index), {0: f1, 1: f2, 2: f3})) == want


def test_switch_case_forms_and_out_of_range():
    ran = []
    fns = [lambda k=k: ran.append(k) or k * 10 for k in range(3)]
    assert em.switch_case(em.constant(1), fns) == 10 and ran == [1]
    assert em.switch_case(em.constant(7, em.int64), fns) == 20  # out of range: the last
    assert em.switch_case(em.constant(-2), fns) == 20
    assert em.switch_case(2, [(1, fns[1]), (0, fns[0]), (2, fns[2])]) == 20  # pairs, any order
    assert em.switch_case(np.int32(0), fns, default=lambda: -1) == 0
    assert em.switch_case(em.Variable(3), fns, default=lambda: -1) == -1


def test_switch_case_errors():
    fns = [lambda: 1, lambda: 2]
    with pytest.raises(em.DTypeError, match="switch_case: branch_index must be an integer tensor"):
        em.switch_case(em.constant(1.0), fns)
    with pytest.raises(TypeError, match="switch_case: branch_index must be an integer"):
        em.switch_case(True, fns)
    with pytest.raises(em.InvalidArgumentError, match="switch_case: branch_index must be a scalar"):
        em.switch_case(em.constant([0]), fns)
    with pytest.raises(ValueError, match=r"switch_case: branch keys must be 0 to 1, each once, "
                                         r"got \[0, 2\]"):
        em.switch_case(0, {0: fns[0], 2: fns[1]})
    with pytest.raises(TypeError, match="switch_case: branch keys must be Python ints"):
        em.switch_case(0, {"a": fns[0]})
    with pytest.raises(TypeError, match="switch_case: each entry of branch_fns must be a "
                                        "callable or an"):
        em.switch_case(0, [fns[0], 3])
    with pytest.raises(ValueError, match="switch_case: branch_fns must hold at least one"):
        em.switch_case(0, [])
    with pytest.raises(TypeError, match="switch_case: branch_fns must be a list, tuple or dict"):
        em.switch_case(0, fns[0])


# --- vectorized_map ----------------------------------------------------------------------


def test_vectorized_map_tensorflows_example_and_map_fn_agreement(device):
    a = em.constant(np.random.default_rng(3).normal(size=(5, 3, 2)).astype(np.float32))
    c = em.vectorized_map(lambda x: em.tensordot(x, x, 0), a)
    assert c.shape == (5, 3, 2, 3, 2)
    np.testing.assert_allclose(_np(c), _np(em.map_fn(lambda x: em.tensordot(x, x, 0), a)))
    np.testing.assert_allclose(_np(c), np.einsum("bij,bkl->bijkl", _np(a), _np(a)), rtol=1e-6)


def test_vectorized_map_structures_broadcasting_and_zero_length():
    x = em.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    w = em.constant([[10.0, 100.0]])  # first dimension 1: broadcast to every element
    total, scaled = em.vectorized_map(lambda e: (em.reduce_sum(e[0]), e[0] * e[1]), (x, w))
    np.testing.assert_array_equal(_np(total), [3, 7, 11])
    np.testing.assert_array_equal(_np(scaled), [[10, 200], [30, 400], [50, 600]])
    # no element: results of fn's form, empty
    ran = []
    out = em.vectorized_map(lambda e: ran.append(e.shape) or {"s": em.reduce_sum(e), "e": e},
                            em.zeros([0, 4], em.float64))
    assert ran == [(4,)]
    assert (out["s"].shape, out["e"].shape, out["e"].dtype) == ((0,), (0, 4), em.float64)
    with pytest.raises(em.InvalidArgumentError, match=r"vectorized_map: the first dimensions .* "
                                                      r"elems\[0\]: 3, elems\[1\]: 2"):
        em.vectorized_map(lambda e: e[0], (x, em.ones([2, 2])))
    with pytest.raises(TypeError, match="vectorized_map: fallback_to_while_loop must be a bool"):
        em.vectorized_map(lambda e: e, x, fallback_to_while_loop="no")
    with pytest.raises(em.DTypeError, match="vectorized_map: .*for element 1"):
        em.vectorized_map(lambda e: em.cast(e, em.int32) if float(e[0]) > 2 else e, x)
    assert em.vectorized_map(lambda e: e * 2, x, fallback_to_while_loop=False, warn=False).shape \
        == (3, 2)


def test_zero_length_results_live_on_the_inputs_device(device):
    elems = em.zeros([0, 2])
    assert em.map_fn(lambda r: r, elems).device == elems.device
    assert em.scan(lambda a, r: a + r, elems, em.zeros([2])).device == elems.device
    assert em.vectorized_map(lambda r: r, elems).device == elems.device
