"""``PyDataset``: Keras 3's base class for data made batch by batch in Python."""

from __future__ import annotations

import collections
import concurrent.futures
from collections.abc import Iterator
from typing import Any


class PyDataset:
    """Batches made by Python code: a subclass defines ``__len__`` (the batches in one
    epoch) and ``__getitem__(index)`` (the batch at ``index``: ``x``, ``(x, y)`` or
    ``(x, y, sample_weight)``), and may define ``on_epoch_begin`` and ``on_epoch_end``.
    ``fit``, ``evaluate`` and ``predict`` take one pass over its batches per epoch:
    ``fit`` in a new random order each epoch unless ``shuffle=False`` (Keras's default),
    ``evaluate`` and ``predict`` in order. Iterating over it gives the batches in order.

    Args:
        workers: how many threads make batches ahead of the one being used (1: made as
            they are needed, in the calling thread). Batches still arrive in order.
        use_multiprocessing: False. Worker processes would need the dataset pickled,
            which ember never does; True is refused by name.
        max_queue_size: how many batches the workers may make ahead.

    Examples:
        >>> import numpy as np
        >>> from ember import nn
        >>> class Squares(nn.utils.PyDataset):
        ...     def __len__(self):
        ...         return 3
        ...     def __getitem__(self, i):
        ...         x = np.full((2, 1), i, "float32")
        ...         return x, x * x
        >>> [float(y[0, 0]) for _, y in Squares()]
        [0.0, 1.0, 4.0]
    """

    workers = 1
    use_multiprocessing = False
    max_queue_size = 10

    def __init__(self, workers: int = 1, use_multiprocessing: bool = False,
                 max_queue_size: int = 10) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"PyDataset: workers must be a whole number >= 1, got {workers!r}")
        if use_multiprocessing:
            raise ValueError("PyDataset: use_multiprocessing=True is not supported: worker "
                             "processes would need the dataset pickled, which ember never "
                             "does; use workers=N (threads) instead")
        if isinstance(max_queue_size, bool) or not isinstance(max_queue_size, int) \
                or max_queue_size < 1:
            raise ValueError(f"PyDataset: max_queue_size must be a whole number >= 1, got "
                             f"{max_queue_size!r}")
        self.workers = workers
        self.use_multiprocessing = False
        self.max_queue_size = max_queue_size

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__ (the number "
                                  f"of batches in an epoch)")

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__(index)")

    @property
    def num_batches(self) -> int:
        """The batches in one epoch (``len(self)``)."""
        return len(self)

    def on_epoch_begin(self) -> None:
        """Called before each pass."""

    def on_epoch_end(self) -> None:
        """Called after each complete pass (to reshuffle, say)."""

    def __iter__(self) -> Iterator[Any]:
        """The batches in order, as Keras's ``Sequence``: a plain loop is no epoch, so it
        calls neither ``on_epoch_begin`` nor ``on_epoch_end`` (``fit``, ``evaluate`` and
        ``predict`` do, around each of their passes)."""
        for i in range(self.num_batches):
            yield self[i]

    def _pass(self, order: Any) -> Iterator[Any]:
        """One epoch: the batches at the indices of ``order``, in that order."""
        self.on_epoch_begin()
        order = list(order)
        if self.workers <= 1:
            for i in order:
                yield self[i]
        else:
            with concurrent.futures.ThreadPoolExecutor(self.workers) as pool:
                ahead: collections.deque[Any] = collections.deque()
                nxt = 0
                try:
                    for _ in order:
                        while nxt < len(order) and len(ahead) < self.max_queue_size:
                            ahead.append(pool.submit(self.__getitem__, order[nxt]))
                            nxt += 1
                        yield ahead.popleft().result()
                finally:
                    for f in ahead:  # a pass left early (steps_per_epoch): drop the rest
                        f.cancel()
        self.on_epoch_end()


class Epochs:
    """What ``fit``, ``evaluate`` and ``predict`` iterate for a ``PyDataset``: each pass is
    an epoch, between its ``on_epoch_begin`` and ``on_epoch_end``. With ``shuffle`` (``fit``'s
    default), each pass takes the batches in a new random order, drawn from ember's global
    generator on the host (so ``em.random.set_seed`` repeats it)."""

    def __init__(self, dataset: PyDataset, shuffle: bool) -> None:
        self.dataset = dataset
        self.shuffle = shuffle

    def __len__(self) -> int:
        return self.dataset.num_batches

    def __iter__(self) -> Iterator[Any]:
        if not self.shuffle:
            return self.dataset._pass(range(len(self)))
        import numpy as np

        import ember.core as em

        with em.device("/cpu:0"):
            order = em.random.shuffle(em.constant(np.arange(len(self)))).numpy()
        return self.dataset._pass(order.tolist())
