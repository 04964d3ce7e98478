"""Rooms stay small: no source module over 300 lines (a module that grows past one idea becomes a
package), and no capacity-engine function over 60 lines (each step returns one value with its
formula and assumptions)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ["config", "core", "accounts", "courses", "quizzes", "planner", "reminders", "home"]
MAX_FILE_LINES = 300
MAX_ENGINE_FUNCTION_LINES = 60


def test_no_source_file_is_over_300_lines() -> None:
    """Migrations are exempt: they are generated."""
    long = {
        str(path.relative_to(ROOT)): n
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.parts
        and (n := len(path.read_text().splitlines())) > MAX_FILE_LINES
    }
    assert long == {}


def test_no_engine_function_is_over_60_lines() -> None:
    long = {}
    for path in (ROOT / "planner" / "capacity").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_ENGINE_FUNCTION_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.name}"] = length
    assert long == {}
