"""``Tensor.shape`` is a ``TensorShape``: a tuple (equal to one, hashed, printed and used as
one) with TensorFlow's methods (``as_list``, ``rank``, ``num_elements``, ...)."""

import json

import numpy as np

import ember.core as em


def test_a_shape_is_a_tuple_with_tensorflows_methods(device):
    with em.device(device):
        x = em.zeros((3, 1, 4))
        s = x.shape
        assert isinstance(s, tuple) and isinstance(s, em.TensorShape)
        assert s == (3, 1, 4) and hash(s) == hash((3, 1, 4)) and repr(s) == "(3, 1, 4)"
        assert s.as_list() == [3, 1, 4] == s.dims and s.rank == s.ndims == 3
        assert s.num_elements() == 12 and s.is_fully_defined()
        assert x.get_shape().as_list() == [3, 1, 4]
        assert em.Variable(np.ones((2, 5), np.float32)).shape.as_list() == [2, 5]
        assert s[1:] == (1, 4) and s + (7,) == (3, 1, 4, 7)  # plain tuples from here
        assert np.zeros(s).shape == (3, 1, 4) and json.dumps(s) == "[3, 1, 4]"
        assert em.zeros(()).shape.as_list() == [] and em.zeros(()).shape.num_elements() == 1


def test_a_shape_made_by_hand_may_hold_unknown_sizes():
    s = em.TensorShape([None, 3])
    assert s.rank == 2 and s.as_list() == [None, 3]
    assert s.num_elements() is None and not s.is_fully_defined()
    assert s.is_compatible_with((5, 3)) and s.is_compatible_with([None, None])
    assert not s.is_compatible_with((5, 4)) and not s.is_compatible_with((5, 3, 1))
    assert em.zeros((2, 3)).shape.is_compatible_with(s.as_list())
