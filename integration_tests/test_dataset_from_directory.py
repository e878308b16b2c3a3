"""``nn.utils.image_dataset_from_directory`` / ``text_dataset_from_directory``: Keras's
file order, split, labels and arguments, and the images and texts themselves. (Here, not
in ember-nn's tests: the datasets are ember-data's, which ember-nn does not depend on.)"""

from __future__ import annotations

import os

import numpy as np
import pytest

from ember import nn

Image = pytest.importorskip("PIL.Image")


@pytest.fixture
def tree(tmp_path):
    """Three classes of PNG images (one class nests a subfolder) and of texts."""
    rng = np.random.default_rng(0)
    pixels = {}
    for c, n in (("ant", 4), ("bee", 3), ("cow", 5)):
        os.makedirs(tmp_path / "img" / c / "deeper")
        os.makedirs(tmp_path / "txt" / c)
        for i in range(n):
            a = rng.integers(0, 256, (6, 5, 3), dtype=np.uint8)
            where = tmp_path / "img" / c / ("deeper" if i == 0 else "") / f"{i}.png"
            Image.fromarray(a).save(where)
            pixels[os.path.join(str(tmp_path / "img"), c, "deeper" if i == 0 else "", f"{i}.png")
                   .replace(os.sep + os.sep, os.sep)] = a
            (tmp_path / "txt" / c / f"{i}.txt").write_text(f"{c} says {i} " * 3)
        (tmp_path / "img" / c / "notes.md").write_text("not an image")
    for kind, name in (("img", "x.png"), ("txt", "x.txt")):  # a hidden folder is no class
        os.makedirs(tmp_path / kind / ".ipynb_checkpoints")
        if kind == "img":
            Image.fromarray(np.zeros((6, 5, 3), np.uint8)).save(
                tmp_path / kind / ".ipynb_checkpoints" / name)
        else:
            (tmp_path / kind / ".ipynb_checkpoints" / name).write_text("hidden")
    return tmp_path, pixels


def _keras_order(root, seed):
    """Keras's index_directory, written out: sorted classes, each class's tree walked in
    sorted order, then both lists shuffled by np.random.RandomState(seed)."""
    paths, labels = [], []
    for k, c in enumerate(sorted(d for d in os.listdir(root) if not d.startswith("."))):
        for dirpath, _, files in sorted(os.walk(os.path.join(root, c)), key=lambda w: w[0]):
            for f in sorted(files):
                if f.endswith((".png", ".txt")):
                    paths.append(os.path.join(dirpath, f))
                    labels.append(k)
    np.random.RandomState(seed).shuffle(paths)
    np.random.RandomState(seed).shuffle(labels)
    return paths, labels


def test_images_come_in_keras_order_split_and_values(tree):
    root, pixels = tree
    train, val = nn.utils.image_dataset_from_directory(
        root / "img", validation_split=0.25, subset="both", seed=7, image_size=(6, 5),
        batch_size=2, shuffle=True, verbose=False)
    paths, labels = _keras_order(str(root / "img"), 7)
    assert [os.path.normpath(p) for p in train.file_paths + val.file_paths] == \
        [os.path.normpath(p) for p in paths]
    assert len(val.file_paths) == int(0.25 * 12) and train.class_names == ["ant", "bee", "cow"]
    # the validation set is not shuffled: its batches follow its file_paths
    got_x = np.concatenate([x for x, _ in val])
    got_y = np.concatenate([y for _, y in val])
    assert got_x.dtype == np.float32 and got_x.shape == (3, 6, 5, 3)
    want = np.stack([pixels[os.path.normpath(p)] for p in val.file_paths]).astype(np.float32)
    np.testing.assert_array_equal(got_x, want)  # the file's size: resizing changes nothing
    assert got_y.dtype == np.int32 and got_y.tolist() == labels[-3:]
    seen = sorted(int(y) for _, ys in train for y in ys)
    assert seen == sorted(labels[:-3])


