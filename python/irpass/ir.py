"""Modules and functions of irpass's reference IR (a Relay-style typed tensor IR).

>>> from irpass.ir import Module
>>> mod = Module.parse("def @main(%x: Tensor[(2), float32]) { add(%x, %x) }")
>>> list(mod)
['main']
>>> mod.evaluate("main", [1.0, 2.0]).tolist()
[2.0, 4.0]
>>> mod.infer_types()
>>> ret = mod["main"].checked_type.ret
>>> ret.shape, ret.dtype
((2,), 'float32')
"""

from ._native import Function, Module, Type

__all__ = ["Function", "Module", "Type"]
