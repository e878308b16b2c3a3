"""``image_dataset_from_directory`` and ``text_dataset_from_directory``: Keras 3's
``keras.utils`` functions, as ``ember.data`` datasets.

A directory with one subdirectory per class (``labels="inferred"``) gives a dataset of
``(input, label)`` batches, in Keras's order: the classes are the sorted subdirectory
names, the files of each class are listed walking its tree in sorted order, and the
whole list is shuffled by ``np.random.RandomState(seed)`` (so the same seed gives the
same files, and the same training/validation split, as Keras). The pipeline is Keras's:
paths and labels, a shuffle buffer of ``8 * batch_size`` (of 1024 without batches),
reading in a parallel ``map``, ``batch``, ``prefetch``.

The datasets are ember-data's (``pip install ember-data``; ember-nn does not depend on it,
ember-all installs both). Images are decoded with Pillow (``pip install Pillow``; Keras 3's
own reader without TensorFlow does the same) and resized with ``nn.ops.image.resize`` on the CPU, as
float32 arrays in ``[0, 255]``. Texts are the files' bytes (ember has no string
tensors: an element is a numpy object array of ``bytes``, as TensorFlow's ``.numpy()``
of a string tensor gives), which ``TextVectorization`` takes.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

IMAGE_FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
_LABEL_MODES = ("int", "categorical", "binary", None)


def _check_split(fn: str, validation_split: Any, subset: Any, shuffle: bool,
                 seed: Any) -> None:
    if validation_split is not None and not (isinstance(validation_split, (int, float))
                                             and 0 < validation_split < 1):
        raise ValueError(f"{fn}: validation_split must be between 0 and 1, got "
                         f"validation_split={validation_split!r}")
    if bool(validation_split) != (subset is not None):
        raise ValueError(f"{fn}: subset and validation_split go together (got "
                         f"subset={subset!r}, validation_split={validation_split!r})")
    if subset not in ("training", "validation", "both", None):
        raise ValueError(f"{fn}: subset must be 'training', 'validation', 'both' or None, "
                         f"got subset={subset!r}")
    if validation_split and shuffle and seed is None:
        raise ValueError(f"{fn}: with validation_split and shuffle=True, give a seed, so "
                         f"that the training and validation subsets do not overlap")


def _walk(directory: str, follow_links: bool, formats: tuple[str, ...]) -> list[str]:
    """The files under ``directory`` with one of ``formats``, relative to it, in
    Keras's order (the walk sorted by directory, each directory's files sorted)."""
    out = []
    for root, _, files in sorted(os.walk(directory, followlinks=follow_links),
                                 key=lambda w: w[0]):
        for name in sorted(files):
            if name.lower().endswith(formats):
                out.append(os.path.relpath(os.path.join(root, name), directory))
    return out


def index_directory(fn: str, directory: Any, labels: Any, formats: tuple[str, ...],
                    class_names: Any, shuffle: bool, seed: int, follow_links: bool,
                    verbose: bool) -> tuple[list[str], Any, list[str] | None]:
    """``(file_paths, labels, class_names)`` as Keras's ``index_directory`` lists them."""
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        raise ValueError(f"{fn}: directory {directory!r} does not exist or is not a directory")
    if labels == "inferred":
        subdirs = sorted(d for d in os.listdir(directory)  # hidden folders are no class
                         if os.path.isdir(os.path.join(directory, d)) and not d.startswith("."))
        if class_names is not None:
            if not set(class_names) <= set(subdirs):
                raise ValueError(f"{fn}: class_names={list(class_names)} must name "
                                 f"subdirectories of {directory!r}, which has {subdirs}")
            subdirs = list(class_names)
        names: list[str] | None = subdirs
        files, found = [], []
        for index, sub in enumerate(subdirs):
            for rel in _walk(os.path.join(directory, sub), follow_links, formats):
                files.append(os.path.join(sub, rel))
                found.append(index)
        label_list: Any = np.array(found, np.int32)
    else:
        if class_names is not None:
            raise ValueError(f"{fn}: class_names can be given only with labels='inferred' "
                             f"(got labels={'None' if labels is None else 'a list'})")
        files = _walk(directory, follow_links, formats)
        if labels is None:
            label_list, names = None, None
        else:
            if isinstance(labels, str) or not hasattr(labels, "__len__"):
                raise ValueError(f"{fn}: labels must be 'inferred', None, or a list of one "
                                 f"label per file, got labels={labels!r}")
            if len(labels) != len(files):
                raise ValueError(f"{fn}: {len(labels)} labels for the {len(files)} files "
                                 f"found in {directory!r}; give one label per file, in "
                                 f"the order of the sorted file paths")
            label_list = np.asarray(labels)
            names = [str(v) for v in sorted(set(label_list.tolist()))]
    if verbose:
        tail = "" if names is None else f" belonging to {len(names)} classes"
        print(f"Found {len(files)} files{tail}.")
    paths = [os.path.join(directory, f) for f in files]
    if shuffle:
        np.random.RandomState(seed).shuffle(paths)
        if label_list is not None:
            np.random.RandomState(seed).shuffle(label_list)
    return paths, label_list, names


