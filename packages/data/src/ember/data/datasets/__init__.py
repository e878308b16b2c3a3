"""Ready-made datasets."""

from .mnist import mnist

__all__ = ["mnist"]
