"""Symbolic tensors of the functional API: what ``nn.Input`` returns and what a layer
called on one returns (its shape, with the batch axis ``None``, its dtype, and the call
that made it). ``nn.Model(inputs, outputs)`` replays those calls on real tensors."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

import ember.core as em

from . import _masks


class Node:
    """One layer call on symbolic tensors: ``layer(inputs, *args, **kwargs)``."""

    __slots__ = ("args", "inputs", "kwargs", "layer", "outputs")

    def __init__(self, layer: Any, inputs: Any, args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> None:
        self.layer, self.inputs, self.args, self.kwargs = layer, inputs, args, kwargs
        self.outputs: Any = None


def _refuse(self: SymbolicTensor, *args: Any, **kwargs: Any) -> Any:
    raise TypeError(
        f"{self!r} is a symbolic tensor of the functional API (nn.Input, or a layer called "
        f"on one): it holds no values, so numpy, Python's conversions (float, int, bool), "
        f"len() and iteration cannot take it (ember's functions and ops, indexing and the "
        f"arithmetic operators make nodes of the model's graph); wrap the computation in "
        f"nn.layers.Lambda(...)")


def _binary(name: str, reflected: bool = False) -> Any:
    def op(self: SymbolicTensor, other: Any) -> Any:
        from . import operations

        cls = getattr(operations, name)
        return cls()(other, self) if reflected else cls()(self, other)

    return op


def _unary(name: str) -> Any:
    def op(self: SymbolicTensor) -> Any:
        from . import operations

        return getattr(operations, name)()(self)

    return op


class SymbolicTensor:
    """A placeholder for the values a model's input (or a layer's output) will hold.

    Attributes:
        shape: the shape, batch axis ``None``.
        dtype: the numpy dtype.
        name: the input's name (``nn.Input(name=...)``), else None.
        mask: the mask the layer that made it attached to its output when it was built
            (on zeros of batch 1), or None: the next layer is built with it, as Keras
            builds layers with the masks its symbolic tensors carry (a layer whose call
            reads ``mask`` sees one at build time as it will when the model runs).
        batched: whether the first axis is the batch's (probed at size 1); an operation's
            output may have none (``em.reduce_sum(x, axis=0)``: shape ``(32,)``).
    """

    __slots__ = ("batched", "dtype", "index", "mask", "name", "node", "shape")
    # what core's hand-over error adds where a call cannot make a node (em.constant(x))
    __ember_hint__ = ("a symbolic tensor of the functional API holds no values; ember's "
                      "functions and ops on it make nodes of the model's graph, and any "
                      "other computation goes in nn.layers.Lambda(...)")

    def __init__(self, shape: tuple[Any, ...], dtype: Any, node: Node | None = None,
                 index: int = 0, name: str | None = None, mask: Any = None,
                 batched: bool = True) -> None:
        self.shape, self.dtype, self.node, self.index, self.name = (
            tuple(shape), em.as_dtype(dtype), node, index, name)
        self.mask = mask
        self.batched = batched and bool(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        made = f"input {self.name!r}" if self.node is None else f"output of {self.node.layer.name!r}"
        return f"<SymbolicTensor shape={self.shape} dtype={self.dtype} ({made})>"

    __array__ = __bool__ = __float__ = __int__ = __index__ = __iter__ = __len__ = _refuse
    __pos__ = _refuse

    # //, % and @ have no operation node of Keras's here: they make nodes of ember's
    # functions (operations.OpLambda), as em.floordiv(x, y) on a symbolic tensor does
    def __floordiv__(self, other: Any) -> Any:
        return em.floordiv(self, other)

    def __rfloordiv__(self, other: Any) -> Any:
        return em.floordiv(other, self)

    def __mod__(self, other: Any) -> Any:
        return em.mod(self, other)

    def __rmod__(self, other: Any) -> Any:
        return em.mod(other, self)

    def __matmul__(self, other: Any) -> Any:
        return em.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return em.matmul(other, self)

    def __getitem__(self, key: Any) -> Any:
        """``x[:, 0]``: a node of the graph (``em.getitem``), as Keras's ``GetItem``."""
        return em.getitem(self, key)

    # Python's operators on symbolic tensors record Keras 3's operation nodes (``x + y``
    # is ``keras.ops.add``, an ``Add`` node of the graph): see ``operations``
    __add__ = _binary("Add")
    __radd__ = _binary("Add", reflected=True)
    __sub__ = _binary("Subtract")
    __rsub__ = _binary("Subtract", reflected=True)
    __mul__ = _binary("Multiply")
    __rmul__ = _binary("Multiply", reflected=True)
    __truediv__ = _binary("TrueDivide")
    __rtruediv__ = _binary("TrueDivide", reflected=True)
    __pow__ = _binary("Power")
    __rpow__ = _binary("Power", reflected=True)
    __lt__ = _binary("Less")
    __le__ = _binary("LessEqual")
    __gt__ = _binary("Greater")
    __ge__ = _binary("GreaterEqual")
    __neg__ = _unary("Negative")
    __abs__ = _unary("Absolute")

    @staticmethod
    def __ember_op__(op: Any, inputs: tuple[Any, ...], attrs: dict[str, Any] | None) -> Any:
        """An ember op called on this symbolic tensor (``em.squeeze(x)``): a node of the
        graph (``operations.OpLambda``), as tf.keras's ``TFOpLambda``."""
        from .operations import op_on_symbolic

        return op_on_symbolic(op, inputs, attrs)

    @staticmethod
    def __ember_function__(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A public function of ``ember.core`` called on this symbolic tensor
        (``em.squeeze(x)``): a node of the graph (``operations.OpLambda``), as tf.keras's
        ``TFOpLambda``."""
        from .operations import function_on_symbolic

        return function_on_symbolic(fn, args, kwargs)


def leaves(structure: Any) -> list[Any]:
    """The leaves of nested lists, tuples and dicts, in order."""
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in leaves(item)]
    if isinstance(structure, dict):
        return [leaf for key in structure for leaf in leaves(structure[key])]
    return [structure]


def map_structure(fn: Any, structure: Any) -> Any:
    if isinstance(structure, (list, tuple)):
        return type(structure)(map_structure(fn, item) for item in structure)
    if isinstance(structure, dict):
        return {key: map_structure(fn, value) for key, value in structure.items()}
    return fn(structure)


def is_symbolic(structure: Any) -> bool:
    return any(isinstance(leaf, SymbolicTensor) for leaf in leaves(structure))


def substitute(fn: Any, structure: Any) -> Any:
    """``structure`` with each symbolic tensor ``t`` replaced by ``fn(t)`` (other leaves,
    such as Python numbers in a call's keyword arguments, kept as they are)."""
    return map_structure(lambda t: fn(t) if isinstance(t, SymbolicTensor) else t, structure)


def symbolic_leaves(node: Node) -> list[SymbolicTensor]:
    """Every symbolic tensor a call reads: its inputs, and those among its other arguments
    (``initial_state=`` of a recurrent layer, ``mask=``)."""
    return [t for t in leaves([node.inputs, list(node.args), node.kwargs])
            if isinstance(t, SymbolicTensor)]


def _unknown_axes(layer: Any, inputs: Any, args: Any, kwargs: Any) -> bool:
    """Whether a symbolic tensor the call reads has an axis of unknown size (beyond the
    batch's), whose output axes then have to be found."""
    return any(isinstance(t, SymbolicTensor) and None in t.shape[1:]
               for t in leaves([inputs, list(args), kwargs]))


# Unknown axes are probed at size 1, or, where a layer refuses 1 (a window longer than
# one step), at _FALLBACK; then at that plus _SPREAD. Sizes 1 and 2 (the pair before) meet
# under a stride of 2 with "same" padding (both give 1) and under a pool of 4 (both fail):
# the output's axis then looked fixed where Keras's is None. Sizes _SPREAD apart differ
# under any stride or pool up to _SPREAD.
_FALLBACK = 64
_SPREAD = 64
_BATCH_PROBE = 5  # an operation's second batch size (differs from 1 under x[::2], x[::3])
_FILLS = ("zeros", "ones", "uniform")  # what a probe's inputs hold, tried in this order


def probe_tensor(shape: tuple[int, ...], dtype: Any, fill: str) -> Any:
    """A probe's input: zeros, ones, or numbers in [0.5, 1.5) (the same each time, drawn
    from no ember generator; integer and bool dtypes take ones)."""
    if fill == "zeros":
        return em.zeros(shape, dtype=dtype)
    if fill == "ones" or np.dtype(dtype).kind != "f":
        return em.ones(shape, dtype=dtype)
    return em.constant(np.random.default_rng(0).uniform(0.5, 1.5, shape).astype(dtype))


@contextlib.contextmanager
def losses_kept_out(layer: Any) -> Iterator[None]:
    """Losses that ``add_loss`` and activity regularizers add while ``layer`` runs on a
    probe are the probe's: they are dropped afterwards, as Keras 3 drops those added while
    a model is traced symbolically (``model.losses`` held a number computed on zeros)."""
    def tree() -> list[Any]:
        return [layer, *layer.submodules]

    before = {id(one): list(one._ember.call_losses) for one in tree()}
    try:
        yield
    finally:
        for one in tree():
            one._ember.call_losses[:] = before.get(id(one), [])


def run_probe(fn: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    """``fn`` on a probe input of ``shape``: zeros; where the values make a layer refuse
    them (an index out of range after ``x - 1``, a singular matrix), ones, then numbers in
    [0.5, 1.5). numpy's warnings on them (``log(0)``) are not the user's: silenced."""
    first: Exception | None = None
    for fill in _FILLS:
        try:
            with np.errstate(all="ignore"):
                return fn(probe_tensor(shape, dtype, fill))
        except Exception as refused:
            first = first or refused
    assert first is not None
    raise first


def _probe_wider(probe: Any, layer: Any, *sizes: int) -> Any:
    """The layer's output on zeros whose unknown axes have the first of ``sizes`` the
    layer takes (the first probe gave them another): an output axis whose size differs
    between the two follows an unknown input axis, so its size is unknown too (Keras's
    ``None``). Several sizes, since a layer may take only short sequences (a position
    table of 64 rows sliced to the length refuses 65, takes 2). None where that cannot be
    found: a stateful layer (the probe would advance its state) or a layer that refuses
    every other size (its output shapes stay the first probe's)."""
    if getattr(layer, "stateful", False):
        return None
    losses = list(layer._ember.call_losses)
    try:
        for size in sizes:
            try:
                return probe(size)
            except Exception:  # e.g. a Reshape to a fixed size: try the next size
                continue
        return None
    finally:
        layer._ember.call_losses[:] = losses  # the probe's activity losses are not kept


def call_symbolic(layer: Any, inputs: Any, args: tuple[Any, ...],
                  kwargs: dict[str, Any], values_allowed: bool = False) -> Any:
    """Record ``layer(inputs, ...)`` on symbolic inputs: the layer builds and runs once on
    zeros of batch 1 (inference mode, nothing recorded) to learn its output shapes.
    ``values_allowed``: plain values (numbers) may stand among the inputs (an operation
    node's ``1 - x``), kept as they are when the model runs."""
    if not values_allowed and not all(isinstance(leaf, SymbolicTensor)
                                      for leaf in leaves(inputs)):
        raise TypeError(f"layer {layer.name!r}: called on symbolic tensors mixed with "
                        f"values; make the values a layer's weights or a Lambda's constants")

    def filled(size: int, fill: str, batch: int = 1) -> Any:
        def make(s: SymbolicTensor) -> Any:
            if not s.shape:
                shape: tuple[int, ...] = ()
            else:
                # a batch size the input fixes is the probe's (a layer may reshape to it)
                first = (batch if s.shape[0] is None else s.shape[0]) if s.batched else (
                    size if s.shape[0] is None else s.shape[0])
                shape = (first,) + tuple(size if d is None else d for d in s.shape[1:])
            z = probe_tensor(shape, s.dtype, fill)
            if s.mask is not None:
                m, want = s.mask, tuple(z.shape[:s.mask.ndim])
                if tuple(m.shape) != want:  # a size-1 axis, widened; else another size's
                    m = em.broadcast_to(m, want) if all(
                        a in (1, b) for a, b in zip(m.shape, want)) else em.ones(want, m.dtype)
                _masks.set_mask(z, m)
            return z
        return make

    chosen = [_FILLS[0]]  # the fill the first probe took: the wider probe takes it too

    def probe(size: int, batch: int = 1) -> Any:
        make = filled(size, chosen[0], batch)
        with np.errstate(all="ignore"):  # log(0) of a probe is no warning of the user's
            return layer(substitute(make, inputs), *substitute(make, list(args)),
                         **{**substitute(make, kwargs), "training": False})

    def probe_any(size: int) -> Any:
        """The probe on zeros; where the values make the layer refuse them (an index
        out of range after ``x - 1``, a singular matrix), on ones, then on numbers in
        [0.5, 1.5): only the shapes of its output are kept."""
        first: Exception | None = None
        for fill in _FILLS:
            chosen[0] = fill
            try:
                return probe(size)
            except Exception as refused:
                first = first or refused
        assert first is not None
        raise first

    _build_symbolically(layer, inputs)
    # symbolic tensors among the other arguments (a recurrent layer's initial_state=) are
    # read the same way, and replayed with their values
    with em.recording.paused(), losses_kept_out(layer):
        unknown = _unknown_axes(layer, inputs, args, kwargs)
        try:
            out, size = probe_any(1), 1
        except Exception as refused:  # (where no axis is unknown, 1 was never used)
            if not unknown:
                raise
            try:
                out, size = probe_any(_FALLBACK), _FALLBACK
            except Exception:
                raise refused from None
        wider = _probe_wider(probe, layer, size + _SPREAD, size + 1) if unknown else None
        # an operation's output need not keep the batch axis first (a reduction over it,
        # a transpose, x[0]): probed at another batch size, the axes that follow the
        # batch are found, as for unknown axes (Keras's ops infer it symbolically)
        batches = None
        batched_in = any(isinstance(t, SymbolicTensor) and t.batched
                         for t in leaves([inputs, list(args), kwargs]))
        # the batch size every batched input fixes (Input(batch_size=...)), else None
        fixed = {t.shape[0] for t in leaves([inputs, list(args), kwargs])
                 if isinstance(t, SymbolicTensor) and t.batched}
        fixed_batch = fixed.pop() if len(fixed) == 1 else None
        if getattr(layer, "_ember_probes_batch", False) and any(
                isinstance(t, SymbolicTensor) and t.batched and t.shape[0] is None
                for t in leaves([inputs, list(args), kwargs])):
            batches = _probe_wider(lambda n: probe(size, n), layer, _BATCH_PROBE)
    node = Node(layer, inputs, args, kwargs)
    n_out = len(leaves(out))
    counter = iter(range(n_out))
    other = iter(leaves(wider) if wider is not None and len(leaves(wider)) == n_out
                 else [None] * n_out)
    by_batch = iter(leaves(batches) if batches is not None and len(leaves(batches)) == n_out
                    else [None] * n_out)

    def symbolic(t: Any) -> SymbolicTensor:
        # an axis whose size followed an input's unknown one is unknown (None) too
        shape, w, b = tuple(t.shape), next(other), next(by_batch)
        if w is not None and len(w.shape) == len(t.shape):
            shape = shape[:1] + tuple(None if a != c else a
                                      for a, c in zip(shape[1:], w.shape[1:]))
        if b is not None and len(b.shape) == len(t.shape):
            shape = tuple(None if a is None or a != c else a for a, c in zip(shape, b.shape))
            batched = bool(shape) and shape[0] is None and t.shape[0] != b.shape[0]
        elif not batched_in:  # no input has a batch axis: the probe's sizes are the sizes
            batched = False
        elif fixed_batch is not None:  # probed at the inputs' fixed batch size: kept
            batched = bool(shape) and shape[0] == fixed_batch
        else:
            shape, batched = (None,) + shape[1:], True
        return SymbolicTensor(shape, t.dtype, node, next(counter), mask=_masks.get_mask(t),
                              batched=batched)

    node.outputs = map_structure(symbolic, out)
    layer._ember.extra.setdefault("inbound_nodes", []).append(node)  # layer.input/.output
    return node.outputs


def _build_symbolically(layer: Any, inputs: Any) -> None:
    """A layer of the user's own ``build`` is built from the symbolic shapes, batch axis
    ``None`` (and any unknown axis ``None``), as Keras builds it; the probe on zeros of
    batch 1 then only calls it. Models (``fit``) build by calling, as before."""
    if getattr(layer, "built", True) or hasattr(layer, "fit"):
        return
    own = next((k for k in type(layer).__mro__ if "build" in vars(k)), None)
    if own is None or own.__module__.startswith("ember."):
        return
    with em.recording.paused():
        layer._ember_maybe_build(inputs)


def Input(shape: Any = None, batch_size: int | None = None, name: str | None = None,
          dtype: Any = None, sparse: Any = None, tensor: Any = None,
          ragged: Any = None, batch_shape: Any = None) -> SymbolicTensor:
    """The input of a functional model (Keras's ``keras.Input``).

    Args:
        shape: the shape of one example, without the batch axis.
        batch_size: a fixed batch size (None: any).
        name: a name for the input.
        dtype: the dtype (float32 by default).
        sparse: not supported (only None or False).
        tensor: not supported (only None).
        ragged: not supported (only None or False).
        batch_shape: ``(batch_size, *shape)`` in one (Keras's), instead of both.

    Returns:
        A ``SymbolicTensor`` of shape ``(batch_size, *shape)``.

    Raises:
        ValueError: ``shape`` is missing, or an unsupported argument is set.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> x = nn.Input(shape=(4,))
        >>> x.shape
        (None, 4)
        >>> model = nn.Model(x, nn.layers.Dense(2)(x))
        >>> model(np.zeros((3, 4), np.float32)).shape
        (3, 2)
    """
    for arg, value in (("sparse", sparse), ("tensor", tensor), ("ragged", ragged)):
        if value:
            raise ValueError(f"Input: {arg}= is not supported by ember")
    if batch_shape is not None:
        if shape is not None or batch_size is not None:
            raise ValueError(f"Input: give batch_shape= or shape= (and batch_size=), not "
                             f"both; got batch_shape={batch_shape!r}, shape={shape!r}, "
                             f"batch_size={batch_size!r}")
        batch_shape = tuple(batch_shape)
        if not batch_shape:
            raise ValueError("Input: batch_shape= needs the batch axis first, got ()")
        batch_size, shape = batch_shape[0], batch_shape[1:]
    if shape is None:
        raise ValueError("Input: give shape= (the shape of one example, without the batch "
                         "axis)")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return SymbolicTensor((batch_size,) + shape, dtype or em.float32, name=name)
