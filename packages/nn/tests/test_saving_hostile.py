"""Hostile and damaged files: a file never runs code, never writes outside its target, never
makes ember allocate what the file does not hold, and every fault is a ValueError that
names the file and what is wrong.

Covers truncated and bit-flipped ``.keras``, ``.weights.h5`` and ``.safetensors`` files,
zip members named ``../x`` (and other unsafe names), duplicate members, decompression
bombs, huge and deeply nested configs, a class named ``os.system`` (and code in any
form: ``__lambda__``, builtins' ``eval``), configs asking for enormous variables or
inputs, and HDF5 files with links, external or compressed data, wrong types or a
superblock that does not match the bytes.
"""

import io
import json
import os
import re
import tracemalloc
import zipfile
import zlib

import numpy as np
import pytest

import ember.core as em
from ember import nn

ONLY_BACKENDS = ["cpu"]  # files, not devices: the device double adds nothing here
L = nn.layers


def _model():
    em.random.set_seed(0)
    model = nn.Sequential([L.Dense(3, activation="relu", input_shape=(4,)), L.Dense(2)])
    model.compile("adam", "mse")
    model.fit(np.ones((4, 4), np.float32), np.ones((4, 2), np.float32), verbose=0)
    return model


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """A valid .keras file's bytes, its parts, and the model it holds."""
    path = tmp_path_factory.mktemp("good") / "m.keras"
    model = _model()
    model.save(path)
    data = path.read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        parts = {n: zf.read(n) for n in zf.namelist()}
    return data, parts, model.get_weights(), model.get_config()


def _zip(path, members, compression=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression=compression) as zf:
        for name, data in members:
            zf.writestr(zipfile.ZipInfo(name), data, compress_type=compression)
    return path


def _refused(path, match, load=nn.models.load_model, **kw):
    """``load(path)`` raises a ValueError naming the file and matching ``match``, writes
    nothing next to it and creates nothing in the working directory."""
    before = sorted(os.listdir(os.path.dirname(path)))
    cwd = sorted(os.listdir("."))
    with pytest.raises(ValueError, match=match) as info:
        load(path, **kw)
    assert str(path) in str(info.value), str(info.value)
    assert sorted(os.listdir(os.path.dirname(path))) == before
    assert sorted(os.listdir(".")) == cwd
    return str(info.value)


def _members(parts, **replace):
    out = dict(parts)
    out.update(replace)
    return list(out.items())


# --- the archive ---------------------------------------------------------------------

def test_truncated_archives_are_refused(good, tmp_path):
    data = good[0]
    for n in sorted({0, 1, 21, 100, len(data) // 3, len(data) // 2, len(data) - 100,
                     len(data) - 22, len(data) - 1}):
        path = tmp_path / f"t{n}.keras"
        path.write_bytes(data[:n])
        message = _refused(path, r"not a \.keras archive|truncated|damaged|no config\.json|"
                                 r"past the end")
        assert path.name in message and "Traceback" not in message


def test_bit_flips_anywhere_are_found_or_change_nothing(good, tmp_path):
    """Flip one bit at 300 places spread over the file: each load either refuses the file
    by name (zip CRCs cover every member) or gives exactly the saved model (the flip hit a
    field nothing reads, such as a timestamp)."""
    data, _, weights, config = good
    path = tmp_path / "f.keras"
    refused = 0
    for pos in np.linspace(0, len(data) - 1, 300).astype(int):
        flipped = bytearray(data)
        flipped[pos] ^= 1 << (pos % 8)
        path.write_bytes(bytes(flipped))
        try:
            model = nn.models.load_model(path)
        except ValueError as e:
            assert str(path) in str(e)
            refused += 1
            continue
        assert model.get_config() == config
        for u, v in zip(model.get_weights(), weights):
            np.testing.assert_array_equal(u, v)
    assert refused > 250  # almost every byte matters


