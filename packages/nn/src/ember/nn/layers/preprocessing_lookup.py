"""Vocabulary lookup layers: StringLookup and IntegerLookup (Keras 3's names, arguments,
defaults and numbers: the same vocabulary order after ``adapt``, the same out-of-vocabulary
buckets, the same TF-IDF weights).

They run on the host: a vocabulary is a Python dict and strings exist only there (ember
tensors hold numbers). Their numeric outputs come back as ember Tensors on the current
device; ``StringLookup(invert=True)`` returns a numpy array of ``str``. Use them in the
input pipeline (an ``ember.data`` ``map``) or on the data before ``fit``; inside a traced
function they would run once, at trace time, and are refused there.
"""

from __future__ import annotations

import collections
import os
from typing import Any

import numpy as np

import ember.core as em

from . import _encoding, _host_data
from .base import Layer
from .preprocessing_categorical import hash_values, standardize_salt

OUTPUT_MODES = ("int", "one_hot", "multi_hot", "count", "tf_idf")


_PAD = object()  # what pads a ragged row (never a token)


def _ragged_rows(x: Any) -> list[Any] | None:
    """``x``'s rows when it is a batch of rows of several lengths (a list, or a 1-D object
    array, of lists, tuples or 1-D arrays: TensorFlow's ragged batches); else None."""
    if isinstance(x, np.ndarray):
        if x.dtype != object or x.ndim != 1:
            return None
        x = list(x)
    if not isinstance(x, (list, tuple)) or not x:
        return None
    if not all(isinstance(r, (list, tuple)) or (isinstance(r, np.ndarray) and r.ndim == 1)
               for r in x):
        return None
    if len({len(r) for r in x}) < 2:
        return None  # rows of one length: a plain 2-D batch
    return [list(r) for r in x]


