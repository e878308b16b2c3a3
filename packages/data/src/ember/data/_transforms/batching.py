"""batch, padded_batch and unbatch."""

from __future__ import annotations

import numpy as np

from .._dataset import UNKNOWN_CARDINALITY
from .._index_stream import IndexedBatchIterator
from .._iterator import _It
from .._structure import (
    TensorSpec,
    batched_spec,
    describe,
    dict_keys,
    flatten,
    flatten_up_to,
    pack_as,
    same_dtype,
    same_structure,
    to_array,
    unbatched_spec,
)
from .basic import _UnaryDataset


def _mismatch_error(kind, leaves_per_elem, batch_index, batch_size):
    """Name the first element whose component shape differs from the batch's first."""
    first = [to_array(x).shape for x in leaves_per_elem[0]]
    for i, leaves in enumerate(leaves_per_elem[1:], start=1):
        if len(leaves) != len(first):
            return ValueError(
                f"{kind}: element {i} of batch {batch_index} (input element "
                f"{batch_index * batch_size + i}) has {len(leaves)} components, "
                f"element 0 has {len(first)}"
            )
        for c, (leaf, shape) in enumerate(zip(leaves, first)):
            got = to_array(leaf).shape
            if got != shape:
                return ValueError(
                    f"{kind}: cannot stack batch {batch_index}: element {i} (input element "
                    f"{batch_index * batch_size + i}) has shape {got} in component {c}, "
                    f"but element 0 of the batch has shape {shape}; use padded_batch, or map "
                    f"the elements to one shape"
                )
    return None


def _stack_leaves(structure, elems, batch_index, batch_size):
    _check_structures("batch", structure, elems, batch_index, batch_size)
    leaves_per_elem = [flatten(e) for e in elems]
    try:
        cols = [np.stack([to_array(x) for x in col]) for col in zip(*leaves_per_elem)]
    except ValueError as exc:
        err = _mismatch_error("batch", leaves_per_elem, batch_index, batch_size)
        if err is None:
            raise
        raise err from exc
    err = None if all(len(le) == len(cols) for le in leaves_per_elem) else _mismatch_error(
        "batch", leaves_per_elem, batch_index, batch_size)
    if err is not None:
        raise err
    return pack_as(structure, cols)


class _BatchIterator(_It):
    def __init__(self, it, batch_size, drop_remainder, stack):
        self._it, self._bs, self._drop, self._stack = it, batch_size, drop_remainder, stack
        self._count = 0

    def __next__(self):
        elems = []
        for x in self._it:
            elems.append(x)
            if len(elems) == self._bs:
                break
        if not elems or (self._drop and len(elems) < self._bs):
            raise StopIteration
        self._count += 1
        return self._stack(elems[0], elems, self._count - 1, self._bs)

    def get_state(self):
        return {"count": self._count, "input": self._it.get_state()}

    def set_state(self, state):
        self._count = state.integer("count")
        self._it.set_state(state.node("input"))


class BatchDataset(_UnaryDataset):
    def __init__(self, input_ds, batch_size, drop_remainder=False):
        super().__init__(input_ds)
        batch_size = int(batch_size)
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self._bs, self._drop = batch_size, bool(drop_remainder)

    def _make_iterator(self, epoch):
        indexed = self._input._indexed()
        if indexed is not None:
            source, make = indexed
            return IndexedBatchIterator(source, make(epoch), self._bs, self._drop)
        return _BatchIterator(self._input._make_iterator(epoch), self._bs, self._drop,
                              _stack_leaves)

    def _compute_spec(self):
        return batched_spec(self._input.element_spec, self._bs if self._drop else None)

    def cardinality(self):
        n = self._input.cardinality()
        if n < 0:
            return n
        return n // self._bs if self._drop else -(-n // self._bs)


def _component_names(structure) -> list[str]:
    """Each leaf's place in ``structure``, for messages: ``component ['a']``, ``[1]``."""
    def walk(x, path):
        if isinstance(x, tuple):
            return [n for i, v in enumerate(x) for n in walk(v, f"{path}[{i}]")]
        if isinstance(x, dict):
            return [n for k in dict_keys(x) for n in walk(x[k], f"{path}[{k!r}]")]
        return [f"component {path}" if path else "the component"]
    return walk(structure, "")


def _as_padded_shape(shape, name):
    """A padded shape as a tuple of sizes, ``None`` where the batch's largest is taken
    (``None`` or -1 given); ``None`` for no padded shape at all (ember's: every size the
    batch's largest). An int is a shape of one dimension, as in TensorFlow."""
    if shape is None:
        return None
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        dims = tuple(None if d is None or int(d) == -1 else int(d) for d in shape)
    except TypeError:
        raise TypeError(f"padded_batch: the padded shape of {name} must be a sequence of "
                        f"sizes (None or -1 where any size), got {shape!r}") from None
    if any(d is not None and d < 0 for d in dims):
        raise ValueError(f"padded_batch: the padded shape {shape!r} of {name} has a "
                         "negative size")
    return dims