def test_every_bit_of_the_zip_headers_is_checked(good, tmp_path):
    """Every byte of the first local header and of the central directory, flipped: zipfile
    raises many kinds of errors on damaged headers (a NotImplementedError for a flipped
    version field); each must come back as the ValueError naming the file."""
    data, _, weights, _ = good
    path = tmp_path / "h.keras"
    for pos in [*range(0, 120), *range(len(data) - 360, len(data))]:
        flipped = bytearray(data)
        flipped[pos] ^= 1 << (pos % 8)
        path.write_bytes(bytes(flipped))
        try:
            model = nn.models.load_model(path)
        except ValueError as e:
            assert str(path) in str(e)
            continue
        for u, v in zip(model.get_weights(), weights):
            np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("name", ["../x", "../../x", "/tmp/x", "a/../../x", "..\\x",
                                  "C:/x"])
def test_unsafe_member_names_are_refused_and_nothing_is_written(good, tmp_path, name):
    sub = tmp_path / "inner"
    sub.mkdir()
    path = _zip(sub / "m.keras", _members(good[1]) + [(name, b"owned")])
    outside = "/tmp/x"  # (a shared /tmp may hold one already: compare with before)
    before = os.stat(outside).st_mtime_ns if os.path.exists(outside) else None
    message = _refused(path, "unsafe path")
    assert not (tmp_path / "x").exists()
    assert (os.stat(outside).st_mtime_ns if os.path.exists(outside) else None) == before
    assert "nothing is extracted" in message


def test_unexpected_and_duplicate_members_are_refused(good, tmp_path):
    _refused(_zip(tmp_path / "a.keras", _members(good[1]) + [("evil.py", b"import os")]),
             "unexpected archive member 'evil.py'")
    _refused(_zip(tmp_path / "b.keras", _members(good[1]) + [("assets/vocab.txt", b"a")]),
             "assets are not read")
    with pytest.warns(UserWarning, match="Duplicate name"):
        path = _zip(tmp_path / "c.keras",
                    _members(good[1]) + [("config.json", b'{"class_name": "x"}')])
    _refused(path, r"holds \['config.json'\] more than once")
    parts = dict(good[1])
    del parts["config.json"]
    _refused(_zip(tmp_path / "d.keras", list(parts.items())), "has no config.json")


def test_a_huge_config_is_refused_before_it_is_read(good, tmp_path):
    huge = b"{" + b" " * (40 << 20) + b"}"  # 40 MiB that deflate keeps in 40 KiB
    path = _zip(tmp_path / "h.keras", _members(good[1], **{"config.json": huge}),
                zipfile.ZIP_DEFLATED)
    assert path.stat().st_size < 1 << 20
    tracemalloc.start()
    try:
        _refused(path, r"config\.json declares \d+ bytes, over its limit")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20


def test_a_decompression_bomb_is_refused_before_it_is_inflated(good, tmp_path):
    bomb = bytes(64 << 20)  # 64 MiB of zeros as the weights: about 64 KiB deflated
    path = _zip(tmp_path / "z.keras", _members(good[1], **{"model.weights.h5": bomb}),
                zipfile.ZIP_DEFLATED)
    tracemalloc.start()
    try:
        _refused(path, r"model\.weights\.h5 declares \d+ bytes, over its limit")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20


def test_a_deeply_nested_config_is_refused(good, tmp_path):
    deep = b'{"a": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    unparsed = _refused(_zip(tmp_path / "d.keras",
                             _members(good[1], **{"config.json": deep})), "nested too deeply")
    assert "config.json" in unparsed
    value = {"k": 1}
    for _ in range(400):  # parseable JSON, past the depth ember builds objects from
        value = {"k": value}
    config = json.loads(good[1]["config.json"])
    config["config"]["layers"][1]["config"]["kernel_initializer"] = value
    built = _refused(_zip(tmp_path / "e.keras",
                          _members(good[1], **{"config.json": json.dumps(config).encode()})),
                     "nested more than 200 levels")
    assert "e.keras" in built and "d.keras" in unparsed


