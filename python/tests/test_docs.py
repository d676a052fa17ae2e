"""The examples in the package's docstrings run and print what they show."""

import doctest
import re

import pytest

from conftest import REPO

import irpass
import irpass.instrument
import irpass.ir
import irpass.pattern
import irpass.transform

WITH_EXAMPLES = [irpass.ir, irpass.transform, irpass.pattern]


@pytest.mark.parametrize("module", WITH_EXAMPLES, ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0


GUIDE = REPO / "core" / "src" / "guide" / "python.md"
BLOCKS = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)


def test_the_guide_has_python_examples():
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_guide_example(index, capsys):
    exec(compile(BLOCKS[index], f"{GUIDE}:block{index}", "exec"), {"__name__": "guide"})