def _default_padding(dtype):
    """TensorFlow's: 0 (False), and the empty string for strings."""
    dtype = np.dtype(dtype)
    if dtype.kind == "S":
        return np.array(b"", dtype)
    if dtype.kind in "UO":
        return np.array("", dtype)
    return np.zeros((), dtype)


class _Padding:
    """padded_batch's padded shapes and padding values, one per component, matched to the
    input's spec as TensorFlow's ``nest.flatten_up_to`` matches them: tuples by position,
    dicts by key (ember took a dict's values in the order they were written in, so
    ``{'b': [5], 'a': [4]}`` padded ``a`` to 5)."""

    def __init__(self, spec, padded_shapes, padding_values):
        leaves = flatten(spec)
        n = len(leaves)
        self.names = _component_names(spec)
        if padded_shapes is None:
            self.given = False
            shapes = [None] * n
        else:
            self.given = True
            shapes = flatten_up_to(spec, padded_shapes, "padded_batch: padded_shapes")
        self.shapes = [_as_padded_shape(sh, nm) for sh, nm in zip(shapes, self.names)]
        for sh, s, nm in zip(self.shapes, leaves, self.names):
            if sh is None or s.shape is None:
                continue
            if len(sh) != len(s.shape) or any(
                    p is not None and d is not None and p < d for p, d in zip(sh, s.shape)):
                raise ValueError(f"padded_batch: the padded shape {sh} of {nm} is not "
                                 f"compatible with the input component's shape {s.shape}")
        if padding_values is None:
            values = [None] * n
        elif isinstance(padding_values, (tuple, dict)):
            values = flatten_up_to(spec, padding_values, "padded_batch: padding_values")
        else:  # one value for every component, as TensorFlow allows
            values = [padding_values] * n
        self.values = [self._value(v, s, nm) for v, s, nm in zip(values, leaves, self.names)]

    @staticmethod
    def _value(value, spec, name):
        if value is None:
            return _default_padding(spec.dtype)
        arr = to_array(value)
        if arr.ndim:
            raise ValueError(f"padded_batch: the padding value of {name} must be a scalar, "
                             f"got shape {arr.shape}")
        if not same_dtype(arr.dtype, spec.dtype):
            raise TypeError(
                f"padded_batch: the padding value of {name} has dtype {arr.dtype}, but the "
                f"input component's dtype is {np.dtype(spec.dtype)}; as TensorFlow, they "
                f"must match (a Python int is int32, a float float32: write e.g. "
                f"np.{np.dtype(spec.dtype).name}(...))")
        kind = np.dtype(spec.dtype).kind
        v = arr[()]
        if kind == "S":  # as numpy strings of their own width: b'<pad>' is not cut to b'<'
            return np.array(v.encode() if isinstance(v, str) else v)
        if kind == "U":
            return np.array(v.decode() if isinstance(v, bytes) else v)
        return arr

    def component_spec(self, k, spec, bs):
        """The batched spec of component ``k``: the padded shape's sizes where given (and
        the input's, where no padded shapes are), as TensorFlow's."""
        sh = self.shapes[k]
        if sh is not None:
            return TensorSpec((bs, *sh), spec.dtype)
        if spec.shape is None:
            return TensorSpec(None, spec.dtype)
        if self.given:  # None given for this component: each size the batch's largest
            return TensorSpec((bs, *(None for _ in spec.shape)), spec.dtype)
        return TensorSpec((bs, *spec.shape), spec.dtype)


