import pytest

import ember.core as em


@pytest.fixture(autouse=True)
def _seed():
    em.random.set_seed(1234)
    yield