@pytest.mark.parametrize("raw", [b"\xff\xfe{}", b"[1, 2]", b"{not json", b"NaN"])
def test_config_that_is_not_a_json_object_is_refused(good, tmp_path, raw):
    message = _refused(_zip(tmp_path / "j.keras", _members(good[1], **{"config.json": raw})),
                       r"config\.json (is not|must hold)")
    assert "j.keras" in message


# --- names that would run code -----------------------------------------------------------

def _with_layer(good, tmp_path, layer, name="x.keras"):
    config = json.loads(good[1]["config.json"])
    config["config"]["layers"].append(layer)
    return _zip(tmp_path / name, _members(good[1], **{
        "config.json": json.dumps(config).encode()}))


@pytest.mark.parametrize("entry", [
    {"module": "os", "class_name": "system", "config": {"command": "touch owned"}},
    {"module": None, "class_name": "os.system", "config": {}},
    {"module": "subprocess", "class_name": "Popen", "config": {"args": ["touch", "owned"]}},
    {"module": "keras.layers", "class_name": "Dense", "registered_name": "os>system",
     "config": {"units": 2}},
    {"module": "keras.layers", "class_name": "em", "config": {}},
    {"module": "keras.layers", "class_name": "_tracking", "config": {}},
    {"module": "ember.nn.layers.base", "class_name": "contextlib", "config": {}},
], ids=["os.system", "dotted", "Popen", "registered", "module-attr", "private", "import"])
def test_a_class_outside_embers_table_is_refused(good, tmp_path, entry):
    message = _refused(_with_layer(good, tmp_path, entry), "unknown class")
    assert "never imports a module a file names" in message
    assert not os.path.exists("owned")


@pytest.mark.parametrize("function", [
    {"module": "builtins", "class_name": "function", "config": "eval",
     "registered_name": "eval"},
    {"module": "os", "class_name": "function", "config": "system",
     "registered_name": "system"},
    {"class_name": "__lambda__", "config": {"code": "4wAAAA==", "defaults": None,
                                            "closure": None}},
])
def test_code_in_a_config_never_runs(good, tmp_path, function):
    layer = {"module": "keras.layers", "class_name": "Lambda",
             "config": {"function": function, "name": "evil"}}
    path = _with_layer(good, tmp_path, layer)
    for safe_mode in (True, False):  # safe_mode=False loads no code either
        message = _refused(path, "unknown function|holds Python code", safe_mode=safe_mode)
        assert "evil" in message or "Lambda" in message, message
    assert not os.path.exists("owned") and not (tmp_path / "owned").exists()


# --- configs that ask for too much -------------------------------------------------------

def test_a_config_asking_for_enormous_variables_is_refused_before_allocating(good, tmp_path):
    config = json.loads(good[1]["config.json"])
    config["config"]["layers"][2]["config"]["units"] = 10 ** 9  # 12 GB of kernel
    path = _zip(tmp_path / "big.keras", _members(good[1], **{
        "config.json": json.dumps(config).encode()}))
    tracemalloc.start()
    try:
        _refused(path, "larger than the weights file being loaded holds")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20


@pytest.mark.parametrize("shape", [[None, 10 ** 6, 10 ** 6], [None, -1], [None, "4"],
                                   "4", [None, 1.5]])
def test_a_config_asking_for_enormous_or_malformed_inputs_is_refused(good, tmp_path, shape):
    config = json.loads(good[1]["config.json"])
    config["config"]["layers"][0]["config"]["batch_shape"] = shape
    path = _zip(tmp_path / "in.keras", _members(good[1], **{
        "config.json": json.dumps(config).encode()}))
    why = "values per example|a shape must be a list of ints"
    assert re.search(why, _refused(path, why))


