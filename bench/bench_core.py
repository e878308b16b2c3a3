"""Small-op overhead: em.add and em.matmul on (2, 2) float32 against numpy, PyTorch, TF.

Also the BLAS thread policy: a 256x256 matmul with 1 and 2 BLAS threads, on a quiet
machine and while another process keeps one core busy; and random draws of 1e6 float32
values on the CPU: ember's Philox4x32-10 (numpy) against numpy's PCG64 (ember's
generator before Philox) and PyTorch's CPU generator.
"""

from __future__ import annotations

import multiprocessing as mp
import platform

import numpy as np
from _harness import compare, table, try_import, write

import ember.core as em

NAN = float("nan")


def _small_ops() -> str:
    a = np.ones((2, 2), np.float32)
    t = em.constant(a)
    torch = try_import("torch")
    tf = try_import("tensorflow")
    out = []
    for op in ("add", "matmul"):
        c = {f"numpy np.{op}": (lambda op=op: getattr(np, op)(a, a)),
             f"ember em.{op}": (lambda op=op: getattr(em, op)(t, t))}
        if torch is not None:
            torch.set_num_threads(1)
            ta = torch.ones((2, 2))
            c[f"PyTorch torch.{op}"] = lambda op=op, ta=ta: getattr(torch, op)(ta, ta)
        if tf is not None:
            tt = tf.ones((2, 2))
            c[f"TensorFlow tf.{op}"] = lambda op=op, tt=tt: getattr(tf, op)(tt, tt)
        times = compare(c, number=20000)
        if torch is None:
            times[f"PyTorch torch.{op}"] = NAN
        if tf is None:
            times[f"TensorFlow tf.{op}"] = NAN  # not installed
        out.append(table(f"{op} on (2, 2) float32, no tape", times, f"numpy np.{op}"))
    return "\n".join(out)


def _busy(stop: mp.Event) -> None:  # type: ignore[valid-type]
    x = 0
    while not stop.is_set():
        x += 1


def _blas_threads() -> str:
    from threadpoolctl import threadpool_limits

    a = np.random.default_rng(0).random((256, 256)).astype(np.float32)
    rows = ["### BLAS threads: 256x256 float32 matmul", "",
            "| BLAS threads | quiet (us) | one core busy (us) | slowdown |", "|---:|---:|---:|---:|"]
    for n in (1, 2):
        with threadpool_limits(limits=n):
            quiet = compare({"m": lambda: a @ a}, number=200)["m"]
            stop = mp.Event()
            p = mp.Process(target=_busy, args=(stop,))
            p.start()
            try:
                busy = compare({"m": lambda: a @ a}, number=200)["m"]
            finally:
                stop.set()
                p.join()
        rows.append(f"| {n} | {quiet * 1e6:.1f} | {busy * 1e6:.1f} | {busy / quiet:.2f}x |")
    return "\n".join(rows) + "\n"


def _random() -> str:
    """1e6 float32 draws: uniform (dropout masks, augmentation), normal and truncated
    normal (initializers). Philox costs ten rounds of ufunc passes a block in numpy, which
    PCG64's C loop does not pay; PyTorch runs one thread here."""
    n = 10**6
    pcg = np.random.Generator(np.random.PCG64(0))
    gen = em.random.Generator(0)
    torch = try_import("torch")
    if torch is not None:
        torch.set_num_threads(1)
    cases = {
        "uniform": (lambda: gen.uniform([n]), lambda: pcg.random(n, dtype=np.float32),
                    "rand", lambda: torch.rand(n)),
        "normal": (lambda: gen.normal([n]), lambda: pcg.standard_normal(n, dtype=np.float32),
                   "randn", lambda: torch.randn(n)),
        "truncated_normal": (lambda: gen.truncated_normal([n]),
                             lambda: pcg.standard_normal(n, dtype=np.float32),
                             "nn.init.trunc_normal_",
                             lambda: torch.nn.init.trunc_normal_(torch.empty(n), a=-2, b=2)),
    }
    out = []
    for name, (ours, old, tname, theirs) in cases.items():
        ref = "numpy PCG64 standard_normal" if name != "uniform" else "numpy PCG64 random"
        c = {ref: old, f"ember em.random.{name}": ours}
        if torch is not None:
            c[f"PyTorch torch.{tname}"] = theirs
        times = compare(c, number=3, rounds=9)
        if torch is None:
            times[f"PyTorch torch.{tname}"] = NAN
        out.append(table(f"random {name}: 1e6 float32 on the CPU", times, ref, unit="ms"))
    return "\n".join(out)


def main() -> None:
    text = (f"## ember-core: op overhead\n\nMachine: {platform.machine()}, "
            f"{mp.cpu_count()} cores, numpy {np.__version__}.\n\n")
    text += _small_ops() + "\n" + _blas_threads() + "\n" + _random()
    write("core", text)


if __name__ == "__main__":
    main()
