"""ember.core: Tensors, dtypes, devices (numpy CPU, cupy GPU), ops, Variable and random for ember."""

__all__: list[str] = []