class IndexLookup(Layer):
    """What StringLookup and IntegerLookup share (Keras's ``IndexLookup``): a vocabulary
    with a mask token (index 0 in ``"int"`` mode), ``num_oov_indices`` out-of-vocabulary
    buckets, then the tokens; ``adapt`` orders tokens by count, ties by the token, both
    descending. Subclasses say how inputs become host values (``_host``)."""

    _KIND = "IndexLookup"

    def __init__(self, max_tokens: int | None, num_oov_indices: int, mask_token: Any,
                 oov_token: Any, vocabulary: Any = None, idf_weights: Any = None,
                 invert: bool = False, output_mode: str = "int", sparse: bool = False,
                 pad_to_max_tokens: bool = False, oov_method: str = "floormod",
                 salt: Any = None, vocabulary_size: int | None = None,
                 has_input_vocabulary: bool | None = None, **kwargs: Any) -> None:
        k = self._KIND
        dtype = kwargs.pop("dtype", None)
        _host_data.reject_activity_regularizer(k, kwargs)
        super().__init__(**kwargs)
        self._out_dtype = None if dtype is None else np.dtype(em.as_dtype(dtype))
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(f"{k}: max_tokens must be greater than 1 if set, got {max_tokens}")
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError(f"{k}: pad_to_max_tokens=True needs max_tokens")
        if num_oov_indices < 0:
            raise ValueError(f"{k}: num_oov_indices must be >= 0, got {num_oov_indices}")
        if oov_method not in ("floormod", "farmhash"):
            raise ValueError(f"{k}: oov_method must be 'floormod' or 'farmhash', got "
                             f"oov_method={oov_method!r}")
        self.salt = standardize_salt(k, salt)
        if self.salt is not None and self._integer_keys and oov_method != "farmhash":
            raise ValueError(f"{k}: salt applies only with oov_method='farmhash', got "
                             f"oov_method={oov_method!r}")
        # both choose among several OOV buckets, so with fewer they could not act
        if self.salt is not None and num_oov_indices < 2:
            raise ValueError(f"{k}: salt spreads out-of-vocabulary inputs over "
                             f"num_oov_indices > 1 buckets; got num_oov_indices="
                             f"{num_oov_indices}")
        if oov_method == "farmhash" and num_oov_indices < 2:
            raise ValueError(f"{k}: oov_method='farmhash' spreads out-of-vocabulary inputs "
                             f"over num_oov_indices > 1 buckets; got num_oov_indices="
                             f"{num_oov_indices}")
        output_mode = {"binary": "multi_hot", "tf-idf": "tf_idf"}.get(output_mode, output_mode)
        _encoding.check_mode(k, output_mode, OUTPUT_MODES)
        if (self._out_dtype is not None and output_mode == "int"
                and self._out_dtype.kind not in "iu"):
            raise ValueError(f"{k}: output_mode='int' returns integer ids, so dtype must be an "
                             f"integer dtype, got dtype={dtype!r}")
        if invert and output_mode != "int":
            raise ValueError(f"{k}: invert=True needs output_mode='int', got "
                             f"output_mode={output_mode!r}")
        _encoding.reject_sparse(k, sparse)
        if idf_weights is not None and output_mode != "tf_idf":
            raise ValueError(f"{k}: idf_weights applies only with output_mode='tf_idf', got "
                             f"output_mode={output_mode!r}")
        self.invert = bool(invert)
        self.max_tokens = max_tokens
        self.num_oov_indices = int(num_oov_indices)
        self.mask_token = mask_token
        self.oov_token = oov_token
        self.output_mode = output_mode
        self.sparse = False
        self.pad_to_max_tokens = bool(pad_to_max_tokens)
        self.oov_method = oov_method
        self.input_vocabulary = (None if vocabulary is None or isinstance(vocabulary, str)
                                 else [self._key(v) for v in _listed(vocabulary)])
        self.input_idf_weights = (None if idf_weights is None
                                  else [float(w) for w in _listed(idf_weights)])
        self._has_input_vocabulary = (vocabulary is not None if has_input_vocabulary is None
                                      else bool(has_input_vocabulary))
        self._frozen_vocab_size = vocabulary_size
        self._tokens: list[Any] = []
        self._index: dict[Any, int] = {}
        self.idf_weights: np.ndarray | None = None
        self.reset_state()
        if output_mode == "tf_idf" and self._has_input_vocabulary and idf_weights is None:
            raise ValueError(f"{k}: with a vocabulary and output_mode='tf_idf', idf_weights "
                             f"must be given too")
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)
        self.built = True

    # --- what subclasses define --------------------------------------------------------
    _integer_keys = False

    def _key(self, v: Any) -> Any:
        raise NotImplementedError

    def _host(self, x: Any) -> np.ndarray:
        raise NotImplementedError

    # --- vocabulary ----------------------------------------------------------------------
    def _oov_start_index(self) -> int:
        return 1 if self.mask_token is not None and self.output_mode == "int" else 0

    def _token_start_index(self) -> int:
        return self._oov_start_index() + self.num_oov_indices

    def vocabulary_size(self) -> int:
        """The vocabulary's size, mask and OOV indices included."""
        return len(self._tokens) + self._token_start_index()

    def get_vocabulary(self, include_special_tokens: bool = True) -> list[Any]:
        """The vocabulary in index order (without the mask and OOV tokens if
        ``include_special_tokens=False``)."""
        special = ([self.mask_token] * self._oov_start_index()
                   + [self.oov_token] * self.num_oov_indices)
        return (special if include_special_tokens else []) + list(self._tokens)

    def set_vocabulary(self, vocabulary: Any, idf_weights: Any = None) -> None:
        """Set the vocabulary (a sequence of tokens or the path of a file with one per
        line) and, in ``"tf_idf"`` mode, the IDF weight of each term.

        The mask and OOV tokens may lead the sequence, in their positions; anywhere else
        they are an error, as are repeated terms.
        """
        k = f"layer {self.name!r} ({self._KIND})"
        if self.output_mode == "tf_idf" and idf_weights is None:
            raise ValueError(f"{k}: idf_weights must be set when output_mode='tf_idf'")
        if self.output_mode != "tf_idf" and idf_weights is not None:
            raise ValueError(f"{k}: idf_weights applies only with output_mode='tf_idf', got "
                             f"output_mode={self.output_mode!r}")
        if isinstance(vocabulary, str):
            if self.output_mode == "tf_idf":
                raise ValueError(f"{k}: output_mode='tf_idf' does not read a vocabulary "
                                 f"from a file")
            vocabulary = _read_vocabulary_file(k, vocabulary)
        tokens = [self._key(v) for v in _listed(vocabulary)]
        if not tokens:
            raise ValueError(f"{k}: cannot set an empty vocabulary")
        start = self._token_start_index()
        special = ([self.mask_token] * self._oov_start_index()
                   + [self.oov_token] * self.num_oov_indices)
        found_special = tokens[:start] == special
        if found_special:
            tokens = tokens[start:]
        repeated = [t for t, c in collections.Counter(tokens).items() if c > 1]
        if repeated:
            raise ValueError(f"{k}: the vocabulary repeats terms: {repeated}")
        if self.mask_token is not None and self.mask_token in tokens:
            raise ValueError(f"{k}: the mask token {self.mask_token!r} is in the vocabulary "
                             f"at a place other than its own; give the special tokens only "
                             f"at the start, in this order: {special}, or not at all")
        if self.invert and self.oov_token is not None and self.oov_token in tokens:
            raise ValueError(f"{k}: the OOV token {self.oov_token!r} is in the vocabulary "
                             f"at a place other than its own; give the special tokens only "
                             f"at the start, in this order: {special}, or not at all")
        if self.max_tokens is not None and start + len(tokens) > self.max_tokens:
            raise ValueError(f"{k}: a vocabulary of {start + len(tokens)} (special tokens "
                             f"included) is larger than max_tokens={self.max_tokens}")
        if idf_weights is not None:
            w = np.asarray(_listed(idf_weights), np.float64)
            if w.ndim != 1 or len(w) != len(_listed(vocabulary)):
                raise ValueError(f"{k}: idf_weights must be 1-D and as long as the vocabulary "
                                 f"({len(_listed(vocabulary))}), got shape {w.shape}")
            front = 0 if found_special else start
            back = (self.max_tokens - front - len(w)
                    if self.pad_to_max_tokens and self.max_tokens is not None else 0)
            w = np.pad(w, (front, back), constant_values=(np.mean(w), 0.0))
            self.idf_weights = w.astype(np.float32)
        self._set_tokens(tokens)

    def _set_tokens(self, tokens: list[Any]) -> None:
        start = self._token_start_index()
        self._tokens = list(tokens)
        self._index = {t: start + i for i, t in enumerate(self._tokens)}
        size = self.vocabulary_size()
        if (self.output_mode != "int" and not self.pad_to_max_tokens
                and self._frozen_vocab_size is not None and size != self._frozen_vocab_size):
            raise RuntimeError(
                f"layer {self.name!r} ({self._KIND}): with output_mode={self.output_mode!r} "
                f"and pad_to_max_tokens=False the vocabulary size fixes the output's width, "
                f"so it cannot change from {self._frozen_vocab_size} to {size}")
        self._frozen_vocab_size = size

    # --- adapt ---------------------------------------------------------------------------
    def reset_state(self) -> None:
        self._counts: collections.Counter = collections.Counter()
        self._doc_counts: collections.Counter = collections.Counter()
        self._num_documents = 0

    def update_state(self, data: Any) -> None:
        """Count the tokens of one batch (rows are documents for ``"tf_idf"``)."""
        if self._has_input_vocabulary:
            raise ValueError(f"layer {self.name!r} ({self._KIND}) has a vocabulary given at "
                             f"construction; it cannot be adapted")
        values = self._host(data)
        if values.ndim == 0:
            values = values.reshape(1)
        if values.ndim == 1:
            values = values.reshape(1, -1)
        self._count_rows([row.reshape(-1).tolist() for row in values])

    def _count_rows(self, rows: list[list[Any]]) -> None:
        for row in rows:
            self._counts.update(row)
            if self.output_mode == "tf_idf":
                self._doc_counts.update(set(row))
        self._num_documents += len(rows)

    def finalize_state(self) -> None:
        """Make the vocabulary from the counts (and the IDF weights in ``"tf_idf"`` mode)."""
        if self._has_input_vocabulary or not self._counts:
            return
        counts = dict(self._counts)
        for special in (self.mask_token, self.oov_token):
            if special is not None:
                counts.pop(special, None)
        tokens = sorted(counts, key=lambda t: (counts[t], t), reverse=True)
        if self.max_tokens:
            tokens = tokens[:self.max_tokens - self._token_start_index()]
        if self.output_mode == "tf_idf":
            docs = np.array([self._doc_counts[t] for t in tokens], np.float64)
            idf = np.log(1 + self._num_documents / (1 + docs)).astype(np.float32)
            front = np.full(self._token_start_index(), np.mean(idf) if idf.size else 0.0)
            w = np.concatenate([front.astype(np.float32), idf])
            if self.pad_to_max_tokens and self.max_tokens is not None:
                w = np.pad(w, (0, self.max_tokens - w.size))
            self.idf_weights = w.astype(np.float32)
        self.reset_state()
        self._set_tokens(tokens)

    def adapt(self, data: Any, steps: int | None = None) -> None:
        """Build the vocabulary from the tokens of ``data``: a list or array (each element
        of a 1-D one is a document), or an iterable of batches such as an
        ``ember.data.Dataset`` (at most ``steps`` of them). Tokens are ordered by count,
        ties by the token, both descending; ``max_tokens`` keeps the most frequent."""
        self.reset_state()
        rows = _ragged_rows(data)
        if rows is not None:  # rows of several lengths (tf.ragged's): their tokens count
            self.update_state(self._host([t for row in rows for t in row]).reshape(-1, 1))
        elif _host_data.is_batch_like(data) or isinstance(data, (list, tuple)):
            values = self._host(data)
            if values.ndim == 1:
                values = values.reshape(-1, 1)
            self.update_state(values)
        else:
            for batch in _host_data.batches(self._KIND, data, steps):
                self.update_state(batch)
        self.finalize_state()

    # --- calling -------------------------------------------------------------------------
    def _ember_convert(self, x: Any) -> Any:
        if self.invert:
            return _host_data.to_numpy(x)
        rows = _ragged_rows(x)
        if rows is None:
            return self._host(x)
        if self.output_mode not in ("multi_hot", "count", "tf_idf"):
            raise TypeError(
                f"layer {self.name!r} ({self._KIND}) was given rows of several lengths (a "
                f"ragged batch): with output_mode={self.output_mode!r} the output would be "
                f"ragged too, which ember tensors cannot be; pad the rows first "
                f"(nn.utils.pad_sequences) or encode them (output_mode='multi_hot', "
                f"'count' or 'tf_idf')")
        width = max((len(r) for r in rows), default=0)
        out = np.full((len(rows), max(width, 1)), _PAD, dtype=object)
        for i, row in enumerate(rows):  # each row checked as the layer checks any input
            out[i, :len(row)] = self._host(list(row)) if len(row) else []
        return out

    def _lookup(self, values: np.ndarray) -> np.ndarray:
        flat = values.reshape(-1)
        index = self._index
        out = np.fromiter((index.get(v, -1) for v in flat), np.int64, flat.size)
        pad = np.fromiter((v is _PAD for v in flat), bool, flat.size) if \
            values.dtype == object else np.zeros(flat.size, bool)
        if self.mask_token is not None:
            is_mask = np.fromiter((v == self.mask_token for v in flat), bool, flat.size)
            out[is_mask] = 0 if self.output_mode == "int" else -1
        else:
            is_mask = np.zeros(flat.size, bool)
        out[pad] = -1  # a ragged row's padding: encoded as nothing
        is_mask |= pad
        oov = (out == -1) & ~is_mask
        if oov.any():
            if self.num_oov_indices == 0:
                raise ValueError(f"layer {self.name!r} ({self._KIND}): with num_oov_indices=0 "
                                 f"every input must be in the vocabulary; found "
                                 f"{sorted(set(flat[oov].tolist()))[:10]}")
            out[oov] = self._oov_index(flat[oov])
        return out.reshape(values.shape)

    def _oov_index(self, values: np.ndarray) -> np.ndarray:
        n, start = self.num_oov_indices, self._oov_start_index()
        if n == 1:
            return np.full(values.shape, start, np.int64)
        if self._integer_keys and self.oov_method != "farmhash":
            return np.mod(values.astype(np.int64), n) + start
        return hash_values(values, n, self.salt) + start

    def _invert(self, ids: np.ndarray) -> np.ndarray:
        vocab = self.get_vocabulary()
        if ids.dtype.kind not in "iu":
            raise TypeError(f"layer {self.name!r} ({self._KIND}, invert=True) maps integer "
                            f"indices back to tokens, got dtype {ids.dtype}")
        flat = ids.reshape(-1)
        out = [vocab[i] if 0 <= i < len(vocab) and i >= self._token_start_index()
               else self.oov_token for i in flat.tolist()]
        out = np.array(out, dtype=object).reshape(ids.shape)
        if self.mask_token is not None:
            out[ids == 0] = self.mask_token
        return out

    def call(self, inputs: Any) -> Any:
        if self.invert:
            return self._inverted_output(self._invert(inputs))
        if (self.output_mode != "int" and not self.pad_to_max_tokens
                and self._frozen_vocab_size is None):
            raise RuntimeError(f"layer {self.name!r} ({self._KIND}): with output_mode="
                               f"{self.output_mode!r} set the vocabulary (vocabulary= or "
                               f"adapt()) before calling the layer")
        ids = em.constant(self._lookup(inputs))
        dtype = self._out_dtype or (em.float32 if self.output_mode == "tf_idf" else em.int64)
        if self.output_mode == "int":
            return ids if dtype == np.int64 else em.cast(ids, dtype)
        depth = self.max_tokens if self.pad_to_max_tokens else self._frozen_vocab_size
        # __init__ refuses pad_to_max_tokens without max_tokens; no vocabulary is refused above
        assert depth is not None, "an encoded output's width is known here"
        if self.output_mode != "tf_idf":
            return _encoding.encode(ids, self.output_mode, depth, dtype)
        counts = _encoding.encode(ids, "count", depth, em.float32)
        return em.cast(counts * em.constant(self.idf_weights), dtype)

    def _inverted_output(self, tokens: np.ndarray) -> Any:
        return tokens

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "dtype": None if self._out_dtype is None else
                str(self._out_dtype), "invert": self.invert, "max_tokens": self.max_tokens,
                "num_oov_indices": self.num_oov_indices, "oov_token": self.oov_token,
                "mask_token": self.mask_token, "output_mode": self.output_mode,
                "sparse": self.sparse, "pad_to_max_tokens": self.pad_to_max_tokens,
                **self.vocabulary_config(),
                "vocabulary_size": self._frozen_vocab_size, "oov_method": self.oov_method,
                "salt": self.salt}

    def vocabulary_config(self) -> dict[str, Any]:
        """The vocabulary (and IDF weights) for ``get_config``: as given, or, after
        ``adapt``, the learned ones (Keras keeps those in the ``.keras`` file's assets; here
        the config carries them, so ``from_config`` and ``load_model`` restore them and the
        restored layer can still be adapted)."""
        if self.input_vocabulary is not None or not self._tokens:
            return {"idf_weights": self.input_idf_weights, "vocabulary": self.input_vocabulary}
        vocab = self.get_vocabulary()
        idf = (None if self.idf_weights is None
               else [float(w) for w in self.idf_weights[:len(vocab)]])
        return {"idf_weights": idf, "vocabulary": vocab, "has_input_vocabulary": False}


