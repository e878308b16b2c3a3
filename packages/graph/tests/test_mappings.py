"""dict subclasses in and out of ``graph.function``: an ``OrderedDict`` (what
``data.experimental.make_csv_dataset`` yields) is taken and returned as one, a
``defaultdict`` keeps its factory, and replays return this call's values."""

import collections

import numpy as np

import ember.core as em
from ember import graph


def test_ordered_dicts_in_and_out():
    @graph.function
    def f(d):
        return collections.OrderedDict(b=d["a"] * 2, a=d["a"] + d["c"])

    first = f(collections.OrderedDict(a=np.ones(2, np.float32), c=np.zeros(2, np.float32)))
    again = f(collections.OrderedDict(a=np.full(2, 3, np.float32), c=np.ones(2, np.float32)))
    assert type(again) is collections.OrderedDict and list(again) == ["b", "a"]
    np.testing.assert_array_equal(first["b"].numpy(), [2, 2])
    np.testing.assert_array_equal(again["b"].numpy(), [6, 6])  # this call's, replayed
    np.testing.assert_array_equal(again["a"].numpy(), [4, 4])
    assert f.experimental_get_tracing_count() == 1
    # a plain dict with the same keys is another structure: its own trace
    f({"a": np.ones(2, np.float32), "c": np.zeros(2, np.float32)})
    assert f.experimental_get_tracing_count() == 2


def test_defaultdict_keeps_its_factory():
    @graph.function
    def g(x):
        return collections.defaultdict(list, a=x * 2)

    g(em.constant([1.0]))
    out = g(em.constant([5.0]))
    assert out.default_factory is list and out["missing"] == []
    np.testing.assert_array_equal(out["a"].numpy(), [10.0])
