"""The layer contract's checkpoint round trip, for every layer of ember-nn's contract test
(``packages/nn/tests/test_layer_contract.py``, whose ``SPECS`` list this reads, so a layer
added there gets it too; it lives here because ember-nn's own test session does not install
ember-checkpoint): build and use a layer, save it with ember.checkpoint, restore into a fresh
instance (before it is built: deferred restoration), same outputs. Runs on the CPU and on
the strict GPU double."""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest

import ember.core as em
from ember import checkpoint

pytestmark = pytest.mark.usefixtures("backend")
CONTRACT = (pathlib.Path(__file__).resolve().parents[1] / "packages" / "nn" / "tests"
            / "test_layer_contract.py")


def _contract():
    spec = importlib.util.spec_from_file_location("nn_layer_contract", CONTRACT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


contract = _contract()


def test_the_round_trip_covers_every_layer_of_the_contract():
    assert len(contract.SPECS) >= 20


@pytest.mark.parametrize("spec", contract.SPECS, ids=[s[0] for s in contract.SPECS])
def test_layer_checkpoint_round_trip(spec, tmp_path):
    _, factory, in_shape, kind, _, n_trainable = spec
    em.random.set_seed(1)
    layer = factory()
    x = contract._input(in_shape, kind)
    contract._call(layer, x, training=True)  # builds; BatchNorm's moving statistics move
    rng = np.random.default_rng(3)
    for v in layer.variables:  # values no initializer gives (signs kept: variances stay > 0)
        u, w = rng.uniform(size=(2, *v.shape)).astype(v.dtype)
        v.assign(v.numpy() * (1.1 + 0.2 * u) + 0.05 * w)
    expected = contract._call(layer, x, training=False).numpy()
    path = checkpoint.Checkpoint(layer=layer).save(str(tmp_path / "ckpt"))

    em.random.set_seed(2)  # a fresh instance with other initial weights
    other = contract._call(factory(), x, training=False).numpy()
    em.random.set_seed(2)
    fresh = factory()
    if layer.variables or hasattr(layer, "seed_generator"):  # (a random layer's stream)
        status = checkpoint.Checkpoint(layer=fresh).restore(path)
    else:  # nothing to save: restoring says so
        with pytest.warns(UserWarning, match="NOTHING in this checkpoint matched"):
            status = checkpoint.Checkpoint(layer=fresh).restore(path)
    got = contract._call(fresh, x, training=False).numpy()  # built now: takes saved values
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
    status.assert_consumed()
    for p, v in layer.variables_by_path().items():
        np.testing.assert_array_equal(fresh.variables_by_path()[p].numpy(), v.numpy(), err_msg=p)
    if layer.variables:  # the round trip is what made them equal
        assert not np.allclose(other, expected), "a fresh instance already gave these outputs"
    assert len(fresh.trainable_variables) == n_trainable