def test_label_modes_colour_modes_and_layouts(tree):
    root, _ = tree
    kw = dict(shuffle=False, image_size=(3, 4), verbose=False, batch_size=None)
    x, y = next(iter(nn.utils.image_dataset_from_directory(root / "img",
                                                           label_mode="categorical", **kw)))
    assert x.shape == (3, 4, 3) and y.tolist() == [1.0, 0.0, 0.0] and y.dtype == np.float32
    only = next(iter(nn.utils.image_dataset_from_directory(root / "img", label_mode=None, **kw)))
    assert only.shape == (3, 4, 3)
    grey = next(iter(nn.utils.image_dataset_from_directory(
        root / "img", color_mode="grayscale", label_mode=None, **kw)))
    assert grey.shape == (3, 4, 1)
    first = next(iter(nn.utils.image_dataset_from_directory(
        root / "img", data_format="channels_first", label_mode=None, **kw)))
    np.testing.assert_array_equal(first, only.transpose(2, 0, 1))
    rgba = next(iter(nn.utils.image_dataset_from_directory(
        root / "img", color_mode="rgba", label_mode=None, **kw)))
    assert rgba.shape == (3, 4, 4) and (rgba[..., 3] == 255).all()
    two = nn.utils.image_dataset_from_directory(root / "img", class_names=["cow", "ant"],
                                                label_mode="binary", **kw)
    assert two.class_names == ["cow", "ant"] and len(two.file_paths) == 9
    assert [y.tolist() for _, y in two][:5] == [[0.0]] * 5
    assert nn.preprocessing.image_dataset_from_directory is \
        nn.utils.image_dataset_from_directory


def test_what_keras_refuses_is_refused_by_name(tree):
    root, _ = tree
    f = nn.utils.image_dataset_from_directory
    with pytest.raises(ValueError, match="subset and validation_split go together"):
        f(root / "img", validation_split=0.2)
    with pytest.raises(ValueError, match="give a seed"):
        f(root / "img", validation_split=0.2, subset="training")
    with pytest.raises(ValueError, match="label_mode='binary' needs exactly 2 classes"):
        f(root / "img", label_mode="binary", verbose=False)
    with pytest.raises(ValueError, match="color_mode must be"):
        f(root / "img", color_mode="cmyk")
    with pytest.raises(ValueError, match="does not exist"):
        f(root / "nowhere")
    with pytest.raises(ValueError, match="class_names=.*must name subdirectories"):
        f(root / "img", class_names=["ant", "eel"], verbose=False)
    with pytest.raises(ValueError, match="2 labels for the 13 files"):
        f(root / "img", labels=[0, 1], verbose=False)
    with pytest.raises(ValueError, match="only one of crop_to_aspect_ratio"):
        f(root / "img", crop_to_aspect_ratio=True, pad_to_aspect_ratio=True)


def test_texts_are_the_files_bytes(tree):
    root, _ = tree
    ds = nn.utils.text_dataset_from_directory(root / "txt", batch_size=4, seed=3,
                                              max_length=9, verbose=False)
    paths, labels = _keras_order(str(root / "txt"), 3)
    assert [os.path.normpath(p) for p in ds.file_paths] == [os.path.normpath(p) for p in paths]
    texts, ys = zip(*[(t, y) for xs, yb in ds for t, y in zip(xs, yb)])
    assert all(isinstance(t, bytes) and len(t) <= 9 for t in texts)
    byfile = {os.path.normpath(p): open(p, "rb").read()[:9] for p in paths}
    assert sorted(texts) == sorted(byfile.values()) and sorted(ys) == sorted(labels)
    vectorize = nn.layers.TextVectorization(max_tokens=20, output_sequence_length=3)
    vectorize.adapt(ds.map(lambda x, y: x))
    assert "says" in vectorize.get_vocabulary()
    listed = nn.utils.text_dataset_from_directory(root / "txt", labels=list(range(13)),
                                                  shuffle=False, verbose=False)
    assert listed.class_names == [str(i) for i in range(13)]  # (a hidden folder's file too, as Keras)