def _listed(v: Any) -> list[Any]:
    if isinstance(v, em.Tensor):
        v = v.numpy()
    return np.asarray(v).reshape(-1).tolist() if isinstance(v, np.ndarray) else list(v)


def _read_vocabulary_file(where: str, path: str) -> list[str]:
    if not os.path.isfile(path):
        raise ValueError(f"{where}: the vocabulary file {path!r} does not exist")
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    while lines and lines[-1] == "":
        lines.pop()
    return lines


class StringLookup(IndexLookup):
    """Map strings to indices in a vocabulary (or, with ``invert=True``, indices back to
    strings), optionally encoded as one-hot, multi-hot, count or TF-IDF vectors.

    Runs on the host on Python strings (``str``, ``bytes``, nested lists) and numpy string
    arrays: ember tensors hold no strings, and an ember Tensor given here raises. Apply it
    in the input pipeline or before ``fit``; the model then takes the integer ids (an ember
    Tensor it returns). ``invert=True`` returns a numpy array of ``str``.

    Args:
        max_tokens: the largest vocabulary (special tokens included) ``adapt`` keeps.
        num_oov_indices: out-of-vocabulary buckets; with more than one a string goes to
            FarmHash64 (SipHash with ``salt``) of its text modulo the count, as in Keras;
            0 makes an out-of-vocabulary input an error.
        mask_token: a token for padding: index 0 in ``"int"`` mode, dropped otherwise.
        oov_token: the token ``invert=True`` returns for unknown indices.
        vocabulary: a sequence of strings or the path of a text file, one per line.
        idf_weights: TF-IDF weights, one per vocabulary term (``"tf_idf"`` mode).
        invert: map indices to strings.
        output_mode: ``"int"`` (int64 ids), ``"one_hot"``, ``"multi_hot"``, ``"count"``
            (int64, as Keras's eager output) or ``"tf_idf"`` (float32).
        pad_to_max_tokens: make encoded outputs ``max_tokens`` wide.
        sparse: only False (ember has no sparse tensors).
        encoding: the text encoding of ``bytes`` inputs.
        name: the layer's name.
        salt: an int or two ints keying SipHash for the OOV buckets.
        **kwargs: the base ``Layer`` arguments.

    Examples:
        >>> from ember import nn
        >>> layer = nn.layers.StringLookup(vocabulary=["a", "b", "c", "d"])
        >>> layer([["a", "c", "d"], ["d", "z", "b"]]).numpy()
        array([[1, 3, 4],
               [4, 0, 2]])
    """

    _KIND = "StringLookup"

    def __init__(self, max_tokens: int | None = None, num_oov_indices: int = 1,
                 mask_token: str | None = None, oov_token: str = "[UNK]",
                 vocabulary: Any = None, idf_weights: Any = None, invert: bool = False,
                 output_mode: str = "int", pad_to_max_tokens: bool = False,
                 sparse: bool = False, encoding: str = "utf-8", name: str | None = None,
                 salt: Any = None, **kwargs: Any) -> None:
        "".encode(encoding)  # an unknown codec raises LookupError naming it
        self.encoding = encoding
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token,
                         vocabulary=vocabulary, idf_weights=idf_weights, invert=invert,
                         output_mode=output_mode, sparse=sparse,
                         pad_to_max_tokens=pad_to_max_tokens, name=name, salt=salt, **kwargs)

    def _key(self, v: Any) -> Any:
        return v.decode(self.encoding) if isinstance(v, bytes) else str(v)

    def _host(self, x: Any) -> np.ndarray:
        return _host_data.host_strings(f"layer {self.name!r} (StringLookup)", x,
                                       self.encoding)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "encoding": self.encoding}


