"""Element-wise fusion on a GPU: a run of element-wise steps becomes one generated kernel.

On a GPU each op is a kernel launch (microseconds of overhead each, and a round trip of
its result through device memory). A replay knows which intermediates of a run of
element-wise ops nothing outside the run reads, so the run can be one
``ElementwiseKernel`` (cupy's, or the strict double's, which evaluates the same C): its
inputs are the values the run reads from outside, its outputs the values read after it
(or returned, or written to variables), and its body one C statement per op, from the
op's CUDA expression (``extend.cuda_form``).

A run is consecutive steps of ops with a CUDA expression, no attributes and one result,
on one GPU backend, all of one float dtype (float32 or float64) and with results of one
shape (inputs may broadcast). Kernels are compiled with ``--fmad=false`` (no multiply-add
contraction), so they round as the separate kernels did; and each one is run once on the
traced values and must give the traced results bit for bit (NaNs included), or its run
is left unfused. On the CPU nothing changes: numpy has no kernels to fuse.

Before that, on a GPU, steps whose result is the same at every replay are folded into
constants (``fold_constants``): a step of constant inputs (or of an op that reads only
its input's shape and dtype, ``ones_like``), such as a loss's seed gradient and its mean's
``1 / n`` broadcast over the batch, would launch kernels to recompute the traced value.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ._trace import Step, Trace

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
MIN_RUN = 2  # fuse runs of at least this many ops
# Ops whose result depends only on their input's shape and dtype (signatures fix both).
SHAPE_ONLY_OPS = frozenset({"ones_like", "zeros_like"})


def fold_constants(steps: list[Step], trace: Trace, keep: set[int]) -> list[Step]:
    """``steps`` without those whose results are constants, their traced arrays added to
    ``trace.constants`` (a replay reads them as it reads captured values).

    A step folds when it runs on a GPU, has results, is not stateful (random draws,
    checks), has no value-dependent result shape, none of its results is kept after the
    replay (a result or a variable's new value must be a buffer of its own), and each of
    its inputs is a constant, or it is of ``SHAPE_ONLY_OPS``. Its traced results are what
    the op computes from those inputs at every replay: ops are deterministic but for
    random ones, and the constants' arrays are never written (the in-place plans pin
    them).
    """
    constants = trace.constants
    out: list[Step] = []
    for s in steps:
        if (s.outs and not s.stateful and s.shapes is None and s.name != "guard"
                and hasattr(s.backend.xp, "ElementwiseKernel")
                and not any(o in keep for o in s.outs)
                and all(o in trace.arrays for o in s.outs)
                and (s.name in SHAPE_ONLY_OPS or all(k in constants for k in s.ins))):
            for o in s.outs:
                constants[o] = trace.arrays[o]
            continue
        out.append(s)
    return out


class FusedKernel:
    """A fused step's forward: ``kernel(be, *inputs)`` launches the generated kernel."""

    __slots__ = ("kernel", "source")

    def __init__(self, kernel: Any, source: str) -> None:
        self.kernel = kernel
        self.source = source  # the kernel's operation, for messages and tests

    def __call__(self, be: Any, *arrays: Any) -> Any:
        return self.kernel(*arrays)

    def into(self, be: Any, *arrays: Any, out: Any) -> Any:
        """The kernel writing its one result into ``out``: an input that dies here, of the
        result's shape (``_inplace``; each element is read before it is written)."""
        return self.kernel(*arrays, out)


def _fusible(s: Step, trace: Trace) -> Any:
    """The step's (dtype, result shape) if it can join a run, else None."""
    if s.cuda is None or s.attrs or len(s.outs) != 1 or s.stateful:
        return None
    if not hasattr(s.backend.xp, "ElementwiseKernel"):
        return None
    out = trace.arrays.get(s.outs[0])
    if out is None or out.dtype not in _FLOATS:
        return None
    if any(getattr(trace.arrays.get(k), "dtype", None) != out.dtype for k in s.ins):
        return None
    return out.dtype, tuple(out.shape), id(s.backend)


