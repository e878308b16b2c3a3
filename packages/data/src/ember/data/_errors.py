"""Errors raised for bad input files."""


class DataFormatError(ValueError):
    """A file is corrupted, truncated, or not in the expected format. Names the file."""
