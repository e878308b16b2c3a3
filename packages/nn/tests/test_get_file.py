"""nn.utils.get_file (Keras's): download into the cache (here from file:// URLs), reuse,
hash checks that keep nothing bad, and extraction that refuses members outside its
directory."""

import hashlib
import io
import os
import tarfile
import zipfile

import pytest

from ember import nn


def _url(path):
    return "file://" + os.path.abspath(path)


def test_a_file_is_downloaded_once_and_reused(tmp_path):
    src = tmp_path / "data.csv"
    src.write_text("a,b\n1,2\n")
    cache = tmp_path / "cache"
    got = nn.utils.get_file("data.csv", _url(src), cache_dir=str(cache))
    assert got == str(cache / "datasets" / "data.csv") and open(got).read() == "a,b\n1,2\n"
    src.write_text("changed")
    assert open(nn.utils.get_file("data.csv", _url(src), cache_dir=str(cache))).read() \
        == "a,b\n1,2\n"  # the cache's copy
    assert open(nn.utils.get_file("data.csv", _url(src), cache_dir=str(cache),
                                  force_download=True)).read() == "changed"
    # no name: the URL's last part
    assert nn.utils.get_file(origin=_url(src), cache_dir=str(cache)).endswith("data.csv")


def test_a_hash_mismatch_keeps_nothing_and_names_the_hashes(tmp_path):
    src = tmp_path / "w.bin"
    src.write_bytes(b"weights")
    good = hashlib.sha256(b"weights").hexdigest()
    cache = tmp_path / "cache"
    with pytest.raises(ValueError, match="has hash .* not 0{64}.*nothing was kept"):
        nn.utils.get_file("w.bin", _url(src), file_hash="0" * 64, cache_dir=str(cache))
    assert os.listdir(cache / "datasets") == []
    path = nn.utils.get_file("w.bin", _url(src), file_hash=good, cache_dir=str(cache))
    assert open(path, "rb").read() == b"weights"
    md5 = hashlib.md5(b"weights").hexdigest()
    assert nn.utils.get_file("w.bin", _url(src), md5_hash=md5, cache_dir=str(cache)) == path


def test_archives_are_extracted_into_a_directory(tmp_path):
    zpath, tpath = tmp_path / "pets.zip", tmp_path / "flowers.tgz"
    with zipfile.ZipFile(zpath, "w") as z:
        z.writestr("images/a.txt", "A")
    with tarfile.open(tpath, "w:gz") as t:
        data = b"rose"
        info = tarfile.TarInfo("flowers/roses/1.txt")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    cache = str(tmp_path / "cache")
    out = nn.utils.get_file("pets.zip", _url(zpath), extract=True, cache_dir=cache)
    assert out.endswith("pets_extracted") and open(os.path.join(out, "images/a.txt")).read() \
        == "A"
    out = nn.utils.get_file("flower_photos", _url(tpath), untar=True, cache_dir=cache)
    assert open(os.path.join(out, "flowers/roses/1.txt")).read() == "rose"


def test_a_member_outside_the_directory_is_refused_and_nothing_is_written(tmp_path):
    zpath = tmp_path / "evil.zip"
    with zipfile.ZipFile(zpath, "w") as z:
        z.writestr("ok.txt", "fine")
        z.writestr("../escaped.txt", "bad")
    cache = tmp_path / "cache"
    with pytest.raises(ValueError, match=r"'../escaped.txt'.*outside the extraction"):
        nn.utils.get_file("evil.zip", _url(zpath), extract=True, cache_dir=str(cache))
    assert not (cache / "datasets" / "escaped.txt").exists()
    assert sorted(os.listdir(cache / "datasets")) == ["evil.zip"]  # no partial extraction


@pytest.mark.parametrize("kwargs, error, match", [
    ({}, ValueError, "give origin"),
    ({"fname": "a/b.txt", "origin": "file:///x"}, ValueError, "is a path"),
    ({"origin": "file:///no/such/file.txt"}, OSError, "fetching file:///no/such/file.txt"),
    ({"origin": "file:///x", "hash_algorithm": "sha1"}, ValueError, "hash_algorithm"),
])
def test_bad_arguments_are_named(tmp_path, kwargs, error, match):
    with pytest.raises(error, match=match):
        nn.utils.get_file(cache_dir=str(tmp_path), **kwargs)
