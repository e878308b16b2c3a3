"""TensorBoard's event-file protos (a trimmed, wire-compatible copy; see event.proto)."""

from .event_pb2 import (
    AudioPluginData,
    DataType,
    Event,
    HistogramPluginData,
    ImagePluginData,
    ScalarPluginData,
    SourceMetadata,
    Summary,
    SummaryMetadata,
    TensorProto,
    TensorShapeProto,
    TextPluginData,
)

__all__ = [
    "AudioPluginData",
    "DataType",
    "Event",
    "HistogramPluginData",
    "ImagePluginData",
    "ScalarPluginData",
    "SourceMetadata",
    "Summary",
    "SummaryMetadata",
    "TensorProto",
    "TensorShapeProto",
    "TextPluginData",
]