def test_a_functional_config_with_a_loop_or_a_missing_layer_is_refused(tmp_path):
    inp = nn.Input((3,), name="i")
    model = nn.Model(inp, L.Dense(2, name="b")(L.Dense(3, name="a")(inp)))
    model.save(tmp_path / "f.keras")
    with zipfile.ZipFile(tmp_path / "f.keras") as zf:
        parts = {n: zf.read(n) for n in zf.namelist()}
    config = json.loads(parts["config.json"])
    layer_a = next(e for e in config["config"]["layers"] if e["name"] == "a")
    layer_a["inbound_nodes"][0]["args"][0]["config"]["keras_history"] = ["b", 0, 0]
    looped = _zip(tmp_path / "loop.keras", list({**parts, "config.json": json.dumps(
        config).encode()}.items()))
    assert re.search("never made", _refused(looped, "never made"))
    layer_a["inbound_nodes"][0]["args"][0]["config"]["keras_history"] = ["ghost", 0, 0]
    ghost = _zip(tmp_path / "ghost.keras", list({**parts, "config.json": json.dumps(
        config).encode()}.items()))
    assert re.search("unknown layer 'ghost'", _refused(ghost, "unknown layer 'ghost'"))


def test_malformed_random_state_is_refused(good, tmp_path):
    meta = json.loads(good[1]["metadata.json"])
    meta["ember"]["random"]["global"]["counter"] = 2 ** 200
    path = _zip(tmp_path / "r.keras", _members(good[1], **{
        "metadata.json": json.dumps(meta).encode()}))
    assert re.search("random state", _refused(path, "random state"))


def test_a_random_state_saved_before_philox_is_refused_by_name(good, tmp_path):
    meta = json.loads(good[1]["metadata.json"])
    meta["ember"]["random"]["global"] = {  # what ember wrote before its generator changed
        "bit_generator": "PCG64", "state": {"state": 2 ** 100, "inc": 3},
        "has_uint32": 0, "uinteger": 0}
    path = _zip(tmp_path / "r.keras", _members(good[1], **{
        "metadata.json": json.dumps(meta).encode()}))
    assert re.search("PCG64", _refused(path, "PCG64"))


# --- HDF5 --------------------------------------------------------------------------------

def _h5(build):
    import h5py

    buf = io.BytesIO()
    with h5py.File(buf, "w") as f:
        build(f)
    return buf.getvalue()


def _weights_like_model(f, kernel=None, **overrides):
    """The good model's weights layout with one dataset replaced."""
    f.create_group("vars")
    shapes = {"layers/dense/vars": [(4, 3), (3,)], "layers/dense_1/vars": [(3, 2), (2,)]}
    for group, arrays in shapes.items():
        g = f.create_group(group)
        for i, shape in enumerate(arrays):
            key = f"{group}/{i}"
            if key in overrides:
                overrides[key](g, str(i))
            else:
                g[str(i)] = np.zeros(shape, np.float32)


@pytest.mark.parametrize("case", ["soft", "external", "gzip", "strings", "compound",
                                  "shape", "empty"])
