"""Shared helpers of the Python package's tests."""

import pathlib

import pytest

from irpass.ir import Module

REPO = pathlib.Path(__file__).resolve().parents[2]
MODELS = REPO / "examples" / "models"
LIGHT = REPO / "passes" / "onnx" / "tests" / "data" / "light"


def example_model() -> Module:
    """TVM's instrument tests' model: (x + y) * ((x + y) / (x - z)) + (x - z)."""
    return Module.parse(
        """
        def @main(%x: Tensor[(3, 4), float32], %y: Tensor[(3, 4), float32],
                  %z: Tensor[(3, 4), float32]) {
          %0 = add(%x, %y);
          %1 = subtract(%x, %z);
          add(multiply(%0, divide(%0, %1)), %1)
        }
        """
    )


@pytest.fixture
def model() -> Module:
    return example_model()
