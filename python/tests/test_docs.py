"""The examples in the package's docstrings run and print what they show."""

import doctest

import pytest

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
