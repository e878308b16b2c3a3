"""The input-pipelines guide and the package docstrings run as written."""

import doctest
import pathlib
import re

import pytest

import ember.data
from ember.data import _iterator, _readers

GUIDE = pathlib.Path(__file__).resolve().parents[3] / "docs" / "guide" / "input-pipelines.md"


def test_guide_runs_top_to_bottom(capsys):
    if not GUIDE.exists():
        pytest.skip(f"{GUIDE} not present (installed from an sdist?)")
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    assert len(blocks) >= 6
    namespace: dict = {"__name__": "guide"}
    exec(compile("\n".join(blocks), str(GUIDE), "exec"), namespace)


@pytest.mark.parametrize("module", [ember.data, ember.data._dataset, _iterator,
                                    _readers.csv, _readers.tfrecord])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
