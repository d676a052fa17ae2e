"""Passes and the context they run in, with TVM's names.

>>> import irpass
>>> from irpass import transform
>>> mod = irpass.ir.Module.parse(
...     "def @main(%x: Tensor[(2), float32]) { add(%x, multiply(1f, 2f)) }")
>>> with transform.PassContext(opt_level=3):
...     out = transform.Sequential([transform.FoldConstant()])(mod)
>>> "multiply" in str(out)
False

Every pass of the library is a constructor here (``transform.FoldConstant()``,
``transform.FuseOps(fuse_opt_level=2)`` for one with options); ``lookup(name)`` and
``parse_pipeline(text)`` build them from strings.
"""

from __future__ import annotations

import functools
import inspect
import sys
from typing import Any, Callable, Iterable, Optional

from . import _native
from ._native import PassContext, PassInfo

__all__ = [
    "FunctionPass",
    "ModulePass",
    "Pass",
    "PassContext",
    "PassInfo",
    "PrintIR",
    "Sequential",
    "function_pass",
    "list_passes",
    "lookup",
    "module_pass",
    "parse_pipeline",
    "standard_pipeline",
]


class Pass(_native.Pass):
    """A pass. Call it on a module (``p(mod)``) to run it under the current ``PassContext``;
    ``p.info`` is its ``PassInfo``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass


class ModulePass(Pass):
    """A pass that sees and returns the whole module."""


class FunctionPass(Pass):
    """A pass that rewrites one function at a time (in parallel when the context allows)."""


class Sequential(Pass):
    """An ordered list of passes, run as one pass (TVM's ``Sequential``).

    A pass in it runs when the context's ``opt_level`` reaches the pass's, or when the context
    requires it, and not when the context disables it; a pass's ``required`` passes run before
    it.
    """

    def __new__(
        cls,
        passes: Optional[Iterable[Pass]] = None,
        opt_level: int = 0,
        name: str = "sequential",
        required: Optional[Iterable[str]] = None,
    ) -> "Sequential":
        passes = list(passes or [])
        for p in passes:
            if not isinstance(p, _native.Pass):
                raise TypeError(f"Sequential takes passes, not {type(p).__name__}")
        handle = _native.sequential(passes, opt_level, name, _names(required))
        return _native.Pass.__new__(cls, handle)


_KINDS = {"module": ModulePass, "function": FunctionPass, "sequential": Sequential}


def _wrap(handle: _native.Pass) -> Any:
    """The handle as an instance of the Python class of its kind."""
    return _native.Pass.__new__(_KINDS[handle.info.kind], handle)


def _names(names: Optional[Iterable[str]]) -> list:
    if names is None:
        return []
    if isinstance(names, str):
        raise TypeError("required takes a list of pass names, not one string")
    return [str(n) for n in names]


def _doc(obj: Any) -> str:
    return inspect.cleandoc(obj.__doc__) if obj.__doc__ else ""


def _wrap_class(pass_cls: type, base: type, kind: str, method: str, name: str,
                opt_level: int, required: list) -> type:
    if not callable(getattr(pass_cls, method, None)):
        raise TypeError(f"a {kind} pass class must define {method}; {pass_cls.__name__} does not")

    class PyPass(base):  # type: ignore[misc, valid-type]
        def __new__(cls, *args: Any, **kwargs: Any) -> Any:
            inst = pass_cls(*args, **kwargs)
            handle = _native.python_pass(kind, getattr(inst, method), name, opt_level, required,
                                         _doc(pass_cls))
            obj = _native.Pass.__new__(cls, handle)
            obj.__dict__["_inst"] = inst
            return obj

        def __getattr__(self, attr: str) -> Any:
            return getattr(self.__dict__["_inst"], attr)

    functools.update_wrapper(PyPass, pass_cls, updated=())
    return PyPass


def _decorator(kind: str, base: type, method: str, pass_func: Any, opt_level: Optional[int],
               name: Optional[str], required: Optional[Iterable[str]]) -> Any:
    if opt_level is None:
        raise ValueError(f"a {kind} pass needs an opt_level")
    required_names = _names(required)

    def create(pass_arg: Any) -> Any:
        pass_name = name or pass_arg.__name__
        if inspect.isclass(pass_arg):
            return _wrap_class(pass_arg, base, kind, method, pass_name, opt_level, required_names)
        if not callable(pass_arg):
            raise TypeError(f"a {kind} pass is made from a function or a class, not "
                            f"{type(pass_arg).__name__}")
        return _wrap(_native.python_pass(kind, pass_arg, pass_name, opt_level, required_names,
                                         _doc(pass_arg)))

    return create(pass_func) if pass_func is not None else create


def module_pass(pass_func: Any = None, opt_level: Optional[int] = None,
                name: Optional[str] = None, required: Optional[Iterable[str]] = None) -> Any:
    """Makes a module pass from ``f(mod, ctx) -> mod`` or from a class with
    ``transform_module(self, mod, ctx)`` (TVM's ``tvm.transform.module_pass``).

    On a class, the result is a class whose instances are passes: constructor arguments go to
    the user's class, and attributes not found on the pass are looked up on its instance. The
    name defaults to the function's or class's ``__name__``, the description to its docstring.
    """
    return _decorator("module", ModulePass, "transform_module", pass_func, opt_level, name,
                      required)


def function_pass(pass_func: Any = None, opt_level: Optional[int] = None,
                  name: Optional[str] = None, required: Optional[Iterable[str]] = None) -> Any:
    """Makes a function pass from ``f(func, mod, ctx) -> func`` or from a class with
    ``transform_function(self, func, mod, ctx)`` (TVM's ``relay.transform.function_pass``).

    The pass is called once per function of the module, one function after the other (the
    GIL would serialise the calls anyway), whatever the context's thread count; only a
    function marked ``SkipOptimization`` is left out (TVM also skips ``Primitive`` and
    ``Compiler`` functions, silently). It may return a ``Function``, a ``Rewriter`` of the
    function (Rust applies its replacements and type-checks the result), or ``None`` to keep
    the function.
    """
    return _decorator("function", FunctionPass, "transform_function", pass_func, opt_level,
                      name, required)


def lookup(name: str, **options: Any) -> Pass:
    """The registered pass ``name``, built with ``options`` when given (as ``Name{k=v}``)."""
    return _wrap(_native.lookup(name, options or None))


def parse_pipeline(text: str) -> Pass:
    """The pass that pipeline text describes, as ``irpass-opt -p`` reads it:
    ``"FoldConstant,opt(SimplifyExpr,DeadCodeElimination)"``, ``"O3"``."""
    return _wrap(_native.parse_pipeline(text))


def standard_pipeline(level: int) -> Sequential:
    """The standard pipeline ``O0`` .. ``O3``: what ``irpass-opt -O<level>`` runs."""
    return _wrap(_native.standard_pipeline(level))


def list_passes() -> list:
    """The registered passes as ``(name, kind, opt_level, description)``, sorted by name."""
    return _native.list_passes()


def PrintIR(header: str = "", show_meta_data: bool = False) -> ModulePass:
    """A pass that prints the module to ``sys.stdout`` (after ``header``) and returns it."""

    def print_ir(mod: Any, ctx: Any) -> Any:
        sys.stdout.write(f"PrintIR({header}):\n{mod}")
        return mod

    return module_pass(print_ir, opt_level=0, name="PrintIR")


def _registered(name: str) -> Callable[..., Pass]:
    def constructor(**options: Any) -> Pass:
        return lookup(name, **options)

    constructor.__name__ = constructor.__qualname__ = name
    for entry in _native.list_passes():
        if entry[0] == name:
            constructor.__doc__ = entry[3]
    return constructor


def __getattr__(name: str) -> Any:
    if not name.startswith("_") and _native.takes_options(name) is not None:
        return _registered(name)
    import difflib

    names = [entry[0] for entry in _native.list_passes()]
    close = difflib.get_close_matches(name, names, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise AttributeError(f"module {__name__!r} has no attribute {name!r} (and no pass of that "
                         f"name is registered){hint}")


def __dir__() -> list:
    return sorted(set(globals()) | {entry[0] for entry in _native.list_passes()})
