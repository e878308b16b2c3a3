"""``keras.preprocessing.sequence``: ``pad_sequences`` under its older name, and tf.keras's
``skipgrams`` and ``make_sampling_table`` (TensorFlow's word2vec tutorial)."""

from ..utils import pad_sequences
from ._skipgrams import make_sampling_table, skipgrams

__all__ = ["make_sampling_table", "pad_sequences", "skipgrams"]
