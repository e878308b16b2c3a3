import pathlib
import sys

import pytest

import ember.core as em

# test helpers (mnist_data, seed models) import by name under --import-mode=importlib
sys.path.insert(0, str(pathlib.Path(__file__).parent))


@pytest.fixture(autouse=True)
def _seed():
    em.random.set_seed(1234)
    yield
