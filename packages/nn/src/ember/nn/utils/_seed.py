"""``set_random_seed``, as Keras 3's (``keras.utils.set_random_seed``)."""

from __future__ import annotations

import numbers
import random

import numpy as np

import ember.core as em


def set_random_seed(seed: int) -> None:
    """Seed every random generator a program draws from: Python's ``random``, numpy's
    global one (``np.random.seed``) and ember's (``ember.core.random.set_seed``, which
    also seeds ``ember.data``'s unseeded shuffles), so that a run repeats.

    Initializers, dropout, ``fit``'s shuffling and the random layers draw from ember's
    generator, so one call before building a model makes training repeatable on a device.

    Args:
        seed: a whole number in ``[0, 2**32)`` (numpy's global generator takes no other).

    Examples:
        >>> import random
        >>> from ember import nn
        >>> nn.utils.set_random_seed(3); a = random.random()
        >>> nn.utils.set_random_seed(3); a == random.random()
        True
    """
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or \
            not 0 <= seed < 2 ** 32:
        raise ValueError(f"set_random_seed: seed must be a whole number in [0, 2**32), got "
                         f"{seed!r}")
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed)
    em.random.set_seed(seed)
