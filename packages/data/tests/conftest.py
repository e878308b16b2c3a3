import os
import sys

import numpy as np
import pytest

# --import-mode=importlib does not put the test folder on sys.path; the helpers need it.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def rng():
    return np.random.default_rng(0)
