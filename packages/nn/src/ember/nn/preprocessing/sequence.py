"""``keras.preprocessing.sequence``: ``pad_sequences`` under its older name."""

from ..utils import pad_sequences

__all__ = ["pad_sequences"]
