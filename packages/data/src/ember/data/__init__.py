"""ember.data: Deterministic, resumable input pipelines and dataset readers for numpy arrays.

Examples:
    >>> import numpy as np
    >>> from ember import data
    >>> images, labels = np.zeros((100, 784), np.float32), np.arange(100, dtype=np.int32)
    >>> ds = data.Dataset.from_tensor_slices((images, labels)).shuffle(100, seed=0).batch(32)
    >>> [b[0].shape for b in ds]
    [(32, 784), (32, 784), (32, 784), (4, 784)]
"""

from . import datasets, experimental
from ._dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset
from ._errors import DataFormatError
from ._iterator import Iterator
from ._prefetch import prefetch_to_device
from ._readers.csv import CsvDataset
from ._readers.idx import read_idx, write_idx
from ._readers.text import TextLineDataset
from ._readers.tfrecord import TFRecordDataset, TFRecordWriter
from ._seed import adopt_core_seed as _adopt_core_seed
from ._seed import get_global_seed, set_seed
from ._structure import DatasetSpec, TensorSpec
from ._version import __version__ as __version__  # tf.__version__, keras.__version__

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "CsvDataset",
    "DataFormatError",
    "Dataset",
    "DatasetSpec",
    "Iterator",
    "TFRecordDataset",
    "TFRecordWriter",
    "TensorSpec",
    "TextLineDataset",
    "datasets",
    "experimental",
    "get_global_seed",
    "prefetch_to_device",
    "read_idx",
    "set_seed",
    "write_idx",
]

_adopt_core_seed()