def _split(paths: list[str], labels: Any, validation_split: Any,
           subset: str) -> tuple[list[str], Any]:
    if not validation_split:
        return paths, labels
    n = int(validation_split * len(paths))
    if subset == "training":  # (printed whatever verbose says, as Keras prints it)
        print(f"Using {len(paths) - n} files for training.")
        part = slice(None, -n) if n else slice(None)
    else:
        print(f"Using {n} files for validation.")
        part = slice(-n, None) if n else slice(0, 0)
    return paths[part], None if labels is None else labels[part]


def _labels(labels: Any, label_mode: Any, num_classes: int) -> Any:
    if label_mode == "binary":
        return labels.astype(np.float32)[:, None]
    if label_mode == "categorical":
        return np.eye(num_classes, dtype=np.float32)[labels]
    return labels.astype(np.int32) if labels.dtype.kind in "iu" else labels


def _data(fn: str) -> Any:
    """ember.data, which these functions return datasets of (ember-nn does not depend on
    it: ember-all installs both)."""
    try:
        from ember import data
    except ImportError:
        raise ImportError(f"{fn} returns an ember.data Dataset, and ember-data is not "
                          f"installed: pip install ember-data (ember-all has it)") from None
    return data


def _dataset(fn: str, paths: list[str], labels: Any, label_mode: Any, num_classes: int,
             load: Any, shuffle: bool, batch_size: Any, seed: int) -> Any:
    data = _data(fn)

    if not paths:
        raise ValueError(f"{fn}: no files found for this subset")
    path_ds = data.Dataset.from_tensor_slices(np.array(paths, dtype=object))
    if label_mode is not None:
        label_ds = data.Dataset.from_tensor_slices(_labels(labels, label_mode, num_classes))
        ds = data.Dataset.zip((path_ds, label_ds))
    else:
        ds = path_ds
    if shuffle:
        ds = ds.shuffle(8 * batch_size if batch_size is not None else 1024, seed=seed)
    if label_mode is not None:
        ds = ds.map(lambda p, y: (load(p), y), num_parallel_calls=data.AUTOTUNE)
    else:
        ds = ds.map(load, num_parallel_calls=data.AUTOTUNE)
    if batch_size is not None:
        ds = ds.batch(batch_size)
    return ds.prefetch(data.AUTOTUNE)


def _common(fn: str, directory: Any, labels: Any, label_mode: Any, class_names: Any,
            batch_size: Any, shuffle: bool, seed: Any, validation_split: Any, subset: Any,
            follow_links: bool, verbose: bool, formats: tuple[str, ...], load: Any) -> Any:
    if not (labels in ("inferred", None) or (not isinstance(labels, str)
                                              and hasattr(labels, "__len__"))):
        raise ValueError(f"{fn}: labels must be 'inferred', None or a list, got "
                         f"labels={labels!r}")
    if label_mode not in _LABEL_MODES:
        raise ValueError(f"{fn}: label_mode must be one of {_LABEL_MODES}, got "
                         f"label_mode={label_mode!r}")
    if batch_size is not None and (isinstance(batch_size, bool)
                                   or not isinstance(batch_size, int) or batch_size < 1):
        raise ValueError(f"{fn}: batch_size must be a positive int or None, got "
                         f"batch_size={batch_size!r}")
    if labels is None or label_mode is None:
        labels = label_mode = None
    _check_split(fn, validation_split, subset, shuffle, seed)
    if seed is None:
        seed = int(np.random.randint(1e6))
    paths, found, names = index_directory(fn, directory, labels, formats, class_names,
                                          shuffle, seed, follow_links, verbose)
    if label_mode == "binary" and (names is None or len(names) != 2):
        raise ValueError(f"{fn}: label_mode='binary' needs exactly 2 classes, got "
                         f"class_names={names}")
    num_classes = len(names) if names else 0

    def make(subset_name: Any, shuffled: bool) -> Any:
        p, y = _split(paths, found, validation_split, subset_name)
        ds = _dataset(fn, p, y, label_mode, num_classes, load, shuffled, batch_size, seed)
        ds.class_names, ds.file_paths = names, list(p)
        return ds

    if subset == "both":
        return [make("training", shuffle), make("validation", False)]
    return make(subset, shuffle)


