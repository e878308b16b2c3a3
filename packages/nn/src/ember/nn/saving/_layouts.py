"""Variables ember holds in another shape than Keras 3 saves them: the shape in the file.

Keras's ``MultiHeadAttention`` projects with ``EinsumDense`` layers whose kernels keep
the heads as an axis of their own: query, key and value kernels ``(features, heads,
per_head)`` with biases ``(heads, per_head)``, the output kernel ``(heads, per_head,
out)``. ember's projections are ``Dense`` layers over the heads laid side by side:
``(features, heads * per_head)``, ``(heads * per_head,)`` and ``(heads * per_head,
out)``. Splitting ember's product into heads is a C-order reshape of its last axis, so
each Keras array is ember's variable reshaped (no transpose), and its optimizer slots
(Adam's moments, a momentum) the same way. Files hold Keras's shapes; ember's
variables keep their own.
"""

from __future__ import annotations

from typing import Any

from . import _walk


def _attention_shapes(mha: Any) -> dict[int, tuple[int, ...]]:
    heads = mha.num_heads
    out: dict[int, tuple[int, ...]] = {}
    for attr, per_head in (("query_dense", mha.key_dim), ("key_dense", mha.key_dim),
                           ("value_dense", mha.value_dim)):
        dense = mha.__dict__.get(attr)
        if dense is None or not dense.built:
            continue
        out[id(dense.kernel)] = (int(dense.kernel.shape[0]), heads, per_head)
        if dense.use_bias:
            out[id(dense.bias)] = (heads, per_head)
    dense = mha.__dict__.get("output_dense")
    if dense is not None and dense.built:
        out[id(dense.kernel)] = (heads, mha.value_dim, int(dense.kernel.shape[1]))
    return out


def saved_shapes(model: Any) -> dict[int, tuple[int, ...]]:
    """``id(variable) -> shape in the file`` for the model's variables saved in another
    shape than ember's (an empty dict for most models)."""
    from ..layers.attention import MultiHeadAttention

    out: dict[int, tuple[int, ...]] = {}
    for layer in [model, *model.submodules]:
        if isinstance(layer, MultiHeadAttention):
            out.update(_attention_shapes(layer))
    return out


def add_slot_shapes(opt: Any, var_list: list[Any], shapes: dict[int, tuple[int, ...]]
                    ) -> None:
    """Give each slot of a reshaped variable (one of the variable's shape) the
    variable's saved shape, as Keras's optimizer makes its slots like the variable."""
    if not shapes:
        return
    owner = _walk.slot_owner(opt)
    slots = owner.__dict__.get("_slots", {})
    for v in var_list:
        saved = shapes.get(id(v))
        if saved is None:
            continue
        for slot in slots.get(v.uid, {}).values():
            if tuple(slot.shape) == tuple(v.shape):
                shapes[id(slot)] = saved


class SavedLike:
    """What the file's reader checks a dataset against: the saved shape, the variable's
    name (for its messages)."""

    def __init__(self, var: Any, shape: tuple[int, ...]) -> None:
        self.shape, self.name, self.dtype = shape, var.name, var.dtype
