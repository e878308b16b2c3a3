"""Helpers shared by the ember-data tests (conftest puts this folder on sys.path)."""

import json

import numpy as np


def as_list(ds_or_it):
    """Elements as plain Python values, for exact comparisons."""
    return [to_py(x) for x in ds_or_it]


def to_py(x):
    if isinstance(x, tuple):
        return tuple(to_py(v) for v in x)
    if isinstance(x, dict):
        return {k: to_py(v) for k, v in x.items()}
    if isinstance(x, (bytes, str)):
        return x
    return np.asarray(x).tolist()


def json_roundtrip(state):
    return json.loads(json.dumps(state))
