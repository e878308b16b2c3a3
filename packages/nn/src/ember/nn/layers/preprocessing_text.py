"""TextVectorization: text to token ids or bag-of-words vectors (Keras 3's name, arguments,
defaults and numbers).

Text lives on the host: ember tensors hold numbers only, so this layer reads Python strings
and numpy string arrays, standardizes and splits them in Python, looks the tokens up in a
``StringLookup`` and returns an ember Tensor. It belongs in the input pipeline (an
``ember.data`` ``map``) or on the data before ``fit``; a model takes the ids it returns.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from . import _encoding, _host_data
from .base import Layer
from .preprocessing_lookup import StringLookup

# Keras's punctuation class (its ",-\." is the range ',' to '.', so '-' goes too)
_PUNCTUATION = re.compile(r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']')
_WHITESPACE = re.compile(r"[ \t\n\v\f\r]+")  # TensorFlow splits on ASCII whitespace only
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
STANDARDIZE = ("lower_and_strip_punctuation", "lower", "strip_punctuation")
SPLIT = ("whitespace", "character")


def _ngrams(tokens: list[str], widths: tuple[int, ...]) -> list[str]:
    out: list[str] = []
    for w in widths:
        out += [" ".join(tokens[i:i + w]) for i in range(len(tokens) - w + 1)]
    return out


class TextVectorization(Layer):
    """Turn strings into sequences of token ids (``"int"``) or one vector per string
    (``"multi_hot"``, ``"count"``, ``"tf_idf"``), with a vocabulary given or learned by
    ``adapt``.

    Each string is standardized (by default lowercased, as TensorFlow does: ASCII letters
    only, and stripped of ASCII punctuation), split (on ASCII whitespace by default),
    optionally joined into n-grams, and looked up (index 0 is padding, 1 the
    out-of-vocabulary token in ``"int"`` mode).

    It runs on the host and returns an ember Tensor (int64 ids, or the encoded vectors):
    apply it in the input pipeline or before ``fit``. An ember Tensor given here raises
    (ember has no string tensors).

    Args:
        max_tokens: the largest vocabulary (padding and OOV tokens included).
        standardize: ``"lower_and_strip_punctuation"``, ``"lower"``,
            ``"strip_punctuation"``, None, or a callable taking a numpy array of ``str``
            and returning one of the same shape.
        split: ``"whitespace"``, ``"character"``, None (each string is one token), or a
            callable taking a 1-D numpy array of ``str`` and returning one sequence of
            tokens per string.
        ngrams: None, an int n (all n-grams up to n), or a tuple of widths.
        output_mode: ``"int"``, ``"multi_hot"``, ``"count"``, ``"tf_idf"`` (or
            ``"one_hot"``, as Keras allows).
        output_sequence_length: pad or cut ``"int"`` outputs to this many steps (None: the
            longest in the batch).
        pad_to_max_tokens: make encoded outputs ``max_tokens`` wide.
        vocabulary: a sequence of strings or the path of a file with one per line.
        idf_weights: the TF-IDF weights of the vocabulary (``"tf_idf"`` mode).
        sparse: only False (ember has no sparse tensors).
        ragged: only False (ember has no ragged tensors: ``"int"`` outputs are padded).
        encoding: the text encoding of ``bytes`` inputs.
        name: the layer's name.
        **kwargs: the base ``Layer`` arguments.

    Examples:
        >>> from ember import nn
        >>> layer = nn.layers.TextVectorization(output_sequence_length=4)
        >>> layer.adapt(["foo bar", "bar baz", "baz bada boom"])
        >>> layer([["foo qux bar"], ["qux baz"]]).numpy()
        array([[4, 1, 3, 0],
               [1, 2, 0, 0]])
    """

    def __init__(self, max_tokens: int | None = None,
                 standardize: Any = "lower_and_strip_punctuation", split: Any = "whitespace",
                 ngrams: Any = None, output_mode: str = "int",
                 output_sequence_length: int | None = None, pad_to_max_tokens: bool = False,
                 vocabulary: Any = None, idf_weights: Any = None, sparse: bool = False,
                 ragged: bool = False, encoding: str = "utf-8", name: str | None = None,
                 **kwargs: Any) -> None:
        _encoding.reject_sparse("TextVectorization", sparse)
        if ragged:
            raise ValueError("TextVectorization: ragged=True is not supported: ember has no "
                             "ragged tensors (Keras offers it on the TensorFlow backend only); "
                             "'int' outputs are padded with 0")
        if not (standardize is None or callable(standardize) or standardize in STANDARDIZE):
            raise ValueError(f"TextVectorization: standardize must be one of {STANDARDIZE}, "
                             f"None or a callable, got standardize={standardize!r}")
        if not (split is None or callable(split) or split in SPLIT):
            raise ValueError(f"TextVectorization: split must be one of {SPLIT}, None or a "
                             f"callable, got split={split!r}")
        output_mode = {"binary": "multi_hot", "tf-idf": "tf_idf"}.get(output_mode, output_mode)
        if isinstance(ngrams, list):
            ngrams = tuple(ngrams)
        if not (ngrams is None or (isinstance(ngrams, int) and not isinstance(ngrams, bool))
                or (isinstance(ngrams, tuple) and all(isinstance(n, int) for n in ngrams))):
            raise ValueError(f"TextVectorization: ngrams must be None, an int or a tuple of "
                             f"ints, got ngrams={ngrams!r}")
        if output_mode == "int" and not (output_sequence_length is None or isinstance(
                output_sequence_length, int)):
            raise ValueError(f"TextVectorization: output_sequence_length must be None or an "
                             f"int, got {output_sequence_length!r}")
        if output_mode != "int" and output_sequence_length is not None:
            raise ValueError(f"TextVectorization: output_sequence_length applies only with "
                             f"output_mode='int', got output_mode={output_mode!r}")
        vocabulary_size = kwargs.pop("vocabulary_size", None)
        has_vocab = kwargs.pop("has_input_vocabulary", vocabulary is not None)
        dtype = kwargs.pop("dtype", None)
        _host_data.reject_activity_regularizer("TextVectorization", kwargs)
        super().__init__(name=name, **kwargs)
        self._standardize = standardize
        self._split = split
        self._ngrams_arg = ngrams
        self._ngrams = tuple(range(1, ngrams + 1)) if isinstance(ngrams, int) else ngrams
        self._output_mode = output_mode
        self._output_sequence_length = output_sequence_length
        self._encoding = encoding
        self._lookup_layer = StringLookup(
            max_tokens=max_tokens, vocabulary=vocabulary, idf_weights=idf_weights,
            pad_to_max_tokens=pad_to_max_tokens, mask_token="", output_mode=output_mode,
            encoding=encoding, vocabulary_size=vocabulary_size,
            has_input_vocabulary=has_vocab, dtype=dtype)
        self.built = True

    # --- text to tokens ------------------------------------------------------------------
    def _standardized(self, text: np.ndarray) -> np.ndarray:
        std = self._standardize
        if callable(std):
            out = np.asarray(std(text.astype(str)))
            return _host_data.host_strings("TextVectorization (standardize)", out,
                                           self._encoding)
        flat = [s for s in text.reshape(-1)]
        if std in ("lower", "lower_and_strip_punctuation"):
            flat = [s.translate(_ASCII_LOWER) for s in flat]
        if std in ("strip_punctuation", "lower_and_strip_punctuation"):
            flat = [_PUNCTUATION.sub("", s) for s in flat]
        return np.array(flat, dtype=object).reshape(text.shape)

    def _rows(self, inputs: Any) -> tuple[list[list[str]] | None, np.ndarray | None]:
        """Split and n-grammed token rows (ragged), or, with ``split=None``, the array."""
        text = self._standardized(_host_data.host_strings(
            f"layer {self.name!r} (TextVectorization)", inputs, self._encoding))
        if self._split is None:
            if self._ngrams is not None:
                return [_ngrams([s], self._ngrams) for s in text.reshape(-1)], None
            return None, text
        if text.ndim > 1:
            if text.shape[-1] != 1:
                raise ValueError(f"layer {self.name!r} (TextVectorization): to split strings "
                                 f"the input must be of rank 1 or have a last axis of 1, got "
                                 f"shape {text.shape}")
            text = text.reshape(text.shape[:-1])
        if text.ndim != 1:
            raise ValueError(f"layer {self.name!r} (TextVectorization): to split strings the "
                             f"input must be a batch of strings, got shape {text.shape}")
        if self._split == "whitespace":
            rows = [[t for t in _WHITESPACE.split(s) if t] for s in text]
        elif self._split == "character":
            rows = [list(s) for s in text]
        else:
            rows = [[str(t) for t in r] for r in self._split(text.astype(str))]
            if len(rows) != len(text):
                raise ValueError(f"layer {self.name!r} (TextVectorization): split returned "
                                 f"{len(rows)} sequences for {len(text)} strings")
        if self._ngrams is not None:
            rows = [_ngrams(r, self._ngrams) for r in rows]
        return rows, None

    @staticmethod
    def _padded(rows: list[list[str]], length: int | None = None) -> np.ndarray:
        width = max((len(r) for r in rows), default=0) if length is None else length
        out = np.full((len(rows), width), "", dtype=object)
        for i, r in enumerate(rows):
            r = r[:width]
            out[i, :len(r)] = r
        return out

    # --- adapt and vocabulary --------------------------------------------------------------
    def _update(self, batch: Any) -> None:
        rows, flat = self._rows(batch)
        if rows is None:
            self._lookup_layer.update_state(flat)
        else:
            if self._lookup_layer._has_input_vocabulary:
                self._lookup_layer.update_state(np.zeros((0,), object))  # raises
            self._lookup_layer._count_rows(rows)

    def adapt(self, data: Any, batch_size: int | None = None, steps: int | None = None) -> None:
        """Learn the vocabulary (and IDF weights) from ``data``: a list or array of strings,
        or an iterable of batches of them such as an ``ember.data.Dataset`` (at most
        ``steps`` batches). Tokens are ordered by count, ties by the token, descending.

        ``batch_size`` is accepted for Keras's signature only when None (Keras ignores it).
        """
        if batch_size is not None:
            raise ValueError("TextVectorization.adapt: batch_size is not supported (Keras "
                             "ignores it too); batch the dataset instead")
        self._lookup_layer.reset_state()
        if _host_data.is_batch_like(data) or isinstance(data, (list, tuple)):
            arr = _host_data.host_strings("TextVectorization.adapt", data, self._encoding)
            self._update(arr.reshape(-1, 1) if arr.ndim == 1 else arr)
        else:
            for batch in _host_data.batches("TextVectorization", data, steps):
                self._update(batch)
        self._lookup_layer.finalize_state()

    def get_vocabulary(self, include_special_tokens: bool = True) -> list[str]:
        """The vocabulary in index order (``""`` and ``"[UNK]"`` first in ``"int"`` mode)."""
        return self._lookup_layer.get_vocabulary(include_special_tokens)

    def vocabulary_size(self) -> int:
        return self._lookup_layer.vocabulary_size()

    def set_vocabulary(self, vocabulary: Any, idf_weights: Any = None) -> None:
        """Set the vocabulary (and the IDF weights in ``"tf_idf"`` mode) directly."""
        self._lookup_layer.set_vocabulary(vocabulary, idf_weights=idf_weights)

    # --- calling ---------------------------------------------------------------------------
    def _ember_convert(self, x: Any) -> Any:
        return _host_data.host_strings(f"layer {self.name!r} (TextVectorization)", x,
                                       self._encoding)

    def call(self, inputs: Any) -> Any:
        if self._split is not None and isinstance(inputs, (str, bytes, np.ndarray)) \
                and np.ndim(inputs) == 0:  # one string: its tokens, as Keras 3 splits it
            return self.call(np.asarray(inputs).reshape(1))[0]
        rows, flat = self._rows(inputs)
        if rows is None:
            assert flat is not None, "_rows gives the array whenever it gives no rows"
            length = self._output_sequence_length
            if self._output_mode == "int" and length is not None and flat.ndim:
                cut = flat[..., :length]  # padded with "" (the mask token: id 0)
                flat = np.full(flat.shape[:-1] + (length,), "", dtype=object)
                flat[..., :cut.shape[-1]] = cut
            return self._lookup_layer(flat)
        if self._output_mode == "int":
            return self._lookup_layer(self._padded(rows, self._output_sequence_length))
        return self._lookup_layer(self._padded(rows))

    def get_config(self) -> dict[str, Any]:
        lk = self._lookup_layer
        return {**super().get_config(), "dtype": lk.get_config()["dtype"],
                "max_tokens": lk.max_tokens,
                "standardize": self._standardize, "split": self._split,
                "ngrams": self._ngrams_arg, "output_mode": self._output_mode,
                "output_sequence_length": self._output_sequence_length,
                "pad_to_max_tokens": lk.pad_to_max_tokens, "sparse": False, "ragged": False,
                **lk.vocabulary_config(),
                "encoding": self._encoding, "vocabulary_size": self.vocabulary_size()}
