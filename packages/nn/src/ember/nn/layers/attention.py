"""MultiHeadAttention: scaled dot-product attention over several heads."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import ember.core as em

from .base import InputSpec, Layer
from .core import Dropout
from .dense import Dense


class MultiHeadAttention(Layer):
    """``softmax(Q K^T / sqrt(key_dim)) V`` per head, heads concatenated and projected.

    ``query`` (N, Tq, Dq), ``value`` (N, Tv, Dv), ``key`` defaults to ``value``;
    ``attention_mask`` (N, Tq, Tv) is True where attention is allowed;
    ``use_causal_mask=True`` also hides later positions (query ``i`` sees keys ``<= i``).

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> x = em.ones((2, 4, 8))
        >>> nn.layers.MultiHeadAttention(num_heads=2, key_dim=4)(x, x).shape
        (2, 4, 8)
    """

    def __init__(self, num_heads: int, key_dim: int, value_dim: int | None = None,
                 dropout: float = 0.0, use_bias: bool = True, output_shape: int | None = None,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.num_heads, self.key_dim = int(num_heads), int(key_dim)
        self.value_dim = int(value_dim or key_dim)
        self.dropout = float(dropout)
        self._out_dim = output_shape
        init = {"use_bias": use_bias, "kernel_initializer": kernel_initializer,
                "bias_initializer": bias_initializer, "dtype": self.dtype_policy}
        self.query_dense = Dense(self.num_heads * self.key_dim, name="query", **init)
        self.key_dense = Dense(self.num_heads * self.key_dim, name="key", **init)
        self.value_dense = Dense(self.num_heads * self.value_dim, name="value", **init)
        self._init = init
        self.dropout_layer = Dropout(self.dropout, dtype=self.dtype_policy)

    def build(self, input_shape: Any) -> None:
        out = self._out_dim or input_shape[-1]
        self.input_spec = InputSpec(ndim=3, axes={-1: input_shape[-1]})
        self.output_dense = Dense(int(out), name="attention_output", **self._init)

    def _heads(self, x: Any, d: int) -> Any:
        n, t, _ = x.shape
        return em.transpose(em.reshape(x, (n, t, self.num_heads, d)), (0, 2, 1, 3))

    def call(self, query: Any, value: Any, key: Any = None, attention_mask: Any = None,
             return_attention_scores: bool = False, training: Any = None,
             use_causal_mask: bool = False) -> Any:
        value = self._ember_convert(value)
        key = value if key is None else self._ember_convert(key)
        q = self._heads(self.query_dense(query), self.key_dim)       # (N, H, Tq, K)
        k = self._heads(self.key_dense(key), self.key_dim)           # (N, H, Tv, K)
        v = self._heads(self.value_dense(value), self.value_dim)     # (N, H, Tv, V)
        scores = em.matmul(em.multiply(q, 1.0 / math.sqrt(self.key_dim)),
                           em.transpose(k, (0, 1, 3, 2)))
        mask = None
        if attention_mask is not None:
            mask = np.asarray(attention_mask, dtype=bool)
            if mask.ndim == 3:
                mask = mask[:, None]
        if use_causal_mask:
            tq, tv = int(q.shape[2]), int(k.shape[2])
            causal = np.tril(np.ones((tq, tv), bool), k=tv - tq)
            mask = causal if mask is None else mask & causal
        if mask is not None:
            scores = em.where(em.convert_to_tensor(mask), scores, -1e9)
        weights = em.nn_ops.softmax(scores, axis=-1)
        dropped = self.dropout_layer(weights, training=training)
        ctx = em.matmul(dropped, v)                                   # (N, H, Tq, V)
        n, _, tq, _ = ctx.shape
        ctx = em.reshape(em.transpose(ctx, (0, 2, 1, 3)), (n, tq, self.num_heads * self.value_dim))
        out = self.output_dense(ctx)
        return (out, weights) if return_attention_scores else out
