"""ember.nn: Layers, models, losses, optimizers and metrics for ember."""

__all__: list[str] = []
