"""Skip-gram pairs and their sampling table: tf.keras's ``preprocessing.sequence.skipgrams``
and ``make_sampling_table``, which TensorFlow's word2vec tutorial uses (Keras 3 keeps them
among its legacy functions).

Both follow tf.keras's definitions, so that a program that sets the same seed draws the
same pairs: the table is Mikolov et al.'s sub-sampling probability of a word from its rank
under Zipf's law, and the random choices come from Python's ``random`` module, as
tf.keras's do (a ``seed`` reseeds it for the final shuffle).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np

_EULER_GAMMA = 0.577


def make_sampling_table(size: int, sampling_factor: float = 1e-5) -> np.ndarray:
    """The probability of keeping each word id (ids ranked by frequency, 0 the most
    frequent), for ``skipgrams(sampling_table=...)``: frequent words are dropped more.

    The frequency of the word of rank r is approximated by Zipf's law, 1 / (r (ln r +
    gamma) + 1/2 - 1/(12 r)), and a word is kept with probability
    ``min(1, sqrt(sampling_factor / frequency))``, word2vec's sub-sampling.

    Args:
        size: How many word ids.
        sampling_factor: word2vec's threshold ``t``.

    Returns:
        A float64 array of ``size`` probabilities.

    Examples:
        >>> from ember import nn
        >>> table = nn.preprocessing.sequence.make_sampling_table(4)
        >>> table.shape, bool(table[0] < table[3])
        ((4,), True)
    """
    if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 1:
        raise ValueError(f"make_sampling_table: size must be a whole number >= 1, got {size!r}")
    rank = np.arange(size, dtype=np.float64)
    rank[0] = 1.0
    inverse_frequency = rank * (np.log(rank) + _EULER_GAMMA) + 0.5 - 1.0 / (12.0 * rank)
    f = sampling_factor * inverse_frequency
    return np.minimum(1.0, f / np.sqrt(f))


def skipgrams(sequence: Sequence[int], vocabulary_size: int, window_size: int = 4,
              negative_samples: float = 1.0, shuffle: bool = True, categorical: bool = False,
              sampling_table: Any = None, seed: int | None = None
              ) -> tuple[list[list[int]], list[Any]]:
    """Skip-gram pairs of a sequence of word ids: ``([target, context], label)``.

    Every word ``w`` of ``sequence`` (id 0, padding, is skipped; a ``sampling_table`` keeps
    ``w`` with probability ``sampling_table[w]``) pairs with each word within
    ``window_size`` of it, label 1. Then ``negative_samples`` times as many pairs get a
    random context id in ``[1, vocabulary_size)``, label 0. With ``shuffle``, the pairs
    (and their labels, alike) are shuffled.

    Args:
        sequence: Word ids.
        vocabulary_size: One more than the largest id.
        window_size: How far a context word may be from its target.
        negative_samples: How many negative pairs per positive one (0: none).
        shuffle: Shuffle the pairs.
        categorical: Labels as ``[0, 1]`` / ``[1, 0]`` instead of 1 / 0.
        sampling_table: Keep-probabilities by id (``make_sampling_table``).
        seed: Seeds the shuffle (else a random one).

    Returns:
        ``(couples, labels)``: lists of ``[target, context]`` and of labels.

    Examples:
        >>> from ember import nn
        >>> pairs, labels = nn.preprocessing.sequence.skipgrams(
        ...     [1, 2, 3], vocabulary_size=4, window_size=1, negative_samples=0.0,
        ...     shuffle=False)
        >>> pairs, labels
        ([[1, 2], [2, 1], [2, 3], [3, 2]], [1, 1, 1, 1])
    """
    if vocabulary_size < 2:
        raise ValueError(f"skipgrams: vocabulary_size must be >= 2 (id 0 is padding), got "
                         f"{vocabulary_size!r}")
    if window_size < 0 or negative_samples < 0:
        raise ValueError(f"skipgrams: window_size and negative_samples must be >= 0, got "
                         f"{window_size!r} and {negative_samples!r}")
    ids = [int(w) for w in sequence]
    couples: list[list[int]] = []
    labels: list[Any] = []
    positive: Any = [0, 1] if categorical else 1
    negative: Any = [1, 0] if categorical else 0
    for i, target in enumerate(ids):
        if not target:
            continue
        if sampling_table is not None and sampling_table[target] < random.random():
            continue
        for j in range(max(0, i - window_size), min(len(ids), i + window_size + 1)):
            if j == i or not ids[j]:
                continue
            couples.append([target, ids[j]])
            labels.append(list(positive) if categorical else positive)
    if negative_samples > 0 and couples:
        count = int(len(labels) * negative_samples)
        targets = [c[0] for c in couples]
        random.shuffle(targets)
        couples += [[targets[k % len(targets)], random.randint(1, vocabulary_size - 1)]
                    for k in range(count)]
        labels += [list(negative) if categorical else negative for _ in range(count)]
    if shuffle:
        if seed is None:
            seed = random.randint(0, 10_000_000)
        random.seed(seed)
        random.shuffle(couples)
        random.seed(seed)
        random.shuffle(labels)
    return couples, labels
