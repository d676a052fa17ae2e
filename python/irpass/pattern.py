"""Dataflow patterns, rewrite rules and partitioning (TVM's ``relay.dataflow_pattern``).

>>> from irpass.ir import Module
>>> from irpass.pattern import Rule, rewrite
>>> mod = Module.parse("def @main(%a: float32) { add(%a, %a) }")
>>> double = Rule("double", "add(?x, ?x)", "multiply(?x, 2f)")
>>> print(rewrite(double, mod)["main"])
def @main(%a: float32) {
  multiply(%a, 2f)
}

Patterns are built with these functions (``is_op("nn.relu")(is_op("add")(wildcard(),
is_constant()))``, ``p | q``, ``p.optional(f)``, ``p.has_attr({...})``) or from the rule
language's text (``Pattern.parse("nn.relu(add(_, const))")``); ``?x`` and ``p.named("x")``
name what a rule's replacement uses. Matching runs in Rust: a rule's Python function or guard
is called once per match with a :class:`Match` (``m["x"].dtype``, ``.shape``, ``.value``,
``.op``, ``.attrs``).
"""

from __future__ import annotations

from typing import Any, Iterable, Union

from ._native import (
    Match,
    Node,
    Pattern,
    Rule,
    RuleSet,
    dominates,
    is_constant,
    is_if,
    is_op,
    is_tuple,
    is_tuple_get_item,
    is_var,
    partition,
    wildcard,
)
from .ir import Function, Module

__all__ = [
    "Match",
    "Node",
    "Pattern",
    "Rule",
    "RuleSet",
    "dominates",
    "is_constant",
    "is_if",
    "is_op",
    "is_tuple",
    "is_tuple_get_item",
    "is_var",
    "partition",
    "rewrite",
    "wildcard",
]


def rewrite(rules: Union[Rule, RuleSet, Iterable[Rule]], target: Any) -> Any:
    """Applies rules to a function or to every function of a module (TVM's ``rewrite``)
    until none fires; returns a new function or module."""
    if isinstance(rules, Rule):
        rules = RuleSet("rewrite", [rules])
    elif not isinstance(rules, RuleSet):
        rules = RuleSet("rewrite", list(rules))
    if isinstance(target, Function):
        return rules.apply(target)
    if isinstance(target, Module):
        return rules.as_pass()(target)
    raise TypeError(f"rewrite applies rules to a Function or a Module, not {type(target).__name__}")
