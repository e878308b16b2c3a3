"""Each fast path is written once: one notify, one element-wise factory, and matmul's fast
path runs the forward registered for matmul."""

from __future__ import annotations

import ast
import pathlib

import numpy as np
from numpy.testing import assert_allclose

import ember.core as em
from ember.core.testing import device_bits, recorded_op_names

CORE = pathlib.Path(em.__file__).parent


def test_recorders_are_told_in_one_place():
    """Only ``_registry.notify`` calls ``record_op``; every path that runs an op calls it."""
    calls = []
    for p in CORE.rglob("*.py"):
        if "testing" in p.relative_to(CORE).parts:
            continue
        tree = ast.parse(p.read_text())
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for n in ast.walk(fn):
                    if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                            and n.func.attr == "record_op":
                        calls.append(f"{p.relative_to(CORE)}:{fn.name}")
    assert sorted(set(calls)) == ["_registry.py:notify"]


def test_every_path_tells_the_recorders():
    x = em.constant([[1.0, 2.0], [3.0, 4.0]])
    with recorded_op_names() as names:
        em.exp(x)  # unary fast path
        em.add(x, x)  # binary fast path
        em.add(x, 1.0)  # binary through execute (a Python scalar)
        em.matmul(x, x)  # matmul's fast path
        em.matmul(x, x, transpose_a=True)  # matmul through execute
        em.reduce_sum(x)  # execute
    assert names == ["exp", "add", "add", "matmul", "transpose", "matmul", "reduce_sum"]


def test_matmul_fast_path_runs_the_registered_forward():
    op = em.REGISTRY["matmul"]
    forward = op.forward
    calls = []

    def counted(be, a, b):
        calls.append((a.shape, b.shape))
        return forward(be, a, b)

    x = em.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = em.constant(np.ones((3, 2), np.float32))
    op.forward = counted
    try:
        out = em.matmul(x, y)  # tensors of one dtype on one device: the fast path
    finally:
        op.forward = forward
    assert calls == [((2, 3), (3, 2))]
    assert_allclose(out.numpy(), x.numpy() @ y.numpy())


def test_unary_and_binary_come_from_one_factory():
    fns = [em.exp, em.sin, em.relu, em.add, em.multiply, em.maximum]
    assert {f.__code__.co_qualname.split(".")[0] for f in fns} == {"elementwise"}
    assert len({f.__code__ for f in fns}) == 2  # one body per arity


def test_where_with_a_zero_branch_keeps_every_bit(device):
    """``where(c, x, 0)`` and ``where(c, 0, y)`` run as a bitwise AND on the CPU; NaN, inf
    and -0.0 come through as ``numpy.where`` gives them, and a -0.0 or float64 zero branch
    takes the general path. On a GPU the 0-d branch is uploaded, and ``cupy.asarray`` of
    0-d data lost -0.0's sign (its ``fill`` clears memory for a value equal to 0)."""
    for v in (-0.0, np.float32(-0.0), np.array(-0.0)):
        assert em.constant(v).numpy().tobytes() == np.asarray(v, np.float32 if type(v) is
                                                              float else None).tobytes()
    rng = np.random.default_rng(0)
    for dt in (np.float32, np.float64):
        a = rng.standard_normal((6, 5)).astype(dt)
        a[0, 0], a[1, 1], a[2, 2] = np.nan, -0.0, -np.inf
        c = rng.random((6, 5)) > 0.5
        c[0, 0], c[1, 1], c[2, 2] = True, True, False
        for zero in (np.zeros((), dt), np.array(-0.0, dt), np.zeros((), np.float64)):
            for got, want in ((em.where(c, a, zero), np.where(c, a, zero)),
                              (em.where(c, zero, a), np.where(c, zero, a))):
                got = got.numpy()
                assert got.dtype == want.dtype and got.shape == want.shape
                # (a GPU's float32-to-float64 cast gives its own NaN: device_bits)
                assert device_bits(got, device) == device_bits(want, device)
        # a branch that broadcasts over the condition (max-pooling's gradient), a
        # transposed one, and one that would broadcast the condition instead
        for branch in (a[:, :1], a[:1], a.T.copy().T, a[0], a[:1, :1]):
            zero = np.zeros((), dt)
            for got, want in ((em.where(c, branch, zero), np.where(c, branch, zero)),
                              (em.where(c, zero, branch), np.where(c, zero, branch))):
                assert got.numpy().tobytes() == want.tobytes() and got.shape == want.shape
        wide = em.where(c[:1], a, np.zeros((), dt))  # the result is a's shape, not c's
        assert wide.numpy().tobytes() == np.where(c[:1], a, 0).astype(dt).tobytes()
