"""A calculated template's hand formula: the arithmetic a learner does with the prompt's own
numbers, evaluated safely (numbers, names, + − × ÷, powers, comparisons and a few functions;
nothing else parses), so the importer can check that a correct hand answer is marked right."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from typing import Any, Final

HAND_MAX_LENGTH: Final = 600
_POWER_MAX: Final = 1000  # an exponent beyond this is not a hand computation

_BINARY: Final[dict[type[ast.operator], Callable[[Any, Any], Any]]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_COMPARE: Final[dict[type[ast.cmpop], Callable[[Any, Any], bool]]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
}
FUNCTIONS: Final[dict[str, Callable[..., float]]] = {
    "floor": math.floor,
    "ceil": math.ceil,
    "sqrt": math.sqrt,
    "min": min,
    "max": max,
    "round": round,
}


class HandError(ValueError):
    """The formula is not one a hand can do, or names a number the prompt does not give."""


def hand_parse(text: str) -> ast.Expression:
    """The formula's syntax tree, or HandError saying what is not allowed."""
    if not text.strip() or len(text) > HAND_MAX_LENGTH:
        raise HandError(f"must be 1 to {HAND_MAX_LENGTH} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise HandError(f"is not a formula: {exc.msg}") from None
    for node in ast.walk(tree):
        allowed = (
            ast.Expression,
            ast.BinOp,
            ast.UnaryOp,
            ast.Compare,
            ast.BoolOp,
            ast.IfExp,
            ast.Call,
            ast.Name,
            ast.Constant,
            ast.Load,
            ast.operator,
            ast.unaryop,
            ast.cmpop,
            ast.boolop,
        )
        if not isinstance(node, allowed):
            raise HandError(f"uses {type(node).__name__}, which a hand formula may not")
        if isinstance(node, ast.Constant) and (
            isinstance(node.value, bool) or not isinstance(node.value, int | float)
        ):
            raise HandError("may hold only numbers and names")
        if isinstance(node, ast.operator) and type(node) not in _BINARY:
            raise HandError(f"uses the operator {type(node).__name__}")
        if isinstance(node, ast.cmpop) and type(node) not in _COMPARE:
            raise HandError(f"uses the comparison {type(node).__name__}")
        if isinstance(node, ast.Call) and (
            not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS or node.keywords
        ):
            raise HandError(f"may call only {', '.join(FUNCTIONS)}")
    return tree


def hand_names(tree: ast.Expression) -> set[str]:
    """The numbers the formula needs (function names left out)."""
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call)}  # type: ignore[attr-defined]
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - called


def _eval(node: ast.AST, names: Mapping[str, float]) -> Any:
    if isinstance(node, ast.Expression):
        return _eval(node.body, names)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise HandError(f"names {node.id}, which the prompt does not give as a number")
        return names[node.id]
    if isinstance(node, ast.UnaryOp):
        value = _eval(node.operand, names)
        return (
            -value
            if isinstance(node.op, ast.USub)
            else (not value if isinstance(node.op, ast.Not) else value)
        )
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left, names), _eval(node.right, names)
        if isinstance(node.op, ast.Pow) and abs(right) > _POWER_MAX:
            raise HandError("raises to a power beyond a hand's reach")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, names)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _eval(comparator, names)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.BoolOp):
        values = [_eval(v, names) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, names) else node.orelse, names)
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        return FUNCTIONS[node.func.id](*(_eval(a, names) for a in node.args))
    raise HandError(f"uses {type(node).__name__}")


def hand_value(tree: ast.Expression, names: Mapping[str, float]) -> float | bool:
    """The formula's value with these numbers: a number, or True/False for a check."""
    try:
        value = _eval(tree, names)
    except (ZeroDivisionError, OverflowError, ValueError, TypeError) as exc:
        if isinstance(exc, HandError):
            raise
        raise HandError(f"cannot be worked with these numbers: {exc}") from None
    return value if isinstance(value, bool) else float(value)


def shown_number(text: str) -> float | None:
    """A value as the prompt shows it ("8,192", "16.06"), or None for words ("NVIDIA L4")."""
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None
