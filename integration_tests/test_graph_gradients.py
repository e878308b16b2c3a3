"""The gradient table, traced: tape gradients computed inside graph.function replay with
the eager values (first order, and second order through a persistent outer tape)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import ember.core as em
from ember import graph, tape
from ember.core.testing import (
    OP_SPECS,
    case_id,
    ember_args,
    flatten,
    make_case,
    recorded_op_names,
)


def _has_float_input(spec, case) -> bool:
    def arrays(v):
        if isinstance(v, np.ndarray):
            return [v]
        if isinstance(v, (list, tuple)):
            return [a for x in v for a in arrays(x)]
        return []

    raw, _ = make_case(spec, case, np.float64)
    return any(a.dtype.kind == "f" and a.size for a in arrays(raw))


# differentiable cases with a float input of nonzero size (the others have nothing to
# differentiate: they are left out, not skipped)
CASES = [(s, c, np.dtype(np.float64)) for s in OP_SPECS if s.differentiable
         and np.float64 in [np.dtype(d) for d in s.dtypes] for c in s.cases
         if _has_float_input(s, c)]


def _tensors(args):
    out = []
    for a in args:
        if isinstance(a, em.Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(_tensors(a))
    return out


def _replace(args, new):
    it = iter(new)

    def sub(a):
        if isinstance(a, em.Tensor):
            return next(it)
        if isinstance(a, list):
            return [sub(x) for x in a]
        if isinstance(a, tuple):
            return tuple(sub(x) for x in a)
        return a

    return [sub(a) for a in args]


def _assert_same_gradients(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if w is None:
            assert g is None
        else:
            assert_array_equal(g.numpy(), w.numpy())


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(("spec", "case", "dtype"), CASES, ids=[case_id(*c) for c in CASES])
def test_gradients_replay_like_eager(spec, case, dtype):
    args0 = ember_args(make_case(spec, case, dtype, seed=0)[0])
    raw1, kwargs = make_case(spec, case, dtype, seed=1)
    args1 = ember_args(raw1)
    ts0, ts1 = _tensors(args0), _tensors(args1)
    floats = [i for i, t in enumerate(ts0) if t.dtype.kind == "f" and t.size]

    def grads(*ts):
        with tape.GradientTape() as t:
            for i in floats:
                t.watch(ts[i])
            out = flatten(spec.fn(*_replace(args0, ts), **kwargs))
            parts = [em.reduce_sum(em.cast(o, em.float64) * 0.5) for o in out
                     if o.dtype.kind == "f"]
        if not parts:
            return []
        total = functools.reduce(em.add, parts)
        return t.gradient(total, [ts[i] for i in floats])

    f = graph.function(grads)
    f(*ts0)
    em.random.set_seed(1)  # dropout draws the same masks in both calls
    got = f(*ts1)
    em.random.set_seed(1)
    want = grads(*ts1)
    _assert_same_gradients(got, want)


def test_second_order_through_a_traced_function():
    @graph.function
    def grad_of_cube(x):
        with tape.GradientTape() as t:
            t.watch(x)
            y = x * x * x
        return t.gradient(y, x)

    x = em.constant(2.0, dtype=em.float64)
    assert float(grad_of_cube(x)) == 12.0
    # under an outer tape the call runs eagerly, so the tape sees every op
    with tape.GradientTape() as outer:
        outer.watch(x)
        g = grad_of_cube(x)
    assert float(outer.gradient(g, x)) == 12.0  # d/dx 3x^2 = 6x
    assert float(grad_of_cube(em.constant(3.0, dtype=em.float64))) == 27.0


def _taped_gradients(f, floats, args, kwargs, ts):
    """Gradients of half the float outputs' sum, with ``f`` called under the tape."""
    with tape.GradientTape() as t:
        for i in floats:
            t.watch(ts[i])
        with recorded_op_names() as names:
            out = f(*ts)
        parts = [em.reduce_sum(em.cast(o, em.float64) * 0.5) for o in out
                 if o.dtype.kind == "f"]
    if not parts:
        return [], names
    return t.gradient(functools.reduce(em.add, parts), [ts[i] for i in floats]), names


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(("spec", "case", "dtype"), CASES, ids=[case_id(*c) for c in CASES])
def test_a_tape_around_a_traced_call_records_one_op_with_the_eager_gradient(spec, case,
                                                                            dtype):
    args0 = ember_args(make_case(spec, case, dtype, seed=0)[0])
    raw1, kwargs = make_case(spec, case, dtype, seed=1)
    ts0, ts1 = _tensors(args0), _tensors(ember_args(raw1))
    floats = [i for i, t in enumerate(ts0) if t.dtype.kind == "f" and t.size]

    def run(*ts):
        return flatten(spec.fn(*_replace(args0, ts), **kwargs))

    f = graph.function(run)
    _taped_gradients(f, floats, args0, kwargs, ts0)  # traces forward and backward
    em.random.set_seed(1)  # dropout draws the same masks in both calls
    got, names = _taped_gradients(f, floats, args0, kwargs, ts1)
    em.random.set_seed(1)
    want, _ = _taped_gradients(graph.function(run).python_function, floats, args0, kwargs,
                               ts1)
    traces = f.experimental_get_tracing_count()
    if traces != 1:  # a boolean mask selected another number of elements: a shape guard
        assert traces == 2 and spec.name in ("getitem", "boolean_mask"), traces
    elif any(w is not None for w in want):
        assert names == ["custom_gradient"], f"replayed as ops {names}, not as one"
    _assert_same_gradients(got, want)