def fuse_elementwise(steps: list[Step], trace: Trace, keep: set[int]
                     ) -> tuple[list[Step], list[str]]:
    """``steps`` with each fusible run replaced by one fused step.

    Every kernel is run on the traced values; their results are compared with the traced
    ones on the device, and the comparisons read back in one copy (one sync per trace).

    Args:
        steps: the kept steps, in order.
        trace: their trace (the traced arrays check each kernel).
        keep: slots needed after the replay (results, variable writes).

    Returns:
        The new steps, and one line per run left unfused, saying why.
    """
    readers: dict[int, set[int]] = {}
    for j, s in enumerate(steps):
        for k in s.ins:
            readers.setdefault(k, set()).add(j)
    runs: list[tuple[int, int]] = []
    j = 0
    while j < len(steps):
        key = _fusible(steps[j], trace)
        end = j + 1
        if key is not None:
            while end < len(steps) and _fusible(steps[end], trace) == key:
                end += 1
        if end - j >= MIN_RUN:
            runs.append((j, end))
        j = end
    skipped: list[str] = []
    built: dict[int, tuple[int, Step, Any]] = {}  # run start -> (end, step, device flag)
    for start, end in runs:
        step, flag, why = _build(steps, start, end, trace, keep, readers)
        if step is None:
            skipped.append(why)
        else:
            built[start] = (end, step, flag)
    if built:
        be = next(iter(built.values()))[1].backend
        ok = np.asarray(be.to_host(be.xp.stack([f for _, _, f in built.values()])))
        for (start, (_, step, _)), good in zip(list(built.items()), ok):
            if not good:
                skipped.append(f"{step.name[6:-1]}: left unfused, its kernel's result "
                               f"differs from the traced one; kernel: {step.forward.source}")
                del built[start]
    out: list[Step] = []
    j = 0
    while j < len(steps):
        if j in built:
            end, step, _ = built[j]
            out.append(step)
            j = end
        else:
            out.append(steps[j])
            j += 1
    return out, skipped


def _build(steps: list[Step], start: int, end: int, trace: Trace, keep: set[int],
           readers: dict[int, set[int]]) -> tuple[Step | None, Any, str]:
    """The fused step of ``steps[start:end]`` and a device flag: whether its kernel gave
    the traced results; or None and why it could not be built or run."""
    run = steps[start:end]
    names: dict[int, str] = {}
    inputs: list[int] = []
    lines = []
    for n, s in enumerate(run):
        args = []
        for k in s.ins:
            if k not in names:
                names[k] = f"i{len(inputs)}"
                inputs.append(k)
            args.append(names[k])
        names[s.outs[0]] = f"t{n}"
        lines.append(f"T t{n} = {s.cuda.format(*args)};")  # type: ignore[union-attr]
    inside = set(range(start, end))
    results = [s.outs[0] for s in run
               if s.outs[0] in keep or readers.get(s.outs[0], set()) - inside]
    lines += [f"o{m} = {names[k]};" for m, k in enumerate(results)]
    source = " ".join(lines)
    label = "+".join(s.name for s in run)
    be = run[0].backend
    xp = be.xp
    try:
        kernel = xp.ElementwiseKernel(
            ", ".join(f"T i{m}" for m in range(len(inputs))),
            ", ".join(f"T o{m}" for m in range(len(results))),
            source, f"ember_fused_{'_'.join(s.name for s in run)}"[:120],
            options=("--fmad=false",))
        got = kernel(*(trace.arrays[k] for k in inputs))  # compiles (errors raise here)
        got = got if isinstance(got, tuple) else (got,)
        flags = [xp.array_equal(g, trace.arrays[k], equal_nan=True)
                 for k, g in zip(results, got)]
        flag = xp.all(xp.stack(flags))
    except Exception as e:  # a kernel that fails to build or run: the ops run unfused
        return None, None, _unfused(label, source, e)
    step = Step(f"fused[{label}]", FusedKernel(kernel, source), be, tuple(inputs),
                tuple(results), None, False)
    if len(results) == 1:
        step.out_form = step.forward.into
    return step, flag, ""


def _unfused(label: str, source: str, e: Exception) -> str:
    """One line: which run was left unfused (its ops, its generated C) and why. A compile
    error is cupy's ``CompileException`` (the strict double's too), whose text is the
    compiler's whole log (nvrtc's: the temporary file, the line, a caret, a summary): its
    first ``error:`` line, without the file, is the reason."""
    if type(e).__name__ == "CompileException":
        errors = [ln.strip() for ln in str(e).splitlines() if "error" in ln]
        why = re.sub(r"^.*?\(\d+\): (?=error)", "", errors[0]) if errors else str(e).strip()
        return f"{label}: left unfused, its kernel did not compile ({why}); kernel: {source}"
    return (f"{label}: left unfused, its kernel failed ({type(e).__name__}: {e}); "
            f"kernel: {source}")