def test_hdf5_with_links_filters_or_wrong_types_is_refused(good, tmp_path, case):
    import h5py

    def soft(g, k):
        g[k] = h5py.SoftLink("/vars")

    def external(g, k):
        g[k] = h5py.ExternalLink("/etc/passwd", "/x")

    def gzip(g, k):
        g.create_dataset(k, data=np.zeros((4, 3), np.float32), compression="gzip")

    def strings(g, k):
        g[k] = np.array([b"abc"] * 12).reshape(4, 3)

    def compound(g, k):
        g[k] = np.zeros((4, 3), dtype=[("a", np.float32), ("b", np.float32)])

    def shape(g, k):
        g.create_dataset(k, shape=(10 ** 6, 10 ** 6), dtype=np.float32, chunks=(1, 1))

    def empty(g, k):
        g.create_dataset(k, shape=(4, 3), dtype=np.float32)  # declared, never written

    build = {"soft": soft, "external": external, "gzip": gzip, "strings": strings,
             "compound": compound, "shape": shape, "empty": empty}[case]
    data = _h5(lambda f: _weights_like_model(f, **{"layers/dense/vars/0": build}))
    want = {"soft": "SoftLink", "external": "ExternalLink", "gzip": "compressed or filtered",
            "strings": "not numbers", "compound": "not numbers", "shape": "has shape",
            "empty": "declares 48 bytes but stores 0"}[case]
    model = nn.Sequential([L.Dense(3, input_shape=(4,)), L.Dense(2)])
    path = tmp_path / "w.weights.h5"
    path.write_bytes(data)
    assert re.search(want, _refused(path, want, load=model.load_weights))
    keras = _zip(tmp_path / "w.keras", _members(good[1], **{"model.weights.h5": data}))
    assert re.search(want, _refused(keras, want))


def test_hdf5_container_checks_come_before_libhdf5(good, tmp_path):
    data = good[1]["model.weights.h5"]
    model = nn.Sequential([L.Dense(3, input_shape=(4,)), L.Dense(2)])
    path = tmp_path / "w.weights.h5"
    cases = {
        "not HDF5": (b"PK\x03\x04" + data[4:], "no HDF5 signature"),
        "truncated": (data[:-1], "truncated"),
        "padded": (data + b"\0" * 64, "followed by other bytes"),
        "checksum": (data[:30] + bytes([data[30] ^ 1]) + data[31:],
                     "checksum does not match|says it ends"),
        "version": (data[:8] + b"\x07" + data[9:], "superblock version 7"),
        "offsets": (data[:9] + b"\x04" + data[10:], "4-byte offsets|checksum"),
        "tiny": (data[:40], "no HDF5 signature"),
    }
    for name, (bad, match) in cases.items():
        path.write_bytes(bad)
        assert re.search(match, _refused(path, match, load=model.load_weights))
        archive = _zip(tmp_path / f"{name.replace(' ', '_')}.keras",
                       _members(good[1], **{"model.weights.h5": bad}))
        assert re.search(match, _refused(archive, match))


