"""ember.checkpoint: Object-graph checkpoints in safetensors files, atomic and checksummed."""

__all__: list[str] = []
