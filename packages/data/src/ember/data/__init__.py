"""ember.data: Deterministic, resumable input pipelines and dataset readers for numpy arrays."""

__all__: list[str] = []
