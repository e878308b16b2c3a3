"""Categorical preprocessing layers: Discretization, CategoryEncoding and Hashing (Keras 3's
names, arguments and defaults).

Discretization and CategoryEncoding are ember ops on the inputs' device. Hashing hashes on
the host (FarmHash64, or SipHash-2-4 with a salt, the numbers Keras gives) and returns an
ember Tensor of bin indices: it belongs in the input pipeline or before ``fit``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.core as em

from . import _encoding, _fingerprint, _host_data
from .base import Layer


# --- Discretization's quantile summaries (Keras's algorithm: weighted points, compressed
# by interpolating their cumulative weights, so batches merge in any order) ---------------
def _summarize(values: np.ndarray, epsilon: float) -> np.ndarray:
    values = np.sort(np.reshape(values, -1))
    step = max(values.size / (1.0 / epsilon), 1)
    points = values[int(step - 1)::int(step)]
    return np.stack([points, np.ones_like(points) * step])


def _compress(summary: np.ndarray, epsilon: float) -> np.ndarray:
    if summary.shape[1] * epsilon < 1:
        return summary
    percents = epsilon + np.arange(0.0, 1.0, epsilon)
    cum = summary[1].cumsum()
    frac = cum / cum[-1]
    bins = np.interp(percents, frac, summary[0])
    cum_new = np.interp(percents, frac, cum)
    weights = cum_new - np.concatenate(([0.0], cum_new[:-1]))
    return np.stack((bins, weights)).astype("float32")


def _merge(a: np.ndarray, b: np.ndarray, epsilon: float) -> np.ndarray:
    merged = np.concatenate((a, b), axis=1)
    return _compress(merged[:, np.argsort(merged[0])], epsilon)


class Discretization(Layer):
    """Bucket continuous values by ranges: index ``i`` for ``bounds[i-1] <= x <
    bounds[i]`` (``np.digitize``), optionally one-hot, multi-hot or count encoded.

    Boundaries are given (``bin_boundaries``) or learned by ``adapt`` as approximate
    quantiles for ``num_bins`` bins (Keras's summary algorithm, so the same data gives the
    same boundaries). The lookup is ember ops on the inputs' device.

    Args:
        bin_boundaries: sorted boundaries; the outer bins reach -inf and +inf.
        num_bins: the number of bins ``adapt`` learns (give this or ``bin_boundaries``).
        epsilon: the quantile summary's error tolerance (smaller: finer, slower).
        output_mode: ``"int"`` (int32 bin indices), ``"one_hot"``, ``"multi_hot"`` or
            ``"count"`` (in ``dtype``, float32 by default).
        sparse: only False (ember has no sparse tensors).
        dtype: the dtype of encoded outputs.
        name: the layer's name.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> x = np.array([[-1.5, 1.0, 3.4, .5], [0.0, 3.0, 1.3, 0.0]])
        >>> nn.layers.Discretization(bin_boundaries=[0., 1., 2.])(x).numpy()
        array([[0, 2, 3, 1],
               [1, 3, 2, 1]], dtype=int32)
    """

    def __init__(self, bin_boundaries: Any = None, num_bins: int | None = None,
                 epsilon: float = 0.01, output_mode: str = "int", sparse: bool = False,
                 dtype: Any = None, name: str | None = None) -> None:
        super().__init__(name=name, dtype=dtype)
        _encoding.check_mode("Discretization", output_mode)
        _encoding.reject_sparse("Discretization", sparse)
        if num_bins is not None and num_bins < 0:
            raise ValueError(f"Discretization: num_bins must be >= 0, got {num_bins}")
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError(f"Discretization: give num_bins or bin_boundaries, not both "
                             f"(got num_bins={num_bins}, bin_boundaries={bin_boundaries})")
        if num_bins is None and bin_boundaries is None:
            raise ValueError("Discretization: give num_bins (then adapt) or bin_boundaries")
        if not 0 < float(epsilon) <= 1:
            raise ValueError(f"Discretization: epsilon must be in (0, 1], got {epsilon}")
        if bin_boundaries is not None and float(epsilon) != 0.01:
            raise ValueError(f"Discretization: epsilon sets the precision of adapt(), which "
                             f"needs num_bins; with bin_boundaries it cannot act (got "
                             f"epsilon={epsilon})")
        if output_mode == "int" and dtype is not None and np.dtype(em.as_dtype(dtype)) != np.float32:
            raise ValueError(f"Discretization: output_mode='int' returns int32 bin indices; "
                             f"dtype sets the dtype of encoded outputs only (got dtype={dtype!r})")
        self.bin_boundaries = None if bin_boundaries is None else [
            float(b) for b in np.asarray(bin_boundaries, np.float64).reshape(-1)]
        self.num_bins = num_bins
        self.epsilon = float(epsilon)
        self.output_mode = output_mode
        self.sparse = False
        self._summary = np.zeros((2, 0), np.float32)

    def adapt(self, data: Any, steps: int | None = None) -> None:
        """Learn ``num_bins`` quantile boundaries from ``data`` (an array, a tensor, or an
        iterable of batches such as an ``ember.data.Dataset``; at most ``steps`` of them)."""
        if self.num_bins is None:
            raise ValueError(f"layer {self.name!r} (Discretization) was given bin_boundaries; "
                             f"adapt() needs num_bins instead")
        self._summary = np.zeros((2, 0), np.float32)
        for batch in _host_data.batches("Discretization", data, steps,
                                        lists_are_batches=False):
            values = _host_data.to_numpy(batch).astype("float32")
            self._summary = _merge(_summarize(values, self.epsilon), self._summary,
                                   self.epsilon)
        self.bin_boundaries = [float(b) for b in
                               _compress(self._summary, 1.0 / self.num_bins)[0, :-1]]

    def call(self, inputs: Any) -> Any:
        if self.bin_boundaries is None:
            raise ValueError(f"layer {self.name!r} (Discretization) has no boundaries: pass "
                             f"bin_boundaries or call adapt() first")
        x = em.cast(inputs, em.float32) if inputs.dtype.kind != "f" else inputs
        bounds = em.constant(np.asarray(self.bin_boundaries, x.dtype))
        # not (x < b) counts NaN past every boundary, as np.digitize does
        above = em.logical_not(em.less(em.expand_dims(x, -1), bounds))
        idx = em.reduce_sum(em.cast(above, em.int32), axis=-1)
        dtype = em.int32 if self.output_mode == "int" else self.dtype
        return _encoding.encode(idx, self.output_mode, len(self.bin_boundaries) + 1, dtype)

    def get_config(self) -> dict[str, Any]:
        return {"bin_boundaries": self.bin_boundaries, "num_bins": self.num_bins,
                "epsilon": self.epsilon, "output_mode": self.output_mode,
                "sparse": self.sparse, "name": self.name, "dtype": str(self.dtype)}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        config = dict(config)
        bounds = config.get("bin_boundaries")
        if bounds is not None and config.get("num_bins") is not None:
            config.pop("bin_boundaries")  # an adapted layer: both are set
            layer = cls(**config)
            layer.bin_boundaries = list(bounds)
            return layer
        return cls(**config)


class CategoryEncoding(Layer):
    """Encode integer categories in ``[0, num_tokens)`` as one-hot, multi-hot or count
    vectors (ember ops on the inputs' device).

    Values outside the range raise (the check reads the inputs' minimum and maximum: one
    small transfer from a GPU per call).

    Args:
        num_tokens: the number of categories.
        output_mode: ``"multi_hot"`` (default; ``"binary"`` is its old name), ``"one_hot"``
            or ``"count"``.
        sparse: only False (ember has no sparse tensors).
        **kwargs: the base ``Layer`` arguments (``dtype``: the output's, float32).

    Call arguments:
        inputs: integer categories, rank 0 to 2.
        count_weights: weights of the same shape, summed instead of counts
            (``"count"`` mode only).

    Examples:
        >>> from ember import nn
        >>> nn.layers.CategoryEncoding(num_tokens=4, output_mode="one_hot")([3, 2, 0]).numpy()
        array([[0., 0., 0., 1.],
               [0., 0., 1., 0.],
               [1., 0., 0., 0.]], dtype=float32)
    """

    def __init__(self, num_tokens: int | None = None, output_mode: str = "multi_hot",
                 sparse: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if output_mode == "binary":
            output_mode = "multi_hot"
        _encoding.check_mode("CategoryEncoding", output_mode, ("count", "one_hot",
                                                               "multi_hot"))
        _encoding.reject_sparse("CategoryEncoding", sparse)
        if num_tokens is None:
            raise ValueError("CategoryEncoding: num_tokens must be set (for an unknown "
                             "number of categories use IntegerLookup)")
        if num_tokens < 1:
            raise ValueError(f"CategoryEncoding: num_tokens must be >= 1, got {num_tokens}")
        self.num_tokens = int(num_tokens)
        self.output_mode = output_mode
        self.sparse = False

    def _ember_convert(self, x: Any) -> Any:
        return x if isinstance(x, em.Tensor) else em.convert_to_tensor(np.asarray(x))

    def call(self, inputs: Any, count_weights: Any = None) -> Any:
        if inputs.ndim > 2 and self.output_mode != "one_hot":
            raise ValueError(f"layer {self.name!r} (CategoryEncoding): output_mode="
                             f"{self.output_mode!r} takes inputs of rank 0 to 2, got shape "
                             f"{tuple(inputs.shape)}")
        inputs = _encoding.check_range(f"layer {self.name!r} (CategoryEncoding)", inputs,
                                       self.num_tokens)
        if count_weights is not None:
            if self.output_mode != "count":
                raise ValueError(f"layer {self.name!r} (CategoryEncoding): count_weights "
                                 f"is used only when output_mode='count', not "
                                 f"{self.output_mode!r}")
            count_weights = em.cast(em.convert_to_tensor(count_weights), self.dtype)
            if tuple(count_weights.shape) != tuple(inputs.shape):
                raise ValueError(f"layer {self.name!r} (CategoryEncoding): count_weights of "
                                 f"shape {tuple(count_weights.shape)} must match the inputs' "
                                 f"shape {tuple(inputs.shape)}")
        return _encoding.encode(inputs, self.output_mode, self.num_tokens, self.dtype,
                                count_weights)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "num_tokens": self.num_tokens,
                "output_mode": self.output_mode, "sparse": self.sparse}


def hash_values(values: np.ndarray, num_bins: int, salt: list[int] | None) -> np.ndarray:
    """Keras's bin of each value: FarmHash64 (SipHash-2-4 keyed by ``salt``) of its UTF-8
    text modulo ``num_bins``; integers hash as their decimal text."""
    flat = values.reshape(-1)
    out = np.empty(flat.shape, np.int64)
    for i, v in enumerate(flat):
        b = v.encode("utf-8") if isinstance(v, str) else str(int(v)).encode("ascii")
        h = (_fingerprint.siphash24(b, salt[0], salt[1]) if salt is not None
             else _fingerprint.fingerprint64(b))
        out[i] = h % num_bins
    return out.reshape(values.shape)


def standardize_salt(layer: str, salt: Any) -> list[int] | None:
    if salt is None:
        return None
    if isinstance(salt, (tuple, list)) and len(salt) == 2 and all(
            isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in salt):
        return [int(salt[0]), int(salt[1])]
    if isinstance(salt, (int, np.integer)) and not isinstance(salt, bool):
        return [int(salt), int(salt)]
    raise ValueError(f"{layer}: salt must be an int or a tuple of 2 ints, got salt={salt!r}")


def host_values(layer: str, x: Any) -> np.ndarray:
    """Strings as an object array of str; numbers (ember tensors read to the host) as
    int64, floats truncated first, as Keras casts them before hashing."""
    if isinstance(x, em.Tensor):
        arr = x.numpy()
    else:
        arr = np.asarray(x) if not isinstance(x, np.ndarray) else x
        if arr.dtype.kind in "USO":
            return _host_data.host_strings(layer, arr)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{layer}: expected strings or numbers, got dtype {arr.dtype}")
    return arr.astype(np.int64)


class Hashing(Layer):
    """Hash strings or integers into ``num_bins`` bins, as Keras does: FarmHash64
    (``farmhash::Fingerprint64``) of the value's text, or SipHash-2-4 keyed by ``salt``,
    modulo the number of bins. Integers hash as their decimal text, floats as the integer
    they truncate to. Same value, same bin, on every machine and in Keras.

    Hashing runs on the host, in Python, element by element, and returns an ember Tensor:
    use it in the input pipeline or before ``fit`` (ember tensors hold no strings, so a
    model cannot take text as input).

    Args:
        num_bins: the number of bins, the mask bin included when ``mask_value`` is set.
        mask_value: a value that goes to bin 0 (the others then to ``1..num_bins-1``).
        salt: an int or two ints: hash with SipHash-2-4 under this key instead of
            FarmHash64.
        output_mode: ``"int"`` (bin indices, int64 by default), ``"one_hot"``,
            ``"multi_hot"`` or ``"count"`` (float32).
        sparse: only False (ember has no sparse tensors).
        **kwargs: the base ``Layer`` arguments (``dtype``: the output's).

    Examples:
        >>> from ember import nn
        >>> nn.layers.Hashing(num_bins=3)([["A"], ["B"], ["C"], ["D"], ["E"]]).numpy().ravel()
        array([1, 0, 1, 1, 2])
    """

    def __init__(self, num_bins: int, mask_value: Any = None, salt: Any = None,
                 output_mode: str = "int", sparse: bool = False, **kwargs: Any) -> None:
        _encoding.check_mode("Hashing", output_mode)
        _host_data.reject_activity_regularizer("Hashing", kwargs)
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = "int64" if output_mode == "int" else "float32"
        super().__init__(**kwargs)
        if num_bins is None or num_bins <= 0:
            raise ValueError(f"Hashing: num_bins must be a positive int, got {num_bins!r}")
        if output_mode == "int" and self.dtype not in (np.int32, np.int64):
            raise ValueError(f"Hashing: with output_mode='int' dtype must be int32 or int64, "
                             f"got dtype={kwargs['dtype']!r}")
        _encoding.reject_sparse("Hashing", sparse)
        self.num_bins = int(num_bins)
        self.mask_value = mask_value
        self.salt = standardize_salt("Hashing", salt)
        self.strong_hash = self.salt is not None
        self.output_mode = output_mode
        self.sparse = False

    def _ember_convert(self, x: Any) -> Any:
        return host_values(f"layer {self.name!r} (Hashing)", x)

    def call(self, inputs: Any) -> Any:
        values = inputs
        bins = self.num_bins
        mask = None
        if self.mask_value is not None and bins > 1:
            bins -= 1
            mask = values == self.mask_value
        out = hash_values(values, bins, self.salt)
        if mask is not None:
            out = np.where(mask, 0, out + 1)
        return _encoding.encode(em.constant(out), self.output_mode, self.num_bins, self.dtype)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "num_bins": self.num_bins, "salt": self.salt,
                "mask_value": self.mask_value, "output_mode": self.output_mode,
                "sparse": self.sparse}
