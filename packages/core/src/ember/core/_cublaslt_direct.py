"""A planned nvmath-python ``Matmul`` run by one direct ``cublasLtMatmul`` call.

Why: for each product, nvmath-python 1.0's ``reset_operands`` + ``execute`` +
``release_operands`` take 53-81 us of host time. On an H200's host (2026-11-27,
``bench/results/gpu-run-2026-11-27-third.md``), cupy's ``a @ b`` takes 13-18 us. On a
GPU, small eager models are bound by host time, so ember's eager products were 2.4x
cupy's. ``Direct`` calls cuBLASLt through nvmath's own bindings
(``nvmath.bindings.cublasLt.matmul``) with the plan ``Matmul.plan()`` made: its
descriptor, layouts, scalars, algorithm and workspace size. That took 6-11 us on the
same host, with bit-identical results, and a call made during a stream capture replays
with new inputs as ``execute`` does.

What it reads of a planned ``Matmul`` are nvmath-python 1.0's attributes, not its
documented API: ``handle``, ``mm_desc``, ``alpha``, ``beta``, ``{a,b,c,d}_layout_ptr``,
``cached_best_algorithm_struct``, ``workspace.size`` and ``mm_desc_ifc.bias_pointer``.
The pointer is the ``BIAS`` epilog's input and the ``BGRADA`` epilog's output, as
nvmath's own ``execute`` sets it. Where one of these is missing (another nvmath-python),
``direct`` returns None and ember runs the product through ``execute``. So a newer
nvmath is slower, never wrong.

Each call takes its workspace from cupy's pool and gives it back at once, ordered on
the stream, as ``execute(release_workspace=True)`` does. The result is written in place
into C (``beta`` 0), whose pointer is also D's.
"""

from __future__ import annotations

from typing import Any

_ATTRS = ("handle", "mm_desc", "alpha", "beta", "a_layout_ptr", "b_layout_ptr",
          "c_layout_ptr", "d_layout_ptr", "cached_best_algorithm_struct", "workspace",
          "mm_desc_ifc")


class Direct:
    """``mm``'s product as one ``cublasLtMatmul`` (see the module docstring). ``epilog``:
    None, ``"BIAS"`` (``run``'s ``bias`` is its input) or ``"BGRADA"`` (``run`` returns
    the new ``(M,)`` bias gradient)."""

    __slots__ = ("_args", "_epilog", "_ifc", "_lt", "_ws", "mm")

    def __init__(self, lt_matmul: Any, mm: Any, epilog: str | None) -> None:
        self.mm = mm  # keeps the descriptor, layouts and scalars alive
        self._lt = lt_matmul
        self._epilog = epilog
        self._ifc = mm.mm_desc_ifc
        self._ws = int(mm.workspace.size)
        self._args = (mm.handle, mm.mm_desc, int(mm.alpha.ctypes.data),
                      int(mm.beta.ctypes.data), mm.a_layout_ptr, mm.b_layout_ptr,
                      mm.c_layout_ptr, mm.d_layout_ptr,
                      int(mm.cached_best_algorithm_struct.ctypes.data))

    def run(self, xp: Any, a: Any, b: Any, c: Any, bias: Any = None) -> Any:
        """``c = a @ b`` (with the epilog) on the current stream; BGRADA's output, else
        None."""
        handle, desc, alpha, beta, la, lb, lc, ld, algo = self._args
        aux = None
        if self._epilog == "BIAS":
            self._ifc.bias_pointer = bias.data.ptr
        elif self._epilog == "BGRADA":
            aux = xp.empty((a.shape[0],), c.dtype)
            self._ifc.bias_pointer = aux.data.ptr
        ws = self._ws
        workspace = xp.cuda.alloc(ws) if ws else None
        cp = c.data.ptr
        self._lt(handle, desc, alpha, a.data.ptr, la, b.data.ptr, lb, beta, cp, lc, cp, ld,
                 algo, 0 if workspace is None else workspace.ptr, ws,
                 xp.cuda.get_current_stream().ptr)
        return aux


def direct(nvmath: Any, mm: Any, epilog: str | None = None) -> Direct | None:
    """A ``Direct`` call of the planned ``mm``, or None where this nvmath-python does not
    have what it reads (see the module docstring)."""
    lt = getattr(getattr(getattr(nvmath, "bindings", None), "cublasLt", None), "matmul", None)
    if lt is None or not all(hasattr(mm, name) for name in _ATTRS):
        return None
    try:
        return Direct(lt, mm, epilog)
    except (AttributeError, TypeError, ValueError):
        return None
