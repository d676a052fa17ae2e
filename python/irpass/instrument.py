"""Instruments: code that runs around every pass (TVM's ``tvm.instrument``).

An instrument is an instance of a class with any of TVM's hooks:

- ``enter_pass_ctx(self)`` / ``exit_pass_ctx(self)``: the context is entered / left;
- ``should_run(self, mod, info) -> bool``: ``False`` skips the pass (not asked for required
  passes);
- ``run_before_pass(self, mod, info)`` / ``run_after_pass(self, mod, info)``.

Decorate the class with ``@pass_instrument`` or derive from ``PassInstrument``; hooks it does
not define are never called. An exception in a hook stops the run with a ``PassError``
(``ContextError`` when entering or leaving) whose ``__cause__`` is that exception, and every
instrument already entered is still exited.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any, Iterable, Optional

from . import _native
from ._native import PassTimingInstrument

__all__ = [
    "PassInstrument",
    "PassPrintingInstrument",
    "PassTimingInstrument",
    "PrintAfterAll",
    "PrintBeforeAll",
    "list_instruments",
    "lookup",
    "pass_instrument",
]


def _default(f: Any) -> Any:
    f._irpass_default = True
    return f


class PassInstrument:
    """The base of instruments written in Python; override the hooks you need."""

    @_default
    def enter_pass_ctx(self) -> None:
        """Called when a context holding the instrument is entered."""

    @_default
    def exit_pass_ctx(self) -> None:
        """Called when that context is left (also after a failure)."""

    @_default
    def should_run(self, mod: Any, info: Any) -> bool:
        """Whether the pass should run (not asked for required passes)."""
        return True

    @_default
    def run_before_pass(self, mod: Any, info: Any) -> None:
        """Called before each pass that runs."""

    @_default
    def run_after_pass(self, mod: Any, info: Any) -> None:
        """Called after each pass that ran, with its result."""

    @property
    def name(self) -> str:
        """The instrument's name (its class's)."""
        return type(self).__name__


def pass_instrument(pi_cls: Optional[type] = None) -> Any:
    """Makes a class an instrument class (TVM's ``@pass_instrument``): its instances can be
    given to ``PassContext(instruments=[...])``."""

    def create(cls: Any) -> type:
        if not inspect.isclass(cls):
            raise TypeError("pass_instrument decorates classes")
        if issubclass(cls, PassInstrument):
            return cls
        return type(cls.__name__, (cls, PassInstrument),
                    {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
                     "__doc__": cls.__doc__})

    return create(pi_cls) if pi_cls is not None else create


class PassPrintingInstrument(PassInstrument):
    """Prints the module before the passes in ``print_before_pass_names`` and after those in
    ``print_after_pass_names`` (to ``sys.stdout``)."""

    def __init__(self, print_before_pass_names: Iterable[str] = (),
                 print_after_pass_names: Iterable[str] = ()) -> None:
        self.before = set(print_before_pass_names)
        self.after = set(print_after_pass_names)

    def run_before_pass(self, mod: Any, info: Any) -> None:
        if info.name in self.before:
            sys.stdout.write(f"Before Running Pass: {info.name}\n{mod}")

    def run_after_pass(self, mod: Any, info: Any) -> None:
        if info.name in self.after:
            sys.stdout.write(f"After Running Pass: {info.name}\n{mod}")


class PrintBeforeAll(PassInstrument):
    """Prints the module before every pass (to ``sys.stdout``)."""

    def run_before_pass(self, mod: Any, info: Any) -> None:
        sys.stdout.write(f"Before Running Pass: {info}\n{mod}")


class PrintAfterAll(PassInstrument):
    """Prints the module after every pass (to ``sys.stdout``)."""

    def run_after_pass(self, mod: Any, info: Any) -> None:
        sys.stdout.write(f"After Running Pass: {info}\n{mod}")


def lookup(name: str) -> Any:
    """The registered Rust instrument ``name`` (``VerifyEach``, ``PrintChanged``, ...)."""
    return _native.lookup_instrument(name)


def list_instruments() -> list:
    """The registered Rust instruments as ``(name, description)``."""
    return _native.list_instruments()


def __getattr__(name: str) -> Any:
    # The registered Rust instruments by name, as constructors: `instrument.VerifyEach()`.
    for registered, description in _native.list_instruments():
        if registered == name:
            def constructor() -> Any:
                return _native.lookup_instrument(name)

            constructor.__name__ = constructor.__qualname__ = name
            constructor.__doc__ = description
            return constructor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r} (and no instrument "
                         "of that name is registered)")
