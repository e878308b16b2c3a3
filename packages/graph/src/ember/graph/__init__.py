"""ember.graph: graphs on demand. Trace a function once, replay it without Python overhead.

``graph.function`` is ember's ``tf.function`` (the guides' ``tfe.defun``): the first call
with a new input signature runs the function eagerly while a tracer records every op it
runs (its tape's backward pass and its optimizer's updates included); later calls with the
same signature replay the recorded backend calls in one loop, with no Tensor objects, no
recorders and no tape.

What a replay keeps from eager execution, and what it does not:

- Values read on the host while tracing (``float(t)``, ``bool(t)``, ``if t > 0:``,
  ``t.numpy()``) become guards: a replay in which such a value differs runs the function
  eagerly instead and traces the new path, so it never takes the wrong branch.
- Random ops draw new numbers on every call; a seeded generator still repeats.
- Variables are read when a call starts and written when it ends.
- Python side effects (``print``, appending to a list, counting calls) happen only while
  tracing, as in TensorFlow.
- Under a ``GradientTape``, a replayed call is one op on the tape, whose gradient is the
  backward pass traced with it. Inside another traced function, the function runs
  eagerly, as part of that trace.

Examples:
    >>> import ember.core as em
    >>> from ember import graph
    >>> @graph.function
    ... def f(x):
    ...     return em.reduce_sum(x * x + x)
    >>> f(em.constant([1.0, 2.0]))
    ember.Tensor(8.0, shape=(), dtype=float32)
    >>> f(em.constant([3.0, 4.0]))  # replayed
    ember.Tensor(32.0, shape=(), dtype=float32)
    >>> f.experimental_get_tracing_count()
    1
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._function import Function, functions_run_eagerly, run_functions_eagerly
from ._spec import SignatureMismatchError, TensorSpec, flat_specs
from ._version import __version__ as __version__  # tf.__version__, keras.__version__

__all__ = ["Function", "SignatureMismatchError", "TensorSpec", "function",
           "functions_run_eagerly", "run_functions_eagerly"]


def function(fn: Callable[..., Any] | None = None, input_signature: Any = None, *,
             reduce_retracing: bool = False, max_traces: int = 8,
             cuda_graphs: bool = True, jit_compile: bool | None = None,
             experimental_relax_shapes: bool | None = None) -> Any:
    """Trace ``fn`` once per input signature and replay it on later calls.

    Usable as ``@graph.function`` or ``@graph.function(max_traces=4)``, on functions and
    methods.

    Args:
        fn: The function. Its arguments may be tensors, numpy arrays (taken as tensors),
            variables, hashable Python values, and lists, tuples and dicts of them. It
            returns tensors, Python values, or lists, tuples and dicts of them.
        input_signature: A list or tuple of ``graph.TensorSpec`` (or of lists, tuples and
            dicts of them), one per argument, as TensorFlow's: every call's arguments must
            be tensors that fit (numpy arrays and Python numbers the spec's dtype holds
            are converted), and anything else raises a TypeError or ValueError naming the
            argument, its spec and what was given. A ``None`` size accepts any size; ember
            traces once per size it meets, since a trace is made at one shape (see
            ``TensorSpec``), and does not warn about those traces.
        reduce_retracing: If True, once a function has been traced for two shapes of
            otherwise equal arguments, calls with further shapes run eagerly instead of
            tracing again (for inputs whose shapes keep changing, such as sentence
            lengths). Not applied with an ``input_signature``.
        max_traces: How many traces to keep (the least recently used goes first).
        cuda_graphs: On a GPU, capture each replay as a CUDA Graph on its second replay
            and launch that graph afterwards: one launch per call instead of one per op.
            Replays that read values on the host or span devices are not captured
            (random draws are: each launch draws new numbers on the GPU);
            ``Function.cuda_graph_status()`` says which and why.
            False replays op by op (to profile kernels one by one, say).
        jit_compile: TensorFlow's request for XLA. None and False (no XLA) are accepted;
            True raises, as ember does not compile with XLA.
        experimental_relax_shapes: TensorFlow 2's older name of ``reduce_retracing``.

    Returns:
        A ``graph.Function`` (or, without ``fn``, a decorator that makes one).

    Raises:
        TypeError: ``fn`` is not callable, an argument has the wrong type, or ``fn`` takes
            ``**kwargs`` with an ``input_signature``.
        ValueError: ``max_traces`` is less than 1.

    Examples:
        >>> import ember.core as em
        >>> from ember import graph
        >>> @graph.function(max_traces=2)
        ... def scale(x, factor):
        ...     return x * factor
        >>> scale(em.constant([1.0]), 2.0)
        ember.Tensor([2.], shape=(1,), dtype=float32)
    """
    if jit_compile:
        raise ValueError("graph.function: jit_compile=True asks for XLA compilation, which "
                         "ember does not do; leave it out (or False) to trace and replay")
    if experimental_relax_shapes is not None:
        reduce_retracing = experimental_relax_shapes
    if not isinstance(reduce_retracing, bool):
        raise TypeError(f"graph.function: reduce_retracing must be a bool, "
                        f"got {type(reduce_retracing).__name__}")
    if isinstance(max_traces, bool) or not isinstance(max_traces, int):
        raise TypeError(f"graph.function: max_traces must be an int, "
                        f"got {type(max_traces).__name__}")
    if not isinstance(cuda_graphs, bool):
        raise TypeError(f"graph.function: cuda_graphs must be a bool, "
                        f"got {type(cuda_graphs).__name__}")
    if max_traces < 1:
        raise ValueError(f"graph.function: max_traces must be at least 1, got {max_traces}")
    if input_signature is not None:
        if not isinstance(input_signature, (list, tuple)):
            raise TypeError("graph.function: input_signature must be a list or tuple of "
                            "graph.TensorSpec (one per argument), got "
                            f"{type(input_signature).__name__}")
        flat_specs(list(input_signature))

    def make(f: Callable[..., Any]) -> Function:
        if not callable(f):
            raise TypeError(f"graph.function: expected a callable, got {type(f).__name__}")
        return Function(f, reduce_retracing, max_traces, cuda_graphs, input_signature)

    return make if fn is None else make(fn)