def test_standalone_weights_files_damaged_anywhere_are_refused_or_unchanged(tmp_path):
    """A .weights.h5 has no zip CRC: ember's per-dataset CRC-32 and the superblock checks
    find a flipped bit in the data; a flip elsewhere is refused by libhdf5's own checks or
    changes nothing that is read."""
    model = _model()
    good_path = tmp_path / "good.weights.h5"
    model.save_weights(good_path)
    data = good_path.read_bytes()
    path = tmp_path / "w.weights.h5"
    target = nn.Sequential([L.Dense(3, activation="relu", input_shape=(4,)), L.Dense(2)])
    target.compile("adam", "mse")
    refused = 0
    for pos in np.linspace(0, len(data) - 1, 300).astype(int):
        flipped = bytearray(data)
        flipped[pos] ^= 1 << (pos % 8)
        path.write_bytes(bytes(flipped))
        try:
            target.load_weights(path)
        except ValueError as e:
            assert str(path) in str(e)
            refused += 1
            continue
        for u, v in zip(target.get_weights(), model.get_weights()):
            np.testing.assert_array_equal(u, v)
    assert refused > 30
    for n in (0, 8, 47, 100, len(data) // 2, len(data) - 1):
        path.write_bytes(data[:n])
        _refused(path, "HDF5|truncated", load=target.load_weights)


# --- safetensors -------------------------------------------------------------------------

def test_damaged_safetensors_are_refused(tmp_path):
    model = _model()
    model.save_weights(tmp_path / "good.safetensors")
    data = (tmp_path / "good.safetensors").read_bytes()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    target = nn.Sequential([L.Dense(3, activation="relu", input_shape=(4,)), L.Dense(2)])
    path = tmp_path / "w.safetensors"

    def with_header(h, rest=None):
        text = json.dumps(h).encode()
        return len(text).to_bytes(8, "little") + text + (data[8 + n:] if rest is None
                                                          else rest)

    first = next(k for k in header if k != "__metadata__")
    overlap = json.loads(json.dumps(header))
    overlap[first]["data_offsets"] = [0, overlap[first]["data_offsets"][1]]
    second = [k for k in header if k != "__metadata__"][1]
    overlap[second]["data_offsets"] = [0, overlap[second]["data_offsets"][1] -
                                       overlap[second]["data_offsets"][0]]
    cases = {
        "huge header": ((10 ** 15).to_bytes(8, "little") + data[8:], "header claims"),
        "truncated": (data[:-3], "truncated|lies outside"),
        "padded": (data + b"\0" * 8, "other bytes follow"),
        "not json": (data[:8] + b"{" * n + data[8 + n:], "not valid JSON"),
        "dtype": (with_header({**header, first: {**header[first], "dtype": "OBJ"}}),
                  "unknown dtype"),
        "shape": (with_header({**header, first: {**header[first], "shape": [10 ** 9]}}),
                  "needs 4000000000 bytes"),
        "outside": (with_header({**header, first: {**header[first],
                                                   "data_offsets": [0, 10 ** 12]}}),
                    "lies outside"),
        "overlap": (with_header(overlap), "overlap or leave a hole"),
        "crc": (data[:8 + n] + bytes([data[8 + n] ^ 1]) + data[9 + n:], "CRC-32"),
        "names": (with_header({"__metadata__": {}, "../../x": header[first]},
                              data[8 + n:][header[first]["data_offsets"][0]:
                                           header[first]["data_offsets"][1]]),
                  "not named as a weight"),
    }
    before = [w.copy() for w in target.get_weights()]
    for name, (bad, match) in cases.items():
        path.write_bytes(bad)
        message = _refused(path, match, load=target.load_weights)
        assert str(path) in message, (name, message)
        # a refused restore changes nothing: every weight keeps its value
        for w, b in zip(target.get_weights(), before):
            np.testing.assert_array_equal(w, b, err_msg=name)


def test_crc_checks_are_real(tmp_path):
    """The CRC attribute is what finds a flipped weight: the same flip with the attribute
    removed loads the changed value (so the check above is not vacuous)."""
    import h5py

    model = nn.Sequential([L.Dense(3, input_shape=(4,))])
    model.save_weights(tmp_path / "w.weights.h5")
    with h5py.File(tmp_path / "w.weights.h5", "r+") as f:
        ds = f["layers/dense/vars/0"]
        ds[0, 0] = ds[0, 0] + 1.0
    with pytest.raises(ValueError, match="CRC-32"):
        model.load_weights(tmp_path / "w.weights.h5")
    with h5py.File(tmp_path / "w.weights.h5", "r+") as f:
        del f["layers/dense/vars/0"].attrs["ember_crc32"]
    before = model.layers[0].kernel.numpy()
    model.load_weights(tmp_path / "w.weights.h5")
    assert model.layers[0].kernel.numpy()[0, 0] == before[0, 0] + 1.0
    assert zlib.crc32(b"") == 0


@pytest.mark.parametrize("units", [-1, 0.5, 1e308, 10 ** 400, "three", None, [3], {"a": 1},
                                   True])
def test_hostile_argument_values_are_refused_by_name(good, tmp_path, units):
    """Whatever a class raises for a value a file gives it (a TypeError, an overflow, a
    shape error while building) comes back as a ValueError naming the file and where in
    the config."""
    config = json.loads(good[1]["config.json"])
    config["config"]["layers"][1]["config"]["units"] = units
    path = _zip(tmp_path / "u.keras", _members(good[1], **{
        "config.json": json.dumps(config).encode()}))
    _refused(path, r"config\.json.*(could not build|larger than)|model\.weights\.h5")
