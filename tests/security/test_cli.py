"""The capacity CLI as a shell runs it: a hostile number exits 2 with one line naming the option,
never a traceback (issue 12: exit 1 and a traceback for 1e400, 5000 digits, 1e-5000)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("kind", "option", "value"),
    [
        ("serving", "--kv-per-user-gb", "1e-10000000"),
        ("serving", "--gpu-memory-gb", "1e400"),
        ("training", "--seq-len", "9" * 5000),
        ("batch", "--items-per-s", "1e-5000"),
    ],
    ids=["stall", "1e400", "5000 digits", "1e-5000"],
)
def test_a_hostile_option_exits_2_with_one_line(kind: str, option: str, value: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"DJANGO_DEBUG"}}
    result = subprocess.run(
        [sys.executable, "manage.py", "capacity", kind, f"{option}={value}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert option in lines[0]
    assert len(lines[0]) < 300  # the value is not echoed back in full
