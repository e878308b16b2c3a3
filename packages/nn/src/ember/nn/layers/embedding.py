"""Embedding: integer ids -> rows of a trainable table."""

from __future__ import annotations

from typing import Any

import ember.core as em

from .base import Layer


class Embedding(Layer):
    """Look up ``embeddings[ids]``; output shape ``ids.shape + (output_dim,)``.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> nn.layers.Embedding(10, 4)(em.constant([[1, 2, 3]])).shape
        (1, 3, 4)
    """

    _autocast = False

    def __init__(self, input_dim: int, output_dim: int,
                 embeddings_initializer: Any = "random_uniform", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = embeddings_initializer

    def build(self, input_shape: Any) -> None:
        self.embeddings = self.add_weight("embeddings", (self.input_dim, self.output_dim),
                                          initializer=self.embeddings_initializer)

    def call(self, inputs: Any) -> Any:
        if inputs.dtype.kind not in "iu":
            inputs = em.cast(inputs, em.int32)
        ids = inputs.numpy()
        if ids.size and (ids.min() < 0 or ids.max() >= self.input_dim):
            raise ValueError(f"layer {self.name!r} (Embedding): ids must be in "
                             f"[0, {self.input_dim}), got values from {ids.min()} to {ids.max()}")
        return em.gather(self.embeddings.value(), inputs, axis=0)