class IntegerLookup(IndexLookup):
    """Map integers to indices in a vocabulary (or indices back to the integers with
    ``invert=True``), optionally encoded as one-hot, multi-hot, count or TF-IDF vectors.

    Runs on the host (an ember Tensor input is read from its device once) and returns an
    ember Tensor: it belongs in the input pipeline or before ``fit``.

    Args:
        max_tokens: as ``StringLookup`` (so are ``num_oov_indices``, ``vocabulary``,
            ``idf_weights``, ``invert``, ``output_mode``, ``pad_to_max_tokens``,
            ``sparse``, ``name`` and ``salt``).
        mask_token: an integer for padding (index 0 in ``"int"`` mode).
        oov_token: the integer ``invert=True`` returns for unknown indices (-1).
        vocabulary_dtype: only ``"int64"`` (as Keras).
        oov_method: how values share ``num_oov_indices > 1`` buckets: ``"floormod"``
            (value modulo the count) or ``"farmhash"`` (FarmHash64 of the decimal text).
        **kwargs: the base ``Layer`` arguments.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> layer = nn.layers.IntegerLookup(vocabulary=[12, 36, 1138, 42])
        >>> layer(np.array([[12, 1138, 42], [42, 1000, 36]])).numpy()
        array([[1, 3, 4],
               [4, 0, 2]])
    """

    _KIND = "IntegerLookup"
    _integer_keys = True

    def __init__(self, max_tokens: int | None = None, num_oov_indices: int = 1,
                 mask_token: int | None = None, oov_token: int = -1, vocabulary: Any = None,
                 vocabulary_dtype: str = "int64", idf_weights: Any = None,
                 invert: bool = False, output_mode: str = "int", sparse: bool = False,
                 pad_to_max_tokens: bool = False, oov_method: str = "floormod",
                 salt: Any = None, name: str | None = None, **kwargs: Any) -> None:
        if vocabulary_dtype != "int64":
            raise ValueError(f"IntegerLookup: only vocabulary_dtype='int64' is supported, "
                             f"got vocabulary_dtype={vocabulary_dtype!r}")
        self.vocabulary_dtype = "int64"
        super().__init__(max_tokens, num_oov_indices,
                         None if mask_token is None else int(mask_token),
                         None if oov_token is None else int(oov_token),
                         vocabulary=vocabulary, idf_weights=idf_weights, invert=invert,
                         output_mode=output_mode, sparse=sparse,
                         pad_to_max_tokens=pad_to_max_tokens, oov_method=oov_method,
                         salt=salt, name=name, **kwargs)

    def _key(self, v: Any) -> Any:
        return int(v)  # numpy ints and a vocabulary file's lines alike

    def _host(self, x: Any) -> np.ndarray:
        arr = _host_data.to_numpy(x)
        if arr.dtype.kind not in "iub":
            raise TypeError(f"layer {self.name!r} (IntegerLookup) expects integers, got "
                            f"dtype {arr.dtype}")
        return arr.astype(np.int64)

    def _inverted_output(self, tokens: np.ndarray) -> Any:
        return em.constant(tokens.astype(np.int64))

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "vocabulary_dtype": self.vocabulary_dtype}
