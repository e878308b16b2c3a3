"""ember's trimmed protos are wire-compatible with TensorBoard's own."""

from __future__ import annotations

import pytest

from ember.summary import _proto


def _fields(descriptor):
    return {f.name: (f.number, f.type) for f in descriptor.fields}


def _check(ours, theirs, path):
    for name, (number, kind) in _fields(ours).items():
        assert name in _fields(theirs), f"{path}.{name} is not in TensorBoard's proto"
        assert (number, kind) == _fields(theirs)[name], f"{path}.{name} differs"
    for nested in ours.nested_types:
        _check(nested, theirs.nested_types_by_name[nested.name], f"{path}.{nested.name}")
    for enum in ours.enum_types:
        theirs_enum = theirs.enum_types_by_name[enum.name]
        for v in enum.values:
            assert theirs_enum.values_by_name[v.name].number == v.number


@pytest.mark.parametrize("name, module, theirs", [
    ("Event", "tensorboard.compat.proto.event_pb2", "Event"),
    ("SourceMetadata", "tensorboard.compat.proto.event_pb2", "SourceMetadata"),
    ("Summary", "tensorboard.compat.proto.summary_pb2", "Summary"),
    ("SummaryMetadata", "tensorboard.compat.proto.summary_pb2", "SummaryMetadata"),
    ("TensorProto", "tensorboard.compat.proto.tensor_pb2", "TensorProto"),
    ("TensorShapeProto", "tensorboard.compat.proto.tensor_shape_pb2", "TensorShapeProto"),
    ("ScalarPluginData", "tensorboard.plugins.scalar.plugin_data_pb2", "ScalarPluginData"),
    ("HistogramPluginData", "tensorboard.plugins.histogram.plugin_data_pb2",
     "HistogramPluginData"),
    ("ImagePluginData", "tensorboard.plugins.image.plugin_data_pb2", "ImagePluginData"),
    ("TextPluginData", "tensorboard.plugins.text.plugin_data_pb2", "TextPluginData"),
    ("AudioPluginData", "tensorboard.plugins.audio.plugin_data_pb2", "AudioPluginData"),
])
def test_every_field_has_tensorboards_number_and_type(name, module, theirs):
    mod = pytest.importorskip(module)
    _check(getattr(_proto, name).DESCRIPTOR, getattr(mod, theirs).DESCRIPTOR, name)


def test_data_types_match():
    types_pb2 = pytest.importorskip("tensorboard.compat.proto.types_pb2")
    for v in _proto.DataType.DESCRIPTOR.values:
        assert types_pb2.DataType.Value(v.name) == v.number


def test_no_descriptor_clash_with_tensorboard_in_one_process():
    pytest.importorskip("tensorboard")
    from tensorboard.compat.proto import event_pb2

    assert event_pb2.Event.DESCRIPTOR.full_name == "tensorboard.Event"
    assert _proto.Event.DESCRIPTOR.full_name == "ember_summary.Event"
