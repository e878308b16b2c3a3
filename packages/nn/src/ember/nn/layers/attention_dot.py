"""Keras 3's single-head attention layers: ``Attention`` (Luong-style dot-product, or
``score_mode="concat"``) and ``AdditiveAttention`` (Bahdanau-style).

Both are called on a list ``[query, value]`` or ``[query, value, key]`` (``key``
defaults to ``value``) of shapes (batch, Tq, dim) and (batch, Tv, dim), and return
(batch, Tq, dim): ``softmax(scores) @ value``. Masks, as Keras's: ``mask=[query_mask,
value_mask]`` ((batch, Tq) and (batch, Tv) booleans), or the masks the inputs carry; a
masked value step gets -1e9 added to its scores (-65504 in float16), a masked query
step outputs zeros, and the output carries the query's mask. ``use_causal_mask=True``
lets query step ``i`` see value steps ``j <= i``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.core as em

from . import _masks, _symbolic
from .attention import _as_bool, _causal_mask
from .base import _NO_INPUTS, Layer


def _check_inputs(who: str, inputs: Any, mask: Any = None, shapes: bool = False) -> None:
    """``inputs`` (or, with ``shapes``, their shapes: a list of tuples) must be 2 or 3."""
    kinds = list if shapes else (list, tuple)
    if not isinstance(inputs, kinds) or not 2 <= len(inputs) <= 3:
        raise ValueError(f"{who} layer must be called on a list of inputs, namely "
                         f"[query, value] or [query, value, key]; got {inputs!r}")
    if mask is not None and (not isinstance(mask, (list, tuple)) or
                             not 2 <= len(mask) <= 3):
        raise ValueError(f"{who} layer mask must be a list, namely [query_mask, "
                         f"value_mask]; got mask={mask!r}")


class Attention(Layer):
    """Dot-product attention (Keras's ``Attention``).

    Scores are ``query @ key^T`` (``score_mode="dot"``, times ``scale`` when
    ``use_scale``), or ``concat_score_weight * sum(tanh(scale * (query + key)))`` over the
    features of each (query step, key step) pair (``score_mode="concat"``).

    Args:
        use_scale: learn a scalar ``scale`` of the scores (ones at first).
        score_mode: ``"dot"`` or ``"concat"`` (which learns ``concat_score_weight``).
        dropout: the fraction of the attention weights dropped in training.
        seed: an int: a random stream of the layer's own for that dropout.
        **kwargs: the base ``Layer`` arguments.

    Call arguments:
        inputs: ``[query, value]`` or ``[query, value, key]``.
        mask: ``[query_mask, value_mask]`` (either may be None).
        training: whether to apply the dropout.
        return_attention_scores: also return the attention weights (batch, Tq, Tv).
        use_causal_mask: query step ``i`` sees value steps ``j <= i`` only.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> q, v = em.ones((2, 3, 4)), em.ones((2, 5, 4))
        >>> nn.layers.Attention()([q, v]).shape
        (2, 3, 4)
    """

    supports_masking = True

    def __init__(self, use_scale: bool = False, score_mode: str = "dot",
                 dropout: float = 0.0, seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        who = type(self).__name__
        if score_mode not in ("dot", "concat"):
            raise ValueError(f"{who}: score_mode must be 'dot' or 'concat', got "
                             f"score_mode={score_mode!r}")
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float, np.number)) or \
                not 0 <= dropout < 1:
            raise ValueError(f"{who}: dropout must be a number in [0, 1), got "
                             f"dropout={dropout!r}")
        if seed is not None and (isinstance(seed, bool) or
                                 not isinstance(seed, (int, np.integer))):
            raise ValueError(f"{who}: seed must be an int or None, got seed={seed!r}")
        self.use_scale = bool(use_scale)
        self.score_mode = score_mode
        self.dropout = float(dropout)
        self.seed = None if seed is None else int(seed)

    def build(self, input_shape: Any) -> None:
        _check_inputs(type(self).__name__, input_shape, shapes=True)
        if self.use_scale:
            self.scale = self.add_weight("scale", (), initializer="ones")
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight("concat_score_weight", (),
                                                       initializer="ones")

    def _scores(self, query: Any, key: Any) -> Any:
        if self.score_mode == "dot":
            scores = em.matmul(query, em.transpose(key, (0, 2, 1)))
            return em.multiply(scores, self.scale.value()) if self.use_scale else scores
        pairs = em.add(em.expand_dims(query, -2), em.expand_dims(key, -3))  # (N, Tq, Tv, d)
        if self.use_scale:
            pairs = em.multiply(self.scale.value(), pairs)
        return em.multiply(self.concat_score_weight.value(),
                           em.reduce_sum(em.tanh(pairs), axis=-1))

    def __call__(self, inputs: Any = _NO_INPUTS, *args: Any, training: bool | None = None,
                 **kwargs: Any) -> Any:
        # the masks [query, value] carry reach call as mask=, as Keras gathers them
        if "mask" not in kwargs and isinstance(inputs, (list, tuple)) and \
                not _symbolic.is_symbolic(inputs):
            masks = [_masks.get_mask(x) for x in inputs[:2]]
            if any(m is not None for m in masks):
                kwargs["mask"] = masks
        return super().__call__(inputs, *args, training=training, **kwargs)

    def call(self, inputs: Any, mask: Any = None, training: Any = False,
             return_attention_scores: bool = False, use_causal_mask: bool = False) -> Any:
        who = type(self).__name__
        _check_inputs(who, inputs, mask)
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) > 2 else value
        q_mask = mask[0] if mask else None
        v_mask = mask[1] if mask else None
        scores = self._scores(query, key)                       # (N, Tq, Tv)
        hidden = None                                           # True: not attended
        if v_mask is not None:
            hidden = em.logical_not(em.expand_dims(_as_bool(v_mask, "value_mask"), -2))
        if use_causal_mask:
            future = em.logical_not(_causal_mask(int(scores.shape[1]), int(scores.shape[2]),
                                                 scores))
            hidden = future if hidden is None else em.logical_or(hidden, future)
        if hidden is not None:
            big = 65504.0 if scores.dtype == np.float16 else 1.0e9
            scores = em.where(hidden, em.subtract(scores, big), scores)
        weights = em.nn_ops.softmax(scores, axis=-1)
        if training and self.dropout > 0:
            weights = em.nn_ops.dropout(weights, self.dropout, seed=self.seed)
        out = em.matmul(weights, value)
        if q_mask is not None:
            keep = em.expand_dims(_as_bool(q_mask, "query_mask"), -1)
            out = em.where(keep, out, em.zeros_like(out))
        return (out, weights) if return_attention_scores else out

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        if mask is None or not isinstance(mask, (list, tuple)) or mask[0] is None:
            return None
        return mask[0]


class AdditiveAttention(Attention):
    """Additive attention (Keras's ``AdditiveAttention``): scores are
    ``sum(scale * tanh(query + key))`` over the features of each (query step, key step)
    pair, ``scale`` a learned vector of the query's feature size (glorot uniform at
    first) when ``use_scale``.

    Args:
        use_scale: learn ``scale`` (else the sum is unscaled).
        dropout: the fraction of the attention weights dropped in training.
        **kwargs: the base ``Layer`` arguments, and ``seed`` (of the dropout).

    Call arguments: as :class:`Attention`'s.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> layer = nn.layers.AdditiveAttention()
        >>> layer([em.ones((2, 3, 4)), em.ones((2, 5, 4))]).shape, layer.scale.shape
        ((2, 3, 4), (4,))
    """

    def __init__(self, use_scale: bool = True, dropout: float = 0.0,
                 **kwargs: Any) -> None:
        if "score_mode" in kwargs:
            raise TypeError("AdditiveAttention: unexpected keyword argument 'score_mode' "
                            "(its scores are additive)")
        super().__init__(use_scale=use_scale, dropout=dropout, **kwargs)

    def build(self, input_shape: Any) -> None:
        _check_inputs("AdditiveAttention", input_shape, shapes=True)
        if self.use_scale:
            self.scale = self.add_weight("scale", (input_shape[0][-1],),
                                         initializer="glorot_uniform")

    def _scores(self, query: Any, key: Any) -> Any:
        t = em.tanh(em.add(em.expand_dims(query, -2), em.expand_dims(key, -3)))
        if self.use_scale:
            t = em.multiply(self.scale.value(), t)
        return em.reduce_sum(t, axis=-1)