class PaddedBatchDataset(BatchDataset):
    def __init__(self, input_ds, batch_size, padded_shapes, padding_values, drop_remainder):
        super().__init__(input_ds, batch_size, drop_remainder)
        self._shapes, self._values = padded_shapes, padding_values
        self._plan: _Padding | None = None
        try:  # checked now, as TensorFlow does; an empty input's spec is only known later
            spec = input_ds.element_spec
        except ValueError:
            return
        self._plan = _Padding(spec, padded_shapes, padding_values)

    def _padding(self) -> _Padding:
        if self._plan is None:
            self._plan = _Padding(self._input.element_spec, self._shapes, self._values)
        return self._plan

    def _make_iterator(self, epoch):
        return _BatchIterator(self._input._make_iterator(epoch), self._bs, self._drop,
                              self._pad_stack)

    def _pad_stack(self, structure, elems, batch_index, batch_size):
        _check_structures("padded_batch", structure, elems, batch_index, batch_size)
        leaves_per_elem = [[to_array(x) for x in flatten(e)] for e in elems]
        plan = self._padding()
        n = len(leaves_per_elem[0])
        if n != len(plan.shapes):
            raise ValueError(f"padded_batch: batch {batch_index} has elements of {n} "
                             f"components, the dataset's spec has {len(plan.shapes)}")
        cols = []
        for c in range(n):
            arrs = [le[c] for le in leaves_per_elem]
            name = plan.names[c]
            ranks = {a.ndim for a in arrs}
            if len(ranks) != 1:
                raise ValueError(
                    f"padded_batch: batch {batch_index} {name} mixes ranks "
                    f"{sorted(ranks)}: shapes {[a.shape for a in arrs]}"
                )
            target = tuple(int(max(a.shape[d] for a in arrs)) for d in range(arrs[0].ndim))
            want = plan.shapes[c]
            if want is not None:
                if len(want) != len(target):
                    raise ValueError(f"padded_batch: batch {batch_index} {name} has rank "
                                     f"{len(target)}, its padded shape {want} has {len(want)}")
                for i, a in enumerate(arrs):
                    for d, (w, s) in enumerate(zip(want, a.shape)):
                        if w is not None and s > w:
                            raise ValueError(
                                f"padded_batch: element {i} of batch {batch_index} has "
                                f"shape {a.shape} in {name}, larger than the padded "
                                f"shape {want} in dimension {d}"
                            )
                target = tuple(t if w is None else w for t, w in zip(target, want))
            fill = plan.values[c]
            dtype = arrs[0].dtype
            if dtype.kind in "US":  # wide enough for every string and the padding
                dtype = max((a.dtype for a in arrs), key=lambda t: t.itemsize)
                if fill.dtype.kind == dtype.kind and fill.dtype.itemsize > dtype.itemsize:
                    dtype = fill.dtype
            elif dtype.kind == "O" and fill[()] == "" and any(
                    isinstance(x, bytes) for a in arrs for x in a.flat):
                fill = np.array(b"", object)  # strings given as bytes: pad with bytes
            out = np.full((len(arrs), *target), fill[()], dtype=dtype)
            for i, a in enumerate(arrs):
                if a.ndim:
                    region = (i, *(slice(0, s) for s in a.shape))
                    out[region] = a
                else:  # the value itself: a 0-d object array went in whole
                    out[i] = a[()]
            cols.append(out)
        return pack_as(structure, cols)

    def _compute_spec(self):
        bs = self._bs if self._drop else None
        spec = self._input.element_spec
        plan = self._padding()
        return pack_as(spec, [plan.component_spec(k, s, bs)
                              for k, s in enumerate(flatten(spec))])


def _check_structures(kind, structure, elems, batch_index, batch_size):
    """Every element of a batch nests as its first does (a dict of other keys would be
    stacked by position, silently)."""
    for i, e in enumerate(elems[1:], start=1):
        if not same_structure(structure, e):
            raise ValueError(
                f"{kind}: element {i} of batch {batch_index} (input element "
                f"{batch_index * batch_size + i}) has the structure {describe(e)}, element "
                f"0 of the batch {describe(structure)}")


class _UnbatchIterator(_It):
    def __init__(self, it) -> None:
        self._it = it
        self._batch_state = it.get_state()
        self._rows: list = []
        self._off = 0

    def _load(self):
        self._batch_state = self._it.get_state()
        batch = next(self._it)
        leaves = [to_array(x) for x in flatten(batch)]
        n = len(leaves[0]) if leaves and leaves[0].ndim else 0
        if any(a.ndim == 0 or len(a) != n for a in leaves):
            raise ValueError(f"unbatch: components differ in their first dimension: "
                             f"{[a.shape for a in leaves]}")
        self._rows = [pack_as(batch, [a[i] for a in leaves]) for i in range(n)]
        self._off = 0

    def __next__(self):
        while self._off >= len(self._rows):
            self._load()
        self._off += 1
        return self._rows[self._off - 1]

    def get_state(self):
        return {"input": self._batch_state, "offset": self._off}

    def set_state(self, state):
        offset = state.integer("offset")
        self._it.set_state(state.node("input"))
        self._batch_state = state["input"]
        self._off = 0
        if offset:
            self._load()
            self._off = state.check_in("offset", offset, 0, len(self._rows))


class UnbatchDataset(_UnaryDataset):
    def _make_iterator(self, epoch):
        return _UnbatchIterator(self._input._make_iterator(epoch))

    def _compute_spec(self):
        return unbatched_spec(self._input.element_spec)

    def cardinality(self):
        return UNKNOWN_CARDINALITY if self._input.cardinality() != 0 else 0
