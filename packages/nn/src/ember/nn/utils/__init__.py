"""ember.nn.utils: Keras 3's everyday helpers (``keras.utils.X`` is ``nn.utils.X``).

Arrays: ``to_categorical``, ``normalize``, ``pad_sequences``; reproducibility:
``set_random_seed``; data: ``split_dataset``, ``PyDataset`` (batches made in Python);
images: ``img_to_array`` (numpy alone), ``array_to_img``, ``save_img`` and ``load_img``
(these three make or read PIL images, so they need Pillow, which ember does not install:
``pip install Pillow``); datasets from files in class folders:
``image_dataset_from_directory`` (Pillow too) and ``text_dataset_from_directory``; windows
of a series: ``timeseries_dataset_from_array`` (these three return ember-data datasets).

Examples:
    >>> from ember import nn
    >>> nn.utils.to_categorical([0, 2], num_classes=3).tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    >>> nn.utils.pad_sequences([[1], [2, 3]]).tolist()
    [[0, 1], [2, 3]]
"""

from ._from_directory import image_dataset_from_directory, text_dataset_from_directory
from ._get_file import get_file
from ._images import array_to_img, img_to_array, load_img, save_img
from ._numerical import normalize, to_categorical
from ._py_dataset import PyDataset
from ._py_dataset import PyDataset as Sequence  # Keras 3 keeps Keras 2's name
from ._seed import set_random_seed
from ._sequences import pad_sequences
from ._session import clear_session
from ._split import split_dataset
from ._timeseries import timeseries_dataset_from_array

__all__ = ["PyDataset", "Sequence", "array_to_img", "clear_session", "get_file",
           "image_dataset_from_directory", "img_to_array", "load_img", "normalize",
           "pad_sequences", "save_img", "set_random_seed", "split_dataset",
           "text_dataset_from_directory", "timeseries_dataset_from_array", "to_categorical"]
