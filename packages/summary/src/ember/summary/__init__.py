"""ember.summary: TensorBoard event-file summaries written in the background."""

__all__: list[str] = []
