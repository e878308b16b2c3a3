"""Every kind of summary, read back by TensorBoard's own readers: tags, steps, values."""

from __future__ import annotations

import io
import wave
import zlib

import numpy as np
import pytest

from ember import summary

pytest.importorskip("tensorboard")


def decode_png(png: bytes) -> np.ndarray:
    """Decode the PNGs ember writes (8-bit, filter 0) to check the pixels exactly."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(png):
        length = int.from_bytes(png[pos:pos + 4], "big")
        kind = png[pos + 4:pos + 8]
        chunks.setdefault(kind, b"")
        chunks[kind] += png[pos + 8:pos + 8 + length]
        pos += 12 + length
    width, height = int.from_bytes(chunks[b"IHDR"][:4], "big"), int.from_bytes(
        chunks[b"IHDR"][4:8], "big")
    channels = {0: 1, 2: 3, 6: 4}[chunks[b"IHDR"][9]]
    rows = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), np.uint8)
    rows = rows.reshape(height, 1 + width * channels)
    assert (rows[:, 0] == 0).all()
    return rows[:, 1:].reshape(height, width, channels)


def test_scalars_every_tag_step_and_value(tmp_path, tb, fake_tensor):
    writer = summary.create_file_writer(tmp_path)
    values = {"loss": [0.5 / (i + 1) for i in range(20)], "train/acc": [i / 20 for i in range(20)]}
    with writer.as_default():
        for step in range(20):
            for tag, series in values.items():
                assert summary.scalar(tag, series[step], step=step)
    writer.close()
    acc = tb.accumulator(tmp_path)
    assert set(acc.Tags()["scalars"]) == set(values)
    for tag, series in values.items():
        events = acc.Scalars(tag)
        assert [e.step for e in events] == list(range(20))
        np.testing.assert_allclose([e.value for e in events], np.float32(series))


def test_scalars_show_in_the_scalars_plugin_with_description(tmp_path, tb, fake_tensor):
    writer = summary.create_file_writer(tmp_path / "run1")
    with writer.as_default():
        for step in range(5):
            summary.scalar("loss", float(step), step=step, description="the **loss**")
    writer.close()
    provider = tb.data_provider(tmp_path)
    ctx = tb.ctx()
    listing = provider.list_scalars(ctx, experiment_id="", plugin_name="scalars")
    assert listing["run1"]["loss"].description == "the **loss**"
    data = provider.read_scalars(ctx, experiment_id="", plugin_name="scalars", downsample=100)
    assert [(d.step, d.value) for d in data["run1"]["loss"]] == [(s, float(s)) for s in range(5)]


def test_scalar_values_of_every_accepted_type(tmp_path, tb, fake_tensor):
    writer = summary.create_file_writer(tmp_path)
    inputs = [1, 2.5, np.float32(3.5), np.array(4.0), np.int64(5), fake_tensor(6.0), True]
    with writer.as_default():
        for step, value in enumerate(inputs):
            summary.scalar("x", value, step=step)
    writer.close()
    got = [e.value for e in tb.accumulator(tmp_path).Scalars("x")]
    np.testing.assert_allclose(got, [1, 2.5, 3.5, 4, 5, 6, 1])


def test_non_finite_scalars_are_written(tmp_path, tb, fake_tensor):
    writer = summary.create_file_writer(tmp_path)
    with writer.as_default():
        for step, value in enumerate([np.nan, np.inf, -np.inf, 1.0]):
            summary.scalar("x", value, step=step)
    writer.close()
    got = [e.value for e in tb.accumulator(tmp_path).Scalars("x")]
    assert np.isnan(got[0]) and got[1:] == [np.inf, -np.inf, 1.0]


def test_histograms_in_the_histograms_plugin(tmp_path, tb, fake_tensor):
    rng = np.random.default_rng(0)
    data = [rng.normal(size=(10, 10)) * (s + 1) for s in range(3)]
    writer = summary.create_file_writer(tmp_path / "run")
    with writer.as_default():
        for step, d in enumerate(data):
            summary.histogram("w", fake_tensor(d), step=step, description="weights")
    writer.close()
    ctx = tb.ctx()
    provider = tb.data_provider(tmp_path)
    listing = provider.list_tensors(ctx, experiment_id="", plugin_name="histograms")
    assert listing["run"]["w"].description == "weights"
    got = provider.read_tensors(ctx, experiment_id="", plugin_name="histograms",
                                downsample=100)["run"]["w"]
    assert [d.step for d in got] == [0, 1, 2]
    for datum, d in zip(got, data):
        buckets = datum.numpy
        assert buckets.shape == (30, 3)
        assert buckets[:, 2].sum() == d.size
        np.testing.assert_allclose([buckets[0, 0], buckets[-1, 1]], [d.min(), d.max()])


def test_images_uint8_and_float_with_max_outputs(tmp_path, tb, fake_tensor):
    rng = np.random.default_rng(1)
    rgb = rng.integers(0, 256, size=(5, 4, 6, 3), dtype=np.uint8)
    gray = rng.random((2, 3, 3, 1), dtype=np.float32)
    rgba = rng.integers(0, 256, size=(1, 2, 2, 4), dtype=np.uint8)
    writer = summary.create_file_writer(tmp_path / "run")
    with writer.as_default():
        summary.image("rgb", rgb, step=7, max_outputs=2)
        summary.image("gray", fake_tensor(gray), step=8)
        summary.image("rgba", rgba, step=9)
    writer.close()
    acc = tb.accumulator(tmp_path / "run")
    proto = acc.Tensors("rgb")[0].tensor_proto
    assert acc.Tensors("rgb")[0].step == 7
    assert proto.string_val[:2] == [b"6", b"4"] and len(proto.string_val) == 4
    for i in range(2):
        np.testing.assert_array_equal(decode_png(proto.string_val[2 + i]), rgb[i])
    gray_back = decode_png(acc.Tensors("gray")[0].tensor_proto.string_val[2])
    np.testing.assert_array_equal(gray_back, (gray[0] * 255.5).astype(np.uint8))
    np.testing.assert_array_equal(
        decode_png(acc.Tensors("rgba")[0].tensor_proto.string_val[2]), rgba[0])
    ctx = tb.ctx()
    blobs = tb.data_provider(tmp_path).read_blob_sequences(
        ctx, experiment_id="", plugin_name="images", downsample=10)["run"]
    assert {tag: [d.step for d in seq] for tag, seq in blobs.items()} == {
        "rgb": [7], "gray": [8], "rgba": [9]}
    assert len(blobs["rgb"][0].values) == 4  # width, height and two images


def test_text_scalar_string_and_table(tmp_path, tb, fake_tensor):
    writer = summary.create_file_writer(tmp_path / "run")
    with writer.as_default():
        summary.text("note", "hello **world** é", step=1)
        summary.text("table", [["a", "b"], ["c", "d"]], step=2)
    writer.close()
    acc = tb.accumulator(tmp_path / "run")
    assert acc.Tensors("note")[0].tensor_proto.string_val == ["hello **world** é".encode()]
    table = acc.Tensors("table")[0].tensor_proto
    assert [d.size for d in table.tensor_shape.dim] == [2, 2]
    assert table.string_val == [b"a", b"b", b"c", b"d"]
    ctx = tb.ctx()
    listing = tb.data_provider(tmp_path).list_tensors(ctx, experiment_id="", plugin_name="text")
    assert set(listing["run"]) == {"note", "table"}


def test_audio_as_wav(tmp_path, tb, fake_tensor):
    t = np.linspace(0, 1, 800, dtype=np.float32)
    clips = np.stack([np.sin(2 * np.pi * f * t) for f in (5, 10, 20, 40)])[..., None] * 0.5
    writer = summary.create_file_writer(tmp_path / "run")
    with writer.as_default():
        summary.audio("tone", clips, sample_rate=800, step=3, max_outputs=2)
    writer.close()
    proto = tb.accumulator(tmp_path / "run").Tensors("tone")[0].tensor_proto
    assert [d.size for d in proto.tensor_shape.dim] == [2, 2]
    with wave.open(io.BytesIO(proto.string_val[0])) as w:
        assert (w.getframerate(), w.getnchannels(), w.getnframes()) == (800, 1, 800)
        pcm = np.frombuffer(w.readframes(800), "<i2")
    np.testing.assert_allclose(pcm / 32767, clips[0, :, 0], atol=1e-4)
    ctx = tb.ctx()
    blobs = tb.data_provider(tmp_path).read_blob_sequences(
        ctx, experiment_id="", plugin_name="audio", downsample=10)["run"]
    assert [d.step for d in blobs["tone"]] == [3]


def test_the_file_starts_with_a_version_event(tmp_path, tb, fake_tensor):
    writer = summary.create_file_writer(tmp_path, filename_suffix=".v2")
    writer.close()
    (path,) = tb.event_files(tmp_path)
    assert path.endswith(".v2")
    events = list(summary.read_events(path))
    assert events[0].file_version == "brain.Event:2"
    assert tb.accumulator(path).file_version == 2.0
