"""ember.tape: GradientTape and gradient rules for every differentiable ember op."""

__all__: list[str] = []
