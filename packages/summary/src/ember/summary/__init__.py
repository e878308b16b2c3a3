"""ember.summary: TensorBoard summaries written by a background thread, never lost.

Examples:
    >>> import tempfile
    >>> from ember import summary
    >>> writer = summary.create_file_writer(tempfile.mkdtemp())
    >>> with writer.as_default(), summary.record_summaries_every_n_global_steps(2):
    ...     for step in range(4):
    ...         summary.set_step(step)
    ...         _ = summary.scalar("loss", 1.0 / (step + 1))
    >>> writer.close()
    >>> [e.step for e in summary.read_events(writer.path) if e.HasField("summary")]
    [0, 2]
"""

from ._histogram import buckets as histogram_buckets
from ._ops import audio, histogram, image, scalar, text
from ._policy import (
    always_record_summaries,
    never_record_summaries,
    record_if,
    record_summaries_every_n_global_steps,
    should_record_summaries,
)
from ._reader import read_events
from ._record import RecordError
from ._step import default_step, get_step, set_default_step_source, set_step
from ._version import __version__ as __version__  # tf.__version__, keras.__version__
from ._weights import weight_histograms
from ._writer import NoopWriter, SummaryWriter, SummaryWriterError, create_file_writer, flush

__all__ = [
    "NoopWriter",
    "RecordError",
    "SummaryWriter",
    "SummaryWriterError",
    "always_record_summaries",
    "audio",
    "create_file_writer",
    "default_step",
    "flush",
    "get_step",
    "histogram",
    "histogram_buckets",
    "image",
    "never_record_summaries",
    "read_events",
    "record_if",
    "record_summaries_every_n_global_steps",
    "scalar",
    "set_default_step_source",
    "set_step",
    "should_record_summaries",
    "text",
    "weight_histograms",
]
