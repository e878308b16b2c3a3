"""MultiHeadAttention: scaled dot-product attention over several heads."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import ember.core as em
from ember.core import extend

from . import _masks
from ._keras_args import only_default
from .base import InputSpec, Layer
from .core import Dropout
from .dense import Dense


def _check_keras_args(attention_axes: Any, sliding_window: Any, flash_attention: Any,
                      kernel_constraint: Any, bias_constraint: Any, use_gate: Any) -> None:
    """Keras 3's arguments that ember takes only at what it computes (a Keras file names
    ``attention_axes=[1]`` and the defaults of the others)."""
    axes = (attention_axes,) if isinstance(attention_axes, int) else attention_axes
    if axes is not None and (not isinstance(axes, (list, tuple)) or
                             [a % 3 if isinstance(a, int) else a for a in axes] != [1]):
        raise ValueError(f"MultiHeadAttention: attention_axes={attention_axes!r} is not "
                         f"supported; ember attends over axis 1 of (batch, steps, features) "
                         f"inputs only (attention_axes=None or [1])")
    only_default("MultiHeadAttention", sliding_window=(
        sliding_window, None, "ember attends to every position the masks allow"),
        use_gate=(use_gate, False, "ember has no gated attention"))
    if flash_attention not in (None, False):
        raise ValueError(f"MultiHeadAttention: flash_attention={flash_attention!r} is not "
                         f"supported (ember has no flash attention kernel); pass None or "
                         f"False")
    for name, c in (("kernel_constraint", kernel_constraint),
                    ("bias_constraint", bias_constraint)):
        if c is not None:
            raise ValueError(f"MultiHeadAttention: {name}={c!r} is not supported: ember "
                             f"holds each projection as a 2-D Dense kernel, where a "
                             f"constraint's axes are not those of Keras's 3-D kernels")


def _large_negative(dtype: Any) -> float:
    """What a masked score gets added (Keras's): -1e9, or -3e4 in float16, whose largest
    finite value is 65504 (-1e9 would be -inf there, and a row with every key masked
    would be NaN after the softmax)."""
    return -3e4 if dtype == np.float16 else -1e9


def _as_bool(mask: Any, what: str) -> Any:
    try:
        t = mask if isinstance(mask, em.Tensor) else em.convert_to_tensor(mask)
    except (TypeError, ValueError) as e:
        raise TypeError(f"MultiHeadAttention: {what} must be booleans (or 0/1 numbers): "
                        f"{e}") from None
    if t.dtype.kind not in "biuf":
        raise TypeError(f"MultiHeadAttention: {what} must be booleans (or 0/1 numbers), "
                        f"got dtype {t.dtype}")
    return t if t.dtype == np.bool_ else em.not_equal(t, 0)


_CAUSAL: dict[tuple[int, int, int], tuple[Any, Any]] = {}


def _causal_mask(tq: int, tv: int, like: Any) -> Any:
    """The (1, tq, tv) causal mask on ``like``'s device, made once per size and device: on
    a GPU each new one is an upload, which makes the host wait (an eager step made one a
    call)."""
    dev = extend.device_of(like)
    hit = _CAUSAL.get((tq, tv, id(dev)))
    if hit is not None and hit[0] is dev:
        return hit[1]
    with em.device(dev.name):
        mask = em.constant(np.tril(np.ones((1, tq, tv), bool)))
    if len(_CAUSAL) >= 64:  # sizes seen in one program are few; bound them anyway
        _CAUSAL.clear()
    _CAUSAL[tq, tv, id(dev)] = (dev, mask)
    return mask


def _attention_mask(query_mask: Any, value_mask: Any, key_mask: Any, attention_mask: Any,
                    causal: tuple[int, int, Any] | None) -> Any:
    """Keras 3's merge of the masks (True where attention is allowed), as a bool tensor
    broadcasting to (N, Tq, Tv), or None where nothing is masked: the query's mask as
    (N, Tq, 1), the value's and key's as (N, 1, Tv), the causal mask as (1, Tq, Tv)
    (query ``i`` sees keys ``j <= i``), and ``attention_mask``, ANDed together."""
    parts = []
    if query_mask is not None:
        parts.append(em.expand_dims(_as_bool(query_mask, "query_mask"), -1))
    for name, m in (("value_mask", value_mask), ("key_mask", key_mask)):
        if m is not None:
            parts.append(em.expand_dims(_as_bool(m, name), -2))
    if causal is not None:
        parts.append(_causal_mask(*causal))
    if attention_mask is not None:
        parts.insert(0, _as_bool(attention_mask, "attention_mask"))
    if not parts:
        return None
    out = parts[0]
    for m in parts[1:]:
        out = em.logical_and(out, m)
    return out


def _output_size(output_shape: Any) -> int | None:
    """Keras's ``output_shape`` (an int, or a one-element list or tuple) as an int."""
    if output_shape is None:
        return None
    size = output_shape
    if isinstance(output_shape, (list, tuple)) and len(output_shape) == 1:
        size = output_shape[0]
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"MultiHeadAttention: output_shape={output_shape!r} must be a "
                         f"positive int or a one-element list of one (ember projects to one "
                         f"last axis)")
    return int(size)


