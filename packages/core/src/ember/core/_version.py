"""ember-core's version (``ember.core.__version__``), kept in step with its pyproject.toml by
``tools/bump_version.py``."""

__version__ = "0.1.0"
