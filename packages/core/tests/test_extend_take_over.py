"""``extend``'s hand-over seam: an operand whose type defines ``__ember_function__`` /
``__ember_op__`` takes over the public function or op it is given to (ember-nn's symbolic
tensors make graph nodes of such calls); ``extend.expire`` makes a tensor unusable."""

from __future__ import annotations

import numpy as np
import pytest

import ember.core as em
from ember.core import extend


class Placeholder:
    """A foreign operand that records what it was given to."""

    calls: list = []

    @staticmethod
    def __ember_function__(fn, args, kwargs):
        Placeholder.calls.append(("function", fn.__ember_public__, args, kwargs))
        return "function result"

    @staticmethod
    def __ember_op__(op, inputs, attrs):
        Placeholder.calls.append(("op", op.name, inputs, attrs))
        return "op result"


def test_a_public_function_hands_the_whole_call_over():
    p = Placeholder()
    Placeholder.calls.clear()
    assert em.squeeze(p, axis=-1) == "function result"
    assert em.nn_ops.l2_normalize(p, axis=1) == "function result"
    assert em.concat([em.ones([1]), p], axis=0) == "function result"
    assert [c[:2] for c in Placeholder.calls] == [
        ("function", "squeeze"), ("function", "l2_normalize"), ("function", "concat")]
    # one function under two public names is one wrapper, found by either name
    assert em.nn_ops.l2_normalize is em.l2_normalize
    assert extend.public_function("nn_ops.l2_normalize") is em.l2_normalize
    assert em.linalg.matrix_inverse is em.linalg.inv
    assert Placeholder.calls[0][2:] == ((p,), {"axis": -1})
    # the functions keep their names, documentation and signatures
    assert em.squeeze.__name__ == "squeeze" and "axis" in str(__import__("inspect").signature(
        em.squeeze))


def test_parameters_named_like_the_wrapper_s_own_names_are_handed_over_as_given():
    # clip_by_norm's and l2_loss's first parameter is ``t``, linalg.diag_part's last ``k``
    p = Placeholder()
    Placeholder.calls.clear()
    em.clip_by_norm(p, 2.0)
    em.nn_ops.l2_loss(t=p)
    em.linalg.diag_part(p, k=0, name="d")
    assert Placeholder.calls[0][1:] == ("clip_by_norm", (p, 2.0), {})
    assert Placeholder.calls[1][1:] == ("nn_ops.l2_loss", (p,), {})
    assert Placeholder.calls[2][1:] == ("linalg.diag_part", (p,), {"name": "d"})  # k: its default


def test_an_op_run_directly_hands_its_inputs_and_attributes_over():
    p = Placeholder()
    Placeholder.calls.clear()
    assert em.add(p, 1.0) == "op result"
    assert extend.run_op("multiply", (em.ones([2]), p)) == "op result"
    assert [c[:2] for c in Placeholder.calls] == [("op", "add"), ("op", "multiply")]


def test_tensors_and_numbers_take_the_usual_path():
    assert float(em.squeeze(em.ones([1, 1]))) == 1.0
    assert em.add(em.ones([2]), 1.0).numpy().tolist() == [2.0, 2.0]


def test_a_call_that_cannot_hand_over_raises_a_type_error():
    with pytest.raises(TypeError, match="cannot be used as a tensor here"):
        em.constant(Placeholder())


def test_an_expired_tensor_refuses_every_use_and_keeps_its_shape():
    t = em.ones([2, 3])
    extend.expire(t, "made inside f and kept outside it")
    assert t.shape == (2, 3) and t.dtype == np.float32
    assert "leaked" in repr(t)
    for use in (lambda: t.numpy(), lambda: em.add(t, 1.0), lambda: t + 1.0,
                lambda: float(em.reduce_sum(t)), lambda: np.asarray(t)):
        with pytest.raises(em.LeakedTensorError, match="made inside f and kept outside it"):
            use()
    # TensorFlow raises AttributeError on .numpy() and TypeError in an op: this is both
    assert issubclass(em.LeakedTensorError, (TypeError, AttributeError, em.InvalidArgumentError))
