"""A model compiled with a DistributedOptimizer (Horovod's Keras recipe): compile takes it,
fit steps through it, and the saved model holds the wrapped optimizer's state, which loads
back as that optimizer. compile refused the wrapper, and a model given it afterwards saved
no optimizer variables without a word (a port of Horovod's tensorflow2_keras_mnist.py)."""

from __future__ import annotations

import numpy as np

from ember import distribute, nn


def test_compile_takes_the_wrapper_and_the_saved_model_keeps_its_optimizer(tmp_path):
    distribute.init()
    opt = distribute.DistributedOptimizer(nn.optimizers.Adam(0.01))
    assert isinstance(opt, nn.optimizers.Adam) and type(opt).__name__ == "DistributedAdam"
    model = nn.Sequential([nn.layers.Dense(3, input_shape=(4,)), nn.layers.Dense(1)])
    model.compile(optimizer=opt, loss="mse")
    assert model.optimizer is opt
    rng = np.random.default_rng(0)
    x, y = rng.random((32, 4), np.float32), rng.random((32, 1), np.float32)
    model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = nn.models.load_model(path)
    assert type(loaded.optimizer) is nn.optimizers.Adam and int(loaded.optimizer.iterations) == 8
    assert len(loaded.optimizer.variables) == len(opt.variables) == 10
    for a, b in zip(opt.variables, loaded.optimizer.variables):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
