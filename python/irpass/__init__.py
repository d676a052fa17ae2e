"""irpass: TVM's Python pass API on a Relay-style tensor IR, run in Rust.

- :mod:`irpass.ir`: modules and functions of the reference IR (text format, ONNX in and out,
  type inference, an interpreter on numpy arrays).
- :mod:`irpass.transform`: ``PassContext``, ``Sequential``, ``module_pass``, ``function_pass``,
  every pass of the library by name, pipeline text.
- :mod:`irpass.instrument`: ``pass_instrument``, ``PassInstrument``, ``PassTimingInstrument``.
- :mod:`irpass.pattern`: dataflow patterns, rewrite rules, partitioning.
- :mod:`irpass.errors`: the exceptions (all are ``IrpassError``).
"""

from . import errors, instrument, ir, pattern, transform
from ._native import __version__

__all__ = ["errors", "instrument", "ir", "pattern", "transform", "__version__"]
