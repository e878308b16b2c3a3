"""ember-graph's version (``ember.graph.__version__``), kept in step with its pyproject.toml by
``tools/bump_version.py``."""

__version__ = "0.1.0"
