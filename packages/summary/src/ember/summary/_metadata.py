"""``SummaryMetadata`` naming the TensorBoard plugin that shows each summary kind."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ._proto import (
    AudioPluginData,
    HistogramPluginData,
    ImagePluginData,
    ScalarPluginData,
    SummaryMetadata,
    TextPluginData,
)

# plugin name -> its plugin-data content, serialized once (version 0 of each format).
_CONTENT = {
    "scalars": ScalarPluginData(version=0).SerializeToString(),
    "histograms": HistogramPluginData(version=0).SerializeToString(),
    "images": ImagePluginData(version=0).SerializeToString(),
    "text": TextPluginData(version=0).SerializeToString(),
    "audio": AudioPluginData(version=0, encoding=AudioPluginData.WAV).SerializeToString(),
}


@functools.lru_cache(maxsize=256)
def plugin_metadata(plugin: str, description: str | None) -> SummaryMetadata:
    """The metadata TensorBoard's ``plugin`` dashboard looks for (shared; do not mutate)."""
    metadata = SummaryMetadata(summary_description=description or "")
    metadata.plugin_data.plugin_name = plugin
    metadata.plugin_data.content = _CONTENT[plugin]
    return metadata


class Kind:
    """One summary kind as the writer thread sees it: how to fill a value, which plugin."""

    __slots__ = ("encode", "plugin")

    def __init__(self, plugin: str, encode: Callable[[Any, Any], None]) -> None:
        self.plugin = plugin
        self.encode = encode

    def metadata(self, description: str | None) -> SummaryMetadata:
        return plugin_metadata(self.plugin, description)
