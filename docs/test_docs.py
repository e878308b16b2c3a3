"""Every ```python block of every page runs, top to bottom, one namespace per page."""

from __future__ import annotations

import pathlib
import re

import pytest

DOCS = pathlib.Path(__file__).parent
PAGES = sorted(p for p in DOCS.rglob("*.md"))
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def test_there_are_pages_with_examples():
    assert sum(len(BLOCK.findall(p.read_text())) for p in PAGES) >= 10


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_page_examples_run(page, tmp_path, monkeypatch):
    blocks = BLOCK.findall(page.read_text())
    if not blocks:
        pytest.skip("no python examples on this page")
    monkeypatch.chdir(tmp_path)
    ns: dict = {"__name__": f"docs_{page.stem}"}
    for i, code in enumerate(blocks):
        try:
            exec(compile(code, f"{page.name}[block {i}]", "exec"), ns)
        except Exception as e:
            raise AssertionError(f"{page.name}, block {i} failed: {e!r}\n{code}") from e
