"""em.print (tf.print) outside graph mode: what it writes, and its arguments' checks."""

from __future__ import annotations

import io

import numpy as np
import pytest

import ember.core as em


def test_print_writes_values_as_tensorflow_does(capsys):
    em.print("x:", em.constant([1, 2, 3]), em.Variable(2.5))
    assert capsys.readouterr().err == "x: [1 2 3] 2.5\n"  # TF's default stream: stderr


def test_summarize_keeps_the_ends_of_long_axes():
    out = io.StringIO()
    em.print(em.constant(np.arange(10)), output_stream=out)
    em.print(em.constant(np.arange(10)), output_stream=out, summarize=-1, sep="", end="!")
    assert out.getvalue() == "[0 1 2 ... 7 8 9]\n[0 1 2 3 4 5 6 7 8 9]!"


def test_nests_print_their_tensors_values():
    out = io.StringIO()
    em.print({"loss": em.constant(0.5)}, [em.constant([1.0]), "a"], output_stream=out)
    assert out.getvalue() == "{'loss': 0.5} [[1] a]\n"


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"output_stream": "file:///tmp/x"}, "output_stream must have a write method"),
    ({"summarize": 2.0}, "summarize must be an int"),
    ({"summarize": -2}, "summarize must be an int"),
])
def test_bad_arguments_are_named(kwargs, match):
    with pytest.raises(TypeError, match=match):
        em.print(em.constant(1), **kwargs)
