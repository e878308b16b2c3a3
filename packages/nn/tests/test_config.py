"""``nn.config`` / ``nn.backend`` (``keras.config`` / ``keras.backend``): Keras's defaults,
and setters that refuse, by name, a value nothing in ember would honour."""

import numpy as np
import pytest

import ember.core as em
from ember import nn


def test_defaults_are_keras_and_what_ember_uses():
    assert nn.config.epsilon() == nn.backend.epsilon() == 1e-7
    assert nn.config.floatx() == "float32" == str(nn.layers.Dense(2).dtype)
    assert nn.config.image_data_format() == "channels_last"
    assert nn.config.backend() == nn.backend.backend() == "ember"
    # the epsilon a loss clips by is this one: log(epsilon) bounds crossentropy
    loss = nn.losses.binary_crossentropy(em.constant([[1.0]]), em.constant([[0.0]]))
    assert float(loss) == pytest.approx(-np.log(nn.config.epsilon()), rel=1e-3)


def test_setters_take_the_default_and_refuse_others():
    nn.config.set_epsilon(1e-7)
    nn.config.set_floatx("float32")
    nn.backend.set_image_data_format("channels_last")
    with pytest.raises(NotImplementedError, match=r"set_epsilon\(0.001\)"):
        nn.config.set_epsilon(1e-3)
    with pytest.raises(NotImplementedError, match=r"set_floatx\('float64'\)"):
        nn.backend.set_floatx("float64")
    with pytest.raises(NotImplementedError, match="channels_first"):
        nn.config.set_image_data_format("channels_first")
    assert nn.config.epsilon() == 1e-7  # nothing changed


def test_dtype_policy_is_the_global_one():
    before = nn.config.dtype_policy()
    try:
        nn.config.set_dtype_policy("mixed_bfloat16")
        assert nn.config.dtype_policy().name == "mixed_bfloat16"
        assert nn.layers.Dense(2).compute_dtype == "bfloat16"
    finally:
        nn.config.set_dtype_policy(before)