def _elementwise(regularizer: Any, name: str) -> Any:
    """A kernel or bias penalty that is a sum over the elements (L1, L2, L1L2), so that
    ember's 2-D kernels give what Keras's 3-D ones do; others are refused by name."""
    from .. import regularizers

    reg = regularizers.get(regularizer)
    if reg is None or type(reg) in (regularizers.L1, regularizers.L2, regularizers.L1L2):
        return reg
    raise ValueError(f"MultiHeadAttention: {name}={regularizer!r} is not supported: ember "
                     f"holds each projection as a 2-D Dense kernel, so only penalties summed "
                     f"over the elements (L1, L2, L1L2) mean what they do on Keras's "
                     f"3-D kernels")


class MultiHeadAttention(Layer):
    """``softmax(Q K^T / sqrt(key_dim)) V`` per head, heads concatenated and projected.

    ``query`` (N, Tq, Dq), ``value`` (N, Tv, Dv), ``key`` defaults to ``value``.

    Masks, as Keras 3 merges them (logical AND; True where attention is allowed):

    - ``attention_mask`` (N, Tq, Tv), or any shape that broadcasts to it;
    - the masks the inputs carry (an ``Embedding(mask_zero=True)`` or ``Masking`` before
      them), or the same given as ``query_mask`` (N, Tq), ``value_mask`` and ``key_mask``
      (N, Tv): a query step that is masked attends nowhere, a value or key step that is
      masked is attended by no one;
    - ``use_causal_mask=True``: query ``i`` sees keys ``j <= i`` (counted from the first
      step of each, as Keras and PyTorch do when ``Tq != Tv``).

    A masked score gets -1e9 added (-3e4 in float16, which holds no -1e9), so a query
    step with every key masked averages the values evenly, as in Keras. The output
    carries the query's mask. Every mask is combined with ops on the device: nothing is
    read back to the host, so a traced call stays one replay whatever the masks hold.

    Takes Keras 3's arguments. ``output_shape``: the last axis of the output (an int or
    a one-element list; the query's by default). ``kernel_regularizer`` and
    ``bias_regularizer`` (L1, L2, L1L2) and ``seed`` (of the attention dropout) are
    honoured; ``attention_axes`` only as None or [1], ``sliding_window``, ``use_gate``,
    ``flash_attention`` and the constraints only at their defaults (refused by name
    otherwise). The projections are ``Dense`` layers over the heads side by side; a
    ``.keras`` or ``.weights.h5`` file holds them in Keras's per-head shapes.

    Examples:
        >>> import ember.core as em
        >>> from ember import nn
        >>> x = em.ones((2, 4, 8))
        >>> nn.layers.MultiHeadAttention(num_heads=2, key_dim=4)(x, x).shape
        (2, 4, 8)
    """

    def __init__(self, num_heads: int, key_dim: int, value_dim: int | None = None,
                 dropout: float = 0.0, use_bias: bool = True, output_shape: Any = None,
                 attention_axes: Any = None, sliding_window: Any = None,
                 flash_attention: Any = None, kernel_initializer: Any = "glorot_uniform",
                 bias_initializer: Any = "zeros", kernel_regularizer: Any = None,
                 bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None,
                 use_gate: bool = False, seed: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)  # the activity regularizer is the projections' (Keras 3)
        _check_keras_args(attention_axes, sliding_window, flash_attention, kernel_constraint,
                          bias_constraint, use_gate)
        self.num_heads, self.key_dim = int(num_heads), int(key_dim)
        self.value_dim = int(value_dim or key_dim)
        self.dropout = float(dropout)
        self._out_dim = _output_size(output_shape)
        init = {"use_bias": use_bias, "kernel_initializer": kernel_initializer,
                "bias_initializer": bias_initializer, "dtype": self.dtype_policy,
                "kernel_regularizer": _elementwise(kernel_regularizer, "kernel_regularizer"),
                "bias_regularizer": _elementwise(bias_regularizer, "bias_regularizer"),
                # on each of the four projections' outputs, as Keras 3 passes it
                "activity_regularizer": activity_regularizer}
        self.query_dense = Dense(self.num_heads * self.key_dim, name="query", **init)
        self.key_dense = Dense(self.num_heads * self.key_dim, name="key", **init)
        self.value_dense = Dense(self.num_heads * self.value_dim, name="value", **init)
        self._init = init
        self.dropout_layer = Dropout(self.dropout, seed=seed, dtype=self.dtype_policy)

    def build(self, query_shape: Any, value_shape: Any = None, key_shape: Any = None) -> None:
        """Keras 3's ``build(query_shape, value_shape, key_shape=None)``: given the value's
        shape too, every projection's weights are made now (as Keras's); a call builds
        them otherwise."""
        out = self._out_dim or query_shape[-1]
        self.input_spec = InputSpec(ndim=3, axes={-1: query_shape[-1]})
        self.output_dense = Dense(int(out), name="attention_output", **self._init)
        if value_shape is not None:
            self.query_dense.build(tuple(query_shape))
            self.key_dense.build(tuple(value_shape if key_shape is None else key_shape))
            self.value_dense.build(tuple(value_shape))
            self.output_dense.build(tuple(query_shape[:-1]) +
                                    (self.num_heads * self.value_dim,))

    def _heads(self, x: Any, d: int) -> Any:
        n, t, _ = x.shape
        return em.transpose(em.reshape(x, (n, t, self.num_heads, d)), (0, 2, 1, 3))

    supports_masking = True  # the output keeps the query's mask

    def __call__(self, *args: Any, training: bool | None = None, **kwargs: Any) -> Any:
        # The query comes first, or by name (Keras's examples call layer(query=x,
        # value=y)). The masks the query, value and key carry are passed as Keras's call
        # names them; one given (by keyword, or by position) wins.
        if not args:
            if "query" not in kwargs:
                raise TypeError("MultiHeadAttention: missing its query input: call it as "
                                "layer(query, value) or layer(query=..., value=...)")
            args = (kwargs.pop("query"),)
        inputs, args = args[0], args[1:]
        given = dict(zip(("value", "key", "query_mask", "value_mask", "key_mask"), args))
        given.update((k, v) for k, v in kwargs.items() if v is not None)
        for name, x in (("query_mask", inputs), ("value_mask", given.get("value")),
                        ("key_mask", given.get("key"))):
            if x is not None and name not in given:
                m = _masks.get_mask(x)
                if m is not None:
                    kwargs[name] = m
        return super().__call__(inputs, *args, training=training, **kwargs)

    def call(self, query: Any, value: Any = None, key: Any = None, query_mask: Any = None,
             value_mask: Any = None, key_mask: Any = None, attention_mask: Any = None,
             return_attention_scores: bool = False, training: Any = None,
             use_causal_mask: bool = False) -> Any:
        if value is None:
            raise TypeError("MultiHeadAttention: missing its value input: call it as "
                            "layer(query, value) (value also serves as key unless key= "
                            "is given)")
        value = self._ember_convert(value)
        key = value if key is None else self._ember_convert(key)
        if self._overridden():
            return self._keras_call(query, value, key, query_mask, value_mask, key_mask,
                                    attention_mask, return_attention_scores, training,
                                    use_causal_mask)
        q = self._heads(self.query_dense(query), self.key_dim)       # (N, H, Tq, K)
        k = self._heads(self.key_dense(key), self.key_dim)           # (N, H, Tv, K)
        v = self._heads(self.value_dense(value), self.value_dim)     # (N, H, Tv, V)
        scores = em.matmul(em.multiply(q, 1.0 / math.sqrt(self.key_dim)),
                           em.transpose(k, (0, 1, 3, 2)))
        mask = _attention_mask(query_mask, value_mask, key_mask, attention_mask,
                               (int(q.shape[2]), int(k.shape[2]), q) if use_causal_mask
                               else None)
        if mask is not None:
            while mask.ndim < 4:  # (N, Tq, Tv) -> (N, 1, Tq, Tv): the same for every head
                mask = em.expand_dims(mask, -3)
            hidden = em.subtract(1.0, em.cast(mask, scores.dtype))
            scores = em.add(scores, em.multiply(hidden, _large_negative(scores.dtype)))
        weights = em.nn_ops.softmax(scores, axis=-1)
        if mask is not None:  # a query masked from every key attends to nothing (Keras 3)
            weights = em.multiply(weights, em.cast(mask, weights.dtype))
        dropped = self.dropout_layer(weights, training=training)
        ctx = em.matmul(dropped, v)                                   # (N, H, Tq, V)
        n, _, tq, _ = ctx.shape
        ctx = em.reshape(em.transpose(ctx, (0, 2, 1, 3)), (n, tq, self.num_heads * self.value_dim))
        out = self.output_dense(ctx)
        return (out, weights) if return_attention_scores else out

    # --- Keras 3's internals, for subclasses that override them ---------------------------
    # keras-io's locality self-attention (ViT on small datasets) overrides
    # _compute_attention and reads _key_dim, _dot_product_equation, _masked_softmax,
    # _dropout_layer and _combine_equation. A subclass that overrides _compute_attention or
    # _masked_softmax gets Keras's call: the projections as (N, T, heads, dim), the merged
    # mask (N, Tq, Tv), then its method. The class's own call keeps the fused path above.
    _dot_product_equation = "aecd,abcd->acbe"
    _combine_equation = "acbe,aecd->abcd"

    @property
    def _num_heads(self) -> int:
        return self.num_heads

    @property
    def _key_dim(self) -> int:
        return self.key_dim

    @property
    def _value_dim(self) -> int:
        return self.value_dim

    @property
    def _inverse_sqrt_key_dim(self) -> float:
        return 1.0 / math.sqrt(float(self.key_dim))

    @property
    def _dropout_layer(self) -> Any:
        return self.dropout_layer

    @property
    def _softmax(self) -> Any:
        """Keras's ``Softmax(axis=-1)`` sub-layer (no weights; not tracked, so that files
        hold what Keras's do)."""
        layer = self.__dict__.get("_ember_softmax")
        if layer is None:
            from .core import Softmax

            layer = Softmax(axis=-1, dtype=self.dtype_policy)
            self.__dict__["_ember_softmax"] = layer
        return layer

    def _overridden(self) -> bool:
        cls = type(self)
        return (cls._compute_attention is not MultiHeadAttention._compute_attention
                or cls._masked_softmax is not MultiHeadAttention._masked_softmax)

    def _masked_softmax(self, attention_scores: Any, attention_mask: Any = None) -> Any:
        """Keras's: the mask (N, Tq, Tv) widened over the heads, then ``Softmax`` with it."""
        if attention_mask is not None:
            while attention_mask.ndim < attention_scores.ndim:
                attention_mask = em.expand_dims(attention_mask, -3)
        return self._softmax(attention_scores, mask=attention_mask)

    def _compute_attention(self, query: Any, key: Any, value: Any, attention_mask: Any = None,
                           training: Any = None) -> tuple[Any, Any]:
        """Keras's: (output (N, Tq, heads, V), scores (N, heads, Tq, Tv)) from the projected
        ``query`` (N, Tq, heads, K), ``key`` (N, Tv, heads, K), ``value`` (N, Tv, heads,
        V)."""
        query = em.multiply(query, em.cast(self._inverse_sqrt_key_dim, query.dtype))
        scores = em.einsum(self._dot_product_equation, key, query)
        scores = self._masked_softmax(scores, attention_mask)
        final = self._dropout_layer(scores, training=training) if self.dropout else scores
        return em.einsum(self._combine_equation, final, value), scores

    def _keras_call(self, query: Any, value: Any, key: Any, query_mask: Any, value_mask: Any,
                    key_mask: Any, attention_mask: Any, return_attention_scores: bool,
                    training: Any, use_causal_mask: bool) -> Any:
        q, k, v = (self.query_dense(query), self.key_dense(key), self.value_dense(value))
        n, tq = int(q.shape[0]), int(q.shape[1])
        tv = int(k.shape[1])
        q = em.reshape(q, (n, tq, self.num_heads, self.key_dim))
        k = em.reshape(k, (n, tv, self.num_heads, self.key_dim))
        v = em.reshape(v, (n, tv, self.num_heads, self.value_dim))
        mask = _attention_mask(query_mask, value_mask, key_mask, attention_mask,
                               (tq, tv, q) if use_causal_mask else None)
        ctx, scores = self._compute_attention(q, k, v, mask, training)
        out = self.output_dense(em.reshape(ctx, (n, tq, self.num_heads * self.value_dim)))
        return (out, scores) if return_attention_scores else out
