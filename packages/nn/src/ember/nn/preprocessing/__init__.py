"""``keras.preprocessing`` under its Keras 3 name: ``nn.preprocessing.image`` and
``nn.preprocessing.sequence`` hold the helpers ``nn.utils`` also holds (Keras 3 keeps both
names; the preprocessing *layers* are in ``nn.layers``), and ``image_dataset_from_directory``
/ ``text_dataset_from_directory`` (``keras.preprocessing``'s names for ``nn.utils``'s).

Examples:
    >>> from ember import nn
    >>> nn.preprocessing.sequence.pad_sequences([[1], [2, 3]]).tolist()
    [[0, 1], [2, 3]]
"""

from ..utils import image_dataset_from_directory, text_dataset_from_directory, timeseries_dataset_from_array
from . import image, sequence

__all__ = ["image", "image_dataset_from_directory", "sequence", "text_dataset_from_directory",
           "timeseries_dataset_from_array"]
