"""An ember.data iterator read inside a graph.function: a replay would freeze the elements
the traced call saw (stale batches, silently), so the function runs eagerly, warning once.
Found by a port of TensorFlow's "Better performance with tf.function" guide."""

from __future__ import annotations

import warnings

import pytest

import ember.core as em
from ember import data, graph


def test_a_dataset_iterated_inside_a_function_gives_the_current_elements():
    rows = [1, 1, 1]
    ds = data.Dataset.from_generator(lambda: rows, em.int32)

    @graph.function
    def total(ds):
        t = em.constant(0)
        for x in ds:
            t += x
        return t

    with pytest.warns(UserWarning, match="ember.data iterator's next element"):
        assert int(total(ds)) == 3
        rows[:] = [5] * 4
        assert int(total(ds)) == 20
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once; then eager, silently
        rows[:] = [2]
        assert int(total(ds)) == 2


def test_next_of_an_iterator_inside_a_function_advances_every_call():
    it = iter(data.Dataset.from_tensor_slices([1, 2, 3]))
    nx = graph.function(lambda it: next(it))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert [int(nx(it)) for _ in range(3)] == [1, 2, 3]
