"""The gradient registry: one rule per differentiable core op, in ``<family>.py``.

Each core op's rule lives in the file named for its family (``OpDef.family``), as its
forward lives in core's ``_ops/<family>.py`` (``tests/test_rules_coverage.py`` checks).

A rule is ``rule(op, dy) -> grad or tuple of grads`` (one per input, ``None`` where an
input gets no gradient). ``op`` carries ``inputs``, ``outputs``, ``attrs``, ``output`` and
``needs`` (which inputs lead to a requested source; a rule may skip the others);
``dy`` is the output's gradient (a list, with zeros filled in, for multi-output ops).
Rules use ember ops only, so a tape watching the backward pass records it and higher
derivatives come free. Broadcasting is undone once in the tape walker, not in rules.

Complex tensors follow TensorFlow's and PyTorch's convention: the gradient of a real loss
``L`` with respect to ``z`` is ``dL/d re(z) + i dL/d im(z)``, which for a holomorphic op
``y = f(z)`` is ``dy * conj(f'(z))``. A rule is written for real tensors, as ``dy *
f'(x)``; each declares (``register_gradient(name, complex=...)``) how it meets complex
ones:

- ``"holomorphic"`` (the default): the op is holomorphic in its complex inputs (or piecewise
  so: a selection such as ``maximum``'s), and its rule is C-linear in ``dy`` with
  coefficients computed from the op's tensors. The tape calls it as
  ``conj(rule(conj(dy)))`` when the op's output or an input is complex: that turns
  ``dy * f'`` into ``dy * conj(f')`` in one place for every such rule (the conj ops are
  recorded like any other, so higher orders stay right);
- ``"own"``: the rule already gives the complex gradient as it is (``abs``, ``cast``, the
  complex parts, the Fourier transforms, ``custom_gradient``, and linear ops whose
  coefficients are real: the conjugations would cancel, so they are skipped);
- ``"real"``: the rule is for real tensors only; a complex tensor reaching it raises a
  TypeError naming the op rather than giving a wrong number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ember.core import OpDef, Tensor

# What a rule returns: one gradient per input, None where an input gets none.
Gradients = Tensor | None | Sequence[Tensor | None]

RULES: dict[str, Callable[..., Any]] = {}
# Multi-output ops whose rules take None (not zeros) for outputs without a gradient: the
# fused recurrent cells, whose extra outputs (saved activations) have none at first order.
MISSING_AS_NONE: set[str] = set()
# Ops whose rules read no input tensor (only shapes and dtypes) / no output tensor: a tape
# keeps a stand-in with the shape and dtype there, so an activation that no rule reads is
# freed as soon as the forward lets go of it (a conv's output under its bias and relu).
DROPS_INPUTS: set[str] = set()
DROPS_OUTPUTS: set[str] = set()
# How each rule meets complex tensors (see the module's docstring): rules that give the
# complex gradient themselves, and rules for real tensors only. The others are holomorphic.
HOLOMORPHIC, OWN, REAL = "holomorphic", "own", "real"
COMPLEX_OWN: set[str] = set()
COMPLEX_REAL_ONLY: set[str] = set()


def reads_only(name: str, inputs: bool = True, outputs: bool = True) -> None:
    """Declare which of op ``name``'s tensors its rule reads (False: shape and dtype only)."""
    if not inputs:
        DROPS_INPUTS.add(name)
    if not outputs:
        DROPS_OUTPUTS.add(name)


def register_gradient(name: str, complex: str = HOLOMORPHIC
                      ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: register the gradient rule of core op ``name`` (raises on duplicates).

    The rule is called as ``rule(op, dy)`` and returns one gradient per input (or None).
    ``dy`` is one Tensor for an op with one output, a forward returning a 1-tuple
    included, and a list of Tensors only for two or more outputs. A gradient must have
    its input's shape or one the input broadcasts to; anything else raises a ValueError
    naming the op.

    ``complex`` says how the rule meets complex tensors: ``"holomorphic"`` (the tape
    applies it as ``conj(rule(conj(dy)))``: right for an op holomorphic in its inputs whose
    rule is C-linear in ``dy``), ``"own"`` (the rule gives the complex gradient itself) or
    ``"real"`` (real tensors only: a complex one reaching the rule raises a TypeError).
    """
    if complex not in (HOLOMORPHIC, OWN, REAL):
        raise ValueError(f"register_gradient({name!r}): complex must be 'holomorphic', "
                         f"'own' or 'real', got {complex!r}")

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        if name in RULES:
            raise KeyError(f"a gradient rule for {name!r} is already registered")
        RULES[name] = fn
        if complex == OWN:
            COMPLEX_OWN.add(name)
        elif complex == REAL:
            COMPLEX_REAL_ONLY.add(name)
        return fn

    return deco


class OpContext:
    """A recorded op, as a rule sees it: ``op``, ``inputs``, ``attrs``, ``outputs``, ``output``."""

    __slots__ = ("_keys", "_reach", "attrs", "inputs", "op", "output", "outputs")

    def __init__(self, op: OpDef, inputs: tuple[Any, ...], attrs: dict[str, Any] | None,
                 outputs: tuple[Any, ...], reach: Any = None, keys: Any = None) -> None:
        self.op = op
        self.inputs = inputs
        self.attrs = attrs if attrs is not None else _EMPTY
        self.outputs = outputs
        self.output: Any = outputs[0] if outputs else None
        self._reach = reach  # the ids the tape's walk reaches (None: every input is needed)
        self._keys = inputs if keys is None else keys  # the inputs' places in the walk

    @property
    def needs(self) -> tuple[bool, ...]:
        """Which inputs the walk needs a gradient for; expensive rules skip the others."""
        reach = self._reach
        if reach is None:
            return (True,) * len(self.inputs)
        return tuple([id(x) in reach for x in self._keys])


_EMPTY: dict[str, Any] = {}


def _load() -> None:
    from . import (  # noqa: F401  (registers the rules)
        array,
        conv,
        ctc,
        fft,
        linalg,
        math,
        nn,
        recurrent,
        reduce,
    )
    for name in ("add", "subtract", "negative", "identity", "reshape"):
        reads_only(name, inputs=False, outputs=False)
    reads_only("relu", inputs=False)  # its rule reads its output
    for name in ("multiply", "matmul", "conv2d", "conv2d_backprop_input",
                 "conv2d_backprop_filter", "extract_patches", "patches_to_image"):
        reads_only(name, outputs=False)


_load()