def image_dataset_from_directory(directory: Any, labels: Any = "inferred",
                                 label_mode: Any = "int", class_names: Any = None,
                                 color_mode: str = "rgb", batch_size: Any = 32,
                                 image_size: Any = (256, 256), shuffle: bool = True,
                                 seed: Any = None, validation_split: Any = None,
                                 subset: Any = None, interpolation: str = "bilinear",
                                 follow_links: bool = False,
                                 crop_to_aspect_ratio: bool = False,
                                 pad_to_aspect_ratio: bool = False, data_format: Any = None,
                                 verbose: bool = True) -> Any:
    """A dataset of ``(images, labels)`` batches from image files in class subdirectories
    (``keras.utils.image_dataset_from_directory``; Keras's arguments and defaults).

    Images (``.bmp``, ``.gif``, ``.jpeg``, ``.jpg``, ``.png``) are float32 arrays of
    ``image_size`` with 1, 3 or 4 channels (``color_mode`` ``"grayscale"``, ``"rgb"``,
    ``"rgba"``), values in ``[0, 255]``; labels are int32 (``label_mode="int"``),
    one-hot float32 (``"categorical"``), float32 of shape ``(1,)`` (``"binary"``), or
    left out (None). The dataset has ``class_names`` and ``file_paths``. With
    ``subset="both"``, a list of the training and validation datasets. Needs Pillow.

    Raises:
        ValueError: an argument Keras refuses (named), a directory that does not exist,
            a subset with no files.
        ImportError: Pillow is not installed.
    """
    fn = "image_dataset_from_directory"
    channels = {"rgb": 3, "rgba": 4, "grayscale": 1}.get(color_mode)
    if channels is None:
        raise ValueError(f"{fn}: color_mode must be 'rgb', 'rgba' or 'grayscale', got "
                         f"color_mode={color_mode!r}")
    if isinstance(image_size, int):
        image_size = (image_size, image_size)
    if not (isinstance(image_size, (list, tuple)) and len(image_size) == 2
            and all(isinstance(s, int) and s > 0 for s in image_size)):
        raise ValueError(f"{fn}: image_size must be (height, width), got "
                         f"image_size={image_size!r}")
    if crop_to_aspect_ratio and pad_to_aspect_ratio:
        raise ValueError(f"{fn}: only one of crop_to_aspect_ratio and pad_to_aspect_ratio "
                         f"can be True")
    data_format = data_format or "channels_last"
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"{fn}: data_format must be 'channels_last' or 'channels_first', "
                         f"got data_format={data_format!r}")
    try:
        from PIL import Image
    except ImportError:
        raise ImportError(f"{fn} reads images with Pillow, which is not installed: "
                          f"pip install Pillow") from None
    size = (int(image_size[0]), int(image_size[1]))
    mode = {1: "L", 3: "RGB", 4: "RGBA"}[channels]

    def load(path: Any) -> np.ndarray:
        import ember.core as em

        from .. import ops

        name = path.decode() if isinstance(path, bytes) else str(path)
        with Image.open(name) as img:
            if not (channels == 1 and img.mode in ("L", "I;16", "I")) and img.mode != mode:
                img = img.convert(mode)
            x = np.asarray(img, dtype=np.float32)
        if x.ndim == 2:
            x = x[:, :, None]
        with em.device("/cpu:0"):  # as tf.data, on the host
            out = ops.image.resize(x, size, interpolation=interpolation,
                                   crop_to_aspect_ratio=crop_to_aspect_ratio,
                                   pad_to_aspect_ratio=pad_to_aspect_ratio).numpy()
        return np.ascontiguousarray(out.transpose(2, 0, 1)) \
            if data_format == "channels_first" else out

    return _common(fn, directory, labels, label_mode, class_names, batch_size, shuffle,
                   seed, validation_split, subset, follow_links, verbose, IMAGE_FORMATS,
                   load)


def text_dataset_from_directory(directory: Any, labels: Any = "inferred",
                                label_mode: Any = "int", class_names: Any = None,
                                batch_size: Any = 32, max_length: Any = None,
                                shuffle: bool = True, seed: Any = None,
                                validation_split: Any = None, subset: Any = None,
                                follow_links: bool = False, verbose: bool = True) -> Any:
    """A dataset of ``(texts, labels)`` batches from ``.txt`` files in class
    subdirectories (``keras.utils.text_dataset_from_directory``; Keras's arguments and
    defaults).

    A text is the file's bytes (its first ``max_length`` bytes when given), in a numpy
    object array: a batch is an array of ``bytes`` (ember has no string tensors; this is
    what TensorFlow's ``.numpy()`` of a string batch gives). Labels as
    ``image_dataset_from_directory``'s.

    Raises:
        ValueError: an argument Keras refuses (named), a directory that does not exist,
            a subset with no files.
    """
    fn = "text_dataset_from_directory"
    if max_length is not None and (isinstance(max_length, bool)
                                   or not isinstance(max_length, int) or max_length < 0):
        raise ValueError(f"{fn}: max_length must be a non-negative int or None, got "
                         f"max_length={max_length!r}")

    def load(path: Any) -> np.ndarray:
        name = path.decode() if isinstance(path, bytes) else str(path)
        with open(name, "rb") as f:
            text = f.read() if max_length is None else f.read(max_length)
        out = np.empty((), dtype=object)
        out[()] = text
        return out

    return _common(fn, directory, labels, label_mode, class_names, batch_size, shuffle,
                   seed, validation_split, subset, follow_links, verbose, (".txt",), load)
