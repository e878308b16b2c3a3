"""Embedding: integer ids -> rows of a trainable table."""

from __future__ import annotations

from typing import Any

import ember.core as em

from .. import constraints, regularizers
from ._keras_args import only_default
from .base import Layer
from .masking import set_mask


class Embedding(Layer):
    """Look up ``embeddings[ids]``; output shape ``ids.shape + (output_dim,)``.

    Args:
        input_dim: the number of ids (the vocabulary size).
        output_dim: the size of each embedding vector.
        embeddings_initializer: the table's initializer.
        mask_zero: treat id 0 as padding: the output carries the mask ``ids != 0``, which
            recurrent layers downstream use to skip padded steps (as Keras).
        input_length: when given, inputs must have this many steps (axis 1).
        embeddings_regularizer: a penalty of the table that joins ``losses``.
        embeddings_constraint: a projection optimizers apply after each update.
        **kwargs: as ``Layer``.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> nn.layers.Embedding(10, 4)(em.constant([[1, 2, 3]])).shape
        (1, 3, 4)
        >>> ids = em.constant([[5, 2, 0, 0]])
        >>> emb = nn.layers.Embedding(10, 4, mask_zero=True)
        >>> nn.layers.get_mask(emb(ids)).numpy().tolist()
        [[True, True, False, False]]
    """

    _autocast = False

    def __init__(self, input_dim: int, output_dim: int,
                 embeddings_initializer: Any = "random_uniform", mask_zero: bool = False,
                 input_length: int | None = None, embeddings_regularizer: Any = None,
                 embeddings_constraint: Any = None, quantization_config: Any = None,
                 **kwargs: Any) -> None:
        only_default("Embedding", quantization_config=(
            quantization_config, None, "ember has no quantized layers"))
        if input_length is not None and "input_shape" not in kwargs:
            kwargs["input_shape"] = (int(input_length),)
        super().__init__(**kwargs)
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = embeddings_initializer
        self.mask_zero = bool(mask_zero)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = constraints.get(embeddings_constraint)
        self.input_length = None if input_length is None else int(input_length)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        if not self.mask_zero:
            return None
        return em.not_equal(em.convert_to_tensor(inputs), 0)

    def build(self, input_shape: Any) -> None:
        self.embeddings = self.add_weight("embeddings", (self.input_dim, self.output_dim),
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint)

    def call(self, inputs: Any) -> Any:
        if self.input_length is not None and (
                inputs.ndim < 2 or inputs.shape[1] != self.input_length):
            raise ValueError(f"layer {self.name!r} (Embedding) has input_length="
                             f"{self.input_length}, got ids of shape {tuple(inputs.shape)}")
        if inputs.dtype.kind not in "iu":
            inputs = em.cast(inputs, em.int32)
        ids = em.debugging.check_indices(inputs, self.input_dim,
                                         f"layer {self.name!r} (Embedding): ids")
        out = em.gather(self.embeddings.value(), ids, axis=0)
        if out.dtype != self.dtype_policy._compute:  # mixed precision: gather, then cast
            out = em.cast(out, self.dtype_policy._compute)
        if self.mask_zero:
            set_mask(out, self.compute_mask(inputs))
        return out

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "input_dim": self.input_dim,
                "output_dim": self.output_dim,
                "embeddings_initializer": self.embeddings_initializer,
                "mask_zero": self.mask_zero, "input_length": self.input_length}
