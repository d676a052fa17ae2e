"""The exceptions irpass raises; every one is an :class:`IrpassError`.

A failure while passes run is a :class:`PassError` with ``pass_name``, ``path`` (the pass's
place in the nesting of Sequentials), ``module`` (the last good module) and, when Python code
raised inside a pass or an instrument, that exception as ``__cause__``.
"""

from ._native import (
    ConfigError,
    ContextError,
    IrError,
    IrpassError,
    OnnxError,
    PassError,
    PipelineError,
    RegistryError,
)

__all__ = [
    "ConfigError",
    "ContextError",
    "IrError",
    "IrpassError",
    "OnnxError",
    "PassError",
    "PipelineError",
    "RegistryError",
]
